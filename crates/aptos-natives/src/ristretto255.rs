//! `0x1::ristretto255`: scalars (32 canonical little-endian bytes, passed
//! by value) and points (handles into a per-session [`RistrettoPoints`]
//! store, as Aptos keeps them), over the curve25519-dalek-ng fork Aptos's
//! natives use.
//!
//! The store lives in the session's [`NativeExtensions`](movejit_runtime::natives::NativeExtensions)
//! and is emptied when a transaction starts ([`crate::run_transaction`]),
//! as Aptos empties it when a session starts: a `RistrettoPoint` value only
//! has `drop`, so no handle outlives its transaction. Abort codes are
//! Aptos's: an unknown handle `E_INVALID_POINT_HANDLE`, the same handle for
//! both operands of an in-place operation `E_POINT_DUPLICATE_HANDLE`, a
//! store of 10,000 points `E_TOO_MANY_POINTS_CREATED`. Scalars that are not
//! 32 canonical bytes are invariant violations (the Move wrappers only pass
//! canonical ones).

use crate::args::{pop, pop_u64, Args, Registrar};
use curve25519_dalek_ng::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek_ng::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek_ng::scalar::Scalar;
use curve25519_dalek_ng::traits::{Identity, VartimeMultiscalarMul};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{StatusCode, Value, VmError, VmResult};
use sha2::Digest;

/// Points a session may create.
pub const NUM_POINTS_LIMIT: usize = 10_000;
/// `error::resource_exhausted(4)`.
pub const E_TOO_MANY_POINTS_CREATED: u64 = 0x09_0004;
/// `error::internal(1)`.
pub const E_INVALID_POINT_HANDLE: u64 = 0x0A_0001;
/// `error::internal(3)`.
pub const E_POINT_DUPLICATE_HANDLE: u64 = 0x0A_0003;

/// The points of a session; a Move `RistrettoPoint { handle }` indexes it.
#[derive(Default)]
pub struct RistrettoPoints {
    points: Vec<RistrettoPoint>,
}

