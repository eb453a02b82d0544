//! One reader per table entry kind.

use super::code::code_unit;
use super::types::*;
use crate::binary::{self, address_spec, attribute, limit, resource_spec, struct_flag};
use crate::reader::Reader;
use crate::*;

const T: u64 = limit::TABLE_INDEX;

fn address_idx(r: &mut Reader) -> FormatResult<AddressIdentifierIndex> {
    r.index(T, "address index").map(AddressIdentifierIndex)
}
fn ident_idx(r: &mut Reader) -> FormatResult<IdentifierIndex> {
    r.index(T, "identifier index").map(IdentifierIndex)
}
fn module_idx(r: &mut Reader) -> FormatResult<ModuleHandleIndex> {
    r.index(T, "module handle index").map(ModuleHandleIndex)
}
fn struct_handle_idx(r: &mut Reader) -> FormatResult<StructHandleIndex> {
    r.index(T, "struct handle index").map(StructHandleIndex)
}
fn sig_idx(r: &mut Reader) -> FormatResult<SignatureIndex> {
    r.index(T, "signature index").map(SignatureIndex)
}
fn struct_def_idx(r: &mut Reader) -> FormatResult<StructDefinitionIndex> {
    r.index(T, "struct definition index").map(StructDefinitionIndex)
}
fn enum_def_idx(r: &mut Reader) -> FormatResult<EnumDefinitionIndex> {
    r.index(T, "enum definition index").map(EnumDefinitionIndex)
}

pub(crate) fn module_handle(r: &mut Reader) -> FormatResult<ModuleHandle> {
    Ok(ModuleHandle { address: address_idx(r)?, name: ident_idx(r)? })
}

pub(crate) fn struct_handle(r: &mut Reader) -> FormatResult<StructHandle> {
    Ok(StructHandle {
        module: module_idx(r)?,
        name: ident_idx(r)?,
        abilities: ability_set(r)?,
        type_parameters: struct_type_parameters(r)?,
    })
}

pub(crate) fn function_handle(r: &mut Reader) -> FormatResult<FunctionHandle> {
    let module = module_idx(r)?;
    let name = ident_idx(r)?;
    let parameters = sig_idx(r)?;
    let return_ = sig_idx(r)?;
    let type_parameters = ability_sets(r)?;
    let aptos = r.flavour == Flavour::Aptos;
    let access_specifiers = if aptos && r.version >= 7 { access_specifiers(r)? } else { None };
    let attributes = if aptos && r.version >= 8 { attributes(r)? } else { Vec::new() };
    Ok(FunctionHandle { module, name, parameters, return_, type_parameters, access_specifiers, attributes })
}

fn marker(r: &mut Reader, what: &str) -> FormatResult<bool> {
    let at = r.offset();
    match r.u8()? {
        binary::OPTION_NONE => Ok(false),
        binary::OPTION_SOME => Ok(true),
        b => Err(r.error_at(at, StatusCode::MALFORMED, format!("malformed {what} marker {b:#04x}"))),
    }
}

pub(crate) fn access_specifiers(r: &mut Reader) -> FormatResult<Option<Vec<AccessSpecifier>>> {
    if !marker(r, "option")? {
        return Ok(None);
    }
    let n = r.count(limit::ACCESS_SPECIFIER_COUNT, "access specifier count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        out.push(access_specifier(r)?);
    }
    Ok(Some(out))
}

fn access_specifier(r: &mut Reader) -> FormatResult<AccessSpecifier> {
    let at = r.offset();
    // The real deserializer accepts only reads (1) and writes (2) here.
    let kind = match r.u8()? {
        1 => AccessKind::Reads,
        2 => AccessKind::Writes,
        b => return Err(r.error_at(at, StatusCode::MALFORMED, format!("malformed access kind {b:#04x}"))),
    };
    let negated = marker(r, "bool")?;
    let at = r.offset();
    let resource = match r.u8()? {
        resource_spec::ANY => ResourceSpecifier::Any,
        resource_spec::AT_ADDRESS => ResourceSpecifier::DeclaredAtAddress(address_idx(r)?),
        resource_spec::IN_MODULE => ResourceSpecifier::DeclaredInModule(module_idx(r)?),
        resource_spec::RESOURCE => ResourceSpecifier::Resource(struct_handle_idx(r)?),
        resource_spec::RESOURCE_INSTANTIATION => {
            let h = struct_handle_idx(r)?;
            ResourceSpecifier::ResourceInstantiation(h, sig_idx(r)?)
        }
        b => return Err(r.error_at(at, StatusCode::MALFORMED, format!("malformed resource specifier {b:#04x}"))),
    };
    let at = r.offset();
    let address = match r.u8()? {
        address_spec::ANY => AddressSpecifier::Any,
        address_spec::LITERAL => AddressSpecifier::Literal(address_idx(r)?),
        address_spec::PARAMETER => {
            let param = r.uleb(limit::LOCAL_INDEX, "parameter index")? as u8;
            let func = if marker(r, "option")? {
                Some(FunctionInstantiationIndex(r.index(T, "function instantiation index")?))
            } else {
                None
            };
            AddressSpecifier::Parameter(param, func)
        }
        b => return Err(r.error_at(at, StatusCode::MALFORMED, format!("malformed address specifier {b:#04x}"))),
    };
    Ok(AccessSpecifier { kind, negated, resource, address })
}

