//! The `extern "C"` entry points of the helper table
//! (`crate::helpers::HELPERS`) over flat memory. Each turns its raw
//! pointers into slices (the only unsafe step) and calls the safe operation
//! the interpreter uses too; an error is recorded in the [`ExecContext`] and
//! the status word 1 returned (0 = continue).
//!
//! Every shim's contract (its `# Safety`): `ctx` points to a live context;
//! `*const FlatLayout` arguments point to layouts kept alive by the engine's
//! [`FlatLayouts`](super::FlatLayouts) cache; value pointers point to live,
//! suitably aligned slots of the layout's size holding values of that layout
//! (or, for destinations, holding no live value), not aliased by another
//! argument.

#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::context::ExecContext;
use super::layout::FlatLayout;
use super::raw::{slice, slice_mut};
use super::{value, vec};
use crate::arith::{self, BinOp, CmpOp};
use crate::error::{VmError, VmResult};
use crate::gas::aptos::{AptosMeter, AptosPricing};
use crate::scalar::ScalarKind;
use crate::values::Value;
use ethnum::{I256, U256};

fn status(ctx: *mut ExecContext, r: VmResult<()>) -> u32 {
    match r {
        Ok(()) => 0,
        // SAFETY: shim contract: `ctx` is live and not otherwise borrowed.
        Err(e) => match unsafe { ctx.as_mut() } {
            Some(c) => c.fail(&e),
            None => 1,
        },
    }
}

fn max_len(ctx: *mut ExecContext) -> u64 {
    // SAFETY: shim contract.
    unsafe { ctx.as_ref() }.map_or(0, |c| c.max_vector_len)
}

fn layout<'a>(l: *const FlatLayout) -> &'a FlatLayout {
    // SAFETY: shim contract: the cache keeps the layout alive and immutable.
    unsafe { &*l }
}

/// `*dst = copy(*src)`; fails with `MEMORY_LIMIT_EXCEEDED` (nothing live
/// in `dst`) when the copy exceeds the memory budget.
pub unsafe extern "C" fn value_copy(ctx: *mut ExecContext, l: *const FlatLayout, dst: *mut u8, src: *const u8) -> u32 {
    let l = layout(l);
    // SAFETY: shim contract (distinct slots of `l.size` bytes).
    let (d, s) = unsafe { (slice_mut(dst, l.size as usize), slice(src, l.size as usize)) };
    status(ctx, value::copy_into(l, s, d))
}

/// Drops the value at `slot`.
pub unsafe extern "C" fn value_drop(_ctx: *mut ExecContext, l: *const FlatLayout, slot: *mut u8) -> u32 {
    let l = layout(l);
    // SAFETY: shim contract.
    value::drop_in_place(l, unsafe { slice_mut(slot, l.size as usize) });
    0
}

/// `*a == *b` as 0 or 1.
pub unsafe extern "C" fn value_eq(_ctx: *mut ExecContext, l: *const FlatLayout, a: *const u8, b: *const u8) -> u8 {
    let l = layout(l);
    // SAFETY: shim contract (shared reads may alias).
    let (x, y) = unsafe { (slice(a, l.size as usize), slice(b, l.size as usize)) };
    value::equal(l, x, y) as u8
}

/// `VecPack`: `n` elements at `src` (moved) into a new vector at `dst`.
pub unsafe extern "C" fn vec_pack(
    ctx: *mut ExecContext,
    e: *const FlatLayout,
    dst: *mut u8,
    src: *const u8,
    n: u64,
) -> u32 {
    let e = layout(e);
    let max = max_len(ctx);
    let bytes = if n > max { 0 } else { n as usize * e.size as usize };
    // SAFETY: shim contract; `src` holds `n` elements when n is in range.
    let (d, s) = unsafe { (slice_mut(dst, 8), slice(src, bytes)) };
    status(ctx, vec::pack(e, d, s, n, max))
}

/// Aptos's memory meter (`ExecContext::aptos_meter`) uses `amount`
/// abstract units: `MEMORY_LIMIT_EXCEEDED` past the quota, as the
/// interpreter's meter (one formula, `MemoryAlgebra::use_memory`).
pub unsafe extern "C" fn memory_use(ctx: *mut ExecContext, amount: u64) -> u32 {
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    // SAFETY: a nonzero `aptos_meter` is the address of the live meter,
    // which nothing else touches while compiled code runs.
    match unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }.map(|m| m.memory.use_memory(amount)) {
        Some(Err(s)) => c.fail(&VmError::new(s)),
        _ => 0,
    }
}