impl RistrettoPoints {
    pub(crate) fn get(&self, handle: u64) -> VmResult<&RistrettoPoint> {
        usize::try_from(handle)
            .ok()
            .and_then(|i| self.points.get(i))
            .ok_or_else(|| VmError::abort(E_INVALID_POINT_HANDLE))
    }
    fn get_mut(&mut self, handle: u64) -> VmResult<&mut RistrettoPoint> {
        usize::try_from(handle)
            .ok()
            .and_then(|i| self.points.get_mut(i))
            .ok_or_else(|| VmError::abort(E_INVALID_POINT_HANDLE))
    }
    /// Adds `p`, returning its handle.
    fn add(&mut self, p: RistrettoPoint) -> VmResult<Value> {
        if self.points.len() >= NUM_POINTS_LIMIT {
            return Err(VmError::abort(E_TOO_MANY_POINTS_CREATED));
        }
        self.points.push(p);
        Ok(Value::U64(self.points.len() as u64 - 1))
    }
    /// Number of points created so far.
    pub fn len(&self) -> usize {
        self.points.len()
    }
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// Runs `f` on the session's point store.
pub(crate) fn with_points<R>(
    cx: &mut NativeContext<'_>,
    f: impl FnOnce(&mut RistrettoPoints) -> VmResult<R>,
) -> VmResult<R> {
    cx.with_extensions(|ext, _| f(ext.get_or_default::<RistrettoPoints>()))
}

fn bytes(args: &mut Args) -> VmResult<Vec<u8>> {
    Ok(pop(args)?.to_bytes()?)
}

fn fixed<const N: usize>(b: Vec<u8>) -> VmResult<[u8; N]> {
    <[u8; N]>::try_from(b)
        .map_err(|_| VmError::new(StatusCode::INTERNAL_TYPE_ERROR).with_message("ristretto255: wrong byte length"))
}

/// A scalar the Move side vouches for: 32 canonical bytes.
fn scalar_of(b: Vec<u8>) -> VmResult<Scalar> {
    let s = Scalar::from_bits(fixed::<32>(b)?);
    if !s.is_canonical() {
        return Err(VmError::invariant("ristretto255: non-canonical scalar"));
    }
    Ok(s)
}

fn pop_scalar(args: &mut Args) -> VmResult<Scalar> {
    scalar_of(bytes(args)?)
}

/// `aptos_framework.ristretto255.<name>`.
const fn price(name: &str) -> P {
    P::named(name)
}
const POINT_IDENTITY: P = price("aptos_framework.ristretto255.point_identity");
const POINT_DECOMPRESS: P = price("aptos_framework.ristretto255.point_decompress");
const POINT_CLONE: P = price("aptos_framework.ristretto255.point_clone");
const POINT_COMPRESS: P = price("aptos_framework.ristretto255.point_compress");
const POINT_MUL: P = price("aptos_framework.ristretto255.point_mul");
const POINT_EQUALS: P = price("aptos_framework.ristretto255.point_equals");
const POINT_NEG: P = price("aptos_framework.ristretto255.point_neg");
const POINT_ADD: P = price("aptos_framework.ristretto255.point_add");
const POINT_SUB: P = price("aptos_framework.ristretto255.point_sub");
const BASEPOINT_MUL: P = price("aptos_framework.ristretto255.basepoint_mul");
const BASEPOINT_DOUBLE_MUL: P = price("aptos_framework.ristretto255.basepoint_double_mul");
const POINT_FROM_64_UNIFORM_BYTES: P = price("aptos_framework.ristretto255.point_from_64_uniform_bytes");
const POINT_DOUBLE_MUL: P = price("aptos_framework.ristretto255.point_double_mul");
const POINT_PARSE_ARG: P = price("aptos_framework.ristretto255.point_parse_arg");
const SCALAR_PARSE_ARG: P = price("aptos_framework.ristretto255.scalar_parse_arg");
const SHA512_PER_HASH: P = price("aptos_framework.ristretto255.scalar_sha512_per_hash");
const SHA512_PER_BYTE: P = price("aptos_framework.ristretto255.scalar_sha512_per_byte");
const SCALAR_IS_CANONICAL: P = price("aptos_framework.ristretto255.scalar_is_canonical");
const SCALAR_INVERT: P = price("aptos_framework.ristretto255.scalar_invert");
const SCALAR_UNIFORM_FROM_64_BYTES: P = price("aptos_framework.ristretto255.scalar_uniform_from_64_bytes");
const SCALAR_MUL: P = price("aptos_framework.ristretto255.scalar_mul");
const SCALAR_ADD: P = price("aptos_framework.ristretto255.scalar_add");
const SCALAR_SUB: P = price("aptos_framework.ristretto255.scalar_sub");
const SCALAR_NEG: P = price("aptos_framework.ristretto255.scalar_neg");
const SCALAR_FROM_U64: P = price("aptos_framework.ristretto255.scalar_from_u64");
const SCALAR_FROM_U128: P = price("aptos_framework.ristretto255.scalar_from_u128");
const SCALAR_REDUCED_FROM_32_BYTES: P = price("aptos_framework.ristretto255.scalar_reduced_from_32_bytes");

/// Aptos's price of a multi-scalar multiplication of `n` points: parsing
/// each point and scalar, and `n / floor(log2(n + 1))` point
/// multiplications (Pippenger's speed-up).
fn multi_scalar_mul_terms(n: usize) -> [(P, u64); 3] {
    let log2 = (usize::BITS - (n + 1).leading_zeros() - 1) as usize;
    let muls = n.checked_div(log2).unwrap_or(0) as u64;
    [(POINT_PARSE_ARG, n as u64), (SCALAR_PARSE_ARG, n as u64), (POINT_MUL, muls)]
}

fn scalar_value(s: Scalar) -> Value {
    Value::from_bytes(s.as_bytes())
}

/// The handle of a `RistrettoPoint { handle: u64 }` value.
pub(crate) fn handle_of(point: &Value) -> VmResult<u64> {
    match point {
        Value::Struct(f) if f.len() == 1 => Ok(f[0].as_u64()?),
        v => Err(VmError::invariant(format!("ristretto255: not a RistrettoPoint: {v:?}"))),
    }
}

/// The handle of a `&RistrettoPoint` argument.
fn pop_point_ref(cx: &NativeContext<'_>, args: &mut Args) -> VmResult<u64> {
    let r = pop(args)?;
    handle_of(cx.deref(&r)?)
}

/// `sha2_512(input)`.
fn sha512(input: &[u8]) -> [u8; 64] {
    sha2::Sha512::digest(input).into()
}

/// A binary point operation, into a new point or in place into `a`.
fn binary_point_op(
    r: &mut Registrar<'_>,
    name: &str,
    price: P,
    op: fn(&RistrettoPoint, &RistrettoPoint) -> RistrettoPoint,
) {
    r.add("ristretto255", name, move |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(price, 1)])?;
        let in_place = pop(&mut args)?.as_bool()?;
        let b = pop_point_ref(cx, &mut args)?;
        let a = pop_point_ref(cx, &mut args)?;
        with_points(cx, |points| {
            if !in_place {
                let p = op(points.get(a)?, points.get(b)?);
                return points.add(p);
            }
            if a == b {
                return Err(VmError::abort(E_POINT_DUPLICATE_HANDLE));
            }
            let p = op(points.get(a)?, points.get(b)?);
            *points.get_mut(a)? = p;
            Ok(Value::U64(a))
        })
        .map(|v| vec![v])
    });
}

