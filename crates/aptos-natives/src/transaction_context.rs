//! `0x1::transaction_context` and `type_info::chain_id_internal`: values of
//! the running transaction, configured by the host.

use crate::args::{derive_address, Args, Registrar};
use movejit_runtime::natives::NativeExtensions;
use movejit_runtime::{AccountAddress, Value, VmError, VmResult};

/// Abort codes of `transaction_context` natives (`error::invalid_state(..)`).
pub mod abort_codes {
    /// No user transaction (the call is not part of one).
    pub const ETRANSACTION_CONTEXT_NOT_AVAILABLE: u64 = 0x3_0001;
    pub const EMONOTONICALLY_INCREASING_COUNTER_OVERFLOW: u64 = 0x3_0002;
}

/// Address-derivation scheme of `generate_unique_address` (Aptos `Scheme::DeriveAuid`).
const DERIVE_AUID: u8 = 0xFB;

/// The part of the context only a user transaction has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserTransaction {
    pub sender: AccountAddress,
    pub secondary_signers: Vec<AccountAddress>,
    pub gas_payer: AccountAddress,
    pub max_gas_amount: u64,
    pub gas_unit_price: u64,
    pub chain_id: u8,
    /// Block timestamp in microseconds (for the monotonic counter).
    pub timestamp_us: u64,
    /// Index of the transaction in its block.
    pub transaction_index: u32,
}

/// The transaction a session runs in. The host sets it; natives keep their
/// counters here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionContext {
    /// The transaction (session) hash: `get_txn_hash`, and the seed of
    /// unique addresses and table handles.
    pub session_hash: [u8; 32],
    pub chain_id: u8,
    /// `None`: not a user transaction (`sender()` etc. abort).
    pub user: Option<UserTransaction>,
    pub session_counter: u8,
    auid_counter: u64,
    local_counter: u16,
}

impl Default for TransactionContext {
    /// A zero session hash, chain id 4 (Aptos's testing chain), no user
    /// transaction.
    fn default() -> Self {
        TransactionContext::new([0; 32], 4, None)
    }
}

impl TransactionContext {
    pub fn new(session_hash: [u8; 32], chain_id: u8, user: Option<UserTransaction>) -> Self {
        TransactionContext { session_hash, chain_id, user, session_counter: 0, auid_counter: 0, local_counter: 0 }
    }
    /// How many unique addresses were generated so far.
    pub fn auid_counter(&self) -> u64 {
        self.auid_counter
    }
}

pub(crate) fn context(ext: &mut NativeExtensions) -> &mut TransactionContext {
    ext.get_or_default::<TransactionContext>()
}

fn user(ext: &mut NativeExtensions) -> VmResult<&UserTransaction> {
    context(ext).user.as_ref().ok_or_else(|| VmError::abort(abort_codes::ETRANSACTION_CONTEXT_NOT_AVAILABLE))
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    let m = "transaction_context";
    r.add(m, "get_txn_hash", |cx, _, _| {
        cx.gas.charge_native(32)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::from_bytes(&context(ext).session_hash)]))
    });
    r.add(m, "generate_unique_address", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| {
            let c = context(ext);
            c.auid_counter = c.auid_counter.checked_add(1).ok_or_else(|| VmError::invariant("auid counter overflow"))?;
            let mut pre = c.session_hash.to_vec();
            pre.extend_from_slice(&c.auid_counter.to_le_bytes());
            Ok(vec![Value::Address(derive_address(&pre, DERIVE_AUID))])
        })
    });
    r.add(m, "monotonically_increasing_counter_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let timestamp_us = crate::args::pop_u64(&mut args)?;
        cx.with_extensions(|ext, _| {
            let c = context(ext);
            let local = next_local_counter(c)?;
            let session = c.session_counter as u128;
            let user = c.user.as_ref().ok_or_else(|| VmError::abort(abort_codes::ETRANSACTION_CONTEXT_NOT_AVAILABLE))?;
            // Layout: reserved byte (0: block execution) | timestamp | txn index | session | local.
            let v = ((timestamp_us as u128) << 56)
                | ((user.transaction_index as u128) << 24)
                | (session << 16)
                | local as u128;
            Ok(vec![Value::U128(v)])
        })
    });
    r.add(m, "monotonically_increasing_counter_internal_for_test_only", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| {
            let c = context(ext);
            let local = next_local_counter(c)?;
            Ok(vec![Value::U128(local as u128)])
        })
    });
    r.add(m, "sender_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(user(ext)?.sender)]))
    });
    r.add(m, "secondary_signers_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| {
            let s = user(ext)?.secondary_signers.iter().map(|a| Value::Address(*a)).collect();
            Ok(vec![Value::Vector(s)])
        })
    });
    r.add(m, "gas_payer_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(user(ext)?.gas_payer)]))
    });
    r.add(m, "max_gas_amount_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U64(user(ext)?.max_gas_amount)]))
    });
    r.add(m, "gas_unit_price_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U64(user(ext)?.gas_unit_price)]))
    });
    r.add(m, "chain_id_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U8(user(ext)?.chain_id)]))
    });
    r.add("type_info", "chain_id_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U8(context(ext).chain_id)]))
    });
}

fn next_local_counter(c: &mut TransactionContext) -> VmResult<u16> {
    if c.local_counter == u16::MAX {
        return Err(VmError::abort(abort_codes::EMONOTONICALLY_INCREASING_COUNTER_OVERFLOW));
    }
    c.local_counter += 1;
    Ok(c.local_counter)
}
