//! What compiled code reaches through `ExecContext::host` while it runs:
//! the natives' host ([`NativeHost`], first, so `call_native` and
//! `abort_msg` read the same pointer as a `NativeHost`) and the interpreter
//! session's global storage ([`GlobalStore`]), for the global-storage shims
//! of the helper table (`global_exists`, `global_borrow`,
//! `global_move_from`, `global_move_to`). Compiled code names a resource
//! type by its interned id ([`crate::intern`]), which the shims hand to the
//! session as they are: no structural type on this path.
//!
//! `exists` and `borrow_global` take the address as its four 8-byte words
//! (compiled code holds it in registers), and answer a resource this
//! execution already borrowed from [`GlobalHints`], in the [`Host`], without
//! reaching the session: no dynamic call, no copy of the address through
//! memory on the hit path.
//!
//! Shim contract as in [`super::shims`]; in addition `ctx.host` is 0 or
//! points to a live [`Host`], and address pointers point to the 32 bytes
//! of an account address (for `global_move_to`: the signer's first 32
//! bytes, which are its address).

#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::context::ExecContext;
use super::layout::FlatLayout;
use super::mem::Addr;
use super::raw::{slice, slice_mut};
use super::shims::NativeHost;
use crate::compiled::SessionHost;
use crate::error::{VmError, VmResult};
use crate::gas::abstract_size::AbstractSizes;
use crate::gas::aptos::{AptosCallSite, AptosMeter, ChargeFailure, SiteCounts};
use crate::natives::TypeInfo;
use crate::{AccountAddress, Layout, Type, TypeId};
use movejit_format::{Opcode, StatusCode};

/// The host of one compiled execution.
#[repr(C)]
pub struct Host<'a> {
    /// Must stay the first field (see the module doc).
    pub native: NativeHost<'a>,
    /// The interpreter session, when compiled code runs inside one (global
    /// storage; also behind `native.types`, see [`SessionTypes`]).
    pub session: Option<*mut (dyn SessionHost + 'a)>,
    /// Resources this execution borrowed (see [`GlobalHints`]).
    pub globals: GlobalHints,
}

/// An account address as compiled code holds it: four 8-byte words, in
/// memory order.
type AddressWords = [u64; 4];

/// Resources compiled code borrowed during one execution, direct-mapped by
/// (type id, address): the address of the live value and whether the
/// session has marked it written. A hit answers `exists` (true) and
/// `borrow_global` exactly as the session would: the value stays at that
/// address until it moves out of storage (its buffer is on the heap), and
/// `borrow_global_mut` hits only once the session has marked it written.
/// Emptied whenever storage may have changed under it: `move_from`,
/// `move_to`, and every run of the session's interpreter
/// ([`Host::storage_may_have_changed`]); a failed execution is undone by
/// the session and its host dropped.
#[derive(Debug, Default)]
pub struct GlobalHints {
    entries: [GlobalHint; GLOBAL_HINTS],
}

const GLOBAL_HINTS: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct GlobalHint {
    /// The resource's type id plus one (0: an empty entry).
    key: u64,
    address: AddressWords,
    value: usize,
    /// The session has marked the resource written.
    written: bool,
}

impl GlobalHints {
    #[inline(always)]
    fn at(ty: u64, address: &AddressWords) -> usize {
        ((ty ^ address[3] >> 56) as usize) % GLOBAL_HINTS
    }

    /// The value's address when this execution borrowed resource `ty` at
    /// `address` (mutably, when `mutable`).
    #[inline(always)]
    fn find(&self, ty: u64, address: AddressWords, mutable: bool) -> Option<usize> {
        let e = &self.entries[Self::at(ty, &address)];
        // Word by word, from registers: an array compare would spill the
        // words and reload them wider, which stalls store forwarding.
        let differ = (0..4).fold(0, |d, i| d | (e.address[i] ^ address[i]));
        (e.key == ty.wrapping_add(1) && differ == 0 && (e.written || !mutable)).then_some(e.value)
    }

    fn insert(&mut self, ty: u64, address: AddressWords, value: usize, mutable: bool) {
        let e = &mut self.entries[Self::at(ty, &address)];
        let written = mutable || (e.key == ty.wrapping_add(1) && e.address == address && e.written);
        *e = GlobalHint { key: ty.wrapping_add(1), address, value, written };
    }

