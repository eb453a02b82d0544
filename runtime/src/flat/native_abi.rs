//! The native ABI over flat values (jit-abi.md, "Native ABI"): a ported
//! native ([`crate::natives::FlatNative`]) reads its arguments and writes
//! its results in the executor's slots through the typed accessors of
//! [`FlatCall`], with no tree-value round trip. Both flat executors reach
//! it through [`super::native_bridge::call_native`], which calls the flat
//! form when a native has one and the tree bridge otherwise.
//!
//! The order is the bridge's: arguments are read first, then consumed
//! (value arguments dropped) when the first result is written, because
//! result slots may overlap argument slots. Reads after that fail, and the
//! borrow checker keeps a borrowed argument (bytes) from living across a
//! result write.
//!
//! The accessors are safe: a `FlatCall` is made only by the executor
//! (`FlatCall::new`), from argument and result slots that are live and of
//! the layouts given for the whole call (the `flat::mem` contract), and
//! they reach no other memory. Natives may see an address (`value_arg`,
//! `arg_ref`), but reading or writing through one is `unsafe`
//! (`flat::mem`): no safe accessor takes an address from a native.

// Unsafe: reads and writes of the call's own slots (module doc).
#![allow(unsafe_code)]

use super::layout::{FlatLayout, Shape};
use super::mem::{self, Addr};
use super::native_bridge::{self, NativeArg};
use super::raw;
use crate::error::{VmError, VmResult};
use crate::natives::NativeContext;
use crate::types::Type;
use crate::values::Value;
use movejit_format::AccountAddress;

/// One call of a flat native: its context (memory for parked values and
/// extensions, gas, types), type arguments, argument slots and result
/// slots.
pub struct FlatCall<'a, 'c> {
    pub cx: NativeContext<'c>,
    pub ty_args: &'a [Type],
    args: &'a [NativeArg<'a>],
    rets: &'a [(Addr, &'a FlatLayout)],
    consumed: bool,
    /// Bit `i`: result `i` holds a value.
    written: u64,
}

fn bad_arg(i: usize) -> VmError {
    VmError::invariant(format!("native argument {i} does not fit the flat native's signature"))
}

fn bad_ret(i: usize) -> VmError {
    VmError::invariant(format!("native result {i} does not fit the flat native's signature"))
}

