//! Signers: `create_signer::create_signer` and the permissioned-signer
//! natives.
//!
//! A signer is a struct holding its address; a permissioned signer (master
//! address, permission-storage address) is the same struct with the second
//! address as an extra field, so `signer::address_of` works on both.

use crate::args::{pop, pop_address, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{Value, VmError};

/// `permission_address` of a signer that is not permissioned.
pub const ENOT_PERMISSIONED_SIGNER: u64 = 3;

const CREATE_SIGNER: P = P::named("aptos_framework.account.create_signer.base");
const IS_PERMISSIONED_SIGNER: P = P::named("aptos_framework.permissioned_signer.is_permissioned_signer.base");
const PERMISSION_ADDRESS: P = P::named("aptos_framework.permissioned_signer.permission_address.base");
const SIGNER_FROM_PERMISSIONED_HANDLE: P =
    P::named("aptos_framework.permissioned_signer.signer_from_permissioned_handle.base");

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("create_signer", "create_signer", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(CREATE_SIGNER, 1)])?;
        Ok(vec![Value::signer(pop_address(&mut args)?)])
    });
    r.add_flat("create_signer", "create_signer", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(CREATE_SIGNER, 1)])?;
        let a = call.arg_address(0)?;
        call.ret_address(0, a)
    });
    r.add("permissioned_signer", "is_permissioned_signer_impl", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(IS_PERMISSIONED_SIGNER, 1)])?;
        let s = pop(&mut args)?;
        Ok(vec![Value::Bool(permission_address(cx.deref(&s)?)?.is_some())])
    });
    r.add("permissioned_signer", "permission_address", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(PERMISSION_ADDRESS, 1)])?;
        let s = pop(&mut args)?;
        match permission_address(cx.deref(&s)?)? {
            Some(a) => Ok(vec![Value::Address(a)]),
            None => Err(VmError::abort(ENOT_PERMISSIONED_SIGNER)),
        }
    });
    r.add("permissioned_signer", "signer_from_permissioned_handle_impl", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(SIGNER_FROM_PERMISSIONED_HANDLE, 1)])?;
        let permission = pop_address(&mut args)?;
        let master = pop_address(&mut args)?;
        Ok(vec![Value::Struct(vec![Value::Address(master), Value::Address(permission)])])
    });
}

fn permission_address(signer: &Value) -> Result<Option<movejit_runtime::AccountAddress>, VmError> {
    match signer {
        Value::Struct(f) if f.len() == 1 => Ok(None),
        Value::Struct(f) if f.len() == 2 => match &f[1] {
            Value::Address(a) => Ok(Some(*a)),
            _ => Err(VmError::invariant("permissioned signer")),
        },
        v => Err(VmError::invariant(format!("expected a signer, got {v:?}"))),
    }
}
