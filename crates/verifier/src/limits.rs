//! Limits: type parameter counts, parameter/return counts, type sizes and
//! depths, and definition counts, as the configuration bounds them.

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{CompiledModule, SignatureToken as ST, StatusCode, StructFieldInformation};

pub(crate) fn verify_module(m: &CompiledModule, c: &VerifierConfig) -> VerifyResult {
    constants(m, c)?;
    identifiers(m, c)?;
    if let Some(l) = c.max_generic_instantiation_length {
        if m.struct_handles.iter().any(|h| h.type_parameters.len() > l)
            || m.function_handles.iter().any(|h| h.type_parameters.len() > l)
        {
            return Err(VerifyError::module(StatusCode::TOO_MANY_TYPE_PARAMETERS));
        }
    }
    for h in &m.function_handles {
        if c.max_function_parameters.is_some_and(|l| m.signatures[h.parameters.idx()].0.len() > l)
            || c.max_function_return_values.is_some_and(|l| m.signatures[h.return_.idx()].0.len() > l)
        {
            return Err(VerifyError::module(StatusCode::TOO_MANY_PARAMETERS));
        }
    }
    let fields = m.struct_defs.iter().flat_map(|d| match &d.field_information {
        StructFieldInformation::Native => vec![],
        StructFieldInformation::Declared(f) => f.iter().collect(),
        StructFieldInformation::DeclaredVariants(v) => v.iter().flat_map(|v| v.fields.iter()).collect(),
    });
    let enum_fields = m.enum_defs.iter().flat_map(|d| d.variants.iter().flat_map(|v| v.fields.iter()));
    let types = m
        .signatures
        .iter()
        .flat_map(|s| s.0.iter())
        .chain(m.constant_pool.iter().map(|k| &k.type_))
        .chain(fields.map(|f| &f.signature))
        .chain(enum_fields.map(|f| &f.signature));
    for t in types {
        type_node(c, t)?;
    }
    if c.max_function_definitions.is_some_and(|l| m.function_defs.len() > l) {
        return Err(VerifyError::module(StatusCode::MAX_FUNCTION_DEFINITIONS_REACHED));
    }
    // Sui's enums have their own table and count as data definitions too.
    if c.max_struct_definitions.is_some_and(|l| m.struct_defs.len() + m.enum_defs.len() > l) {
        return Err(VerifyError::module(StatusCode::MAX_STRUCT_DEFINITIONS_REACHED));
    }
    for d in &m.struct_defs {
        let (max_fields, variants) = match &d.field_information {
            StructFieldInformation::Native => (0, 0),
            StructFieldInformation::Declared(f) => (f.len(), 0),
            StructFieldInformation::DeclaredVariants(v) => {
                (v.iter().map(|v| v.fields.len()).max().unwrap_or(0), v.len())
            }
        };
        if c.max_fields_in_struct.is_some_and(|l| max_fields > l) {
            return Err(VerifyError::module(StatusCode::MAX_FIELD_DEFINITIONS_REACHED));
        }
        if c.max_struct_variants.is_some_and(|l| variants > l) {
            return Err(VerifyError::module(StatusCode::MAX_STRUCT_VARIANTS_REACHED));
        }
    }
    // Sui enums: checked only when fields are bounded (as Sui does); the
    // fields of all variants together count against the struct field limit.
    if let Some(max_fields) = c.max_fields_in_struct {
        for d in &m.enum_defs {
            if c.max_struct_variants.is_some_and(|l| d.variants.len() > l) {
                return Err(VerifyError::module(StatusCode::MAX_VARIANTS_REACHED));
            }
            if d.variants.iter().map(|v| v.fields.len()).sum::<usize>() > max_fields {
                return Err(VerifyError::module(StatusCode::MAX_FIELD_DEFINITIONS_REACHED));
            }
        }
    }
    Ok(())
}

/// Sui: vector constants are at most `max_constant_vector_len` long.
fn constants(m: &CompiledModule, c: &VerifierConfig) -> VerifyResult {
    let Some(limit) = c.max_constant_vector_len else { return Ok(()) };
    for k in &m.constant_pool {
        if !matches!(k.type_, ST::Vector(_)) {
            continue;
        }
        // The BCS length prefix; malformed data is the constants pass's to report.
        let mut len = 0u64;
        for (i, b) in k.data.iter().take(10).enumerate() {
            len |= u64::from(b & 0x7f) << (7 * i as u32);
            if b & 0x80 == 0 {
                if len > limit {
                    return Err(VerifyError::module(StatusCode::TOO_MANY_VECTOR_ELEMENTS)
                        .with_message(format!("vector size limit is {limit}")));
                }
                break;
            }
        }
    }
    Ok(())
}

/// Sui: identifier length, and no `<SELF>` when so configured.
fn identifiers(m: &CompiledModule, c: &VerifierConfig) -> VerifyResult {
    for id in &m.identifiers {
        if c.max_identifier_len.is_some_and(|l| id.len() as u64 > l) {
            return Err(VerifyError::module(StatusCode::IDENTIFIER_TOO_LONG));
        }
        if c.disallow_self_identifier && id == "<SELF>" {
            return Err(VerifyError::module(StatusCode::INVALID_IDENTIFIER));
        }
    }
    Ok(())
}

/// Type size with structs and type parameters weighing 4, per Move.
fn type_node(c: &VerifierConfig, ty: &ST) -> VerifyResult {
    if c.max_type_nodes.is_none()
        && c.max_function_parameters.is_none()
        && c.max_function_return_values.is_none()
        && c.max_type_depth.is_none()
    {
        return Ok(());
    }
    let mut size = 0usize;
    let mut stack = vec![(ty, 1usize)];
    while let Some((t, depth)) = stack.pop() {
        if c.max_type_depth.is_some_and(|l| depth > l) {
            return Err(VerifyError::module(StatusCode::TOO_MANY_TYPE_NODES));
        }
        match t {
            ST::Struct(_) => size += 4,
            ST::StructInstantiation(_, args) => {
                size += 4;
                stack.extend(args.iter().map(|a| (a, depth + 1)));
            }
            ST::TypeParameter(_) => size += 4,
            ST::Function(p, r, _) => {
                if c.max_function_parameters.is_some_and(|l| p.len() > l)
                    || c.max_function_return_values.is_some_and(|l| r.len() > l)
                {
                    return Err(VerifyError::module(StatusCode::TOO_MANY_PARAMETERS));
                }
                size += 1;
                stack.extend(p.iter().chain(r.iter()).map(|a| (a, depth + 1)));
            }
            ST::Vector(i) | ST::Reference(i) | ST::MutableReference(i) => {
                size += 1;
                stack.push((i, depth + 1));
            }
            _ => size += 1,
        }
    }
    if c.max_type_nodes.is_some_and(|l| size > l) {
        return Err(VerifyError::module(StatusCode::TOO_MANY_TYPE_NODES));
    }
    Ok(())
}
