//! `0x1::aggregator_v2` without the delayed-field optimisation: an
//! aggregator is the plain struct `{ value, max_value }` and a snapshot
//! `{ value }`, with Aptos's bounded arithmetic and abort codes; and the
//! v1 `aggregator` / `aggregator_factory` natives, whose values live in the
//! session's [`AggregatorV1Store`].

use crate::args::{extension_error, pop, ty_arg, Args, Registrar};
use movejit_runtime::flat::Shape;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::{FlatCall, NativeContext};
use movejit_runtime::{AccountAddress, Type, Value, VmError, VmResult};

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

/// `create_derived_string`'s result for input `bytes` (charged already).
fn created_derived_string(bytes: Vec<u8>) -> VmResult<Value> {
    if bytes.len() > DERIVED_STRING_INPUT_MAX_LENGTH {
        return Err(VmError::abort(EINPUT_STRING_LENGTH_TOO_LARGE));
    }
    let width = (bcs_size_of_byte_array(bytes.len()) + 1).max(U64_MAX_DIGITS + 2);
    derived_string(bytes, width)
}

/// `derive_string_concat`'s checks, in Aptos's order, for `len` bytes of
/// prefix and suffix and snapshot type `t`: the most digits `t` prints.
fn concat_digits(t: &Type, len: usize) -> VmResult<usize> {
    if len > DERIVED_STRING_INPUT_MAX_LENGTH {
        return Err(VmError::abort(EINPUT_STRING_LENGTH_TOO_LARGE));
    }
    match t {
        Type::U64 => Ok(U64_MAX_DIGITS),
        Type::U128 => Ok(U128_MAX_DIGITS),
        _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
    }
}

/// `derive_string_concat`'s result: `prefix`, `value` in decimal, `suffix`.
fn concat_derived_string(prefix: &[u8], value: u128, suffix: &[u8], digits: usize) -> VmResult<Value> {
    let width = bcs_size_of_byte_array(prefix.len() + suffix.len() + digits) + 1;
    let mut out = prefix.to_vec();
    out.extend_from_slice(value.to_string().as_bytes());
    out.extend_from_slice(suffix);
    derived_string(out, width)
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

const V2_CREATE_AGGREGATOR: P = P::named("aptos_framework.aggregator_v2.create_aggregator.base");
const V2_TRY_ADD: P = P::named("aptos_framework.aggregator_v2.try_add.base");
const V2_TRY_SUB: P = P::named("aptos_framework.aggregator_v2.try_sub.base");
const V2_IS_AT_LEAST: P = P::named("aptos_framework.aggregator_v2.is_at_least.base");
const V2_READ: P = P::named("aptos_framework.aggregator_v2.read.base");
const V2_SNAPSHOT: P = P::named("aptos_framework.aggregator_v2.snapshot.base");
const V2_CREATE_SNAPSHOT: P = P::named("aptos_framework.aggregator_v2.create_snapshot.base");
const V2_CREATE_SNAPSHOT_PER_BYTE: P = P::named("aptos_framework.aggregator_v2.create_snapshot.per_byte");
const V2_READ_SNAPSHOT: P = P::named("aptos_framework.aggregator_v2.read_snapshot.base");
const V2_STRING_CONCAT: P = P::named("aptos_framework.aggregator_v2.string_concat.base");
const V2_STRING_CONCAT_PER_BYTE: P = P::named("aptos_framework.aggregator_v2.string_concat.per_byte");
const V1_ADD: P = P::named("aptos_framework.aggregator.add.base");
const V1_SUB: P = P::named("aptos_framework.aggregator.sub.base");
const V1_READ: P = P::named("aptos_framework.aggregator.read.base");
const V1_DESTROY: P = P::named("aptos_framework.aggregator.destroy.base");
const V1_NEW_AGGREGATOR: P = P::named("aptos_framework.aggregator_factory.new_aggregator.base");

/// `try_add`, `try_sub` or `is_at_least_impl`: (subtracts, stores the
/// result, base price).
type Update = (bool, bool, P);
const TRY_ADD: Update = (false, true, V2_TRY_ADD);
const TRY_SUB: Update = (true, true, V2_TRY_SUB);
const IS_AT_LEAST: Update = (true, false, V2_IS_AT_LEAST);

/// The largest value of aggregator element type `t`.
fn unbounded_max(t: &Type) -> VmResult<u128> {
    match t {
        Type::U64 => Ok(u64::MAX as u128),
        Type::U128 => Ok(u128::MAX),
        _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_TYPE)),
    }
}

