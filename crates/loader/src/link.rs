//! Linking a module being published against its loaded dependencies.

use crate::LoadedModule;
use movejit_format::ModuleHandleIndex;
use movejit_runtime::{ModuleId, StatusCode, VmError, VmResult};
use std::sync::Arc;

/// Every function and datatype `m` imports exists in its module among
/// `deps` (LOOKUP_FAILED otherwise).
pub fn check_links(m: &LoadedModule, deps: &[Arc<LoadedModule>]) -> VmResult<()> {
    let cm = &m.module;
    let find = |mh: ModuleHandleIndex| -> Option<&Arc<LoadedModule>> {
        let h = cm.module_handles.get(mh.idx())?;
        let id = ModuleId::new(*cm.address_identifiers.get(h.address.idx())?, cm.identifiers.get(h.name.idx())?);
        deps.iter().find(|d| d.id == id)
    };
    for fh in &cm.function_handles {
        if fh.module == cm.self_module_handle_idx {
            continue;
        }
        let name = cm.identifiers.get(fh.name.idx()).map(String::as_str).unwrap_or("");
        match find(fh.module) {
            Some(d) if d.functions.contains_key(name) => {}
            _ => return Err(VmError::new(StatusCode::LOOKUP_FAILED).with_message(format!("function {name}"))),
        }
    }
    for sh in &cm.struct_handles {
        if sh.module == cm.self_module_handle_idx {
            continue;
        }
        let name = cm.identifiers.get(sh.name.idx()).map(String::as_str).unwrap_or("");
        match find(sh.module) {
            Some(d) if d.datatypes.contains_key(name) => {}
            _ => return Err(VmError::new(StatusCode::LOOKUP_FAILED).with_message(format!("datatype {name}"))),
        }
    }
    Ok(())
}