impl<'a, 'c> FlatCall<'a, 'c> {
    /// A call over `args` and `rets`.
    ///
    /// # Safety
    /// Every slot is live, of its layout, for the whole call (the module's
    /// invariant, which the safe accessors rely on).
    pub(crate) unsafe fn new(
        cx: NativeContext<'c>,
        ty_args: &'a [Type],
        args: &'a [NativeArg<'a>],
        rets: &'a [(Addr, &'a FlatLayout)],
    ) -> Self {
        FlatCall { cx, ty_args, args, rets, consumed: false, written: 0 }
    }

    /// Type argument `i`.
    #[inline]
    pub fn ty_arg(&self, i: usize) -> VmResult<&'a Type> {
        self.ty_args.get(i).ok_or_else(|| VmError::invariant("native: missing type argument"))
    }

    #[inline]
    fn arg(&self, i: usize) -> VmResult<&'a NativeArg<'a>> {
        if self.consumed {
            return Err(VmError::invariant("native argument read after its results were written"));
        }
        self.args.get(i).ok_or_else(|| VmError::invariant("native: missing argument"))
    }

    /// The slot and layout of value argument `i`.
    pub fn value_arg(&self, i: usize) -> VmResult<(Addr, &'a FlatLayout)> {
        let a = self.arg(i)?;
        match a.layout.shape {
            Shape::Reference(_) => Err(bad_arg(i)),
            _ => Ok((a.slot, a.layout)),
        }
    }

    pub fn arg_u64(&self, i: usize) -> VmResult<u64> {
        match self.value_arg(i)? {
            // SAFETY: the call's own live slot, of this layout (module doc).
            (a, FlatLayout { shape: Shape::U64, .. }) => Ok(unsafe { mem::read_u64(a) }),
            _ => Err(bad_arg(i)),
        }
    }

    pub fn arg_bool(&self, i: usize) -> VmResult<bool> {
        match self.value_arg(i)? {
            // SAFETY: as in `arg_u64`.
            (a, FlatLayout { shape: Shape::Bool, .. }) => Ok(unsafe { mem::read_bool(a) }),
            _ => Err(bad_arg(i)),
        }
    }

    /// Address (or signer) argument `i`.
    pub fn arg_address(&self, i: usize) -> VmResult<AccountAddress> {
        match self.value_arg(i)? {
            (a, FlatLayout { shape: Shape::Address | Shape::Signer, .. }) => {
                // SAFETY: as in `arg_u64`.
                Ok(AccountAddress(unsafe { mem::read::<32>(a) }))
            }
            _ => Err(bad_arg(i)),
        }
    }

    /// The bytes of `vector<u8>` argument `i` (a value, or the vector a
    /// reference points to).
    pub fn arg_bytes(&self, i: usize) -> VmResult<&[u8]> {
        self.arg_bytes_at(i, &[])
    }

    /// The bytes of the `vector<u8>` at field path `path` of argument `i`
    /// (a value, or the value a reference points to): `[0]` of a `String`.
    pub fn arg_bytes_at(&self, i: usize, path: &[usize]) -> VmResult<&[u8]> {
        let (a, l) = self.place(i, path)?;
        match &l.shape {
            // SAFETY: a live vector slot (`place`); its buffer is not
            // changed while `self` is borrowed (result writes borrow it
            // mutably).
            Shape::Vector(e) if matches!(e.shape, Shape::U8) => Ok(raw::vec_data(unsafe { mem::bytes(a, 8) }, 1)),
            _ => Err(bad_arg(i)),
        }
    }

    /// Swaps the values `&mut` arguments `i` and `j` point to (of one
    /// layout; ownership goes with the bytes): `mem::swap`.
    pub fn swap_mut_args(&mut self, i: usize, j: usize) -> VmResult<()> {
        let (x, lx) = self.arg_mut_ref(i)?;
        let (y, ly) = self.arg_mut_ref(j)?;
        if !std::ptr::eq(lx, ly) && lx != ly {
            return Err(VmError::invariant("mem::swap of values of different layouts"));
        }
        // SAFETY: two live slots of one layout behind `&mut` arguments,
        // which the verifier keeps from overlapping.
        unsafe {
            let x_bytes = mem::bytes(x, lx.size).to_vec();
            mem::move_bytes(y, x, lx.size);
            mem::write_from(y, &x_bytes);
        }
        Ok(())
    }

    /// `std::cmp::compare`'s order of the values reference arguments `i`
    /// and `j` point to (of one layout), read in place.
    pub fn compare_ref_args(&self, i: usize, j: usize) -> VmResult<std::cmp::Ordering> {
        let (x, lx) = self.arg_ref(i)?;
        let (y, ly) = self.arg_ref(j)?;
        if !std::ptr::eq(lx, ly) && lx != ly {
            return Err(VmError::invariant("cmp::compare of values of different layouts"));
        }
        // SAFETY: two live targets of reference arguments, of layout `lx`
        // (module doc); nothing is written.
        unsafe { mem::compare(lx, x, y) }
    }

    /// The place at field path `path` (indices of nested struct fields) of
    /// argument `i`: in the value, or in the value a reference points to.
    #[inline]
    fn place(&self, i: usize, path: &[usize]) -> VmResult<(Addr, &'a FlatLayout)> {
        let a = self.arg(i)?;
        let (mut a, mut l) = match &a.layout.shape {
            // SAFETY: the call's own live reference slot (module doc); its
            // target is live for the call.
            Shape::Reference(t) => (unsafe { mem::read_addr(a.slot) }, &**t),
            _ => (a.slot, a.layout),
        };
        for &field in path {
            match &l.shape {
                Shape::Struct(fs) => {
                    let f = fs.get(field).ok_or_else(|| bad_arg(i))?;
                    a = a.add(f.offset);
                    l = &f.layout;
                }
                _ => return Err(bad_arg(i)),
            }
        }
        Ok((a, l))
    }

    /// The unsigned integer (u8 to u128) at field path `path` of argument
    /// `i` (a value, or the value a reference points to), and its layout.
    pub fn uint_at(&self, i: usize, path: &[usize]) -> VmResult<(u128, &'a FlatLayout)> {
        let (a, l) = self.place(i, path)?;
        // SAFETY: a live slot of layout `l` (`place`).
        let v = unsafe {
            match l.shape {
                Shape::U8 => mem::read::<1>(a)[0] as u128,
                Shape::U16 => u16::from_le_bytes(mem::read(a)) as u128,
                Shape::U32 => u32::from_le_bytes(mem::read(a)) as u128,
                Shape::U64 => mem::read_u64(a) as u128,
                Shape::U128 => u128::from_le_bytes(mem::read(a)),
                _ => return Err(bad_arg(i)),
            }
        };
        Ok((v, l))
    }

    /// Sets the unsigned integer (u8 to u128) at field path `path` of the
    /// value `&mut` argument `i` points to (`v` must fit its width).
    pub fn set_uint_at(&mut self, i: usize, path: &[usize], v: u128) -> VmResult<()> {
        if !self.arg(i)?.mutable {
            return Err(bad_arg(i));
        }
        let (a, l) = self.place(i, path)?;
        let narrow = || VmError::invariant("native: integer does not fit its field");
        // SAFETY: a live slot of layout `l` (`place`) behind a `&mut`
        // argument: the native may change it.
        unsafe {
            match l.shape {
                Shape::U8 => mem::write(a, u8::try_from(v).map_err(|_| narrow())?.to_le_bytes()),
                Shape::U16 => mem::write(a, u16::try_from(v).map_err(|_| narrow())?.to_le_bytes()),
                Shape::U32 => mem::write(a, u32::try_from(v).map_err(|_| narrow())?.to_le_bytes()),
                Shape::U64 => mem::write_u64(a, u64::try_from(v).map_err(|_| narrow())?),
                Shape::U128 => mem::write(a, v.to_le_bytes()),
                _ => return Err(bad_arg(i)),
            }
        }
        Ok(())
    }

    /// The target of reference argument `i` (`&` or `&mut`) and its layout.
    pub fn arg_ref(&self, i: usize) -> VmResult<(Addr, &'a FlatLayout)> {
        let a = self.arg(i)?;
        match &a.layout.shape {
            // SAFETY: as in `place`.
            Shape::Reference(t) => Ok((unsafe { mem::read_addr(a.slot) }, &**t)),
            _ => Err(bad_arg(i)),
        }
    }

    /// The target of `&mut` argument `i`: the native may change it in place.
    pub fn arg_mut_ref(&self, i: usize) -> VmResult<(Addr, &'a FlatLayout)> {
        if !self.arg(i)?.mutable {
            return Err(bad_arg(i));
        }
        self.arg_ref(i)
    }

    /// The address in field `field` of struct argument `i` (a value, or
    /// the value a reference points to): a `Table`'s handle, an
    /// `Object`'s inner address.
    #[inline]
    pub fn arg_address_field(&self, i: usize, field: usize) -> VmResult<AccountAddress> {
        self.arg_address_at(i, &[field])
    }

    /// The address at field path `path` (indices of nested struct fields)
    /// of argument `i` (a value, or the value a reference points to): e.g.
    /// `[0, 0]` of a Sui `UID { id: ID { bytes } }`.
    #[inline]
    pub fn arg_address_at(&self, i: usize, path: &[usize]) -> VmResult<AccountAddress> {
        match self.place(i, path)? {
            // SAFETY: a live slot of this layout (`place`).
            (a, FlatLayout { shape: Shape::Address, .. }) => Ok(AccountAddress(unsafe { mem::read::<32>(a) })),
            _ => Err(bad_arg(i)),
        }
    }

    /// The abstract size of argument `i` (a value, or the value a reference
    /// points to) under the Aptos schedule: what natives priced by value
    /// size pay for; 0 under `unit`.
    pub fn arg_abstract_size(&self, i: usize) -> VmResult<u64> {
        let (at, l) = self.place(i, &[])?;
        let Some(a) = self.cx.gas.aptos_meter() else { return Ok(0) };
        // SAFETY: a live slot of layout `l` (`place`).
        Ok(unsafe { a.pricing.sizes.value_at(l, at) })
    }

    /// [`arg_abstract_size`](Self::arg_abstract_size) as `eq` and
    /// `cmp::compare` measure what a reference points to
    /// ([`AbstractSizes::dereferenced`](crate::gas::abstract_size::AbstractSizes::dereferenced)).
    pub fn arg_dereferenced_size(&self, i: usize) -> VmResult<u64> {
        let (at, l) = self.place(i, &[])?;
        let Some(a) = self.cx.gas.aptos_meter() else { return Ok(0) };
        // SAFETY: a live slot of layout `l` (`place`).
        Ok(unsafe { a.pricing.sizes.dereferenced_at(l, at) })
    }

    /// The BCS of argument `i` (a value, or the value a reference points
    /// to), byte-exact with the tree encoding.
    pub fn arg_bcs(&self, i: usize) -> VmResult<Vec<u8>> {
        let mut out = Vec::new();
        self.arg_bcs_into(i, &mut out)?;
        Ok(out)
    }

    /// [`arg_bcs`](Self::arg_bcs) appended to `out` (a buffer the native
    /// reuses: no allocation per call).
    pub fn arg_bcs_into(&self, i: usize, out: &mut Vec<u8>) -> VmResult<()> {
        let (at, l) = self.place(i, &[])?;
        // SAFETY: a live slot of layout `l` (`place`).
        super::bcs::serialize_into(out, l, unsafe { mem::bytes(at, l.size) })
    }

    /// The tree value of value argument `i` (a deep copy; for natives that
    /// keep values in tree form, e.g. table entries).
    pub fn arg_tree(&self, i: usize) -> VmResult<Value> {
        let (a, l) = self.value_arg(i)?;
        // SAFETY: the call's own live slot, of layout `l`.
        unsafe { native_bridge::value_at(l, a) }
    }

    /// Drops the value arguments (once); result writes do this first.
    pub fn consume(&mut self) {
        if self.consumed {
            return;
        }
        self.consumed = true;
        for a in self.args {
            if !matches!(a.layout.shape, Shape::Reference(_)) {
                // SAFETY: the call's own live value slot, dropped once
                // (`consumed`); nothing reads it afterwards (`arg`).
                unsafe { mem::drop_value(a.layout, a.slot) };
            }
        }
    }

    /// Result slot `i` after consuming the arguments.
    #[inline]
    fn ret(&mut self, i: usize) -> VmResult<(Addr, &'a FlatLayout)> {
        self.consume();
        let r = *self
            .rets
            .get(i)
            .filter(|_| i < 64)
            .ok_or_else(|| VmError::invariant("native returned more values than declared"))?;
        if self.written & (1 << i) != 0 {
            return Err(VmError::invariant("native result written twice"));
        }
        Ok(r)
    }

    pub fn ret_u64(&mut self, i: usize, v: u64) -> VmResult<()> {
        match self.ret(i)? {
            // SAFETY: the call's own result slot, of this layout (module doc).
            (a, FlatLayout { shape: Shape::U64, .. }) => unsafe { mem::write_u64(a, v) },
            _ => return Err(bad_ret(i)),
        }
        self.written |= 1 << i;
        Ok(())
    }

    pub fn ret_u128(&mut self, i: usize, v: u128) -> VmResult<()> {
        match self.ret(i)? {
            // SAFETY: as in `ret_u64`.
            (a, FlatLayout { shape: Shape::U128, .. }) => unsafe { mem::write(a, v.to_le_bytes()) },
            _ => return Err(bad_ret(i)),
        }
        self.written |= 1 << i;
        Ok(())
    }

    pub fn ret_bool(&mut self, i: usize, v: bool) -> VmResult<()> {
        match self.ret(i)? {
            // SAFETY: as in `ret_u64`.
            (a, FlatLayout { shape: Shape::Bool, .. }) => unsafe { mem::write_bool(a, v) },
            _ => return Err(bad_ret(i)),
        }
        self.written |= 1 << i;
        Ok(())
    }

    /// An address result, or a signer of that address (a signer is one
    /// address at offset 0).
    pub fn ret_address(&mut self, i: usize, v: AccountAddress) -> VmResult<()> {
        match self.ret(i)? {
            // SAFETY: as in `ret_u64`.
            (a, FlatLayout { shape: Shape::Address | Shape::Signer, .. }) => unsafe { mem::write(a, v.0) },
            _ => return Err(bad_ret(i)),
        }
        self.written |= 1 << i;
        Ok(())
    }

    /// A fresh `vector<u8>` holding `bytes` as result `i`.
    pub fn ret_bytes(&mut self, i: usize, bytes: &[u8]) -> VmResult<()> {
        let (a, l) = self.ret(i)?;
        if !matches!(&l.shape, Shape::Vector(e) if matches!(e.shape, Shape::U8)) {
            return Err(bad_ret(i));
        }
        // SAFETY: the call's own result slot, a vector's 8 bytes.
        let slot = unsafe { mem::bytes_mut(a, 8) };
        slot.fill(0);
        self.written |= 1 << i;
        if !bytes.is_empty() {
            let n = bytes.len() as u64;
            raw::vec_reserve(slot, n, 1, 1)?;
            raw::vec_data_mut(slot, 1)[..bytes.len()].copy_from_slice(bytes);
            raw::vec_set_len(slot, n);
        }
        Ok(())
    }

    /// A reference result `i` to the place at field path `path` of the
    /// value reference argument `arg` points to (`&[]`: that value):
    /// `signer::borrow_address`, `object::borrow_uid`.
    pub fn ret_arg_ref(&mut self, i: usize, arg: usize, path: &[usize]) -> VmResult<()> {
        if !matches!(self.arg(arg)?.layout.shape, Shape::Reference(_)) {
            return Err(bad_arg(arg));
        }
        let (target, _) = self.place(arg, path)?;
        // SAFETY: the target of a reference argument outlives the call.
        unsafe { self.ret_ref(i, target) }
    }

    /// Result `i`: a copy of the value at field path `path` of the value
    /// reference argument `arg` points to (a snapshot's field).
    pub fn ret_copy_of_arg(&mut self, i: usize, arg: usize, path: &[usize]) -> VmResult<()> {
        if !matches!(self.arg(arg)?.layout.shape, Shape::Reference(_)) {
            return Err(bad_arg(arg));
        }
        let (src, sl) = self.place(arg, path)?;
        let (a, l) = self.ret(i)?;
        if !std::ptr::eq(sl, l) && sl != l {
            return Err(bad_ret(i));
        }
        // SAFETY: `src` is in the target of a reference argument, live for
        // the call, of layout `l`; `a` is the call's own result slot of
        // layout `l`, zeroed first so that it holds no live value.
        unsafe {
            mem::zero(a, l.size);
            mem::copy_value(l, src, a)?;
        }
        self.written |= 1 << i;
        Ok(())
    }

    /// A reference result `i` to the value at `target`.
    ///
    /// # Safety
    /// `target` is a live slot of the layout the result refers to, and
    /// outlives the reference (an argument's target or a parked value).
    unsafe fn ret_ref(&mut self, i: usize, target: Addr) -> VmResult<()> {
        match self.ret(i)? {
            // SAFETY: the call's own result slot, a reference.
            (a, FlatLayout { shape: Shape::Reference(_), .. }) => unsafe { mem::write_addr(a, target) },
            _ => return Err(bad_ret(i)),
        }
        self.written |= 1 << i;
        Ok(())
    }

    /// A reference result `i` to the value parked in native slot `slot`
    /// (`RefRoot::Native`), made flat on first use.
    pub fn ret_parked_ref(&mut self, i: usize, slot: u32) -> VmResult<()> {
        let (_, l) = self.ret(i)?;
        let Shape::Reference(t) = &l.shape else { return Err(bad_ret(i)) };
        let fv = self.cx.mem.native.flat(slot, Some(t))?;
        let target = Addr::of_value(fv);
        // SAFETY: a parked value lives in the call's memory until the
        // session ends, at its flat layout.
        unsafe { self.ret_ref(i, target) }
    }

    /// Result `i` from a tree value (for values natives keep in tree form).
    pub fn ret_tree(&mut self, i: usize, v: &Value) -> VmResult<()> {
        let (a, l) = self.ret(i)?;
        if matches!(l.shape, Shape::Reference(_)) {
            return Err(bad_ret(i));
        }
        // Written (possibly partly) from here on: cleaned up on error.
        self.written |= 1 << i;
        // SAFETY: the call's own result slot, of layout `l`.
        let slot = unsafe { mem::bytes_mut(a, l.size) };
        slot.fill(0);
        native_bridge::from_value(v, l, slot)
    }

    /// Finishes the call after the native returned `r`: arguments consumed,
    /// every result written; on error no result is left (their slots own
    /// nothing), as the tree bridge leaves them.
    pub(crate) fn finish(mut self, r: VmResult<()>) -> VmResult<()> {
        self.consume();
        let all = if self.rets.len() >= 64 { u64::MAX } else { (1u64 << self.rets.len()) - 1 };
        let r = r.and_then(|()| {
            if self.written == all {
                Ok(())
            } else {
                Err(VmError::invariant("native returned a different number of values"))
            }
        });
        if r.is_err() {
            for (k, (a, l)) in self.rets.iter().enumerate() {
                if self.written & (1 << k) != 0 {
                    // SAFETY: a result slot this call wrote: live, of `l`.
                    unsafe {
                        mem::drop_value(l, *a);
                        mem::zero(*a, l.size);
                    }
                }
            }
        }
        r
    }
}