/// Aptos's memory meter releases the heap size of the value of layout `l`
/// at `v`, a vector or closure local of a returning frame (`ret`), unless
/// the slot is all zero: moved out or empty, as the interpreter tells it
/// (`AbstractSizes::bytes_tell_held`).
/// Sizes are the built-in schedule's, the only one compiled code charges.
pub unsafe extern "C" fn memory_release_value(ctx: *mut ExecContext, l: *const FlatLayout, v: *const u8) -> u32 {
    // SAFETY: shim contract.
    let Some(c) = (unsafe { ctx.as_ref() }) else { return 1 };
    // SAFETY: as in `memory_use`.
    let Some(m) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else { return 0 };
    let l = layout(l);
    // SAFETY: shim contract: `v` is a live slot of layout `l`.
    let bytes = unsafe { slice(v, l.size as usize) };
    if bytes.iter().any(|b| *b != 0) {
        m.memory.release_memory(AptosPricing::v50().sizes.heap(l, bytes));
    }
    0
}

/// Aptos's memory meter releases the heap size of the live value of layout
/// `l` at `v` (a returning frame's local that holds one, the value `pop`
/// pops or `write_ref` overwrites), whatever its bytes (compare
/// [`memory_release_value`]).
pub unsafe extern "C" fn memory_release_heap(ctx: *mut ExecContext, l: *const FlatLayout, v: *const u8) -> u32 {
    // SAFETY: shim contract.
    let Some(c) = (unsafe { ctx.as_ref() }) else { return 1 };
    // SAFETY: as in `memory_use`.
    let Some(m) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else { return 0 };
    let l = layout(l);
    // SAFETY: shim contract: `v` is a live slot of layout `l`.
    let bytes = unsafe { slice(v, l.size as usize) };
    m.memory.release_memory(AptosPricing::v50().sizes.heap(l, bytes));
    0
}

/// `VecLen` of the vector slot at `v`.
pub unsafe extern "C" fn vec_len(_ctx: *mut ExecContext, v: *const u8) -> u64 {
    // SAFETY: shim contract.
    vec::len(unsafe { slice(v, 8) })
}

/// `VecImmBorrow` / `VecMutBorrow`: writes the element's address to `out`.
pub unsafe extern "C" fn vec_borrow(
    ctx: *mut ExecContext,
    e: *const FlatLayout,
    v: *mut u8,
    i: u64,
    out: *mut *mut u8,
) -> u32 {
    // SAFETY: shim contract.
    let r = vec::borrow(layout(e), unsafe { slice_mut(v, 8) }, i).map(|p| {
        // SAFETY: `out` is a writable pointer slot (shim contract).
        unsafe { out.write(p) }
    });
    status(ctx, r)
}

/// `VecPushBack`: moves the element at `src` to the end.
pub unsafe extern "C" fn vec_push_back(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, src: *const u8) -> u32 {
    let e = layout(e);
    // SAFETY: shim contract.
    let (vs, s) = unsafe { (slice_mut(v, 8), slice(src, e.size as usize)) };
    status(ctx, vec::push_back(e, vs, s, max_len(ctx)))
}

/// `VecPopBack`: moves the last element to `dst`.
pub unsafe extern "C" fn vec_pop_back(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, dst: *mut u8) -> u32 {
    let e = layout(e);
    // SAFETY: shim contract.
    let (vs, d) = unsafe { (slice_mut(v, 8), slice_mut(dst, e.size as usize)) };
    status(ctx, vec::pop_back(e, vs, d))
}

/// `VecUnpack`: consumes the vector at `v`, moving its `n` elements to `dst`.
pub unsafe extern "C" fn vec_unpack(
    ctx: *mut ExecContext,
    e: *const FlatLayout,
    v: *mut u8,
    n: u64,
    dst: *mut u8,
) -> u32 {
    let e = layout(e);
    // SAFETY: shim contract; `dst` has room for `n` elements, and the
    // slice is only sized once the length matched.
    let vs = unsafe { slice_mut(v, 8) };
    let bytes = if vec::len(vs) == n { n as usize * e.size as usize } else { 0 };
    // SAFETY: as above.
    let d = unsafe { slice_mut(dst, bytes) };
    status(ctx, vec::unpack(e, vs, n, d))
}

