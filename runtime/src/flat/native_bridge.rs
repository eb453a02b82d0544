//! Flat values ⇄ tree [`Value`]s, and calling a native (whose API is over
//! tree values, `crate::natives`) with flat arguments: value arguments are
//! converted (and the flat originals dropped: the native consumed them),
//! reference arguments become roots of a [`Memory`] passed as
//! [`Value::Ref`], `&mut` targets are written back after the call, and the
//! results are converted into flat result slots. The interpreter and
//! compiled code call natives through this one entry point; a native with a
//! flat form skips the conversion ([`super::native_abi`]), so the tree path
//! serves only the natives not ported yet (jit-abi.md, section 6.1).
//!
//! The functions that take slot addresses are `unsafe fn` under the
//! `flat::mem` contract: each [`Addr`] is a live slot of the layout given.

// Unsafe: reads and writes at the slot addresses the executors pass
// (`flat::mem` contract).
#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::closure::{to_layout, FlatClosure};
use super::layout::{FlatLayout, Shape};
use super::mem::{self, Addr};
use super::native_abi::FlatCall;
use super::raw;
use super::value::{variant, FlatValue};
use crate::error::{VmError, VmResult};
use crate::gas::GasMeter;
use crate::natives::{NativeContext, NativeFunction, TypeInfo};
use crate::types::Type;
use crate::values::{ClosureValue, Memory, RefRoot, Reference, Value};
use ethnum::{I256, U256};
use movejit_format::AccountAddress;
use std::sync::Arc;

fn arr<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&s[..N]);
    a
}

/// The tree value of the flat value in `slot` (a deep copy).
pub fn to_value(l: &FlatLayout, slot: &[u8]) -> VmResult<Value> {
    Ok(match &l.shape {
        Shape::Bool => Value::Bool(slot[0] != 0),
        Shape::U8 => Value::U8(slot[0]),
        Shape::U16 => Value::U16(u16::from_le_bytes(arr(slot))),
        Shape::U32 => Value::U32(u32::from_le_bytes(arr(slot))),
        Shape::U64 => Value::U64(u64::from_le_bytes(arr(slot))),
        Shape::U128 => Value::U128(u128::from_le_bytes(arr(slot))),
        Shape::U256 => Value::U256(U256::from_le_bytes(arr(slot))),
        Shape::I8 => Value::I8(slot[0] as i8),
        Shape::I16 => Value::I16(i16::from_le_bytes(arr(slot))),
        Shape::I32 => Value::I32(i32::from_le_bytes(arr(slot))),
        Shape::I64 => Value::I64(i64::from_le_bytes(arr(slot))),
        Shape::I128 => Value::I128(i128::from_le_bytes(arr(slot))),
        Shape::I256 => Value::I256(I256::from_le_bytes(arr(slot))),
        Shape::Address => Value::Address(AccountAddress(arr(slot))),
        Shape::Signer => Value::signer(AccountAddress(arr(slot))),
        Shape::Vector(e) => {
            let data = raw::vec_data(slot, e.size);
            if matches!(e.shape, Shape::U8) {
                Value::from_bytes(data)
            } else {
                Value::Vector(data.chunks_exact(e.size as usize).map(|c| to_value(e, c)).collect::<VmResult<_>>()?)
            }
        }
        Shape::Struct(fs) => Value::Struct(
            fs.iter()
                .map(|f| to_value(&f.layout, &slot[f.offset as usize..(f.offset + f.layout.size) as usize]))
                .collect::<VmResult<_>>()?,
        ),
        Shape::Enum(vs) => {
            let fs = variant(vs, slot).ok_or_else(|| VmError::invariant("bad variant tag"))?;
            Value::Variant(
                u16::from_le_bytes(arr(slot)),
                fs.iter()
                    .map(|f| to_value(&f.layout, &slot[f.offset as usize..(f.offset + f.layout.size) as usize]))
                    .collect::<VmResult<_>>()?,
            )
        }
        Shape::Closure => {
            let c = raw::closure_ref(slot).ok_or_else(|| VmError::invariant("empty function value"))?;
            Value::Closure(Box::new(closure_to_value(c)?))
        }
        Shape::Reference(_) => return Err(VmError::invariant("a reference has no value form")),
    })
}

