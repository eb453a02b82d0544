//! Linking against dependencies: every module this one imports is present;
//! every imported struct and function exists in its defining module with
//! compatible abilities, type parameters and signature, and is visible to
//! this module; no module depends on itself (directly or transitively) or
//! befriends a module it depends on.

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{
    AccountAddress, CompiledModule, FunctionHandle, SignatureToken as ST, StatusCode, StructHandle, Visibility,
};
use std::collections::{BTreeMap, BTreeSet};

/// A module's identity: address and name.
pub type ModuleId = (AccountAddress, String);

pub fn module_id(m: &CompiledModule) -> Option<ModuleId> {
    let h = m.module_handles.get(m.self_module_handle_idx.idx())?;
    Some((*m.address_identifiers.get(h.address.idx())?, m.identifiers.get(h.name.idx())?.clone()))
}

/// A module's identity without copying its name.
fn module_id_ref(m: &CompiledModule) -> Option<(AccountAddress, &str)> {
    let h = m.module_handles.get(m.self_module_handle_idx.idx())?;
    Some((*m.address_identifiers.get(h.address.idx())?, m.identifiers.get(h.name.idx())?.as_str()))
}

fn handle_id(m: &CompiledModule, h: movejit_format::ModuleHandleIndex) -> ModuleId {
    let mh = &m.module_handles[h.idx()];
    (m.address_identifiers[mh.address.idx()], m.identifiers[mh.name.idx()].clone())
}

/// Checks `module`'s imports against `checked` (bounds-checked modules) and
/// `others` (any modules: bounds-checked here first).
pub(crate) fn verify_module(
    module: &CompiledModule,
    checked: &[&CompiledModule],
    others: &[&CompiledModule],
    config: &VerifierConfig,
) -> VerifyResult {
    let me = module_id(module).ok_or_else(|| VerifyError::module(StatusCode::INDEX_OUT_OF_BOUNDS))?;
    // Index every candidate by id (safe accessors only); the ones this
    // module links against are bounds-checked below, once each.
    let mut all: BTreeMap<(AccountAddress, &str), (&CompiledModule, bool)> = BTreeMap::new();
    let tagged = checked.iter().map(|d| (*d, true)).chain(others.iter().map(|d| (*d, false)));
    for (d, trusted) in tagged {
        if let Some(id) = module_id_ref(d) {
            if id != (me.0, me.1.as_str()) {
                all.entry(id).or_insert((d, trusted));
            }
        }
    }
    let mut map: BTreeMap<ModuleId, &CompiledModule> = BTreeMap::new();
    for id in module.immediate_dependencies().into_iter().chain(friend_ids(module)) {
        if let Some((d, trusted)) = all.get(&(id.0, id.1.as_str())).copied() {
            if !map.contains_key(&id) && (trusted || crate::bounds::verify_module(d).is_ok()) {
                map.insert(id, d);
            }
        }
    }
    let missing = if config.is_sui() { StatusCode::MISSING_DEPENDENCY } else { StatusCode::LINKER_ERROR };
    for (i, _) in module.module_handles.iter().enumerate() {
        if i == module.self_module_handle_idx.idx() {
            continue;
        }
        let id = handle_id(module, movejit_format::ModuleHandleIndex(i as u16));
        if id == me {
            return Err(VerifyError::module(StatusCode::CYCLIC_MODULE_DEPENDENCY));
        }
        if !map.contains_key(&id) {
            return Err(VerifyError::module(missing).with_message(format!(
                "missing {}::{}",
                id.0.to_hex_short(),
                id.1
            )));
        }
    }
    // Aptos publishing requires a module's friends to exist.
    if config.check_friends_exist {
        for f in &module.friend_decls {
            let id = (module.address_identifiers[f.address.idx()], module.identifiers[f.name.idx()].clone());
            if !map.contains_key(&id) {
                return Err(VerifyError::module(StatusCode::LINKER_ERROR).with_message("friend module not found"));
            }
        }
    }
    let ctx = Linker { module, map: &map, fn_index: Default::default() };
    for sh in &module.struct_handles {
        if sh.module != module.self_module_handle_idx {
            ctx.check_struct(sh)?;
        }
    }
    for fh in &module.function_handles {
        if fh.module != module.self_module_handle_idx {
            ctx.check_function(fh, &me)?;
        }
    }
    // Transitive dependencies must not come back to this module, nor
    // contain one of its friends.
    let mut seen = BTreeSet::new();
    let mut todo: Vec<ModuleId> = module.immediate_dependencies();
    while let Some(id) = todo.pop() {
        if id == me {
            return Err(VerifyError::module(StatusCode::CYCLIC_MODULE_DEPENDENCY));
        }
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(d) = all.get(&(id.0, id.1.as_str())) {
            todo.extend(safe_immediate_dependencies(d.0));
        }
    }
    for f in &module.friend_decls {
        let id = (module.address_identifiers[f.address.idx()], module.identifiers[f.name.idx()].clone());
        if seen.contains(&id) {
            return Err(VerifyError::module(StatusCode::INVALID_FRIEND_DECL_WITH_MODULES_IN_DEPENDENCIES));
        }
    }
    Ok(())
}

