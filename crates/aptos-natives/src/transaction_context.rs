//! `0x1::transaction_context` and `type_info::chain_id_internal`: values of
//! the running transaction, configured by the host.

use crate::args::{derive_address, option_value, string_value, Args, Registrar};
use crate::FRAMEWORK;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::{NativeContext, NativeExtensions};
use movejit_runtime::{AccountAddress, DatatypeId, Type, Value, VmError, VmResult};
use std::sync::Arc;

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
    /// The entry function the transaction calls (`None`: a script or a multisig payload).
    pub entry_function_payload: Option<EntryFunctionPayload>,
    /// The multisig payload (`None`: not a multisig transaction).
    pub multisig_payload: Option<MultisigPayload>,
    pub is_encrypted: bool,
}

/// `transaction_context::EntryFunctionPayload`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryFunctionPayload {
    pub account_address: AccountAddress,
    pub module_name: String,
    pub function_name: String,
    /// Type arguments as canonical type names.
    pub ty_arg_names: Vec<String>,
    /// BCS of each argument.
    pub args: Vec<Vec<u8>>,
}

/// `transaction_context::MultisigPayload`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultisigPayload {
    pub multisig_address: AccountAddress,
    pub entry_function_payload: Option<EntryFunctionPayload>,
}

impl EntryFunctionPayload {
    fn value(&self) -> Value {
        Value::Struct(vec![
            Value::Address(self.account_address),
            string_value(&self.module_name),
            string_value(&self.function_name),
            Value::Vector(self.ty_arg_names.iter().map(|s| string_value(s)).collect()),
            Value::Vector(self.args.iter().map(|a| Value::from_bytes(a)).collect()),
        ])
    }
    /// Bytes Aptos charges for (names and arguments).
    fn size(&self) -> usize {
        32 + self.module_name.len()
            + self.function_name.len()
            + self.ty_arg_names.iter().map(String::len).sum::<usize>()
            + self.args.iter().map(Vec::len).sum::<usize>()
    }
}

fn payload_type(name: &str) -> Type {
    Type::Datatype(
        Arc::new(DatatypeId { address: FRAMEWORK, module: "transaction_context".into(), name: name.into() }),
        vec![],
    )
}

