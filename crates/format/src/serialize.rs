//! Model → bytes, laid out exactly as the real Aptos and Sui serializers do:
//! the same table order (module handles, struct handles, function handles,
//! function instantiations, signatures, identifiers, addresses, constants,
//! metadata, struct defs, struct instantiations, function defs, field
//! handles, field instantiations, friends, then the four v7 tables), empty
//! tables omitted, and the directory listing tables in that same order.
//!
//! Serialization cannot fail: the model is written as it is. A model that
//! did not come from the decoder (or the bounds check) may produce bytes the
//! decoder rejects; for example an instruction that does not exist in the
//! module's flavour is written with the other flavour's byte.

use crate::binary::{self, address_spec, attribute, resource_spec, struct_flag, table, ty};
use crate::reader::write_uleb;
use crate::*;

/// Serializes a module in its flavour's encoding.
pub fn serialize_module(module: &CompiledModule) -> Vec<u8> {
    let w = Writer { version: module.version, flavour: module.flavour };
    let mut tables = Tables::default();
    w.common(&mut tables, &CommonRef::module(module));
    let m = module;
    tables.add(table::STRUCT_DEFS, &m.struct_defs, |o, x| w.struct_def(o, x));
    tables.add(table::STRUCT_DEF_INST, &m.struct_def_instantiations, |o, x| {
        uleb(o, x.def.0);
        uleb(o, x.type_parameters.0);
    });
    tables.add(table::FUNCTION_DEFS, &m.function_defs, |o, x| w.function_def(o, x));
    tables.add(table::FIELD_HANDLES, &m.field_handles, |o, x| {
        uleb(o, x.owner.0);
        uleb(o, x.field);
    });
    tables.add(table::FIELD_INST, &m.field_instantiations, |o, x| {
        uleb(o, x.handle.0);
        uleb(o, x.type_parameters.0);
    });
    tables.add(table::FRIEND_DECLS, &m.friend_decls, module_handle);
    if m.version >= 7 {
        if m.flavour == Flavour::Sui {
            tables.add(table::KIND_11, &m.enum_defs, |o, x| {
                uleb(o, x.enum_handle.0);
                o.push(binary::ENUM_FLAG_DECLARED);
                variants(o, &x.variants);
            });
            tables.add(table::KIND_12, &m.enum_def_instantiations, |o, x| {
                uleb(o, x.def.0);
                uleb(o, x.type_parameters.0);
            });
            tables.add(table::KIND_13, &m.variant_handles, |o, x| {
                uleb(o, x.enum_def.0);
                uleb(o, x.variant);
            });
            tables.add(table::KIND_14, &m.variant_instantiation_handles, |o, x| {
                uleb(o, x.enum_def.0);
                uleb(o, x.variant);
            });
        } else {
            tables.add(table::KIND_11, &m.variant_field_handles, |o, x| {
                uleb(o, x.struct_index.0);
                uleb(o, x.field);
                uleb(o, x.variants.len());
                for &v in &x.variants {
                    uleb(o, v);
                }
            });
            tables.add(table::KIND_12, &m.variant_field_instantiations, |o, x| {
                uleb(o, x.handle.0);
                uleb(o, x.type_parameters.0);
            });
            tables.add(table::KIND_13, &m.struct_variant_handles, |o, x| {
                uleb(o, x.struct_index.0);
                uleb(o, x.variant);
            });
            tables.add(table::KIND_14, &m.struct_variant_instantiations, |o, x| {
                uleb(o, x.handle.0);
                uleb(o, x.type_parameters.0);
            });
        }
    }
    let mut out = w.header(&tables);
    uleb(&mut out, m.self_module_handle_idx.0);
    out
}

/// Serializes an Aptos script.
pub fn serialize_script(script: &CompiledScript) -> Vec<u8> {
    let w = Writer { version: script.version, flavour: script.flavour };
    let mut tables = Tables::default();
    w.common(&mut tables, &CommonRef::script(script));
    let mut out = w.header(&tables);
    ability_sets(&mut out, &script.type_parameters);
    uleb(&mut out, script.parameters.0);
    if w.flavour == Flavour::Aptos && w.version >= 8 {
        access_specifiers(&mut out, &script.access_specifiers);
    }
    w.code_unit(&mut out, &script.code);
    out
}

fn uleb(out: &mut Vec<u8>, v: impl Into<UlebValue>) {
    write_uleb(out, v.into().0);
}

/// Lets `uleb` take u8/u16/u64/usize alike.
struct UlebValue(u64);
impl From<u8> for UlebValue {
    fn from(v: u8) -> Self {
        UlebValue(v.into())
    }
}
impl From<u16> for UlebValue {
    fn from(v: u16) -> Self {
        UlebValue(v.into())
    }
}
impl From<u64> for UlebValue {
    fn from(v: u64) -> Self {
        UlebValue(v)
    }
}
impl From<usize> for UlebValue {
    fn from(v: usize) -> Self {
        UlebValue(v as u64)
    }
}

