//! The session as compiled code sees it (`movejit_runtime::compiled`): its
//! loaded modules, its global-storage cache over flat values, with the
//! semantics of the flat interpreter's global-storage instructions, and its
//! interpreter for the calls compiled code hands back (a nested
//! [`FlatInterp`] over this session, its own frame stack and a meter with
//! the gas left).
//!
//! Unsafe: `GlobalStore::move_from` / `move_to` (`unsafe fn`s) write and
//! read the slots compiled code passes, under their contract (a live slot
//! of the resource's layout; jit-abi.md 1.3).

#![allow(unsafe_code)]

use super::exec::FlatInterp;
use super::ClosureTarget;
use crate::engine::SessionState;
use movejit_format::Opcode;
use movejit_runtime::compiled::{
    GlobalStore, Interpreted, InterpretedCall, InterpretedFunction, Interpreter, ModuleSource,
};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::{mem, Addr};
use movejit_runtime::gas::aptos::AptosMeter;
use movejit_runtime::GasMeter;
use movejit_runtime::{AccountAddress, ModuleId, TypeId, VmError, VmResult};
use std::sync::Arc;

impl ModuleSource for SessionState<'_, '_> {
    fn module(&self, id: &ModuleId) -> Option<&movejit_format::CompiledModule> {
        self.loaded.get(id).map(|m| &m.module)
    }

    fn module_hash(&self, id: &ModuleId) -> Option<[u8; 32]> {
        self.loaded.hashes().get(id).copied()
    }

    fn module_set_id(&self) -> Option<u64> {
        self.loaded.set_id()
    }

    fn shared_module(&self, id: &ModuleId) -> Option<movejit_runtime::compiled::SharedModule> {
        self.loaded.get(id).map(|m| m.clone() as movejit_runtime::compiled::SharedModule)
    }
}

impl GlobalStore for SessionState<'_, '_> {
    fn exists(&mut self, address: AccountAddress, ty: TypeId) -> VmResult<bool> {
        let slot = self.flat_global_slot(address, ty)?;
        Ok(self.globals.flat.get(slot).is_some_and(|g| g.is_some()))
    }

    fn borrow(&mut self, address: AccountAddress, ty: TypeId, mutable: bool) -> VmResult<Addr> {
        let slot = self.flat_global_slot(address, ty)?;
        let g = match self.globals.flat.get(slot) {
            Some(Some(v)) => Addr::of_value(v),
            _ => return Err(VmError::missing_resource(&address, false)),
        };
        if mutable {
            self.globals.changing(slot);
        }
        Ok(g)
    }

    unsafe fn move_from(&mut self, address: AccountAddress, ty: TypeId, dst: Addr) -> VmResult<()> {
        let slot = self.flat_global_slot(address, ty)?;
        if !self.globals.flat.get(slot).is_some_and(|g| g.is_some()) {
            return Err(VmError::missing_resource(&address, true));
        }
        self.globals.changing(slot);
        let v = self.globals.flat[slot].take().ok_or_else(|| VmError::invariant("global slot"))?;
        // SAFETY: the caller's contract: `dst` is a live slot of the
        // resource's layout holding no live value.
        unsafe { mem::move_in(v, dst) };
        Ok(())
    }

    unsafe fn move_to(&mut self, address: AccountAddress, ty: TypeId, src: Addr) -> VmResult<()> {
        let slot = self.flat_global_slot(address, ty)?;
        let l = self.global_layout(ty)?;
        if self.globals.flat.get(slot).is_some_and(|g| g.is_some()) {
            // SAFETY: the caller's contract: `src` is a live slot of layout
            // `l`, which the call consumes.
            unsafe { mem::drop_value(&l, src) };
            return Err(VmError::resource_exists(&address));
        }
        self.globals.changing(slot);
        // SAFETY: as above.
        self.globals.flat[slot] = Some(unsafe { mem::move_out(&l, src) });
        Ok(())
    }