/// `VecSwap` / `vector::swap`.
pub unsafe extern "C" fn vec_swap(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8, i: u64, j: u64) -> u32 {
    // SAFETY: shim contract.
    status(ctx, vec::swap(layout(e), unsafe { slice_mut(v, 8) }, i, j))
}

/// `vector::destroy_empty`.
pub unsafe extern "C" fn vec_destroy_empty(ctx: *mut ExecContext, e: *const FlatLayout, v: *mut u8) -> u32 {
    // SAFETY: shim contract.
    status(ctx, vec::destroy_empty(layout(e), unsafe { slice_mut(v, 8) }))
}

/// `vector::move_range(from, removal, len, to, insert)`.
pub unsafe extern "C" fn vec_move_range(
    ctx: *mut ExecContext,
    e: *const FlatLayout,
    from: *mut u8,
    removal: u64,
    len: u64,
    to: *mut u8,
    insert: u64,
) -> u32 {
    // SAFETY: shim contract (`from` and `to` are distinct `&mut` targets).
    let (f, t) = unsafe { (slice_mut(from, 8), slice_mut(to, 8)) };
    status(ctx, vec::move_range(layout(e), f, removal, len, t, insert, max_len(ctx)))
}

/// The BCS of the value at `p` (for hosts and tests holding raw slots).
///
/// # Safety
/// `p` points to a live value of layout `l`.
pub unsafe fn serialize_at(l: &FlatLayout, p: *const u8) -> VmResult<Vec<u8>> {
    let mut out = Vec::new();
    // SAFETY: the caller's contract.
    super::bcs::serialize_into(&mut out, l, unsafe { slice(p, l.size as usize) })?;
    Ok(out)
}

// ---- integers: (ctx, dst, operands..., code) over flat integer slots ----

/// Integer kind codes (low nibble of `code`): [`ScalarKind`] codes, as
/// constants so that they can be matched on.
pub mod kind {
    use crate::scalar::ScalarKind;
    pub const U8: u8 = ScalarKind::U8.code();
    pub const U16: u8 = ScalarKind::U16.code();
    pub const U32: u8 = ScalarKind::U32.code();
    pub const U64: u8 = ScalarKind::U64.code();
    pub const U128: u8 = ScalarKind::U128.code();
    pub const U256: u8 = ScalarKind::U256.code();
    pub const I8: u8 = ScalarKind::I8.code();
    pub const I16: u8 = ScalarKind::I16.code();
    pub const I32: u8 = ScalarKind::I32.code();
    pub const I64: u8 = ScalarKind::I64.code();
    pub const I128: u8 = ScalarKind::I128.code();
    pub const I256: u8 = ScalarKind::I256.code();
}

/// Width in bytes of an integer kind code.
pub fn kind_width(k: u8) -> Option<usize> {
    ScalarKind::integer_from_code(k).map(ScalarKind::bytes)
}

/// The integer of kind `k` in `b` (its flat, little-endian bytes).
pub fn load_int(k: u8, b: &[u8]) -> Option<Value> {
    let a = |n: usize| b.get(..n);
    Some(match k {
        kind::U8 => Value::U8(*b.first()?),
        kind::U16 => Value::U16(u16::from_le_bytes(a(2)?.try_into().ok()?)),
        kind::U32 => Value::U32(u32::from_le_bytes(a(4)?.try_into().ok()?)),
        kind::U64 => Value::U64(u64::from_le_bytes(a(8)?.try_into().ok()?)),
        kind::U128 => Value::U128(u128::from_le_bytes(a(16)?.try_into().ok()?)),
        kind::U256 => Value::U256(U256::from_le_bytes(a(32)?.try_into().ok()?)),
        kind::I8 => Value::I8(*b.first()? as i8),
        kind::I16 => Value::I16(i16::from_le_bytes(a(2)?.try_into().ok()?)),
        kind::I32 => Value::I32(i32::from_le_bytes(a(4)?.try_into().ok()?)),
        kind::I64 => Value::I64(i64::from_le_bytes(a(8)?.try_into().ok()?)),
        kind::I128 => Value::I128(i128::from_le_bytes(a(16)?.try_into().ok()?)),
        kind::I256 => Value::I256(I256::from_le_bytes(a(32)?.try_into().ok()?)),
        _ => return None,
    })
}

