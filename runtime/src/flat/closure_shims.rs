//! Function values in compiled code (jit-abi.md 1.3, 3): the `pack_closure`
//! and `call_closure` shims of the helper table, and the table of compiled
//! closure targets they dispatch through.
//!
//! A closure is the interpreter's [`FlatClosure`] box, built and consumed
//! exactly as the flat interpreter does (`PackClosure` moves the captured
//! operands into a new box; `CallClosure` takes the box out of its slot and
//! moves the captured values and the provided arguments, interleaved by the
//! mask, into the callee's parameters).
//!
//! The code generator describes each site once ([`PackSite`], [`CallSite`],
//! kept alive by the engine as long as its code) and passes its address.
//! A call looks its target up in the engine's [`ClosureTable`] by function
//! index and type arguments (no lock, hash or reference count: one
//! indexed read for a non-generic target, a scan of the function's compiled
//! instances for a generic one): a compiled Move function is entered through its
//! entry trampoline (the JIT's `extern "C" fn(ctx, args, rets) -> u32`), a
//! native through [`super::shims::call_native`]. A target the table does not
//! hold (a closure read from storage or returned by a native, a target
//! that does not compile) runs on the session's interpreter
//! ([`crate::compiled::Interpreter`]) when compiled code runs inside one;
//! outside a session the call fails with [`CLOSURE_NOT_COMPILED`] and the
//! target is recorded, so the engine can compile it before the instance
//! runs again.
//!
//! [`call_interpreted`] is the other way out of compiled code: the engine's
//! stub for an instance it could not compile calls it to run that instance
//! on the session's interpreter.
//!
//! Shim contract as in [`super::shims`]; in addition site pointers point to
//! live sites of the engine that compiled the calling code.

#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::closure::FlatClosure;
use super::context::ExecContext;
use super::host::Host;
use super::layout::{FlatLayout, Shape};
use super::mem::{self, Addr};
use super::value::FlatValue;
use crate::compiled::{CallState, InterpretedCall, InterpretedFunction, SeamSlot};
use crate::error::VmError;
use crate::functions::{FunctionIndex, OnceSlots};
use crate::gas::aptos::{AptosMeter, SiteCounts};
use crate::storage::ModuleId;
use crate::types::Type;
use crate::values::FunctionId;
use movejit_format::{Opcode, StatusCode};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// The status word (Aptos numbering space, unused by Aptos) a closure call
/// records when its target is not in the table: not a Move error, the
/// engine's signal that the run must be redone after compiling the target.
pub const CLOSURE_NOT_COMPILED: u64 = 0x7fff_c105;

/// `call_closure` result: the error was recorded at the calling
/// instruction (the call site adds its location).
pub const FAILED_HERE: u32 = crate::helpers::status::FAILED;
/// `call_closure` result: the callee failed and recorded its own location.
pub const CALLEE_FAILED: u32 = crate::helpers::status::CALLEE_FAILED;

/// One `PackClosure` site: what the interpreter records in the box.
#[derive(Debug)]
pub struct PackSite {
    pub function: FunctionIndex,
    pub type_args: Vec<Type>,
    pub mask: u64,
    /// Layouts of the captured operands, in parameter order.
    pub captured: Vec<Arc<FlatLayout>>,
    /// Public or `#[persistent]` (as `LoadedModule::is_persistent`).
    pub serializable: bool,
    /// The target's module: packing loads it (Aptos's lazy loader,
    /// [`aptos_pack`]).
    pub module: ModuleId,
    /// A serializable closure's captured types, whose layouts packing
    /// builds (loading the modules they reach); empty otherwise.
    pub captured_tys: Vec<Type>,
    /// The last Aptos meter that loaded all those modules
    /// (`AptosMeter::loaded_at`): packing again under it looks none up.
    pub loaded: AtomicU64,
}

/// An entry trampoline: `(ctx, args, rets) -> 0 | 1`; `args` and `rets`
/// hold one pointer per value to a slot of its flat layout (a reference
/// argument: its target).
pub type Entry = unsafe extern "C" fn(*mut ExecContext, *const *mut u8, *const *mut u8) -> u32;

/// How a closure target runs.
#[derive(Clone, Copy, Debug)]
pub enum TargetCode {
    /// A compiled Move function, through its entry trampoline (an
    /// [`Entry`]'s address).
    Move(usize),
    /// A native: a site of the engine's `NativeHost::sites`.
    Native(u64),
}

/// A compiled closure target: its code and signature (instantiated).
#[derive(Debug)]
pub struct Target {
    pub code: TargetCode,
    /// Parameter layouts (reference layouts for `&` / `&mut`).
    pub params: Vec<Arc<FlatLayout>>,
    pub rets: Vec<Arc<FlatLayout>>,
    /// The target's module (Aptos charges its loading at a call).
    pub module: ModuleId,
    /// A Move target's locals' type sizes in nodes (Aptos charges building
    /// them when its frame is made); empty for a native.
    pub local_nodes: Arc<[u64]>,
    /// The last Aptos meter that loaded the target's module
    /// (`AptosMeter::loaded_at`): calls under it look it up no more.
    pub loaded: AtomicU64,
}

/// Captured values a fast entry takes, at most.
pub const FAST_CAPTURES: usize = 4;
/// Bytes per captured value in [`closure_fast`]'s scratch (the widest
/// scalar).
pub const FAST_CAPTURE_STRIDE: usize = 32;

/// The fast way into a non-generic compiled Move target packed with one
/// capture mask (jit-abi.md 1.3): an adapter with the calling convention of
/// a compiled function over the closure's own parameters (those not
/// captured), plus a pointer to the captured scalars after the context.
/// Compiled `CallClosure` sites of the same [`class`](ClosureTable::class_of)
/// call it directly ([`closure_fast`]).
#[derive(Debug)]
pub struct FastTarget {
    /// `extern fn(ctx, captured, provided lanes.., result slots..)`.
    pub adapter: usize,
    pub mask: u64,
    pub class: u32,
    /// Layouts of the captured values, in order: scalars, at most
    /// [`FAST_CAPTURES`].
    pub captured: Vec<Arc<FlatLayout>>,
    /// Under Aptos's schedule: what a call charges once the target's module
    /// is loaded ([`AptosPricing::call_price`](crate::gas::aptos::AptosPricing::call_price)
    /// of `CallClosure` by all the target's parameters and its locals);
    /// `None` (or an engine without Aptos's schedule): no Aptos fast path.
    pub aptos_price: Option<u64>,
    /// Under Aptos's schedule: what `copy_loc` of a closure of this target
    /// charges (heap units, price), the same for every such closure: its
    /// captured values are scalars of the `captured` layouts
    /// ([`AptosPricing::scalar_closure_copy`](crate::gas::aptos::AptosPricing::scalar_closure_copy)).
    pub aptos_copy: Option<(u64, u64)>,
    /// The last Aptos meter under which the target's module was found
    /// loaded (its [`Target::loaded`], copied here by the first fast call
    /// of a transaction that finds it so): later ones read no other slot.
    pub loaded: AtomicU64,
}

