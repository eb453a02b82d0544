//! `0x2::dynamic_field`: field ids (`hash_type_and_key`) and the children
//! natives over the session's [`ChildStore`](crate::ChildStore).

use crate::args::{invariant, object_id, pop, pop_address, ty_arg, Args, Registrar};
use crate::children::Lookup;
use crate::object_runtime::ObjectRuntime;
use movejit_runtime::natives::{FlatCall, NativeContext};
use movejit_runtime::{bcs, AccountAddress, RefRoot, Type, Value, VmError, VmResult};

/// No child with that id under that parent.
pub const E_KEY_DOES_NOT_EXIST: u64 = 1;
/// A child with that id has another type.
pub const E_FIELD_TYPE_MISMATCH: u64 = 2;
pub const E_BCS_SERIALIZATION_FAILURE: u64 = 3;

/// Sui's `HashingIntentScope::ChildObjectId`.
const CHILD_OBJECT_ID: u8 = 0xf0;

/// `derive_dynamic_field_id`: blake2b256(0xf0 ‖ parent ‖ key length (u64
/// LE) ‖ key BCS ‖ BCS of the key's type tag).
pub fn derive_dynamic_field_id(parent: AccountAddress, key_type_tag: &[u8], key: &[u8]) -> AccountAddress {
    let mut pre = Vec::with_capacity(41 + key.len() + key_type_tag.len());
    pre.push(CHILD_OBJECT_ID);
    pre.extend_from_slice(&parent.0);
    pre.extend_from_slice(&(key.len() as u64).to_le_bytes());
    pre.extend_from_slice(key);
    pre.extend_from_slice(key_type_tag);
    AccountAddress(crate::hash::blake2b256(&pre))
}

/// The address in a `&UID` argument.
fn uid_address(cx: &NativeContext<'_>, uid: &Value) -> VmResult<AccountAddress> {
    // UID { id: ID { bytes } }: wrap it as an object to reuse the walk.
    let v = cx.deref(uid)?;
    object_id(&Value::Struct(vec![v.clone()]))
}

