//! Smaller framework natives: `aptos_hash` (sip_hash, keccak256, sha2/sha3
//! 512, blake2b 256, ripemd160), `debug` (silent outside Move unit tests,
//! as in an Aptos node), `util::from_bytes`,
//! `function_info` (identifier check, function loading), `randomness`,
//! `state_storage` (the usage the host reports), and the natives that would
//! call back into Move (`dispatchable_fungible_asset`), which this runtime
//! cannot do yet.

use crate::args::{extension_error, pop, ty_arg, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::storage::ModuleId;
use movejit_runtime::{bcs, Layout, Value, VmError, VmResult};
use std::hash::Hasher;

/// `util::from_bytes` on bytes that are not a value of the type.
pub const EFROM_BYTES: u64 = 0x01_0001;
/// `randomness` outside an unbiasable (`#[randomness]`) entry call.
pub const E_API_USE_SUSCEPTIBLE_TO_TEST_AND_ABORT: u64 = 1;

/// Randomness state of a transaction. The host marks an entry call
/// unbiasable (Aptos does for `#[randomness]` entry functions called as a
/// transaction); otherwise randomness APIs abort.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Randomness {
    pub unbiasable: bool,
    txn_local_state: [u8; 8],
}

impl Randomness {
    /// The state of an unbiasable entry call.
    pub fn unbiasable() -> Self {
        Randomness { unbiasable: true, ..Randomness::default() }
    }
    /// Byte-wise little-endian increment with wrap-around, as Aptos does.
    fn increment(&mut self) {
        for b in self.txn_local_state.iter_mut() {
            if *b < 255 {
                *b += 1;
                break;
            }
            *b = 0;
        }
    }
}

/// Storage usage at the beginning of the epoch, as the host's state view
/// reports it (`state_storage::get_state_storage_usage_only_at_epoch_beginning`).
/// Without one in the session's extensions that native fails with
/// `VM_EXTENSION_ERROR`, as Aptos does when its state view cannot tell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateStorageUsage {
    pub items: u64,
    pub bytes: u64,
}