/// What a [`FastTarget`] and a call site must agree on for the site to call
/// the adapter: per parameter then per result, the layout's shape kind,
/// size, alignment and whether it owns heap memory.
type ClassKey = (Vec<AbiKey>, Vec<AbiKey>);
type AbiKey = (std::mem::Discriminant<Shape>, u32, u32, bool);

fn abi_keys(ls: &[Arc<FlatLayout>]) -> Vec<AbiKey> {
    ls.iter().map(|l| (std::mem::discriminant(&l.shape), l.size, l.align, l.owns_heap)).collect()
}

/// The closure targets an engine has compiled, by function index and type
/// arguments. Written by the engine between runs, read by `call_closure`
/// while code runs (on any thread).
#[derive(Debug, Default)]
pub struct ClosureTable {
    /// Non-generic targets: written once, read without locking.
    plain: OnceSlots<Target>,
    /// Generic instances by function index, each list append-only and
    /// read without locking, hashing or reference counts (a scan of the
    /// function's instances compiled so far).
    generic: OnceSlots<OnceSlots<(Vec<Type>, Target)>>,
    /// Fast entries of non-generic Move targets (written once, read
    /// without locking).
    fast: OnceSlots<FastTarget>,
    /// Signature classes, numbered as the engine compiles (never per call).
    classes: Mutex<HashMap<ClassKey, u32>>,
    misses: Mutex<Vec<(FunctionIndex, Vec<Type>)>>,
}

impl ClosureTable {
    #[inline]
    pub fn get(&self, f: FunctionIndex, type_args: &[Type]) -> Option<&Target> {
        if type_args.is_empty() {
            return self.plain.get(f.as_u32());
        }
        let instances = self.generic.get(f.as_u32())?;
        (0..).map_while(|i| instances.get(i)).find(|(a, _)| a == type_args).map(|(_, t)| t)
    }

    pub fn contains(&self, f: FunctionIndex, type_args: &[Type]) -> bool {
        self.get(f, type_args).is_some()
    }

    /// Publishes a target; the first one published for an instance stays
    /// (calls may be using it).
    pub fn insert(&self, f: FunctionIndex, type_args: Vec<Type>, target: Target) {
        if type_args.is_empty() {
            self.plain.set(f.as_u32(), target);
            return;
        }
        if self.generic.get(f.as_u32()).is_none() {
            self.generic.set(f.as_u32(), OnceSlots::default());
        }
        let Some(instances) = self.generic.get(f.as_u32()) else { return };
        // The engine is the only writer (between runs): the first free
        // slot, unless the instance is there already.
        for i in 0.. {
            match instances.get(i) {
                Some((a, _)) if *a == type_args => return,
                Some(_) => continue,
                None => {
                    instances.set(i, (type_args, target));
                    return;
                }
            }
        }
    }

    pub fn has_fast(&self, f: FunctionIndex) -> bool {
        self.fast.get(f.as_u32()).is_some()
    }

    /// Publishes the fast entry of non-generic target `f` (the first one
    /// stays).
    pub fn insert_fast(&self, f: FunctionIndex, target: FastTarget) {
        self.fast.set(f.as_u32(), target);
    }

    /// The number of the signature class of a function type (its own
    /// parameters and results): equal numbers, same calling convention and
    /// layouts as far as [`call_closure`] checks them.
    pub fn class_of(&self, params: &[Arc<FlatLayout>], rets: &[Arc<FlatLayout>]) -> u32 {
        let key: ClassKey = (abi_keys(params), abi_keys(rets));
        let mut classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        let n = classes.len() as u32;
        *classes.entry(key).or_insert(n)
    }

    /// Targets calls found missing since the last call.
    pub fn take_misses(&self) -> Vec<(FunctionIndex, Vec<Type>)> {
        self.misses.lock().map(|mut m| std::mem::take(&mut *m)).unwrap_or_default()
    }

    fn miss(&self, f: FunctionIndex, type_args: &[Type]) {
        if let Ok(mut m) = self.misses.lock() {
            if !m.iter().any(|(g, a)| *g == f && a == type_args) {
                m.push((f, type_args.to_vec()));
            }
        }
    }
}

/// One `CallClosure` site.
#[derive(Debug)]
pub struct CallSite {
    pub table: Arc<ClosureTable>,
    /// The signature class of the called function type
    /// ([`ClosureTable::class_of`]).
    pub class: u32,
    /// Layouts of the provided (not captured) arguments, in order (a
    /// reference layout for `&` / `&mut`).
    pub provided: Vec<Arc<FlatLayout>>,
    pub rets: Vec<Arc<FlatLayout>>,
    /// Operand-stack values the calling frame holds below the arguments.
    pub held: u64,
    /// Gas charged before entering a Move target (the frame) or a native.
    pub per_frame: u64,
    pub native_base: u64,
    /// The calling code is metered (gas left in `ExecContext::gas_left`).
    pub metered: bool,
    /// The closure operand is a local's (a `CopyLoc` just before): the
    /// call leaves it in place and passes copies of its captured values.
    pub borrowed: bool,
    /// The calling code charges Aptos's schedule: the call settles it on
    /// the meter and makes the interpreter's closure-call charges there
    /// ([`call_closure`]).
    pub aptos: bool,
}

/// Argument pointers a call passes without allocating.
const INLINE_ARGS: usize = 16;

/// `PackClosure`: moves the captured operands (one pointer per captured
/// value, in parameter order) into a new closure box stored at `dst`.
pub unsafe extern "C" fn pack_closure(
    _ctx: *mut ExecContext,
    site: *const PackSite,
    captured: *const *mut u8,
    dst: *mut u8,
) -> u32 {
    // SAFETY: shim contract: a live site; `captured` holds one pointer per
    // captured layout, each to a live slot of it; `dst` is an empty
    // function-value slot.
    let site = unsafe { &*site };
    let ptrs = unsafe { std::slice::from_raw_parts(captured, site.captured.len()) };
    let captured = site.captured.iter().zip(ptrs).map(|(l, p)| mem::move_out(l, Addr::from_raw(*p))).collect();
    let c = FlatClosure {
        function: site.function,
        type_args: site.type_args.clone(),
        mask: site.mask,
        captured,
        serializable: site.serializable,
    };
    mem::put_closure(Addr::from_raw(dst), c);
    0
}