fn new_aggregator(t: &Type, max: u128) -> VmResult<Vec<Value>> {
    Ok(vec![Value::Struct(vec![
        value_of(t, 0, EUNSUPPORTED_AGGREGATOR_TYPE)?,
        value_of(t, max, EUNSUPPORTED_AGGREGATOR_TYPE)?,
    ])])
}

/// Adds (`negative`: subtracts) `rhs` within `[0, max]`; false when out of range.
fn try_update(
    cx: &mut NativeContext<'_>,
    ty: &[Type],
    mut args: Args,
    (negative, store, base): Update,
) -> VmResult<Vec<Value>> {
    cx.gas.charge_native(0)?;
    cx.gas.charge_aptos_native(&[(base, 1)])?;
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

/// The integer at field path `path` of argument `i` (a value, or the value
/// a reference points to) of aggregator element type `t`: the flat form of
/// [`int_of`].
fn flat_int(call: &FlatCall<'_, '_>, t: &Type, i: usize, path: &[usize]) -> VmResult<u128> {
    let (v, l) = match t {
        Type::U64 | Type::U128 => call.uint_at(i, path)?,
        _ => return Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_TYPE)),
    };
    match (t, &l.shape) {
        (Type::U64, Shape::U64) | (Type::U128, Shape::U128) => Ok(v),
        _ => Err(VmError::invariant("aggregator: value of another type")),
    }
}

/// (value, max_value) of the aggregator reference argument 0 points to:
/// the flat form of [`read`].
fn flat_read(call: &FlatCall<'_, '_>, t: &Type) -> VmResult<(u128, u128)> {
    let (_, l) = call.arg_ref(0)?;
    match &l.shape {
        Shape::Struct(fs) if fs.len() == 2 => Ok((flat_int(call, t, 0, &[0])?, flat_int(call, t, 0, &[1])?)),
        _ => Err(VmError::invariant("aggregator: not an aggregator")),
    }
}

