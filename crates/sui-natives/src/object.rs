//! `0x2::object` (ids recorded and deleted, `borrow_uid`), `0x2::transfer`
//! (transfers, freezing, sharing, party transfers, receiving) and
//! `0x2::event::emit`, all recorded in the session's [`ObjectRuntime`].

use crate::args::{invariant, object_id, pop, pop_address, pop_u64, ty_arg, Args, Registrar};
use crate::object_runtime::{ObjectRuntime, Owner, TransferResult};
use movejit_runtime::natives::{FlatCall, NativeContext};
use movejit_runtime::{bcs, Type, Value, VmError, VmResult};

/// `share_object` of an object that is neither new nor already shared.
pub const E_SHARED_NON_NEW_OBJECT: u64 = 0;
pub const E_RECEIVING_OBJECT_TYPE_MISMATCH: u64 = 2;
/// The object does not exist or cannot be reached through that parent.
pub const E_UNABLE_TO_RECEIVE_OBJECT: u64 = 3;
/// `party_transfer` while the protocol does not enable it.
pub const E_NOT_SUPPORTED: u64 = 5;

fn runtime<R>(cx: &mut NativeContext<'_>, f: impl FnOnce(&mut ObjectRuntime) -> VmResult<R>) -> VmResult<R> {
    cx.with_extensions(|ext, _| f(ext.get_or_default::<ObjectRuntime>()))
}

/// Objects are structs (Sui's verifier guarantees it).
fn struct_type(ty: &[Type]) -> VmResult<Type> {
    match ty_arg(ty, 0)? {
        t @ Type::Datatype(..) => Ok(t.clone()),
        t => Err(invariant(format!("object type {t} is not a struct"))),
    }
}

fn transfer(cx: &mut NativeContext<'_>, ty: &[Type], obj: Value, owner: Owner) -> VmResult<TransferResult> {
    let t = struct_type(ty)?;
    let id = object_id(&obj)?;
    runtime(cx, |rt| rt.transfer(id, owner, t, obj))
}

/// The flat forms (same checks, errors and charges as in [`register`]).
fn register_flat(r: &mut Registrar<'_>) {
    r.add_flat("object", "record_new_uid", |call| {
        call.cx.gas.charge_native(0)?;
        let id = call.arg_address(0)?;
        runtime(&mut call.cx, |rt| rt.new_id(id))
    });
    r.add_flat("object", "delete_impl", |call| {
        call.cx.gas.charge_native(0)?;
        let id = call.arg_address(0)?;
        runtime(&mut call.cx, |rt| rt.delete_id(id))
    });
    r.add_flat("object", "borrow_uid", |call| {
        call.cx.gas.charge_native(0)?;
        call.ret_arg_ref(0, 0, &[0])
    });
    r.add_flat("transfer", "transfer_impl", |call| {
        call.cx.gas.charge_native(0)?;
        let recipient = call.arg_address(1)?;
        let obj = call.arg_tree(0)?;
        flat_transfer(call, obj, Owner::AddressOwner(recipient)).map(drop)
    });
    r.add_flat("transfer", "freeze_object_impl", |call| {
        call.cx.gas.charge_native(0)?;
        let obj = call.arg_tree(0)?;
        flat_transfer(call, obj, Owner::Immutable).map(drop)
    });
    r.add_flat("transfer", "share_object_impl", |call| {
        call.cx.gas.charge_native(0)?;
        let obj = call.arg_tree(0)?;
        match flat_transfer(call, obj, Owner::Shared)? {
            TransferResult::New | TransferResult::SameOwner => Ok(()),
            TransferResult::OwnerChanged => Err(VmError::abort(E_SHARED_NON_NEW_OBJECT)),
        }
    });
    r.add_flat("event", "emit", |call| {
        let t = struct_type(call.ty_args)?;
        let data = call.arg_bcs(0).map_err(|_| VmError::invariant("cannot serialize event"))?;
        call.cx.gas.charge_native(data.len())?;
        runtime(&mut call.cx, |rt| rt.emit_event(t, data))
    });
}

fn flat_transfer(call: &mut FlatCall<'_, '_>, obj: Value, owner: Owner) -> VmResult<TransferResult> {
    let t = struct_type(call.ty_args)?;
    let id = object_id(&obj)?;
    runtime(&mut call.cx, |rt| rt.transfer(id, owner, t, obj))
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    register_tree(r);
    register_flat(r);
}