/// The meter behind `c.aptos_meter`, with compiled code's spending settled
/// on it: `c.gas_left` plus `rest` (the segment's charges after the
/// instruction, which its charge on entry included) is the fuel left.
///
/// # Safety
/// A nonzero `c.aptos_meter` is the address of the live meter, which
/// nothing else touches while compiled code runs.
unsafe fn settled_meter<'m>(c: &ExecContext, rest: u64) -> Result<&'m mut AptosMeter, VmError> {
    // SAFETY: the caller's contract.
    let meter = unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }
        .ok_or_else(|| VmError::invariant("Aptos-metered code without a meter"))?;
    let spent = meter.fuel().wrapping_sub(c.gas_left.wrapping_add(rest));
    meter.charge_compiled(spent).map_err(VmError::new)?;
    Ok(meter)
}

/// The session compiled code runs in.
///
/// # Safety
/// `c.host` is 0 or a live [`Host`], whose session nothing else borrows
/// while a shim runs.
unsafe fn session_of<'s>(c: &ExecContext) -> Result<&'s dyn crate::compiled::SessionHost, VmError> {
    // SAFETY: the caller's contract.
    let host = unsafe { (c.host as *const Host<'s>).as_ref() };
    // SAFETY: as above.
    host.and_then(|h| h.session).map(|s| unsafe { &*s }).ok_or_else(|| VmError::invariant("no session"))
}

/// `PackClosure` / `PackClosureGeneric` under Aptos's schedule, after its
/// constant charges (memory, price, types) and before the captured values
/// move: what only the transaction fixes, as the interpreter's
/// `charge_aptos_pack` charges it. Compiled code's spending is settled on
/// the meter first (`rest` as in [`settled_meter`]), then the target's
/// module is loaded (once per transaction) and, for a serializable
/// closure, the modules its captured values' layouts reach. Returns 0 with
/// `ctx.gas_left` the meter's fuel less `rest`, or 1: the error (of the
/// instruction) recorded, `ctx.gas_left` the meter's fuel.
pub unsafe extern "C" fn aptos_pack(ctx: *mut ExecContext, site: *const PackSite, rest: u64) -> u32 {
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed; a
    // live site.
    let (Some(c), site) = (unsafe { ctx.as_mut() }, unsafe { &*site }) else { return FAILED_HERE };
    // SAFETY: shim contract (`settled_meter`, `session_of`).
    let meter = match unsafe { settled_meter(c, rest) } {
        Ok(m) => m,
        Err(e) => return c.fail(&e),
    };
    if meter.loaded_at(&site.loaded) {
        c.gas_left = meter.fuel().wrapping_sub(rest);
        return 0;
    }
    // SAFETY: as above.
    let charged = unsafe { session_of(c) }.and_then(|s| {
        let size = s.module_size(&site.module)?.ok_or_else(|| VmError::invariant("closure target's module"))?;
        meter.charge_module(&site.module, size).map_err(VmError::new)?;
        for t in &site.captured_tys {
            for (id, size) in s.layout_modules(t)?.iter() {
                meter.charge_module(id, *size).map_err(VmError::new)?;
            }
        }
        meter.mark_loaded(&site.loaded);
        Ok(())
    });
    match charged {
        Ok(()) => {
            c.gas_left = meter.fuel().wrapping_sub(rest);
            0
        }
        Err(e) => {
            c.gas_left = meter.fuel();
            c.fail(&e)
        }
    }
}

/// Aptos's charges of a closure call of compiled Move target `t` with
/// `total` arguments, as the interpreter's `CallClosure` makes them
/// (`charge_aptos_call`, then the frame): compiled code's spending settled
/// on the meter (a `CallClosure` ends its segment: nothing after it is
/// precharged), the target's module loaded (once per transaction), the
/// call's price (arguments, the target's locals), the frame's locals'
/// types, then the depth check. On success `cx.gas_left` is the meter's
/// fuel; on failure too, and the error says whether Aptos locates it as a
/// loading error (`true`: `ExecContext::AT_LOAD`) or at the instruction.
///
/// # Safety
/// As [`settled_meter`] and [`session_of`].
unsafe fn aptos_closure_call(cx: &mut ExecContext, t: &Target, total: usize) -> Result<(), (VmError, bool)> {
    let at = |e: VmError| (e, false);
    // SAFETY: the caller's contract.
    let meter = unsafe { settled_meter(cx, 0) }.map_err(at)?;
    let r = (|| {
        if !meter.loaded_at(&t.loaded) {
            // SAFETY: the caller's contract.
            let size = unsafe { session_of(cx) }
                .and_then(|s| s.module_size(&t.module)?.ok_or_else(|| VmError::invariant("closure target's module")))
                .map_err(at)?;
            meter.charge_module(&t.module, size).map_err(|s| (VmError::new(s), true))?;
            meter.mark_loaded(&t.loaded);
        }
        let counts = SiteCounts { units: total as u64, locals: t.local_nodes.len() as u64, ty_args: 0 };
        meter.charge_site(Opcode::CallClosure, counts).map_err(|s| at(VmError::new(s)))?;
        for n in t.local_nodes.iter() {
            meter.charge_create_ty(*n).map_err(|s| (VmError::new(s), true))?;
        }
        if cx.depth >= cx.max_depth {
            return Err(at(VmError::new(StatusCode::CALL_STACK_OVERFLOW)));
        }
        Ok(())
    })();
    cx.gas_left = meter.fuel();
    r
}

/// `CallClosure`'s fast path at a site whose closure operand stays in its
/// slot (`CallSite::borrowed`): when the closure at `closure` names a
/// non-generic target with a [`FastTarget`] for its mask and the site's
/// class, copies its captured values into `caps` ([`FAST_CAPTURES`] slots
/// of [`FAST_CAPTURE_STRIDE`] bytes) and returns the adapter's address;
/// else 0 (the site then calls [`call_closure`]). Changes nothing else:
/// the site does the depth check and the frame charge, as for a direct
/// call.
pub unsafe extern "C" fn closure_fast(
    _ctx: *mut ExecContext,
    site: *const CallSite,
    closure: *const u8,
    caps: *mut u8,
) -> u64 {
    // SAFETY: shim contract: a live site; `closure` is a function-value
    // slot; `caps` is the site's scratch.
    let site = unsafe { &*site };
    match unsafe { fast_target(site, closure, caps) } {
        Some((t, _)) => t.adapter as u64,
        None => 0,
    }
}

/// What [`aptos_closure_fast`] returns when the closure's copy failed
/// (its error recorded); any other value is 0 or an adapter's address.
pub const COPY_FAILED: u64 = 1;

/// Under Aptos's schedule, `copy_loc` of the closure local at `closure`
/// (layout `l`) right before a `CallClosure` from it (`site`, a borrowed
/// site), then that call's fast path, in one trip out of compiled code.
///
/// The copy is charged first, as [`aptos_copy`](super::host::aptos_copy)
/// charges it with the same `rest` (the segment's charges after the copy,
/// which its charge on entry included): its memory is used, then its price
/// taken from `ctx.gas_left`. For a closure of a [`FastTarget`] those are
/// constants ([`FastTarget::aptos_copy`]); other closures are measured.
/// A copy that does not fit returns [`COPY_FAILED`], the error recorded
/// and `ctx.gas_left` as `aptos_copy` leaves it.
///
/// Then, as [`closure_fast`], the adapter, only when the call's charges are
/// constants that fit, and charged then: the target's module was loaded
/// by this transaction's meter (its [`Target::loaded`] stamp) and
/// `ctx.gas_left` covers the target's [`FastTarget::aptos_price`], which is
/// taken from it (compiled code's spending, settled on the meter later:
/// the charges the slow path makes one by one, all execution gas, each of
/// which fits); the site then checks the depth, as the slow path does
/// after those charges. Else 0, the call charged nothing: the site calls
/// [`call_closure`], which makes the same charges on the meter (and fails
/// where one does not fit).
pub unsafe extern "C" fn aptos_closure_fast(
    ctx: *mut ExecContext,
    site: *const CallSite,
    l: *const FlatLayout,
    closure: *const u8,
    caps: *mut u8,
    rest: u64,
) -> u64 {
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed; a
    // live site; `l` is a layout the engine keeps alive; `closure` is a
    // function-value slot of it; `caps` is the site's scratch.
    let (Some(cx), site, l) = (unsafe { ctx.as_mut() }, unsafe { &*site }, unsafe { &*l }) else {
        return COPY_FAILED;
    };
    // SAFETY: as above.
    let fast = unsafe { fast_target(site, closure, caps) };
    // SAFETY: a nonzero `aptos_meter` is the live meter of the run, which
    // nothing else touches while compiled code runs (jit-abi.md 5.1).
    let Some(meter) = (unsafe { (cx.aptos_meter as *mut AptosMeter).as_mut() }) else {
        cx.fail(&VmError::invariant("Aptos-metered code without a meter"));
        return COPY_FAILED;
    };
    let fuel = cx.gas_left.wrapping_add(rest);
    let copied = match fast.and_then(|(t, _)| t.aptos_copy) {
        Some((heap, price)) => meter.charge_sized_copy(heap, price, fuel),
        None => {
            // SAFETY: `closure` holds a value of layout `l` (above).
            let bytes = unsafe { std::slice::from_raw_parts(closure, l.size as usize) };
            meter.charge_copy(Opcode::CopyLoc, l, bytes, fuel)
        }
    };
    match copied {
        Ok(price) => cx.gas_left = cx.gas_left.wrapping_sub(price),
        Err(f) => {
            cx.gas_left = fuel.wrapping_sub(f.spent);
            cx.fail(&VmError::new(f.status));
            return COPY_FAILED;
        }
    }
    let Some((t, function)) = fast else { return 0 };
    let Some(price) = t.aptos_price else { return 0 };
    if !meter.loaded_at(&t.loaded) {
        // The first fast call of the transaction: the module counts as
        // loaded once `call_closure` marked the target (it charges the
        // module's loading, or finds it loaded, then marks it).
        let Some(target) = site.table.plain.get(function.as_u32()) else { return 0 };
        if !meter.loaded_at(&target.loaded) {
            return 0;
        }
        meter.mark_loaded(&t.loaded);
    }
    if cx.gas_left < price {
        return 0;
    }
    cx.gas_left -= price;
    t.adapter as u64
}

/// The fast entry the closure at `closure` may be called through at
/// `site`, with the closure's function, its captured values copied to
/// `caps` ([`closure_fast`]'s conditions); `None` for the slow path.
///
/// # Safety
/// `closure` is a function-value slot; `caps` holds [`FAST_CAPTURES`]
/// slots of [`FAST_CAPTURE_STRIDE`] bytes.
#[inline(always)]
unsafe fn fast_target(site: &CallSite, closure: *const u8, caps: *mut u8) -> Option<(&FastTarget, FunctionIndex)> {
    let c = mem::closure(Addr::from_raw(closure.cast_mut()))?;
    if !c.type_args.is_empty() {
        return None;
    }
    let t = site.table.fast.get(c.function.as_u32())?;
    if t.mask != c.mask || t.class != site.class || t.captured.len() != c.captured.len() {
        return None;
    }
    for (k, (v, want)) in c.captured.iter().zip(&t.captured).enumerate() {
        if !fits(want, v.layout()) || v.layout().owns_heap {
            return None;
        }
        // SAFETY: caller's contract: `caps` holds `FAST_CAPTURES` slots of
        // `FAST_CAPTURE_STRIDE` bytes (`k` is below `t.captured.len()`,
        // at most `FAST_CAPTURES`); the value's buffer holds its size.
        let copied = unsafe { copy_scalar(v.as_ptr(), caps.add(k * FAST_CAPTURE_STRIDE), v.layout().size) };
        if !copied {
            return None;
        }
    }
    Some((t, c.function))
}

/// Copies a scalar of `size` bytes (a fixed-size move each: no `memcpy`
/// call on the hot path); `false` for a size no scalar has.
///
/// # Safety
/// `src` holds `size` readable bytes; `dst` has room for
/// [`FAST_CAPTURE_STRIDE`] bytes; they do not overlap.
#[inline(always)]
unsafe fn copy_scalar(src: *const u8, dst: *mut u8, size: u32) -> bool {
    // SAFETY: caller's contract, for each size.
    unsafe {
        match size {
            1 => std::ptr::copy_nonoverlapping(src, dst, 1),
            2 => std::ptr::copy_nonoverlapping(src, dst, 2),
            4 => std::ptr::copy_nonoverlapping(src, dst, 4),
            8 => std::ptr::copy_nonoverlapping(src, dst, 8),
            16 => std::ptr::copy_nonoverlapping(src, dst, 16),
            32 => std::ptr::copy_nonoverlapping(src, dst, 32),
            _ => return false,
        }
    }
    true
}

fn is_ref(l: &FlatLayout) -> bool {
    matches!(l.shape, Shape::Reference(_))
}

/// Same flat representation (a target's layouts come from the engine's
/// cache; captured values may carry layouts built elsewhere).
fn fits(a: &Arc<FlatLayout>, b: &Arc<FlatLayout>) -> bool {
    Arc::ptr_eq(a, b)
        || (a.size == b.size && a.align == b.align && a.owns_heap == b.owns_heap && is_ref(a) == is_ref(b))
}

/// Drops the provided value arguments of a call that did not happen (the
/// callee would have owned them).
///
/// # Safety
/// Shim contract: `ptrs` are the call's live argument slots, of the site's
/// layouts.
unsafe fn drop_provided(site: &CallSite, ptrs: &[*mut u8]) {
    for (l, p) in site.provided.iter().zip(ptrs) {
        if !is_ref(l) {
            // SAFETY: a live value slot of layout `l` (above).
            unsafe { mem::drop_value(l, Addr::from_raw(*p)) };
        }
    }
}

/// Captured values a borrowed call copies without allocating (bytes).
const INLINE_COPIES: usize = 256;

/// 8-aligned scratch for the copies of captured values.
#[repr(C, align(8))]
struct Scratch([u8; INLINE_COPIES]);

/// `CallClosure`: calls the closure in the function-value slot `closure`
/// with the captured values and the provided arguments interleaved by the
/// mask. The closure is taken out of its slot (moved into the call), or,
/// at a site whose operand is a `CopyLoc` of a local (`CallSite::borrowed`),
/// left there while copies of its captured values are passed: the same
/// values the interpreter's copy would pass, without copying the box.
/// `slots` holds one pointer per provided argument (a value slot,
/// consumed; for a reference, a slot holding the target's address) then
/// one per result (slots holding no live value). Returns 0,
/// [`FAILED_HERE`] or [`CALLEE_FAILED`].
///
/// As the interpreter: a Move target first checks the call depth
/// (`CALL_STACK_OVERFLOW`) then charges the frame, and runs with the
/// operand-stack values of this frame below the arguments counted; a native
/// target charges `native_base`, then runs (its results' stack check is the
/// call site's, as for every native call).
pub unsafe extern "C" fn call_closure(
    ctx: *mut ExecContext,
    site: *const CallSite,
    closure: *mut u8,
    slots: *const *mut u8,
) -> u32 {
    // SAFETY: shim contract: a live site; `slots` holds one pointer per
    // provided argument and result of the site.
    let site = unsafe { &*site };
    let np = site.provided.len();
    let ptrs = unsafe { std::slice::from_raw_parts(slots, np + site.rets.len()) };
    let (provided, rets) = ptrs.split_at(np);
    let fail = |e: VmError| -> u32 {
        // SAFETY: shim contract: `ctx` is live; no other borrow is active.
        match unsafe { ctx.as_mut() } {
            Some(c) => c.fail(&e),
            None => FAILED_HERE,
        }
    };
    // The closure moves into the call; when it was the last copy its
    // captured values move on to the callee (`owned`), else copies of them
    // do (as at a borrowed site, which leaves the closure in its slot).
    let taken = if site.borrowed { None } else { mem::take_closure(Addr::from_raw(closure)) };
    let (owned, shared) = match taken.map(Arc::try_unwrap) {
        Some(Ok(c)) => (Some(c), None),
        Some(Err(shared)) => (None, Some(shared)),
        None => (None, None),
    };
    let c: &FlatClosure = match (&owned, &shared) {
        (Some(c), _) => c,
        (None, Some(c)) => c,
        (None, None) => match mem::closure(Addr::from_raw(closure)).filter(|_| site.borrowed) {
            Some(c) => c,
            None => {
                drop_provided(site, provided);
                return fail(VmError::invariant("call of an empty function value"));
            }
        },
    };
    // Under Aptos's schedule a native target runs on the interpreter,
    // which charges and meters natives as it does everywhere.
    let compiled = site.table.get(c.function, &c.type_args);
    let Some(t) = compiled.filter(|t| !(site.aptos && matches!(t.code, TargetCode::Native(_)))) else {
        // SAFETY: as in `fail`.
        if unsafe { has_interpreter(ctx) } {
            // SAFETY: shim contract (as above).
            let r = unsafe { call_closure_interpreted(ctx, site, c, owned.is_some(), provided, rets) };
            // The interpreter consumed the box's captured values.
            if let Some(b) = owned {
                b.captured.into_iter().for_each(FlatValue::forget_moved);
            }
            return r;
        }
        site.table.miss(c.function, &c.type_args);
        drop_provided(site, provided);
        // SAFETY: as in `fail`.
        if let Some(c) = unsafe { ctx.as_mut() } {
            c.status = CLOSURE_NOT_COMPILED;
            c.abort_code = 0;
            c.flags &= !ExecContext::HAS_SUB_STATUS;
        }
        return FAILED_HERE;
    };
    let mask = c.mask;
    // Parameters in order: captured where the mask says so, else provided.
    let total = np + c.captured.len();
    // Room for the arguments, then (for a native) the result slots.
    let n_all = total + rets.len();
    let mut inline = [std::ptr::null_mut::<u8>(); INLINE_ARGS];
    let mut heap = Vec::new();
    let all: &mut [*mut u8] = if n_all <= INLINE_ARGS {
        &mut inline[..n_all]
    } else {
        heap.resize(n_all, std::ptr::null_mut());
        &mut heap
    };
    let captured_at = |i: usize| i < 64 && (mask >> i) & 1 == 1;
    let mut shape_ok = t.params.len() == total && t.rets.len() == site.rets.len();
    let (mut cap, mut prov) = (c.captured.iter(), provided.iter().zip(&site.provided));
    for (i, (slot, want)) in all.iter_mut().zip(&t.params).enumerate() {
        let next = if captured_at(i) {
            cap.next().map(|v| (v.as_ptr(), v.layout()))
        } else {
            prov.next().map(|(p, l)| (*p, l))
        };
        match next {
            Some((p, l)) if fits(want, l) => *slot = p,
            _ => shape_ok = false,
        }
    }
    shape_ok = shape_ok
        && cap.next().is_none()
        && prov.next().is_none()
        && t.rets.iter().zip(&site.rets).all(|(a, b)| fits(a, b));
    if !shape_ok {
        drop_provided(site, provided);
        return fail(VmError::invariant("closure does not fit the call's function type"));
    }
    // The frame (or native) charge and the depth check, before anything
    // is handed over.
    // SAFETY: as in `fail`; the borrow ends before the callee runs.
    let Some(cx) = (unsafe { ctx.as_mut() }) else { return FAILED_HERE };
    if site.aptos {
        // SAFETY: shim contract (`aptos_closure_call`).
        if let Err((e, at_load)) = unsafe { aptos_closure_call(cx, t, total) } {
            drop_provided(site, provided);
            let r = cx.fail(&e);
            if at_load {
                cx.flags |= ExecContext::AT_LOAD;
            }
            return r;
        }
    }
    let check = match t.code {
        TargetCode::Native(_) if cx.gas_left < site.native_base => Err(StatusCode::OUT_OF_GAS),
        TargetCode::Native(_) => {
            cx.gas_left -= site.native_base;
            Ok(())
        }
        TargetCode::Move(_) if cx.depth >= cx.max_depth => Err(StatusCode::CALL_STACK_OVERFLOW),
        TargetCode::Move(_) if cx.gas_left < site.per_frame => Err(StatusCode::OUT_OF_GAS),
        TargetCode::Move(_) => {
            cx.gas_left -= site.per_frame;
            Ok(())
        }
    };
    if let Err(status) = check {
        if status == StatusCode::OUT_OF_GAS {
            cx.gas_left = 0;
        }
        drop_provided(site, provided);
        return fail(VmError::new(status));
    }
    // A borrowed closure passes copies of its captured values (the callee
    // owns them): in scratch memory when they fit, else as owned values.
    let mut scratch = std::mem::MaybeUninit::<Scratch>::uninit();
    let mut spilled: Vec<FlatValue> = Vec::new();
    if owned.is_none() {
        let base = scratch.as_mut_ptr().cast::<u8>();
        let mut used = 0usize;
        let mut cap = c.captured.iter();
        for (i, slot) in all.iter_mut().enumerate().take(total) {
            if !captured_at(i) {
                continue;
            }
            let Some(v) = cap.next() else { break };
            let (size, align) = (v.layout().size as usize, v.layout().align.max(1) as usize);
            let at = used.div_ceil(align) * align;
            if align <= 8 && at + size <= INLINE_COPIES {
                // SAFETY: `at + size` lies inside `scratch`, 8-aligned at
                // its start, so `base + at` is aligned for the value.
                let dst = unsafe { base.add(at) };
                if v.layout().owns_heap {
                    // SAFETY: as above; zeroed first, so the slice is
                    // initialised memory.
                    let dst = unsafe {
                        dst.write_bytes(0, size);
                        std::slice::from_raw_parts_mut(dst, size)
                    };
                    super::value::copy_into_unchecked(v.layout(), v.bytes(), dst);
                } else {
                    // SAFETY: as above; a value owning no heap memory is
                    // copied by its bytes (`v` is a different allocation).
                    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), dst, size) };
                }
                *slot = dst;
                used = at + size;
            } else {
                let copy = v.copy();
                *slot = copy.as_ptr();
                spilled.push(copy);
            }
        }
    }
    let r = match t.code {
        TargetCode::Native(native_site) => {
            all[total..].copy_from_slice(rets);
            // SAFETY: shim contract of `call_native`: one live slot per
            // parameter (a reference: a slot holding its target) then one
            // empty slot per result, as the native site's layouts say
            // (checked above against the target's signature).
            let r = unsafe { super::shims::call_native(ctx, native_site, all.as_ptr()) };
            if r == 0 {
                0
            } else {
                FAILED_HERE
            }
        }
        TargetCode::Move(entry) => {
            // SAFETY: as in `fail`.
            let (depth, base) = match unsafe { ctx.as_mut() } {
                Some(cx) => {
                    let saved = (cx.depth, cx.stack_base);
                    cx.depth += 1;
                    cx.stack_base += site.held;
                    saved
                }
                None => return FAILED_HERE,
            };
            // The trampoline takes a reference argument as its target.
            for (p, l) in all.iter_mut().zip(&t.params) {
                if is_ref(l) {
                    // SAFETY: a reference argument's slot holds its target's
                    // address (the call site's contract).
                    *p = unsafe { (*p as *const *mut u8).read() };
                }
            }
            // SAFETY: `entry` is a finalized trampoline of the target's
            // instance (the table holds only those of live code); `all`
            // and `rets` hold one pointer per parameter and result, each
            // to a live slot of the layout the trampoline expects
            // (checked above); in-memory arguments are handed over.
            let flag = unsafe {
                let entry = std::mem::transmute::<usize, Entry>(entry);
                entry(ctx, all.as_ptr(), rets.as_ptr())
            };
            // SAFETY: as in `fail`.
            if let Some(cx) = unsafe { ctx.as_mut() } {
                cx.depth = depth;
                cx.stack_base = base;
            }
            if flag == 0 {
                0
            } else {
                CALLEE_FAILED
            }
        }
    };
    // The captured values (or their copies) were moved into the callee, or
    // consumed by the native bridge, whether or not it succeeded.
    if !spilled.is_empty() {
        spilled.into_iter().for_each(FlatValue::forget_moved);
    }
    if let Some(b) = owned {
        b.captured.into_iter().for_each(FlatValue::forget_moved);
    }
    r
}