/// The flat form of [`try_update`].
fn flat_try_update(call: &mut FlatCall<'_, '_>, (negative, store, base): Update) -> VmResult<()> {
    call.cx.gas.charge_native(0)?;
    call.cx.gas.charge_aptos_native(&[(base, 1)])?;
    let t = call.ty_arg(0)?;
    call.value_arg(1)?;
    let rhs = flat_int(call, t, 1, &[])?;
    let (value, max) = flat_read(call, t)?;
    let next = if negative { value.checked_sub(rhs) } else { value.checked_add(rhs).filter(|n| *n <= max) };
    let Some(next) = next else { return call.ret_bool(0, false) };
    if store {
        // The `value` field, in its width (a u64 that overflows is an
        // invariant violation).
        call.set_uint_at(0, &[0], next)?;
    }
    call.ret_bool(0, true)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    register_v2(r);
    let m = "aggregator_v2";
    r.add_flat(m, "create_aggregator", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_CREATE_AGGREGATOR, 1)])?;
        let t = call.ty_arg(0)?;
        let max = flat_int(call, t, 0, &[])?;
        let agg = new_aggregator(t, max)?;
        call.ret_tree(0, &agg[0])
    });
    r.add_flat(m, "create_unbounded_aggregator", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_CREATE_AGGREGATOR, 1)])?;
        let t = call.ty_arg(0)?;
        let agg = new_aggregator(t, unbounded_max(t)?)?;
        call.ret_tree(0, &agg[0])
    });
    r.add_flat(m, "try_add", |call| flat_try_update(call, TRY_ADD));
    r.add_flat(m, "try_sub", |call| flat_try_update(call, TRY_SUB));
    r.add_flat(m, "is_at_least_impl", |call| flat_try_update(call, IS_AT_LEAST));
    r.add_flat(m, "read", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_READ, 1)])?;
        let t = call.ty_arg(0)?;
        let (value, max) = flat_read(call, t)?;
        if value > max {
            return Err(VmError::invariant("aggregator value above its maximum"));
        }
        match t {
            Type::U64 => {
                call.ret_u64(0, u64::try_from(value).map_err(|_| VmError::invariant("aggregator: u64 overflow"))?)
            }
            Type::U128 => call.ret_u128(0, value),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_TYPE)),
        }
    });
    r.add_flat(m, "snapshot", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_SNAPSHOT, 1)])?;
        let t = call.ty_arg(0)?;
        let (value, _) = flat_read(call, t)?;
        call.ret_tree(0, &Value::Struct(vec![value_of(t, value, EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?]))
    });
    r.add_flat(m, "create_snapshot", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT, 1)])?;
        let t = call.ty_arg(0)?;
        match t {
            Type::U64 | Type::U128 => {
                let v = flat_int(call, t, 0, &[])?;
                call.ret_tree(0, &Value::Struct(vec![value_of(t, v, EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?]))
            }
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
    for f in ["copy_snapshot", "string_concat"] {
        r.add_flat(m, f, |call| {
            call.cx.gas.charge_native(0)?;
            Err(VmError::abort(EAGGREGATOR_FUNCTION_NOT_YET_SUPPORTED))
        });
    }
    // A `String` is `{ bytes: vector<u8> }`: its bytes are at field path [0].
    r.add_flat(m, "create_derived_string", |call| {
        call.cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT, 1)])?;
        let bytes = call.arg_bytes_at(0, &[0])?.to_vec();
        call.cx.gas.charge_native(bytes.len())?;
        call.cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT_PER_BYTE, bytes.len() as u64)])?;
        let v = created_derived_string(bytes)?;
        call.ret_tree(0, &v)
    });
    r.add_flat(m, "derive_string_concat", |call| {
        call.cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT, 1)])?;
        let suffix_len = call.arg_bytes_at(2, &[0])?.len();
        call.cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT_PER_BYTE, suffix_len as u64)])?;
        let prefix_len = call.arg_bytes_at(0, &[0])?.len();
        call.cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT_PER_BYTE, prefix_len as u64)])?;
        call.cx.gas.charge_native(prefix_len + suffix_len)?;
        let t = call.ty_arg(0)?;
        let digits = concat_digits(t, prefix_len + suffix_len)?;
        let value = flat_int(call, t, 1, &[0])?;
        let v = concat_derived_string(call.arg_bytes_at(0, &[0])?, value, call.arg_bytes_at(2, &[0])?, digits)?;
        call.ret_tree(0, &v)
    });
    r.add_flat(m, "read_derived_string", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_READ_SNAPSHOT, 1)])?;
        call.ret_copy_of_arg(0, 0, &[0])
    });
    r.add_flat(m, "read_snapshot", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V2_READ_SNAPSHOT, 1)])?;
        match call.ty_arg(0)? {
            Type::U64 | Type::U128 => call.ret_copy_of_arg(0, 0, &[0]),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
}