fn register_tree(r: &mut Registrar<'_>) {
    r.add("object", "record_new_uid", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let id = pop_address(&mut args)?;
        runtime(cx, |rt| rt.new_id(id))?;
        Ok(vec![])
    });
    r.add("object", "delete_impl", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        let id = pop_address(&mut args)?;
        runtime(cx, |rt| rt.delete_id(id))?;
        Ok(vec![])
    });
    // `&T` → `&T.id`: the UID is the first field of every `key` struct.
    r.add("object", "borrow_uid", |cx, _, mut args: Args| {
        cx.gas.charge_native(0)?;
        match pop(&mut args)? {
            Value::Ref(r) => Ok(vec![Value::Ref(r.child(0))]),
            v => Err(VmError::invariant(format!("borrow_uid: expected a reference, got {v:?}"))),
        }
    });

    r.add("transfer", "transfer_impl", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let recipient = pop_address(&mut args)?;
        let obj = pop(&mut args)?;
        transfer(cx, ty, obj, Owner::AddressOwner(recipient))?;
        Ok(vec![])
    });
    r.add("transfer", "freeze_object_impl", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let obj = pop(&mut args)?;
        transfer(cx, ty, obj, Owner::Immutable)?;
        Ok(vec![])
    });
    r.add("transfer", "share_object_impl", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let obj = pop(&mut args)?;
        match transfer(cx, ty, obj, Owner::Shared)? {
            TransferResult::New | TransferResult::SameOwner => Ok(vec![]),
            TransferResult::OwnerChanged => Err(VmError::abort(E_SHARED_NON_NEW_OBJECT)),
        }
    });
    r.add("transfer", "party_transfer_impl", |cx, ty, mut args: Args| {
        const ALL: u64 = 0b1111;
        if !runtime(cx, |rt| Ok(rt.limits.party_transfer))? {
            return Err(VmError::abort(E_NOT_SUPPORTED));
        }
        cx.gas.charge_native(0)?;
        let permissions = pop(&mut args)?.into_vec()?;
        let addresses = pop(&mut args)?.into_vec()?;
        let default_permissions = pop_u64(&mut args)?;
        let obj = pop(&mut args)?;
        // Sui supports exactly one party member with every permission.
        let (Ok([p]), Ok([Value::Address(a)])) =
            (<[Value; 1]>::try_from(permissions), <[Value; 1]>::try_from(addresses))
        else {
            return Err(invariant("party transfer only supports one party member"));
        };
        if p.as_u64()? != ALL || default_permissions != 0 {
            return Err(invariant("party transfer only supports one party member with all permissions"));
        }
        transfer(cx, ty, obj, Owner::ConsensusAddressOwner(a))?;
        Ok(vec![])
    });
    r.add("transfer", "receive_impl", |cx, ty, mut args: Args| {
        cx.gas.charge_native(0)?;
        let version = pop_u64(&mut args)?;
        // `ID { bytes }`
        let id = match pop(&mut args)? {
            Value::Struct(f) => match f.first() {
                Some(Value::Address(a)) => *a,
                _ => return Err(VmError::invariant("receive: ID field")),
            },
            v => return Err(VmError::invariant(format!("receive: expected an ID, got {v:?}"))),
        };
        let parent = pop_address(&mut args)?;
        let t = struct_type(ty)?;
        runtime(cx, |rt| {
            let Some(obj) = rt.receivable.get(&(parent, id)).filter(|o| o.version == version) else {
                return Err(VmError::abort(E_UNABLE_TO_RECEIVE_OBJECT));
            };
            if obj.ty != t {
                return Err(VmError::abort(E_RECEIVING_OBJECT_TYPE_MISMATCH));
            }
            let obj = rt.receivable.remove(&(parent, id)).ok_or_else(|| VmError::invariant("receivable vanished"))?;
            Ok(vec![obj.value])
        })
    });

    r.add("event", "emit", |cx, ty, mut args: Args| {
        let msg = pop(&mut args)?;
        let t = struct_type(ty)?;
        let layout = cx.types.layout_of(&t)?;
        let data = bcs::serialize(&msg, &layout).map_err(|_| VmError::invariant("cannot serialize event"))?;
        cx.gas.charge_native(data.len())?;
        runtime(cx, |rt| rt.emit_event(t, data))?;
        Ok(vec![])
    });
}
