//! Upgrade compatibility (BACKWARD_INCOMPATIBLE_MODULE_UPDATE): a new
//! version of a module keeps every struct's abilities, type parameters and
//! layout (Aptos enums may append variants), and every public or entry
//! function's signature.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{
    CompiledModule, FunctionAttribute, SignatureToken as ST, StatusCode, StructFieldInformation, Visibility,
};

fn incompatible(what: String) -> VerifyError {
    VerifyError::module(StatusCode::BACKWARD_INCOMPATIBLE_MODULE_UPDATE).with_message(what)
}

/// Checks that `new` may replace `old` (both bounds-checked).
pub fn check_upgrade(old: &CompiledModule, new: &CompiledModule) -> VerifyResult {
    crate::bounds::verify_module(old)?;
    crate::bounds::verify_module(new)?;
    for od in &old.struct_defs {
        let oh = &old.struct_handles[od.struct_handle.idx()];
        let name = &old.identifiers[oh.name.idx()];
        let nd = new
            .struct_defs
            .iter()
            .find(|d| new.identifiers[new.struct_handles[d.struct_handle.idx()].name.idx()] == *name)
            .ok_or_else(|| incompatible(format!("struct {name} removed")))?;
        let nh = &new.struct_handles[nd.struct_handle.idx()];
        let tps_ok = oh.type_parameters.len() == nh.type_parameters.len()
            && oh
                .type_parameters
                .iter()
                .zip(&nh.type_parameters)
                .all(|(o, n)| (!o.is_phantom || n.is_phantom) && o.constraints.contains(n.constraints));
        if !nh.abilities.contains(oh.abilities) || !tps_ok {
            return Err(incompatible(format!("struct {name} changed abilities or type parameters")));
        }
        let same_fields = |a: &[movejit_format::FieldDefinition], b: &[movejit_format::FieldDefinition]| {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| {
                    old.identifiers[x.name.idx()] == new.identifiers[y.name.idx()]
                        && same_type(old, &x.signature, new, &y.signature)
                })
        };
        let ok = match (&od.field_information, &nd.field_information) {
            (StructFieldInformation::Native, StructFieldInformation::Native) => true,
            (StructFieldInformation::Declared(a), StructFieldInformation::Declared(b)) => same_fields(a, b),
            (StructFieldInformation::DeclaredVariants(a), StructFieldInformation::DeclaredVariants(b)) => {
                a.len() <= b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        old.identifiers[x.name.idx()] == new.identifiers[y.name.idx()]
                            && same_fields(&x.fields, &y.fields)
                    })
            }
            _ => false,
        };
        if !ok {
            return Err(incompatible(format!("struct {name} changed layout")));
        }
    }
    for of in &old.function_defs {
        let oh = &old.function_handles[of.function.idx()];
        let persistent = oh.attributes.contains(&FunctionAttribute::Persistent);
        if of.visibility == Visibility::Private && !of.is_entry && !persistent {
            continue;
        }
        let name = &old.identifiers[oh.name.idx()];
        // Friend functions count: Move's default compatibility checks friend linking.
        let nf = new
            .function_defs
            .iter()
            .find(|d| new.identifiers[new.function_handles[d.function.idx()].name.idx()] == *name)
            .ok_or_else(|| incompatible(format!("function {name} removed")))?;
        let nh = &new.function_handles[nf.function.idx()];
        let vis_ok = match (of.visibility, nf.visibility) {
            (Visibility::Public, v) => v == Visibility::Public,
            (Visibility::Friend, v) => v != Visibility::Private,
            (Visibility::Private, _) => true,
        };
        if !vis_ok {
            return Err(incompatible(format!("function {name} changed visibility")));
        }
        if of.is_entry && !nf.is_entry {
            return Err(incompatible(format!("function {name} no longer entry")));
        }
        if oh.attributes.iter().any(|a| cannot_be_removed(a) && !nh.attributes.contains(a)) {
            return Err(incompatible(format!("function {name} lost attributes")));
        }
        let sig_eq = |a: movejit_format::SignatureIndex, b: movejit_format::SignatureIndex| {
            let (x, y) = (&old.signatures[a.idx()].0, &new.signatures[b.idx()].0);
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_type(old, p, new, q))
        };
        let tparams_ok = oh.type_parameters.len() == nh.type_parameters.len()
            && oh.type_parameters.iter().zip(&nh.type_parameters).all(|(o, n)| o.contains(*n));
        if !sig_eq(oh.parameters, nh.parameters) || !sig_eq(oh.return_, nh.return_) || !tparams_ok {
            return Err(incompatible(format!("function {name} changed signature")));
        }
    }
    let friends = |m: &CompiledModule| -> std::collections::BTreeSet<(movejit_format::AccountAddress, String)> {
        m.friend_decls
            .iter()
            .map(|f| (m.address_identifiers[f.address.idx()], m.identifiers[f.name.idx()].clone()))
            .collect()
    };
    if !friends(old).is_subset(&friends(new)) {
        return Err(incompatible("removed friend declaration".to_string()));
    }
    Ok(())
}

/// Attributes that an imported handle may rely on (Aptos's
/// `FunctionAttribute::cannot_be_removed`): all but `ModuleLock`.
pub(crate) fn cannot_be_removed(a: &FunctionAttribute) -> bool {
    !matches!(a, FunctionAttribute::ModuleLock)
}

fn struct_id(m: &CompiledModule, h: movejit_format::StructHandleIndex) -> (movejit_format::AccountAddress, &str, &str) {
    let sh = &m.struct_handles[h.idx()];
    let mh = &m.module_handles[sh.module.idx()];
    (m.address_identifiers[mh.address.idx()], &m.identifiers[mh.name.idx()], &m.identifiers[sh.name.idx()])
}

fn same_type(a: &CompiledModule, x: &ST, b: &CompiledModule, y: &ST) -> bool {
    match (x, y) {
        (ST::Vector(p), ST::Vector(q))
        | (ST::Reference(p), ST::Reference(q))
        | (ST::MutableReference(p), ST::MutableReference(q)) => same_type(a, p, b, q),
        (ST::Struct(h1), ST::Struct(h2)) => struct_id(a, *h1) == struct_id(b, *h2),
        (ST::StructInstantiation(h1, a1), ST::StructInstantiation(h2, a2)) => {
            struct_id(a, *h1) == struct_id(b, *h2)
                && a1.len() == a2.len()
                && a1.iter().zip(a2).all(|(p, q)| same_type(a, p, b, q))
        }
        (ST::Function(p1, r1, ab1), ST::Function(p2, r2, ab2)) => {
            ab1 == ab2
                && p1.len() == p2.len()
                && r1.len() == r2.len()
                && p1.iter().zip(p2).chain(r1.iter().zip(r2)).all(|(p, q)| same_type(a, p, b, q))
        }
        _ => x == y,
    }
}