/// A callee compiled code runs on the session's interpreter (an instance
/// the engine could not compile): the engine's stub for it passes this
/// site to [`call_interpreted`].
#[derive(Debug)]
pub struct InterpSite {
    pub module: ModuleId,
    pub fdef: u16,
    pub ty_args: Vec<Type>,
    /// Parameter layouts (reference layouts for `&` / `&mut`).
    pub params: Vec<Arc<FlatLayout>>,
    pub rets: Vec<Arc<FlatLayout>>,
    /// The calling code is metered (`ExecContext::gas_left` is the gas left).
    pub metered: bool,
    /// The callee's module in the engine's numbering: the location of an
    /// error the interpreter raised before entering it.
    pub module_number: u32,
}

/// Whether compiled code runs inside a session whose interpreter it can
/// call.
///
/// # Safety
/// `ctx` is live; its `host` is 0 or a live [`Host`].
unsafe fn has_interpreter(ctx: *mut ExecContext) -> bool {
    // SAFETY: caller's contract.
    let Some(cx) = (unsafe { ctx.as_ref() }) else { return false };
    // SAFETY: caller's contract.
    unsafe { (cx.host as *const Host<'_>).as_ref() }.is_some_and(|h| h.session.is_some())
}

/// Runs `call` on the session's interpreter and settles the context: gas
/// left, and on failure the error (status words; the full error, with its
/// location and message, in `interpreted_error` when it was raised inside
/// interpreted code). Returns 0, [`FAILED_HERE`] (an error of the call
/// itself, which the calling site locates) or [`CALLEE_FAILED`].
///
/// # Safety
/// `ctx` is live and not otherwise borrowed; its `host` is 0 or a live
/// [`Host`]; the slots follow [`SeamSlot`]'s contract.
unsafe fn interpret(ctx: *mut ExecContext, call: InterpretedCall<'_>, metered: bool) -> u32 {
    // SAFETY: caller's contract.
    let Some(cx) = (unsafe { ctx.as_mut() }) else { return FAILED_HERE };
    // SAFETY: caller's contract.
    let host = unsafe { (cx.host as *mut Host<'_>).as_mut() };
    let Some((host, session)) = host.and_then(|h| h.session.map(|s| (h, s))) else {
        return cx.fail(&VmError::invariant("compiled code calls the interpreter outside a session"));
    };
    // Under Aptos's schedule the interpreter charges the meter itself:
    // compiled code's spending is settled on it first (a closure call ends
    // its segment: nothing after it is precharged).
    let aptos = call.state.aptos_meter != 0;
    if aptos {
        // SAFETY: caller's contract (`settled_meter`).
        if let Err(e) = unsafe { settled_meter(cx, 0) } {
            return cx.fail(&e);
        }
    }
    let state = CallState { gas_left: (metered && !aptos).then_some(cx.gas_left), ..call.state };
    // SAFETY: the session outlives the execution and nothing else borrows
    // it while this shim runs (the interpreter that lent it to compiled
    // code is suspended below); the nested run borrows the natives' state
    // the host holds for this execution, and nothing else of the host.
    let out = unsafe { &mut *session }.interpret(&mut *host.native.session, InterpretedCall { state, ..call });
    // The interpreter may have moved resources compiled code had borrowed.
    host.storage_may_have_changed();
    if aptos {
        // SAFETY: caller's contract (as `settled_meter`).
        if let Some(m) = unsafe { (cx.aptos_meter as *const AptosMeter).as_ref() } {
            cx.gas_left = m.fuel();
        }
    } else if metered {
        if let Some(g) = out.gas_left {
            cx.gas_left = g;
        }
    }
    match out.result {
        Ok(()) => 0,
        Err(mut e) => {
            cx.fail(&e);
            // Aptos's loading errors: making the callee's frame (located at
            // the module below the calling frame), or one the callee made
            // as the nested run's bottom frame (located at the calling
            // frame's module, which the calling site records).
            if out.at_load {
                cx.flags |= ExecContext::AT_LOAD;
                return FAILED_HERE;
            }
            if e.location.as_ref().is_some_and(|l| l.module.is_empty()) {
                e.location = None;
                cx.flags |= ExecContext::MODULE_ONLY;
                return FAILED_HERE;
            }
            if e.location.is_some() {
                cx.interpreted_error = Some(Box::new(e));
                CALLEE_FAILED
            } else {
                FAILED_HERE
            }
        }
    }
}

/// The stub of an instance the engine could not compile: runs it on the
/// session's interpreter with the calling code's state (the caller did the
/// depth check and the frame charge, and set `depth` and `stack_base` for
/// the callee). `slots` holds one pointer per parameter (a value slot,
/// consumed; for a reference, its target) then one per result (an empty
/// slot; a reference result receives its address). Returns 0 or 1 (the
/// error recorded with its location).
pub unsafe extern "C" fn call_interpreted(
    ctx: *mut ExecContext,
    site: *const InterpSite,
    slots: *const *mut u8,
) -> u32 {
    // SAFETY: shim contract: a live site; `slots` holds one pointer per
    // parameter and result of the site.
    let site = unsafe { &*site };
    let np = site.params.len();
    let ptrs = unsafe { std::slice::from_raw_parts(slots, np + site.rets.len()) };
    // SAFETY: shim contract: each pointer is the site's parameter or
    // result slot of its layout (a reference parameter's: its target).
    /// # Safety
    /// `p` points to a slot of layout `l` as `SeamSlot::new` requires.
    unsafe fn slot<'s>((p, l): (&*mut u8, &'s Arc<FlatLayout>)) -> SeamSlot<'s> {
        // SAFETY: the caller's contract.
        unsafe { SeamSlot::new(Addr::from_raw(*p), l) }
    }
    // SAFETY: see above.
    let args: Vec<SeamSlot<'_>> = ptrs[..np].iter().zip(&site.params).map(|x| unsafe { slot(x) }).collect();
    // SAFETY: see above.
    let rets: Vec<SeamSlot<'_>> = ptrs[np..].iter().zip(&site.rets).map(|x| unsafe { slot(x) }).collect();
    // SAFETY: shim contract.
    let Some(cx) = (unsafe { ctx.as_mut() }) else { return 1 };
    let state = CallState { depth: cx.depth, stack_base: cx.stack_base, gas_left: None, aptos: false, aptos_meter: 0 };
    let call = InterpretedCall {
        module: &site.module,
        function: InterpretedFunction::Entered(site.fdef),
        ty_args: &site.ty_args,
        args: &args,
        rets: &rets,
        state,
    };
    // SAFETY: shim contract; `cx` is not used while `interpret` runs.
    match unsafe { interpret(ctx, call, site.metered) } {
        0 => 0,
        FAILED_HERE => {
            // Raised before the callee's first instruction: located there.
            // SAFETY: shim contract.
            if let Some(cx) = unsafe { ctx.as_mut() } {
                cx.module = site.module_number;
                cx.function = site.fdef as u32;
                cx.code_offset = 0;
            }
            1
        }
        _ => 1,
    }
}

/// `CallClosure` of a target compiled code does not have, on the session's
/// interpreter: the captured values (the box's own when `owned`, else
/// copies) and the provided arguments interleaved by the mask. The
/// interpreter does the call's checks and charges as its `CallClosure`
/// would. Returns as [`call_closure`].
///
/// # Safety
/// As [`call_closure`], with a session present ([`has_interpreter`]).
unsafe fn call_closure_interpreted(
    ctx: *mut ExecContext,
    site: &CallSite,
    c: &FlatClosure,
    owned: bool,
    provided: &[*mut u8],
    rets: &[*mut u8],
) -> u32 {
    let total = provided.len() + c.captured.len();
    let captured_at = |i: usize| i < 64 && (c.mask >> i) & 1 == 1;
    let mut copies: Vec<FlatValue> = Vec::new();
    let mut args = Vec::with_capacity(total);
    let (mut cap, mut prov) = (c.captured.iter(), provided.iter().zip(&site.provided));
    for i in 0..total {
        let slot = if captured_at(i) {
            cap.next().map(|v| {
                if owned {
                    // SAFETY: the box's own captured value, live for the call.
                    unsafe { SeamSlot::new(Addr::of_value(v), v.layout()) }
                } else {
                    let copy = v.copy();
                    // The copy's layout is the captured value's (borrowed
                    // from it: `copy` moves into `copies`, its heap slot
                    // staying where it is, live for the call).
                    // SAFETY: as above.
                    let s = unsafe { SeamSlot::new(Addr::of_value(&copy), v.layout()) };
                    copies.push(copy);
                    s
                }
            })
        } else {
            prov.next().map(|(p, l)| {
                // A reference argument's slot holds its target's address.
                let addr = if is_ref(l) { mem::read_addr(Addr::from_raw(*p)) } else { Addr::from_raw(*p) };
                // SAFETY: shim contract: a provided argument's live slot
                // (a reference's: its target) of the site's layout.
                unsafe { SeamSlot::new(addr, l) }
            })
        };
        match slot {
            Some(s) => args.push(s),
            None => {
                drop_provided(site, provided);
                // SAFETY: shim contract.
                return match unsafe { ctx.as_mut() } {
                    Some(cx) => cx.fail(&VmError::invariant("closure mask does not fit the arguments")),
                    None => FAILED_HERE,
                };
            }
        }
    }
    // SAFETY: shim contract: the site's result slots, of its layouts.
    let rets: Vec<SeamSlot> =
        rets.iter().zip(&site.rets).map(|(p, l)| unsafe { SeamSlot::new(Addr::from_raw(*p), l) }).collect();
    // SAFETY: shim contract.
    let Some(cx) = (unsafe { ctx.as_ref() }) else { return FAILED_HERE };
    let state = CallState {
        depth: cx.depth,
        stack_base: cx.stack_base + site.held,
        gas_left: None,
        aptos: site.aptos,
        aptos_meter: if site.aptos { cx.aptos_meter } else { 0 },
    };
    let metered = site.metered;
    let name = match c.name() {
        Ok(n) => n,
        Err(e) => {
            drop_provided(site, provided);
            // SAFETY: shim contract.
            return unsafe { ctx.as_mut() }.map_or(FAILED_HERE, |cx| cx.fail(&e));
        }
    };
    let call = InterpretedCall {
        module: &name.module,
        function: InterpretedFunction::Called(c.function),
        ty_args: &c.type_args,
        args: &args,
        rets: &rets,
        state,
    };
    // SAFETY: shim contract; `cx` is not used while `interpret` runs.
    let r = unsafe { interpret(ctx, call, metered) };
    // The captured values (or their copies) were consumed by the call,
    // whether or not it succeeded; the caller forgets an owned box's.
    copies.into_iter().for_each(FlatValue::forget_moved);
    r
}

/// Whether a value of `l` (or, for a reference, its target) can hold a
/// closure.
pub fn may_hold_closure(l: &FlatLayout) -> bool {
    match &l.shape {
        Shape::Closure => true,
        Shape::Vector(e) | Shape::Reference(e) => may_hold_closure(e),
        Shape::Struct(fs) => fs.iter().any(|f| may_hold_closure(&f.layout)),
        Shape::Enum(vs) => vs.iter().flatten().any(|f| may_hold_closure(&f.layout)),
        _ => false,
    }
}

/// The function and type arguments of every closure in the value of seam
/// slot `s` (a reference argument: its target; captured values included),
/// for engines that compile the targets of closures arriving from outside
/// their code.
pub fn closures_in(s: &crate::compiled::SeamSlot<'_>, out: &mut Vec<(FunctionId, Vec<Type>)>) {
    let l = match &s.layout().shape {
        Shape::Reference(t) => t,
        _ => s.layout(),
    };
    if may_hold_closure(l) {
        // SAFETY: a seam slot's address is a live slot of its layout, or
        // of a reference layout's target (`SeamSlot::new`'s contract); so is
        // every field, element, captured value and target reached below.
        unsafe { closures_at(l, s.addr(), out) }
    }
}

/// [`closures_in`] at a slot of layout `l` (`flat::mem` contract).
unsafe fn closures_at(l: &FlatLayout, a: Addr, out: &mut Vec<(FunctionId, Vec<Type>)>) {
    match &l.shape {
        Shape::Closure => {
            if let Some(c) = mem::closure(a) {
                if let Ok(name) = c.name() {
                    if !out.iter().any(|(f, t)| f == name && *t == c.type_args) {
                        out.push((name.clone(), c.type_args.clone()));
                    }
                }
                for v in &c.captured {
                    closures_at(v.layout(), Addr::of_value(v), out);
                }
            }
        }
        Shape::Vector(e) if may_hold_closure(e) => {
            for i in 0..mem::vec_len(a) {
                if let Ok(p) = mem::vec_borrow(e, a, i) {
                    closures_at(e, p, out);
                }
            }
        }
        Shape::Struct(fs) => {
            for f in fs.iter().filter(|f| may_hold_closure(&f.layout)) {
                closures_at(&f.layout, a.add(f.offset), out);
            }
        }
        Shape::Enum(vs) => {
            let tag = u16::from_le_bytes(mem::read::<2>(a));
            for f in vs.get(tag as usize).into_iter().flatten().filter(|f| may_hold_closure(&f.layout)) {
                closures_at(&f.layout, a.add(f.offset), out);
            }
        }
        Shape::Reference(t) if may_hold_closure(t) => closures_at(t, mem::read_addr(a), out),
        _ => {}
    }
}