/// Stores an integer (or bool) value into `out` (its flat bytes).
pub fn store_int(v: &Value, out: &mut [u8]) -> VmResult<()> {
    // No allocation: compiled code reaches this on every wide-integer
    // helper call.
    let mut buf = [0u8; 32];
    let n = match v {
        Value::Bool(x) => put(&mut buf, &[*x as u8]),
        Value::U8(x) => put(&mut buf, &[*x]),
        Value::U16(x) => put(&mut buf, &x.to_le_bytes()),
        Value::U32(x) => put(&mut buf, &x.to_le_bytes()),
        Value::U64(x) => put(&mut buf, &x.to_le_bytes()),
        Value::U128(x) => put(&mut buf, &x.to_le_bytes()),
        Value::U256(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I8(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I16(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I32(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I64(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I128(x) => put(&mut buf, &x.to_le_bytes()),
        Value::I256(x) => put(&mut buf, &x.to_le_bytes()),
        v => return Err(VmError::invariant(format!("store_int of {v:?}"))),
    };
    out.get_mut(..n).ok_or_else(|| VmError::invariant("store_int slot"))?.copy_from_slice(&buf[..n]);
    Ok(())
}

fn put(buf: &mut [u8; 32], b: &[u8]) -> usize {
    buf[..b.len()].copy_from_slice(b);
    b.len()
}

fn bad_code() -> VmError {
    VmError::invariant("bad integer helper code")
}

/// Reads the operand of kind `k` at `p`.
///
/// # Safety
/// `p` points to a readable slot of the kind's width.
unsafe fn operand(k: u8, p: *const u8) -> VmResult<Value> {
    // SAFETY (every read): the caller's contract; slots may be unaligned.
    unsafe {
        Ok(match k {
            kind::U8 => Value::U8(p.read()),
            kind::U16 => Value::U16(u16::from_le_bytes(rd(p))),
            kind::U32 => Value::U32(u32::from_le_bytes(rd(p))),
            kind::U64 => Value::U64(u64::from_le_bytes(rd(p))),
            kind::U128 => Value::U128(u128::from_le_bytes(rd(p))),
            kind::U256 => Value::U256(U256::from_le_bytes(rd(p))),
            kind::I8 => Value::I8(p.read() as i8),
            kind::I16 => Value::I16(i16::from_le_bytes(rd(p))),
            kind::I32 => Value::I32(i32::from_le_bytes(rd(p))),
            kind::I64 => Value::I64(i64::from_le_bytes(rd(p))),
            kind::I128 => Value::I128(i128::from_le_bytes(rd(p))),
            kind::I256 => Value::I256(I256::from_le_bytes(rd(p))),
            _ => return Err(bad_code()),
        })
    }
}

/// `N` bytes at `p` (no alignment needed).
///
/// # Safety
/// `p` points to `N` readable bytes.
unsafe fn rd<const N: usize>(p: *const u8) -> [u8; N] {
    // SAFETY: the caller's contract.
    unsafe { (p as *const [u8; N]).read_unaligned() }
}

/// Writes `b` at `p` (no alignment needed).
///
/// # Safety
/// `p` points to `N` writable bytes.
unsafe fn wr<const N: usize>(p: *mut u8, b: [u8; N]) {
    // SAFETY: the caller's contract.
    unsafe { (p as *mut [u8; N]).write_unaligned(b) }
}

/// Writes `v` at `p`.
///
/// # Safety
/// `p` points to a writable slot wide enough for `v`.
unsafe fn result(v: VmResult<Value>, p: *mut u8) -> VmResult<()> {
    // SAFETY (every write): the caller's contract; fixed-size stores.
    unsafe {
        match v? {
            Value::Bool(x) => p.write(x as u8),
            Value::U8(x) => p.write(x),
            Value::U16(x) => wr(p, x.to_le_bytes()),
            Value::U32(x) => wr(p, x.to_le_bytes()),
            Value::U64(x) => wr(p, x.to_le_bytes()),
            Value::U128(x) => wr(p, x.to_le_bytes()),
            Value::U256(x) => wr(p, x.to_le_bytes()),
            Value::I8(x) => p.write(x as u8),
            Value::I16(x) => wr(p, x.to_le_bytes()),
            Value::I32(x) => wr(p, x.to_le_bytes()),
            Value::I64(x) => wr(p, x.to_le_bytes()),
            Value::I128(x) => wr(p, x.to_le_bytes()),
            Value::I256(x) => wr(p, x.to_le_bytes()),
            _ => return Err(bad_code()),
        }
    }
    Ok(())
}

/// 128/256-bit binary operations straight on the operands' bytes
/// (compiled code sends every 128-bit `*` `/` `%` and every 256-bit
/// operation here, so these skip the `Value` round trip). Returns `None`
/// when the kind is not one of them; an error writes nothing. Same checks
/// and errors as `arith::binop` (`arith::checked!`).
///
/// # Safety
/// `a`, `b` and `dst` point to slots of the kind's width.
unsafe fn wide_binop(op: BinOp, k: u8, dst: *mut u8, a: *const u8, b: *const u8) -> Option<VmResult<()>> {
    macro_rules! go {
        ($t:ty, $n:expr) => {{
            // SAFETY: the caller's contract.
            let (x, y) = unsafe { (<$t>::from_le_bytes(rd::<$n>(a)), <$t>::from_le_bytes(rd::<$n>(b))) };
            let r = (|| Ok::<_, VmError>(arith::checked!(op, x, y)))();
            Some(r.map(|r| {
                // SAFETY: the caller's contract.
                unsafe { wr::<$n>(dst, r.to_le_bytes()) }
            }))
        }};
    }
    match k {
        kind::U128 => go!(u128, 16),
        kind::U256 => go!(U256, 32),
        kind::I128 => go!(i128, 16),
        kind::I256 => go!(I256, 32),
        _ => None,
    }
}

/// `code` = kind | op << 4, op 0..7 = add, sub, mul, div, mod, or, and, xor.
pub unsafe extern "C" fn int_binop(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, b: *const u8, code: u8) -> u32 {
    let k = code & 0xf;
    let op = match code >> 4 {
        0 => BinOp::Add,
        1 => BinOp::Sub,
        2 => BinOp::Mul,
        3 => BinOp::Div,
        4 => BinOp::Mod,
        5 => BinOp::BitOr,
        6 => BinOp::BitAnd,
        7 => BinOp::Xor,
        _ => return status(ctx, Err(bad_code())),
    };
    // SAFETY: shim contract: slots of the kind's width.
    if let Some(r) = unsafe { wide_binop(op, k, dst, a, b) } {
        return status(ctx, r);
    }
    // SAFETY: shim contract: slots of the kind's width.
    let r = (|| unsafe { result(arith::binop(op, operand(k, a)?, operand(k, b)?).map_err(|e| *e), dst) })();
    status(ctx, r)
}

/// `code` = kind | op << 4, op 0..3 = lt, gt, le, ge; `*dst` = bool.
pub unsafe extern "C" fn int_cmp(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, b: *const u8, code: u8) -> u32 {
    let k = code & 0xf;
    if k == kind::U256 && code >> 4 <= 3 {
        // SAFETY: shim contract: 32-byte slots, a 1-byte destination.
        let (x, y) = unsafe { (slice(a, 32), slice(b, 32)) };
        if let (Ok(x), Ok(y)) = (<[u8; 32]>::try_from(x), <[u8; 32]>::try_from(y)) {
            let (x, y) = (U256::from_le_bytes(x), U256::from_le_bytes(y));
            let r = match code >> 4 {
                0 => x < y,
                1 => x > y,
                2 => x <= y,
                _ => x >= y,
            };
            // SAFETY: shim contract.
            unsafe { dst.write(r as u8) };
            return 0;
        }
    }
    let op = match code >> 4 {
        0 => CmpOp::Lt,
        1 => CmpOp::Gt,
        2 => CmpOp::Le,
        3 => CmpOp::Ge,
        _ => return status(ctx, Err(bad_code())),
    };
    // SAFETY: shim contract.
    let r = (|| unsafe {
        let x = arith::compare(op, &operand(k, a)?, &operand(k, b)?).map_err(|e| *e)?;
        result(Ok(Value::Bool(x)), dst)
    })();
    status(ctx, r)
}

/// `code` = kind | dir << 4 (0 = shl, 1 = shr); `amount` as u8.
pub unsafe extern "C" fn int_shift(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, amount: u8, code: u8) -> u32 {
    let k = code & 0xf;
    let left = match code >> 4 {
        0 => true,
        1 => false,
        _ => return status(ctx, Err(bad_code())),
    };
    if k == kind::U256 || k == kind::U128 {
        let w = if k == kind::U256 { 32 } else { 16 };
        if u32::from(amount) >= 8 * w as u32 {
            return status(ctx, Err(arith::shift_error(left)));
        }
        let n = u32::from(amount);
        // SAFETY: shim contract: slots of the kind's width.
        unsafe {
            if w == 32 {
                let v = U256::from_le_bytes(rd(a));
                wr(dst, (if left { v << n } else { v >> n }).to_le_bytes());
            } else {
                let v = u128::from_le_bytes(rd(a));
                wr(dst, (if left { v << n } else { v >> n }).to_le_bytes());
            }
        }
        return 0;
    }
    // SAFETY: shim contract.
    let r = (|| unsafe { result(arith::shift(left, operand(k, a)?, Value::U8(amount)).map_err(|e| *e), dst) })();
    status(ctx, r)
}

/// `code` = source kind | target kind << 4.
pub unsafe extern "C" fn int_cast(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, code: u8) -> u32 {
    let Some(to) = ScalarKind::integer_from_code(code >> 4) else {
        return status(ctx, Err(bad_code()));
    };
    // SAFETY: shim contract.
    let r = (|| unsafe { result(arith::cast(operand(code & 0xf, a)?, to).map_err(|e| *e), dst) })();
    status(ctx, r)
}

/// `*dst = -*a`; `code` = kind (signed).
pub unsafe extern "C" fn int_negate(ctx: *mut ExecContext, dst: *mut u8, a: *const u8, code: u8) -> u32 {
    // SAFETY: shim contract.
    let r = (|| unsafe { result(arith::negate(operand(code & 0xf, a)?).map_err(|e| *e), dst) })();
    status(ctx, r)
}

// ---- natives: (ctx, site, slots) through the native bridge ----

/// One call site of a native in compiled code: the native, its type
/// arguments, the layout of each parameter (a reference layout for `&` /
/// `&mut`) with whether it is `&mut`, and the result layouts.
pub struct NativeSite {
    pub native: crate::natives::NativeFunction,
    pub ty_args: Vec<crate::types::Type>,
    pub params: Vec<(std::sync::Arc<FlatLayout>, bool)>,
    pub rets: Vec<std::sync::Arc<FlatLayout>>,
    /// Under Aptos, the id of the last meter that loaded every module the
    /// layout of `bcs::to_bytes`'s type reaches (`AptosMeter::loaded_at`;
    /// `flat::host::aptos_native_fast`): that meter looks none up again.
    pub layout_loaded: std::sync::atomic::AtomicU64,
}

impl NativeSite {
    pub fn new(
        native: crate::natives::NativeFunction,
        ty_args: Vec<crate::types::Type>,
        params: Vec<(std::sync::Arc<FlatLayout>, bool)>,
        rets: Vec<std::sync::Arc<FlatLayout>>,
    ) -> Self {
        NativeSite { native, ty_args, params, rets, layout_loaded: Default::default() }
    }
}

/// What `call_native` needs from the host while compiled code runs;
/// `ExecContext::host` points to it.
pub struct NativeHost<'a> {
    pub sites: &'a [NativeSite],
    pub types: &'a dyn crate::natives::TypeInfo,
    /// The cost table when metered (natives charge their own dynamic costs
    /// against `ExecContext::gas_left`).
    pub cost: Option<&'a crate::gas::CostTable>,
    /// Native state of this execution (borrowed: the session's, or the
    /// run's own outside a session; no move per run).
    pub session: &'a mut super::native_bridge::NativeSession,
    /// The meter natives see when unmetered (made once: building a cost
    /// table per call would dominate cheap natives).
    pub unmetered: crate::gas::GasMeter,
    /// The meter natives see when metered: made at the first metered call
    /// (building one builds a cost table), restarted with the gas left at
    /// each call.
    pub metered: Option<crate::gas::GasMeter>,
    /// Under Aptos's schedule, the run's meter (`ExecContext::aptos_meter`
    /// as the run began) once a native ran through the bridge
    /// (`flat::host::aptos_native`): its contents were moved into
    /// `metered`'s Aptos meter, which the context points to until
    /// [`return_meter`](Self::return_meter) moves them back when the run
    /// ends (one move each way per run, not per native call); 0: not lent.
    pub lent_meter: u64,
}

impl NativeHost<'_> {
    /// Moves the run's Aptos meter back where it came from (see
    /// `lent_meter`) and points `ctx` at it again.
    pub fn return_meter(&mut self, ctx: &mut ExecContext) {
        if self.lent_meter == 0 {
            return;
        }
        // SAFETY: a nonzero `lent_meter` is the address of the run's meter,
        // which its owner keeps alive and untouched for the whole run
        // (`CallState::aptos_meter`); nothing borrows it now.
        let home = unsafe { &mut *(self.lent_meter as *mut AptosMeter) };
        if let Some(held) = self.metered.as_mut().and_then(|g| g.aptos_meter_mut()) {
            std::mem::swap(held, home);
        }
        ctx.aptos_meter = self.lent_meter;
        self.lent_meter = 0;
    }
}

/// Records the error at `err`: an error compiled code raises whole, known
/// when it was compiled (the engine keeps it alive with the code). Always
/// fails (1).
pub unsafe extern "C" fn fail_with(ctx: *mut ExecContext, err: *const VmError) -> u32 {
    // SAFETY: shim contract: `ctx` is live and `err` points to a live
    // `VmError` (or is null).
    match unsafe { (ctx.as_mut(), err.as_ref()) } {
        (Some(c), Some(e)) => c.fail(e),
        _ => 1,
    }
}

/// `AbortMsg` after its gas charge: consumes the message vector at `msg` and
/// records `VmError::abort_with_message(code, message, max)`. Always fails (1).
pub unsafe extern "C" fn abort_msg(ctx: *mut ExecContext, code: u64, msg: *mut u8, max: u64) -> u32 {
    // SAFETY: shim contract: `msg` is a vector<u8> slot holding a live value.
    let slot = unsafe { slice_mut(msg, 8) };
    let bytes = super::raw::vec_data(slot, 1).to_vec();
    let u8_layout = FlatLayout::from_layout(&crate::layout::Layout::Vector(Box::new(crate::layout::Layout::U8)), 2);
    if let Ok(l) = u8_layout {
        value::drop_in_place(&l, slot);
    }
    // SAFETY: shim contract.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    c.fail(&VmError::abort_with_message(code, bytes, usize::try_from(max).unwrap_or(usize::MAX)))
}

/// Calls native site `site` of the context's host. `slots` holds one
/// pointer per parameter then one per result: a value slot (consumed), for
/// a reference parameter a slot holding the target's address; result slots
/// hold no live value (a reference result receives an address). Under
/// Aptos's schedule compiled code calls `flat::host::aptos_native` instead.
pub unsafe extern "C" fn call_native(ctx: *mut ExecContext, site: u64, slots: *const *mut u8) -> u32 {
    // SAFETY: shim contract: `ctx` is live; `host`, when set, points to a
    // `NativeHost` the executing host keeps alive for the whole run.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    let Some(host) = (unsafe { (c.host as *mut NativeHost<'_>).as_mut() }) else {
        return c.fail(&VmError::invariant("no native host"));
    };
    let Some(s) = host.sites.get(site as usize) else {
        return c.fail(&VmError::invariant("native site"));
    };
    // SAFETY: shim contract: `slots` holds a pointer per parameter and
    // result of the site.
    let ptrs = unsafe { std::slice::from_raw_parts(slots, s.params.len() + s.rets.len()) };
    let gas = match host.cost {
        Some(t) => {
            let m = host.metered.get_or_insert_with(|| crate::gas::GasMeter::new(t.clone(), 0));
            m.restart(c.gas_left);
            m
        }
        None => &mut host.unmetered,
    };
    // SAFETY: shim contract: the slots are live, of the site's layouts.
    let r = unsafe { run_native_site(s, ptrs, &mut *host.session, host.types, gas) };
    if host.cost.is_some() {
        c.gas_left = c.gas_left.saturating_sub(gas.used());
    }
    match r {
        Ok(()) => 0,
        Err(e) => c.fail(&e),
    }
}

/// Runs native site `s` on `ptrs` (as [`call_native`]'s `slots`) through
/// the native bridge, charging `gas`.
///
/// # Safety
/// `ptrs` holds one pointer per parameter, then per result, of `s`, to
/// live slots of their layouts (a reference parameter's target too).
pub(crate) unsafe fn run_native_site(
    s: &NativeSite,
    ptrs: &[*mut u8],
    session: &mut super::native_bridge::NativeSession,
    types: &dyn crate::natives::TypeInfo,
    gas: &mut crate::gas::GasMeter,
) -> VmResult<()> {
    use super::mem::Addr;
    use super::native_bridge::{self, NativeArg};
    let args = s.params.iter().zip(ptrs).map(|((l, mutable), p)| NativeArg {
        layout: l,
        slot: Addr::from_raw(*p),
        mutable: *mutable,
    });
    let rets = s.rets.iter().zip(&ptrs[s.params.len()..]).map(|(l, p)| (Addr::from_raw(*p), &**l));
    native_bridge::with_native_slots(args, rets, |args, rets| {
        // SAFETY: the caller's contract.
        unsafe { native_bridge::call_native(&s.native, session, gas, types, &s.ty_args, args, rets) }
    })
}

// ---- natives compiled code runs straight on flat memory ----

/// Operation numbers of [`native_fast`].
pub mod fast_native {
    /// `0x1::hash::sha2_256(vector<u8>): vector<u8>`.
    pub const SHA2_256: u64 = 0;
    /// `0x1::hash::sha3_256(vector<u8>): vector<u8>`.
    pub const SHA3_256: u64 = 1;
    /// `0x1::bcs::to_bytes<T>(&T): vector<u8>` (closure-free `T` only).
    pub const BCS_TO_BYTES: u64 = 2;
}

/// A fresh `vector<u8>` holding `bytes` in `dst` (holding no live value).
pub(crate) fn write_byte_vec(dst: &mut [u8], bytes: &[u8]) -> VmResult<()> {
    dst[..8].fill(0);
    if bytes.is_empty() {
        return Ok(());
    }
    let n = bytes.len() as u64;
    super::raw::vec_reserve(dst, n, 1, 1)?;
    super::raw::vec_data_mut(dst, 1)[..bytes.len()].copy_from_slice(bytes);
    super::raw::vec_set_len(dst, n);
    Ok(())
}

/// The stdlib natives of [`fast_native`] without the native bridge's
/// tree-value round trip, with the registered natives' results, errors and
/// gas (`charge_native(bytes)` = `native_base + per_byte * bytes`, all or
/// nothing; out of gas leaves none, as the bridge's meter does). `arg` is
/// the argument's slot (a `vector<u8>`, consumed) or, for `BCS_TO_BYTES`,
/// the referenced value of layout `l`; `dst` receives the result vector.
/// `metered` is 0 when the execution is unmetered.
pub unsafe extern "C" fn native_fast(
    ctx: *mut ExecContext,
    op: u64,
    arg: *mut u8,
    l: *const FlatLayout,
    dst: *mut u8,
    metered: u64,
    native_base: u64,
    per_byte: u64,
) -> u32 {
    use sha2::Digest;
    // SAFETY: shim contract.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    let out: Vec<u8> = match op {
        fast_native::SHA2_256 | fast_native::SHA3_256 => {
            // SAFETY: shim contract: `arg` is a live vector<u8> slot we own.
            let slot = unsafe { slice_mut(arg, 8) };
            let data = super::raw::vec_data(slot, 1);
            let d: Vec<u8> = if op == fast_native::SHA2_256 {
                sha2::Sha256::digest(data).to_vec()
            } else {
                sha3::Sha3_256::digest(data).to_vec()
            };
            let n = data.len();
            super::raw::vec_free(slot, 1, 1);
            if metered != 0 && charge_native(c, native_base, per_byte, n) {
                return 1;
            }
            d
        }
        fast_native::BCS_TO_BYTES => {
            let l = layout(l);
            let mut bytes = Vec::new();
            // SAFETY: shim contract: `arg` points to a live value of `l`.
            if super::bcs::serialize_into(&mut bytes, l, unsafe { slice(arg, l.size as usize) }).is_err() {
                return c.fail(&VmError::abort(0x1C5));
            }
            if metered != 0 && charge_native(c, native_base, per_byte, bytes.len()) {
                return 1;
            }
            bytes
        }
        _ => return c.fail(&bad_code()),
    };
    // SAFETY: shim contract: `dst` is a vector slot holding no live value.
    match write_byte_vec(unsafe { slice_mut(dst, 8) }, &out) {
        Ok(()) => 0,
        Err(e) => c.fail(&e),
    }
}

/// Charges `native_base + per_byte * bytes`; true (error recorded, gas
/// emptied) when it exceeds the gas left.
fn charge_native(c: &mut ExecContext, native_base: u64, per_byte: u64, bytes: usize) -> bool {
    let cost = native_base.saturating_add(per_byte.saturating_mul(bytes as u64));
    if cost > c.gas_left {
        c.gas_left = 0;
        c.fail(&VmError::new(movejit_format::StatusCode::OUT_OF_GAS));
        return true;
    }
    c.gas_left -= cost;
    false
}
