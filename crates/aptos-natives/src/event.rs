//! `0x1::event`: module events (`emit`) and handle events (`emit_event`),
//! recorded as type + BCS in the session's [`EventLog`].

use crate::args::{pop, pop_u64, ty_arg, Args, Registrar};
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::natives::{FlatCall, NativeContext};
use movejit_runtime::{bcs, StatusCode, Type, Value, VmError, VmResult};

/// Both kinds of event: a base, and per abstract value unit of the event
/// (charged first, before the event is checked), then the modules its
/// layout loads.
const WRITE_BASE: P = P::named("aptos_framework.event.write_to_event_store.base");
const WRITE_PER_UNIT: P = P::named("aptos_framework.event.write_to_event_store.per_abstract_memory_unit");

fn charge_tree(cx: &mut NativeContext<'_>, t: &Type, msg: &Value) -> VmResult<()> {
    if !cx.gas.is_aptos() {
        return Ok(());
    }
    let layout = cx.types.layout_of(t)?;
    let units = cx.gas.abstract_size(&layout, cx.deref(msg)?);
    cx.gas.charge_aptos_native(&[(WRITE_BASE, 1), (WRITE_PER_UNIT, units)])?;
    cx.charge_layout(t)
}

fn charge_flat(call: &mut FlatCall<'_, '_>, msg: usize) -> VmResult<()> {
    let units = call.arg_abstract_size(msg)?;
    call.cx.gas.charge_aptos_native(&[(WRITE_BASE, 1), (WRITE_PER_UNIT, units)])?;
    let t = call.ty_arg(0)?;
    call.cx.charge_layout(t)
}

/// One emitted event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedEvent {
    /// For handle (v1) events: the BCS of the handle's GUID and the sequence number.
    pub handle: Option<(Vec<u8>, u64)>,
    pub ty: Type,
    /// BCS of the event value.
    pub data: Vec<u8>,
}

/// The events a session emitted, in order.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub events: Vec<EmittedEvent>,
    /// (engine's type, the session's own copy of it: [`Type::unshared`])
    /// of each event type: an event's type is cloned from the copy, so
    /// events write no reference count other threads' sessions write.
    own_types: Vec<(Type, Type)>,
}

impl EventLog {
    /// Records an event of type `ty`.
    fn push(&mut self, handle: Option<(Vec<u8>, u64)>, ty: &Type, data: Vec<u8>) {
        // Equal engine types share their datatype ids: compared by pointer.
        let ty = match self.own_types.iter().find(|(engine, _)| engine == ty) {
            Some((_, own)) => own.clone(),
            None => {
                let own = ty.unshared();
                self.own_types.push((ty.clone(), own.clone()));
                own
            }
        };
        self.events.push(EmittedEvent { handle, ty, data });
    }
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("event", "write_module_event_to_store", |cx, ty, mut args: Args| {
        let msg = pop(&mut args)?;
        let t = ty_arg(ty, 0)?.clone();
        charge_tree(cx, &t, &msg)?;
        // Module events must be structs (Aptos: INTERNAL_TYPE_ERROR). That
        // the struct belongs to the emitting module is a publish-time check here.
        if !matches!(t, Type::Datatype(..)) {
            return Err(VmError::new(StatusCode::INTERNAL_TYPE_ERROR).with_message(format!("event type {t}")));
        }
        let data = serialize(cx, &t, &msg)?;
        cx.with_extensions(|ext, _| {
            ext.get_or_default::<EventLog>().push(None, &t, data);
            Ok(vec![])
        })
    });
    r.add("event", "write_to_event_store", |cx, ty, mut args: Args| {
        let msg = pop(&mut args)?;
        let seq = pop_u64(&mut args)?;
        let guid = pop(&mut args)?.to_bytes()?;
        let t = ty_arg(ty, 0)?.clone();
        charge_tree(cx, &t, &msg)?;
        let data = serialize(cx, &t, &msg)?;
        // The GUID must be an event key: u64 creation number + address.
        if guid.len() != 40 {
            return Err(VmError::new(StatusCode::EVENT_KEY_MISMATCH));
        }
        cx.with_extensions(|ext, _| {
            ext.get_or_default::<EventLog>().push(Some((guid, seq)), &t, data);
            Ok(vec![])
        })
    });
}

/// The flat forms (same checks, errors and charges as above).
pub(crate) fn register_flat(r: &mut Registrar<'_>) {
    r.add_flat("event", "write_module_event_to_store", |call| {
        charge_flat(call, 0)?;
        let t = call.ty_arg(0)?;
        if !matches!(t, Type::Datatype(..)) {
            return Err(VmError::new(StatusCode::INTERNAL_TYPE_ERROR).with_message(format!("event type {t}")));
        }
        let data = flat_serialize(call, 0)?;
        call.cx.with_extensions(|ext, _| {
            ext.get_or_default::<EventLog>().push(None, t, data);
            Ok(())
        })
    });
    r.add_flat("event", "write_to_event_store", |call| {
        charge_flat(call, 2)?;
        let guid = call.arg_bytes(0)?.to_vec();
        let seq = call.arg_u64(1)?;
        let t = call.ty_arg(0)?;
        let data = flat_serialize(call, 2)?;
        if guid.len() != 40 {
            return Err(VmError::new(StatusCode::EVENT_KEY_MISMATCH));
        }
        call.cx.with_extensions(|ext, _| {
            ext.get_or_default::<EventLog>().push(Some((guid, seq)), t, data);
            Ok(())
        })
    });
}

/// The BCS of argument `i` (the event), charged per byte.
fn flat_serialize(call: &mut FlatCall<'_, '_>, i: usize) -> VmResult<Vec<u8>> {
    let data = call.arg_bcs(i).map_err(|_| VmError::invariant("cannot serialize event"))?;
    call.cx.gas.charge_native(data.len())?;
    Ok(data)
}

fn serialize(cx: &mut NativeContext<'_>, t: &Type, msg: &Value) -> VmResult<Vec<u8>> {
    let layout = cx.types.layout_of(t)?;
    let data = bcs::serialize(cx.deref(msg)?, &layout).map_err(|_| VmError::invariant("cannot serialize event"))?;
    cx.gas.charge_native(data.len())?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_runtime::{AccountAddress, DatatypeId};
    use std::sync::Arc;

    /// Events of one type count once on the engine's type, not once per
    /// event: their types are clones of the session's own copy.
    #[test]
    fn events_clone_the_session_s_own_type() {
        let id = Arc::new(DatatypeId { address: AccountAddress::from_u64(1), module: "m".into(), name: "E".into() });
        let engine = Type::Datatype(id.clone(), vec![Type::U64]);
        let mut log = EventLog::default();
        for i in 0..10u8 {
            log.push(None, &engine, vec![i]);
        }
        assert_eq!(log.events.len(), 10);
        assert!(log.events.iter().all(|e| e.ty == engine));
        // `id`, `engine` and the log's one clone of the engine's type.
        assert_eq!(Arc::strong_count(&id), 3);
    }
}
