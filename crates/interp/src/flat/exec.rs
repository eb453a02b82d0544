//! The flat interpreter loop: prepared ops over frames in a
//! [`FrameStack`], references as addresses, all memory access through
//! `movejit_runtime::flat::mem`.
//!
//! Unsafe: the loop trusts the verifier, as compiled code does. The
//! functions that take frame bases or slot addresses are `unsafe fn` under
//! the `flat::mem` contract: every address is a live slot of the layout the
//! prepared code gives it (a frame pushed on the [`FrameStack`] and not yet
//! popped, an owned value's slot, a field or element below one, or the
//! target a reference slot holds). That holds because the code was verified
//! (type and reference safety) and prepared against those layouts. The
//! entry points (`run_entry`, `run_nested`, `unwind`) establish it; each
//! `unsafe` block says how.

#![allow(unsafe_code)]

use super::prepare::{FieldOrder, GasSite, Holds, Kind, Measure, Memory, Op, Place, Prepared};
use super::{Callee, Instance, NativeCallee, VecNative};
use crate::engine::SessionState as Session;
use movejit_format::{AccountAddress, Bytecode, Opcode};
use movejit_loader::LoadedModule;
use movejit_runtime::arith::{self, BinOp, CmpOp};
use movejit_runtime::error::TrapResult;
use movejit_runtime::ethnum::{I256, U256};
use movejit_runtime::flat::mem::{self, Addr, FrameMark, FrameStack};
use movejit_runtime::flat::native_bridge::{self, NativeArg};
use movejit_runtime::flat::{FlatClosure, FlatLayout, FlatValue, Shape};
use movejit_runtime::gas::abstract_size::AbstractSizes;
use movejit_runtime::gas::aptos::{AptosMeter, AptosPricing, SiteCounts};
use movejit_runtime::natives::Hash256;
use movejit_runtime::{ErrorLocation, GasMeter, StatusCode, Type, Value, VmError, VmResult};
use std::sync::Arc;

type L = Arc<FlatLayout>;

/// Bytes of captured values a call of a shared closure copies without
/// allocating.
const SCRATCH_BYTES: usize = 256;

/// Arguments a closure call passes without allocating.
const INLINE_CLOSURE_ARGS: usize = 8;

/// 8-aligned scratch for those copies.
#[repr(C, align(8))]
struct Scratch([u8; SCRATCH_BYTES]);

/// An argument or result slot: its address and its layout, borrowed (from
/// the prepared function, which the engine's threads share: cloning the
/// `Arc` per call would write a shared counter).
type Slot<'x> = (Addr, &'x L);

/// `slots` with borrowed layouts.
fn borrowed(slots: &[(Addr, L)]) -> Vec<Slot<'_>> {
    slots.iter().map(|(a, l)| (*a, l)).collect()
}

/// The element layout of a vector native's vector (or reference to vector)
/// argument.
fn elem_of(l: &FlatLayout) -> TrapResult<&FlatLayout> {
    let v = match &l.shape {
        Shape::Reference(t) => &**t,
        _ => l,
    };
    v.elem().map(|e| &**e).ok_or_else(|| inv("vector native on a non-vector"))
}

struct Frame<'e> {
    /// The running function (no reference count: it lives in the engine).
    inst: Instance<'e>,
    base: Addr,
    mark: FrameMark,
    /// The current instruction (for frames below the top: the call).
    pc: usize,
    /// Operand-stack values held by the frames below (the stack limit).
    sbase: u32,
}

/// The running frame of [`FlatInterp::exec`] and where it is.
#[derive(Clone, Copy)]
struct Cursor<'e> {
    inst: Instance<'e>,
    base: Addr,
    sbase: u32,
    pc: usize,
}

pub(crate) struct FlatInterp<'a, 'e, 'r> {
    s: &'a mut Session<'e, 'r>,
    gas: &'a mut GasMeter,
    stack: FrameStack,
    frames: Vec<Frame<'e>>,
    max_stack: u32,
    max_depth: usize,
    max_vec: u64,
    scratch: Vec<u8>,
    /// Where the entry function's results go.
    entry_rets: Vec<FlatValue>,
    /// A nested run's result slots (address, size), instead of `entry_rets`.
    nested_rets: Option<Vec<(Addr, u32)>>,
    /// Natives' memory for this execution.
    natives: native_bridge::NativeSession,
    /// Set when the failing instruction of the top frame had completed
    /// (a stack-limit check after it): its results are on the stack.
    failed_after: bool,
}

/// `a = a op b` on integers of type `$t` (`$n` bytes) in flat slots;
/// `None` when Move's rules make it an error (the caller reports it).
macro_rules! int_bin {
    ($t:ty, $n:expr, $op:expr, $a:expr, $b:expr) => {{
        let x = <$t>::from_le_bytes(mem::read::<$n>($a));
        let y = <$t>::from_le_bytes(mem::read::<$n>($b));
        movejit_runtime::checked_int_op!($op, x, y).map(|r| mem::write::<$n>($a, r.to_le_bytes()))
    }};
}

/// `a op b` comparison of integers of type `$t` in flat slots.
macro_rules! int_cmp {
    ($t:ty, $n:expr, $op:expr, $a:expr, $b:expr) => {{
        let x = <$t>::from_le_bytes(mem::read::<$n>($a));
        let y = <$t>::from_le_bytes(mem::read::<$n>($b));
        match $op {
            CmpOp::Lt => x < y,
            CmpOp::Gt => x > y,
            CmpOp::Le => x <= y,
            CmpOp::Ge => x >= y,
        }
    }};
}

/// `a = a op b` on u64 slots (errors as the shared arithmetic reports them).
#[inline(always)]
unsafe fn bin_u64(op: BinOp, a: Addr, b: Addr) -> TrapResult<()> {
    let (x, y) = (mem::read_u64(a), mem::read_u64(b));
    let r = movejit_runtime::checked_int_op!(op, x, y);
    match r {
        Some(r) => mem::write_u64(a, r),
        None => arith::binop_in_place(op, &mut Value::U64(x), &Value::U64(y))?,
    }
    Ok(())
}

/// The reference a register-form read starts from, in the frame at `base`.
#[inline(always)]
unsafe fn place_ref(place: Place, base: Addr) -> Addr {
    match place {
        Place::Local(off) => base.add(off),
        Place::RefIn(off) => mem::read_addr(base.add(off)),
    }
}

/// `x op y` on u64 (errors as the shared arithmetic reports them).
#[inline(always)]
fn bin_u64_value(op: BinOp, x: u64, y: u64) -> TrapResult<u64> {
    match movejit_runtime::checked_int_op!(op, x, y) {
        Some(r) => Ok(r),
        None => bin_u64_error(op, x, y),
    }
}

#[cold]
#[inline(never)]
fn bin_u64_error(op: BinOp, x: u64, y: u64) -> TrapResult<u64> {
    let mut r = Value::U64(x);
    arith::binop_in_place(op, &mut r, &Value::U64(y))?;
    match r {
        Value::U64(r) => Ok(r),
        _ => Err(inv("u64 arithmetic without a u64 result")),
    }
}

/// `x op y` comparison of u64s.
#[inline(always)]
fn cmp_u64(op: CmpOp, x: u64, y: u64) -> bool {
    match op {
        CmpOp::Lt => x < y,
        CmpOp::Gt => x > y,
        CmpOp::Le => x <= y,
        CmpOp::Ge => x >= y,
    }
}

/// `Op::Shift` by `n` in place on integers up to 128 bits; `false` when
/// the shared arithmetic must run it (an error, or 256 bits).
#[inline(always)]
unsafe fn shift_in_place(left: bool, k: Kind, a: Addr, n: u8) -> bool {
    macro_rules! sh {
        ($t:ty, $n:expr) => {{
            if u32::from(n) >= <$t>::BITS {
                return false;
            }
            let x = <$t>::from_le_bytes(mem::read::<$n>(a));
            let r = if left { x << n } else { x >> n };
            mem::write::<$n>(a, r.to_le_bytes());
            true
        }};
    }
    match k {
        Kind::U8 => sh!(u8, 1),
        Kind::U16 => sh!(u16, 2),
        Kind::U32 => sh!(u32, 4),
        Kind::U64 => sh!(u64, 8),
        Kind::U128 => sh!(u128, 16),
        Kind::I8 => sh!(i8, 1),
        Kind::I16 => sh!(i16, 2),
        Kind::I32 => sh!(i32, 4),
        Kind::I64 => sh!(i64, 8),
        Kind::I128 => sh!(i128, 16),
        _ => false,
    }
}

/// `Op::Cast` in place between integers up to 128 bits when the value
/// fits the target (Move's casts keep the value or fail); `false` when the
/// shared arithmetic must run it (an error, or 256 bits).
#[inline(always)]
unsafe fn cast_in_place(from: Kind, to: Kind, a: Addr) -> bool {
    enum Wide {
        U(u128),
        I(i128),
    }
    let w = match from {
        Kind::U8 => Wide::U(u128::from(mem::read::<1>(a)[0])),
        Kind::U16 => Wide::U(u128::from(u16::from_le_bytes(mem::read(a)))),
        Kind::U32 => Wide::U(u128::from(u32::from_le_bytes(mem::read(a)))),
        Kind::U64 => Wide::U(u128::from(mem::read_u64(a))),
        Kind::U128 => Wide::U(u128::from_le_bytes(mem::read(a))),
        Kind::I8 => Wide::I(i128::from(mem::read::<1>(a)[0] as i8)),
        Kind::I16 => Wide::I(i128::from(i16::from_le_bytes(mem::read(a)))),
        Kind::I32 => Wide::I(i128::from(i32::from_le_bytes(mem::read(a)))),
        Kind::I64 => Wide::I(i128::from(i64::from_le_bytes(mem::read(a)))),
        Kind::I128 => Wide::I(i128::from_le_bytes(mem::read(a))),
        _ => return false,
    };
    macro_rules! to {
        ($t:ty, $n:expr) => {{
            let r = match w {
                Wide::U(x) => <$t>::try_from(x).ok(),
                Wide::I(x) => <$t>::try_from(x).ok(),
            };
            match r {
                Some(r) => {
                    mem::write::<$n>(a, r.to_le_bytes());
                    true
                }
                None => false,
            }
        }};
    }
    match to {
        Kind::U8 => to!(u8, 1),
        Kind::U16 => to!(u16, 2),
        Kind::U32 => to!(u32, 4),
        Kind::U64 => to!(u64, 8),
        Kind::U128 => to!(u128, 16),
        Kind::I8 => to!(i8, 1),
        Kind::I16 => to!(i16, 2),
        Kind::I32 => to!(i32, 4),
        Kind::I64 => to!(i64, 8),
        Kind::I128 => to!(i128, 16),
        _ => false,
    }
}

/// [`mem::move_bytes`] with the common sizes as fixed-size copies (a
/// `memmove` call costs more than moving a scalar). The ranges may
/// overlap: each copy reads all its bytes before it writes.
#[inline(always)]
unsafe fn move_sized(src: Addr, dst: Addr, n: u32) {
    match n {
        1 => mem::write::<1>(dst, mem::read::<1>(src)),
        8 => mem::write::<8>(dst, mem::read::<8>(src)),
        16 => mem::write::<16>(dst, mem::read::<16>(src)),
        32 => mem::write::<32>(dst, mem::read::<32>(src)),
        _ => mem::move_bytes(src, dst, n),
    }
}

/// `Op::Pack` through a copy of the whole value in `scratch` (the fields'
/// slots and the value may overlap in any way).
///
/// # Safety
/// `base` is a live frame holding the op's slots (the module's contract).
unsafe fn pack_scratch(
    scratch: &mut Vec<u8>,
    base: Addr,
    dst: u32,
    size: u32,
    tag: Option<u16>,
    fields: &[(u32, u32, u32)],
) {
    scratch.clear();
    scratch.resize(size as usize, 0);
    if let Some(t) = tag {
        scratch[..2].copy_from_slice(&t.to_le_bytes());
    }
    for (src, off, n) in fields {
        mem::read_into(base.add(*src), &mut scratch[*off as usize..(*off + *n) as usize]);
    }
    mem::write_from(base.add(dst), scratch);
}