fn register_v2(r: &mut Registrar<'_>) {
    let m = "aggregator_v2";
    r.add(m, "create_aggregator", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_CREATE_AGGREGATOR, 1)])?;
        let t = ty_arg(ty, 0)?;
        let max = int_of(t, &pop(&mut args)?, EUNSUPPORTED_AGGREGATOR_TYPE)?;
        new_aggregator(t, max)
    });
    r.add(m, "create_unbounded_aggregator", |cx, ty, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_CREATE_AGGREGATOR, 1)])?;
        let t = ty_arg(ty, 0)?;
        new_aggregator(t, unbounded_max(t)?)
    });
    r.add(m, "try_add", |cx, ty, args| try_update(cx, ty, args, TRY_ADD));
    r.add(m, "try_sub", |cx, ty, args| try_update(cx, ty, args, TRY_SUB));
    r.add(m, "is_at_least_impl", |cx, ty, args| try_update(cx, ty, args, IS_AT_LEAST));
    r.add(m, "read", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_READ, 1)])?;
        let t = ty_arg(ty, 0)?;
        let (value, max) = read(cx, t, &pop(&mut args)?)?;
        if value > max {
            return Err(VmError::invariant("aggregator value above its maximum"));
        }
        Ok(vec![value_of(t, value, EUNSUPPORTED_AGGREGATOR_TYPE)?])
    });
    r.add(m, "snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_SNAPSHOT, 1)])?;
        let t = ty_arg(ty, 0)?;
        let (value, _) = read(cx, t, &pop(&mut args)?)?;
        Ok(vec![Value::Struct(vec![value_of(t, value, EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?])])
    });
    r.add(m, "create_snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT, 1)])?;
        let t = ty_arg(ty, 0)?;
        let v = pop(&mut args)?;
        match t {
            Type::U64 | Type::U128 => Ok(vec![Value::Struct(vec![v])]),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
    // Aptos aborts these before charging anything.
    for f in ["copy_snapshot", "string_concat"] {
        r.add(m, f, |cx, _, _| {
            cx.gas.charge_native(0)?;
            Err(VmError::abort(EAGGREGATOR_FUNCTION_NOT_YET_SUPPORTED))
        });
    }
    r.add(m, "create_derived_string", |cx, _, mut args: Args| {
        cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT, 1)])?;
        let bytes = string_bytes(&pop(&mut args)?)?;
        cx.gas.charge_native(bytes.len())?;
        cx.gas.charge_aptos_native(&[(V2_CREATE_SNAPSHOT_PER_BYTE, bytes.len() as u64)])?;
        Ok(vec![created_derived_string(bytes)?])
    });
    r.add(m, "derive_string_concat", |cx, ty, mut args: Args| {
        cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT, 1)])?;
        let suffix = string_bytes(&pop(&mut args)?)?;
        cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT_PER_BYTE, suffix.len() as u64)])?;
        let snapshot = pop(&mut args)?;
        let prefix = string_bytes(&pop(&mut args)?)?;
        cx.gas.charge_aptos_native(&[(V2_STRING_CONCAT_PER_BYTE, prefix.len() as u64)])?;
        cx.gas.charge_native(prefix.len() + suffix.len())?;
        let t = ty_arg(ty, 0)?;
        let digits = concat_digits(t, prefix.len() + suffix.len())?;
        let value = match cx.deref(&snapshot)? {
            Value::Struct(f) if f.len() == 1 => int_of(t, &f[0], EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)?,
            v => return Err(VmError::invariant(format!("snapshot: {v:?}"))),
        };
        Ok(vec![concat_derived_string(&prefix, value, &suffix, digits)?])
    });
    r.add(m, "read_derived_string", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_READ_SNAPSHOT, 1)])?;
        let s = pop(&mut args)?;
        match cx.deref(&s)? {
            Value::Struct(f) if f.len() == 2 => Ok(vec![f[0].clone()]),
            v => Err(VmError::invariant(format!("derived string: {v:?}"))),
        }
    });
    r.add(m, "read_snapshot", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V2_READ_SNAPSHOT, 1)])?;
        let t = ty_arg(ty, 0)?;
        let s = pop(&mut args)?;
        match (t, cx.deref(&s)?) {
            (Type::U64 | Type::U128, Value::Struct(f)) if f.len() == 1 => Ok(vec![f[0].clone()]),
            (Type::U64 | Type::U128, v) => Err(VmError::invariant(format!("snapshot: {v:?}"))),
            _ => Err(VmError::abort(EUNSUPPORTED_AGGREGATOR_SNAPSHOT_TYPE)),
        }
    });
}

/// `aggregator` (v1) abort codes.
pub const EADD_OVERFLOW: u64 = 0x02_0001;
pub const ESUB_UNDERFLOW: u64 = 0x02_0002;