fn attributes(r: &mut Reader) -> FormatResult<Vec<FunctionAttribute>> {
    let n = r.count(limit::ATTRIBUTE_COUNT, "attribute count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        let at = r.offset();
        let tag = r.u8()?;
        if !(attribute::PERSISTENT..=attribute::BORROW_FIELD_MUTABLE).contains(&tag) {
            return Err(r.error_at(at, StatusCode::MALFORMED, format!("malformed attribute {tag}")));
        }
        if tag >= attribute::PACK && r.version < 10 {
            return Err(r.error_at(
                at,
                StatusCode::MALFORMED,
                format!("attribute {tag} needs bytecode version 10, module is v{}", r.version),
            ));
        }
        let u16_arg = |r: &mut Reader| Ok::<_, FormatError>(u16::from_le_bytes(r.array(StatusCode::BAD_U16)?));
        out.push(match tag {
            attribute::PERSISTENT => FunctionAttribute::Persistent,
            attribute::MODULE_LOCK => FunctionAttribute::ModuleLock,
            attribute::PACK => FunctionAttribute::Pack,
            attribute::PACK_VARIANT => FunctionAttribute::PackVariant(u16_arg(r)?),
            attribute::UNPACK => FunctionAttribute::Unpack,
            attribute::UNPACK_VARIANT => FunctionAttribute::UnpackVariant(u16_arg(r)?),
            attribute::TEST_VARIANT => FunctionAttribute::TestVariant(u16_arg(r)?),
            attribute::BORROW_FIELD_IMMUTABLE => FunctionAttribute::BorrowFieldImmutable(u16_arg(r)?),
            _ => FunctionAttribute::BorrowFieldMutable(u16_arg(r)?),
        });
    }
    Ok(out)
}

pub(crate) fn function_instantiation(r: &mut Reader) -> FormatResult<FunctionInstantiation> {
    Ok(FunctionInstantiation {
        handle: r.index(T, "function handle index").map(FunctionHandleIndex)?,
        type_parameters: sig_idx(r)?,
    })
}

pub(crate) fn signature(r: &mut Reader) -> FormatResult<Signature> {
    Ok(Signature(signature_tokens(r)?))
}

pub(crate) fn constant(r: &mut Reader) -> FormatResult<Constant> {
    let type_ = signature_token(r)?;
    let data = byte_blob(r, limit::CONSTANT_SIZE, "constant size")?;
    Ok(Constant { type_, data })
}

pub(crate) fn metadata(r: &mut Reader) -> FormatResult<Metadata> {
    let key = byte_blob(r, limit::METADATA_KEY_SIZE, "metadata key size")?;
    let value = byte_blob(r, limit::METADATA_VALUE_SIZE, "metadata value size")?;
    Ok(Metadata { key, value })
}

pub(crate) fn address(r: &mut Reader) -> FormatResult<AccountAddress> {
    Ok(AccountAddress(r.array(StatusCode::MALFORMED)?))
}

fn field_defs(r: &mut Reader) -> FormatResult<Vec<FieldDefinition>> {
    let n = r.count(limit::FIELD_COUNT, "field count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        let name = ident_idx(r)?;
        out.push(FieldDefinition { name, signature: signature_token(r)? });
    }
    Ok(out)
}

fn variant_defs(r: &mut Reader) -> FormatResult<Vec<VariantDefinition>> {
    let n = r.count(limit::VARIANT_COUNT, "variant count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        let name = ident_idx(r)?;
        out.push(VariantDefinition { name, fields: field_defs(r)? });
    }
    Ok(out)
}

pub(crate) fn struct_def(r: &mut Reader) -> FormatResult<StructDefinition> {
    let struct_handle = struct_handle_idx(r)?;
    let at = r.offset();
    let flag = r.u8()?;
    let field_information = match flag {
        struct_flag::NATIVE => StructFieldInformation::Native,
        struct_flag::DECLARED => StructFieldInformation::Declared(field_defs(r)?),
        struct_flag::DECLARED_VARIANTS if r.flavour != Flavour::Sui => {
            if r.version < 7 {
                return Err(r.error_at(
                    at,
                    StatusCode::MALFORMED,
                    format!("enum types need bytecode version 7, module is v{}", r.version),
                ));
            }
            StructFieldInformation::DeclaredVariants(variant_defs(r)?)
        }
        _ => return Err(r.error_at(at, StatusCode::UNKNOWN_NATIVE_STRUCT_FLAG, format!("struct flag {flag:#04x}"))),
    };
    Ok(StructDefinition { struct_handle, field_information })
}

pub(crate) fn struct_def_instantiation(r: &mut Reader) -> FormatResult<StructDefInstantiation> {
    Ok(StructDefInstantiation { def: struct_def_idx(r)?, type_parameters: sig_idx(r)? })
}