/// `Op::Pack` in place: the fields in `order` ([`FieldOrder`]: no move
/// lands on a source not yet moved), then the bytes between them zeroed
/// and the tag written, as [`pack_scratch`] leaves them.
///
/// # Safety
/// As [`pack_scratch`]; `order` is the op's prepared order.
#[inline(always)]
unsafe fn pack_direct(
    base: Addr,
    dst: u32,
    size: u32,
    tag: Option<u16>,
    order: FieldOrder,
    fields: &[(u32, u32, u32)],
) {
    let d = base.add(dst);
    let one = |&(src, off, n): &(u32, u32, u32)| move_sized(base.add(src), d.add(off), n);
    if order == FieldOrder::Backward {
        fields.iter().rev().for_each(one);
    } else {
        fields.iter().for_each(one);
    }
    // The fields' offsets increase (`prepare::pack_order` checks it).
    let mut end = if tag.is_some() { 2 } else { 0 };
    for &(_, off, n) in fields {
        if off > end {
            mem::zero(d.add(end), off - end);
        }
        end = off + n;
    }
    if size > end {
        mem::zero(d.add(end), size - end);
    }
    if let Some(t) = tag {
        mem::write(d, t.to_le_bytes());
    }
}

/// `Op::Unpack` (after its tag check) through a copy of the value.
///
/// # Safety
/// As [`pack_scratch`].
unsafe fn unpack_scratch(scratch: &mut Vec<u8>, base: Addr, src: u32, size: u32, fields: &[(u32, u32, u32)]) {
    scratch.clear();
    scratch.resize(size as usize, 0);
    mem::read_into(base.add(src), scratch);
    for (off, dst, n) in fields {
        mem::write_from(base.add(*dst), &scratch[*off as usize..(*off + *n) as usize]);
    }
}

/// `Op::Unpack` (after its tag check) in place, in `order`.
///
/// # Safety
/// As [`pack_direct`].
#[inline(always)]
unsafe fn unpack_direct(base: Addr, src: u32, order: FieldOrder, fields: &[(u32, u32, u32)]) {
    let s = base.add(src);
    let one = |&(off, dst, n): &(u32, u32, u32)| move_sized(s.add(off), base.add(dst), n);
    if order == FieldOrder::Backward {
        fields.iter().rev().for_each(one);
    } else {
        fields.iter().for_each(one);
    }
}

/// Whether the `n` bytes at `a` and `b` are equal (`Op::EqBytes`).
#[inline(always)]
unsafe fn equal_bytes(a: Addr, b: Addr, n: u32) -> bool {
    match n {
        1 => mem::read::<1>(a) == mem::read::<1>(b),
        8 => mem::read_u64(a) == mem::read_u64(b),
        16 => mem::read::<16>(a) == mem::read::<16>(b),
        32 => mem::read::<32>(a) == mem::read::<32>(b),
        _ => {
            let mut i = 0;
            while i + 8 <= n {
                if mem::read_u64(a.add(i)) != mem::read_u64(b.add(i)) {
                    return false;
                }
                i += 8;
            }
            while i < n {
                if mem::read::<1>(a.add(i)) != mem::read::<1>(b.add(i)) {
                    return false;
                }
                i += 1;
            }
            true
        }
    }
}

/// A `0x1::vector` or `0x1::hash` native on flat memory (see [`VecNative`]).
unsafe fn vec_native(kind: VecNative, gas: &mut GasMeter, args: &Args<'_>, rets: &[Slot<'_>]) -> TrapResult<()> {
    let arg = |i: usize| args.slots.get(i).ok_or_else(|| inv("vector native arguments"));
    let ret = |i: usize| rets.get(i).map(|r| r.0).ok_or_else(|| inv("vector native results"));
    match kind {
        VecNative::Empty => mem::zero(ret(0)?, 8),
        VecNative::Length => {
            let (a, _) = arg(0)?;
            mem::write_u64(ret(0)?, mem::vec_len(mem::read_addr(*a)));
        }
        VecNative::Borrow => {
            let (a, l) = arg(0)?;
            let i = mem::read_u64(arg(1)?.0);
            let e = mem::vec_borrow(elem_of(l)?, mem::read_addr(*a), i)?;
            mem::write_addr(ret(0)?, e);
        }
        VecNative::PushBack => {
            let (a, l) = arg(0)?;
            // The registry's push_back has no length limit.
            mem::vec_push_back(elem_of(l)?, mem::read_addr(*a), arg(1)?.0, u64::MAX)?;
        }
        VecNative::PopBack => {
            let (a, l) = arg(0)?;
            let v = mem::read_addr(*a);
            mem::vec_pop_back(elem_of(l)?, v, ret(0)?)?;
        }
        VecNative::Swap => {
            let (a, l) = arg(0)?;
            let (i, j) = (mem::read_u64(arg(1)?.0), mem::read_u64(arg(2)?.0));
            mem::vec_swap(elem_of(l)?, mem::read_addr(*a), i, j)?;
        }
        VecNative::DestroyEmpty => {
            let (a, l) = arg(0)?;
            mem::vec_destroy_empty(elem_of(l)?, *a)?;
        }
        VecNative::Sha2_256 | VecNative::Sha3_256 => {
            // The `vector<u8>` argument (left in place on an error, for the
            // unwind), then the digest as a new `vector<u8>` in the result
            // slot (the argument's slot).
            let (a, l) = arg(0)?;
            let e = elem_of(l)?;
            let data = mem::vec_bytes(e, *a);
            gas.charge_native(data.len())?;
            let hash = if kind == VecNative::Sha2_256 { Hash256::Sha2 } else { Hash256::Sha3 };
            gas.charge_aptos_native(&hash.terms(data.len()))?;
            let digest = hash.digest(data);
            mem::drop_value(l, *a);
            mem::vec_pack(e, ret(0)?, &digest, digest.len() as u64, u64::MAX)?;
        }
    }
    Ok(())
}

/// Aptos charges an instruction at `pc` before it runs: the types it
/// builds, then its price (measuring the value it copies, reads or
/// compares). Calls, global operations and abort messages are charged
/// where they run (the callee, the resource read, the message's bytes).
///
/// # Safety
/// `base` is the frame of a live call of `p` stopped at `pc` (its slots
/// hold the values the prepared site measures).
#[inline(never)]
unsafe fn charge_aptos(a: &mut AptosMeter, p: &Prepared, pc: usize, base: Addr) -> TrapResult<()> {
    let op = p.opcodes[pc];
    let g: &GasSite = &p.gas[pc];
    if matches!(op, Opcode::Call | Opcode::CallGeneric | Opcode::CallClosure | Opcode::AbortMsg) {
        return Ok(());
    }
    if op == Opcode::PackClosureGeneric {
        // Priced first, then its type arguments are built.
        // SAFETY: the caller's contract.
        unsafe { charge_memory(a, &g.memory, base) }.map_err(VmError::new)?;
        a.charge_site(op, g.counts).map_err(VmError::new)?;
        return a.charge_create_ty(g.nodes).map_err(|s| Box::new(VmError::new(s)));
    }
    if g.nodes > 0 {
        a.charge_create_ty(g.nodes).map_err(VmError::new)?;
    }
    if is_global(op) {
        return Ok(());
    }
    let sizes = &a.pricing.sizes;
    // SAFETY: the measured slots are the frame's, live at `pc` (the
    // caller's contract); a reference slot holds a live target.
    let counts = unsafe {
        match &g.measure {
            Measure::None => g.counts,
            Measure::Slot(off, l) => SiteCounts { units: sizes.value_at(l, base.add(*off)), ..g.counts },
            Measure::Ref(off, l) => SiteCounts { units: sizes.value_at(l, mem::read_addr(base.add(*off))), ..g.counts },
            Measure::Variant(off, l) => {
                let tag = u16::from_le_bytes(mem::read(base.add(*off)));
                let fields = match &l.shape {
                    Shape::Enum(vs) => vs.get(tag as usize).map_or(0, |fs| fs.len()),
                    _ => 0,
                };
                SiteCounts { units: fields as u64 + 1, ..g.counts }
            }
            Measure::Pair(x, y, l) => SiteCounts {
                units: sizes.dereferenced_at(l, base.add(*x)).saturating_add(sizes.dereferenced_at(l, base.add(*y))),
                ..g.counts
            },
        }
    };
    // Memory first (Aptos's memory-tracking meter wraps the gas meter):
    // a copied or read value's heap part is used, compared values are
    // destroyed.
    match &g.measure {
        Measure::Slot(_, l) | Measure::Ref(_, l) if matches!(g.memory, Memory::UseCopy) => {
            let heap = if AbstractSizes::heapless(l) { 0 } else { counts.units.saturating_sub(sizes.stack(l)) };
            a.use_memory(heap).map_err(VmError::new)?;
        }
        // SAFETY: both operands are live slots of layout `l`.
        Measure::Pair(x, y, l) if matches!(g.memory, Memory::ReleasePair) && !AbstractSizes::heapless(l) => unsafe {
            let heap = sizes.heap_at(l, base.add(*x)).saturating_add(sizes.heap_at(l, base.add(*y)));
            a.release_memory(heap);
        },
        _ => {}
    }
    // SAFETY: the caller's contract.
    unsafe { charge_memory(a, &g.memory, base) }.map_err(VmError::new)?;
    a.charge_site(op, counts).map_err(VmError::new)?;
    if let (Memory::Const, Some(Op::LdConst { v, .. })) = (&g.memory, p.ops.get(pc)) {
        // Used once the constant is deserialised (after its charge).
        let heap = a.pricing.sizes.heap(v.layout(), v.bytes());
        a.use_memory(heap).map_err(VmError::new)?;
    }
    Ok(())
}

/// Aptos's memory for a native's arguments (live argument slots): their
/// heap parts are released before it runs.
///
/// # Safety
/// The argument slots hold live values of their layouts.
unsafe fn native_args_memory(a: &mut AptosMeter, args: &Args<'_>) {
    let sizes = &a.pricing.sizes;
    // SAFETY: the caller's contract.
    let heap = args
        .slots
        .iter()
        .filter(|(_, l)| !AbstractSizes::heapless(l))
        .fold(0u64, |acc, (at, l)| acc.saturating_add(unsafe { sizes.heap_at(l, *at) }));
    a.release_native_args(heap);
}

/// The memory effect `m` of an instruction of the frame at `base` (see
/// [`Memory`]), before it runs.
///
/// # Safety
/// As [`charge_aptos`].
unsafe fn charge_memory(a: &mut AptosMeter, m: &Memory, base: Addr) -> Result<(), StatusCode> {
    let sizes = &a.pricing.sizes;
    let stacks = |ls: &[L]| ls.iter().fold(0u64, |acc, l| acc.saturating_add(sizes.stack(l)));
    // SAFETY (every read below): the slots are the frame's, live at `pc`
    // (the caller's contract); a reference slot holds a live target; a
    // local that may hold a value and owns heap memory is zero when it
    // does not.
    match m {
        // Fed by `charge_aptos`: after the charge, or by the measure.
        Memory::None | Memory::Const | Memory::UseCopy | Memory::ReleasePair => {}
        Memory::UseStack(ls) => {
            let n = stacks(ls);
            a.use_memory(n)?;
        }
        Memory::ReleaseStack(ls) => {
            let n = stacks(ls);
            a.release_memory(n);
        }
        Memory::ReleaseVariant(off, l) => {
            let tag = u16::from_le_bytes(unsafe { mem::read(base.add(*off)) });
            let fields = match &l.shape {
                Shape::Enum(vs) => vs
                    .get(tag as usize)
                    .map_or(0, |fs| fs.iter().fold(0u64, |acc, f| acc.saturating_add(sizes.stack(&f.layout)))),
                _ => 0,
            };
            let n = fields.saturating_add(sizes.variant_tag());
            a.release_memory(n);
        }
        Memory::UsePacked(e, n) => {
            let total = sizes.packed(e).saturating_mul(*n);
            a.use_memory(total)?;
        }
        Memory::ReleasePacked(e, n) => {
            let total = sizes.packed(e).saturating_mul(*n);
            a.release_memory(total);
        }
        Memory::UsePackedAt(e, slots) => {
            let total = slots
                .iter()
                .fold(0u64, |acc, off| acc.saturating_add(unsafe { sizes.packed_value_at(e, base.add(*off)) }));
            a.use_memory(total)?;
        }
        Memory::ReleasePackedIn(e, off) => {
            let n = unsafe { sizes.packed_elements_at(e, base.add(*off), 0) };
            a.release_memory(n);
        }
        Memory::PopBack(r, e) => {
            let v = unsafe { mem::read_addr(base.add(*r)) };
            let len = unsafe { mem::vec_len(v) };
            if len > 0 {
                let n = unsafe { sizes.packed_elements_at(e, v, len - 1) };
                a.release_memory(n);
            }
        }
        Memory::ReleaseHeap(off, l) if !AbstractSizes::heapless(l) => {
            let n = unsafe { sizes.heap_at(l, base.add(*off)) };
            a.release_memory(n);
        }
        Memory::ReleaseHeapRef(r, l) if !AbstractSizes::heapless(l) => {
            let n = unsafe { sizes.heap_at(l, mem::read_addr(base.add(*r))) };
            a.release_memory(n);
        }
        Memory::ReleaseHeap(..) | Memory::ReleaseHeapRef(..) => {}
        Memory::DropFrame(locals) => {
            let mut n = 0u64;
            for d in locals.iter() {
                let at = base.add(d.off);
                let held = match d.held {
                    Holds::Surely => true,
                    Holds::ByBytes => !unsafe { mem::is_zero(at, d.l.size) },
                    Holds::Flag(h) => (unsafe { mem::read::<1>(base.add(h.flag)) }[0] != 0) != h.param,
                };
                if held {
                    n = n.saturating_add(unsafe { sizes.heap_at(&d.l, at) });
                }
            }
            a.release_memory(n);
        }
        Memory::Track(h, holds) => unsafe { mem::write(base.add(h.flag), [(*holds != h.param) as u8]) },
    }
    Ok(())
}