/// Values of v1 aggregators (`0x1::aggregator::Aggregator { handle, key,
/// limit }`), by (handle, key). Only aggregators created in this store are
/// known: reading one from storage is not supported yet.
#[derive(Clone, Debug, Default)]
pub struct AggregatorV1Store {
    values: std::collections::BTreeMap<(AccountAddress, AccountAddress), u128>,
}

fn v1_fields(cx: &NativeContext<'_>, agg: &Value) -> VmResult<(AccountAddress, AccountAddress, u128)> {
    let fields = match cx.deref(agg)? {
        Value::Struct(f) if f.len() == 3 => f,
        v => return Err(VmError::invariant(format!("aggregator v1: {v:?}"))),
    };
    match (&fields[0], &fields[1], &fields[2]) {
        (Value::Address(h), Value::Address(k), Value::U128(l)) => Ok((*h, *k, *l)),
        _ => Err(VmError::invariant("aggregator v1 fields")),
    }
}

fn v1_update(cx: &mut NativeContext<'_>, mut args: Args, add: bool) -> VmResult<Vec<Value>> {
    cx.gas.charge_native(0)?;
    cx.gas.charge_aptos_native(&[(if add { V1_ADD } else { V1_SUB }, 1)])?;
    let input = match pop(&mut args)? {
        Value::U128(x) => x,
        v => return Err(VmError::invariant(format!("aggregator v1 input {v:?}"))),
    };
    let fields = v1_fields(cx, &pop(&mut args)?)?;
    v1_apply(cx, fields, input, add)?;
    Ok(vec![])
}

/// Adds `input` to (or subtracts it from) the v1 aggregator `(handle, key,
/// limit)` in the session's store: the rule both forms of `add`/`sub` share.
fn v1_apply(
    cx: &mut NativeContext<'_>,
    (h, k, limit): (AccountAddress, AccountAddress, u128),
    input: u128,
    add: bool,
) -> VmResult<()> {
    cx.with_extensions(|ext, _| {
        let v = ext
            .get_or_default::<AggregatorV1Store>()
            .values
            .get_mut(&(h, k))
            .ok_or_else(|| extension_error("aggregator v1 stored before this session: not supported yet"))?;
        *v = if add {
            v.checked_add(input).filter(|n| *n <= limit).ok_or_else(|| VmError::abort(EADD_OVERFLOW))?
        } else {
            v.checked_sub(input).ok_or_else(|| VmError::abort(ESUB_UNDERFLOW))?
        };
        Ok(())
    })
}

pub(crate) fn register_v1(r: &mut Registrar<'_>) {
    r.add("aggregator_factory", "new_aggregator", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V1_NEW_AGGREGATOR, 1)])?;
        let limit = match pop(&mut args)? {
            Value::U128(x) => x,
            v => return Err(VmError::invariant(format!("aggregator limit {v:?}"))),
        };
        // AggregatorFactory { phantom_table: Table { handle } }
        let factory = pop(&mut args)?;
        let handle = match cx.deref(&factory)? {
            Value::Struct(f) => match f.first() {
                Some(Value::Struct(t)) => match t.first() {
                    Some(Value::Address(a)) => *a,
                    _ => return Err(VmError::invariant("aggregator factory table")),
                },
                _ => return Err(VmError::invariant("aggregator factory")),
            },
            v => return Err(VmError::invariant(format!("aggregator factory {v:?}"))),
        };
        let key = cx.with_extensions(|ext, _| Ok(new_v1_key(ext, handle)))?;
        Ok(vec![Value::Struct(vec![Value::Address(handle), Value::Address(key), Value::U128(limit)])])
    });
    r.add("aggregator", "add", |cx, _, args| v1_update(cx, args, true));
    r.add("aggregator", "sub", |cx, _, args| v1_update(cx, args, false));
    r.add("aggregator", "read", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V1_READ, 1)])?;
        let (h, k, _) = v1_fields(cx, &pop(&mut args)?)?;
        cx.with_extensions(|ext, _| {
            let v = ext
                .get_or_default::<AggregatorV1Store>()
                .values
                .get(&(h, k))
                .copied()
                .ok_or_else(|| extension_error("aggregator v1 stored before this session: not supported yet"))?;
            Ok(vec![Value::U128(v)])
        })
    });
    r.add("aggregator", "destroy", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(V1_DESTROY, 1)])?;
        let (h, k, _) = v1_fields(cx, &pop(&mut args)?)?;
        cx.with_extensions(|ext, _| {
            ext.get_or_default::<AggregatorV1Store>().values.remove(&(h, k));
            Ok(vec![])
        })
    });
    register_v1_flat(r);
}