fn friend_ids(m: &CompiledModule) -> Vec<ModuleId> {
    m.friend_decls
        .iter()
        .map(|f| (m.address_identifiers[f.address.idx()], m.identifiers[f.name.idx()].clone()))
        .collect()
}

/// A dependency's own imports, read without trusting its indices.
fn safe_immediate_dependencies(m: &CompiledModule) -> Vec<ModuleId> {
    m.module_handles
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != m.self_module_handle_idx.idx())
        .filter_map(|(_, h)| {
            Some((*m.address_identifiers.get(h.address.idx())?, m.identifiers.get(h.name.idx())?.clone()))
        })
        .collect()
}

struct Linker<'a> {
    module: &'a CompiledModule,
    map: &'a BTreeMap<ModuleId, &'a CompiledModule>,
    fn_index: std::cell::RefCell<BTreeMap<usize, BTreeMap<&'a str, &'a movejit_format::FunctionDefinition>>>,
}

fn lookup() -> VerifyError {
    VerifyError::module(StatusCode::LOOKUP_FAILED)
}
fn mismatch() -> VerifyError {
    VerifyError::module(StatusCode::TYPE_MISMATCH)
}

impl<'a> Linker<'a> {
    /// Name -> definition, per dependency (built on first use).
    fn functions_of(
        &self,
        dep: &'a CompiledModule,
    ) -> std::cell::Ref<'_, BTreeMap<&'a str, &'a movejit_format::FunctionDefinition>> {
        let key = dep as *const CompiledModule as usize;
        if !self.fn_index.borrow().contains_key(&key) {
            let map = dep
                .function_defs
                .iter()
                .map(|d| (dep.identifiers[dep.function_handles[d.function.idx()].name.idx()].as_str(), d))
                .collect();
            self.fn_index.borrow_mut().insert(key, map);
        }
        std::cell::Ref::map(self.fn_index.borrow(), |m| &m[&key])
    }

    fn owner(&self, h: movejit_format::ModuleHandleIndex) -> VerifyResult<(ModuleId, &'a CompiledModule)> {
        let id = handle_id(self.module, h);
        let m: &'a CompiledModule = self.map.get(&id).copied().ok_or_else(lookup)?;
        Ok((id, m))
    }

    /// The defining module's handle for a datatype named `name`.
    fn find_struct<'d>(&self, dep: &'d CompiledModule, name: &str) -> Option<&'d StructHandle> {
        let by_handle = |h: movejit_format::StructHandleIndex| {
            let sh = &dep.struct_handles[h.idx()];
            (dep.identifiers[sh.name.idx()] == name).then_some(sh)
        };
        dep.struct_defs
            .iter()
            .find_map(|d| by_handle(d.struct_handle))
            .or_else(|| dep.enum_defs.iter().find_map(|d| by_handle(d.enum_handle)))
    }

    fn check_struct(&self, sh: &StructHandle) -> VerifyResult {
        let (_, dep) = self.owner(sh.module)?;
        let name = &self.module.identifiers[sh.name.idx()];
        let def = self.find_struct(dep, name).ok_or_else(lookup)?;
        if !def.abilities.contains(sh.abilities) {
            return Err(mismatch());
        }
        let tp_ok = sh.type_parameters.len() == def.type_parameters.len()
            && sh
                .type_parameters
                .iter()
                .zip(&def.type_parameters)
                .all(|(l, d)| (!l.is_phantom || d.is_phantom) && l.constraints.contains(d.constraints));
        if !tp_ok {
            return Err(mismatch());
        }
        Ok(())
    }

    fn check_function(&self, fh: &FunctionHandle, me: &ModuleId) -> VerifyResult {
        let (_, dep) = self.owner(fh.module)?;
        let name = &self.module.identifiers[fh.name.idx()];
        let def = self.functions_of(dep).get(name.as_str()).copied().ok_or_else(lookup)?;
        let visible = match def.visibility {
            Visibility::Public => true,
            Visibility::Friend => dep
                .friend_decls
                .iter()
                .any(|f| dep.address_identifiers[f.address.idx()] == me.0 && dep.identifiers[f.name.idx()] == me.1),
            Visibility::Private => false,
        };
        if !visible {
            return Err(lookup());
        }
        let dh = &dep.function_handles[def.function.idx()];
        let tp_ok = fh.type_parameters.len() == dh.type_parameters.len()
            && fh.type_parameters.iter().zip(&dh.type_parameters).all(|(l, d)| l.contains(*d));
        if !tp_ok {
            return Err(mismatch());
        }
        self.same_sig(&self.module.signatures[fh.parameters.idx()].0, &dep.signatures[dh.parameters.idx()].0, dep)?;
        self.same_sig(&self.module.signatures[fh.return_.idx()].0, &dep.signatures[dh.return_.idx()].0, dep)?;
        if !fh.attributes.is_empty() {
            let mut def_attrs = dh.attributes.clone();
            if def_attrs.is_empty() && def.visibility == Visibility::Public {
                def_attrs.push(movejit_format::FunctionAttribute::Persistent);
            }
            // Only attributes that cannot be removed must be present (a
            // `ModuleLock` on the import need not be on the definition).
            if !fh.attributes.iter().all(|a| !crate::compat::cannot_be_removed(a) || def_attrs.contains(a)) {
                return Err(VerifyError::module(StatusCode::LINKER_ERROR));
            }
        }
        Ok(())
    }

    fn same_sig(&self, local: &[ST], def: &[ST], dep: &CompiledModule) -> VerifyResult {
        if local.len() != def.len() {
            return Err(mismatch());
        }
        local.iter().zip(def).try_for_each(|(l, d)| self.same_type(l, d, dep))
    }

    fn struct_name(m: &CompiledModule, h: movejit_format::StructHandleIndex) -> (ModuleId, &str) {
        let sh = &m.struct_handles[h.idx()];
        (handle_id(m, sh.module), &m.identifiers[sh.name.idx()])
    }

    fn same_type(&self, l: &ST, d: &ST, dep: &CompiledModule) -> VerifyResult {
        match (l, d) {
            (ST::Vector(a), ST::Vector(b))
            | (ST::Reference(a), ST::Reference(b))
            | (ST::MutableReference(a), ST::MutableReference(b)) => self.same_type(a, b, dep),
            (ST::Function(p1, r1, a1), ST::Function(p2, r2, a2)) => {
                if a1 != a2 {
                    return Err(mismatch());
                }
                self.same_sig(p1, p2, dep)?;
                self.same_sig(r1, r2, dep)
            }
            (ST::Struct(a), ST::Struct(b)) => self.same_struct(*a, *b, dep),
            (ST::StructInstantiation(a, x), ST::StructInstantiation(b, y)) => {
                self.same_struct(*a, *b, dep)?;
                self.same_sig(x, y, dep)
            }
            (ST::TypeParameter(a), ST::TypeParameter(b)) if a == b => Ok(()),
            (
                ST::Struct(_)
                | ST::StructInstantiation(..)
                | ST::Vector(_)
                | ST::Reference(_)
                | ST::MutableReference(_)
                | ST::Function(..)
                | ST::TypeParameter(_),
                _,
            ) => Err(mismatch()),
            (a, b) if a == b => Ok(()),
            _ => Err(mismatch()),
        }
    }

    fn same_struct(
        &self,
        a: movejit_format::StructHandleIndex,
        b: movejit_format::StructHandleIndex,
        dep: &CompiledModule,
    ) -> VerifyResult {
        if Self::struct_name(self.module, a) == Self::struct_name(dep, b) {
            Ok(())
        } else {
            Err(mismatch())
        }
    }
}
