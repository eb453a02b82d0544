//! `0x2::tx_context`: the transaction's sender, digest, epoch, gas
//! figures and sponsor from the host's [`TransactionContext`], and fresh
//! object ids derived from the digest.

use crate::args::{pop_bytes, pop_u64, Args, Registrar};
use crate::object_runtime::ObjectRuntime;
use movejit_runtime::natives::NativeExtensions;
use movejit_runtime::{AccountAddress, Value, VmError};

/// Sui's `HashingIntentScope::RegularObjectId`.
const REGULAR_OBJECT_ID: u8 = 0xf1;

/// What a Sui transaction tells its Move code about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionContext {
    pub sender: AccountAddress,
    /// The transaction digest (ids are derived from it).
    pub digest: [u8; 32],
    pub epoch: u64,
    pub epoch_timestamp_ms: u64,
    /// Reference gas price.
    pub rgp: u64,
    pub gas_price: u64,
    pub gas_budget: u64,
    pub sponsor: Option<AccountAddress>,
    /// Ids created so far (`fresh_id` counts on from here).
    pub ids_created: u64,
}

impl TransactionContext {
    /// BCS of the Move `0x2::tx_context::TxContext` value describing this
    /// context: sender, digest (a `vector<u8>`), epoch, epoch timestamp,
    /// ids created. What a host passes for a `&TxContext` parameter.
    pub fn move_bcs(&self) -> Vec<u8> {
        let mut out = self.sender.0.to_vec();
        out.push(32);
        out.extend_from_slice(&self.digest);
        for n in [self.epoch, self.epoch_timestamp_ms, self.ids_created] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }
}

/// `ObjectID::derive_id`: blake2b256(0xf1 ‖ digest ‖ creation number, LE).
pub fn derive_id(digest: &[u8; 32], creation_num: u64) -> AccountAddress {
    let mut pre = Vec::with_capacity(41);
    pre.push(REGULAR_OBJECT_ID);
    pre.extend_from_slice(digest);
    pre.extend_from_slice(&creation_num.to_le_bytes());
    AccountAddress(crate::hash::blake2b256(&pre))
}

fn context(ext: &mut NativeExtensions) -> &mut TransactionContext {
    ext.get_or_default::<TransactionContext>()
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    let m = "tx_context";
    r.add(m, "native_sender", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(context(ext).sender)]))
    });
    type Field = fn(&TransactionContext) -> u64;
    let fields: [(&str, Field); 6] = [
        ("native_epoch", |c| c.epoch),
        ("native_epoch_timestamp_ms", |c| c.epoch_timestamp_ms),
        ("native_rgp", |c| c.rgp),
        ("native_gas_price", |c| c.gas_price),
        ("native_gas_budget", |c| c.gas_budget),
        ("native_ids_created", |c| c.ids_created),
    ];
    for (name, get) in fields {
        r.add(m, name, move |cx, _, _| {
            cx.gas.charge_native(0)?;
            cx.with_extensions(|ext, _| Ok(vec![Value::U64(get(context(ext)))]))
        });
    }
    r.add(m, "native_sponsor", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| {
            Ok(vec![Value::Vector(context(ext).sponsor.into_iter().map(Value::Address).collect())])
        })
    });
    r.add(m, "fresh_id", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| {
            let c = context(ext);
            let id = derive_id(&c.digest, c.ids_created);
            c.ids_created = c.ids_created.checked_add(1).ok_or_else(|| VmError::invariant("ids_created overflow"))?;
            ext.get_or_default::<ObjectRuntime>().new_id(id)?;
            Ok(vec![Value::Address(id)])
        })
    });
    r.add(m, "derive_id", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let ids_created = pop_u64(&mut args)?;
        let tx_hash = pop_bytes(&mut args)?;
        // Digests in Move come from Rust `TransactionDigest`s (32 bytes).
        let digest: [u8; 32] =
            tx_hash.as_slice().try_into().map_err(|_| crate::args::invariant("derive_id: digest is not 32 bytes"))?;
        let id = derive_id(&digest, ids_created);
        cx.with_extensions(|ext, _| {
            ext.get_or_default::<ObjectRuntime>().new_id(id)?;
            Ok(vec![Value::Address(id)])
        })
    });
}