/// A native computing one scalar from its (popped) byte arguments.
/// `price`: its Aptos price, charged first.
fn scalar_native(r: &mut Registrar<'_>, name: &str, price: P, f: fn(&mut Args) -> VmResult<Scalar>) {
    r.add("ristretto255", name, move |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(price, 1)])?;
        Ok(vec![scalar_value(f(&mut args)?)])
    });
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    register_points(r);
    register_scalars(r);
}

fn register_points(r: &mut Registrar<'_>) {
    r.add("ristretto255", "point_identity_internal", |cx, _, _| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_IDENTITY, 1)])?;
        Ok(vec![with_points(cx, |p| p.add(RistrettoPoint::identity()))?])
    });
    r.add("ristretto255", "point_is_canonical_internal", |cx, _, mut args: Args| {
        let b = bytes(&mut args)?;
        cx.gas.charge_native(b.len())?;
        cx.gas.charge_aptos_native(&[(POINT_DECOMPRESS, 1)])?;
        Ok(vec![Value::Bool(decompress(b).is_some())])
    });
    r.add("ristretto255", "point_decompress_internal", |cx, _, mut args: Args| {
        let b = bytes(&mut args)?;
        cx.gas.charge_native(b.len())?;
        cx.gas.charge_aptos_native(&[(POINT_DECOMPRESS, 1)])?;
        match decompress(b) {
            Some(p) => Ok(vec![with_points(cx, |points| points.add(p))?, Value::Bool(true)]),
            None => Ok(vec![Value::U64(u64::MAX), Value::Bool(false)]),
        }
    });
    r.add("ristretto255", "point_clone_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_CLONE, 1)])?;
        let h = pop_u64(&mut args)?;
        Ok(vec![with_points(cx, |points| {
            let p = *points.get(h)?;
            points.add(p)
        })?])
    });
    r.add("ristretto255", "point_compress_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_COMPRESS, 1)])?;
        let h = pop_point_ref(cx, &mut args)?;
        let c = with_points(cx, |points| Ok(points.get(h)?.compress()))?;
        Ok(vec![Value::from_bytes(c.as_bytes())])
    });
    r.add("ristretto255", "point_mul_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_MUL, 1)])?;
        let in_place = pop(&mut args)?.as_bool()?;
        let s = pop_scalar(&mut args)?;
        let h = pop_point_ref(cx, &mut args)?;
        Ok(vec![with_points(cx, |points| {
            if in_place {
                *points.get_mut(h)? *= s;
                Ok(Value::U64(h))
            } else {
                let p = points.get(h)? * s;
                points.add(p)
            }
        })?])
    });
    r.add("ristretto255", "point_equals", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_EQUALS, 1)])?;
        let b = pop_point_ref(cx, &mut args)?;
        let a = pop_point_ref(cx, &mut args)?;
        Ok(vec![Value::Bool(with_points(cx, |points| Ok(points.get(a)? == points.get(b)?))?)])
    });
    r.add("ristretto255", "point_neg_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_NEG, 1)])?;
        let in_place = pop(&mut args)?.as_bool()?;
        let h = pop_point_ref(cx, &mut args)?;
        Ok(vec![with_points(cx, |points| {
            let p = -points.get(h)?;
            if in_place {
                *points.get_mut(h)? = p;
                Ok(Value::U64(h))
            } else {
                points.add(p)
            }
        })?])
    });
    binary_point_op(r, "point_add_internal", POINT_ADD, |a, b| a + b);
    binary_point_op(r, "point_sub_internal", POINT_SUB, |a, b| a - b);
    r.add("ristretto255", "basepoint_mul_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(BASEPOINT_MUL, 1)])?;
        let s = pop_scalar(&mut args)?;
        Ok(vec![with_points(cx, |points| points.add(&RISTRETTO_BASEPOINT_TABLE * &s))?])
    });
    // a * A + b * B
    r.add("ristretto255", "basepoint_double_mul_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(BASEPOINT_DOUBLE_MUL, 1)])?;
        let b = pop_scalar(&mut args)?;
        let h = pop_point_ref(cx, &mut args)?;
        let a = pop_scalar(&mut args)?;
        Ok(vec![with_points(cx, |points| {
            let p = RistrettoPoint::vartime_double_scalar_mul_basepoint(&a, points.get(h)?, &b);
            points.add(p)
        })?])
    });
    r.add("ristretto255", "new_point_from_sha512_internal", |cx, _, mut args: Args| {
        let b = bytes(&mut args)?;
        cx.gas.charge_native(b.len())?;
        cx.gas.charge_aptos_native(&[
            (POINT_FROM_64_UNIFORM_BYTES, 1),
            (SHA512_PER_HASH, 1),
            (SHA512_PER_BYTE, b.len() as u64),
        ])?;
        let p = RistrettoPoint::from_uniform_bytes(&sha512(&b));
        Ok(vec![with_points(cx, |points| points.add(p))?])
    });
    r.add("ristretto255", "new_point_from_64_uniform_bytes_internal", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(POINT_FROM_64_UNIFORM_BYTES, 1)])?;
        let b = fixed::<64>(bytes(&mut args)?)?;
        Ok(vec![with_points(cx, |points| points.add(RistrettoPoint::from_uniform_bytes(&b)))?])
    });
    // (handle1, handle2, scalar1, scalar2): scalar1 * P1 + scalar2 * P2.
    for name in ["double_scalar_mul_internal", "point_double_mul_internal"] {
        r.add("ristretto255", name, |cx, _, mut args: Args| {
            cx.gas.charge_native(0)?;
            cx.gas.charge_aptos_native(&[(POINT_DOUBLE_MUL, 1)])?;
            let s2 = pop_scalar(&mut args)?;
            let s1 = pop_scalar(&mut args)?;
            let h2 = pop_u64(&mut args)?;
            let h1 = pop_u64(&mut args)?;
            Ok(vec![with_points(cx, |points| {
                let p = RistrettoPoint::vartime_multiscalar_mul([s1, s2], [points.get(h1)?, points.get(h2)?]);
                points.add(p)
            })?])
        });
    }
    // (&vector<RistrettoPoint>, &vector<Scalar>), as many points as scalars.
    r.add("ristretto255", "multi_scalar_mul_internal", |cx, _, mut args: Args| {
        let scalars_ref = pop(&mut args)?;
        let points_ref = pop(&mut args)?;
        // Charged before the elements are parsed.
        let n = match cx.deref(&scalars_ref)? {
            Value::Vector(s) => s.len(),
            _ => return Err(VmError::invariant("ristretto255: multi_scalar_mul of non-vectors")),
        };
        cx.gas.charge_aptos_native(&multi_scalar_mul_terms(n))?;
        let (Value::Vector(scalars), Value::Vector(points)) = (cx.deref(&scalars_ref)?, cx.deref(&points_ref)?) else {
            return Err(VmError::invariant("ristretto255: multi_scalar_mul of non-vectors"));
        };
        if points.len() < scalars.len() {
            return Err(VmError::invariant("ristretto255: fewer points than scalars"));
        }
        let scalars = scalars
            .iter()
            .map(|s| match s {
                Value::Struct(f) if f.len() == 1 => scalar_of(f[0].to_bytes()?),
                v => Err(VmError::invariant(format!("ristretto255: not a Scalar: {v:?}"))),
            })
            .collect::<VmResult<Vec<_>>>()?;
        let handles = points[..scalars.len()].iter().map(handle_of).collect::<VmResult<Vec<_>>>()?;
        cx.gas.charge_native(64 * scalars.len())?;
        Ok(vec![with_points(cx, |store| {
            let ps = handles.iter().map(|&h| store.get(h)).collect::<VmResult<Vec<_>>>()?;
            let p = RistrettoPoint::vartime_multiscalar_mul(&scalars, ps);
            store.add(p)
        })?])
    });
}