/// Instructions that read a resource (charged after the read, as Aptos does).
fn is_global(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        ImmBorrowGlobal
            | ImmBorrowGlobalGeneric
            | MutBorrowGlobal
            | MutBorrowGlobalGeneric
            | Exists
            | ExistsGeneric
            | MoveFrom
            | MoveFromGeneric
            | MoveTo
            | MoveToGeneric
    )
}

fn inv(m: &str) -> Box<VmError> {
    Box::new(VmError::invariant(m))
}

unsafe fn load(k: Kind, a: Addr) -> Value {
    match k {
        Kind::U8 => Value::U8(mem::read::<1>(a)[0]),
        Kind::U16 => Value::U16(u16::from_le_bytes(mem::read(a))),
        Kind::U32 => Value::U32(u32::from_le_bytes(mem::read(a))),
        Kind::U64 => Value::U64(u64::from_le_bytes(mem::read(a))),
        Kind::U128 => Value::U128(u128::from_le_bytes(mem::read(a))),
        Kind::U256 => Value::U256(U256::from_le_bytes(mem::read(a))),
        Kind::I8 => Value::I8(mem::read::<1>(a)[0] as i8),
        Kind::I16 => Value::I16(i16::from_le_bytes(mem::read(a))),
        Kind::I32 => Value::I32(i32::from_le_bytes(mem::read(a))),
        Kind::I64 => Value::I64(i64::from_le_bytes(mem::read(a))),
        Kind::I128 => Value::I128(i128::from_le_bytes(mem::read(a))),
        Kind::I256 => Value::I256(I256::from_le_bytes(mem::read(a))),
        Kind::Bool => Value::Bool(mem::read_bool(a)),
        Kind::Address => Value::Address(AccountAddress(mem::read(a))),
    }
}

unsafe fn store(v: &Value, a: Addr) -> TrapResult<()> {
    match v {
        Value::U8(x) => mem::write(a, [*x]),
        Value::U16(x) => mem::write(a, x.to_le_bytes()),
        Value::U32(x) => mem::write(a, x.to_le_bytes()),
        Value::U64(x) => mem::write(a, x.to_le_bytes()),
        Value::U128(x) => mem::write(a, x.to_le_bytes()),
        Value::U256(x) => mem::write(a, x.to_le_bytes()),
        Value::I8(x) => mem::write(a, x.to_le_bytes()),
        Value::I16(x) => mem::write(a, x.to_le_bytes()),
        Value::I32(x) => mem::write(a, x.to_le_bytes()),
        Value::I64(x) => mem::write(a, x.to_le_bytes()),
        Value::I128(x) => mem::write(a, x.to_le_bytes()),
        Value::I256(x) => mem::write(a, x.to_le_bytes()),
        Value::Bool(x) => mem::write_bool(a, *x),
        v => return Err(inv(&format!("store of {v:?}"))),
    }
    Ok(())
}

/// Drops the location of an error Aptos reports nowhere (marked by an
/// empty module: see `aptos_load_location`).
fn unlocated(e: &mut VmError) {
    if e.location.as_ref().is_some_and(|l| l.module.is_empty()) {
        e.location = None;
    }
}

/// Aptos's `STRUCT_VARIANT_MISMATCH` of instruction `pc` of `p` meeting
/// variant `found`, with the VM's message (`VmError::variant_mismatch`).
#[cold]
#[inline(never)]
fn variant_mismatch(p: &Prepared, pc: usize, found: u16) -> Box<VmError> {
    Box::new(match instruction(p, pc) {
        Some(instr) => VmError::variant_mismatch(&p.module.module, instr, found),
        None => VmError::new(StatusCode::STRUCT_VARIANT_MISMATCH),
    })
}

/// The bytecode instruction at `pc` of `p`.
fn instruction(p: &Prepared, pc: usize) -> Option<&Bytecode> {
    p.module.module.function_defs.get(p.def as usize)?.code.as_ref()?.code.get(pc)
}

fn location(p: &Prepared, pc: usize) -> ErrorLocation {
    ErrorLocation {
        module: p.module.id.long_string(),
        function_name: p.module.function_name(p.def),
        function_index: p.def,
        code_offset: pc as u16,
    }
}

/// Arguments of a call: where each is and its layout.
struct Args<'x> {
    slots: &'x [Slot<'x>],
    mutable: &'x [bool],
}

impl<'a, 'e, 'r> FlatInterp<'a, 'e, 'r> {
    pub(crate) fn new(s: &'a mut Session<'e, 'r>, gas: &'a mut GasMeter) -> Self {
        let limits = &s.engine.config.limits;
        let (max_stack, max_depth, max_vec) =
            (limits.max_operand_stack as u32, limits.max_call_depth, limits.max_vector_len);
        FlatInterp {
            s,
            gas,
            stack: FrameStack::default(),
            frames: Vec::new(),
            max_stack,
            max_depth,
            max_vec,
            scratch: Vec::new(),
            entry_rets: Vec::new(),
            nested_rets: None,
            natives: native_bridge::NativeSession::default(),
            failed_after: false,
        }
    }

    /// Runs `def` of `m` with `args` (one owned value per parameter; for
    /// `&`/`&mut` parameters the referenced value, which the call borrows).
    /// Returns the results and the (possibly mutated) argument values.
    pub(crate) fn run_entry(
        &mut self,
        m: Arc<LoadedModule>,
        def: u16,
        ty_args: Vec<Type>,
        params: &[Type],
        args: Vec<FlatValue>,
        returns: &[Type],
    ) -> VmResult<(Vec<FlatValue>, Vec<FlatValue>)> {
        // A frame stack the engine kept (`Engine::spare_stacks`).
        let spares = &self.s.engine.spare_stacks;
        if self.frames.is_empty() {
            if let Some(st) = spares.lock().ok().and_then(|mut s| s.pop()) {
                self.stack = st;
            }
        }
        let r = self.run_entry_on_stack(m, def, ty_args, params, args, returns);
        // Every frame is gone (returned or unwound): keep the memory.
        if self.frames.is_empty() {
            if let Ok(mut s) = spares.lock() {
                if s.len() < crate::engine::SPARE_STACKS {
                    s.push(std::mem::take(&mut self.stack));
                }
            }
        }
        r
    }

    fn run_entry_on_stack(
        &mut self,
        m: Arc<LoadedModule>,
        def: u16,
        ty_args: Vec<Type>,
        params: &[Type],
        args: Vec<FlatValue>,
        returns: &[Type],
    ) -> VmResult<(Vec<FlatValue>, Vec<FlatValue>)> {
        // Argument slots: values themselves, or a reference slot pointing at
        // the argument value.
        let mut slots: Vec<FlatValue> = Vec::with_capacity(args.len());
        let mut roots: Vec<FlatValue> = Vec::with_capacity(args.len());
        let mut mutable = Vec::with_capacity(args.len());
        for (t, v) in params.iter().zip(args) {
            mutable.push(matches!(t, Type::MutableReference(_)));
            if matches!(t, Type::Reference(_) | Type::MutableReference(_)) {
                let rl = self.s.flat_layout(t)?;
                let r = FlatValue::zeroed(rl);
                // SAFETY: `r` is an owned reference slot; `v` (its target)
                // lives in `roots` until the call is over.
                unsafe { mem::write_addr(Addr::of_value(&r), Addr::of_value(&v)) };
                slots.push(r);
                roots.push(v);
            } else {
                slots.push(v);
                roots.push(FlatValue::zeroed(self.s.flat_layout(&Type::Bool)?));
            }
        }
        for t in returns {
            self.entry_rets.push(FlatValue::zeroed(self.s.flat_layout(t)?));
        }
        let arg_slots: Vec<(Addr, L)> = slots.iter().map(|v| (Addr::of_value(v), v.layout().clone())).collect();
        let ret_slots: Vec<(Addr, L)> =
            self.entry_rets.iter().map(|v| (Addr::of_value(v), v.layout().clone())).collect();
        let ty_args = Arc::new(ty_args);
        if let Some(a) = self.gas.aptos_meter_mut() {
            a.charge_module(&m.id, m.size).map_err(VmError::new)?;
        }
        let callee = self.s.flat_callee(&m, def, ty_args.clone())?;
        // SAFETY: the argument slots are owned values of their layouts (or
        // reference slots to owned values), the result slots owned zeroed
        // values of the return layouts, all alive until the call is over;
        // the callee is verified code prepared against those layouts.
        let r = match unsafe {
            self.call(
                &callee,
                Args { slots: &borrowed(&arg_slots), mutable: &mutable },
                &borrowed(&ret_slots),
                0,
                ret_slots.len() as u32,
                &ty_args,
            )
        } {
            Ok(pushed) => {
                // Argument slots were consumed by the call (moved or dropped).
                for s in slots {
                    s.forget_moved();
                }
                if pushed {
                    self.run()
                } else {
                    Ok(())
                }
            }
            // A failed call leaves each argument in place or dropped:
            // dropping the slots frees what is left.
            Err(e) => {
                drop(slots);
                Err(e)
            }
        };
        match r {
            Ok(()) => {
                // Returned references: copies of what they point to (which
                // may be memory of this execution).
                let rets = std::mem::take(&mut self.entry_rets)
                    .into_iter()
                    .map(|v| match &v.layout().shape {
                        // SAFETY: an owned reference slot; verified code
                        // returns references only into its reference
                        // arguments (`roots`, alive) or global storage (the
                        // session's).
                        Shape::Reference(t) => unsafe { mem::to_owned(t, mem::read_addr(Addr::of_value(&v))) },
                        _ => Ok(v),
                    })
                    .collect::<VmResult<Vec<_>>>();
                rets.map(|rets| (rets, roots))
            }
            Err(mut e) => {
                self.unwind();
                unlocated(&mut e);
                // The results were never written: forget, don't drop.
                for v in std::mem::take(&mut self.entry_rets) {
                    v.forget_moved();
                }
                Err(*e)
            }
        }
    }

