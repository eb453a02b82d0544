//! Constants of the on-disk encoding shared by the decoder and serializer:
//! magic, version words, table kinds, type tags and Move's per-field limits.

pub const MAGIC: [u8; 4] = [0xA1, 0x1C, 0xEB, 0x0B];

/// High byte of an Aptos v7+ version word.
pub const APTOS_FLAVOUR_BYTE: u32 = 0x0A;
/// High byte of a Sui v7+ version word.
pub const SUI_FLAVOUR_BYTE: u32 = 0x05;

pub const VERSION_MIN: u32 = 5;
pub const APTOS_VERSION_MAX: u32 = 10;
pub const SUI_VERSION_MAX: u32 = 7;

/// Table kinds. 0x11–0x14 mean different tables per flavour.
pub mod table {
    pub const MODULE_HANDLES: u8 = 0x01;
    pub const STRUCT_HANDLES: u8 = 0x02;
    pub const FUNCTION_HANDLES: u8 = 0x03;
    pub const FUNCTION_INST: u8 = 0x04;
    pub const SIGNATURES: u8 = 0x05;
    pub const CONSTANT_POOL: u8 = 0x06;
    pub const IDENTIFIERS: u8 = 0x07;
    pub const ADDRESS_IDENTIFIERS: u8 = 0x08;
    pub const STRUCT_DEFS: u8 = 0x0A;
    pub const STRUCT_DEF_INST: u8 = 0x0B;
    pub const FUNCTION_DEFS: u8 = 0x0C;
    pub const FIELD_HANDLES: u8 = 0x0D;
    pub const FIELD_INST: u8 = 0x0E;
    pub const FRIEND_DECLS: u8 = 0x0F;
    pub const METADATA: u8 = 0x10;
    /// Aptos: variant field handles. Sui: enum definitions.
    pub const KIND_11: u8 = 0x11;
    /// Aptos: variant field instantiations. Sui: enum instantiations.
    pub const KIND_12: u8 = 0x12;
    /// Aptos: struct variant handles. Sui: variant handles.
    pub const KIND_13: u8 = 0x13;
    /// Aptos: struct variant instantiations. Sui: variant instantiation handles.
    pub const KIND_14: u8 = 0x14;

    pub fn is_known(kind: u8) -> bool {
        matches!(kind, 0x01..=0x08 | 0x0A..=0x14)
    }
}

/// Signature token tags.
pub mod ty {
    pub const BOOL: u8 = 0x01;
    pub const U8: u8 = 0x02;
    pub const U64: u8 = 0x03;
    pub const U128: u8 = 0x04;
    pub const ADDRESS: u8 = 0x05;
    pub const REFERENCE: u8 = 0x06;
    pub const MUTABLE_REFERENCE: u8 = 0x07;
    pub const STRUCT: u8 = 0x08;
    pub const TYPE_PARAMETER: u8 = 0x09;
    pub const VECTOR: u8 = 0x0A;
    pub const STRUCT_INST: u8 = 0x0B;
    pub const SIGNER: u8 = 0x0C;
    pub const U16: u8 = 0x0D;
    pub const U32: u8 = 0x0E;
    pub const U256: u8 = 0x0F;
    pub const FUNCTION: u8 = 0x10;
    pub const I8: u8 = 0x11;
    pub const I16: u8 = 0x12;
    pub const I32: u8 = 0x13;
    pub const I64: u8 = 0x14;
    pub const I128: u8 = 0x15;
    pub const I256: u8 = 0x16;
}

pub mod struct_flag {
    pub const NATIVE: u8 = 0x01;
    pub const DECLARED: u8 = 0x02;
    /// Aptos v7+ only.
    pub const DECLARED_VARIANTS: u8 = 0x03;
}

/// Sui enum definition flag.
pub const ENUM_FLAG_DECLARED: u8 = 0x02;
/// Sui jump table kind.
pub const JUMP_TABLE_FULL: u8 = 0x01;

/// Option and bool markers (Aptos access specifiers).
pub const OPTION_NONE: u8 = 0x01;
pub const OPTION_SOME: u8 = 0x02;
pub const BOOL_FALSE: u8 = 0x01;
pub const BOOL_TRUE: u8 = 0x02;

pub mod resource_spec {
    pub const ANY: u8 = 0x01;
    pub const AT_ADDRESS: u8 = 0x02;
    pub const IN_MODULE: u8 = 0x03;
    pub const RESOURCE: u8 = 0x04;
    pub const RESOURCE_INSTANTIATION: u8 = 0x05;
}

pub mod address_spec {
    pub const ANY: u8 = 0x01;
    pub const LITERAL: u8 = 0x02;
    pub const PARAMETER: u8 = 0x03;
}

pub mod attribute {
    pub const PERSISTENT: u8 = 0x01;
    pub const MODULE_LOCK: u8 = 0x02;
    pub const PACK: u8 = 0x03;
    pub const PACK_VARIANT: u8 = 0x04;
    pub const UNPACK: u8 = 0x05;
    pub const UNPACK_VARIANT: u8 = 0x06;
    pub const TEST_VARIANT: u8 = 0x07;
    pub const BORROW_FIELD_IMMUTABLE: u8 = 0x08;
    pub const BORROW_FIELD_MUTABLE: u8 = 0x09;
}

/// Move's per-field maxima (`file_format_common.rs` of both flavours).
pub mod limit {
    pub const TABLE_COUNT: u64 = 255;
    pub const TABLE_OFFSET: u64 = 0xFFFF_FFFF;
    pub const TABLE_SIZE: u64 = 0xFFFF_FFFF;
    pub const TABLE_INDEX: u64 = 65535;
    pub const BYTECODE_COUNT: u64 = 65535;
    pub const BYTECODE_INDEX: u64 = 65535;
    pub const LOCAL_INDEX: u64 = 255;
    /// Aptos (`IDENTIFIER_SIZE_MAX`); also used for v5/v6 modules.
    pub const IDENTIFIER_SIZE_APTOS: u64 = 255;
    /// Sui.
    pub const IDENTIFIER_SIZE_SUI: u64 = 65535;
    pub const CONSTANT_SIZE: u64 = 65535;
    pub const METADATA_KEY_SIZE: u64 = 1023;
    pub const METADATA_VALUE_SIZE: u64 = 65535;
    pub const SIGNATURE_SIZE: u64 = 255;
    pub const ACQUIRES_COUNT: u64 = 255;
    pub const FIELD_COUNT: u64 = 255;
    pub const FIELD_OFFSET: u64 = 255;
    pub const VARIANT_COUNT: u64 = 127;
    /// Aptos variant offsets in handles.
    pub const VARIANT_OFFSET: u64 = 127;
    /// Sui variant tags in variant handles (`VARIANT_TAG_MAX_VALUE`).
    pub const SUI_VARIANT_TAG: u64 = 126;
    /// Sui operands indexing the variant (instantiation) handle tables.
    pub const SUI_VARIANT_HANDLE_INDEX: u64 = 1024;
    pub const JUMP_TABLE_INDEX: u64 = 127;
    pub const TYPE_PARAMETER_COUNT: u64 = 255;
    /// One more than fits in a u16: Move reads it then fails the u16 conversion.
    pub const TYPE_PARAMETER_INDEX: u64 = 65536;
    pub const ACCESS_SPECIFIER_COUNT: u64 = 64;
    pub const ATTRIBUTE_COUNT: u64 = 16;
    pub const ABILITY_SET: u64 = 0xF;
    pub const SIGNATURE_TOKEN_DEPTH: usize = 256;
}