/// A canonical encoding's point (`None` for anything else, including lengths other than 32).
fn decompress(b: Vec<u8>) -> Option<RistrettoPoint> {
    let b = <[u8; 32]>::try_from(b).ok()?;
    CompressedRistretto(b).decompress()
}

fn register_scalars(r: &mut Registrar<'_>) {
    r.add("ristretto255", "scalar_is_canonical_internal", |cx, _, mut args: Args| {
        let b = bytes(&mut args)?;
        cx.gas.charge_native(b.len())?;
        cx.gas.charge_aptos_native(&[(SCALAR_IS_CANONICAL, 1)])?;
        let ok = <[u8; 32]>::try_from(b).ok().and_then(Scalar::from_canonical_bytes).is_some();
        Ok(vec![Value::Bool(ok)])
    });
    scalar_native(r, "scalar_invert_internal", SCALAR_INVERT, |a| Ok(pop_scalar(a)?.invert()));
    r.add("ristretto255", "scalar_from_sha512_internal", |cx, _, mut args: Args| {
        let b = bytes(&mut args)?;
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[
            (SCALAR_UNIFORM_FROM_64_BYTES, 1),
            (SHA512_PER_HASH, 1),
            (SHA512_PER_BYTE, b.len() as u64),
        ])?;
        Ok(vec![scalar_value(Scalar::from_bytes_mod_order_wide(&sha512(&b)))])
    });
    scalar_native(r, "scalar_mul_internal", SCALAR_MUL, |a| {
        let y = pop_scalar(a)?;
        Ok(pop_scalar(a)? * y)
    });
    scalar_native(r, "scalar_add_internal", SCALAR_ADD, |a| {
        let y = pop_scalar(a)?;
        Ok(pop_scalar(a)? + y)
    });
    scalar_native(r, "scalar_sub_internal", SCALAR_SUB, |a| {
        let y = pop_scalar(a)?;
        Ok(pop_scalar(a)? - y)
    });
    scalar_native(r, "scalar_neg_internal", SCALAR_NEG, |a| Ok(-pop_scalar(a)?));
    scalar_native(r, "scalar_from_u64_internal", SCALAR_FROM_U64, |a| Ok(Scalar::from(pop_u64(a)?)));
    scalar_native(r, "scalar_from_u128_internal", SCALAR_FROM_U128, |a| match pop(a)? {
        Value::U128(x) => Ok(Scalar::from(x)),
        v => Err(VmError::invariant(format!("ristretto255: expected u128, got {v:?}"))),
    });
    scalar_native(r, "scalar_reduced_from_32_bytes_internal", SCALAR_REDUCED_FROM_32_BYTES, |a| {
        Ok(Scalar::from_bytes_mod_order(fixed::<32>(bytes(a)?)?))
    });
    scalar_native(r, "scalar_uniform_from_64_bytes_internal", SCALAR_UNIFORM_FROM_64_BYTES, |a| {
        Ok(Scalar::from_bytes_mod_order_wide(&fixed::<64>(bytes(a)?)?))
    });
}