    fn clear(&mut self) {
        self.entries = Default::default();
    }
}

impl Host<'_> {
    /// Forgets every resource address [`GlobalHints`] holds (storage may
    /// have changed behind compiled code's back).
    pub fn storage_may_have_changed(&mut self) {
        self.globals.clear();
    }
}

/// The hints of the execution behind `ctx`.
///
/// # Safety
/// Shim contract (module doc); no other borrow of the host is active.
#[inline(always)]
unsafe fn hints<'a>(ctx: *mut ExecContext) -> Option<&'a mut GlobalHints> {
    // SAFETY: caller's contract: `ctx` is live; `host` is 0 or a live `Host`.
    let host = unsafe { (ctx.as_ref()?.host as *mut Host<'a>).as_mut() }?;
    Some(&mut host.globals)
}

/// [`TypeInfo`] of the session behind a raw pointer, for `NativeHost::types`:
/// each call borrows the session only for its own length, so the global
/// shims may borrow it mutably between native calls.
pub struct SessionTypes<'a>(pub *mut (dyn SessionHost + 'a));

impl TypeInfo for SessionTypes<'_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        // SAFETY: the pointer is live for the whole execution (the caller of
        // the compiled code holds the session borrowed mutably and lends it
        // only to this execution); no other borrow of it is active while a
        // native runs.
        unsafe { &*self.0 }.layout_of(ty)
    }
    fn resource_exists(&self, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.resource_exists(address, ty)
    }
    fn resource_probe(&self, address: AccountAddress, ty: &Type) -> VmResult<crate::natives::ResourceProbe> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.resource_probe(address, ty)
    }
    fn struct_field_types(&self, ty: &Type) -> VmResult<Option<Vec<Type>>> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.struct_field_types(ty)
    }
    fn layout_modules(&self, ty: &Type) -> VmResult<std::sync::Arc<[(crate::ModuleId, u64)]>> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.layout_modules(ty)
    }
    fn module_size(&self, id: &crate::ModuleId) -> VmResult<Option<u64>> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.module_size(id)
    }
}

