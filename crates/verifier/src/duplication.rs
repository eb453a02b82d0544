//! Duplication: no table holds the same entry twice, names are unique
//! within their scope, every handle into this module has a definition, and
//! every definition's handle belongs to this module.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{CompiledModule, FieldDefinition, StatusCode, StructFieldInformation, VariantDefinition};
use std::collections::HashSet;
use std::hash::Hash;

fn first_dup<T: Hash + Eq>(items: impl IntoIterator<Item = T>) -> Option<usize> {
    let mut seen = HashSet::new();
    items.into_iter().position(|x| !seen.insert(x))
}

fn dup(items: Option<usize>) -> VerifyResult {
    match items {
        Some(i) => Err(VerifyError::module(StatusCode::DUPLICATE_ELEMENT).with_message(format!("duplicate at {i}"))),
        None => Ok(()),
    }
}

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    dup(first_dup(&m.identifiers))?;
    dup(first_dup(&m.address_identifiers))?;
    dup(first_dup(&m.constant_pool))?;
    dup(first_dup(&m.signatures))?;
    dup(first_dup(&m.module_handles))?;
    dup(first_dup(m.struct_handles.iter().map(|h| (h.module, h.name))))?;
    dup(first_dup(m.function_handles.iter().map(|h| (h.module, h.name))))?;
    dup(first_dup(&m.field_handles))?;
    dup(first_dup(&m.friend_decls))?;
    dup(first_dup(&m.struct_def_instantiations))?;
    dup(first_dup(&m.function_instantiations))?;
    dup(first_dup(&m.field_instantiations))?;
    dup(first_dup(&m.variant_field_handles))?;
    dup(first_dup(&m.variant_field_instantiations))?;
    dup(first_dup(&m.struct_variant_handles))?;
    dup(first_dup(&m.struct_variant_instantiations))?;
    dup(first_dup(&m.enum_def_instantiations))?;
    dup(first_dup(&m.variant_handles))?;
    dup(first_dup(&m.variant_instantiation_handles))?;

    let self_idx = m.self_module_handle_idx;
    // Datatype definitions (structs, and Sui enums, which share the handle table).
    let handles = m.struct_defs.iter().map(|d| d.struct_handle).chain(m.enum_defs.iter().map(|d| d.enum_handle));
    if let Some(i) = first_dup(handles) {
        return Err(VerifyError::at_struct(StatusCode::DUPLICATE_ELEMENT, i as u16));
    }
    for (i, d) in m.struct_defs.iter().enumerate() {
        let at = |s| VerifyError::at_struct(s, i as u16);
        match &d.field_information {
            StructFieldInformation::Native => {}
            StructFieldInformation::Declared(fields) => {
                if fields.is_empty() {
                    return Err(at(StatusCode::ZERO_SIZED_STRUCT));
                }
                check_fields(fields).map_err(|_| at(StatusCode::DUPLICATE_ELEMENT))?;
            }
            StructFieldInformation::DeclaredVariants(variants) => {
                if variants.is_empty() {
                    return Err(at(StatusCode::ZERO_SIZED_STRUCT));
                }
                check_variants(variants).map_err(|_| at(StatusCode::DUPLICATE_ELEMENT))?;
            }
        }
        if m.struct_handles[d.struct_handle.idx()].module != self_idx {
            return Err(at(StatusCode::INVALID_MODULE_HANDLE));
        }
    }
    for (i, d) in m.enum_defs.iter().enumerate() {
        let at = |s| VerifyError::at_struct(s, i as u16);
        if d.variants.is_empty() {
            return Err(at(StatusCode::ZERO_SIZED_ENUM));
        }
        check_variants(&d.variants).map_err(|_| at(StatusCode::DUPLICATE_ELEMENT))?;
        if m.struct_handles[d.enum_handle.idx()].module != self_idx {
            return Err(at(StatusCode::INVALID_MODULE_HANDLE));
        }
    }
    let defined: HashSet<u16> =
        m.struct_defs.iter().map(|d| d.struct_handle.0).chain(m.enum_defs.iter().map(|d| d.enum_handle.0)).collect();
    if let Some(i) = (0..m.struct_handles.len())
        .position(|i| m.struct_handles[i].module == self_idx && !defined.contains(&(i as u16)))
    {
        return Err(VerifyError::module(StatusCode::UNIMPLEMENTED_HANDLE).with_message(format!("struct handle {i}")));
    }

    if let Some(i) = first_dup(m.function_defs.iter().map(|d| d.function)) {
        return Err(VerifyError::at_function(StatusCode::DUPLICATE_ELEMENT, i as u16));
    }
    for (i, d) in m.function_defs.iter().enumerate() {
        if first_dup(&d.acquires_global_resources).is_some() {
            return Err(VerifyError::at_function(StatusCode::DUPLICATE_ACQUIRES_ANNOTATION, i as u16));
        }
        if m.function_handles[d.function.idx()].module != self_idx {
            return Err(VerifyError::at_function(StatusCode::INVALID_MODULE_HANDLE, i as u16));
        }
    }
    let defined: HashSet<u16> = m.function_defs.iter().map(|d| d.function.0).collect();
    if let Some(i) = (0..m.function_handles.len())
        .position(|i| m.function_handles[i].module == self_idx && !defined.contains(&(i as u16)))
    {
        return Err(VerifyError::module(StatusCode::UNIMPLEMENTED_HANDLE).with_message(format!("function handle {i}")));
    }
    Ok(())
}

fn check_fields(fields: &[FieldDefinition]) -> Result<(), ()> {
    match first_dup(fields.iter().map(|f| f.name)) {
        Some(_) => Err(()),
        None => Ok(()),
    }
}

fn check_variants(variants: &[VariantDefinition]) -> Result<(), ()> {
    if first_dup(variants.iter().map(|v| v.name)).is_some() {
        return Err(());
    }
    variants.iter().try_for_each(|v| check_fields(&v.fields))
}
