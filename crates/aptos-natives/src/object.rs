//! `0x1::object`: resource existence at an address, and user-derived
//! object addresses.

use crate::args::{derive_address, pop_address, ty_arg, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::NativeContext;
use movejit_runtime::{AccountAddress, Type, Value, VmResult};

/// Aptos `Scheme::DeriveObjectAddressFromObject`.
const DERIVE_OBJECT_ADDRESS_FROM_OBJECT: u8 = 0xFC;

const EXISTS_AT: P = P::named("aptos_framework.object.exists_at.base");
const EXISTS_AT_PER_ITEM: P = P::named("aptos_framework.object.exists_at.per_item_loaded");
const EXISTS_AT_PER_BYTE: P = P::named("aptos_framework.object.exists_at.per_byte_loaded");

/// Whether resource `ty` exists at `address`. Under the Aptos schedule
/// `exists_at` loads it into the transaction's data cache: the first load
/// in the transaction pays per item and per byte loaded (0 bytes when it
/// does not exist), and a global operation on it later reads nothing.
fn exists_at(cx: &mut NativeContext<'_>, address: AccountAddress, ty: &Type) -> VmResult<bool> {
    if !cx.gas.is_aptos() {
        return cx.resource_exists(address, ty);
    }
    let probe = cx.types.resource_probe(address, ty)?;
    let first = cx.gas.aptos_meter_mut().is_some_and(|a| a.load_by_native(probe.slot, (address, probe.ty)));
    if first {
        cx.gas.charge_aptos_native(&[(EXISTS_AT_PER_ITEM, 1), (EXISTS_AT_PER_BYTE, probe.bytes)])?;
    }
    Ok(probe.exists)
}
const USER_DERIVED_ADDRESS: P = P::named("aptos_framework.object.user_derived_address.base");

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("object", "exists_at", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(EXISTS_AT, 1)])?;
        cx.charge_layout(ty_arg(ty, 0)?)?;
        let address = pop_address(&mut args)?;
        let exists = exists_at(cx, address, ty_arg(ty, 0)?)?;
        Ok(vec![Value::Bool(exists)])
    });
    r.add("object", "create_user_derived_object_address_impl", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        cx.gas.charge_aptos_native(&[(USER_DERIVED_ADDRESS, 1)])?;
        let derive_from = pop_address(&mut args)?;
        let source = pop_address(&mut args)?;
        let mut pre = source.0.to_vec();
        pre.extend_from_slice(&derive_from.0);
        Ok(vec![Value::Address(derive_address(&pre, DERIVE_OBJECT_ADDRESS_FROM_OBJECT))])
    });
    r.add_flat("object", "exists_at", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(EXISTS_AT, 1)])?;
        let t = call.ty_arg(0)?;
        call.cx.charge_layout(t)?;
        let address = call.arg_address(0)?;
        let t = call.ty_arg(0)?;
        let exists = exists_at(&mut call.cx, address, t)?;
        call.ret_bool(0, exists)
    });
    r.add_flat("object", "create_user_derived_object_address_impl", |call| {
        call.cx.gas.charge_native(0)?;
        call.cx.gas.charge_aptos_native(&[(USER_DERIVED_ADDRESS, 1)])?;
        let mut pre = call.arg_address(0)?.0.to_vec();
        pre.extend_from_slice(&call.arg_address(1)?.0);
        call.ret_address(0, derive_address(&pre, DERIVE_OBJECT_ADDRESS_FROM_OBJECT))
    });
}