    fn charge_aptos_global(
        &mut self,
        meter: &mut AptosMeter,
        address: AccountAddress,
        ty: TypeId,
        op: Opcode,
    ) -> VmResult<()> {
        let slot = self.flat_global_slot(address, ty)?;
        SessionState::charge_aptos_global(self, meter, slot, op)
    }

    unsafe fn drop_resource(&mut self, ty: TypeId, src: Addr) -> VmResult<()> {
        let l = self.global_layout(ty)?;
        // SAFETY: the caller's contract: `src` is a live slot of layout `l`,
        // which the call consumes.
        unsafe { mem::drop_value(&l, src) };
        Ok(())
    }
}

impl Interpreter for SessionState<'_, '_> {
    fn interpret(&mut self, natives: &mut NativeSession, call: InterpretedCall<'_>) -> Interpreted {
        // SAFETY: a nonzero `aptos_meter` is the address of the execution's
        // live meter, which nothing else touches while this call runs (the
        // compiled code that passed it is suspended below it).
        if let Some(meter) = unsafe { (call.state.aptos_meter as *mut AptosMeter).as_mut() } {
            // The nested run charges the execution's meter itself: moved
            // into a meter of its own for the run, and back.
            let mut gas = GasMeter::aptos(meter.pricing.clone(), 0);
            let swap = |gas: &mut GasMeter, meter: &mut AptosMeter| {
                if let Some(held) = gas.aptos_meter_mut() {
                    std::mem::swap(held, meter);
                }
            };
            swap(&mut gas, meter);
            let result = self.interpret_with(natives, &call, &mut gas);
            swap(&mut gas, meter);
            let (result, at_load) = split(result);
            return Interpreted { result, gas_left: None, at_load };
        }
        let mut gas = match call.state.gas_left {
            Some(g) => self.engine.meter_template.with_budget(g),
            None => GasMeter::unmetered(),
        };
        let (result, at_load) = split(self.interpret_with(natives, &call, &mut gas));
        Interpreted { result, gas_left: gas.remaining(), at_load }
    }
}

/// A nested run's result and whether its error is a loading error of the
/// call itself.
fn split(r: Result<(), (VmError, bool)>) -> (VmResult<()>, bool) {
    match r {
        Ok(()) => (Ok(()), false),
        Err((e, at_load)) => (Err(e), at_load),
    }
}

impl SessionState<'_, '_> {
    /// The nested run; an error's flag: a loading error of the call itself
    /// (see [`Interpreted::at_load`]).
    fn interpret_with(
        &mut self,
        natives: &mut NativeSession,
        call: &InterpretedCall<'_>,
        gas: &mut GasMeter,
    ) -> Result<(), (VmError, bool)> {
        let no_load = |e: VmError| (e, false);
        let (target, entered) = match call.function {
            InterpretedFunction::Entered(def) => {
                let m = self.load_module(call.module).map_err(no_load)?;
                (self.function_target(m, def).map_err(no_load)?, true)
            }
            InterpretedFunction::Called(f) => (self.closure_target(f).map_err(no_load)?, false),
        };
        self.flat.note_nested(&target, call.ty_args);
        let ty_args = Arc::new(call.ty_args.to_vec());
        let mut interp = FlatInterp::new(self, gas);
        interp.run_nested(&target, ty_args, entered, call.args, call.rets, call.state, natives)
    }

    /// The function compiled code enters (cached per session).
    fn function_target(&mut self, m: Arc<movejit_loader::LoadedModule>, def: u16) -> VmResult<ClosureTarget> {
        let key = (Arc::as_ptr(&m) as usize, def);
        if let Some(t) = self.flat.entered.get(&key) {
            return Ok(t.clone());
        }
        let t = self.make_target(m, def)?;
        self.flat.entered.insert(key, t.clone());
        Ok(t)
    }
}