/// Table contents and their directory, in writing order.
#[derive(Default)]
struct Tables {
    content: Vec<u8>,
    dir: Vec<(u8, usize, usize)>,
}

impl Tables {
    fn add<T>(&mut self, kind: u8, items: &[T], mut f: impl FnMut(&mut Vec<u8>, &T)) {
        if items.is_empty() {
            return;
        }
        let start = self.content.len();
        for x in items {
            f(&mut self.content, x);
        }
        self.dir.push((kind, start, self.content.len() - start));
    }
}

/// The tables modules and scripts share.
struct CommonRef<'a> {
    module_handles: &'a [ModuleHandle],
    struct_handles: &'a [StructHandle],
    function_handles: &'a [FunctionHandle],
    function_instantiations: &'a [FunctionInstantiation],
    signatures: &'a [Signature],
    identifiers: &'a [Identifier],
    address_identifiers: &'a [AccountAddress],
    constant_pool: &'a [Constant],
    metadata: &'a [Metadata],
}

impl<'a> CommonRef<'a> {
    fn module(m: &'a CompiledModule) -> Self {
        CommonRef {
            module_handles: &m.module_handles,
            struct_handles: &m.struct_handles,
            function_handles: &m.function_handles,
            function_instantiations: &m.function_instantiations,
            signatures: &m.signatures,
            identifiers: &m.identifiers,
            address_identifiers: &m.address_identifiers,
            constant_pool: &m.constant_pool,
            metadata: &m.metadata,
        }
    }
    fn script(s: &'a CompiledScript) -> Self {
        CommonRef {
            module_handles: &s.module_handles,
            struct_handles: &s.struct_handles,
            function_handles: &s.function_handles,
            function_instantiations: &s.function_instantiations,
            signatures: &s.signatures,
            identifiers: &s.identifiers,
            address_identifiers: &s.address_identifiers,
            constant_pool: &s.constant_pool,
            metadata: &s.metadata,
        }
    }
}

struct Writer {
    version: u32,
    flavour: Flavour,
}

impl Writer {
    fn version_word(&self) -> u32 {
        match self.flavour {
            Flavour::Aptos if self.version >= 7 => (binary::APTOS_FLAVOUR_BYTE << 24) | self.version,
            Flavour::Sui if self.version >= 7 => (binary::SUI_FLAVOUR_BYTE << 24) | self.version,
            _ => self.version,
        }
    }

    /// Magic, version word, directory, then the contents.
    fn header(&self, tables: &Tables) -> Vec<u8> {
        let mut out = Vec::with_capacity(tables.content.len() + 16 + tables.dir.len() * 7);
        out.extend_from_slice(&binary::MAGIC);
        out.extend_from_slice(&self.version_word().to_le_bytes());
        uleb(&mut out, tables.dir.len());
        for &(kind, offset, len) in &tables.dir {
            out.push(kind);
            uleb(&mut out, offset);
            uleb(&mut out, len);
        }
        out.extend_from_slice(&tables.content);
        out
    }

    fn common(&self, t: &mut Tables, c: &CommonRef) {
        t.add(table::MODULE_HANDLES, c.module_handles, module_handle);
        t.add(table::STRUCT_HANDLES, c.struct_handles, |o, h| {
            uleb(o, h.module.0);
            uleb(o, h.name.0);
            uleb(o, h.abilities.0);
            uleb(o, h.type_parameters.len());
            for p in &h.type_parameters {
                uleb(o, p.constraints.0);
                uleb(o, p.is_phantom as u8);
            }
        });
        t.add(table::FUNCTION_HANDLES, c.function_handles, |o, h| self.function_handle(o, h));
        t.add(table::FUNCTION_INST, c.function_instantiations, |o, x| {
            uleb(o, x.handle.0);
            uleb(o, x.type_parameters.0);
        });
        t.add(table::SIGNATURES, c.signatures, |o, s| tokens(o, &s.0));
        t.add(table::IDENTIFIERS, c.identifiers, |o, s| blob(o, s.as_bytes()));
        t.add(table::ADDRESS_IDENTIFIERS, c.address_identifiers, |o, a| o.extend_from_slice(&a.0));
        t.add(table::CONSTANT_POOL, c.constant_pool, |o, k| {
            token(o, &k.type_);
            blob(o, &k.data);
        });
        t.add(table::METADATA, c.metadata, |o, m| {
            blob(o, &m.key);
            blob(o, &m.value);
        });
    }