/// The context, the session's global storage and the resource type id `ty`.
///
/// # Safety
/// Shim contract (module doc).
unsafe fn globals<'a>(
    ctx: *mut ExecContext,
    ty: u64,
) -> Result<(&'a mut ExecContext, &'a mut (dyn SessionHost + 'a), TypeId), u32> {
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed.
    let c = unsafe { ctx.as_mut() }.ok_or(1u32)?;
    // SAFETY: shim contract: `host` is 0 or a live `Host`.
    let Some(host) = (unsafe { (c.host as *const Host<'a>).as_ref() }) else {
        return Err(c.fail(&VmError::invariant("no host for global storage")));
    };
    let Some(t) = TypeId::from_u64(ty) else {
        return Err(c.fail(&VmError::invariant("global type id")));
    };
    let Some(session) = host.session else {
        return Err(c.fail(&VmError::new(StatusCode::VM_EXTENSION_ERROR).with_message("no global storage")));
    };
    // SAFETY: the session outlives the execution and is borrowed by nothing
    // else while a shim runs (natives borrow it only inside `call_native`).
    let s = unsafe { &mut *session };
    Ok((c, s, t))
}

/// The account address stored at `a`.
///
/// # Safety
/// `a` points to 32 readable bytes.
unsafe fn address(a: *const u8) -> AccountAddress {
    let mut out = [0u8; 32];
    // SAFETY: caller's contract.
    out.copy_from_slice(unsafe { slice(a, 32) });
    AccountAddress(out)
}

/// The account address whose memory words are `w`.
fn address_of_words(w: &AddressWords) -> AccountAddress {
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(8).zip(w) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    AccountAddress(out)
}

fn status(c: &mut ExecContext, r: VmResult<()>) -> u32 {
    match r {
        Ok(()) => 0,
        Err(e) => c.fail(&e),
    }
}

/// A global-storage shim's `code`: the opcode's number << 32 | the
/// resource's type id. The type id (the hint path needs only it).
#[inline(always)]
fn type_of(code: u64) -> u64 {
    code & 0xffff_ffff
}

/// The opcode `code` names (off the hint path: a table look-up).
fn opcode_of(code: u64) -> Option<Opcode> {
    usize::try_from(code >> 32).ok().and_then(|i| Opcode::ALL.get(i)).copied()
}

/// Under Aptos's schedule (`ctx.aptos_meter` set), global operation `op`'s
/// charges that only the transaction fixes (the session's
/// `GlobalStore::charge_aptos_global`: its layout's modules and its I/O on
/// the resource's first read, then its price). I/O is drawn from the
/// balance compiled code spends from, so what compiled code spent so far
/// is settled on the meter first: its fuel before the operation is
/// `ctx.gas_left + ctx.global_rest` (`global_rest`, written by compiled
/// code: the segment's charges from the operation's price on, which its
/// charge on entry included). Afterwards,
/// also on failure, `ctx.gas_left` is the meter's fuel less the segment's
/// charges after the operation (compiled code refunds those on failure):
/// the meter holds everything charged through the operation.
fn charge_global(
    c: &mut ExecContext,
    s: &mut dyn SessionHost,
    address: AccountAddress,
    t: TypeId,
    op: Option<Opcode>,
) -> VmResult<()> {
    // SAFETY: a nonzero `aptos_meter` is the address of the live meter,
    // which nothing else touches while compiled code runs.
    let Some(meter) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else { return Ok(()) };
    let rest = c.global_rest;
    let op = op.ok_or_else(|| VmError::invariant("global operation's opcode"))?;
    let price = meter.pricing.costs.site_cost(op, SiteCounts::default());
    let spent = meter.fuel().wrapping_sub(c.gas_left.wrapping_add(rest));
    let r =
        meter.charge_compiled(spent).map_err(VmError::new).and_then(|()| s.charge_aptos_global(meter, address, t, op));
    c.gas_left = meter.fuel().wrapping_sub(rest.wrapping_sub(price));
    r
}

/// `exists<T>(addr)`, the address as its words (`code`: see [`type_of`];
/// under Aptos see [`charge_global`]): 0 or 1, or 2 when it failed (error
/// recorded).
pub unsafe extern "C" fn global_exists(ctx: *mut ExecContext, code: u64, a0: u64, a1: u64, a2: u64, a3: u64) -> u8 {
    let ty = type_of(code);
    let words = [a0, a1, a2, a3];
    // A resource this execution borrowed was read already: its price is
    // all it charges, which compiled code charged.
    // SAFETY: shim contract; the borrow ends here.
    if unsafe { hints(ctx) }.is_some_and(|h| h.find(ty, words, false).is_some()) {
        return 1;
    }
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(_) => return crate::helpers::status::EXISTS_FAILED,
    };
    let address = address_of_words(&words);
    match charge_global(c, s, address, t, opcode_of(code)).and_then(|()| s.exists(address, t)) {
        Ok(e) => e as u8,
        Err(e) => {
            c.fail(&e);
            crate::helpers::status::EXISTS_FAILED
        }
    }
}

/// `borrow_global<T>(addr)` (`code`: see [`type_of`]; under Aptos see
/// [`charge_global`]); the address as its words. Returns the resource's
/// address, or 0 when it failed (error recorded).
pub unsafe extern "C" fn global_borrow(ctx: *mut ExecContext, code: u64, a0: u64, a1: u64, a2: u64, a3: u64) -> u64 {
    // SAFETY: the caller's shim contract.
    unsafe { borrow_global(ctx, code, [a0, a1, a2, a3], false) }
}

/// `borrow_global_mut<T>(addr)`: as [`global_borrow`]. A shim of its own,
/// so that the hot hint look-up tests a constant.
pub unsafe extern "C" fn global_borrow_mut(
    ctx: *mut ExecContext,
    code: u64,
    a0: u64,
    a1: u64,
    a2: u64,
    a3: u64,
) -> u64 {
    // SAFETY: the caller's shim contract.
    unsafe { borrow_global(ctx, code, [a0, a1, a2, a3], true) }
}

/// The body of [`global_borrow`] and [`global_borrow_mut`].
///
/// # Safety
/// Shim contract (module doc).
#[inline(always)]
unsafe fn borrow_global(ctx: *mut ExecContext, code: u64, words: AddressWords, mutable: bool) -> u64 {
    let ty = type_of(code);
    // SAFETY: shim contract; the borrow ends here.
    if let Some(v) = unsafe { hints(ctx) }.and_then(|h| h.find(ty, words, mutable)) {
        return v as u64;
    }
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(_) => return 0,
    };
    let address = address_of_words(&words);
    match charge_global(c, s, address, t, opcode_of(code)).and_then(|()| s.borrow(address, t, mutable)) {
        Ok(a) => {
            let v = a.to_raw() as usize;
            // SAFETY: shim contract; `c` and `s` are not used again.
            if let Some(h) = unsafe { hints(ctx) } {
                h.insert(ty, words, v, mutable);
            }
            v as u64
        }
        Err(e) => {
            c.fail(&e);
            0
        }
    }
}

/// `move_from<T>(addr)` into the slot `dst` (`code` as in
/// [`global_borrow`]).
pub unsafe extern "C" fn global_move_from(ctx: *mut ExecContext, code: u64, addr: *const u8, dst: *mut u8) -> u32 {
    let (ty, op) = (type_of(code), opcode_of(code));
    // SAFETY: shim contract; the borrow ends here.
    if let Some(h) = unsafe { hints(ctx) } {
        h.clear();
    }
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(st) => return st,
    };
    // SAFETY: shim contract (`addr` an address).
    let address = unsafe { address(addr) };
    let r = charge_global(c, s, address, t, op).and_then(|()| {
        // SAFETY: shim contract (`dst` a free slot of the resource's layout).
        unsafe { s.move_from(address, t, Addr::from_raw(dst)) }
    });
    status(c, r)
}