pub(crate) fn function_def(r: &mut Reader) -> FormatResult<FunctionDefinition> {
    let function = r.index(T, "function handle index").map(FunctionHandleIndex)?;
    let at = r.offset();
    let visibility = match r.u8()? {
        0 => Visibility::Private,
        1 => Visibility::Public,
        3 => Visibility::Friend,
        b => return Err(r.error_at(at, StatusCode::MALFORMED, format!("invalid visibility byte {b:#04x}"))),
    };
    let flags_at = r.offset();
    let flags = r.u8()?;
    let is_entry = flags & FunctionDefinition::ENTRY != 0;
    let n = r.count(limit::ACQUIRES_COUNT, "acquires count")?;
    let mut acquires_global_resources = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        acquires_global_resources.push(struct_def_idx(r)?);
    }
    let native = flags & FunctionDefinition::NATIVE != 0;
    let code = if native { None } else { Some(code_unit(r)?) };
    // Unknown flag bits are checked last, as the real deserializers do.
    let extra = flags & !(FunctionDefinition::ENTRY | FunctionDefinition::NATIVE);
    if extra != 0 {
        return Err(r.error_at(
            flags_at,
            StatusCode::INVALID_FLAG_BITS,
            format!("unknown function flags {extra:#04x}"),
        ));
    }
    Ok(FunctionDefinition { function, visibility, is_entry, acquires_global_resources, code })
}

pub(crate) fn field_handle(r: &mut Reader) -> FormatResult<FieldHandle> {
    Ok(FieldHandle { owner: struct_def_idx(r)?, field: r.uleb(limit::FIELD_OFFSET, "field offset")? as u16 })
}

pub(crate) fn field_instantiation(r: &mut Reader) -> FormatResult<FieldInstantiation> {
    Ok(FieldInstantiation {
        handle: r.index(T, "field handle index").map(FieldHandleIndex)?,
        type_parameters: sig_idx(r)?,
    })
}

// ---- Aptos v7+ variant tables ----

pub(crate) fn variant_field_handle(r: &mut Reader) -> FormatResult<VariantFieldHandle> {
    let struct_index = struct_def_idx(r)?;
    let field = r.uleb(limit::FIELD_OFFSET, "field offset")? as u16;
    let n = r.count(limit::VARIANT_COUNT, "variant count")?;
    let mut variants = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        variants.push(r.uleb(limit::VARIANT_OFFSET, "variant offset")? as u16);
    }
    Ok(VariantFieldHandle { struct_index, variants, field })
}

pub(crate) fn variant_field_instantiation(r: &mut Reader) -> FormatResult<VariantFieldInstantiation> {
    Ok(VariantFieldInstantiation {
        handle: r.index(T, "variant field handle index").map(VariantFieldHandleIndex)?,
        type_parameters: sig_idx(r)?,
    })
}

pub(crate) fn struct_variant_handle(r: &mut Reader) -> FormatResult<StructVariantHandle> {
    Ok(StructVariantHandle {
        struct_index: struct_def_idx(r)?,
        variant: r.uleb(limit::VARIANT_OFFSET, "variant offset")? as u16,
    })
}

pub(crate) fn struct_variant_instantiation(r: &mut Reader) -> FormatResult<StructVariantInstantiation> {
    Ok(StructVariantInstantiation {
        handle: r.index(T, "struct variant handle index").map(StructVariantHandleIndex)?,
        type_parameters: sig_idx(r)?,
    })
}

// ---- Sui v7 enum tables ----

pub(crate) fn enum_def(r: &mut Reader) -> FormatResult<EnumDefinition> {
    let enum_handle = struct_handle_idx(r)?;
    let at = r.offset();
    let flag = r.u8()?;
    if flag != binary::ENUM_FLAG_DECLARED {
        return Err(r.error_at(at, StatusCode::UNKNOWN_ENUM_FLAG, format!("enum flag {flag:#04x}")));
    }
    let at = r.offset();
    let variants = variant_defs(r)?;
    if variants.is_empty() {
        return Err(r.error_at(at, StatusCode::MALFORMED, "enum type with no variants"));
    }
    Ok(EnumDefinition { enum_handle, variants })
}

pub(crate) fn enum_def_instantiation(r: &mut Reader) -> FormatResult<EnumDefInstantiation> {
    Ok(EnumDefInstantiation { def: enum_def_idx(r)?, type_parameters: sig_idx(r)? })
}

pub(crate) fn variant_handle(r: &mut Reader) -> FormatResult<VariantHandle> {
    Ok(VariantHandle { enum_def: enum_def_idx(r)?, variant: r.uleb(limit::SUI_VARIANT_TAG, "variant tag")? as u16 })
}

pub(crate) fn variant_instantiation_handle(r: &mut Reader) -> FormatResult<VariantInstantiationHandle> {
    Ok(VariantInstantiationHandle {
        enum_def: r.index(T, "enum instantiation index").map(EnumDefInstantiationIndex)?,
        variant: r.uleb(limit::SUI_VARIANT_TAG, "variant tag")? as u16,
    })
}