    /// A nested run for compiled code (mixed execution, compiled →
    /// interpreted) on the seam's slots: value arguments are consumed (also
    /// on failure), a reference argument is its target's address, results
    /// are written to `rets` on success. `entered`: compiled code did the
    /// call's checks and charges and `state.depth` counts the callee, so the
    /// run starts in the callee's frame; otherwise it makes the call as
    /// `CallClosure` does (depth check, frame or native charge). Limits are
    /// the whole execution's: frames below this run count against the
    /// depth limit and `state.stack_base` against the operand-stack limit.
    /// The natives' state of the execution is `natives` (swapped in for the
    /// run). An error raised by the call itself has no location.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_nested(
        &mut self,
        target: &super::ClosureTarget,
        ty_args: Arc<Vec<Type>>,
        entered: bool,
        args: &[movejit_runtime::compiled::SeamSlot],
        rets: &[movejit_runtime::compiled::SeamSlot],
        state: movejit_runtime::compiled::CallState,
        natives: &mut native_bridge::NativeSession,
    ) -> Result<(), (VmError, bool)> {
        let below = if entered { state.depth.saturating_sub(1) } else { state.depth };
        self.max_depth = self.max_depth.saturating_sub(usize::try_from(below).unwrap_or(usize::MAX));
        if let Some(st) = self.s.flat.nested_stack.take() {
            self.stack = st;
        }
        std::mem::swap(&mut self.natives, natives);
        // Interpreter argument slots: a value's own slot; for a reference,
        // a slot holding its target's address.
        let mut ref_slots: Vec<FlatValue> = Vec::new();
        let mut slots: Vec<(Addr, L)> = Vec::with_capacity(args.len());
        for a in args {
            if matches!(a.layout().shape, Shape::Reference(_)) {
                let r = FlatValue::zeroed(a.layout().clone());
                // SAFETY: `r` is an owned reference slot.
                unsafe { mem::write_addr(Addr::of_value(&r), a.addr()) };
                slots.push((Addr::of_value(&r), a.layout().clone()));
                ref_slots.push(r);
            } else {
                slots.push((a.addr(), a.layout().clone()));
            }
        }
        let ret_slots: Vec<(Addr, L)> = rets.iter().map(|s| (s.addr(), s.layout().clone())).collect();
        self.nested_rets = Some(ret_slots.iter().map(|(a, l)| (*a, l.size)).collect());
        let started = match u32::try_from(state.stack_base) {
            // SAFETY: the seam contract: compiled code passes live slots of
            // their layouts (a reference's target for a reference), alive
            // until the run is over; `ref_slots` are owned.
            Ok(sbase) => unsafe {
                self.start_nested(target, &ty_args, entered, &borrowed(&slots), &borrowed(&ret_slots), sbase)
            },
            Err(_) => Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW))),
        };
        let r = match started {
            Ok(true) => self.run().map_err(|e| (e, false)),
            Ok(false) => Ok(()),
            Err(e) => {
                // Each argument is in place or its slot owns nothing: the
                // call consumes them all.
                for (a, l) in &slots {
                    if !matches!(l.shape, Shape::Reference(_)) {
                        // SAFETY: a live value slot (the seam contract).
                        unsafe { mem::drop_value(l, *a) };
                    }
                }
                Err((e, true))
            }
        };
        let aptos = self.gas.is_aptos();
        let r = r.map_err(|(mut e, by_call)| {
            self.unwind();
            // Aptos locates a loading error at the frame below: none in
            // this run when the call itself failed (`true`: the frame
            // below the calling one), or when its callee, the bottom
            // frame, failed making a frame (the location names no module:
            // the calling frame's, which the caller knows).
            let at_load = aptos && by_call && e.location.as_ref().is_some_and(|l| l.module.is_empty());
            if by_call || !aptos {
                unlocated(&mut e);
            }
            (*e, at_load)
        });
        self.nested_rets = None;
        std::mem::swap(&mut self.natives, natives);
        // Every frame is gone (returned or unwound): keep the memory.
        if self.frames.is_empty() {
            self.s.flat.nested_stack = Some(std::mem::take(&mut self.stack));
        }
        r
    }

    /// The call of [`run_nested`](Self::run_nested): `true` when a frame
    /// was pushed (then run it).
    unsafe fn start_nested(
        &mut self,
        target: &super::ClosureTarget,
        ty_args: &Arc<Vec<Type>>,
        entered: bool,
        slots: &[Slot<'_>],
        rets: &[Slot<'_>],
        sbase: u32,
    ) -> TrapResult<bool> {
        let callee = self.s.flat_callee(&target.module, target.def, ty_args.clone())?;
        if !entered {
            // A closure call: its charges before the callee's frame, as at
            // `CallClosure` (`call_closure`).
            if self.gas.is_aptos() {
                let counts = SiteCounts { units: slots.len() as u64, ..SiteCounts::default() };
                self.charge_aptos_call(&callee, Opcode::CallClosure, counts, None)?;
            }
            let h = rets.len() as u32;
            return self.call(&callee, Args { slots, mutable: &target.mutable }, rets, sbase, h, ty_args);
        }
        let Callee::Move(callee) = callee else { return Err(inv("compiled code entered a native as interpreted")) };
        let p = callee.p;
        if p.params.len() != slots.len() || p.ret_slots.iter().any(|r| !r.is_empty() && r.len() != rets.len()) {
            return Err(inv("interpreted call does not fit the callee's signature"));
        }
        let (base, mark) = self.stack.push(p.frame_size);
        for ((src, l), (off, _)) in slots.iter().zip(&p.params) {
            mem::move_bytes(*src, base.add(*off), l.size);
        }
        self.frames.push(Frame { inst: callee, base, mark, pc: 0, sbase });
        Ok(true)
    }

    /// Drops what every frame left after an error still owns: its locals
    /// and its live operand-stack values. The top frame's stack is as before
    /// its failing instruction (a failing instruction leaves each operand in
    /// place or dropped, and drops are idempotent), or as after it when it
    /// completed before a stack-limit check; a frame below holds the values
    /// under its call's arguments (which moved to the callee).
    fn unwind(&mut self) {
        let mut top = true;
        while let Some(f) = self.frames.pop() {
            let (state, below) = if top {
                (f.pc + self.failed_after as usize, u32::MAX)
            } else {
                let below = match f.inst.p.ops.get(f.pc) {
                    Some(Op::Call(site)) => site.height_below,
                    Some(Op::CallClosure(site)) => site.height_below,
                    _ => 0,
                };
                (f.pc, below)
            };
            // SAFETY: every frame on `frames` is live (pushed on `stack`
            // by a call, popped only with it), laid out as its prepared
            // function says; a slot that owns nothing is zero, and
            // dropping zero is a no-op.
            unsafe {
                for (depth, off, l) in f.inst.p.owned_stack.get(state).map(|s| &s[..]).unwrap_or(&[]) {
                    if *depth < below {
                        mem::drop_value(l, f.base.add(*off));
                    }
                }
                for (off, l) in &f.inst.p.owned_locals {
                    mem::drop_value(l, f.base.add(*off));
                }
            }
            self.stack.pop(f.mark);
            top = false;
        }
        self.failed_after = false;
    }

    /// A callee's results that cannot stay (the stack limit): dropped and
    /// zeroed, so the slots (which may overlap dropped arguments of other
    /// layouts) own nothing when the frame unwinds.
    unsafe fn discard_results(rets: &[Slot<'_>]) {
        for (a, l) in rets {
            mem::drop_value(l, *a);
            mem::zero(*a, l.size);
        }
    }

    /// Calls `callee`: a native or compiled callee runs at once (`false`),
    /// a Move function gets a frame (`true`). `sbase` is the operand-stack
    /// height below the arguments; `height_after` the caller's height after
    /// the call (natives push their results there). On error each argument
    /// is in place or its slot owns nothing, and no result is left (what
    /// `unwind` relies on).
    unsafe fn call(
        &mut self,
        callee: &Callee<'e>,
        args: Args<'_>,
        rets: &[Slot<'_>],
        sbase: u32,
        height_after: u32,
        native_ty_args: &[Type],
    ) -> TrapResult<bool> {
        match callee {
            Callee::Native(n) => {
                let f =
                    n.f.as_ref()
                        .ok_or_else(|| VmError::missing_native(&n.module.id, &n.module.function_name(n.def)))?;
                self.gas.charge_native(0)?;
                if let Some(a) = self.gas.aptos_meter_mut() {
                    native_args_memory(a, &args);
                }
                if let Some(kind) = n.fast {
                    vec_native(kind, self.gas, &args, rets).map_err(|e| self.native_error(n, e))?;
                    self.native_rets_memory(rets)?;
                    self.check_push(rets, sbase, height_after)?;
                    return Ok(false);
                }
                let nargs = args.slots.iter().zip(args.mutable).map(|((a, l), m)| NativeArg {
                    layout: l,
                    slot: *a,
                    mutable: *m,
                });
                let nrets = rets.iter().map(|(a, l)| (*a, &***l));
                native_bridge::with_native_slots(nargs, nrets, |nargs, nrets| {
                    native_bridge::call_native(f, &mut self.natives, self.gas, &*self.s, native_ty_args, nargs, nrets)
                })
                .map_err(|e| self.native_error(n, e))?;
                self.native_rets_memory(rets)?;
                self.check_push(rets, sbase, height_after)?;
                Ok(false)
            }
            &Callee::Move(callee) => {
                let p = callee.p;
                if let Some(a) = self.gas.aptos_meter_mut() {
                    // A new frame builds its locals' types (before the
                    // depth check: Aptos makes the frame, then pushes it).
                    if let Err(s) = p.local_nodes.iter().try_for_each(|n| a.charge_create_ty(*n)) {
                        return Err(self.at_aptos_load(VmError::new(s)));
                    }
                }
                if self.frames.len() >= self.max_depth {
                    return Err(Box::new(VmError::new(StatusCode::CALL_STACK_OVERFLOW)));
                }
                self.gas.charge_frame()?;
                if self.s.compiled.is_some() {
                    match self.try_compiled(p, &args, rets, sbase) {
                        Ok(true) => {
                            self.check_push(rets, sbase, height_after)?;
                            return Ok(false);
                        }
                        Ok(false) => {}
                        Err(e) => {
                            // It ran and consumed the arguments: their slots
                            // own nothing now (for the unwind).
                            for (a, l) in args.slots {
                                mem::zero(*a, l.size);
                            }
                            return Err(e);
                        }
                    }
                }
                let (base, mark) =
                    if p.zero_frame { self.stack.push(p.frame_size) } else { self.stack.push_unzeroed(p.frame_size) };
                for ((src, l), (off, _)) in args.slots.iter().zip(&p.params) {
                    mem::move_bytes(*src, base.add(*off), l.size);
                }
                self.frames.push(Frame { inst: callee, base, mark, pc: 0, sbase });
                Ok(true)
            }
        }
    }

    /// Aptos's memory for a native's results (`rets`, live result slots):
    /// their heap parts are used.
    unsafe fn native_rets_memory(&mut self, rets: &[Slot<'_>]) -> TrapResult<()> {
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        // SAFETY: the caller's contract.
        let heap = rets
            .iter()
            .filter(|(_, l)| !AbstractSizes::heapless(l))
            .fold(0u64, |acc, (at, l)| acc.saturating_add(unsafe { a.pricing.sizes.heap_at(l, *at) }));
        a.use_memory(heap).map_err(|s| Box::new(VmError::new(s)))
    }

    /// A native's error: Aptos locates running out of gas in a native at
    /// the native function itself (offset 0).
    fn native_error(&self, n: &NativeCallee, e: impl Into<Box<VmError>>) -> Box<VmError> {
        let mut e = e.into();
        let gas = matches!(e.status, StatusCode::OUT_OF_GAS | StatusCode::EXECUTION_LIMIT_REACHED);
        if gas && e.location.is_none() && self.gas.is_aptos() {
            e.location = Some(ErrorLocation {
                module: n.module.id.long_string(),
                function_name: n.module.function_name(n.def),
                function_index: n.def,
                code_offset: 0,
            });
        }
        e
    }

    /// The stack limit after a callee that ran at once wrote `rets` (live
    /// result slots: the module contract).
    unsafe fn check_push(&self, rets: &[Slot<'_>], sbase: u32, height_after: u32) -> TrapResult<()> {
        if !rets.is_empty() && sbase + height_after > self.max_stack {
            Self::discard_results(rets);
            return Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW)));
        }
        Ok(())
    }

    /// Mixed execution: offers the call to the session's compiled code
    /// with the argument and result slots as they are (a reference argument
    /// as its target address), the call state, the session and the natives'
    /// state of this execution. When it ran, the arguments are consumed and
    /// (on success) the results written; its gas is charged here.
    unsafe fn try_compiled(
        &mut self,
        p: &Prepared,
        args: &Args<'_>,
        rets: &[Slot<'_>],
        sbase: u32,
    ) -> TrapResult<bool> {
        use movejit_runtime::compiled::{CallState, CompiledCall, SeamCall, SeamSlot};
        // Under Aptos's schedule compiled code spends the meter's fuel (its
        // code charges the built-in schedule's prices; another schedule
        // runs interpreted).
        let aptos = match self.gas.aptos_meter() {
            Some(a) if AptosPricing::is_v50(&a.pricing) => Some(a.fuel()),
            Some(_) => return Ok(false),
            None => None,
        };
        let gas_before = aptos.or_else(|| self.gas.remaining());
        // Compiled code charges the meter in place (memory, modules and
        // instantiations; the meter is boxed and untouched until the call
        // returns).
        let aptos_meter = match self.gas.aptos_meter_mut() {
            Some(a) if aptos.is_some() => a as *mut AptosMeter as u64,
            _ => 0,
        };
        let state = CallState {
            depth: self.frames.len() as u64 + 1,
            stack_base: sbase as u64,
            gas_left: gas_before,
            aptos: aptos.is_some(),
            aptos_meter,
        };
        let Some(mut code) = self.s.compiled.take() else { return Ok(false) };
        // An instance known to run interpreted (not compilable, or its code
        // still compiling in the background) costs no seam slots.
        if code.interprets(&p.module.id, p.def, &p.ty_args, &state, &p.compiled_hint) {
            self.s.compiled = Some(code);
            return Ok(false);
        }
        let seam_args: Vec<SeamSlot> = args
            .slots
            .iter()
            .map(|(a, l)| {
                let addr = if matches!(l.shape, Shape::Reference(_)) { mem::read_addr(*a) } else { *a };
                // SAFETY: the call's live argument slot of layout `l` (a
                // reference's: its live target).
                unsafe { SeamSlot::new(addr, l) }
            })
            .collect();
        // SAFETY: the call's result slots, of their layouts, holding no value.
        let seam_rets: Vec<SeamSlot> = rets.iter().map(|(a, l)| unsafe { SeamSlot::new(*a, l) }).collect();
        let call = SeamCall {
            module: &p.module.id,
            fdef: p.def,
            ty_args: &p.ty_args,
            args: &seam_args,
            rets: &seam_rets,
            state,
            hint: Some(&p.compiled_hint),
        };
        let r = code.call(&mut *self.s, &mut self.natives, call);
        self.s.compiled = Some(code);
        // What compiled code spent, charged here. Under Aptos's schedule a
        // charge that did not fit left the fuel below zero: the meter
        // decides between OUT_OF_GAS and EXECUTION_LIMIT_REACHED. The
        // global shims settle on the meter as they run (their I/O draws
        // from the same balance) and leave the fuel left relative to the
        // meter's: what is left to settle is measured from its fuel now.
        let settle = |gas: &mut GasMeter, left: Option<u64>| -> VmResult<()> {
            match (gas_before, left, gas.aptos_meter_mut()) {
                (Some(_), Some(l), Some(a)) => a.charge_compiled(a.fuel().wrapping_sub(l)).map_err(VmError::new),
                (Some(b), Some(l), None) => gas.charge(b.saturating_sub(l)),
                _ => Ok(()),
            }
        };
        match r {
            CompiledCall::NotCompiled => Ok(false),
            CompiledCall::Returned { gas_left } => {
                settle(self.gas, gas_left)?;
                Ok(true)
            }
            CompiledCall::Failed { mut error, gas_left } => {
                // The meter's status of a charge that did not fit, where
                // compiled code stopped.
                if let Err(e) = settle(self.gas, gas_left) {
                    error.status = e.status;
                }
                // Making a frame failed in the compiled code's entry: Aptos
                // locates it at the frame below, this one's caller (none:
                // nowhere).
                if let Some(l) = error.location.as_mut().filter(|l| l.module.is_empty()) {
                    l.module = self.frames.last().map(|f| f.inst.p.module.id.long_string()).unwrap_or_default();
                }
                Err(Box::new(error))
            }
        }
    }

    /// `true` when a call of `p` (operands from `sbase`) runs interpreted
    /// without offering it to compiled code: there is none, or the session's
    /// compiled code already knows the instance runs interpreted (as
    /// [`Self::try_compiled`] asks it; not under an Aptos meter, whose calls
    /// take `try_compiled`).
    #[inline]
    fn known_interpreted(&mut self, p: &Prepared, sbase: u32) -> bool {
        use movejit_runtime::compiled::CallState;
        let Some(code) = self.s.compiled.as_mut() else { return true };
        if self.gas.aptos_meter().is_some() {
            return false;
        }
        let state = CallState {
            depth: self.frames.len() as u64 + 1,
            stack_base: u64::from(sbase),
            gas_left: self.gas.remaining(),
            aptos: false,
            aptos_meter: 0,
        };
        code.interprets(&p.module.id, p.def, &p.ty_args, &state, &p.compiled_hint)
    }

    /// Whether an [`Op::LoopBranch`] in frame `base` of `p` is taken,
    /// counted when it is. Safety: `base` is a live frame of `p` (the
    /// loop's own contract).
    #[inline(never)]
    unsafe fn loop_branch(&mut self, p: &Prepared, base: Addr, cond: Option<(u32, bool)>) -> bool {
        let taken = cond.is_none_or(|(c, when)| mem::read_bool(base.add(c)) == when);
        if taken && p.loop_heat.take() {
            self.hot_loop(p);
        }
        taken
    }

    /// An instance hot in its loops: its compiled code is asked for (the
    /// running call stays interpreted). Nothing is asked in a nested run
    /// (the session's compiled code is running below it).
    #[cold]
    #[inline(never)]
    fn hot_loop(&mut self, p: &Prepared) {
        use movejit_runtime::compiled::CallState;
        // The meter kind decides the code, as in `try_compiled`: another
        // Aptos schedule than the built-in one runs interpreted.
        let aptos = match self.gas.aptos_meter() {
            Some(a) if AptosPricing::is_v50(&a.pricing) => true,
            Some(_) => return,
            None => false,
        };
        let gas_left = if aptos { self.gas.aptos_meter().map(|a| a.fuel()) } else { self.gas.remaining() };
        let state = CallState { depth: self.frames.len() as u64, stack_base: 0, gas_left, aptos, aptos_meter: 0 };
        let Some(mut code) = self.s.compiled.take() else { return };
        code.hot_loop(&*self.s, &p.module.id, p.def, &p.ty_args, &state, &p.compiled_hint);
        self.s.compiled = Some(code);
    }

    fn run(&mut self) -> TrapResult<()> {
        // The meter is fixed for the run: pick the loop once.
        let (metered, aptos) = (self.gas.is_metered(), self.gas.is_aptos());
        let Some(f) = self.frames.last() else { return Ok(()) };
        let mut at = Cursor { inst: f.inst, base: f.base, sbase: f.sbase, pc: f.pc };
        // SAFETY: the top frame is live (see `unwind`) and runs verified
        // code prepared against its layouts.
        let r = unsafe {
            match (metered, aptos) {
                (false, _) => self.exec::<false, false>(&mut at),
                (true, false) => self.exec::<true, false>(&mut at),
                (true, true) => self.exec::<true, true>(&mut at),
            }
        };
        if let Err(mut e) = r {
            if e.location.is_none() {
                e.location = Some(location(at.inst.p, at.pc));
            }
            // Where the failing frame stopped (for `unwind`).
            if let Some(f) = self.frames.last_mut().filter(|f| std::ptr::eq(f.inst.p, at.inst.p)) {
                f.pc = at.pc;
            }
            return Err(e);
        }
        Ok(())
    }

    /// Runs the frames from the top one (`at`) until every frame of the run
    /// has returned; on an error `at` is the running frame and where it
    /// stopped. Calls and returns of interpreted functions switch frames
    /// inside the loop. `METERED`: the meter charges; `APTOS`: it charges
    /// the Aptos schedule. One instance of the loop per kind of meter, so
    /// that unmetered runs carry no gas code and unit-metered runs no Aptos
    /// code (one loop for all three was up to 10% slower unmetered, sieve,
    /// than before Aptos gas).
    unsafe fn exec<const METERED: bool, const APTOS: bool>(&mut self, at: &mut Cursor<'e>) -> TrapResult<()> {
        // The loop's state is in locals (registers), not the caller's
        // memory: reloading the pc per instruction puts a store-to-load
        // round trip on the dispatch chain.
        let (mut me, mut base, mut sbase, mut pc) = (at.inst, at.base, at.sbase, at.pc);
        // SAFETY: the caller's contract.
        let r = unsafe { self.exec_loop::<METERED, APTOS>(&mut me, &mut base, &mut sbase, &mut pc) };
        *at = Cursor { inst: me, base, sbase, pc };
        r
    }

    /// [`exec`](Self::exec)'s loop: an outer loop per frame switch, an
    /// inner one per instruction.
    #[allow(clippy::too_many_lines)]
    #[inline(always)]
    unsafe fn exec_loop<const METERED: bool, const APTOS: bool>(
        &mut self,
        me: &mut Instance<'e>,
        frame_base: &mut Addr,
        frame_sbase: &mut u32,
        pc: &mut usize,
    ) -> TrapResult<()> {
        // Makes the top frame (after a call or a return) the running one,
        // or ends the run when there is none.
        macro_rules! switch_to_top {
            ($frames:lifetime) => {{
                let Some(f) = self.frames.last() else { return Ok(()) };
                (*me, *frame_base, *frame_sbase, *pc) = (f.inst, f.base, f.sbase, f.pc);
                continue $frames;
            }};
        }
        'frames: loop {
            let (p, base, sbase) = (me.p, *frame_base, *frame_sbase);
            // The stack limit can only be reached when the frame's deepest
            // height would pass it.
            let limit_checks = sbase + p.max_height > self.max_stack;
            // By value: a closure over `&base` kept base behind a spilled pointer
            // (two dependent loads per operand).
            let at = move |off: u32| base.add(off);
            // The ops as a slice in registers: through `p.ops` their
            // pointer and length were reloaded after every write to frame
            // memory (raw pointers may alias the `Vec`'s header).
            let ops = p.ops.as_slice();
            loop {
                let op = ops.get(*pc).ok_or_else(|| VmError::new(StatusCode::PC_OVERFLOW))?;
                if APTOS {
                    self.charge_aptos_at(p, *pc, base)?;
                } else if METERED {
                    self.gas.charge_instr(p.opcodes[*pc])?;
                }
                match op {
                    Op::Nop => {}
                    Op::Fail(e) => return Err(e.clone()),
                    Op::Drop { src, l } => mem::drop_value(l, at(*src)),
                    Op::Ret => {
                        self.ret(p, base, *pc)?;
                        switch_to_top!('frames);
                    }
                    Op::BrTrue { c, t } => {
                        if mem::read_bool(at(*c)) {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::BrFalse { c, t } => {
                        if !mem::read_bool(at(*c)) {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::Branch { t } => {
                        *pc = *t as usize;
                        continue;
                    }
                    Op::LoopBranch { t, cond } => {
                        // Out of line: the loop's code stays as it is without
                        // counted loops (executors `interp` and `jit`).
                        if self.loop_branch(p, base, *cond) {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::LdU64 { dst, v } => mem::write_u64(at(*dst), *v),
                    Op::LdBytes { dst, v } => mem::write_from(at(*dst), v),
                    Op::Ld1 { dst, v } => mem::write(at(*dst), [*v]),
                    Op::LdConst { dst, v } => mem::copy_value(v.layout(), Addr::of_value(v), at(*dst))?,
                    Op::MoveBytes { src, dst, n } => mem::move_bytes(at(*src), at(*dst), *n),
                    Op::Move1 { src, dst } => mem::write::<1>(at(*dst), mem::read::<1>(at(*src))),
                    Op::Move8 { src, dst } => mem::write::<8>(at(*dst), mem::read::<8>(at(*src))),
                    Op::Move16 { src, dst } => mem::write::<16>(at(*dst), mem::read::<16>(at(*src))),
                    Op::Move32 { src, dst } => mem::write::<32>(at(*dst), mem::read::<32>(at(*src))),
                    Op::Copy { src, dst, l } => mem::copy_value(l, at(*src), at(*dst))?,
                    Op::MoveOwned { src, dst, n } => {
                        mem::move_bytes(at(*src), at(*dst), *n);
                        mem::zero(at(*src), *n);
                    }
                    Op::StLoc { src, dst, l } => {
                        mem::drop_value(l, at(*dst));
                        mem::move_bytes(at(*src), at(*dst), l.size);
                    }
                    Op::BorrowLoc { local, dst } => mem::write_addr(at(*dst), at(*local)),
                    Op::BorrowField { r, off } => mem::write_addr(at(*r), mem::read_addr(at(*r)).add(*off)),
                    Op::BorrowVariantField { r, variants } => {
                        let t = mem::read_addr(at(*r));
                        let tag = u16::from_le_bytes(mem::read(t));
                        match variants.iter().find(|(v, _)| *v == tag) {
                            Some((_, off)) => mem::write_addr(at(*r), t.add(*off)),
                            None => return Err(variant_mismatch(p, *pc, tag)),
                        }
                    }
                    Op::ReadRef { r, dst, l } => mem::copy_value(l, mem::read_addr(at(*r)), at(*dst))?,
                    Op::ReadRefBytes { r, dst, n } => move_sized(mem::read_addr(at(*r)), at(*dst), *n),
                    Op::WriteRefBytes { r, v, n } => move_sized(at(*v), mem::read_addr(at(*r)), *n),
                    Op::WriteRef { r, v, l } => {
                        let t = mem::read_addr(at(*r));
                        mem::drop_value(l, t);
                        mem::move_bytes(at(*v), t, l.size);
                    }
                    Op::BinU64 { op, a, b } => bin_u64(*op, at(*a), at(*b))?,
                    Op::LdBinU64 { op, a, b, v } => {
                        mem::write_u64(at(*b), *v);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        bin_u64(*op, at(*a), at(*b))?;
                    }
                    Op::CopyBinU64 { op, a, b, src } => {
                        mem::write::<8>(at(*b), mem::read::<8>(at(*src)));
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        bin_u64(*op, at(*a), at(*b))?;
                    }
                    Op::LdBinI64 { op, a, b, v } => {
                        mem::write::<8>(at(*b), v.to_le_bytes());
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let x = i64::from_le_bytes(mem::read(at(*a)));
                        match movejit_runtime::checked_int_op!(*op, x, *v) {
                            Some(r) => mem::write::<8>(at(*a), r.to_le_bytes()),
                            None => {
                                // The shared arithmetic reports the error.
                                let mut x = Value::I64(x);
                                arith::binop_in_place(*op, &mut x, &Value::I64(*v))?;
                                store(&x, at(*a))?;
                            }
                        }
                    }
                    Op::CmpBrU64 { op, a, b, t, when } => {
                        let (x, y) = (mem::read_u64(at(*a)), mem::read_u64(at(*b)));
                        let r = match op {
                            CmpOp::Lt => x < y,
                            CmpOp::Gt => x > y,
                            CmpOp::Le => x <= y,
                            CmpOp::Ge => x >= y,
                        };
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        if r == *when {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::BinU64LL { op, x, y, dst, len } => {
                        let (x, y) = (mem::read_u64(at(*x)), mem::read_u64(at(*y)));
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let r = bin_u64_value(*op, x, y)?;
                        if *len == 4 {
                            self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        }
                        mem::write_u64(at(*dst), r);
                    }
                    Op::BinU64LC { op, x, v, dst, len } => {
                        let x = mem::read_u64(at(*x));
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let r = bin_u64_value(*op, x, *v)?;
                        if *len == 4 {
                            self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        }
                        mem::write_u64(at(*dst), r);
                    }
                    Op::CmpBrU64LL { op, x, y, t, when } => {
                        let r = cmp_u64(*op, mem::read_u64(at(*x)), mem::read_u64(at(*y)));
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        if r == *when {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::CmpBrU64LC { op, x, v, t, when } => {
                        let r = cmp_u64(*op, mem::read_u64(at(*x)), *v);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        if r == *when {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::ReadField { place, off, dst, n } => {
                        let r = place_ref(*place, base);
                        mem::write_addr(at(*dst), r);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let f = r.add(*off);
                        mem::write_addr(at(*dst), f);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        move_sized(f, at(*dst), *n);
                    }
                    Op::ReadElem { place, i, e, dst, n } => {
                        let r = place_ref(*place, base);
                        mem::write_addr(at(*dst), r);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let idx = mem::read_u64(at(*i));
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        let el = mem::vec_borrow(e, r, idx)?;
                        mem::write_addr(at(*dst), el);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        move_sized(el, at(*dst), *n);
                    }
                    Op::Bin { op, k, a, b } => {
                        let (a, b) = (at(*a), at(*b));
                        let done = match k {
                            Kind::U8 => int_bin!(u8, 1, *op, a, b),
                            Kind::U16 => int_bin!(u16, 2, *op, a, b),
                            Kind::U32 => int_bin!(u32, 4, *op, a, b),
                            Kind::U64 => int_bin!(u64, 8, *op, a, b),
                            Kind::U128 => int_bin!(u128, 16, *op, a, b),
                            Kind::U256 => int_bin!(U256, 32, *op, a, b),
                            Kind::I8 => int_bin!(i8, 1, *op, a, b),
                            Kind::I16 => int_bin!(i16, 2, *op, a, b),
                            Kind::I32 => int_bin!(i32, 4, *op, a, b),
                            Kind::I64 => int_bin!(i64, 8, *op, a, b),
                            Kind::I128 => int_bin!(i128, 16, *op, a, b),
                            Kind::I256 => int_bin!(I256, 32, *op, a, b),
                            // Never prepared: the shared arithmetic reports it.
                            Kind::Bool | Kind::Address => None,
                        };
                        if done.is_none() {
                            // The shared arithmetic reports the error.
                            let mut x = load(*k, a);
                            arith::binop_in_place(*op, &mut x, &load(*k, b))?;
                            store(&x, a)?;
                        }
                    }
                    Op::CmpU64 { op, a, b } => {
                        let (x, y) = (mem::read_u64(at(*a)), mem::read_u64(at(*b)));
                        let r = match op {
                            CmpOp::Lt => x < y,
                            CmpOp::Gt => x > y,
                            CmpOp::Le => x <= y,
                            CmpOp::Ge => x >= y,
                        };
                        mem::write_bool(at(*a), r);
                    }
                    Op::Cmp { op, k, a, b } => {
                        let (a, b) = (at(*a), at(*b));
                        let r = match k {
                            Kind::U8 => int_cmp!(u8, 1, *op, a, b),
                            Kind::U16 => int_cmp!(u16, 2, *op, a, b),
                            Kind::U32 => int_cmp!(u32, 4, *op, a, b),
                            Kind::U64 => int_cmp!(u64, 8, *op, a, b),
                            Kind::U128 => int_cmp!(u128, 16, *op, a, b),
                            Kind::U256 => int_cmp!(U256, 32, *op, a, b),
                            Kind::I8 => int_cmp!(i8, 1, *op, a, b),
                            Kind::I16 => int_cmp!(i16, 2, *op, a, b),
                            Kind::I32 => int_cmp!(i32, 4, *op, a, b),
                            Kind::I64 => int_cmp!(i64, 8, *op, a, b),
                            Kind::I128 => int_cmp!(i128, 16, *op, a, b),
                            Kind::I256 => int_cmp!(I256, 32, *op, a, b),
                            Kind::Bool | Kind::Address => return Err(inv("comparison of a non-integer")),
                        };
                        mem::write_bool(a, r);
                    }
                    Op::Eq { a, b, l, neg } => {
                        let eq = mem::equal(l, at(*a), at(*b));
                        mem::drop_value(l, at(*a));
                        mem::drop_value(l, at(*b));
                        mem::write_bool(at(*a), eq != *neg);
                    }
                    Op::EqBytes { a, b, n, neg } => {
                        let eq = equal_bytes(at(*a), at(*b), *n);
                        mem::write_bool(at(*a), eq != *neg);
                    }
                    Op::EqBrBytes { a, b, n, t, when } => {
                        let eq = equal_bytes(at(*a), at(*b), *n);
                        self.second_of_pair::<METERED, APTOS>(p, base, pc, sbase, limit_checks)?;
                        if eq == *when {
                            *pc = *t as usize;
                            continue;
                        }
                    }
                    Op::And { a, b } => mem::write_bool(at(*a), mem::read_bool(at(*a)) && mem::read_bool(at(*b))),
                    Op::Or { a, b } => mem::write_bool(at(*a), mem::read_bool(at(*a)) || mem::read_bool(at(*b))),
                    Op::Not { a } => mem::write_bool(at(*a), !mem::read_bool(at(*a))),
                    Op::Shift { left, k, a, b } => {
                        let n = mem::read::<1>(at(*b))[0];
                        if !shift_in_place(*left, *k, at(*a), n) {
                            let r = arith::shift(*left, load(*k, at(*a)), Value::U8(n))?;
                            store(&r, at(*a))?;
                        }
                    }
                    Op::Cast { from, to, a } => {
                        if !cast_in_place(*from, *to, at(*a)) {
                            let r = arith::cast(load(*from, at(*a)), *to)?;
                            store(&r, at(*a))?;
                        }
                    }
                    Op::Negate { k, a } => {
                        let r = arith::negate(load(*k, at(*a)))?;
                        store(&r, at(*a))?;
                    }
                    Op::Abort { a } => return Err(Box::new(VmError::abort(mem::read_u64(at(*a))))),
                    Op::AbortMsg { code, msg, l } => {
                        let e = l.elem().ok_or_else(|| inv("abort message is not a vector"))?;
                        let v = at(*msg);
                        let bytes = mem::vec_bytes(e, v).to_vec();
                        mem::drop_value(l, v);
                        self.gas.charge_bytes(bytes.len())?;
                        if APTOS {
                            self.charge_aptos_abort_msg(bytes.len())?;
                        }
                        let max = self.s.engine.config.limits.max_abort_message;
                        return Err(Box::new(VmError::abort_with_message(mem::read_u64(at(*code)), bytes, max)));
                    }
                    Op::Call(site) => {
                        let callee = self.s.flat_site_callee(*me, site, *pc)?;
                        let sb = sbase + site.height_below;
                        if APTOS {
                            self.charge_aptos_call_site(&callee, p, *pc, site.args.len())?;
                        }
                        // Fast path: a Move callee, interpreted (no allocation):
                        // no compiled code, or it knows the instance runs
                        // interpreted (`auto` while its code compiles).
                        let interpreted = match callee {
                            Callee::Move(inst) if !APTOS => self.known_interpreted(inst.p, sb),
                            _ => false,
                        };
                        if let (Callee::Move(inst), true) = (callee, interpreted) {
                            let q = inst.p;
                            if self.frames.len() >= self.max_depth {
                                return Err(Box::new(VmError::new(StatusCode::CALL_STACK_OVERFLOW)));
                            }
                            if METERED {
                                self.gas.charge_frame()?;
                            }
                            let (nb, mark) = if q.zero_frame {
                                self.stack.push(q.frame_size)
                            } else {
                                self.stack.push_unzeroed(q.frame_size)
                            };
                            if site.args8 {
                                for ((src, _), (off, _)) in site.args.iter().zip(&q.params) {
                                    mem::write::<8>(nb.add(*off), mem::read::<8>(at(*src)));
                                }
                            } else {
                                for ((src, l), (off, _)) in site.args.iter().zip(&q.params) {
                                    move_sized(at(*src), nb.add(*off), l.size);
                                }
                            }
                            if let Some(f) = self.frames.last_mut() {
                                f.pc = *pc;
                            }
                            self.frames.push(Frame { inst, base: nb, mark, pc: 0, sbase: sb });
                            (*me, *frame_base, *frame_sbase, *pc) = (inst, nb, sb, 0);
                            continue 'frames;
                        }
                        let args: Vec<Slot> = site.args.iter().map(|(o, l)| (at(*o), l)).collect();
                        let rets: Vec<Slot> = site.rets.iter().map(|(o, l)| (at(*o), l)).collect();
                        if let Some(f) = self.frames.last_mut() {
                            f.pc = *pc;
                        }
                        let h = site.height_after - site.height_below;
                        if self.call(
                            &callee,
                            Args { slots: &args, mutable: &site.arg_mut },
                            &rets,
                            sb,
                            h,
                            &site.ty_args,
                        )? {
                            switch_to_top!('frames);
                        }
                    }
                    Op::Pack { dst, size, tag, order, fields } => match order {
                        FieldOrder::Scratch => pack_scratch(&mut self.scratch, base, *dst, *size, *tag, fields),
                        _ => pack_direct(base, *dst, *size, *tag, *order, fields),
                    },
                    Op::Unpack { src, l, tag, order, fields } => {
                        if let Some((t, status)) = tag {
                            let found = u16::from_le_bytes(mem::read(at(*src)));
                            if found != *t {
                                mem::drop_value(l, at(*src));
                                if *status == StatusCode::STRUCT_VARIANT_MISMATCH {
                                    return Err(variant_mismatch(p, *pc, found));
                                }
                                return Err(Box::new(VmError::new(*status)));
                            }
                        }
                        match order {
                            FieldOrder::Scratch => unpack_scratch(&mut self.scratch, base, *src, l.size, fields),
                            _ => unpack_direct(base, *src, *order, fields),
                        }
                    }
                    Op::TestVariant { r, tag } => {
                        let t = mem::read_addr(at(*r));
                        mem::write_bool(at(*r), u16::from_le_bytes(mem::read(t)) == *tag);
                    }
                    Op::UnpackVariantRef { r, tag, fields } => {
                        let t = mem::read_addr(at(*r));
                        if u16::from_le_bytes(mem::read(t)) != *tag {
                            return Err(Box::new(VmError::new(StatusCode::VARIANT_TAG_MISMATCH)));
                        }
                        for (off, dst) in fields.iter() {
                            mem::write_addr(at(*dst), t.add(*off));
                        }
                    }
                    Op::VariantSwitch { r, targets } => {
                        let t = mem::read_addr(at(*r));
                        let tag = u16::from_le_bytes(mem::read(t));
                        *pc = *targets.get(tag as usize).ok_or_else(|| inv("jump table entry"))? as usize;
                        continue;
                    }
                    Op::VecPack { dst, e, elems } => {
                        let mut s = std::mem::take(&mut self.scratch);
                        s.clear();
                        s.resize(elems.len() * e.size as usize, 0);
                        for (i, src) in elems.iter().enumerate() {
                            let at_ = i * e.size as usize;
                            mem::read_into(at(*src), &mut s[at_..at_ + e.size as usize]);
                        }
                        let r = mem::vec_pack(e, at(*dst), &s, elems.len() as u64, self.max_vec);
                        if r.is_err() {
                            // The elements stay where they were (for the unwind).
                            for (i, src) in elems.iter().enumerate() {
                                let at_ = i * e.size as usize;
                                mem::write_from(at(*src), &s[at_..at_ + e.size as usize]);
                            }
                        }
                        self.scratch = s;
                        r?;
                    }
                    Op::VecLen { r } => {
                        let n = mem::vec_len(mem::read_addr(at(*r)));
                        mem::write_u64(at(*r), n);
                    }
                    Op::VecBorrow { r, i, e } => {
                        let idx = mem::read_u64(at(*i));
                        let a = mem::vec_borrow(e, mem::read_addr(at(*r)), idx)?;
                        mem::write_addr(at(*r), a);
                    }
                    Op::VecPush { r, v, e } => mem::vec_push_back(e, mem::read_addr(at(*r)), at(*v), self.max_vec)?,
                    Op::VecPop { r, dst, e } => mem::vec_pop_back(e, mem::read_addr(at(*r)), at(*dst))?,
                    Op::VecUnpack { src, n, e, dsts } if dsts.len() as u64 != *n => {
                        let v = at(*src);
                        if mem::vec_len(v) != *n {
                            let mut none = [];
                            return Err(Box::new(
                                mem::vec_unpack(e, v, *n, &mut none)
                                    .err()
                                    .unwrap_or_else(|| VmError::invariant("vec_unpack")),
                            ));
                        }
                        return Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW)));
                    }
                    Op::VecUnpack { src, n, e, dsts } => {
                        let mut s = std::mem::take(&mut self.scratch);
                        s.clear();
                        s.resize(dsts.len() * e.size as usize, 0);
                        let r = mem::vec_unpack(e, at(*src), *n, &mut s);
                        if r.is_ok() {
                            for (i, dst) in dsts.iter().enumerate() {
                                let o = i * e.size as usize;
                                mem::write_from(at(*dst), &s[o..o + e.size as usize]);
                            }
                        }
                        self.scratch = s;
                        r?;
                    }
                    Op::VecSwap { r, i, j, e } => {
                        mem::vec_swap(e, mem::read_addr(at(*r)), mem::read_u64(at(*i)), mem::read_u64(at(*j)))?
                    }
                    Op::Exists { a, ty } => {
                        let addr = AccountAddress(mem::read(at(*a)));
                        let slot = self.s.flat_global_slot(addr, *ty)?;
                        if APTOS {
                            self.charge_aptos_global(p, *pc, slot)?;
                        }
                        let e = self.s.globals.flat.get(slot).is_some_and(|g| g.is_some());
                        mem::write_bool(at(*a), e);
                    }
                    Op::BorrowGlobal { a, ty, mutable } => {
                        let addr = AccountAddress(mem::read(at(*a)));
                        let slot = self.s.flat_global_slot(addr, *ty)?;
                        if APTOS {
                            self.charge_aptos_global(p, *pc, slot)?;
                        }
                        let g = match self.s.globals.flat.get(slot) {
                            Some(Some(v)) => Addr::of_value(v),
                            _ => return Err(Box::new(VmError::missing_resource(&addr, false))),
                        };
                        if *mutable {
                            self.s.globals.changing(slot);
                        }
                        mem::write_addr(at(*a), g);
                    }
                    Op::MoveFrom { a, ty } => {
                        let addr = AccountAddress(mem::read(at(*a)));
                        let slot = self.s.flat_global_slot(addr, *ty)?;
                        if APTOS {
                            self.charge_aptos_global(p, *pc, slot)?;
                        }
                        if !self.s.globals.flat.get(slot).is_some_and(|g| g.is_some()) {
                            return Err(Box::new(VmError::missing_resource(&addr, true)));
                        }
                        self.s.globals.changing(slot);
                        let v = self.s.globals.flat[slot].take().ok_or_else(|| VmError::invariant("global slot"))?;
                        mem::move_in(v, at(*a));
                    }
                    Op::MoveTo { s, v, ty, l } => {
                        let addr = AccountAddress(mem::read(mem::read_addr(at(*s))));
                        let slot = self.s.flat_global_slot(addr, *ty)?;
                        if APTOS {
                            self.charge_aptos_global(p, *pc, slot)?;
                        }
                        if self.s.globals.flat.get(slot).is_some_and(|g| g.is_some()) {
                            mem::drop_value(l, at(*v));
                            return Err(Box::new(VmError::resource_exists(&addr)));
                        }
                        self.s.globals.changing(slot);
                        self.s.globals.flat[slot] = Some(mem::move_out(l, at(*v)));
                    }
                    Op::PackClosure(site) => {
                        let t = self.s.pack_target(p, *pc, site.handle)?;
                        if self.gas.is_aptos() {
                            self.charge_aptos_pack(&t.module, t.serializable.then_some(&site.captured_tys[..]))?;
                        }
                        let captured = site.captured.iter().map(|(o, l)| mem::move_out(l, at(*o))).collect();
                        let c = FlatClosure {
                            function: t.index,
                            type_args: site.ty_args.clone(),
                            mask: site.mask,
                            captured,
                            serializable: t.serializable,
                        };
                        mem::put_closure(at(site.dst), c);
                    }
                    Op::CallClosure(site) => {
                        let c = mem::take_closure(at(site.closure))
                            .ok_or_else(|| inv("call of an empty function value"))?;
                        if let Some(f) = self.frames.last_mut() {
                            f.pc = *pc;
                        }
                        let sb = sbase + site.height_below;
                        let rets: Vec<Slot> = site.rets.iter().map(|(o, l)| (at(*o), l)).collect();
                        if self.call_closure(c, &site.args, base, &rets, sb, site.height_after - site.height_below)? {
                            switch_to_top!('frames);
                        }
                    }
                }
                if limit_checks && p.grows[*pc] != 0 && sbase + p.grows[*pc] > self.max_stack {
                    self.failed_after = true;
                    return Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW)));
                }
                *pc += 1;
            }
        }
    }

    /// Moves from the first to the second instruction of a fused pair:
    /// the first's stack check, then the second's gas (errors from here on
    /// are located at the second).
    ///
    /// # Safety
    /// `base` is the running frame of `p` (as [`charge_aptos`]).
    #[inline(always)]
    unsafe fn second_of_pair<const METERED: bool, const APTOS: bool>(
        &mut self,
        p: &Prepared,
        base: Addr,
        pc: &mut usize,
        sbase: u32,
        limit_checks: bool,
    ) -> TrapResult<()> {
        if limit_checks && p.grows[*pc] != 0 && sbase + p.grows[*pc] > self.max_stack {
            self.failed_after = true;
            return Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW)));
        }
        *pc += 1;
        if APTOS {
            // SAFETY: the caller's contract.
            unsafe { self.charge_aptos_at(p, *pc, base) }?;
        } else if METERED {
            self.gas.charge_instr(p.opcodes[*pc])?;
        }
        Ok(())
    }

    /// Where Aptos reports an error raised while loading a callee or making
    /// its frame (a dependency charge, the frame's types): at the module of the frame below the caller, with no
    /// function or offset; nowhere when the caller is the entry function.
    /// "Nowhere" is marked by an empty module until the execution ends
    /// ([`unlocated`]).
    fn aptos_load_location(&self) -> ErrorLocation {
        let below = self.frames.len().checked_sub(2).and_then(|i| self.frames.get(i));
        ErrorLocation {
            module: below.map(|f| f.inst.p.module.id.long_string()).unwrap_or_default(),
            function_name: String::new(),
            function_index: 0,
            code_offset: 0,
        }
    }

    /// `e` located as [`aptos_load_location`](Self::aptos_load_location).
    fn at_aptos_load(&self, e: impl Into<Box<VmError>>) -> Box<VmError> {
        let mut e = e.into();
        e.location = Some(self.aptos_load_location());
        e
    }

    /// [`charge_aptos`] at `pc` (kept out of the instruction loop).
    ///
    /// # Safety
    /// As [`charge_aptos`].
    #[cold]
    #[inline(never)]
    unsafe fn charge_aptos_at(&mut self, p: &Prepared, pc: usize, base: Addr) -> TrapResult<()> {
        match self.gas.aptos_meter_mut() {
            // SAFETY: the caller's contract.
            Some(a) => unsafe { charge_aptos(a, p, pc, base) },
            None => Ok(()),
        }
    }

    /// The Aptos charge of `AbortMsg` with a message of `len` bytes.
    #[cold]
    #[inline(never)]
    fn charge_aptos_abort_msg(&mut self, len: usize) -> TrapResult<()> {
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        // The message's heap part (a `vector<u8>` of `len` bytes) is released.
        let heap = a.pricing.sizes.vector_heap(movejit_runtime::scalar::ScalarKind::U8, len as u64);
        a.release_memory(heap);
        let counts = SiteCounts { units: len as u64, ..SiteCounts::default() };
        a.charge_site(Opcode::AbortMsg, counts).map_err(|s| Box::new(VmError::new(s)))
    }

    /// The Aptos charges of `Call` / `CallGeneric` at `pc` with `nargs`
    /// arguments (kept out of the instruction loop).
    #[cold]
    #[inline(never)]
    fn charge_aptos_call_site(&mut self, callee: &Callee<'e>, p: &Prepared, pc: usize, nargs: usize) -> TrapResult<()> {
        let g = &p.gas[pc];
        let counts = SiteCounts { units: nargs as u64, ..g.counts };
        let inst = match instruction(p, pc) {
            Some(Bytecode::CallGeneric(fi)) => Some((g.nodes, (p.instance_id, fi.0 as u64))),
            _ => None,
        };
        self.charge_aptos_call(callee, p.opcodes[pc], counts, inst)
    }

    /// Aptos's charges for calling `callee` with `op`: the caller's first
    /// resolution of a generic instantiation builds its type arguments
    /// (`instantiation`: nodes and key), the callee's module is loaded
    /// once per transaction, then the call's price (arguments, the
    /// callee's locals; a native has none).
    fn charge_aptos_call(
        &mut self,
        callee: &Callee<'e>,
        op: Opcode,
        mut counts: SiteCounts,
        instantiation: Option<(u64, (u32, u64))>,
    ) -> TrapResult<()> {
        let (module, locals) = match callee {
            Callee::Move(i) => (&i.p.module, i.p.local_nodes.len()),
            Callee::Native(n) => (&n.module, 0),
        };
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        if let Some((nodes, key)) = instantiation {
            if a.first_instantiation(key) {
                a.charge_create_ty(nodes).map_err(VmError::new)?;
            }
        }
        if op == Opcode::CallGeneric {
            a.note_generic_call(&module.id);
        }
        if let Err(s) = a.charge_module(&module.id, module.size) {
            return Err(self.at_aptos_load(VmError::new(s)));
        }
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        counts.locals = locals as u64;
        a.charge_site(op, counts).map_err(|s| Box::new(VmError::new(s)))
    }

    /// Packing a closure over a function of `module` loads that module
    /// (Aptos's lazy loader, once per transaction), after the instruction's
    /// own price; a storable closure (`captured`: its captured types) then
    /// builds the captured values' layouts, loading the modules they
    /// reach. Running out of gas there is located at the instruction.
    #[cold]
    #[inline(never)]
    fn charge_aptos_pack(&mut self, module: &LoadedModule, captured: Option<&[Type]>) -> TrapResult<()> {
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        a.charge_module(&module.id, module.size).map_err(VmError::new)?;
        for t in captured.unwrap_or_default() {
            for (id, size) in self.s.layout_modules_cached(t)?.iter() {
                if let Some(a) = self.gas.aptos_meter_mut() {
                    a.charge_module(id, *size).map_err(VmError::new)?;
                }
            }
        }
        Ok(())
    }

    /// The Aptos charges of a global operation at `pc` on `slot`
    /// ([`Session::charge_aptos_global`]).
    #[cold]
    #[inline(never)]
    fn charge_aptos_global(&mut self, p: &Prepared, pc: usize, slot: usize) -> TrapResult<()> {
        let Some(a) = self.gas.aptos_meter_mut() else { return Ok(()) };
        self.s.charge_aptos_global(a, slot, p.opcodes[pc]).map_err(Box::new)
    }

    /// `CallClosure`: the captured values and the provided arguments (frame
    /// slots) interleaved by the mask. The last copy of a closure moves its
    /// captured values into the call; a closure still shared with other
    /// copies passes copies of them (in scratch memory when they fit).
    /// Kept out of `exec`: inlined, its scratch buffer and state cost the
    /// instruction loop registers (arith_i64_loop 20% slower).
    #[inline(never)]
    unsafe fn call_closure(
        &mut self,
        c: Arc<FlatClosure>,
        provided: &[(u32, L)],
        base: Addr,
        rets: &[Slot<'_>],
        sbase: u32,
        height_after: u32,
    ) -> TrapResult<bool> {
        let (owned, shared) = match Arc::try_unwrap(c) {
            Ok(c) => (Some(c), None),
            Err(c) => (None, Some(c)),
        };
        let Some(c) = owned.as_ref().or(shared.as_deref()) else { return Err(inv("closure")) };
        let (callee, mutable) = self.s.closure_callee(c.function, &c.type_args)?;
        let total = provided.len() + c.captured.len();
        if self.gas.is_aptos() {
            let counts = SiteCounts { units: total as u64, ..SiteCounts::default() };
            self.charge_aptos_call(&callee, Opcode::CallClosure, counts, None)?;
        }
        let mut captured = c.captured.iter();
        let mut prov = provided.iter();
        let mut scratch = Scratch([0; SCRATCH_BYTES]);
        let mut used = 0usize;
        // Copies of a shared closure's captured values: in scratch (the
        // first `copies` captured slots), or owned values when they do
        // not fit.
        let mut copies = 0usize;
        let mut spilled: Vec<FlatValue> = Vec::new();
        let captured_at = |i: usize| i < 64 && (c.mask >> i) & 1 == 1;
        // Checked first: nothing below returns before the call.
        if (0..total).filter(|i| captured_at(*i)).count() != c.captured.len() {
            return Err(inv("closure mask does not fit the arguments"));
        }
        // The callee's argument slots: on the stack unless there are many
        // (no allocation per call). Every entry is written below; the
        // initial one only fills the array.
        let fill = c.captured.first().map(FlatValue::layout).or_else(|| provided.first().map(|(_, l)| l));
        let mut inline: [Slot<'_>; INLINE_CLOSURE_ARGS];
        let mut heap: Vec<Slot<'_>>;
        let slots: &mut [Slot<'_>] = match fill {
            None => &mut [],
            Some(f) if total <= INLINE_CLOSURE_ARGS => {
                inline = [(base, f); INLINE_CLOSURE_ARGS];
                &mut inline[..total]
            }
            Some(f) => {
                heap = vec![(base, f); total];
                &mut heap
            }
        };
        for (i, slot) in slots.iter_mut().enumerate() {
            if captured_at(i) {
                let v = captured.next().ok_or_else(|| inv("closure mask does not fit the arguments"))?;
                let l = v.layout();
                if owned.is_some() {
                    *slot = (Addr::of_value(v), l);
                    continue;
                }
                let at = used.div_ceil(l.align.max(1) as usize) * l.align.max(1) as usize;
                if spilled.is_empty() && l.align <= 8 && at + l.size as usize <= SCRATCH_BYTES {
                    let dst = Addr::of_scratch(&mut scratch.0[at..at + l.size as usize]);
                    mem::copy_unchecked(l, Addr::of_value(v), dst);
                    used = at + l.size as usize;
                    copies += 1;
                    *slot = (dst, l);
                } else {
                    let copy = v.copy();
                    *slot = (Addr::of_value(&copy), l);
                    spilled.push(copy);
                }
            } else {
                let (o, l) = prov.next().ok_or_else(|| inv("closure mask does not fit the arguments"))?;
                *slot = (base.add(*o), l);
            }
        }
        let slots: &[Slot<'_>] = slots;
        let args = Args { slots, mutable: &mutable };
        let r = self.call(&callee, args, rets, sbase, height_after, &c.type_args);
        if r.is_err() {
            // Each is in place or dropped: dropping frees the rest (the
            // copies in scratch come first among the captured slots).
            let in_scratch = slots.iter().enumerate().filter(|(i, _)| captured_at(*i)).take(copies);
            for (_, (a, l)) in in_scratch {
                mem::drop_value(l, *a);
            }
        }
        if r.is_ok() {
            // Captured values (or their copies) were moved into the callee
            // (or consumed by the native).
            if let Some(c) = owned {
                c.captured.into_iter().for_each(FlatValue::forget_moved);
            }
            spilled.into_iter().for_each(FlatValue::forget_moved);
        }
        r
    }

    /// `Ret`: results to the caller's slots (or the entry results), drop
    /// the frame's remaining locals, pop it.
    unsafe fn ret(&mut self, p: &Prepared, base: Addr, pc: usize) -> TrapResult<()> {
        let f = self.frames.pop().ok_or_else(|| inv("return without a frame"))?;
        let srcs = p.ret_slots.get(pc).ok_or_else(|| inv("return slots"))?;
        match self.frames.last_mut() {
            Some(caller) => {
                let (rets, rets8) = match caller.inst.p.ops.get(caller.pc) {
                    Some(Op::Call(site)) => (&site.rets, site.rets8),
                    Some(Op::CallClosure(site)) => (&site.rets, false),
                    _ => return Err(inv("return to a non-call")),
                };
                if rets8 {
                    for (src, (dst, _)) in srcs.iter().zip(rets) {
                        mem::write::<8>(caller.base.add(*dst), mem::read::<8>(base.add(*src)));
                    }
                } else {
                    for (src, (dst, l)) in srcs.iter().zip(rets) {
                        move_sized(base.add(*src), caller.base.add(*dst), l.size);
                    }
                }
                caller.pc += 1;
            }
            None => match &self.nested_rets {
                Some(dsts) => {
                    for (src, (dst, n)) in srcs.iter().zip(dsts) {
                        mem::move_bytes(base.add(*src), *dst, *n);
                    }
                }
                None => {
                    for (src, v) in srcs.iter().zip(&self.entry_rets) {
                        mem::move_bytes(base.add(*src), Addr::of_value(v), v.layout().size);
                    }
                }
            },
        }
        for (off, l) in &p.owned_locals {
            mem::drop_value(l, base.add(*off));
        }
        self.stack.pop(f.mark);
        Ok(())
    }
}

impl Session<'_, '_> {
    /// The Aptos charges of global operation `op` on global `slot`, as both
    /// executors make them (compiled code through the session's
    /// `GlobalStore::charge_aptos_global`): on the resource's first read in
    /// the transaction its layout's modules (Aptos's lazy loader, unless a
    /// native loaded the resource before) and its I/O, then the operation.
    pub(crate) fn charge_aptos_global(&mut self, a: &mut AptosMeter, slot: usize, op: Opcode) -> VmResult<()> {
        if !a.has_read(slot) {
            let meta = self.globals.meta.get(slot).ok_or_else(|| VmError::invariant("global slot"))?;
            let (key, ty) = ((meta.address, meta.id), meta.ty);
            if !a.read_by_native(slot, key) {
                // Reading the resource builds its layout: every datatype
                // module it reaches is loaded (and charged, once per
                // transaction) before the read.
                for (id, size) in self.layout_modules_cached(ty)?.iter() {
                    a.charge_module(id, *size).map_err(VmError::new)?;
                }
            }
        }
        let loaded = match self.globals.flat.get(slot) {
            Some(Some(v)) => {
                // SAFETY: an owned global value of its own layout.
                let bytes = unsafe { mem::serialize(v.layout(), Addr::of_value(v)) }?.len() as u64;
                Some((bytes, a.pricing.sizes.heap(v.layout(), v.bytes())))
            }
            _ => None,
        };
        a.charge_resource(slot, loaded).map_err(VmError::new)?;
        a.charge_site(op, SiteCounts::default()).map_err(VmError::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flat::prepare::{pack_order, unpack_order};
    use FieldOrder::{Backward, Forward};

    /// A frame of 256 bytes, each byte distinct from its neighbours.
    fn frame() -> Scratch {
        let mut f = Scratch([0; SCRATCH_BYTES]);
        for (i, b) in f.0.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        f
    }

    /// Packs the prepared order picks (`want`) and packing in place leaves
    /// the same bytes as packing through scratch memory.
    #[test]
    fn direct_pack_matches_scratch() {
        type Fields = &'static [(u32, u32, u32)];
        // (value slot, size, tag, fields (source slot, offset, size), order)
        let cases: &[(u32, u32, Option<u16>, Fields, FieldOrder)] = &[
            // struct { u64, u64, u64 } over three 8-byte slots: in place
            (64, 24, None, &[(64, 0, 8), (72, 8, 8), (80, 16, 8)], Forward),
            // struct { bool, u64 }: padding after the bool zeroed
            (64, 16, None, &[(64, 0, 1), (72, 8, 8)], Forward),
            // struct { u64, u128 } from 32-byte slots: the second moves down
            (64, 24, None, &[(64, 0, 8), (96, 8, 16)], Forward),
            // enum variant { u64, u64 }: the fields move up past the tag
            (64, 24, Some(3), &[(64, 8, 8), (72, 16, 8)], Backward),
            // enum variant { u8, u64 } in a 32-byte enum: tail zeroed
            (64, 32, Some(1), &[(64, 8, 1), (72, 16, 8)], Backward),
            // empty variant of a 24-byte enum
            (64, 24, Some(2), &[], Forward),
            // sources crossing: only scratch memory can do it
            (64, 16, None, &[(72, 0, 8), (64, 8, 8)], FieldOrder::Scratch),
        ];
        for (k, &(dst, size, tag, fields, want)) in cases.iter().enumerate() {
            let order = pack_order(dst, size, tag.is_some(), fields);
            assert_eq!(order, want, "case {k}: order");
            let (mut a, mut b) = (frame(), frame());
            let mut scratch = Vec::new();
            // SAFETY: every slot of the cases lies inside the 256-byte frames.
            unsafe {
                pack_scratch(&mut scratch, Addr::of_scratch(&mut a.0), dst, size, tag, fields);
                if order != FieldOrder::Scratch {
                    pack_direct(Addr::of_scratch(&mut b.0), dst, size, tag, order, fields);
                    assert_eq!(a.0[..], b.0[..], "case {k}: bytes");
                }
            }
        }
    }

    /// As [`direct_pack_matches_scratch`], for unpacking.
    #[test]
    fn direct_unpack_matches_scratch() {
        type Fields = &'static [(u32, u32, u32)];
        // (value slot, size, fields (offset, destination slot, size), order)
        let cases: &[(u32, u32, Fields, FieldOrder)] = &[
            (64, 24, &[(0, 64, 8), (8, 72, 8), (16, 80, 8)], Forward),
            (64, 16, &[(0, 64, 1), (8, 72, 8)], Forward),
            // struct { u64, u128 } into 32-byte slots: the second moves up
            (64, 24, &[(0, 64, 8), (8, 96, 16)], Forward),
            // struct { u8, u8, u64 }: the second lands on the third's bytes
            (64, 16, &[(0, 64, 1), (1, 72, 1), (8, 80, 8)], Backward),
            // enum variant { u64, u64 }: the fields move down over the tag
            (64, 24, &[(8, 64, 8), (16, 72, 8)], Forward),
            (64, 16, &[(8, 64, 8), (0, 72, 8)], FieldOrder::Scratch),
        ];
        for (k, &(src, size, fields, want)) in cases.iter().enumerate() {
            let order = unpack_order(src, fields);
            assert_eq!(order, want, "case {k}: order");
            let (mut a, mut b) = (frame(), frame());
            let mut scratch = Vec::new();
            // SAFETY: every slot of the cases lies inside the 256-byte frames.
            unsafe {
                unpack_scratch(&mut scratch, Addr::of_scratch(&mut a.0), src, size, fields);
                if order != FieldOrder::Scratch {
                    unpack_direct(Addr::of_scratch(&mut b.0), src, order, fields);
                    assert_eq!(a.0[..], b.0[..], "case {k}: bytes");
                }
            }
        }
    }
}
