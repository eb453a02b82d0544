//! Importing handles from compiled dependencies: a struct or function the
//! text uses without declaring it is copied from the dependency that
//! defines it, with every index translated into this unit's tables.

use super::{err, Builder};
use crate::ast::ModuleName;
use crate::error::{AsmErrorKind, AsmResult, Pos};
use movejit_format::*;

/// The module id and item name a dependency's handle denotes.
fn handle_id(dep: &CompiledModule, module: ModuleHandleIndex, name: IdentifierIndex) -> Option<(ModuleName, String)> {
    let mh = dep.module_handles.get(module.idx())?;
    let address = *dep.address_identifiers.get(mh.address.idx())?;
    let mname = dep.identifiers.get(mh.name.idx())?.clone();
    let item = dep.identifiers.get(name.idx())?.clone();
    Some((ModuleName { address, name: mname }, item))
}

fn corrupt(pos: Pos) -> crate::error::AsmError {
    err(AsmErrorKind::Unresolved, pos, "dependency module has an index out of bounds")
}

impl Builder<'_> {
    /// Imports struct `key` from the dependency defining it, if any.
    pub(super) fn import_struct(
        &mut self,
        key: &(ModuleName, String),
        pos: Pos,
    ) -> AsmResult<Option<StructHandleIndex>> {
        let deps = self.deps;
        let Some(dep) = deps.iter().find(|d| self_id(d).as_ref() == Some(&key.0)) else {
            return Ok(None);
        };
        let found =
            dep.struct_defs.iter().map(|d| d.struct_handle).chain(dep.enum_defs.iter().map(|d| d.enum_handle)).find(
                |sh| {
                    dep.struct_handles.get(sh.idx()).is_some_and(|h| dep.identifiers.get(h.name.idx()) == Some(&key.1))
                },
            );
        match found {
            Some(sh) => self.struct_from(dep, sh, pos).map(Some),
            None => Ok(None),
        }
    }

    /// Imports function `key` from the dependency defining it, if any.
    pub(super) fn import_fun(
        &mut self,
        key: &(ModuleName, String),
        pos: Pos,
    ) -> AsmResult<Option<FunctionHandleIndex>> {
        let deps = self.deps;
        let Some(dep) = deps.iter().find(|d| self_id(d).as_ref() == Some(&key.0)) else {
            return Ok(None);
        };
        let found = dep.function_defs.iter().map(|d| d.function).find(|fh| {
            dep.function_handles.get(fh.idx()).is_some_and(|h| dep.identifiers.get(h.name.idx()) == Some(&key.1))
        });
        match found {
            Some(fh) => self.fun_from(dep, fh, pos).map(Some),
            None => Ok(None),
        }
    }

    /// This unit's handle for the dependency's struct handle `sh`.
    fn struct_from(&mut self, dep: &CompiledModule, sh: StructHandleIndex, pos: Pos) -> AsmResult<StructHandleIndex> {
        let h = dep.struct_handles.get(sh.idx()).ok_or_else(|| corrupt(pos))?;
        let key = handle_id(dep, h.module, h.name).ok_or_else(|| corrupt(pos))?;
        if let Some(i) = self.maps.struct_handles.get(&key) {
            return Ok(StructHandleIndex(*i));
        }
        let module = self.module(&key.0, pos)?;
        let name = self.ident(&key.1, pos)?;
        let handle = StructHandle { module, name, abilities: h.abilities, type_parameters: h.type_parameters.clone() };
        let i = super::push(&mut self.m.struct_handles, pos, "struct handle", handle)?;
        self.maps.struct_handles.insert(key, i);
        Ok(StructHandleIndex(i))
    }

    /// This unit's handle for the dependency's function handle `fh`.
    fn fun_from(&mut self, dep: &CompiledModule, fh: FunctionHandleIndex, pos: Pos) -> AsmResult<FunctionHandleIndex> {
        let h = dep.function_handles.get(fh.idx()).ok_or_else(|| corrupt(pos))?;
        let key = handle_id(dep, h.module, h.name).ok_or_else(|| corrupt(pos))?;
        if let Some(i) = self.maps.fun_handles.get(&key) {
            return Ok(FunctionHandleIndex(*i));
        }
        let module = self.module(&key.0, pos)?;
        let name = self.ident(&key.1, pos)?;
        let parameters = self.sig_from(dep, h.parameters, pos)?;
        let return_ = self.sig_from(dep, h.return_, pos)?;
        let access_specifiers = match &h.access_specifiers {
            None => None,
            Some(specs) => Some(specs.iter().map(|s| self.access_from(dep, s, pos)).collect::<AsmResult<Vec<_>>>()?),
        };
        let handle = FunctionHandle {
            module,
            name,
            parameters,
            return_,
            type_parameters: h.type_parameters.clone(),
            access_specifiers,
            attributes: h.attributes.clone(),
        };
        let i = super::push(&mut self.m.function_handles, pos, "function handle", handle)?;
        self.maps.fun_handles.insert(key, i);
        Ok(FunctionHandleIndex(i))
    }

    fn sig_from(&mut self, dep: &CompiledModule, si: SignatureIndex, pos: Pos) -> AsmResult<SignatureIndex> {
        let sig = dep.signatures.get(si.idx()).ok_or_else(|| corrupt(pos))?;
        let tys = sig.0.iter().map(|t| self.token_from(dep, t, pos)).collect::<AsmResult<Vec<_>>>()?;
        self.signature(tys, pos)
    }

    fn token_from(&mut self, dep: &CompiledModule, t: &SignatureToken, pos: Pos) -> AsmResult<SignatureToken> {
        use SignatureToken as T;
        let list = |b: &mut Self, ts: &[SignatureToken]| {
            ts.iter().map(|t| b.token_from(dep, t, pos)).collect::<AsmResult<Vec<_>>>()
        };
        Ok(match t {
            T::Vector(e) => T::Vector(Box::new(self.token_from(dep, e, pos)?)),
            T::Reference(e) => T::Reference(Box::new(self.token_from(dep, e, pos)?)),
            T::MutableReference(e) => T::MutableReference(Box::new(self.token_from(dep, e, pos)?)),
            T::Struct(sh) => T::Struct(self.struct_from(dep, *sh, pos)?),
            T::StructInstantiation(sh, args) => {
                let sh = self.struct_from(dep, *sh, pos)?;
                T::StructInstantiation(sh, list(self, args)?)
            }
            T::Function(ps, rs, a) => {
                let ps = list(self, ps)?;
                T::Function(ps, list(self, rs)?, *a)
            }
            other => other.clone(),
        })
    }

    fn access_from(&mut self, dep: &CompiledModule, s: &AccessSpecifier, pos: Pos) -> AsmResult<AccessSpecifier> {
        let address_of = |b: &mut Self, ai: AddressIdentifierIndex| -> AsmResult<AddressIdentifierIndex> {
            let a = *dep.address_identifiers.get(ai.idx()).ok_or_else(|| corrupt(pos))?;
            b.address(a, pos)
        };
        let resource = match &s.resource {
            ResourceSpecifier::Any => ResourceSpecifier::Any,
            ResourceSpecifier::DeclaredAtAddress(a) => ResourceSpecifier::DeclaredAtAddress(address_of(self, *a)?),
            ResourceSpecifier::DeclaredInModule(m) => {
                let mh = dep.module_handles.get(m.idx()).ok_or_else(|| corrupt(pos))?;
                let (id, _) = handle_id(dep, *m, mh.name).ok_or_else(|| corrupt(pos))?;
                ResourceSpecifier::DeclaredInModule(self.module(&id, pos)?)
            }
            ResourceSpecifier::Resource(sh) => ResourceSpecifier::Resource(self.struct_from(dep, *sh, pos)?),
            ResourceSpecifier::ResourceInstantiation(sh, si) => ResourceSpecifier::ResourceInstantiation(
                self.struct_from(dep, *sh, pos)?,
                self.sig_from(dep, *si, pos)?,
            ),
        };
        let address = match &s.address {
            AddressSpecifier::Any => AddressSpecifier::Any,
            AddressSpecifier::Literal(a) => AddressSpecifier::Literal(address_of(self, *a)?),
            AddressSpecifier::Parameter(l, None) => AddressSpecifier::Parameter(*l, None),
            AddressSpecifier::Parameter(l, Some(fi)) => {
                let inst = dep.function_instantiations.get(fi.idx()).ok_or_else(|| corrupt(pos))?;
                let fh = self.fun_from(dep, inst.handle, pos)?;
                let args = dep.signatures.get(inst.type_parameters.idx()).ok_or_else(|| corrupt(pos))?.0.clone();
                let args = args.iter().map(|t| self.token_from(dep, t, pos)).collect::<AsmResult<Vec<_>>>()?;
                AddressSpecifier::Parameter(*l, Some(self.fun_inst(fh, args, pos)?))
            }
        };
        Ok(AccessSpecifier { kind: s.kind, negated: s.negated, resource, address })
    }
}

/// The id of the module a compiled module defines.
fn self_id(d: &CompiledModule) -> Option<ModuleName> {
    let h = d.module_handles.get(d.self_module_handle_idx.idx())?;
    handle_id(d, d.self_module_handle_idx, h.name).map(|(m, _)| m)
}