    fn function_handle(&self, o: &mut Vec<u8>, h: &FunctionHandle) {
        uleb(o, h.module.0);
        uleb(o, h.name.0);
        uleb(o, h.parameters.0);
        uleb(o, h.return_.0);
        ability_sets(o, &h.type_parameters);
        if self.flavour == Flavour::Aptos && self.version >= 7 {
            access_specifiers(o, &h.access_specifiers);
        }
        if self.flavour == Flavour::Aptos && self.version >= 8 {
            uleb(o, h.attributes.len());
            for a in &h.attributes {
                function_attribute(o, a);
            }
        }
    }

    fn struct_def(&self, o: &mut Vec<u8>, d: &StructDefinition) {
        uleb(o, d.struct_handle.0);
        match &d.field_information {
            StructFieldInformation::Native => o.push(struct_flag::NATIVE),
            StructFieldInformation::Declared(fields) => {
                o.push(struct_flag::DECLARED);
                field_defs(o, fields);
            }
            StructFieldInformation::DeclaredVariants(vs) => {
                o.push(struct_flag::DECLARED_VARIANTS);
                variants(o, vs);
            }
        }
    }

    fn function_def(&self, o: &mut Vec<u8>, d: &FunctionDefinition) {
        uleb(o, d.function.0);
        o.push(d.visibility as u8);
        let mut flags = 0;
        if d.is_entry {
            flags |= FunctionDefinition::ENTRY;
        }
        if d.code.is_none() {
            flags |= FunctionDefinition::NATIVE;
        }
        o.push(flags);
        uleb(o, d.acquires_global_resources.len());
        for a in &d.acquires_global_resources {
            uleb(o, a.0);
        }
        if let Some(code) = &d.code {
            self.code_unit(o, code);
        }
    }

    fn code_unit(&self, o: &mut Vec<u8>, c: &CodeUnit) {
        uleb(o, c.locals.0);
        uleb(o, c.code.len());
        for i in &c.code {
            self.instruction(o, i);
        }
        if self.flavour == Flavour::Sui {
            uleb(o, c.jump_tables.len());
            for jt in &c.jump_tables {
                uleb(o, jt.head_enum.0);
                uleb(o, jt.jump_table.len());
                o.push(binary::JUMP_TABLE_FULL);
                for &t in &jt.jump_table {
                    uleb(o, t);
                }
            }
        }
    }

