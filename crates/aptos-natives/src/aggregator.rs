//! `0x1::aggregator_v2` without the delayed-field optimisation: an
//! aggregator is the plain struct `{ value, max_value }` and a snapshot
//! `{ value }`, with Aptos's bounded arithmetic and abort codes.

use crate::args::{pop, ty_arg, Args, Registrar};
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{Type, Value, VmError, VmResult};

pub const EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE: u64 = 0x03_0005;
pub const EUNSUPPORTED_AGGREGATOR_TYPE: u64 = 0x03_0007;
pub const EINPUT_STRING_LENGTH_TOO_LARGE: u64 = 0x03_0008;
pub const EAGGREGATOR_FUNCTION_NOT_YET_SUPPORTED: u64 = 0x03_0009;
/// Longest input of a derived string.
const DERIVED_STRING_INPUT_MAX_LENGTH: usize = 1024;
/// Decimal digits of u64::MAX and u128::MAX.
const U64_MAX_DIGITS: usize = 20;
const U128_MAX_DIGITS: usize = 39;

/// BCS size of a byte vector of `n` bytes (ULEB length + bytes).
fn bcs_size_of_byte_array(n: usize) -> usize {
    let mut len = 1;
    let mut v = n >> 7;
    while v > 0 {
        len += 1;
        v >>= 7;
    }
    len + n
}

/// A `DerivedStringSnapshot { value: String, padding: vector<u8> }` whose
/// BCS is exactly `width` bytes, as Aptos pads it (the width it would have
/// as a delayed field).
fn derived_string(bytes: Vec<u8>, width: usize) -> VmResult<Value> {
    let value_width = bcs_size_of_byte_array(bytes.len());
    let padding = width
        .checked_sub(value_width + 1)
        .filter(|p| *p < 128)
        .ok_or_else(|| VmError::invariant("DerivedStringSnapshot: no room for padding"))?;
    Ok(Value::Struct(vec![crate::args::string_value_bytes(&bytes), Value::from_bytes(&vec![0; padding])]))
}

/// The bytes of a `String` value.
fn string_bytes(v: &Value) -> VmResult<Vec<u8>> {
    match v {
        Value::Struct(f) if f.len() == 1 => Ok(f[0].to_bytes()?),
        v => Err(VmError::invariant(format!("expected a String, got {v:?}"))),
    }
}

/// The integer of an aggregator element type (u64 or u128 only).
fn int_of(t: &Type, v: &Value, code: u64) -> VmResult<u128> {
    match (t, v) {
        (Type::U64, Value::U64(x)) => Ok(*x as u128),
        (Type::U128, Value::U128(x)) => Ok(*x),
        (Type::U64 | Type::U128, v) => Err(VmError::invariant(format!("aggregator: value {v:?}"))),
        _ => Err(VmError::abort(code)),
    }
}

fn value_of(t: &Type, x: u128, code: u64) -> VmResult<Value> {
    match t {
        Type::U64 => u64::try_from(x).map(Value::U64).map_err(|_| VmError::invariant("aggregator: u64 overflow")),
        Type::U128 => Ok(Value::U128(x)),
        _ => Err(VmError::abort(code)),
    }
}

/// (value, max_value) of the aggregator a reference points to.
fn read(cx: &NativeContext<'_>, t: &Type, agg: &Value) -> VmResult<(u128, u128)> {
    match cx.deref(agg)? {
        Value::Struct(f) if f.len() == 2 => {
            Ok((int_of(t, &f[0], EUNSUPPORTED_AGGREGATOR_TYPE)?, int_of(t, &f[1], EUNSUPPORTED_AGGREGATOR_TYPE)?))
        }
        v => Err(VmError::invariant(format!("aggregator: {v:?}"))),
    }
}

fn new_aggregator(t: &Type, max: u128) -> VmResult<Vec<Value>> {
    Ok(vec![Value::Struct(vec![
        value_of(t, 0, EUNSUPPORTED_AGGREGATOR_TYPE)?,
        value_of(t, max, EUNSUPPORTED_AGGREGATOR_TYPE)?,
    ])])
}