/// Aptos's `Identifier::is_valid`.
fn is_identifier(b: &[u8]) -> bool {
    let rest_valid =
        |from: usize| b[from..].iter().all(|c| matches!(c, b'_' | b'$' | b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9'));
    match b {
        b"<SELF>" => true,
        [b'<', b'S', b'E', b'L', b'F', b'>', b'_', ..] if b.len() > 7 => b[7..].iter().all(u8::is_ascii_digit),
        [b'a'..=b'z', ..] | [b'A'..=b'Z', ..] => rest_valid(1),
        [b'_', ..] | [b'$', ..] if b.len() > 1 => rest_valid(1),
        _ => false,
    }
}

/// `function_info` given a name that is not a Move identifier.
pub const EINVALID_IDENTIFIER: u64 = 1;

/// The layout of `0x1::function_info::FunctionInfo`: the module's address
/// and name, the function's name (`String`s).
fn function_info_layout() -> Layout {
    let string = || Layout::Struct(vec![Layout::Vector(Box::new(Layout::U8))]);
    Layout::Struct(vec![Layout::Address, string(), string()])
}

/// The module a `FunctionInfo` (its BCS) names, both names checked as
/// Aptos's `extract_function_info` does (module name, then function name).
fn function_info_module(bytes: &[u8]) -> VmResult<ModuleId> {
    let malformed = || VmError::invariant("function_info: a FunctionInfo value");
    let value = bcs::deserialize(bytes, &function_info_layout()).map_err(|_| malformed())?;
    let Value::Struct(fields) = value else { return Err(malformed()) };
    let name = |i: usize| -> VmResult<Vec<u8>> {
        let Some(Value::Struct(s)) = fields.get(i) else { return Err(malformed()) };
        let b = s.first().ok_or_else(malformed)?.to_bytes()?;
        if !is_identifier(&b) {
            return Err(VmError::abort(EINVALID_IDENTIFIER).with_message("String is not a valid Move identifier"));
        }
        Ok(b)
    };
    let Some(Value::Address(address)) = fields.first() else { return Err(malformed()) };
    let module = name(1)?;
    name(2)?;
    let module = String::from_utf8(module).map_err(|_| malformed())?;
    Ok(ModuleId { address: *address, name: module.into() })
}

/// A hash's (base, per input byte) parameters.
type HashPrice = (P, P);

const fn hash_price(base: &str, per_byte: &str) -> HashPrice {
    (P::named(base), P::named(per_byte))
}

const KECCAK256: HashPrice =
    hash_price("aptos_framework.hash.keccak256.base", "aptos_framework.hash.keccak256.per_byte");
const SHA2_512: HashPrice = hash_price("aptos_framework.hash.sha2_512.base", "aptos_framework.hash.sha2_512.per_byte");
const SHA3_512: HashPrice = hash_price("aptos_framework.hash.sha3_512.base", "aptos_framework.hash.sha3_512.per_byte");
const BLAKE2B_256: HashPrice =
    hash_price("aptos_framework.hash.blake2b_256.base", "aptos_framework.hash.blake2b_256.per_byte");
const RIPEMD160: HashPrice =
    hash_price("aptos_framework.hash.ripemd160.base", "aptos_framework.hash.ripemd160.per_byte");
const SIP_HASH: HashPrice = hash_price("aptos_framework.hash.sip_hash.base", "aptos_framework.hash.sip_hash.per_byte");
const FROM_BYTES: (P, P) =
    (P::named("aptos_framework.util.from_bytes.base"), P::named("aptos_framework.util.from_bytes.per_byte"));
const IS_IDENTIFIER: (P, P) = (
    P::named("aptos_framework.function_info.is_identifier.base"),
    P::named("aptos_framework.function_info.is_identifier.per_byte"),
);
const LOAD_FUNCTION: P = P::named("aptos_framework.function_info.load_function.base");
const FETCH_AND_INC_COUNTER: P = P::named("aptos_framework.randomness.fetch_and_inc_counter");
const GET_USAGE: P = P::named("aptos_framework.state_storage.get_usage.base");

/// Hashing `n` bytes at `price`, before the hash is computed.
fn charge_hash(gas: &mut movejit_runtime::GasMeter, (base, per_byte): HashPrice, n: usize) -> VmResult<()> {
    gas.charge_native(n)?;
    gas.charge_aptos_native(&[(base, 1), (per_byte, n as u64)])
}

/// A digest native: bytes in, digest bytes out, charged per input byte.
fn digest_native<D: sha2::Digest>(r: &mut Registrar<'_>, name: &str, price: HashPrice) {
    r.add("aptos_hash", name, move |cx, _, mut args: Args| {
        let bytes = pop(&mut args)?.to_bytes()?;
        charge_hash(cx.gas, price, bytes.len())?;
        Ok(vec![Value::from_bytes(&D::digest(&bytes))])
    });
    r.add_flat("aptos_hash", name, move |call| {
        let n = call.arg_bytes(0)?.len();
        charge_hash(call.cx.gas, price, n)?;
        let digest = D::digest(call.arg_bytes(0)?);
        call.ret_bytes(0, &digest)
    });
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    digest_native::<sha3::Keccak256>(r, "keccak256", KECCAK256);
    digest_native::<sha2::Sha512>(r, "sha2_512_internal", SHA2_512);
    digest_native::<sha3::Sha3_512>(r, "sha3_512_internal", SHA3_512);
    digest_native::<blake2::Blake2b<blake2::digest::consts::U32>>(r, "blake2b_256_internal", BLAKE2B_256);
    digest_native::<ripemd::Ripemd160>(r, "ripemd160_internal", RIPEMD160);
    r.add("debug", "native_print", |_, _, _| Ok(vec![]));
    r.add("debug", "native_stack_trace", |_, _, _| Ok(vec![crate::args::string_value("")]));
    r.add("aptos_hash", "sip_hash", |cx, _, mut args: Args| {
        let bytes = pop(&mut args)?.to_bytes()?;
        charge_hash(cx.gas, SIP_HASH, bytes.len())?;
        // SipHash-2-4 with zero keys (`SipHasher::new()`).
        let mut h = siphasher::sip::SipHasher::new();
        h.write(&bytes);
        Ok(vec![Value::U64(h.finish())])
    });
    r.add_flat("aptos_hash", "sip_hash", |call| {
        let n = call.arg_bytes(0)?.len();
        charge_hash(call.cx.gas, SIP_HASH, n)?;
        let mut h = siphasher::sip::SipHasher::new();
        h.write(call.arg_bytes(0)?);
        let digest = h.finish();
        call.ret_u64(0, digest)
    });
    r.add_flat("debug", "native_print", |_| Ok(()));
    r.add("util", "from_bytes", |cx, ty, mut args: Args| {
        let bytes = pop(&mut args)?.to_bytes()?;
        cx.charge_layout(ty_arg(ty, 0)?)?;
        let layout = cx.types.layout_of(ty_arg(ty, 0)?)?;
        cx.gas.charge_native(bytes.len())?;
        cx.gas.charge_aptos_native(&[(FROM_BYTES.0, 1), (FROM_BYTES.1, bytes.len() as u64)])?;
        // Signers deserialize in their legacy form (an address).
        let v = bcs::deserialize(&bytes, &layout).map_err(|_| VmError::abort(EFROM_BYTES))?;
        Ok(vec![v])
    });
    r.add("function_info", "is_identifier", |cx, _, mut args: Args| {
        let s = pop(&mut args)?;
        let b = cx.deref(&s)?.to_bytes()?;
        cx.gas.charge_native(b.len())?;
        cx.gas.charge_aptos_native(&[(IS_IDENTIFIER.0, 1), (IS_IDENTIFIER.1, b.len() as u64)])?;
        Ok(vec![Value::Bool(is_identifier(&b))])
    });
    r.add_flat("function_info", "is_identifier", |call| {
        let n = call.arg_bytes(0)?.len();
        call.cx.gas.charge_native(n)?;
        call.cx.gas.charge_aptos_native(&[(IS_IDENTIFIER.0, 1), (IS_IDENTIFIER.1, n as u64)])?;
        let ok = is_identifier(call.arg_bytes(0)?);
        call.ret_bool(0, ok)
    });
    // Loads the function's module for dispatch: its price, then (Aptos's
    // lazy loader) the module's loading, charged once per transaction.
    r.add("function_info", "load_function_impl", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(LOAD_FUNCTION, 1)])?;
        let info = pop(&mut args)?;
        let layout = function_info_layout();
        let bytes = bcs::serialize(cx.deref(&info)?, &layout)
            .map_err(|_| VmError::invariant("function_info: a FunctionInfo value"))?;
        let id = function_info_module(&bytes)?;
        cx.charge_module_load(&id)?;
        Ok(vec![])
    });
    r.add_flat("function_info", "load_function_impl", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(LOAD_FUNCTION, 1)])?;
        let id = function_info_module(&call.arg_bcs(0)?)?;
        call.cx.charge_module_load(&id)
    });
    r.add("randomness", "fetch_and_increment_txn_counter", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(FETCH_AND_INC_COUNTER, 1)])?;
        cx.with_extensions(|ext, _| {
            let r = ext.get_or_default::<Randomness>();
            if !r.unbiasable {
                return Err(VmError::abort(E_API_USE_SUSCEPTIBLE_TO_TEST_AND_ABORT));
            }
            let out = Value::from_bytes(&r.txn_local_state);
            r.increment();
            Ok(vec![out])
        })
    });
    r.add("state_storage", "get_state_storage_usage_only_at_epoch_beginning", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(GET_USAGE, 1)])?;
        cx.with_extensions(|ext, _| match ext.get::<StateStorageUsage>() {
            Some(u) => Ok(vec![Value::Struct(vec![Value::U64(u.items), Value::U64(u.bytes)])]),
            None => Err(extension_error("state_storage: the host reported no storage usage")),
        })
    });
    r.add("randomness", "is_unbiasable", |cx, _, _| {
        cx.with_extensions(|ext, _| Ok(vec![Value::Bool(ext.get_or_default::<Randomness>().unbiasable)]))
    });
    for f in
        ["dispatchable_withdraw", "dispatchable_deposit", "dispatchable_derived_balance", "dispatchable_derived_supply"]
    {
        r.add("dispatchable_fungible_asset", f, move |_, _, _| {
            Err(extension_error(format!(
                "dispatchable_fungible_asset::{f}: natives that call Move functions are not supported yet"
            )))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_as_move_core_defines_them() {
        let rows: [(&[u8], bool); 12] = [
            (b"foo", true),
            (b"Foo_1$", true),
            (b"_x", true),
            (b"$x", true),
            (b"_", false),
            (b"$", false),
            (b"1abc", false),
            (b"", false),
            (b"a-b", false),
            (b"<SELF>", true),
            (b"<SELF>_12", true),
            (b"<SELF>_x", false),
        ];
        for (s, ok) in rows {
            assert_eq!(is_identifier(s), ok, "{}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn counter_increments_little_endian_with_carry() {
        let mut r = Randomness::unbiasable();
        r.txn_local_state = [255, 255, 3, 0, 0, 0, 0, 0];
        r.increment();
        assert_eq!(r.txn_local_state, [0, 0, 4, 0, 0, 0, 0, 0]);
    }
}