fn with_children<R>(
    cx: &mut NativeContext<'_>,
    attach: bool,
    f: impl FnOnce(&mut crate::ChildStore, &mut NativeContext<'_>) -> VmResult<R>,
) -> VmResult<R> {
    cx.with_extensions(|ext, cx| {
        let store = ext.get_or_default::<ObjectRuntime>().children();
        if attach {
            store.attach(cx.mem)?;
        }
        f(store, cx)
    })
}

fn found(l: Lookup<Value>) -> VmResult<Vec<Value>> {
    match l {
        Lookup::Found(v) => Ok(vec![v]),
        Lookup::Missing => Err(VmError::abort(E_KEY_DOES_NOT_EXIST)),
        Lookup::WrongType => Err(VmError::abort(E_FIELD_TYPE_MISMATCH)),
    }
}

/// A found child as a flat result: a parked child's reference, or the
/// child's value.
fn flat_found(call: &mut FlatCall<'_, '_>, l: Lookup<Value>) -> VmResult<()> {
    match l {
        Lookup::Found(Value::Ref(r)) => match (r.root, r.path.as_slice()) {
            (RefRoot::Native(slot), []) => call.ret_parked_ref(0, slot),
            _ => Err(VmError::invariant("dynamic field: reference form")),
        },
        Lookup::Found(v) => call.ret_tree(0, &v),
        Lookup::Missing => Err(VmError::abort(E_KEY_DOES_NOT_EXIST)),
        Lookup::WrongType => Err(VmError::abort(E_FIELD_TYPE_MISMATCH)),
    }
}

/// The flat forms (same checks, errors and charges as in [`register`]).
fn register_flat(r: &mut Registrar<'_>) {
    let m = "dynamic_field";
    r.add_flat(m, "hash_type_and_key", |call| {
        let parent = call.arg_address(0)?;
        let k_ty = call.ty_arg(0)?;
        let Ok(tag) = crate::type_tag::type_tag_bcs(k_ty) else {
            return Err(VmError::abort(E_BCS_SERIALIZATION_FAILURE));
        };
        let Ok(k) = call.arg_bcs(1) else {
            return Err(VmError::abort(E_BCS_SERIALIZATION_FAILURE));
        };
        call.cx.gas.charge_native(k.len() + tag.len())?;
        call.ret_address(0, derive_dynamic_field_id(parent, &tag, &k))
    });
    r.add_flat(m, "add_child_object", |call| {
        let parent = call.arg_address(0)?;
        let t = match call.ty_arg(0)? {
            t @ Type::Datatype(..) => t.clone(),
            t => return Err(invariant(format!("child type {t} is not a struct"))),
        };
        let child = call.arg_tree(1)?;
        let id = object_id(&child)?;
        call.cx.gas.charge_native(0)?;
        with_children(&mut call.cx, true, |store, _| store.add(parent, id, t, child))
    });
    for name in ["borrow_child_object", "borrow_child_object_mut"] {
        r.add_flat(m, name, |call| {
            let id = call.arg_address(1)?;
            let parent = call.arg_address_at(0, &[0, 0])?;
            let t = call.ty_arg(0)?.clone();
            call.cx.gas.charge_native(0)?;
            let l = with_children(&mut call.cx, true, |store, cx| store.borrow(cx, parent, id, &t))?;
            flat_found(call, l)
        });
    }
    r.add_flat(m, "remove_child_object", |call| {
        let id = call.arg_address(1)?;
        let parent = call.arg_address(0)?;
        let t = call.ty_arg(0)?.clone();
        call.cx.gas.charge_native(0)?;
        let l = with_children(&mut call.cx, true, |store, cx| store.remove(cx, parent, id, &t))?;
        flat_found(call, l)
    });
    r.add_flat(m, "has_child_object", |call| {
        let (parent, id) = (call.arg_address(0)?, call.arg_address(1)?);
        call.cx.gas.charge_native(0)?;
        let found = with_children(&mut call.cx, true, |store, _| Ok(store.contains(parent, id, None)))?;
        call.ret_bool(0, found)
    });
    r.add_flat(m, "has_child_object_with_ty", |call| {
        let (parent, id) = (call.arg_address(0)?, call.arg_address(1)?);
        let t = call.ty_arg(0)?.clone();
        call.cx.gas.charge_native(0)?;
        let found = with_children(&mut call.cx, true, |store, _| Ok(store.contains(parent, id, Some(&t))))?;
        call.ret_bool(0, found)
    });
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    register_tree(r);
    register_flat(r);
}

fn register_tree(r: &mut Registrar<'_>) {
    let m = "dynamic_field";
    r.add(m, "hash_type_and_key", |cx, ty, mut args: Args| {
        let key = pop(&mut args)?;
        let parent = pop_address(&mut args)?;
        let k_ty = ty_arg(ty, 0)?;
        let Ok(tag) = crate::type_tag::type_tag_bcs(k_ty) else {
            return Err(VmError::abort(E_BCS_SERIALIZATION_FAILURE));
        };
        let layout = cx.types.layout_of(k_ty)?;
        let Ok(k) = bcs::serialize(&key, &layout) else {
            return Err(VmError::abort(E_BCS_SERIALIZATION_FAILURE));
        };
        cx.gas.charge_native(k.len() + tag.len())?;
        Ok(vec![Value::Address(derive_dynamic_field_id(parent, &tag, &k))])
    });
    r.add(m, "add_child_object", |cx, ty, mut args: Args| {
        let child = pop(&mut args)?;
        let parent = pop_address(&mut args)?;
        let t = match ty_arg(ty, 0)? {
            t @ Type::Datatype(..) => t.clone(),
            t => return Err(invariant(format!("child type {t} is not a struct"))),
        };
        let id = object_id(&child)?;
        cx.gas.charge_native(0)?;
        with_children(cx, true, |store, _| store.add(parent, id, t, child))?;
        Ok(vec![])
    });
    for name in ["borrow_child_object", "borrow_child_object_mut"] {
        r.add(m, name, |cx, ty, mut args: Args| {
            let id = pop_address(&mut args)?;
            let parent = uid_address(cx, &pop(&mut args)?)?;
            let t = ty_arg(ty, 0)?.clone();
            cx.gas.charge_native(0)?;
            found(with_children(cx, true, |store, cx| store.borrow(cx, parent, id, &t))?)
        });
    }
    r.add(m, "remove_child_object", |cx, ty, mut args: Args| {
        let id = pop_address(&mut args)?;
        let parent = pop_address(&mut args)?;
        let t = ty_arg(ty, 0)?.clone();
        cx.gas.charge_native(0)?;
        found(with_children(cx, true, |store, cx| store.remove(cx, parent, id, &t))?)
    });
    r.add(m, "has_child_object", |cx, _, mut args: Args| {
        let id = pop_address(&mut args)?;
        let parent = pop_address(&mut args)?;
        cx.gas.charge_native(0)?;
        with_children(cx, true, |store, _| Ok(vec![Value::Bool(store.contains(parent, id, None))]))
    });
    r.add(m, "has_child_object_with_ty", |cx, ty, mut args: Args| {
        let id = pop_address(&mut args)?;
        let parent = pop_address(&mut args)?;
        let t = ty_arg(ty, 0)?.clone();
        cx.gas.charge_native(0)?;
        with_children(cx, true, |store, _| Ok(vec![Value::Bool(store.contains(parent, id, Some(&t)))]))
    });
}
