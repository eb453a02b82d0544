//! The session as compiled code sees it (`movejit_runtime::compiled`): its
//! loaded modules and its global-storage cache over flat values, with the
//! semantics of the flat interpreter's global-storage instructions.

use crate::engine::Session;
use movejit_runtime::compiled::{GlobalStore, ModuleSource};
use movejit_runtime::flat::{mem, Addr};
use movejit_runtime::{AccountAddress, ModuleId, StatusCode, Type, VmError, VmResult};

impl ModuleSource for Session<'_, '_> {
    fn module(&self, id: &ModuleId) -> Option<&movejit_format::CompiledModule> {
        self.modules.get(id).map(|m| &m.module)
    }

    fn module_hash(&self, id: &ModuleId) -> Option<[u8; 32]> {
        self.module_hashes.get(id).copied()
    }
}

impl GlobalStore for Session<'_, '_> {
    fn exists(&mut self, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        let slot = self.flat_global_slot(address, ty)?;
        Ok(self.globals.flat.get(slot).is_some_and(|g| g.is_some()))
    }

    fn borrow(&mut self, address: AccountAddress, ty: &Type, mutable: bool) -> VmResult<Addr> {
        let slot = self.flat_global_slot(address, ty)?;
        let g = match self.globals.flat.get(slot) {
            Some(Some(v)) => Addr::of_value(v),
            _ => return Err(VmError::new(StatusCode::MISSING_DATA)),
        };
        if mutable {
            self.globals.meta[slot].dirty = true;
        }
        Ok(g)
    }

    fn move_from(&mut self, address: AccountAddress, ty: &Type, dst: Addr) -> VmResult<()> {
        let slot = self.flat_global_slot(address, ty)?;
        let v = self.globals.flat.get_mut(slot).and_then(|g| g.take()).ok_or_else(|| VmError::new(StatusCode::MISSING_DATA))?;
        self.globals.meta[slot].dirty = true;
        mem::move_in(v, dst);
        Ok(())
    }

    fn move_to(&mut self, address: AccountAddress, ty: &Type, src: Addr) -> VmResult<()> {
        let slot = self.flat_global_slot(address, ty)?;
        let l = self.flat_layout(ty)?;
        if self.globals.flat.get(slot).is_some_and(|g| g.is_some()) {
            mem::drop_value(&l, src);
            return Err(VmError::new(StatusCode::RESOURCE_ALREADY_EXISTS));
        }
        self.globals.flat[slot] = Some(mem::move_out(&l, src));
        self.globals.meta[slot].dirty = true;
        Ok(())
    }
}