/// The tree form of a flat closure.
pub fn closure_to_value(c: &FlatClosure) -> VmResult<ClosureValue> {
    Ok(ClosureValue {
        function: c.name()?.clone(),
        type_args: c.type_args.clone(),
        mask: c.mask,
        captured: c.captured.iter().map(|v| to_value(v.layout(), v.bytes())).collect::<VmResult<_>>()?,
        captured_layouts: c.captured.iter().map(|v| to_layout(v.layout())).collect(),
        serializable: c.serializable,
    })
}

/// The flat form of a tree closure (captured values laid out from their
/// layouts).
pub fn closure_from_value(c: &ClosureValue) -> VmResult<FlatClosure> {
    if c.captured.len() != c.captured_layouts.len() {
        return Err(VmError::invariant("closure captured layouts"));
    }
    let mut captured = Vec::with_capacity(c.captured.len());
    for (v, l) in c.captured.iter().zip(&c.captured_layouts) {
        let fl = Arc::new(FlatLayout::from_layout(l, usize::MAX)?);
        let mut fv = FlatValue::zeroed(fl.clone());
        from_value(v, &fl, fv.bytes_mut())?;
        captured.push(fv);
    }
    Ok(FlatClosure {
        function: crate::functions::intern(&c.function),
        type_args: c.type_args.clone(),
        mask: c.mask,
        captured,
        serializable: c.serializable,
    })
}

fn mismatch(v: &Value) -> VmError {
    VmError::invariant(format!("value {v:?} does not fit its layout"))
}