/// `Option<EntryFunctionPayload>` as the loaded `option` module lays it out.
fn entry_payload_option(cx: &NativeContext<'_>, p: Option<&EntryFunctionPayload>) -> VmResult<Value> {
    option_value(cx, &payload_type("EntryFunctionPayload"), p.map(EntryFunctionPayload::value))
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
    /// Hash of the script the transaction runs (empty for entry functions).
    pub script_hash: Vec<u8>,
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
        TransactionContext {
            session_hash,
            chain_id,
            user,
            session_counter: 0,
            script_hash: Vec::new(),
            auid_counter: 0,
            local_counter: 0,
        }
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

const SECONDARY_SIGNERS_PER_SIGNER: P = P::named("aptos_framework.transaction_context.secondary_signers.per_signer");
/// (base, per byte of the payload's names and arguments).
const ENTRY_FUNCTION_PAYLOAD: (P, P) = (
    P::named("aptos_framework.transaction_context.entry_function_payload.base"),
    P::named("aptos_framework.transaction_context.entry_function_payload.per_abstract_memory_unit"),
);
const MULTISIG_PAYLOAD: (P, P) = (
    P::named("aptos_framework.transaction_context.multisig_payload.base"),
    P::named("aptos_framework.transaction_context.multisig_payload.per_abstract_memory_unit"),
);

pub(crate) fn register(r: &mut Registrar<'_>) {
    let m = "transaction_context";
    r.add(m, "get_txn_hash", |cx, _, _| {
        cx.gas.charge_native(32)?;
        cx.gas
            .charge_aptos_native(&[(const { P::named("aptos_framework.transaction_context.get_txn_hash.base") }, 1)])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::from_bytes(&context(ext).session_hash)]))
    });
    r.add(m, "generate_unique_address", |cx, _, _| Ok(vec![Value::Address(unique_address(cx)?)]));
    r.add_flat(m, "generate_unique_address", |call| {
        let a = unique_address(&mut call.cx)?;
        call.ret_address(0, a)
    });
    r.add(m, "monotonically_increasing_counter_internal", |cx, _, mut args: Args| {
        let timestamp_us = crate::args::pop_u64(&mut args)?;
        Ok(vec![Value::U128(counter(cx, Some(timestamp_us))?)])
    });
    r.add_flat(m, "monotonically_increasing_counter_internal", |call| {
        let timestamp_us = call.arg_u64(0)?;
        let v = counter(&mut call.cx, Some(timestamp_us))?;
        call.ret_u128(0, v)
    });
    r.add(m, "monotonically_increasing_counter_internal_for_test_only", |cx, _, _| {
        Ok(vec![Value::U128(counter(cx, None)?)])
    });
    r.add_flat(m, "monotonically_increasing_counter_internal_for_test_only", |call| {
        let v = counter(&mut call.cx, None)?;
        call.ret_u128(0, v)
    });
    r.add(m, "sender_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(const { P::named("aptos_framework.transaction_context.sender.base") }, 1)])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(user(ext)?.sender)]))
    });
    r.add(m, "secondary_signers_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(
            const { P::named("aptos_framework.transaction_context.secondary_signers.base") },
            1,
        )])?;
        cx.with_extensions(|ext, cx| {
            let signers = &user(ext)?.secondary_signers;
            cx.gas.charge_aptos_native(&[(SECONDARY_SIGNERS_PER_SIGNER, signers.len() as u64)])?;
            Ok(vec![Value::Vector(signers.iter().map(|a| Value::Address(*a)).collect())])
        })
    });
    r.add(m, "gas_payer_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(const { P::named("aptos_framework.transaction_context.fee_payer.base") }, 1)])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Address(user(ext)?.gas_payer)]))
    });
    r.add(m, "max_gas_amount_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(
            const { P::named("aptos_framework.transaction_context.max_gas_amount.base") },
            1,
        )])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U64(user(ext)?.max_gas_amount)]))
    });
    r.add(m, "gas_unit_price_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(
            const { P::named("aptos_framework.transaction_context.gas_unit_price.base") },
            1,
        )])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U64(user(ext)?.gas_unit_price)]))
    });
    r.add(m, "chain_id_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(const { P::named("aptos_framework.transaction_context.chain_id.base") }, 1)])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U8(user(ext)?.chain_id)]))
    });
    r.add(m, "get_script_hash", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(
            const { P::named("aptos_framework.transaction_context.get_script_hash.base") },
            1,
        )])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::from_bytes(&context(ext).script_hash)]))
    });
    r.add(m, "is_encrypted_txn_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(
            const { P::named("aptos_framework.transaction_context.is_encrypted_txn.base") },
            1,
        )])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::Bool(user(ext)?.is_encrypted)]))
    });
    r.add(m, "entry_function_payload_internal", |cx, _, _| {
        cx.gas.charge_aptos_native(&[(ENTRY_FUNCTION_PAYLOAD.0, 1)])?;
        let payload = cx.with_extensions(|ext, _| Ok(user(ext)?.entry_function_payload.clone()))?;
        let size = payload.as_ref().map_or(0, EntryFunctionPayload::size);
        cx.gas.charge_native(size)?;
        if payload.is_some() {
            cx.gas.charge_aptos_native(&[(ENTRY_FUNCTION_PAYLOAD.1, size as u64)])?;
        }
        Ok(vec![entry_payload_option(cx, payload.as_ref())?])
    });
    r.add(m, "multisig_payload_internal", |cx, _, _| {
        cx.gas.charge_aptos_native(&[(MULTISIG_PAYLOAD.0, 1)])?;
        let payload = cx.with_extensions(|ext, _| Ok(user(ext)?.multisig_payload.clone()))?;
        let inner = payload.as_ref().and_then(|p| p.entry_function_payload.as_ref());
        let size = inner.map_or(0, EntryFunctionPayload::size);
        cx.gas.charge_native(size)?;
        if inner.is_some() {
            cx.gas.charge_aptos_native(&[(MULTISIG_PAYLOAD.1, size as u64)])?;
        }
        let value = match &payload {
            Some(p) => Some(Value::Struct(vec![Value::Address(p.multisig_address), entry_payload_option(cx, inner)?])),
            None => None,
        };
        Ok(vec![option_value(cx, &payload_type("MultisigPayload"), value)?])
    });
    r.add("type_info", "chain_id_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(const { P::named("aptos_framework.type_info.chain_id.base") }, 1)])?;
        cx.with_extensions(|ext, _| Ok(vec![Value::U8(context(ext).chain_id)]))
    });
}

/// `generate_unique_address` (both forms): the transaction's next AUID.
fn unique_address(cx: &mut NativeContext<'_>) -> VmResult<AccountAddress> {
    cx.gas.charge_native(0)?;
    cx.gas.charge_aptos_native(&[(
        const { P::named("aptos_framework.transaction_context.generate_unique_address.base") },
        1,
    )])?;
    cx.with_extensions(|ext, _| {
        let c = context(ext);
        c.auid_counter = c.auid_counter.checked_add(1).ok_or_else(|| VmError::invariant("auid counter overflow"))?;
        let mut pre = c.session_hash.to_vec();
        pre.extend_from_slice(&c.auid_counter.to_le_bytes());
        Ok(derive_address(&pre, DERIVE_AUID))
    })
}

/// `monotonically_increasing_counter_internal(timestamp_us)` (both forms;
/// `None`: the test-only variant, the local counter alone).
fn counter(cx: &mut NativeContext<'_>, timestamp_us: Option<u64>) -> VmResult<u128> {
    cx.gas.charge_native(0)?;
    cx.gas.charge_aptos_native(&[(
        const { P::named("aptos_framework.transaction_context.monotonically_increasing_counter.base") },
        1,
    )])?;
    cx.with_extensions(|ext, _| {
        let c = context(ext);
        let local = next_local_counter(c)?;
        let Some(timestamp_us) = timestamp_us else { return Ok(local as u128) };
        let session = c.session_counter as u128;
        let user = c.user.as_ref().ok_or_else(|| VmError::abort(abort_codes::ETRANSACTION_CONTEXT_NOT_AVAILABLE))?;
        // Layout: reserved byte (0: block execution) | timestamp | txn index | session | local.
        Ok(((timestamp_us as u128) << 56) | ((user.transaction_index as u128) << 24) | (session << 16) | local as u128)
    })
}

fn next_local_counter(c: &mut TransactionContext) -> VmResult<u16> {
    if c.local_counter == u16::MAX {
        return Err(VmError::abort(abort_codes::EMONOTONICALLY_INCREASING_COUNTER_OVERFLOW));
    }
    c.local_counter += 1;
    Ok(c.local_counter)
}