/// `move_to<T>(signer, value)`: the value in `src` (consumed, also on
/// failure) to the signer's address (`code` as in
/// [`global_borrow`]).
pub unsafe extern "C" fn global_move_to(ctx: *mut ExecContext, code: u64, signer: *const u8, src: *mut u8) -> u32 {
    let (ty, op) = (type_of(code), opcode_of(code));
    // SAFETY: shim contract; the borrow ends here.
    if let Some(h) = unsafe { hints(ctx) } {
        h.clear();
    }
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(st) => return st,
    };
    // SAFETY: shim contract (`signer` an address).
    let address = unsafe { address(signer) };
    let r = match charge_global(c, s, address, t, op) {
        // SAFETY: shim contract (`src` a live slot of the resource's
        // layout, consumed either way).
        Ok(()) => unsafe { s.move_to(address, t, Addr::from_raw(src)) },
        // SAFETY: as above.
        Err(e) => unsafe { s.drop_resource(t, Addr::from_raw(src)) }.and(Err(e)),
    };
    status(c, r)
}

/// A call site whose Aptos charges only the transaction fixes (`site`, kept
/// alive by the code): [`AptosMeter::charge_call_site`] on the meter behind
/// `ctx.aptos_meter`, with the fuel compiled code had before the call's
/// charges (`ctx.gas_left`, written by the caller after the segment's
/// charge, plus the site's constant steps, which that charge included).
/// The callee's module size comes from the session (its first load in the
/// transaction). On success what it charged more is taken from
/// `ctx.gas_left`; on failure `ctx.gas_left` is what was left before the
/// call's charges less all spent through the failing charge (below zero,
/// wrapped, when it did not fit), the error is recorded, and a loading
/// error is flagged `ExecContext::AT_LOAD`.
///
/// [`AptosMeter::charge_call_site`]: crate::gas::aptos::AptosMeter::charge_call_site
pub unsafe extern "C" fn aptos_call(ctx: *mut ExecContext, site: *const AptosCallSite) -> u32 {
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    // SAFETY: the code keeps its sites alive.
    let Some(site) = (unsafe { site.as_ref() }) else {
        return c.fail(&VmError::invariant("Aptos call site"));
    };
    // SAFETY: a nonzero `aptos_meter` is the address of the live meter,
    // which nothing else touches while compiled code runs.
    let Some(meter) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else {
        return c.fail(&VmError::invariant("Aptos-metered code without a meter"));
    };
    let constant = site.steps.last().map_or(0, |s| s.0);
    let fuel = c.gas_left.wrapping_add(constant);
    // SAFETY: shim contract: `host` is 0 or a live `Host`; its session is
    // borrowed by nothing else while a shim runs.
    let session = unsafe { (c.host as *const Host<'_>).as_ref() }.and_then(|h| h.session);
    let size = || {
        // SAFETY: as above.
        session.and_then(|s| unsafe { &*s }.module_size(&site.module).ok().flatten())
    };
    match meter.charge_call_site(site, fuel, size) {
        Ok(more) => {
            c.gas_left = c.gas_left.wrapping_sub(more);
            0
        }
        Err(f) => {
            c.gas_left = fuel.wrapping_sub(f.spent);
            let r = c.fail(&VmError::new(f.status));
            if f.at_load {
                c.flags |= ExecContext::AT_LOAD;
            }
            r
        }
    }
}

/// `copy_loc` / `read_ref` (opcode number `op`) of the value of layout `l`
/// at `v` whose Aptos charges depend on it (a vector or closure inside):
/// [`AptosMeter::charge_copy`] with the fuel before the instruction's
/// charges (`ctx.gas_left` plus `rest`, the segment's charges after the
/// instruction, which its charge on entry included). The price is taken
/// from `ctx.gas_left`; on failure `ctx.gas_left` is that fuel less what
/// was spent (below zero, wrapped, when the price did not fit) and the
/// error (`MEMORY_LIMIT_EXCEEDED`, `OUT_OF_GAS`) recorded.
///
/// [`AptosMeter::charge_copy`]: crate::gas::aptos::AptosMeter::charge_copy
pub unsafe extern "C" fn aptos_copy(
    ctx: *mut ExecContext,
    op: u64,
    l: *const FlatLayout,
    v: *const u8,
    rest: u64,
) -> u32 {
    // SAFETY: shim contract: `l` is a layout the engine keeps alive.
    let l = unsafe { &*l };
    // SAFETY: shim contract: `v` holds a live value of layout `l`.
    let bytes = unsafe { slice(v, l.size as usize) };
    // SAFETY: shim contract.
    unsafe { charge_priced(ctx, op, rest, |meter, op, fuel| meter.charge_copy(op, l, bytes, fuel)) }
}

/// `eq` / `neq` (opcode number `op`) of the values of layout `l` at `a`
/// and `b` (the operands themselves when `values` is 1, else the targets
/// of the compared references) whose Aptos charges depend on them (a
/// vector or closure inside): [`AptosMeter::charge_compare`] with the fuel
/// before the instruction's charges (`ctx.gas_left` plus `rest`), as in
/// [`aptos_copy`].
///
/// [`AptosMeter::charge_compare`]: crate::gas::aptos::AptosMeter::charge_compare
pub unsafe extern "C" fn aptos_compare(
    ctx: *mut ExecContext,
    op: u64,
    l: *const FlatLayout,
    a: *const u8,
    b: *const u8,
    values: u64,
    rest: u64,
) -> u32 {
    // SAFETY: shim contract: `l` is a layout the engine keeps alive.
    let l = unsafe { &*l };
    // SAFETY: shim contract: `a` and `b` hold live values of layout `l`.
    let (a, b) = unsafe { (slice(a, l.size as usize), slice(b, l.size as usize)) };
    // SAFETY: shim contract.
    unsafe { charge_priced(ctx, op, rest, |meter, op, fuel| meter.charge_compare(op, l, (a, b), values != 0, fuel)) }
}

/// An instruction (opcode number `op`) priced by its values where it runs
/// ([`aptos_copy`], [`aptos_compare`]): `charge` gets the meter, the
/// opcode and the fuel before the instruction's charges (`ctx.gas_left`
/// plus `rest`, the segment's charges after it, which its charge on entry
/// included) and answers the price, which is taken from `ctx.gas_left`; on
/// failure `ctx.gas_left` is that fuel less what was spent (below zero,
/// wrapped, when the price did not fit) and the error recorded.
///
/// # Safety
/// `ctx` is live and not otherwise borrowed.
unsafe fn charge_priced(
    ctx: *mut ExecContext,
    op: u64,
    rest: u64,
    charge: impl FnOnce(&mut AptosMeter, Opcode, u64) -> Result<u64, ChargeFailure>,
) -> u32 {
    // SAFETY: the caller's contract.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return 1 };
    // SAFETY: as in `aptos_call`.
    let Some(meter) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else {
        return c.fail(&VmError::invariant("Aptos-metered code without a meter"));
    };
    let Some(&op) = usize::try_from(op).ok().and_then(|i| Opcode::ALL.get(i)) else {
        return c.fail(&VmError::invariant("opcode number"));
    };
    let fuel = c.gas_left.wrapping_add(rest);
    match charge(meter, op, fuel) {
        Ok(price) => {
            c.gas_left = c.gas_left.wrapping_sub(price);
            0
        }
        Err(f) => {
            c.gas_left = fuel.wrapping_sub(f.spent);
            c.fail(&VmError::new(f.status))
        }
    }
}

/// Native site `site` of the context's host called by compiled code under
/// Aptos's schedule, as the interpreter calls a native
/// (`interp/src/flat/exec.rs` `call`): what compiled code spent is settled
/// on the meter first (`ctx.gas_left` plus `rest`, the segment's charges
/// after the call, which its charge on entry included, is the fuel left
/// before the call), the arguments' heap parts are released, the native
/// runs on the meter itself (its own gas from the schedule's parameters),
/// then its results' heap parts are used. `slots` as for
/// [`call_native`](super::shims::call_native).
///
/// Returns 0 with `ctx.gas_left` the meter's fuel less `rest`; 1 (an error
/// of the call, which compiled code locates there: an abort of the native,
/// `MEMORY_LIMIT_EXCEEDED` of its results) or 2 (running out of gas in the
/// native, located at the native function, offset 0, as Aptos locates it:
/// `at` is that location's error, recorded whole in
/// `ctx.interpreted_error`), with `ctx.gas_left` the meter's fuel.
pub unsafe extern "C" fn aptos_native(
    ctx: *mut ExecContext,
    site: u64,
    slots: *const *mut u8,
    rest: u64,
    at: *const VmError,
) -> u32 {
    // The native charges the meter itself: it runs on a `GasMeter` that
    // holds the run's meter from the run's first such call to its end
    // (`NativeHost::lent_meter`).
    // SAFETY: shim contract (this function's).
    if let Err(e) = unsafe { lend_meter(ctx) } {
        // SAFETY: as above.
        return unsafe { ctx.as_mut() }.map_or(crate::helpers::status::FAILED, |c| c.fail(&e));
    }
    // SAFETY: shim contract (this function's).
    unsafe {
        native_on_meter(ctx, site, slots, rest, at, |host, s, ptrs, _| {
            let Some(gas) = host.metered.as_mut() else { return Err(VmError::invariant("native meter")) };
            // SAFETY: shim contract: the slots are live, of the site's layouts.
            super::shims::run_native_site(s, ptrs, &mut *host.session, host.types, gas)
        })
    }
}

/// Moves the run's Aptos meter (`ctx.aptos_meter`) into the host's
/// `GasMeter` for natives, once per run, and points `ctx` at it there
/// (`NativeHost::lent_meter`; moved back by `NativeHost::return_meter`
/// when the run ends).
///
/// # Safety
/// `ctx` is live and not otherwise borrowed; its `host` is 0 or a live
/// `Host`; a nonzero `aptos_meter` is the address of the live meter, which
/// nothing else touches while compiled code runs.
unsafe fn lend_meter(ctx: *mut ExecContext) -> VmResult<()> {
    // SAFETY: the caller's contract.
    let c = unsafe { ctx.as_mut() }.ok_or_else(|| VmError::invariant("no context"))?;
    // SAFETY: the caller's contract: the `Host` starts with its `NativeHost`.
    let host =
        unsafe { (c.host as *mut NativeHost<'_>).as_mut() }.ok_or_else(|| VmError::invariant("no native host"))?;
    if host.lent_meter != 0 {
        return Ok(());
    }
    // SAFETY: the caller's contract.
    let meter = unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }
        .ok_or_else(|| VmError::invariant("Aptos-metered code without a meter"))?;
    if !host.metered.as_ref().is_some_and(|g| g.is_aptos()) {
        host.metered = Some(crate::GasMeter::aptos(meter.pricing.clone(), 0));
    }
    let held =
        host.metered.as_mut().and_then(|g| g.aptos_meter_mut()).ok_or_else(|| VmError::invariant("native meter"))?;
    std::mem::swap(held, meter);
    host.lent_meter = c.aptos_meter;
    c.aptos_meter = held as *mut AptosMeter as u64;
    Ok(())
}

/// [`aptos_native`] for a stdlib native of
/// [`fast_native`](super::shims::fast_native) (`op`; the site's native is
/// that one): the same settling and memory, and the registered native's
/// charges, results and errors, made straight on the meter and the slots
/// (no native bridge, no meter moved into a `GasMeter`). `bcs::to_bytes`
/// loads the modules its type's layout reaches first, as
/// `NativeContext::charge_layout` does.
pub unsafe extern "C" fn aptos_native_fast(
    ctx: *mut ExecContext,
    site: u64,
    slots: *const *mut u8,
    rest: u64,
    at: *const VmError,
    op: u64,
) -> u32 {
    // SAFETY: shim contract (this function's).
    unsafe {
        native_on_meter(ctx, site, slots, rest, at, |host, s, ptrs, meter| {
            // SAFETY: `meter` is the live meter (`native_on_meter`); the
            // slots are live, of the site's layouts (shim contract).
            fast_native_on_meter(op, host.types, s, ptrs, &mut *meter)
        })
    }
}

/// The stdlib native `op` of site `s` on its slots `ptrs`, charging
/// `meter` as the registered native charges its `GasMeter` under Aptos
/// (`natives/stdlib.rs` `register_flat_all`): the argument value is
/// consumed, the result written only on success.
///
/// # Safety
/// `ptrs` as for [`super::shims::run_native_site`].
unsafe fn fast_native_on_meter(
    op: u64,
    types: &dyn TypeInfo,
    s: &super::shims::NativeSite,
    ptrs: &[*mut u8],
    meter: &mut AptosMeter,
) -> VmResult<()> {
    use super::shims::fast_native;
    use crate::natives::{bcs_to_bytes_terms, Hash256, BCS_FAILURE_TERMS, NFE_BCS_SERIALIZATION_FAILURE};
    let (Some(&arg), Some(&dst), Some((l, _))) = (ptrs.first(), ptrs.get(s.params.len()), s.params.first()) else {
        return Err(VmError::invariant("fast native slots"));
    };
    let out = match op {
        fast_native::SHA2_256 | fast_native::SHA3_256 => {
            let hash = if op == fast_native::SHA2_256 { Hash256::Sha2 } else { Hash256::Sha3 };
            // SAFETY: the caller's contract: a live `vector<u8>` slot, consumed here.
            let slot = unsafe { slice_mut(arg, l.size as usize) };
            let data = super::raw::vec_data(slot, 1);
            let n = data.len();
            let digest = hash.digest(data);
            super::value::drop_in_place(l, slot);
            meter.charge_native(&hash.terms(n)).map_err(VmError::new)?;
            digest.to_vec()
        }
        fast_native::BCS_TO_BYTES => {
            let ty = s.ty_args.first().ok_or_else(|| VmError::invariant("to_bytes without type"))?;
            if !meter.loaded_at(&s.layout_loaded) {
                for (id, size) in types.layout_modules(ty)?.iter() {
                    meter.charge_module(id, *size).map_err(VmError::new)?;
                }
                meter.mark_loaded(&s.layout_loaded);
            }
            let super::layout::Shape::Reference(t) = &l.shape else {
                return Err(VmError::invariant("to_bytes of a value"));
            };
            // SAFETY: the caller's contract: a reference slot whose target
            // is a live value of `t`.
            let value = unsafe { slice(super::mem::read_addr(Addr::from_raw(arg)).to_raw(), t.size as usize) };
            let mut bytes = Vec::new();
            if super::bcs::serialize_into(&mut bytes, t, value).is_err() {
                meter.charge_native(&BCS_FAILURE_TERMS).map_err(VmError::new)?;
                return Err(VmError::abort(NFE_BCS_SERIALIZATION_FAILURE));
            }
            meter.charge_native(&bcs_to_bytes_terms(bytes.len())).map_err(VmError::new)?;
            bytes
        }
        _ => return Err(VmError::invariant("fast native operation")),
    };
    // SAFETY: the caller's contract: a `vector<u8>` result slot owning nothing.
    super::shims::write_byte_vec(unsafe { slice_mut(dst, 8) }, &out)
}

/// What [`aptos_native`] and [`aptos_native_fast`] share around running
/// the native (`run`, on the host, the site, its slots and the meter's
/// address, `ctx.aptos_meter`: no reference to the meter is held while it
/// runs, which may reach the meter through the host's `GasMeter`):
/// settling compiled code's gas, the arguments' and results' memory, the
/// gas left and the error's location.
///
/// # Safety
/// As [`aptos_native`].
unsafe fn native_on_meter(
    ctx: *mut ExecContext,
    site: u64,
    slots: *const *mut u8,
    rest: u64,
    at: *const VmError,
    run: impl FnOnce(&mut NativeHost<'_>, &super::shims::NativeSite, &[*mut u8], *mut AptosMeter) -> VmResult<()>,
) -> u32 {
    use crate::helpers::status::{CALLEE_FAILED, FAILED};
    // SAFETY: shim contract: `ctx` is live and not otherwise borrowed.
    let Some(c) = (unsafe { ctx.as_mut() }) else { return FAILED };
    // SAFETY: shim contract: `host` is 0 or a live `Host`, whose first
    // field is its `NativeHost`; nothing else borrows it while a shim runs.
    let Some(host) = (unsafe { (c.host as *mut NativeHost<'_>).as_mut() }) else {
        return c.fail(&VmError::invariant("no native host"));
    };
    let sites = host.sites;
    let Some(s) = sites.get(site as usize) else {
        return c.fail(&VmError::invariant("native site"));
    };
    // SAFETY: as in `aptos_call`.
    let Some(meter) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else {
        return c.fail(&VmError::invariant("Aptos-metered code without a meter"));
    };
    // SAFETY: shim contract: one pointer per parameter and result of the
    // site, each to a live slot of its layout (results: holding nothing).
    let ptrs = unsafe { std::slice::from_raw_parts(slots, s.params.len() + s.rets.len()) };
    let (params, results) = ptrs.split_at(s.params.len());
    let spent = meter.fuel().wrapping_sub(c.gas_left.wrapping_add(rest));
    if let Err(status) = meter.charge_compiled(spent) {
        // (Compiled code tested the call's charges before it: not reached.)
        for ((l, _), p) in s.params.iter().zip(params) {
            // SAFETY: an argument slot holding a live value of `l`, consumed.
            super::value::drop_in_place(l, unsafe { slice_mut(*p, l.size as usize) });
        }
        c.gas_left = meter.fuel();
        return c.fail(&VmError::new(status));
    }
    let heap_of = |meter: &AptosMeter, slots: &[*mut u8], layouts: &mut dyn Iterator<Item = &FlatLayout>| {
        layouts.zip(slots).filter(|(l, _)| !AbstractSizes::heapless(l)).fold(0u64, |acc, (l, p)| {
            // SAFETY: a live slot of layout `l` (the caller's contract).
            acc.saturating_add(meter.pricing.sizes.heap(l, unsafe { slice(*p, l.size as usize) }))
        })
    };
    let args_heap = heap_of(meter, params, &mut s.params.iter().map(|(l, _)| &**l));
    meter.release_native_args(args_heap);
    let r = run(host, s, ptrs, c.aptos_meter as *mut AptosMeter);
    // SAFETY: as above (the native has returned: nothing else borrows it).
    let Some(meter) = (unsafe { (c.aptos_meter as *mut AptosMeter).as_mut() }) else {
        return c.fail(&VmError::invariant("Aptos-metered code without a meter"));
    };
    let located = |mut e: VmError| {
        let gas_error = matches!(e.status, StatusCode::OUT_OF_GAS | StatusCode::EXECUTION_LIMIT_REACHED);
        if gas_error && e.location.is_none() {
            // SAFETY: shim contract: `at` is 0 or an error the code keeps alive.
            e.location = unsafe { at.as_ref() }.and_then(|a| a.location.clone());
        }
        e
    };
    c.gas_left = meter.fuel();
    match r.map_err(located) {
        Err(e) if e.location.is_some() => {
            c.fail(&e);
            c.interpreted_error = Some(Box::new(e));
            CALLEE_FAILED
        }
        Err(e) => c.fail(&e),
        Ok(()) => {
            let rets_heap = heap_of(meter, results, &mut s.rets.iter().map(|l| &**l));
            if let Err(status) = meter.use_memory(rets_heap) {
                for (l, p) in s.rets.iter().zip(results) {
                    // SAFETY: a result slot the native wrote a live value of `l` to.
                    super::value::drop_in_place(l, unsafe { slice_mut(*p, l.size as usize) });
                }
                return c.fail(&VmError::new(status));
            }
            c.gas_left = meter.fuel().wrapping_sub(rest);
            0
        }
    }
}