/// Writes the flat form of `v` into `slot` (zeroed, holding no live value).
/// On error the slot holds a valid partial value the caller must drop.
pub fn from_value(v: &Value, l: &FlatLayout, slot: &mut [u8]) -> VmResult<()> {
    match (&l.shape, v) {
        (Shape::Bool, Value::Bool(x)) => slot[0] = *x as u8,
        (Shape::U8, Value::U8(x)) => slot[0] = *x,
        (Shape::U16, Value::U16(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::U32, Value::U32(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::U64, Value::U64(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::U128, Value::U128(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::U256, Value::U256(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::I8, Value::I8(x)) => slot[0] = *x as u8,
        (Shape::I16, Value::I16(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::I32, Value::I32(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::I64, Value::I64(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::I128, Value::I128(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::I256, Value::I256(x)) => slot.copy_from_slice(&x.to_le_bytes()),
        (Shape::Address, Value::Address(a)) => slot.copy_from_slice(&a.0),
        (Shape::Signer, v) => {
            let a = v.as_address().map_err(|_| mismatch(v))?;
            slot.copy_from_slice(&a.0)
        }
        (Shape::Vector(e), Value::Vector(xs)) => {
            let n = xs.len() as u64;
            if n == 0 {
                return Ok(());
            }
            raw::vec_reserve(slot, n, e.size, e.align)?;
            if matches!(e.shape, Shape::U8) {
                // Bytes: one pass, no per-element call.
                let data = raw::vec_data_mut(slot, 1);
                for (d, x) in data.iter_mut().zip(xs) {
                    match x {
                        Value::U8(b) => *d = *b,
                        x => return Err(mismatch(x)),
                    }
                }
                raw::vec_set_len(slot, n);
                return Ok(());
            }
            let stride = e.size as usize;
            for (i, x) in xs.iter().enumerate() {
                let at = i * stride;
                let r = from_value(x, e, &mut raw::vec_data_mut(slot, e.size)[at..at + stride]);
                raw::vec_set_len(slot, i as u64 + 1);
                r?;
            }
        }
        (Shape::Struct(fs), Value::Struct(xs)) if fs.len() == xs.len() => {
            for (f, x) in fs.iter().zip(xs) {
                from_value(x, &f.layout, &mut slot[f.offset as usize..(f.offset + f.layout.size) as usize])?;
            }
        }
        (Shape::Enum(vs), Value::Variant(tag, xs)) => {
            let fs = vs.get(*tag as usize).filter(|fs| fs.len() == xs.len()).ok_or_else(|| mismatch(v))?;
            slot[..2].copy_from_slice(&tag.to_le_bytes());
            for (f, x) in fs.iter().zip(xs) {
                from_value(x, &f.layout, &mut slot[f.offset as usize..(f.offset + f.layout.size) as usize])?;
            }
        }
        (Shape::Closure, Value::Closure(c)) => raw::closure_put(slot, std::sync::Arc::new(closure_from_value(c)?)),
        (_, v) => return Err(mismatch(v)),
    }
    Ok(())
}

/// The tree value of the flat value at `a` (`flat::mem` contract).
pub unsafe fn value_at(l: &FlatLayout, a: Addr) -> VmResult<Value> {
    to_value(l, mem::bytes(a, l.size))
}

/// Writes `v` into the slot `a` (holding no live value). On error the slot
/// holds a valid partial value (`flat::mem` contract).
pub unsafe fn put_value(v: &Value, l: &FlatLayout, a: Addr) -> VmResult<()> {
    let slot = mem::bytes_mut(a, l.size);
    slot.fill(0);
    from_value(v, l, slot)
}

/// One argument of a native call: its slot and layout (a reference layout
/// for `&`/`&mut` parameters), and whether it is a `&mut`.
#[derive(Clone, Copy, Debug)]
pub struct NativeArg<'a> {
    pub layout: &'a FlatLayout,
    pub slot: Addr,
    pub mutable: bool,
}

/// Native calls with at most this many arguments (and as many results)
/// build their slot lists on the stack: no allocation per call.
const INLINE_NATIVE_SLOTS: usize = 8;

/// The layout of the unused entries of an inline slot list.
static NO_LAYOUT: FlatLayout =
    FlatLayout { size: 0, align: 1, owns_heap: false, bytewise_eq: true, shape: Shape::Bool };

/// Runs `f` with the argument and result slot lists of one native call,
/// collected from `args` and `rets` (on the stack when they are short).
pub fn with_native_slots<'a, R>(
    args: impl ExactSizeIterator<Item = NativeArg<'a>>,
    rets: impl ExactSizeIterator<Item = (Addr, &'a FlatLayout)>,
    f: impl FnOnce(&[NativeArg<'a>], &[(Addr, &'a FlatLayout)]) -> R,
) -> R {
    let (na, nr) = (args.len(), rets.len());
    if na > INLINE_NATIVE_SLOTS || nr > INLINE_NATIVE_SLOTS {
        let args: Vec<NativeArg<'a>> = args.collect();
        let rets: Vec<(Addr, &'a FlatLayout)> = rets.collect();
        return f(&args, &rets);
    }
    let none = Addr::from_raw(std::ptr::null_mut());
    let mut arg_buf = [NativeArg { layout: &NO_LAYOUT, slot: none, mutable: false }; INLINE_NATIVE_SLOTS];
    let mut ret_buf = [(none, &NO_LAYOUT); INLINE_NATIVE_SLOTS];
    for (d, a) in arg_buf.iter_mut().zip(args) {
        *d = a;
    }
    for (d, r) in ret_buf.iter_mut().zip(rets) {
        *d = r;
    }
    f(&arg_buf[..na], &ret_buf[..nr])
}

/// Native state that lives for one execution: the tree [`Memory`] natives
/// see (its `native` slots hold the values natives park, e.g. borrowed
/// table entries, and the call's extensions). A parked value Move code
/// references lives there as a flat value (made when the reference is
/// handed out); dropping the session sends the parked values home in tree
/// form.
#[derive(Debug, Default)]
pub struct NativeSession {
    mem: Memory,
}

/// Calls `native` with flat arguments; writes its results into `rets`
/// (slots holding no live value; they may overlap the argument slots,
/// which are consumed first). On error each value argument is in place or
/// dropped, and the result slots own nothing. A native with a flat form
/// runs on the slots ([`super::native_abi`]); the others go through tree
/// values.
///
/// # Safety
/// Every argument and result slot is live, of its layout, for the whole
/// call (`flat::mem` contract); a reference argument's target too.
#[allow(clippy::too_many_arguments)]
pub unsafe fn call_native(
    native: &NativeFunction,
    ns: &mut NativeSession,
    gas: &mut GasMeter,
    types: &dyn TypeInfo,
    ty_args: &[Type],
    args: &[NativeArg<'_>],
    rets: &[(Addr, &FlatLayout)],
) -> VmResult<()> {
    if let Some(flat) = native.flat() {
        // SAFETY: the caller's contract: every slot live, of its layout.
        let mut call = unsafe { FlatCall::new(NativeContext { mem: &mut ns.mem, gas, types }, ty_args, args, rets) };
        let r = flat(&mut call);
        return call.finish(r);
    }
    ns.mem.locals.clear();
    let mut values = Vec::with_capacity(args.len());
    // (target layout, target address) of each reference argument, by root.
    let mut roots: Vec<(&Arc<FlatLayout>, Addr)> = Vec::new();
    // (local index in `memory`, target layout, target address) of `&mut` args.
    let mut write_back = Vec::new();
    for a in args {
        match &a.layout.shape {
            Shape::Reference(t) => {
                let target = mem::read_addr(a.slot);
                let idx = ns.mem.locals.len() as u32;
                ns.mem.locals.push(value_at(t, target)?);
                roots.push((t, target));
                if a.mutable {
                    write_back.push((idx as usize, t, target));
                }
                values.push(Value::Ref(Reference::new(RefRoot::Local(idx))));
            }
            _ => {
                values.push(value_at(a.layout, a.slot)?);
                mem::drop_value(a.layout, a.slot);
            }
        }
    }
    let results = {
        let mut cx = NativeContext { mem: &mut ns.mem, gas, types };
        native(&mut cx, ty_args, values)?
    };
    for (idx, t, target) in write_back {
        let v = ns.mem.locals.get(idx).ok_or_else(|| VmError::invariant("native argument root"))?;
        mem::drop_value(t, target);
        put_value(v, t, target)?;
    }
    if results.len() != rets.len() {
        return Err(VmError::invariant("native returned a different number of values"));
    }
    for (k, (v, (a, l))) in results.iter().zip(rets).enumerate() {
        if let Err(e) = put_result(ns, &roots, v, l, *a) {
            // Leave no result behind: the caller's slots then own nothing
            // (results overlap argument slots of other layouts).
            for (a, l) in &rets[..=k] {
                mem::drop_value(l, *a);
                mem::zero(*a, l.size);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Writes one native result into its slot `a` (holding no live value;
/// `flat::mem` contract, as are the roots).
unsafe fn put_result(
    ns: &mut NativeSession,
    roots: &[(&Arc<FlatLayout>, Addr)],
    v: &Value,
    l: &FlatLayout,
    a: Addr,
) -> VmResult<()> {
    match (v, &l.shape) {
        // A reference into an argument (`vector::borrow`,
        // `signer::borrow_address`) or into a parked value (a table
        // entry): the same place in flat memory.
        (Value::Ref(r), Shape::Reference(t)) => {
            let (tl, ta) = match r.root {
                RefRoot::Local(i) => {
                    let (tl, ta) = roots.get(i as usize).ok_or_else(|| VmError::invariant("native reference root"))?;
                    (Arc::clone(tl), *ta)
                }
                RefRoot::Native(i) => {
                    let fv = ns.mem.native.flat(i, r.path.as_slice().is_empty().then_some(t))?;
                    (fv.layout().clone(), Addr::of_value(fv))
                }
            };
            mem::write_addr(a, walk(&tl, ta, r.path.as_slice())?);
        }
        (v, _) => put_value(ns.mem.deref(v)?, l, a)?,
    }
    Ok(())
}

/// The address of the child at `path` below the value of layout `l` at `a`
/// (`flat::mem` contract).
unsafe fn walk(l: &FlatLayout, a: Addr, path: &[u32]) -> VmResult<Addr> {
    let Some((&i, rest)) = path.split_first() else { return Ok(a) };
    let bad = || VmError::invariant("reference path does not fit the layout");
    match &l.shape {
        Shape::Struct(fs) => {
            let f = fs.get(i as usize).ok_or_else(bad)?;
            walk(&f.layout, a.add(f.offset), rest)
        }
        Shape::Enum(vs) => {
            let tag = u16::from_le_bytes(mem::read::<2>(a));
            let f = vs.get(tag as usize).and_then(|fs| fs.get(i as usize)).ok_or_else(bad)?;
            walk(&f.layout, a.add(f.offset), rest)
        }
        Shape::Vector(e) => walk(e, mem::vec_borrow(e, a, i as u64)?, rest),
        // A signer is a struct of one address at offset 0.
        Shape::Signer if i == 0 && rest.is_empty() => Ok(a),
        _ => Err(bad()),
    }
}