    fn instruction(&self, o: &mut Vec<u8>, i: &Bytecode) {
        let op = i.opcode();
        let byte = op.byte(self.flavour).or_else(|| op.aptos_byte()).or_else(|| op.sui_byte()).unwrap_or(0);
        o.push(byte);
        use Bytecode as B;
        match i {
            B::BrTrue(t) | B::BrFalse(t) | B::Branch(t) => uleb(o, *t),
            B::LdU8(v) => o.push(*v),
            B::LdU16(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdU32(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdU64(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdU128(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdU256(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI8(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI16(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI32(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI64(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI128(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdI256(v) => o.extend_from_slice(&v.to_le_bytes()),
            B::LdConst(x) => uleb(o, x.0),
            B::CopyLoc(l) | B::MoveLoc(l) | B::StLoc(l) | B::MutBorrowLoc(l) | B::ImmBorrowLoc(l) => uleb(o, *l),
            B::MutBorrowField(x) | B::ImmBorrowField(x) => uleb(o, x.0),
            B::MutBorrowFieldGeneric(x) | B::ImmBorrowFieldGeneric(x) => uleb(o, x.0),
            B::Call(x) => uleb(o, x.0),
            B::CallGeneric(x) => uleb(o, x.0),
            B::Pack(x)
            | B::Unpack(x)
            | B::Exists(x)
            | B::MutBorrowGlobal(x)
            | B::ImmBorrowGlobal(x)
            | B::MoveFrom(x)
            | B::MoveTo(x) => uleb(o, x.0),
            B::PackGeneric(x)
            | B::UnpackGeneric(x)
            | B::ExistsGeneric(x)
            | B::MutBorrowGlobalGeneric(x)
            | B::ImmBorrowGlobalGeneric(x)
            | B::MoveFromGeneric(x)
            | B::MoveToGeneric(x) => uleb(o, x.0),
            B::VecPack(s, n) | B::VecUnpack(s, n) => {
                uleb(o, s.0);
                o.extend_from_slice(&n.to_le_bytes());
            }
            B::VecLen(s)
            | B::VecImmBorrow(s)
            | B::VecMutBorrow(s)
            | B::VecPushBack(s)
            | B::VecPopBack(s)
            | B::VecSwap(s)
            | B::CallClosure(s) => uleb(o, s.0),
            B::ImmBorrowVariantField(x) | B::MutBorrowVariantField(x) => uleb(o, x.0),
            B::ImmBorrowVariantFieldGeneric(x) | B::MutBorrowVariantFieldGeneric(x) => uleb(o, x.0),
            B::PackVariant(x) | B::UnpackVariant(x) | B::TestVariant(x) => uleb(o, x.0),
            B::PackVariantGeneric(x) | B::UnpackVariantGeneric(x) | B::TestVariantGeneric(x) => uleb(o, x.0),
            B::PackClosure(f, m) => {
                uleb(o, f.0);
                uleb(o, m.0);
            }
            B::PackClosureGeneric(f, m) => {
                uleb(o, f.0);
                uleb(o, m.0);
            }
            B::SuiPackVariant(x)
            | B::SuiUnpackVariant(x)
            | B::SuiUnpackVariantImmRef(x)
            | B::SuiUnpackVariantMutRef(x) => uleb(o, x.0),
            B::SuiPackVariantGeneric(x)
            | B::SuiUnpackVariantGeneric(x)
            | B::SuiUnpackVariantGenericImmRef(x)
            | B::SuiUnpackVariantGenericMutRef(x) => uleb(o, x.0),
            B::VariantSwitch(x) => uleb(o, x.0),
            B::Pop
            | B::Ret
            | B::LdTrue
            | B::LdFalse
            | B::ReadRef
            | B::WriteRef
            | B::FreezeRef
            | B::Add
            | B::Sub
            | B::Mul
            | B::Mod
            | B::Div
            | B::BitOr
            | B::BitAnd
            | B::Xor
            | B::Or
            | B::And
            | B::Not
            | B::Eq
            | B::Neq
            | B::Lt
            | B::Gt
            | B::Le
            | B::Ge
            | B::Shl
            | B::Shr
            | B::CastU8
            | B::CastU16
            | B::CastU32
            | B::CastU64
            | B::CastU128
            | B::CastU256
            | B::CastI8
            | B::CastI16
            | B::CastI32
            | B::CastI64
            | B::CastI128
            | B::CastI256
            | B::Negate
            | B::Abort
            | B::AbortMsg
            | B::Nop => {}
        }
    }
}

fn module_handle(o: &mut Vec<u8>, h: &ModuleHandle) {
    uleb(o, h.address.0);
    uleb(o, h.name.0);
}

fn blob(o: &mut Vec<u8>, b: &[u8]) {
    uleb(o, b.len());
    o.extend_from_slice(b);
}

fn ability_sets(o: &mut Vec<u8>, sets: &[AbilitySet]) {
    uleb(o, sets.len());
    for s in sets {
        uleb(o, s.0);
    }
}

fn field_defs(o: &mut Vec<u8>, fields: &[FieldDefinition]) {
    uleb(o, fields.len());
    for f in fields {
        uleb(o, f.name.0);
        token(o, &f.signature);
    }
}

fn variants(o: &mut Vec<u8>, vs: &[VariantDefinition]) {
    uleb(o, vs.len());
    for v in vs {
        uleb(o, v.name.0);
        field_defs(o, &v.fields);
    }
}

fn tokens(o: &mut Vec<u8>, ts: &[SignatureToken]) {
    uleb(o, ts.len());
    for t in ts {
        token(o, t);
    }
}

/// Pre-order, one node at a time (no recursion, so deep types are safe).
fn token(o: &mut Vec<u8>, t: &SignatureToken) {
    use SignatureToken as T;
    for n in t.preorder() {
        match n {
            T::Bool => o.push(ty::BOOL),
            T::U8 => o.push(ty::U8),
            T::U16 => o.push(ty::U16),
            T::U32 => o.push(ty::U32),
            T::U64 => o.push(ty::U64),
            T::U128 => o.push(ty::U128),
            T::U256 => o.push(ty::U256),
            T::I8 => o.push(ty::I8),
            T::I16 => o.push(ty::I16),
            T::I32 => o.push(ty::I32),
            T::I64 => o.push(ty::I64),
            T::I128 => o.push(ty::I128),
            T::I256 => o.push(ty::I256),
            T::Address => o.push(ty::ADDRESS),
            T::Signer => o.push(ty::SIGNER),
            T::Vector(_) => o.push(ty::VECTOR),
            T::Reference(_) => o.push(ty::REFERENCE),
            T::MutableReference(_) => o.push(ty::MUTABLE_REFERENCE),
            T::Struct(h) => {
                o.push(ty::STRUCT);
                uleb(o, h.0);
            }
            T::StructInstantiation(h, args) => {
                o.push(ty::STRUCT_INST);
                uleb(o, h.0);
                uleb(o, args.len());
            }
            T::TypeParameter(i) => {
                o.push(ty::TYPE_PARAMETER);
                uleb(o, *i);
            }
            T::Function(params, results, abilities) => {
                o.push(ty::FUNCTION);
                uleb(o, abilities.0);
                uleb(o, params.len());
                uleb(o, results.len());
            }
        }
    }
}

fn access_specifiers(o: &mut Vec<u8>, specs: &Option<Vec<AccessSpecifier>>) {
    let Some(specs) = specs else {
        o.push(binary::OPTION_NONE);
        return;
    };
    o.push(binary::OPTION_SOME);
    uleb(o, specs.len());
    for s in specs {
        o.push(s.kind as u8);
        o.push(if s.negated { binary::BOOL_TRUE } else { binary::BOOL_FALSE });
        match &s.resource {
            ResourceSpecifier::Any => o.push(resource_spec::ANY),
            ResourceSpecifier::DeclaredAtAddress(a) => {
                o.push(resource_spec::AT_ADDRESS);
                uleb(o, a.0);
            }
            ResourceSpecifier::DeclaredInModule(m) => {
                o.push(resource_spec::IN_MODULE);
                uleb(o, m.0);
            }
            ResourceSpecifier::Resource(h) => {
                o.push(resource_spec::RESOURCE);
                uleb(o, h.0);
            }
            ResourceSpecifier::ResourceInstantiation(h, sig) => {
                o.push(resource_spec::RESOURCE_INSTANTIATION);
                uleb(o, h.0);
                uleb(o, sig.0);
            }
        }
        match &s.address {
            AddressSpecifier::Any => o.push(address_spec::ANY),
            AddressSpecifier::Literal(a) => {
                o.push(address_spec::LITERAL);
                uleb(o, a.0);
            }
            AddressSpecifier::Parameter(p, f) => {
                o.push(address_spec::PARAMETER);
                uleb(o, *p);
                match f {
                    None => o.push(binary::OPTION_NONE),
                    Some(f) => {
                        o.push(binary::OPTION_SOME);
                        uleb(o, f.0);
                    }
                }
            }
        }
    }
}

fn function_attribute(o: &mut Vec<u8>, a: &FunctionAttribute) {
    use FunctionAttribute as A;
    let (tag, arg) = match a {
        A::Persistent => (attribute::PERSISTENT, None),
        A::ModuleLock => (attribute::MODULE_LOCK, None),
        A::Pack => (attribute::PACK, None),
        A::PackVariant(v) => (attribute::PACK_VARIANT, Some(*v)),
        A::Unpack => (attribute::UNPACK, None),
        A::UnpackVariant(v) => (attribute::UNPACK_VARIANT, Some(*v)),
        A::TestVariant(v) => (attribute::TEST_VARIANT, Some(*v)),
        A::BorrowFieldImmutable(v) => (attribute::BORROW_FIELD_IMMUTABLE, Some(*v)),
        A::BorrowFieldMutable(v) => (attribute::BORROW_FIELD_MUTABLE, Some(*v)),
    };
    o.push(tag);
    if let Some(v) = arg {
        o.extend_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_module_unchecked;
    use ethnum::{I256, U256};

    /// One instance of each opcode, with operands that exercise multi-byte
    /// ULEBs and full-width immediates.
    fn sample(op: Opcode) -> Bytecode {
        use Bytecode as B;
        use Opcode as O;
        let i = 300u16; // two-byte ULEB
        if let Some(nullary) = op.nullary() {
            return nullary;
        }
        match op {
            O::BrTrue => B::BrTrue(i),
            O::BrFalse => B::BrFalse(7),
            O::Branch => B::Branch(65535),
            O::LdU8 => B::LdU8(0xFE),
            O::LdU16 => B::LdU16(0xBEEF),
            O::LdU32 => B::LdU32(0xDEAD_BEEF),
            O::LdU64 => B::LdU64(u64::MAX - 5),
            O::LdU128 => B::LdU128(u128::MAX / 3),
            O::LdU256 => B::LdU256(U256::MAX - U256::from(9u8)),
            O::LdI8 => B::LdI8(-128),
            O::LdI16 => B::LdI16(-2),
            O::LdI32 => B::LdI32(i32::MIN),
            O::LdI64 => B::LdI64(-1),
            O::LdI128 => B::LdI128(i128::MIN + 1),
            O::LdI256 => B::LdI256(I256::MIN),
            O::LdConst => B::LdConst(ConstantPoolIndex(i)),
            O::CopyLoc => B::CopyLoc(200),
            O::MoveLoc => B::MoveLoc(1),
            O::StLoc => B::StLoc(255),
            O::MutBorrowLoc => B::MutBorrowLoc(128),
            O::ImmBorrowLoc => B::ImmBorrowLoc(0),
            O::MutBorrowField => B::MutBorrowField(FieldHandleIndex(i)),
            O::ImmBorrowField => B::ImmBorrowField(FieldHandleIndex(1)),
            O::MutBorrowFieldGeneric => B::MutBorrowFieldGeneric(FieldInstantiationIndex(i)),
            O::ImmBorrowFieldGeneric => B::ImmBorrowFieldGeneric(FieldInstantiationIndex(2)),
            O::Call => B::Call(FunctionHandleIndex(65535)),
            O::CallGeneric => B::CallGeneric(FunctionInstantiationIndex(i)),
            O::Pack => B::Pack(StructDefinitionIndex(i)),
            O::PackGeneric => B::PackGeneric(StructDefInstantiationIndex(i)),
            O::Unpack => B::Unpack(StructDefinitionIndex(3)),
            O::UnpackGeneric => B::UnpackGeneric(StructDefInstantiationIndex(4)),
            O::Exists => B::Exists(StructDefinitionIndex(5)),
            O::ExistsGeneric => B::ExistsGeneric(StructDefInstantiationIndex(5)),
            O::MutBorrowGlobal => B::MutBorrowGlobal(StructDefinitionIndex(6)),
            O::MutBorrowGlobalGeneric => B::MutBorrowGlobalGeneric(StructDefInstantiationIndex(6)),
            O::ImmBorrowGlobal => B::ImmBorrowGlobal(StructDefinitionIndex(7)),
            O::ImmBorrowGlobalGeneric => B::ImmBorrowGlobalGeneric(StructDefInstantiationIndex(7)),
            O::MoveFrom => B::MoveFrom(StructDefinitionIndex(8)),
            O::MoveFromGeneric => B::MoveFromGeneric(StructDefInstantiationIndex(8)),
            O::MoveTo => B::MoveTo(StructDefinitionIndex(9)),
            O::MoveToGeneric => B::MoveToGeneric(StructDefInstantiationIndex(9)),
            O::VecPack => B::VecPack(SignatureIndex(i), u64::MAX),
            O::VecLen => B::VecLen(SignatureIndex(1)),
            O::VecImmBorrow => B::VecImmBorrow(SignatureIndex(2)),
            O::VecMutBorrow => B::VecMutBorrow(SignatureIndex(3)),
            O::VecPushBack => B::VecPushBack(SignatureIndex(4)),
            O::VecPopBack => B::VecPopBack(SignatureIndex(5)),
            O::VecUnpack => B::VecUnpack(SignatureIndex(6), 1 << 40),
            O::VecSwap => B::VecSwap(SignatureIndex(7)),
            O::ImmBorrowVariantField => B::ImmBorrowVariantField(VariantFieldHandleIndex(i)),
            O::MutBorrowVariantField => B::MutBorrowVariantField(VariantFieldHandleIndex(1)),
            O::ImmBorrowVariantFieldGeneric => B::ImmBorrowVariantFieldGeneric(VariantFieldInstantiationIndex(i)),
            O::MutBorrowVariantFieldGeneric => B::MutBorrowVariantFieldGeneric(VariantFieldInstantiationIndex(1)),
            O::PackVariant => B::PackVariant(StructVariantHandleIndex(i)),
            O::PackVariantGeneric => B::PackVariantGeneric(StructVariantInstantiationIndex(i)),
            O::UnpackVariant => B::UnpackVariant(StructVariantHandleIndex(2)),
            O::UnpackVariantGeneric => B::UnpackVariantGeneric(StructVariantInstantiationIndex(2)),
            O::TestVariant => B::TestVariant(StructVariantHandleIndex(3)),
            O::TestVariantGeneric => B::TestVariantGeneric(StructVariantInstantiationIndex(3)),
            O::PackClosure => B::PackClosure(FunctionHandleIndex(i), ClosureMask(u64::MAX)),
            O::PackClosureGeneric => B::PackClosureGeneric(FunctionInstantiationIndex(1), ClosureMask(0b101)),
            O::CallClosure => B::CallClosure(SignatureIndex(i)),
            O::SuiPackVariant => B::SuiPackVariant(VariantHandleIndex(1024)),
            O::SuiPackVariantGeneric => B::SuiPackVariantGeneric(VariantInstantiationHandleIndex(i)),
            O::SuiUnpackVariant => B::SuiUnpackVariant(VariantHandleIndex(1)),
            O::SuiUnpackVariantImmRef => B::SuiUnpackVariantImmRef(VariantHandleIndex(2)),
            O::SuiUnpackVariantMutRef => B::SuiUnpackVariantMutRef(VariantHandleIndex(3)),
            O::SuiUnpackVariantGeneric => B::SuiUnpackVariantGeneric(VariantInstantiationHandleIndex(1)),
            O::SuiUnpackVariantGenericImmRef => B::SuiUnpackVariantGenericImmRef(VariantInstantiationHandleIndex(2)),
            O::SuiUnpackVariantGenericMutRef => B::SuiUnpackVariantGenericMutRef(VariantInstantiationHandleIndex(3)),
            O::VariantSwitch => B::VariantSwitch(VariantJumpTableIndex(127)),
            _ => unreachable!("{op:?} takes no operands and returned above"),
        }
    }

    #[test]
    fn every_opcode_of_each_flavour_round_trips() {
        for (flavour, version) in [(Flavour::Aptos, 10), (Flavour::Sui, 7), (Flavour::Common, 6)] {
            let code: Vec<Bytecode> = Opcode::ALL
                .iter()
                .filter(|op| op.byte(flavour).is_some() && op.since_version() <= version)
                .map(|&op| sample(op))
                .collect();
            for instr in &code {
                assert_eq!(sample(instr.opcode()).opcode(), instr.opcode());
            }
            let jump_tables = if flavour == Flavour::Sui {
                vec![VariantJumpTable { head_enum: EnumDefinitionIndex(2), jump_table: vec![0, 300, 65535] }]
            } else {
                Vec::new()
            };
            let m = CompiledModule {
                version,
                flavour,
                function_defs: vec![FunctionDefinition {
                    function: FunctionHandleIndex(0),
                    visibility: Visibility::Friend,
                    is_entry: true,
                    acquires_global_resources: vec![StructDefinitionIndex(1)],
                    code: Some(CodeUnit { locals: SignatureIndex(0), code: code.clone(), jump_tables }),
                }],
                ..Default::default()
            };
            let bytes = serialize_module(&m);
            // No bounds check: the operands point nowhere on purpose.
            let (back, _) = decode_module_unchecked(&bytes).unwrap_or_else(|e| panic!("{flavour:?}: {e}"));
            assert_eq!(back, m, "{flavour:?}");
            assert_eq!(serialize_module(&back), bytes);
            let expected = match flavour {
                Flavour::Aptos => 0x68,
                Flavour::Sui => 0x56,
                Flavour::Common => 0x4D,
            };
            assert_eq!(code.len(), expected, "{flavour:?}: every opcode byte 0x01..={expected:#x} covered");
        }
    }

    fn all_tokens() -> Vec<SignatureToken> {
        use SignatureToken as T;
        vec![
            T::Bool,
            T::U8,
            T::U16,
            T::U32,
            T::U64,
            T::U128,
            T::U256,
            T::I8,
            T::I16,
            T::I32,
            T::I64,
            T::I128,
            T::I256,
            T::Address,
            T::Signer,
            T::Vector(Box::new(T::Vector(Box::new(T::U8)))),
            T::Function(vec![T::U64, T::Reference(Box::new(T::Address))], vec![], AbilitySet(0x3)),
            T::Function(vec![], vec![], AbilitySet::EMPTY),
            T::Struct(StructHandleIndex(300)),
            T::StructInstantiation(
                StructHandleIndex(1),
                vec![T::TypeParameter(65535), T::MutableReference(Box::new(T::Bool))],
            ),
        ]
    }

    #[test]
    fn every_table_and_entry_kind_round_trips() {
        let fh = |attrs: Vec<FunctionAttribute>, access: Option<Vec<AccessSpecifier>>| FunctionHandle {
            module: ModuleHandleIndex(0),
            name: IdentifierIndex(1),
            parameters: SignatureIndex(0),
            return_: SignatureIndex(1),
            type_parameters: vec![AbilitySet::ALL, AbilitySet::EMPTY],
            access_specifiers: access,
            attributes: attrs,
        };
        use FunctionAttribute as A;
        let spec = |kind, negated, resource, address| AccessSpecifier { kind, negated, resource, address };
        let aptos = CompiledModule {
            version: 10,
            flavour: Flavour::Aptos,
            self_module_handle_idx: ModuleHandleIndex(1),
            module_handles: vec![ModuleHandle { address: AddressIdentifierIndex(0), name: IdentifierIndex(0) }; 2],
            struct_handles: vec![StructHandle {
                module: ModuleHandleIndex(0),
                name: IdentifierIndex(2),
                abilities: AbilitySet(0xF),
                type_parameters: vec![StructTypeParameter { constraints: AbilitySet(0x4), is_phantom: true }],
            }],
            function_handles: vec![
                fh(vec![], None),
                fh(
                    vec![
                        A::Persistent,
                        A::ModuleLock,
                        A::Pack,
                        A::PackVariant(3),
                        A::Unpack,
                        A::UnpackVariant(65535),
                        A::TestVariant(0),
                        A::BorrowFieldImmutable(1),
                        A::BorrowFieldMutable(2),
                    ],
                    Some(vec![
                        spec(AccessKind::Reads, false, ResourceSpecifier::Any, AddressSpecifier::Any),
                        spec(
                            AccessKind::Writes,
                            true,
                            ResourceSpecifier::DeclaredAtAddress(AddressIdentifierIndex(1)),
                            AddressSpecifier::Literal(AddressIdentifierIndex(2)),
                        ),
                        spec(
                            AccessKind::Reads,
                            false,
                            ResourceSpecifier::DeclaredInModule(ModuleHandleIndex(3)),
                            AddressSpecifier::Parameter(4, None),
                        ),
                        spec(
                            AccessKind::Writes,
                            false,
                            ResourceSpecifier::Resource(StructHandleIndex(5)),
                            AddressSpecifier::Parameter(255, Some(FunctionInstantiationIndex(6))),
                        ),
                        spec(
                            AccessKind::Reads,
                            true,
                            ResourceSpecifier::ResourceInstantiation(StructHandleIndex(7), SignatureIndex(8)),
                            AddressSpecifier::Any,
                        ),
                    ]),
                ),
                fh(vec![], Some(vec![])),
            ],
            field_handles: vec![FieldHandle { owner: StructDefinitionIndex(0), field: 255 }],
            friend_decls: vec![ModuleHandle { address: AddressIdentifierIndex(1), name: IdentifierIndex(1) }],
            struct_def_instantiations: vec![StructDefInstantiation {
                def: StructDefinitionIndex(1),
                type_parameters: SignatureIndex(2),
            }],
            function_instantiations: vec![FunctionInstantiation {
                handle: FunctionHandleIndex(1),
                type_parameters: SignatureIndex(3),
            }],
            field_instantiations: vec![FieldInstantiation {
                handle: FieldHandleIndex(0),
                type_parameters: SignatureIndex(4),
            }],
            signatures: vec![Signature(all_tokens()), Signature(vec![])],
            identifiers: vec!["m".into(), "f".into(), "S".into(), "$dollar_v9".into(), "<SELF>".into()],
            address_identifiers: vec![AccountAddress::ZERO, AccountAddress::from_u64(0xCAFE)],
            constant_pool: all_tokens().into_iter().map(|t| Constant { type_: t, data: vec![1, 2, 3] }).collect(),
            metadata: vec![Metadata { key: vec![0; 1023], value: vec![7; 300] }],
            struct_defs: vec![
                StructDefinition {
                    struct_handle: StructHandleIndex(0),
                    field_information: StructFieldInformation::Native,
                },
                StructDefinition {
                    struct_handle: StructHandleIndex(0),
                    field_information: StructFieldInformation::Declared(vec![FieldDefinition {
                        name: IdentifierIndex(2),
                        signature: SignatureToken::Vector(Box::new(SignatureToken::U256)),
                    }]),
                },
                StructDefinition {
                    struct_handle: StructHandleIndex(0),
                    field_information: StructFieldInformation::DeclaredVariants(vec![
                        VariantDefinition { name: IdentifierIndex(3), fields: vec![] },
                        VariantDefinition {
                            name: IdentifierIndex(4),
                            fields: vec![FieldDefinition { name: IdentifierIndex(0), signature: SignatureToken::I64 }],
                        },
                    ]),
                },
            ],
            function_defs: vec![FunctionDefinition {
                function: FunctionHandleIndex(0),
                visibility: Visibility::Private,
                is_entry: false,
                acquires_global_resources: vec![],
                code: None,
            }],
            struct_variant_handles: vec![StructVariantHandle { struct_index: StructDefinitionIndex(2), variant: 127 }],
            struct_variant_instantiations: vec![StructVariantInstantiation {
                handle: StructVariantHandleIndex(0),
                type_parameters: SignatureIndex(1),
            }],
            variant_field_handles: vec![VariantFieldHandle {
                struct_index: StructDefinitionIndex(2),
                variants: vec![0, 1, 127],
                field: 0,
            }],
            variant_field_instantiations: vec![VariantFieldInstantiation {
                handle: VariantFieldHandleIndex(0),
                type_parameters: SignatureIndex(0),
            }],
            ..Default::default()
        };
        let bytes = serialize_module(&aptos);
        let (back, _) = decode_module_unchecked(&bytes).unwrap();
        assert_eq!(back, aptos);
        assert_eq!(serialize_module(&back), bytes);

        let sui = CompiledModule {
            version: 7,
            flavour: Flavour::Sui,
            signatures: vec![Signature(
                all_tokens()[..15].iter().filter(|t| !t.is_signed_integer()).cloned().collect(),
            )],
            identifiers: vec!["m".into(), "E".into(), "A".into()],
            enum_defs: vec![EnumDefinition {
                enum_handle: StructHandleIndex(0),
                variants: vec![
                    VariantDefinition { name: IdentifierIndex(2), fields: vec![] },
                    VariantDefinition {
                        name: IdentifierIndex(1),
                        fields: vec![FieldDefinition { name: IdentifierIndex(0), signature: SignatureToken::U16 }],
                    },
                ],
            }],
            enum_def_instantiations: vec![EnumDefInstantiation {
                def: EnumDefinitionIndex(0),
                type_parameters: SignatureIndex(0),
            }],
            variant_handles: vec![VariantHandle { enum_def: EnumDefinitionIndex(0), variant: 126 }],
            variant_instantiation_handles: vec![VariantInstantiationHandle {
                enum_def: EnumDefInstantiationIndex(0),
                variant: 1,
            }],
            ..Default::default()
        };
        let bytes = serialize_module(&sui);
        assert_eq!(&bytes[4..8], &[7, 0, 0, 5]);
        let (back, _) = decode_module_unchecked(&bytes).unwrap();
        assert_eq!(back, sui);
    }
}