/// The u128 at field path `path` of argument `i` (a value, or the value a
/// reference points to): a v1 aggregator's limit, or an input.
fn flat_u128(call: &FlatCall<'_, '_>, i: usize, path: &[usize]) -> VmResult<u128> {
    match call.uint_at(i, path)? {
        (v, l) if matches!(l.shape, Shape::U128) => Ok(v),
        _ => Err(VmError::invariant("aggregator v1: not a u128")),
    }
}

/// (handle, key, limit) of the v1 aggregator argument 0 is or points to:
/// the flat form of [`v1_fields`].
fn flat_v1_fields(call: &FlatCall<'_, '_>) -> VmResult<(AccountAddress, AccountAddress, u128)> {
    Ok((call.arg_address_field(0, 0)?, call.arg_address_field(0, 1)?, flat_u128(call, 0, &[2])?))
}

/// The flat form of [`v1_update`].
fn flat_v1_update(call: &mut FlatCall<'_, '_>, add: bool) -> VmResult<()> {
    call.cx.gas.charge_native(0)?;
    call.cx.gas.charge_aptos_native(&[(if add { V1_ADD } else { V1_SUB }, 1)])?;
    let input = flat_u128(call, 1, &[])?;
    let fields = flat_v1_fields(call)?;
    v1_apply(&mut call.cx, fields, input, add)
}

/// The flat forms of the v1 natives (same checks, charges and store).
fn register_v1_flat(r: &mut Registrar<'_>) {
    r.add_flat("aggregator_factory", "new_aggregator", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V1_NEW_AGGREGATOR, 1)])?;
        let limit = flat_u128(call, 1, &[])?;
        // AggregatorFactory { phantom_table: Table { handle } }
        let handle = call.arg_address_at(0, &[0, 0])?;
        let key = call.cx.with_extensions(|ext, _| Ok(new_v1_key(ext, handle)))?;
        call.ret_tree(0, &Value::Struct(vec![Value::Address(handle), Value::Address(key), Value::U128(limit)]))
    });
    r.add_flat("aggregator", "add", |call| flat_v1_update(call, true));
    r.add_flat("aggregator", "sub", |call| flat_v1_update(call, false));
    r.add_flat("aggregator", "read", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V1_READ, 1)])?;
        let (h, k, _) = flat_v1_fields(call)?;
        let v = call.cx.with_extensions(|ext, _| {
            ext.get_or_default::<AggregatorV1Store>()
                .values
                .get(&(h, k))
                .copied()
                .ok_or_else(|| extension_error("aggregator v1 stored before this session: not supported yet"))
        })?;
        call.ret_u128(0, v)
    });
    r.add_flat("aggregator", "destroy", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(V1_DESTROY, 1)])?;
        let (h, k, _) = flat_v1_fields(call)?;
        call.cx.with_extensions(|ext, _| {
            ext.get_or_default::<AggregatorV1Store>().values.remove(&(h, k));
            Ok(())
        })
    });
}

/// A new v1 aggregator of table `handle` in the session's store, at 0: its
/// key, `sha3_256(session hash || aggregators so far, u32 big endian)`.
fn new_v1_key(ext: &mut movejit_runtime::natives::NativeExtensions, handle: AccountAddress) -> AccountAddress {
    use sha3::Digest;
    let seed = crate::transaction_context::context(ext).session_hash;
    let store = ext.get_or_default::<AggregatorV1Store>();
    let mut d = sha3::Sha3_256::new();
    d.update(seed);
    d.update((store.values.len() as u32).to_be_bytes());
    let key = AccountAddress(d.finalize().into());
    store.values.insert((handle, key), 0);
    key
}
