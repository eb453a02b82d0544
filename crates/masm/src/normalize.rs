//! A name-resolved view of a module for comparing two modules whose tables
//! may be ordered differently: every index is replaced by what it denotes
//! (module ids, struct and function names, types, constant values, field and
//! variant positions). Two modules are *equivalent* when their views are
//! equal. Written independently of the printer so that a printing mistake
//! cannot hide itself.

use movejit_format::*;
use std::collections::BTreeSet;

type ModId = (AccountAddress, String);

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NType {
    Prim(&'static str),
    Vector(Box<NType>),
    Function(Vec<NType>, Vec<NType>, AbilitySet),
    Struct(ModId, String, Option<Vec<NType>>),
    Ref(bool, Box<NType>),
    Param(u16),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NStructHandle {
    pub module: ModId,
    pub name: String,
    pub abilities: AbilitySet,
    pub type_params: Vec<(AbilitySet, bool)>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NAccess {
    pub kind: u8,
    pub negated: bool,
    pub resource: String,
    pub address: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NFunHandle {
    pub module: ModId,
    pub name: String,
    pub params: Vec<NType>,
    pub results: Vec<NType>,
    pub type_params: Vec<AbilitySet>,
    pub access: Option<Vec<NAccess>>,
    pub attributes: Vec<String>,
}

/// Named fields in order.
pub type NFields = Vec<(String, NType)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NLayout {
    Native,
    Fields(NFields),
    Variants(Vec<(String, NFields)>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NStructDef {
    pub name: String,
    pub layout: NLayout,
}

/// An instruction operand, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NArg {
    Int(String),
    Local(u8),
    Offset(u16),
    Const(NType, Vec<u8>),
    Fun(ModId, String),
    Struct(String),
    Field(String, u16),
    Variant(String, u16),
    VariantField(String, Vec<u16>, u16),
    Types(Vec<NType>),
    JumpTable(String, Vec<u16>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NInstr {
    pub op: Opcode,
    pub args: Vec<NArg>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NCode {
    pub locals: Vec<NType>,
    pub code: Vec<NInstr>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NFunDef {
    pub handle: NFunHandle,
    pub visibility: u8,
    pub is_entry: bool,
    pub acquires: Vec<String>,
    pub code: Option<NCode>,
}

/// The resolved view of a module (or a script: `self_id` is `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NModule {
    pub version: u32,
    pub flavour: Flavour,
    pub self_id: Option<ModId>,
    pub modules: BTreeSet<ModId>,
    pub friends: BTreeSet<ModId>,
    pub struct_handles: BTreeSet<NStructHandle>,
    pub function_handles: BTreeSet<NFunHandle>,
    pub struct_defs: Vec<NStructDef>,
    pub enum_defs: Vec<NStructDef>,
    pub function_defs: Vec<NFunDef>,
    pub constants: BTreeSet<(NType, Vec<u8>)>,
    pub metadata: Vec<(Vec<u8>, Vec<u8>)>,
    pub script_type_params: Vec<AbilitySet>,
}

type Res<T> = Result<T, String>;

fn get<'a, T>(t: &'a [T], i: usize, what: &str) -> Res<&'a T> {
    t.get(i).ok_or_else(|| format!("{what} index {i} out of bounds"))
}

struct Ctx<'a> {
    m: &'a CompiledModule,
}

impl<'a> Ctx<'a> {
    fn ident(&self, i: IdentifierIndex) -> Res<String> {
        get(&self.m.identifiers, i.idx(), "identifier").cloned()
    }
    fn module_id(&self, h: &ModuleHandle) -> Res<ModId> {
        Ok((*get(&self.m.address_identifiers, h.address.idx(), "address")?, self.ident(h.name)?))
    }
    fn module(&self, i: ModuleHandleIndex) -> Res<ModId> {
        self.module_id(get(&self.m.module_handles, i.idx(), "module handle")?)
    }
    fn sig(&self, i: SignatureIndex) -> Res<Vec<NType>> {
        get(&self.m.signatures, i.idx(), "signature")?.0.iter().map(|t| self.ty(t)).collect()
    }
    fn struct_ref(&self, i: StructHandleIndex) -> Res<(ModId, String)> {
        let h = get(&self.m.struct_handles, i.idx(), "struct handle")?;
        Ok((self.module(h.module)?, self.ident(h.name)?))
    }
    fn ty(&self, t: &SignatureToken) -> Res<NType> {
        use SignatureToken as T;
        Ok(match t {
            T::Bool => NType::Prim("bool"),
            T::U8 => NType::Prim("u8"),
            T::U16 => NType::Prim("u16"),
            T::U32 => NType::Prim("u32"),
            T::U64 => NType::Prim("u64"),
            T::U128 => NType::Prim("u128"),
            T::U256 => NType::Prim("u256"),
            T::I8 => NType::Prim("i8"),
            T::I16 => NType::Prim("i16"),
            T::I32 => NType::Prim("i32"),
            T::I64 => NType::Prim("i64"),
            T::I128 => NType::Prim("i128"),
            T::I256 => NType::Prim("i256"),
            T::Address => NType::Prim("address"),
            T::Signer => NType::Prim("signer"),
            T::Vector(e) => NType::Vector(Box::new(self.ty(e)?)),
            T::Function(p, r, a) => NType::Function(
                p.iter().map(|t| self.ty(t)).collect::<Res<_>>()?,
                r.iter().map(|t| self.ty(t)).collect::<Res<_>>()?,
                *a,
            ),
            T::Struct(s) => {
                let (m, n) = self.struct_ref(*s)?;
                NType::Struct(m, n, None)
            }
            T::StructInstantiation(s, args) => {
                let (m, n) = self.struct_ref(*s)?;
                NType::Struct(m, n, Some(args.iter().map(|t| self.ty(t)).collect::<Res<_>>()?))
            }
            T::Reference(e) => NType::Ref(false, Box::new(self.ty(e)?)),
            T::MutableReference(e) => NType::Ref(true, Box::new(self.ty(e)?)),
            T::TypeParameter(i) => NType::Param(*i),
        })
    }
    fn fun_handle(&self, h: &FunctionHandle) -> Res<NFunHandle> {
        Ok(NFunHandle {
            module: self.module(h.module)?,
            name: self.ident(h.name)?,
            params: self.sig(h.parameters)?,
            results: self.sig(h.return_)?,
            type_params: h.type_parameters.clone(),
            access: match &h.access_specifiers {
                None => None,
                Some(specs) => Some(specs.iter().map(|s| self.access(s)).collect::<Res<_>>()?),
            },
            attributes: h.attributes.iter().map(|a| format!("{a:?}")).collect(),
        })
    }
    fn access(&self, s: &AccessSpecifier) -> Res<NAccess> {
        let resource = match &s.resource {
            ResourceSpecifier::Any => "*".to_string(),
            ResourceSpecifier::DeclaredAtAddress(a) => {
                format!("{:?}::*", get(&self.m.address_identifiers, a.idx(), "address")?)
            }
            ResourceSpecifier::DeclaredInModule(m) => format!("{:?}::*", self.module(*m)?),
            ResourceSpecifier::Resource(s) => format!("{:?}", self.struct_ref(*s)?),
            ResourceSpecifier::ResourceInstantiation(s, sig) => {
                format!("{:?}{:?}", self.struct_ref(*s)?, self.sig(*sig)?)
            }
        };
        let address = match &s.address {
            AddressSpecifier::Any => "*".to_string(),
            AddressSpecifier::Literal(a) => format!("{:?}", get(&self.m.address_identifiers, a.idx(), "address")?),
            AddressSpecifier::Parameter(l, None) => format!("param {l}"),
            AddressSpecifier::Parameter(l, Some(fi)) => {
                let inst = get(&self.m.function_instantiations, fi.idx(), "function instantiation")?;
                let h = get(&self.m.function_handles, inst.handle.idx(), "function handle")?;
                format!(
                    "param {l} via {:?}::{}{:?}",
                    self.module(h.module)?,
                    self.ident(h.name)?,
                    self.sig(inst.type_parameters)?
                )
            }
        };
        Ok(NAccess { kind: s.kind as u8, negated: s.negated, resource, address })
    }
    fn fields(&self, fs: &[FieldDefinition]) -> Res<NFields> {
        fs.iter().map(|f| Ok((self.ident(f.name)?, self.ty(&f.signature)?))).collect()
    }
    fn variants(&self, vs: &[VariantDefinition]) -> Res<Vec<(String, NFields)>> {
        vs.iter().map(|v| Ok((self.ident(v.name)?, self.fields(&v.fields)?))).collect()
    }
    fn struct_def_name(&self, i: StructDefinitionIndex) -> Res<String> {
        let d = get(&self.m.struct_defs, i.idx(), "struct definition")?;
        Ok(self.struct_ref(d.struct_handle)?.1)
    }
    fn enum_def_name(&self, i: EnumDefinitionIndex) -> Res<String> {
        let d = get(&self.m.enum_defs, i.idx(), "enum definition")?;
        Ok(self.struct_ref(d.enum_handle)?.1)
    }
    fn fun_ref(&self, i: FunctionHandleIndex) -> Res<NArg> {
        let h = get(&self.m.function_handles, i.idx(), "function handle")?;
        Ok(NArg::Fun(self.module(h.module)?, self.ident(h.name)?))
    }
    fn fun_inst(&self, i: FunctionInstantiationIndex) -> Res<Vec<NArg>> {
        let inst = get(&self.m.function_instantiations, i.idx(), "function instantiation")?;
        Ok(vec![self.fun_ref(inst.handle)?, NArg::Types(self.sig(inst.type_parameters)?)])
    }
    fn struct_inst(&self, i: StructDefInstantiationIndex) -> Res<Vec<NArg>> {
        let inst = get(&self.m.struct_def_instantiations, i.idx(), "struct instantiation")?;
        Ok(vec![NArg::Struct(self.struct_def_name(inst.def)?), NArg::Types(self.sig(inst.type_parameters)?)])
    }
    fn field(&self, i: FieldHandleIndex) -> Res<NArg> {
        let h = get(&self.m.field_handles, i.idx(), "field handle")?;
        Ok(NArg::Field(self.struct_def_name(h.owner)?, h.field))
    }
    fn aptos_variant(&self, i: StructVariantHandleIndex) -> Res<NArg> {
        let h = get(&self.m.struct_variant_handles, i.idx(), "variant handle")?;
        Ok(NArg::Variant(self.struct_def_name(h.struct_index)?, h.variant))
    }
    fn variant_field(&self, i: VariantFieldHandleIndex) -> Res<NArg> {
        let h = get(&self.m.variant_field_handles, i.idx(), "variant field handle")?;
        Ok(NArg::VariantField(self.struct_def_name(h.struct_index)?, h.variants.clone(), h.field))
    }
    fn sui_variant(&self, i: VariantHandleIndex) -> Res<NArg> {
        let h = get(&self.m.variant_handles, i.idx(), "variant handle")?;
        Ok(NArg::Variant(self.enum_def_name(h.enum_def)?, h.variant))
    }
    fn sui_variant_inst(&self, i: VariantInstantiationHandleIndex) -> Res<Vec<NArg>> {
        let h = get(&self.m.variant_instantiation_handles, i.idx(), "variant instantiation")?;
        let inst = get(&self.m.enum_def_instantiations, h.enum_def.idx(), "enum instantiation")?;
        Ok(vec![NArg::Variant(self.enum_def_name(inst.def)?, h.variant), NArg::Types(self.sig(inst.type_parameters)?)])
    }

    fn instr(&self, bc: &Bytecode, unit: &CodeUnit) -> Res<NInstr> {
        use Bytecode as B;
        let int = |s: String| vec![NArg::Int(s)];
        let args = match bc {
            B::BrTrue(o) | B::BrFalse(o) | B::Branch(o) => vec![NArg::Offset(*o)],
            B::LdU8(v) => int(v.to_string()),
            B::LdU16(v) => int(v.to_string()),
            B::LdU32(v) => int(v.to_string()),
            B::LdU64(v) => int(v.to_string()),
            B::LdU128(v) => int(v.to_string()),
            B::LdU256(v) => int(v.to_string()),
            B::LdI8(v) => int(v.to_string()),
            B::LdI16(v) => int(v.to_string()),
            B::LdI32(v) => int(v.to_string()),
            B::LdI64(v) => int(v.to_string()),
            B::LdI128(v) => int(v.to_string()),
            B::LdI256(v) => int(v.to_string()),
            B::LdConst(c) => {
                let c = get(&self.m.constant_pool, c.idx(), "constant")?;
                vec![NArg::Const(self.ty(&c.type_)?, c.data.clone())]
            }
            B::CopyLoc(l) | B::MoveLoc(l) | B::StLoc(l) | B::MutBorrowLoc(l) | B::ImmBorrowLoc(l) => {
                vec![NArg::Local(*l)]
            }
            B::MutBorrowField(f) | B::ImmBorrowField(f) => vec![self.field(*f)?],
            B::MutBorrowFieldGeneric(fi) | B::ImmBorrowFieldGeneric(fi) => {
                let inst = get(&self.m.field_instantiations, fi.idx(), "field instantiation")?;
                vec![self.field(inst.handle)?, NArg::Types(self.sig(inst.type_parameters)?)]
            }
            B::Call(f) => vec![self.fun_ref(*f)?],
            B::CallGeneric(fi) => self.fun_inst(*fi)?,
            B::Pack(s)
            | B::Unpack(s)
            | B::Exists(s)
            | B::MutBorrowGlobal(s)
            | B::ImmBorrowGlobal(s)
            | B::MoveFrom(s)
            | B::MoveTo(s) => {
                vec![NArg::Struct(self.struct_def_name(*s)?)]
            }
            B::PackGeneric(s)
            | B::UnpackGeneric(s)
            | B::ExistsGeneric(s)
            | B::MutBorrowGlobalGeneric(s)
            | B::ImmBorrowGlobalGeneric(s)
            | B::MoveFromGeneric(s)
            | B::MoveToGeneric(s) => self.struct_inst(*s)?,
            B::VecPack(s, n) | B::VecUnpack(s, n) => vec![NArg::Types(self.sig(*s)?), NArg::Int(n.to_string())],
            B::VecLen(s)
            | B::VecImmBorrow(s)
            | B::VecMutBorrow(s)
            | B::VecPushBack(s)
            | B::VecPopBack(s)
            | B::VecSwap(s)
            | B::CallClosure(s) => {
                vec![NArg::Types(self.sig(*s)?)]
            }
            B::ImmBorrowVariantField(v) | B::MutBorrowVariantField(v) => vec![self.variant_field(*v)?],
            B::ImmBorrowVariantFieldGeneric(vi) | B::MutBorrowVariantFieldGeneric(vi) => {
                let inst = get(&self.m.variant_field_instantiations, vi.idx(), "variant field instantiation")?;
                vec![self.variant_field(inst.handle)?, NArg::Types(self.sig(inst.type_parameters)?)]
            }
            B::PackVariant(v) | B::UnpackVariant(v) | B::TestVariant(v) => vec![self.aptos_variant(*v)?],
            B::PackVariantGeneric(vi) | B::UnpackVariantGeneric(vi) | B::TestVariantGeneric(vi) => {
                let inst = get(&self.m.struct_variant_instantiations, vi.idx(), "variant instantiation")?;
                vec![self.aptos_variant(inst.handle)?, NArg::Types(self.sig(inst.type_parameters)?)]
            }
            B::PackClosure(f, mask) => vec![self.fun_ref(*f)?, NArg::Int(mask.0.to_string())],
            B::PackClosureGeneric(fi, mask) => {
                let mut a = self.fun_inst(*fi)?;
                a.push(NArg::Int(mask.0.to_string()));
                a
            }
            B::SuiPackVariant(v)
            | B::SuiUnpackVariant(v)
            | B::SuiUnpackVariantImmRef(v)
            | B::SuiUnpackVariantMutRef(v) => {
                vec![self.sui_variant(*v)?]
            }
            B::SuiPackVariantGeneric(vi)
            | B::SuiUnpackVariantGeneric(vi)
            | B::SuiUnpackVariantGenericImmRef(vi)
            | B::SuiUnpackVariantGenericMutRef(vi) => self.sui_variant_inst(*vi)?,
            B::VariantSwitch(j) => {
                let jt = get(&unit.jump_tables, j.idx(), "jump table")?;
                vec![NArg::JumpTable(self.enum_def_name(jt.head_enum)?, jt.jump_table.clone())]
            }
            _ => vec![],
        };
        Ok(NInstr { op: bc.opcode(), args })
    }

    fn code(&self, unit: &CodeUnit) -> Res<NCode> {
        Ok(NCode {
            locals: self.sig(unit.locals)?,
            code: unit.code.iter().map(|b| self.instr(b, unit)).collect::<Res<_>>()?,
        })
    }
}

/// The resolved view of a module.
pub fn normalize_module(m: &CompiledModule) -> Result<NModule, String> {
    let c = Ctx { m };
    let self_id = c.module(m.self_module_handle_idx)?;
    let struct_handles = m
        .struct_handles
        .iter()
        .map(|h| {
            Ok(NStructHandle {
                module: c.module(h.module)?,
                name: c.ident(h.name)?,
                abilities: h.abilities,
                type_params: h.type_parameters.iter().map(|p| (p.constraints, p.is_phantom)).collect(),
            })
        })
        .collect::<Res<_>>()?;
    let struct_defs = m
        .struct_defs
        .iter()
        .map(|d| {
            Ok(NStructDef {
                name: c.struct_ref(d.struct_handle)?.1,
                layout: match &d.field_information {
                    StructFieldInformation::Native => NLayout::Native,
                    StructFieldInformation::Declared(fs) => NLayout::Fields(c.fields(fs)?),
                    StructFieldInformation::DeclaredVariants(vs) => NLayout::Variants(c.variants(vs)?),
                },
            })
        })
        .collect::<Res<_>>()?;
    let enum_defs = m
        .enum_defs
        .iter()
        .map(|d| {
            Ok(NStructDef { name: c.struct_ref(d.enum_handle)?.1, layout: NLayout::Variants(c.variants(&d.variants)?) })
        })
        .collect::<Res<_>>()?;
    let function_defs = m
        .function_defs
        .iter()
        .map(|d| {
            Ok(NFunDef {
                handle: c.fun_handle(get(&m.function_handles, d.function.idx(), "function handle")?)?,
                visibility: d.visibility as u8,
                is_entry: d.is_entry,
                acquires: d.acquires_global_resources.iter().map(|s| c.struct_def_name(*s)).collect::<Res<_>>()?,
                code: d.code.as_ref().map(|u| c.code(u)).transpose()?,
            })
        })
        .collect::<Res<_>>()?;
    Ok(NModule {
        version: m.version,
        flavour: m.flavour,
        self_id: Some(self_id),
        modules: m.module_handles.iter().map(|h| c.module_id(h)).collect::<Res<_>>()?,
        friends: m.friend_decls.iter().map(|h| c.module_id(h)).collect::<Res<_>>()?,
        struct_handles,
        function_handles: m.function_handles.iter().map(|h| c.fun_handle(h)).collect::<Res<_>>()?,
        struct_defs,
        enum_defs,
        function_defs,
        constants: m.constant_pool.iter().map(|k| Ok((c.ty(&k.type_)?, k.data.clone()))).collect::<Res<_>>()?,
        metadata: m.metadata.iter().map(|md| (md.key.clone(), md.value.clone())).collect(),
        script_type_params: vec![],
    })
}

/// The resolved view of a script.
pub fn normalize_script(s: &CompiledScript) -> Result<NModule, String> {
    let m = s.tables_as_module();
    let c = Ctx { m: &m };
    let main = NFunDef {
        handle: NFunHandle {
            module: (AccountAddress::ZERO, String::new()),
            name: "main".into(),
            params: c.sig(s.parameters)?,
            results: vec![],
            type_params: s.type_parameters.clone(),
            access: match &s.access_specifiers {
                None => None,
                Some(specs) => Some(specs.iter().map(|a| c.access(a)).collect::<Res<_>>()?),
            },
            attributes: vec![],
        },
        visibility: 0,
        is_entry: false,
        acquires: vec![],
        code: Some(c.code(&s.code)?),
    };
    Ok(NModule {
        version: s.version,
        flavour: s.flavour,
        self_id: None,
        modules: m.module_handles.iter().map(|h| c.module_id(h)).collect::<Res<_>>()?,
        friends: BTreeSet::new(),
        struct_handles: m
            .struct_handles
            .iter()
            .map(|h| {
                Ok(NStructHandle {
                    module: c.module(h.module)?,
                    name: c.ident(h.name)?,
                    abilities: h.abilities,
                    type_params: h.type_parameters.iter().map(|p| (p.constraints, p.is_phantom)).collect(),
                })
            })
            .collect::<Res<_>>()?,
        function_handles: m.function_handles.iter().map(|h| c.fun_handle(h)).collect::<Res<_>>()?,
        struct_defs: vec![],
        enum_defs: vec![],
        function_defs: vec![main],
        constants: m.constant_pool.iter().map(|k| Ok((c.ty(&k.type_)?, k.data.clone()))).collect::<Res<_>>()?,
        metadata: m.metadata.iter().map(|md| (md.key.clone(), md.value.clone())).collect(),
        script_type_params: s.type_parameters.clone(),
    })
}

/// The first difference between two views, or `None` when equivalent.
pub fn first_difference(a: &NModule, b: &NModule) -> Option<String> {
    macro_rules! cmp {
        ($field:ident) => {
            if a.$field != b.$field {
                return Some(format!("{} differ: {:?} vs {:?}", stringify!($field), a.$field, b.$field));
            }
        };
    }
    cmp!(version);
    cmp!(flavour);
    cmp!(self_id);
    cmp!(script_type_params);
    if a.modules != b.modules {
        return Some(format!(
            "module handles differ: {:?}",
            a.modules.symmetric_difference(&b.modules).collect::<Vec<_>>()
        ));
    }
    cmp!(friends);
    if a.struct_handles != b.struct_handles {
        return Some(format!(
            "struct handles differ: {:?}",
            a.struct_handles.symmetric_difference(&b.struct_handles).collect::<Vec<_>>()
        ));
    }
    if a.function_handles != b.function_handles {
        return Some(format!(
            "function handles differ: {:?}",
            a.function_handles.symmetric_difference(&b.function_handles).collect::<Vec<_>>()
        ));
    }
    cmp!(struct_defs);
    cmp!(enum_defs);
    if a.function_defs.len() != b.function_defs.len() {
        return Some(format!("function count {} vs {}", a.function_defs.len(), b.function_defs.len()));
    }
    for (x, y) in a.function_defs.iter().zip(&b.function_defs) {
        if x != y {
            let (xc, yc) = (x.code.as_ref(), y.code.as_ref());
            if let (Some(xc), Some(yc)) = (xc, yc) {
                if let Some((i, (p, q))) = xc.code.iter().zip(&yc.code).enumerate().find(|(_, (p, q))| p != q) {
                    return Some(format!("function `{}` instruction {i}: {p:?} vs {q:?}", x.handle.name));
                }
            }
            return Some(format!("function `{}` differs: {x:?} vs {y:?}", x.handle.name));
        }
    }
    if a.constants != b.constants {
        return Some(format!(
            "constants differ: {:?}",
            a.constants.symmetric_difference(&b.constants).collect::<Vec<_>>()
        ));
    }
    cmp!(metadata);
    None
}