/// Runs `native` on tree values, for tests that hold a native's two forms
/// to the same results: its flat form (or, when `tree`, its tree form
/// through the bridge) on `args` (value, layout, `Some(mutable)` for a
/// reference to it) with results `rets` (layout, whether a reference to
/// one). Returns the results and the referenced arguments afterwards, as
/// tree values. Natives see the extensions installed on this thread
/// ([`crate::natives::with_extensions`]), else the call's own.
#[allow(clippy::too_many_arguments)]
pub fn run_on_values(
    native: &crate::natives::NativeFunction,
    tree: bool,
    types: &dyn crate::natives::TypeInfo,
    gas: &mut crate::gas::GasMeter,
    ty_args: &[Type],
    args: &[(Value, crate::layout::Layout, Option<bool>)],
    rets: &[(crate::layout::Layout, bool)],
) -> VmResult<(Vec<Value>, Vec<Value>)> {
    use super::native_bridge::{call_native, put_value, to_value, NativeSession};
    use super::FlatValue;
    use std::sync::Arc;
    let flat = |l: &crate::layout::Layout| FlatLayout::from_layout(l, super::MAX_FLAT_DEPTH).map(Arc::new);
    let tree_only;
    let native = if tree {
        let f = native.clone();
        tree_only = crate::natives::NativeFunction::new(move |cx, ty, a| (*f)(cx, ty, a));
        &tree_only
    } else {
        native
    };
    let mut held: Vec<FlatValue> = Vec::with_capacity(args.len());
    for (v, l, _) in args {
        let fv = FlatValue::zeroed(flat(l)?);
        // SAFETY: the zeroed slot of an owned value of its layout.
        unsafe { put_value(v, fv.layout(), Addr::of_value(&fv)) }?;
        held.push(fv);
    }
    let ref_layouts: Vec<Arc<FlatLayout>> =
        held.iter().map(|fv| Arc::new(FlatLayout::reference(fv.layout().clone()))).collect();
    // A reference argument's slot holds its target's address.
    let mut ref_slots: Vec<[u8; 8]> = held.iter().map(|fv| (fv.as_ptr() as usize as u64).to_le_bytes()).collect();
    let ref_addrs: Vec<Addr> = ref_slots.iter_mut().map(|s| Addr::of_scratch(s)).collect();
    let nargs: Vec<NativeArg<'_>> = args
        .iter()
        .enumerate()
        .map(|(i, (_, _, r))| match r {
            Some(m) => NativeArg { layout: &ref_layouts[i], slot: ref_addrs[i], mutable: *m },
            None => NativeArg { layout: held[i].layout(), slot: Addr::of_value(&held[i]), mutable: false },
        })
        .collect();
    let ret_layouts: Vec<Arc<FlatLayout>> = rets
        .iter()
        .map(|(l, is_ref)| flat(l).map(|f| if *is_ref { Arc::new(FlatLayout::reference(f)) } else { f }))
        .collect::<VmResult<_>>()?;
    let out: Vec<FlatValue> = ret_layouts.iter().map(|l| FlatValue::zeroed(l.clone())).collect();
    let nrets: Vec<(Addr, &FlatLayout)> =
        out.iter().zip(&ret_layouts).map(|(v, l)| (Addr::of_value(v), &**l)).collect();
    let mut ns = NativeSession::default();
    // SAFETY: every slot is an owned value (or scratch reference slot to
    // one) of its layout, alive until the end of this function.
    let r = unsafe { call_native(native, &mut ns, gas, types, ty_args, &nargs, &nrets) };
    // Value arguments were consumed: their slots own nothing now.
    for ((_, _, r), fv) in args.iter().zip(&mut held) {
        if r.is_none() {
            fv.bytes_mut().fill(0);
        }
    }
    r?;
    let results = out
        .iter()
        .zip(&ret_layouts)
        .map(|(v, l)| match &l.shape {
            // SAFETY: a reference result points into an argument (held).
            Shape::Reference(t) => unsafe { native_bridge::value_at(t, mem::read_addr(Addr::of_value(v))) },
            _ => to_value(l, v.bytes()),
        })
        .collect::<VmResult<_>>()?;
    let after = args
        .iter()
        .zip(&held)
        .filter(|((_, _, r), _)| r.is_some())
        .map(|(_, fv)| to_value(fv.layout(), fv.bytes()))
        .collect::<VmResult<_>>()?;
    Ok((results, after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gas::GasMeter;
    use crate::layout::Layout;
    use crate::natives::{NativeFunction, NativeRegistry, TypeInfo};
    use std::sync::Arc;

    /// Layouts of primitive types and vectors of them (what the tree forms
    /// under test ask for).
    struct Primitives;
    impl TypeInfo for Primitives {
        fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
            match ty {
                Type::Vector(e) => Ok(Layout::Vector(Box::new(self.layout_of(e)?))),
                t => Layout::primitive(t).ok_or_else(|| VmError::invariant("not primitive")),
            }
        }
    }

    fn run(
        native: &NativeFunction,
        tree: bool,
        ty_args: &[Type],
        args: &[(Value, Layout, Option<bool>)],
        rets: &[(Layout, bool)],
    ) -> VmResult<(Vec<Value>, Vec<Value>)> {
        run_on_values(native, tree, &Primitives, &mut GasMeter::unmetered(), ty_args, args, rets)
    }

    fn bytes_value(b: &[u8]) -> Value {
        Value::Vector(b.iter().map(|x| Value::U8(*x)).collect())
    }

    /// Sui's `type_name` natives (which replace the stdlib's) give the same
    /// results and aborts on their flat forms as on their tree forms.
    #[test]
    fn sui_type_name_flat_forms_agree_with_tree_forms() {
        let r = NativeRegistry::with_sui_stdlib();
        let one = AccountAddress::from_u64(1);
        let id = crate::DatatypeId { address: AccountAddress::from_u64(0xcafe), module: "m".into(), name: "S".into() };
        let datatype = Type::Datatype(Arc::new(id), vec![Type::U8]);
        let name = Layout::Struct(vec![Layout::Struct(vec![Layout::Vector(Box::new(Layout::U8))])]);
        for ty in [datatype, Type::Vector(Box::new(Type::U64))] {
            for f in ["get", "get_with_original_ids", "with_defining_ids", "with_original_ids"] {
                let native = r.get(&one, "type_name", f).expect("registered");
                assert!(native.flat().is_some(), "type_name::{f} is ported");
                let rets = [(name.clone(), false)];
                let flat_run = run(&native, false, std::slice::from_ref(&ty), &[], &rets).map_err(|e| e.to_string());
                assert!(flat_run.is_ok(), "{f}: {flat_run:?}");
                assert_eq!(
                    flat_run,
                    run(&native, true, std::slice::from_ref(&ty), &[], &rets).map_err(|e| e.to_string())
                );
            }
            for f in ["defining_id", "original_id"] {
                let native = r.get(&one, "type_name", f).expect("registered");
                let rets = [(Layout::Address, false)];
                let flat_run = run(&native, false, std::slice::from_ref(&ty), &[], &rets).map_err(|e| format!("{e:?}"));
                let tree_run = run(&native, true, std::slice::from_ref(&ty), &[], &rets).map_err(|e| format!("{e:?}"));
                assert_eq!(flat_run, tree_run, "type_name::{f} of {ty}");
            }
        }
    }

    /// Each ported stdlib native gives the same results, argument values
    /// and errors on its flat form as on its tree form.
    #[test]
    fn flat_forms_agree_with_tree_forms() {
        let r = NativeRegistry::with_stdlib();
        let one = AccountAddress::from_u64(1);
        let bytes = Layout::Vector(Box::new(Layout::U8));
        let words = Layout::Vector(Box::new(Layout::U64));
        let words_value = |xs: &[u64]| Value::Vector(xs.iter().map(|x| Value::U64(*x)).collect());
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, &str, Vec<Type>, Vec<(Value, Layout, Option<bool>)>, Vec<(Layout, bool)>)> = vec![
            (
                "hash",
                "sha3_256",
                vec![],
                vec![(bytes_value(b"abc"), bytes.clone(), None)],
                vec![(bytes.clone(), false)],
            ),
            ("hash", "sha2_256", vec![], vec![(bytes_value(b""), bytes.clone(), None)], vec![(bytes.clone(), false)]),
            (
                "bcs",
                "to_bytes",
                vec![Type::Vector(Box::new(Type::U64))],
                vec![(words_value(&[1, 2]), words.clone(), Some(false))],
                vec![(bytes.clone(), false)],
            ),
            (
                "string",
                "internal_sub_string",
                vec![],
                vec![
                    (bytes_value(b"hello"), bytes.clone(), Some(false)),
                    (Value::U64(1), Layout::U64, None),
                    (Value::U64(3), Layout::U64, None),
                ],
                vec![(bytes.clone(), false)],
            ),
            (
                "string",
                "internal_sub_string",
                vec![],
                vec![
                    (bytes_value(b"hello"), bytes.clone(), Some(false)),
                    (Value::U64(4), Layout::U64, None),
                    (Value::U64(9), Layout::U64, None),
                ],
                vec![(bytes.clone(), false)],
            ),
            (
                "string",
                "internal_index_of",
                vec![],
                vec![
                    (bytes_value(b"hello"), bytes.clone(), Some(false)),
                    (bytes_value(b"ll"), bytes.clone(), Some(false)),
                ],
                vec![(Layout::U64, false)],
            ),
            (
                "string",
                "internal_check_utf8",
                vec![],
                vec![(bytes_value(&[0xff, 0x41]), bytes.clone(), Some(false))],
                vec![(Layout::Bool, false)],
            ),
            (
                "mem",
                "swap",
                vec![],
                vec![
                    (words_value(&[1, 2, 3]), words.clone(), Some(true)),
                    (words_value(&[9]), words.clone(), Some(true)),
                ],
                vec![],
            ),
            (
                "signer",
                "borrow_address",
                vec![],
                vec![(Value::signer(AccountAddress::from_u64(7)), Layout::Signer, Some(false))],
                vec![(Layout::Address, true)],
            ),
        ];
        // cmp::compare over every shape its flat order walks itself or
        // hands to the tree's: both orders of each pair, and equal values.
        let ordering = Layout::Enum(vec![vec![], vec![], vec![]]);
        let pair = Layout::Struct(vec![Layout::U8, words.clone()]);
        let opt = Layout::Enum(vec![vec![], vec![Layout::I64, Layout::U128]]);
        let compared: Vec<(Layout, Value, Value)> = vec![
            (Layout::U64, Value::U64(3), Value::U64(9)),
            (Layout::I64, Value::I64(-5), Value::I64(2)),
            (Layout::U128, Value::U128(1 << 100), Value::U128(7)),
            (Layout::Address, Value::Address(AccountAddress::from_u64(2)), Value::Address(AccountAddress::from_u64(1))),
            (Layout::Signer, Value::signer(AccountAddress::from_u64(2)), Value::signer(AccountAddress::from_u64(3))),
            (bytes.clone(), bytes_value(b"ab"), bytes_value(b"abc")),
            (bytes.clone(), bytes_value(b"b"), bytes_value(b"abc")),
            (words.clone(), words_value(&[1, 2]), words_value(&[1])),
            (words.clone(), words_value(&[0, 9]), words_value(&[1])),
            (
                pair.clone(),
                Value::Struct(vec![Value::U8(1), words_value(&[4])]),
                Value::Struct(vec![Value::U8(1), words_value(&[3, 9])]),
            ),
            (opt.clone(), Value::Variant(0, vec![]), Value::Variant(1, vec![Value::I64(-1), Value::U128(0)])),
            (
                opt.clone(),
                Value::Variant(1, vec![Value::I64(-1), Value::U128(5)]),
                Value::Variant(1, vec![Value::I64(-1), Value::U128(4)]),
            ),
        ];
        let mut cases = cases;
        for (l, x, y) in compared {
            for (p, q) in [(&x, &y), (&y, &x), (&x, &x)] {
                cases.push((
                    "cmp",
                    "compare",
                    vec![Type::U64],
                    vec![(p.clone(), l.clone(), Some(false)), (q.clone(), l.clone(), Some(false))],
                    vec![(ordering.clone(), false)],
                ));
            }
        }
        let live = super::super::live_allocations();
        for (m, f, ty, args, rets) in cases {
            let native = r.get(&one, m, f).expect("registered");
            assert!(native.flat().is_some(), "{m}::{f} is ported");
            let flat_run = run(&native, false, &ty, &args, &rets).map_err(|e| e.to_string());
            let tree_run = run(&native, true, &ty, &args, &rets).map_err(|e| e.to_string());
            assert_eq!(flat_run, tree_run, "{m}::{f}");
            assert!(m != "cmp" || flat_run.is_ok(), "cmp::compare fails: {flat_run:?}");
        }
        assert_eq!(super::super::live_allocations(), live, "no flat value leaks");
    }
}