/// Adds (`negative`: subtracts) `rhs` within `[0, max]`; false when out of range.
fn try_update(cx: &mut NativeContext<'_>, ty: &[Type], mut args: Args, negative: bool, store: bool) -> VmResult<Vec<Value>> {
    cx.gas.charge_native(0)?;
    let t = ty_arg(ty, 0)?;
    let rhs = int_of(t, &pop(&mut args)?, EUNSUPPORTED_AGGREGATOR_TYPE)?;
    let agg = pop(&mut args)?;
    let (value, max) = read(cx, t, &agg)?;
    let next = if negative { value.checked_sub(rhs) } else { value.checked_add(rhs).filter(|n| *n <= max) };
    let Some(next) = next else { return Ok(vec![Value::Bool(false)]) };
    if store {
        let nv = value_of(t, next, EUNSUPPORTED_AGGREGATOR_TYPE)?;
        match cx.deref_mut(&agg)? {
            Value::Struct(f) if f.len() == 2 => f[0] = nv,
            _ => return Err(VmError::invariant("aggregator")),
        }
    }
    Ok(vec![Value::Bool(true)])
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    let m = "aggregator_v2";
    r.add(m, "create_aggregator", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let max = int_of(t, &pop(&mut args)?, EUNSUPPORTED_AGGREGATOR_TYPE)?;
        new_aggregator(t, max)
    });
    r.add(m, "create_unbounded_aggregator", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let max = match t {
            Type::U64 => u64::MAX as u128,
            Type::U128 => u128::MAX,
            _ => return Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_TYPE)),
        };
        new_aggregator(t, max)
    });
    r.add(m, "try_add", |cx, ty, args| try_update(cx, ty, args, false, true));
    r.add(m, "try_sub", |cx, ty, args| try_update(cx, ty, args, true, true));
    r.add(m, "is_at_least_impl", |cx, ty, args| try_update(cx, ty, args, true, false));
    r.add(m, "read", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let (value, max) = read(cx, t, &pop(&mut args)?)?;
        if value > max {
            return Err(VmError::invariant("aggregator value above its maximum"));
        }
        Ok(vec![value_of(t, value, EUNSUPPORTED_AGGREGATOR_TYPE)?])
    });
    r.add(m, "snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let (value, _) = read(cx, t, &pop(&mut args)?)?;
        Ok(vec![Value::Struct(vec![value_of(t, value, EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?])])
    });
    r.add(m, "create_snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let v = pop(&mut args)?;
        match t {
            Type::U64 | Type::U128 => Ok(vec![Value::Struct(vec![v])]),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
    for f in ["copy_snapshot", "string_concat"] {
        r.add(m, f, |cx, _, _| {
            cx.gas.charge_native(0)?;
            Err(VmError::abort(EAGGREGATOR_FUNCTION_NOT_YET_SUPPORTED))
        });
    }
    r.add(m, "create_derived_string", |cx, _, mut args: Args| {
        let bytes = string_bytes(&pop(&mut args)?)?;
        cx.gas.charge_native(bytes.len())?;
        if bytes.len() > DERIVED_STRING_INPUT_MAX_LENGTH {
            return Err(VmError::abort(EINPUT_STRING_LENGTH_TOO_LARGE));
        }
        let width = (bcs_size_of_byte_array(bytes.len()) + 1).max(U64_MAX_DIGITS + 2);
        Ok(vec![derived_string(bytes, width)?])
    });
    r.add(m, "derive_string_concat", |cx, ty, mut args: Args| {
        let suffix = string_bytes(&pop(&mut args)?)?;
        let snapshot = pop(&mut args)?;
        let prefix = string_bytes(&pop(&mut args)?)?;
        cx.gas.charge_native(prefix.len() + suffix.len())?;
        if prefix.len() + suffix.len() > DERIVED_STRING_INPUT_MAX_LENGTH {
            return Err(VmError::abort(EINPUT_STRING_LENGTH_TOO_LARGE));
        }
        let t = ty_arg(ty, 0)?;
        let digits = match t {
            Type::U64 => U64_MAX_DIGITS,
            Type::U128 => U128_MAX_DIGITS,
            _ => return Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        };
        let value = match cx.deref(&snapshot)? {
            Value::Struct(f) if f.len() == 1 => int_of(t, &f[0], EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?,
            v => return Err(VmError::invariant(format!("snapshot: {v:?}"))),
        };
        let width = bcs_size_of_byte_array(prefix.len() + suffix.len() + digits) + 1;
        let mut out = prefix;
        out.extend_from_slice(value.to_string().as_bytes());
        out.extend_from_slice(&suffix);
        Ok(vec![derived_string(out, width)?])
    });
    r.add(m, "read_derived_string", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let s = pop(&mut args)?;
        match cx.deref(&s)? {
            Value::Struct(f) if f.len() == 2 => Ok(vec![f[0].clone()]),
            v => Err(VmError::invariant(format!("derived string: {v:?}"))),
        }
    });
    r.add(m, "read_snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let t = ty_arg(ty, 0)?;
        let s = pop(&mut args)?;
        match (t, cx.deref(&s)?) {
            (Type::U64 | Type::U128, Value::Struct(f)) if f.len() == 1 => Ok(vec![f[0].clone()]),
            (Type::U64 | Type::U128, v) => Err(VmError::invariant(format!("snapshot: {v:?}"))),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
}
