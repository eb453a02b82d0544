//! Publishing: a bundle of modules checked in a session (decoded, verified
//! and linked against the bundle and the session's store, the loaded
//! dependencies coming through the interpreter's loader) before the host
//! writes them to its storage. Nothing here runs code.

use crate::Session;
use movejit_format::{decode_module, StructFieldInformation};
use movejit_loader::{check_links, verify_linked, LoadedModule, Stage};
use movejit_runtime::{AccountAddress, ErrorLocation, ModuleId, StatusCode, VmError, VmResult};
use std::sync::Arc;

impl Session<'_, '_> {
    /// Checks a bundle of modules for publishing from `sender`: decode, the
    /// address check, duplicates, then for each module in order
    /// verification, natives and linking against earlier bundle members and
    /// the store. Returns the ids and bytes to store; stores nothing itself.
    pub fn publish_bundle(&mut self, bundle: &[Vec<u8>], sender: AccountAddress) -> VmResult<Vec<(ModuleId, Vec<u8>)>> {
        let mut decoded = Vec::with_capacity(bundle.len());
        for bytes in bundle {
            let m = decode_module(bytes).map_err(|e| VmError::new(e.status).with_message(e.message))?;
            decoded.push(m);
        }
        let mut ids: Vec<ModuleId> = Vec::new();
        for m in &decoded {
            let id = ModuleId::new(*m.address(), m.name());
            if id.address != sender {
                return Err(VmError::new(StatusCode::MODULE_ADDRESS_DOES_NOT_MATCH_SENDER));
            }
            if ids.contains(&id) {
                return Err(VmError::new(StatusCode::DUPLICATE_MODULE_NAME));
            }
            ids.push(id);
        }
        let mut done: Vec<Arc<LoadedModule>> = Vec::new();
        for ((m, id), bytes) in decoded.into_iter().zip(&ids).zip(bundle) {
            let mut deps: Vec<Arc<LoadedModule>> = Vec::new();
            let located = |status: StatusCode, msg: String| {
                let mut e = VmError::new(status).with_message(msg);
                e.location = Some(ErrorLocation {
                    module: id.long_string(),
                    function_name: String::new(),
                    function_index: 0,
                    code_offset: 0,
                });
                e
            };
            for (a, n) in m.immediate_dependencies() {
                let did = ModuleId::new(a, &n);
                if let Some(d) = done.iter().find(|d| d.id == did) {
                    deps.push(d.clone());
                    continue;
                }
                if ids.contains(&did) || did == *id {
                    return Err(located(StatusCode::CYCLIC_MODULE_DEPENDENCY, format!("{did}")));
                }
                match self.state.load_module(&did) {
                    Ok(d) => deps.push(d),
                    Err(_) => return Err(located(StatusCode::MISSING_DEPENDENCY, format!("{did}"))),
                }
            }
            let (closure, mut friends) = self.state.linking_context(&m, &deps, Stage::Publish);
            // Friends may be published in the same bundle.
            for f in &m.friend_decls {
                let fid = m
                    .address_identifiers
                    .get(f.address.idx())
                    .zip(m.identifiers.get(f.name.idx()))
                    .map(|(a, n)| ModuleId::new(*a, n));
                if let Some(pos) = fid.and_then(|fid| ids.iter().position(|i| *i == fid)) {
                    if let Ok(fm) = decode_module(&bundle[pos]) {
                        friends.push(fm);
                    }
                }
            }
            verify_linked(&m, id, &closure, &friends, self.flavour(), Stage::Publish)?;
            let mut loaded = LoadedModule::new(m, &self.state.config().natives)?;
            loaded.size = bytes.len() as u64;
            for (i, f) in loaded.module.function_defs.iter().enumerate() {
                if f.is_native() && loaded.natives.get(i).is_none_or(|n| n.is_none()) {
                    return Err(located(
                        StatusCode::MISSING_DEPENDENCY,
                        format!("native {}::{} not found", id, loaded.function_name(i as u16)),
                    ));
                }
            }
            if loaded.module.struct_defs.iter().any(|d| matches!(d.field_information, StructFieldInformation::Native)) {
                return Err(located(StatusCode::MISSING_DEPENDENCY, "native struct".into()));
            }
            check_links(&loaded, &deps).map_err(|e| located(e.status, e.message.unwrap_or_default()))?;
            done.push(Arc::new(loaded));
        }
        Ok(ids.into_iter().zip(bundle.iter().cloned()).collect())
    }
}
