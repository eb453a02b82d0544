//! `0x2::hash` (blake2b256, keccak256), `0x2::address` (bytes and u256
//! conversions) and `0x2::types::is_one_time_witness`.

use crate::args::{pop, pop_bytes, ty_arg, Args, Registrar};
use movejit_runtime::ethnum::U256;
use movejit_runtime::{AccountAddress, Layout, Type, Value, VmError};

/// `address::from_bytes` of a vector that is not 32 bytes long.
pub const E_ADDRESS_PARSE_ERROR: u64 = 0;

/// BLAKE2b with a 32-byte digest (Sui's default hash).
pub fn blake2b256(data: &[u8]) -> [u8; 32] {
    use blake2::Digest;
    blake2::Blake2b::<blake2::digest::consts::U32>::digest(data).into()
}

pub fn keccak256(data: &[u8]) -> [u8; 32] {
    use sha3::Digest;
    sha3::Keccak256::digest(data).into()
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    // Both take `&vector<u8>`.
    r.add("hash", "blake2b256", |cx, _, mut args: Args| {
        let data = cx.deref(&pop(&mut args)?)?.to_bytes()?;
        cx.gas.charge_native(data.len())?;
        Ok(vec![Value::from_bytes(&blake2b256(&data))])
    });
    r.add("hash", "keccak256", |cx, _, mut args: Args| {
        let data = cx.deref(&pop(&mut args)?)?.to_bytes()?;
        cx.gas.charge_native(data.len())?;
        Ok(vec![Value::from_bytes(&keccak256(&data))])
    });
    r.add("address", "from_bytes", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let bytes = pop_bytes(&mut args)?;
        let a: [u8; 32] = bytes.as_slice().try_into().map_err(|_| VmError::abort(E_ADDRESS_PARSE_ERROR))?;
        Ok(vec![Value::Address(AccountAddress(a))])
    });
    r.add("address", "to_u256", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let a = pop(&mut args)?.as_address()?;
        Ok(vec![Value::U256(U256::from_be_bytes(a.0))])
    });
    r.add("address", "from_u256", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let n = match pop(&mut args)? {
            Value::U256(n) => n,
            v => return Err(VmError::invariant(format!("from_u256: expected u256, got {v:?}"))),
        };
        Ok(vec![Value::Address(AccountAddress(n.to_be_bytes()))])
    });
    r.add("types", "is_one_time_witness", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        Ok(vec![Value::Bool(is_one_time_witness(cx.types.layout_of(t)?, t))])
    });
}

/// Sui's check (with the hardened rule: no type arguments): a struct of
/// one `bool` field named as its module in upper case. The other properties
/// of a one-time witness are the Sui bytecode verifier's to check.
fn is_one_time_witness(layout: Layout, t: &Type) -> bool {
    let one_bool = matches!(layout, Layout::Struct(ref f) if matches!(f.as_slice(), [Layout::Bool]));
    match t {
        Type::Datatype(id, args) => one_bool && args.is_empty() && *id.name == *id.module.to_ascii_uppercase(),
        _ => false,
    }
}
