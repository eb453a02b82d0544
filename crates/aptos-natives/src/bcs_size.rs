//! `0x1::bcs::serialized_size` and `constant_serialized_size` (natives of
//! Aptos's move-stdlib that the framework reaches).

use crate::args::{pop, ty_arg, Args, Registrar};
use movejit_runtime::{bcs, Layout, Type, Value, VmError};

/// `bcs` serialization failure (same code as `bcs::to_bytes`).
pub const NFE_BCS_SERIALIZATION_FAILURE: u64 = 0x1C5;

/// The BCS size of every value of `l`, if all have the same size.
fn constant_size(l: &Layout) -> Option<u64> {
    Some(match l {
        Layout::Bool | Layout::U8 | Layout::I8 => 1,
        Layout::U16 | Layout::I16 => 2,
        Layout::U32 | Layout::I32 => 4,
        Layout::U64 | Layout::I64 => 8,
        Layout::U128 | Layout::I128 => 16,
        Layout::U256 | Layout::I256 | Layout::Address => 32,
        Layout::Struct(fields) => fields.iter().map(constant_size).sum::<Option<u64>>()?,
        Layout::Signer | Layout::Vector(_) | Layout::Enum(_) | Layout::Function => return None,
    })
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("bcs", "serialized_size", |cx, ty, mut args: Args| {
        let v = pop(&mut args)?;
        let layout = cx.types.layout_of(ty_arg(ty, 0)?)?;
        let bytes =
            bcs::serialize(cx.deref(&v)?, &layout).map_err(|_| VmError::abort(NFE_BCS_SERIALIZATION_FAILURE))?;
        cx.gas.charge_native(bytes.len())?;
        Ok(vec![Value::U64(bytes.len() as u64)])
    });
    r.add("bcs", "constant_serialized_size", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        let layout = cx.types.layout_of(ty_arg(ty, 0)?)?;
        let size = constant_size(&layout).map(Value::U64);
        Ok(vec![crate::args::option_value(cx, &Type::U64, size)?])
    });
}
