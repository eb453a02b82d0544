//! `0x1::bcs::serialized_size` and `constant_serialized_size` (natives of
//! Aptos's move-stdlib that the framework reaches).

use crate::args::{pop, ty_arg, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::{bcs, GasMeter, Layout, Type, Value, VmError, VmResult};
use std::collections::HashSet;

const SERIALIZED_SIZE_BASE: P = P::named("move_stdlib.bcs.serialized_size.base");
const SERIALIZED_SIZE_PER_BYTE: P = P::named("move_stdlib.bcs.serialized_size.per_byte_serialized");
const SERIALIZED_SIZE_FAILURE: P = P::named("move_stdlib.bcs.serialized_size.failure");
const CONSTANT_SIZE_BASE: P = P::named("move_stdlib.bcs.constant_serialized_size.base");
const CONSTANT_SIZE_PER_TYPE_NODE: P = P::named("move_stdlib.bcs.constant_serialized_size.per_type_node");

/// The layout nodes Aptos visits to find the constant size of `ty` (of
/// layout `l`): each node once, a struct's fields up to the first without
/// a constant size, and a struct type (with its type arguments) met again
/// as one node (`ConstantSerializedSizeLocalCache`, on from the start on
/// the test chain: a struct layout measured before is not walked again).
/// `seen`: the struct types measured so far.
fn visited_nodes(types: &dyn TypeInfo, ty: Option<&Type>, l: &Layout, seen: &mut HashSet<Type>) -> VmResult<u64> {
    let fields = match l {
        Layout::Struct(fields) => fields,
        _ => return Ok(1),
    };
    let field_types = match ty {
        Some(t) if !seen.insert(t.clone()) => return Ok(1),
        Some(t) => types.struct_field_types(t)?,
        None => None,
    };
    let mut n = 1;
    for (i, f) in fields.iter().enumerate() {
        n += visited_nodes(types, field_types.as_ref().and_then(|ts| ts.get(i)), f, seen)?;
        if constant_size(f).is_none() {
            break;
        }
    }
    Ok(n)
}

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

/// The end of `serialized_size` once the value's size is measured (`size`):
/// its price per byte, or, when building the layout (its module loads
/// included) or serializing failed in any way, Aptos's failure price and
/// the abort `to_bytes` gives (`native_serialized_size` maps every error of
/// `serialized_size_impl` so; a limit hit there still ends the call when
/// the failure price cannot be paid).
fn size_or_failure(gas: &mut GasMeter, size: VmResult<usize>) -> VmResult<u64> {
    let Ok(n) = size else {
        gas.charge_aptos_native(&[(SERIALIZED_SIZE_FAILURE, 1)])?;
        return Err(VmError::abort(NFE_BCS_SERIALIZATION_FAILURE));
    };
    gas.charge_native(n)?;
    gas.charge_aptos_native(&[(SERIALIZED_SIZE_PER_BYTE, n as u64)])?;
    Ok(n as u64)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("bcs", "serialized_size", |cx, ty, mut args: Args| {
        cx.gas.charge_aptos_native(&[(SERIALIZED_SIZE_BASE, 1)])?;
        let v = pop(&mut args)?;
        let t = ty_arg(ty, 0)?;
        let size = (|| {
            cx.charge_layout(t)?;
            let layout = cx.types.layout_of(t)?;
            bcs::serialize(cx.deref(&v)?, &layout).map(|b| b.len()).map_err(|_| VmError::abort(0))
        })();
        let n = size_or_failure(cx.gas, size)?;
        Ok(vec![Value::U64(n)])
    });
    r.add("bcs", "constant_serialized_size", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(CONSTANT_SIZE_BASE, 1)])?;
        cx.charge_layout(ty_arg(ty, 0)?)?;
        let layout = cx.types.layout_of(ty_arg(ty, 0)?)?;
        let nodes = visited_nodes(cx.types, Some(ty_arg(ty, 0)?), &layout, &mut HashSet::new())?;
        cx.gas.charge_aptos_native(&[(CONSTANT_SIZE_PER_TYPE_NODE, nodes)])?;
        let size = constant_size(&layout).map(Value::U64);
        Ok(vec![crate::args::option_value(cx, &Type::U64, size)?])
    });
    // Flat forms (same checks, errors and charges).
    r.add_flat("bcs", "serialized_size", |call| {
        call.cx.gas.charge_aptos_native(&[(SERIALIZED_SIZE_BASE, 1)])?;
        let t = call.ty_arg(0)?;
        let size = call.cx.charge_layout(t).and_then(|()| call.arg_bcs(0)).map(|b| b.len());
        let n = size_or_failure(call.cx.gas, size)?;
        call.ret_u64(0, n)
    });
    r.add_flat("bcs", "constant_serialized_size", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(CONSTANT_SIZE_BASE, 1)])?;
        let t = call.ty_arg(0)?;
        call.cx.charge_layout(t)?;
        let layout = call.cx.types.layout_of(t)?;
        let nodes = visited_nodes(call.cx.types, Some(t), &layout, &mut HashSet::new())?;
        call.cx.gas.charge_aptos_native(&[(CONSTANT_SIZE_PER_TYPE_NODE, nodes)])?;
        let size = constant_size(&layout).map(Value::U64);
        let v = crate::args::option_value(&call.cx, &Type::U64, size)?;
        call.ret_tree(0, &v)
    });
}
