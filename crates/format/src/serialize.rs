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
