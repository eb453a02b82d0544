//! What compiled code reaches through `ExecContext::host` while it runs:
//! the natives' host ([`NativeHost`], first, so `call_native` and
//! `abort_msg` read the same pointer as a `NativeHost`) and the interpreter
//! session's global storage ([`GlobalStore`]), for the global-storage shims
//! of the helper table (`global_exists`, `global_borrow`,
//! `global_move_from`, `global_move_to`). Compiled code names a resource
//! type by its interned id ([`crate::intern`]), which the shims hand to the
//! session as they are: no structural type on this path.
//!
//! Shim contract as in [`super::shims`]; in addition `ctx.host` is 0 or
//! points to a live [`Host`], and address arguments point to the 32 bytes
//! of an account address (for `global_move_to`: the signer's first 32
//! bytes, which are its address).

#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::context::ExecContext;
use super::mem::Addr;
use super::raw::slice;
use super::shims::NativeHost;
use crate::compiled::SessionHost;
use crate::error::{VmError, VmResult};
use crate::natives::TypeInfo;
use crate::{AccountAddress, Layout, Memory, Type, TypeId};
use movejit_format::StatusCode;

/// The host of one compiled execution.
#[repr(C)]
pub struct Host<'a> {
    /// Must stay the first field (see the module doc).
    pub native: NativeHost<'a>,
    /// The interpreter session, when compiled code runs inside one (global
    /// storage; also behind `native.types`, see [`SessionTypes`]).
    pub session: Option<*mut (dyn SessionHost + 'a)>,
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
    fn resource_exists(&self, mem: &Memory, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        // SAFETY: as in `layout_of`.
        unsafe { &*self.0 }.resource_exists(mem, address, ty)
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

fn status(c: &mut ExecContext, r: VmResult<()>) -> u32 {
    match r {
        Ok(()) => 0,
        Err(e) => c.fail(&e),
    }
}

/// `exists<T>(addr)`: 0 or 1, or 2 when it failed (error recorded).
pub unsafe extern "C" fn global_exists(ctx: *mut ExecContext, ty: u64, addr: *const u8) -> u8 {
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(_) => return crate::helpers::status::EXISTS_FAILED,
    };
    // SAFETY: shim contract.
    match s.exists(unsafe { address(addr) }, t) {
        Ok(e) => e as u8,
        Err(e) => {
            c.fail(&e);
            crate::helpers::status::EXISTS_FAILED
        }
    }
}

/// `borrow_global<T>(addr)`; `code` = type id << 1 | mutable. Writes
/// the resource's address to `out`.
pub unsafe extern "C" fn global_borrow(ctx: *mut ExecContext, code: u64, addr: *const u8, out: *mut u8) -> u32 {
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, code >> 1) } {
        Ok(x) => x,
        Err(st) => return st,
    };
    // SAFETY: shim contract.
    let r = s.borrow(unsafe { address(addr) }, t, code & 1 == 1).map(|a| {
        super::mem::write_addr(Addr::from_raw(out), a);
    });
    status(c, r)
}

/// `move_from<T>(addr)` into the slot `dst`.
pub unsafe extern "C" fn global_move_from(ctx: *mut ExecContext, ty: u64, addr: *const u8, dst: *mut u8) -> u32 {
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(st) => return st,
    };
    // SAFETY: shim contract.
    let r = s.move_from(unsafe { address(addr) }, t, Addr::from_raw(dst));
    status(c, r)
}

/// `move_to<T>(signer, value)`: the value in `src` (consumed, also on
/// failure) to the signer's address.
pub unsafe extern "C" fn global_move_to(ctx: *mut ExecContext, ty: u64, signer: *const u8, src: *mut u8) -> u32 {
    // SAFETY: shim contract.
    let (c, s, t) = match unsafe { globals(ctx, ty) } {
        Ok(x) => x,
        Err(st) => return st,
    };
    // SAFETY: shim contract.
    let r = s.move_to(unsafe { address(signer) }, t, Addr::from_raw(src));
    status(c, r)
}
