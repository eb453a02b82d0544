//! The in-memory model of a compiled Move module or Aptos script.
//!
//! One model serves both flavours. Tables that exist in only one flavour are
//! simply empty in the other; the [`Flavour`] recorded on the module tells the
//! serializer which encoding to use for the shared table kinds 0x11–0x14 and
//! opcodes 0x4E–0x56.

use ethnum::{I256, U256};

/// Which dialect of the binary format a module is written in.
///
/// Bytecode v5 and v6 carry no flavour in their version word (`Common`); they
/// are byte-identical between Aptos and Sui. From v7 on the high byte of the
/// version word says `0x0A` (Aptos) or `0x05` (Sui).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Flavour {
    #[default]
    Common,
    Aptos,
    Sui,
}

impl Flavour {
    pub fn is_aptos_like(self) -> bool {
        matches!(self, Flavour::Common | Flavour::Aptos)
    }
    pub fn is_sui(self) -> bool {
        matches!(self, Flavour::Sui)
    }
}

macro_rules! define_index {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u16);
        impl $name {
            pub fn idx(self) -> usize { self.0 as usize }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    )*};
}

define_index! {
    ModuleHandleIndex;
    /// Aptos: struct handle; Sui: datatype handle (struct or enum).
    StructHandleIndex;
    FunctionHandleIndex;
    FieldHandleIndex;
    StructDefInstantiationIndex;
    FunctionInstantiationIndex;
    FieldInstantiationIndex;
    IdentifierIndex;
    AddressIdentifierIndex;
    ConstantPoolIndex;
    SignatureIndex;
    StructDefinitionIndex;
    FunctionDefinitionIndex;
    /// Aptos v7+.
    VariantFieldHandleIndex;
    VariantFieldInstantiationIndex;
    StructVariantHandleIndex;
    StructVariantInstantiationIndex;
    /// Sui v7+.
    EnumDefinitionIndex;
    EnumDefInstantiationIndex;
    VariantHandleIndex;
    VariantInstantiationHandleIndex;
    VariantJumpTableIndex;
}

/// A local variable index (parameters first, then declared locals).
pub type LocalIndex = u8;
/// A type parameter index.
pub type TypeParameterIndex = u16;
/// An instruction index inside a function's code vector.
pub type CodeOffset = u16;
/// A field position inside a struct or variant.
pub type MemberCount = u16;
/// A variant tag.
pub type VariantIndex = u16;

pub type Identifier = String;

/// A 32-byte account address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AccountAddress(pub [u8; 32]);

impl AccountAddress {
    pub const LENGTH: usize = 32;
    pub const ZERO: AccountAddress = AccountAddress([0; 32]);

    pub fn from_u64(v: u64) -> Self {
        let mut b = [0u8; 32];
        b[24..].copy_from_slice(&v.to_be_bytes());
        AccountAddress(b)
    }
    /// `0x` followed by 64 lowercase hex digits.
    pub fn to_hex_long(&self) -> String {
        let mut digits = [0u8; 64];
        // 32 bytes always fit 64 digits.
        let _ = hex::encode_to_slice(self.0, &mut digits);
        let mut s = String::with_capacity(66);
        s.push_str("0x");
        s.extend(digits.iter().map(|&d| char::from(d)));
        s
    }
    /// `0x` followed by the hex digits without leading zeros (at least one digit).
    pub fn to_hex_short(&self) -> String {
        let long = self.to_hex_long();
        let trimmed = long[2..].trim_start_matches('0');
        if trimmed.is_empty() {
            "0x0".to_string()
        } else {
            format!("0x{}", trimmed)
        }
    }
    /// Parses `0x1`, `0xcafe`, `1`, or a full 64-digit form.
    pub fn parse(s: &str) -> Option<Self> {
        let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        if h.is_empty() || h.len() > 64 || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let padded = format!("{:0>64}", h);
        let mut out = [0u8; 32];
        for (i, chunk) in padded.as_bytes().chunks(2).enumerate() {
            let s = std::str::from_utf8(chunk).ok()?;
            out[i] = u8::from_str_radix(s, 16).ok()?;
        }
        Some(AccountAddress(out))
    }
}

impl std::fmt::Debug for AccountAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_hex_short())
    }
}
impl std::fmt::Display for AccountAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_hex_short())
    }
}

/// Abilities as the bitset the binary stores: Copy 1, Drop 2, Store 4, Key 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct AbilitySet(pub u8);

impl AbilitySet {
    pub const EMPTY: AbilitySet = AbilitySet(0);
    pub const COPY: u8 = 0x1;
    pub const DROP: u8 = 0x2;
    pub const STORE: u8 = 0x4;
    pub const KEY: u8 = 0x8;
    pub const ALL: AbilitySet = AbilitySet(0xF);
    /// Abilities of primitive values (integers, bool, address): copy, drop, store.
    pub const PRIMITIVES: AbilitySet = AbilitySet(0x7);
    /// Abilities of references: copy, drop.
    pub const REFERENCES: AbilitySet = AbilitySet(0x3);
    /// Abilities of signer: drop.
    pub const SIGNER: AbilitySet = AbilitySet(0x2);
    /// Abilities of vector<T> before intersecting with T's: copy, drop, store.
    pub const VECTOR: AbilitySet = AbilitySet(0x7);

    pub fn has_copy(self) -> bool {
        self.0 & Self::COPY != 0
    }
    pub fn has_drop(self) -> bool {
        self.0 & Self::DROP != 0
    }
    pub fn has_store(self) -> bool {
        self.0 & Self::STORE != 0
    }
    pub fn has_key(self) -> bool {
        self.0 & Self::KEY != 0
    }
    pub fn contains(self, other: AbilitySet) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn intersect(self, other: AbilitySet) -> AbilitySet {
        AbilitySet(self.0 & other.0)
    }
    pub fn union(self, other: AbilitySet) -> AbilitySet {
        AbilitySet(self.0 | other.0)
    }
}

/// A module handle: an address and a name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleHandle {
    pub address: AddressIdentifierIndex,
    pub name: IdentifierIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructTypeParameter {
    pub constraints: AbilitySet,
    pub is_phantom: bool,
}

/// A struct handle (Aptos) or datatype handle (Sui: struct or enum).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructHandle {
    pub module: ModuleHandleIndex,
    pub name: IdentifierIndex,
    pub abilities: AbilitySet,
    pub type_parameters: Vec<StructTypeParameter>,
}

/// Aptos v7+ access specifiers (`reads`, `writes`, `acquires` clauses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Reads = 1,
    Writes = 2,
    Acquires = 3,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResourceSpecifier {
    Any,
    DeclaredAtAddress(AddressIdentifierIndex),
    DeclaredInModule(ModuleHandleIndex),
    Resource(StructHandleIndex),
    ResourceInstantiation(StructHandleIndex, SignatureIndex),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpecifier {
    Any,
    Literal(AddressIdentifierIndex),
    /// A parameter of the function, optionally mapped through a function.
    Parameter(LocalIndex, Option<FunctionInstantiationIndex>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AccessSpecifier {
    pub kind: AccessKind,
    pub negated: bool,
    pub resource: ResourceSpecifier,
    pub address: AddressSpecifier,
}

/// Aptos v8+ function attributes (v10 adds the struct-API ones).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FunctionAttribute {
    Persistent,
    ModuleLock,
    Pack,
    PackVariant(u16),
    Unpack,
    UnpackVariant(u16),
    TestVariant(u16),
    BorrowFieldImmutable(u16),
    BorrowFieldMutable(u16),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionHandle {
    pub module: ModuleHandleIndex,
    pub name: IdentifierIndex,
    pub parameters: SignatureIndex,
    pub return_: SignatureIndex,
    pub type_parameters: Vec<AbilitySet>,
    /// Aptos v7+: `None` when the option byte says absent.
    pub access_specifiers: Option<Vec<AccessSpecifier>>,
    /// Aptos v8+.
    pub attributes: Vec<FunctionAttribute>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldHandle {
    pub owner: StructDefinitionIndex,
    pub field: MemberCount,
}

/// Aptos v7+: a field shared by one or more variants of an enum struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantFieldHandle {
    pub struct_index: StructDefinitionIndex,
    pub variants: Vec<VariantIndex>,
    pub field: MemberCount,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantFieldInstantiation {
    pub handle: VariantFieldHandleIndex,
    pub type_parameters: SignatureIndex,
}

/// Aptos v7+: one variant of an enum struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructVariantHandle {
    pub struct_index: StructDefinitionIndex,
    pub variant: VariantIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructVariantInstantiation {
    pub handle: StructVariantHandleIndex,
    pub type_parameters: SignatureIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructDefInstantiation {
    pub def: StructDefinitionIndex,
    pub type_parameters: SignatureIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionInstantiation {
    pub handle: FunctionHandleIndex,
    pub type_parameters: SignatureIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldInstantiation {
    pub handle: FieldHandleIndex,
    pub type_parameters: SignatureIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldDefinition {
    pub name: IdentifierIndex,
    pub signature: SignatureToken,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantDefinition {
    pub name: IdentifierIndex,
    pub fields: Vec<FieldDefinition>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StructFieldInformation {
    Native,
    Declared(Vec<FieldDefinition>),
    /// Aptos v7+ enum declared as a struct definition with variants.
    DeclaredVariants(Vec<VariantDefinition>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructDefinition {
    pub struct_handle: StructHandleIndex,
    pub field_information: StructFieldInformation,
}

/// Sui v7+ enum definition (its own table, 0x11 in Sui).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumDefinition {
    pub enum_handle: StructHandleIndex,
    pub variants: Vec<VariantDefinition>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumDefInstantiation {
    pub def: EnumDefinitionIndex,
    pub type_parameters: SignatureIndex,
}

/// Sui v7+: one variant of an enum definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantHandle {
    pub enum_def: EnumDefinitionIndex,
    pub variant: VariantIndex,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantInstantiationHandle {
    pub enum_def: EnumDefInstantiationIndex,
    pub variant: VariantIndex,
}

/// Sui v7+ per-function jump table for `VariantSwitch`: entry `t` is the
/// target for tag `t`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantJumpTable {
    pub head_enum: EnumDefinitionIndex,
    pub jump_table: Vec<CodeOffset>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Visibility {
    Private = 0,
    Public = 1,
    Friend = 3,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CodeUnit {
    pub locals: SignatureIndex,
    pub code: Vec<Bytecode>,
    /// Sui v7+ only; always empty in other flavours.
    pub jump_tables: Vec<VariantJumpTable>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionDefinition {
    pub function: FunctionHandleIndex,
    pub visibility: Visibility,
    pub is_entry: bool,
    pub acquires_global_resources: Vec<StructDefinitionIndex>,
    /// `None` for native functions.
    pub code: Option<CodeUnit>,
}

impl FunctionDefinition {
    pub const NATIVE: u8 = 0x2;
    pub const ENTRY: u8 = 0x4;
    pub fn is_native(&self) -> bool {
        self.code.is_none()
    }
}

/// A type as written in a signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignatureToken {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    U256,
    I8,
    I16,
    I32,
    I64,
    I128,
    I256,
    Address,
    Signer,
    Vector(Box<SignatureToken>),
    /// Aptos v8+ function type: parameters, results, abilities.
    Function(Vec<SignatureToken>, Vec<SignatureToken>, AbilitySet),
    Struct(StructHandleIndex),
    StructInstantiation(StructHandleIndex, Vec<SignatureToken>),
    Reference(Box<SignatureToken>),
    MutableReference(Box<SignatureToken>),
    TypeParameter(TypeParameterIndex),
}

impl SignatureToken {
    pub fn is_reference(&self) -> bool {
        matches!(self, SignatureToken::Reference(_) | SignatureToken::MutableReference(_))
    }
    pub fn is_mutable_reference(&self) -> bool {
        matches!(self, SignatureToken::MutableReference(_))
    }
    pub fn is_signed_integer(&self) -> bool {
        use SignatureToken::*;
        matches!(self, I8 | I16 | I32 | I64 | I128 | I256)
    }
    pub fn is_unsigned_integer(&self) -> bool {
        use SignatureToken::*;
        matches!(self, U8 | U16 | U32 | U64 | U128 | U256)
    }
    pub fn is_integer(&self) -> bool {
        self.is_signed_integer() || self.is_unsigned_integer()
    }
    /// Pre-order walk over this token and every token nested in it.
    pub fn preorder(&self) -> Vec<&SignatureToken> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            out.push(t);
            match t {
                SignatureToken::Vector(inner)
                | SignatureToken::Reference(inner)
                | SignatureToken::MutableReference(inner) => stack.push(inner),
                SignatureToken::StructInstantiation(_, args) => stack.extend(args.iter().rev()),
                SignatureToken::Function(params, results, _) => {
                    stack.extend(results.iter().rev());
                    stack.extend(params.iter().rev());
                }
                _ => {}
            }
        }
        out
    }
}

/// A list of types (parameters, returns, locals, type arguments).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Signature(pub Vec<SignatureToken>);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Constant {
    pub type_: SignatureToken,
    /// The BCS bytes of the value.
    pub data: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Metadata {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// A closure mask: bit `i` set means argument `i` is captured (Aptos v8+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClosureMask(pub u64);

impl ClosureMask {
    pub fn is_captured(self, i: usize) -> bool {
        i < 64 && (self.0 >> i) & 1 == 1
    }
    pub fn captured_count(self) -> usize {
        self.0.count_ones() as usize
    }
}

/// One instruction with its operands. Variants of both flavours live in one
/// enum; the flavour-specific ones are documented as such. The byte encoding
/// of each variant is in [`crate::opcodes`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bytecode {
    Pop,
    Ret,
    BrTrue(CodeOffset),
    BrFalse(CodeOffset),
    Branch(CodeOffset),
    LdU8(u8),
    LdU16(u16),
    LdU32(u32),
    LdU64(u64),
    LdU128(u128),
    LdU256(U256),
    LdI8(i8),
    LdI16(i16),
    LdI32(i32),
    LdI64(i64),
    LdI128(i128),
    LdI256(I256),
    LdConst(ConstantPoolIndex),
    LdTrue,
    LdFalse,
    CopyLoc(LocalIndex),
    MoveLoc(LocalIndex),
    StLoc(LocalIndex),
    MutBorrowLoc(LocalIndex),
    ImmBorrowLoc(LocalIndex),
    MutBorrowField(FieldHandleIndex),
    MutBorrowFieldGeneric(FieldInstantiationIndex),
    ImmBorrowField(FieldHandleIndex),
    ImmBorrowFieldGeneric(FieldInstantiationIndex),
    Call(FunctionHandleIndex),
    CallGeneric(FunctionInstantiationIndex),
    Pack(StructDefinitionIndex),
    PackGeneric(StructDefInstantiationIndex),
    Unpack(StructDefinitionIndex),
    UnpackGeneric(StructDefInstantiationIndex),
    ReadRef,
    WriteRef,
    FreezeRef,
    Add,
    Sub,
    Mul,
    Mod,
    Div,
    BitOr,
    BitAnd,
    Xor,
    Or,
    And,
    Not,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    Shl,
    Shr,
    CastU8,
    CastU16,
    CastU32,
    CastU64,
    CastU128,
    CastU256,
    CastI8,
    CastI16,
    CastI32,
    CastI64,
    CastI128,
    CastI256,
    Negate,
    Abort,
    /// Aptos v10: abort with a code and a UTF-8 message.
    AbortMsg,
    Nop,
    Exists(StructDefinitionIndex),
    ExistsGeneric(StructDefInstantiationIndex),
    MutBorrowGlobal(StructDefinitionIndex),
    MutBorrowGlobalGeneric(StructDefInstantiationIndex),
    ImmBorrowGlobal(StructDefinitionIndex),
    ImmBorrowGlobalGeneric(StructDefInstantiationIndex),
    MoveFrom(StructDefinitionIndex),
    MoveFromGeneric(StructDefInstantiationIndex),
    MoveTo(StructDefinitionIndex),
    MoveToGeneric(StructDefInstantiationIndex),
    VecPack(SignatureIndex, u64),
    VecLen(SignatureIndex),
    VecImmBorrow(SignatureIndex),
    VecMutBorrow(SignatureIndex),
    VecPushBack(SignatureIndex),
    VecPopBack(SignatureIndex),
    VecUnpack(SignatureIndex, u64),
    VecSwap(SignatureIndex),
    // ---- Aptos v7+ enums (struct definitions with variants) ----
    ImmBorrowVariantField(VariantFieldHandleIndex),
    MutBorrowVariantField(VariantFieldHandleIndex),
    ImmBorrowVariantFieldGeneric(VariantFieldInstantiationIndex),
    MutBorrowVariantFieldGeneric(VariantFieldInstantiationIndex),
    PackVariant(StructVariantHandleIndex),
    PackVariantGeneric(StructVariantInstantiationIndex),
    UnpackVariant(StructVariantHandleIndex),
    UnpackVariantGeneric(StructVariantInstantiationIndex),
    TestVariant(StructVariantHandleIndex),
    TestVariantGeneric(StructVariantInstantiationIndex),
    // ---- Aptos v8+ closures ----
    PackClosure(FunctionHandleIndex, ClosureMask),
    PackClosureGeneric(FunctionInstantiationIndex, ClosureMask),
    CallClosure(SignatureIndex),
    // ---- Sui v7 enums ----
    SuiPackVariant(VariantHandleIndex),
    SuiPackVariantGeneric(VariantInstantiationHandleIndex),
    SuiUnpackVariant(VariantHandleIndex),
    SuiUnpackVariantImmRef(VariantHandleIndex),
    SuiUnpackVariantMutRef(VariantHandleIndex),
    SuiUnpackVariantGeneric(VariantInstantiationHandleIndex),
    SuiUnpackVariantGenericImmRef(VariantInstantiationHandleIndex),
    SuiUnpackVariantGenericMutRef(VariantInstantiationHandleIndex),
    VariantSwitch(VariantJumpTableIndex),
}

impl Bytecode {
    /// The branch target of `BrTrue`, `BrFalse` and `Branch`.
    pub fn branch_target(&self) -> Option<CodeOffset> {
        match self {
            Bytecode::BrTrue(t) | Bytecode::BrFalse(t) | Bytecode::Branch(t) => Some(*t),
            _ => None,
        }
    }
    /// Instructions after which control never falls through to the next one.
    pub fn is_unconditional_branch(&self) -> bool {
        matches!(
            self,
            Bytecode::Ret | Bytecode::Abort | Bytecode::AbortMsg | Bytecode::Branch(_) | Bytecode::VariantSwitch(_)
        )
    }
    pub fn is_conditional_branch(&self) -> bool {
        matches!(self, Bytecode::BrTrue(_) | Bytecode::BrFalse(_))
    }
    pub fn is_branch(&self) -> bool {
        self.is_conditional_branch() || self.is_unconditional_branch()
    }
    /// Instructions on global storage: `exists`, `borrow_global`,
    /// `move_from`, `move_to` (generic or not).
    pub fn is_global_storage(&self) -> bool {
        matches!(
            self,
            Bytecode::Exists(_)
                | Bytecode::ExistsGeneric(_)
                | Bytecode::ImmBorrowGlobal(_)
                | Bytecode::ImmBorrowGlobalGeneric(_)
                | Bytecode::MutBorrowGlobal(_)
                | Bytecode::MutBorrowGlobalGeneric(_)
                | Bytecode::MoveFrom(_)
                | Bytecode::MoveFromGeneric(_)
                | Bytecode::MoveTo(_)
                | Bytecode::MoveToGeneric(_)
        )
    }
}

/// A compiled module: every table of both flavours.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CompiledModule {
    /// The bytecode version (5..=10), without flavour bits.
    pub version: u32,
    pub flavour: Flavour,
    pub self_module_handle_idx: ModuleHandleIndex,
    pub module_handles: Vec<ModuleHandle>,
    /// Aptos struct handles; Sui datatype handles.
    pub struct_handles: Vec<StructHandle>,
    pub function_handles: Vec<FunctionHandle>,
    pub field_handles: Vec<FieldHandle>,
    pub friend_decls: Vec<ModuleHandle>,
    pub struct_def_instantiations: Vec<StructDefInstantiation>,
    pub function_instantiations: Vec<FunctionInstantiation>,
    pub field_instantiations: Vec<FieldInstantiation>,
    pub signatures: Vec<Signature>,
    pub identifiers: Vec<Identifier>,
    pub address_identifiers: Vec<AccountAddress>,
    pub constant_pool: Vec<Constant>,
    pub metadata: Vec<Metadata>,
    pub struct_defs: Vec<StructDefinition>,
    pub function_defs: Vec<FunctionDefinition>,
    // Aptos v7+
    pub struct_variant_handles: Vec<StructVariantHandle>,
    pub struct_variant_instantiations: Vec<StructVariantInstantiation>,
    pub variant_field_handles: Vec<VariantFieldHandle>,
    pub variant_field_instantiations: Vec<VariantFieldInstantiation>,
    // Sui v7+
    pub enum_defs: Vec<EnumDefinition>,
    pub enum_def_instantiations: Vec<EnumDefInstantiation>,
    pub variant_handles: Vec<VariantHandle>,
    pub variant_instantiation_handles: Vec<VariantInstantiationHandle>,
}

/// An Aptos script: the common tables plus one `main` function.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CompiledScript {
    pub version: u32,
    pub flavour: Flavour,
    pub module_handles: Vec<ModuleHandle>,
    pub struct_handles: Vec<StructHandle>,
    pub function_handles: Vec<FunctionHandle>,
    pub function_instantiations: Vec<FunctionInstantiation>,
    pub signatures: Vec<Signature>,
    pub identifiers: Vec<Identifier>,
    pub address_identifiers: Vec<AccountAddress>,
    pub constant_pool: Vec<Constant>,
    pub metadata: Vec<Metadata>,
    pub code: CodeUnit,
    pub type_parameters: Vec<AbilitySet>,
    pub parameters: SignatureIndex,
    /// Aptos v8+: access specifiers of `main` (`None` when absent).
    pub access_specifiers: Option<Vec<AccessSpecifier>>,
}

impl CompiledScript {
    /// A module holding just the script's shared tables (handles,
    /// signatures, identifiers, constants, metadata) and no definitions.
    pub fn tables_as_module(&self) -> CompiledModule {
        CompiledModule {
            version: self.version,
            flavour: self.flavour,
            module_handles: self.module_handles.clone(),
            struct_handles: self.struct_handles.clone(),
            function_handles: self.function_handles.clone(),
            function_instantiations: self.function_instantiations.clone(),
            signatures: self.signatures.clone(),
            identifiers: self.identifiers.clone(),
            address_identifiers: self.address_identifiers.clone(),
            constant_pool: self.constant_pool.clone(),
            metadata: self.metadata.clone(),
            ..Default::default()
        }
    }

    /// The script as a module `0x0::<module_name>` whose only function is
    /// `main` (public entry, the script's parameters, type parameters and
    /// access specifiers), appended after the script's own tables so every
    /// index in the script stays valid: one view serves every pass that
    /// works on modules (verifier, disassembler, interpreter). `None` when a
    /// table is too full to take the appended entries.
    pub fn as_module(&self, module_name: &str) -> Option<CompiledModule> {
        fn append<T>(table: &mut Vec<T>, v: T) -> Option<u16> {
            // Keep clear of u16::MAX: some passes use it as "no index".
            let i = u16::try_from(table.len()).ok().filter(|i| *i < u16::MAX - 2)?;
            table.push(v);
            Some(i)
        }
        let mut m = self.tables_as_module();
        let address = AddressIdentifierIndex(append(&mut m.address_identifiers, AccountAddress::ZERO)?);
        let name = IdentifierIndex(append(&mut m.identifiers, module_name.to_string())?);
        m.self_module_handle_idx = ModuleHandleIndex(append(&mut m.module_handles, ModuleHandle { address, name })?);
        let main = IdentifierIndex(append(&mut m.identifiers, "main".to_string())?);
        let unit = SignatureIndex(append(&mut m.signatures, Signature(vec![]))?);
        let handle = FunctionHandle {
            module: m.self_module_handle_idx,
            name: main,
            parameters: self.parameters,
            return_: unit,
            type_parameters: self.type_parameters.clone(),
            access_specifiers: self.access_specifiers.clone(),
            attributes: vec![],
        };
        let function = FunctionHandleIndex(append(&mut m.function_handles, handle)?);
        m.function_defs.push(FunctionDefinition {
            function,
            visibility: Visibility::Public,
            is_entry: true,
            acquires_global_resources: vec![],
            code: Some(self.code.clone()),
        });
        Some(m)
    }
}

impl CompiledModule {
    pub fn self_handle(&self) -> &ModuleHandle {
        &self.module_handles[self.self_module_handle_idx.idx()]
    }
    pub fn address(&self) -> &AccountAddress {
        &self.address_identifiers[self.self_handle().address.idx()]
    }
    pub fn name(&self) -> &str {
        &self.identifiers[self.self_handle().name.idx()]
    }
    /// `0x<64 hex>::name`, the form status reports use.
    pub fn id_string(&self) -> String {
        format!("{}::{}", self.address().to_hex_long(), self.name())
    }
    pub fn identifier_at(&self, idx: IdentifierIndex) -> &str {
        &self.identifiers[idx.idx()]
    }
    pub fn signature_at(&self, idx: SignatureIndex) -> &Signature {
        &self.signatures[idx.idx()]
    }
    pub fn module_handle_at(&self, idx: ModuleHandleIndex) -> &ModuleHandle {
        &self.module_handles[idx.idx()]
    }
    pub fn struct_handle_at(&self, idx: StructHandleIndex) -> &StructHandle {
        &self.struct_handles[idx.idx()]
    }
    pub fn function_handle_at(&self, idx: FunctionHandleIndex) -> &FunctionHandle {
        &self.function_handles[idx.idx()]
    }
    pub fn struct_def_at(&self, idx: StructDefinitionIndex) -> &StructDefinition {
        &self.struct_defs[idx.idx()]
    }
    pub fn function_def_at(&self, idx: FunctionDefinitionIndex) -> &FunctionDefinition {
        &self.function_defs[idx.idx()]
    }
    pub fn address_identifier_at(&self, idx: AddressIdentifierIndex) -> &AccountAddress {
        &self.address_identifiers[idx.idx()]
    }
    /// The name of the function defined at `idx`.
    pub fn function_name(&self, idx: FunctionDefinitionIndex) -> &str {
        let fh = self.function_handle_at(self.function_def_at(idx).function);
        self.identifier_at(fh.name)
    }
    /// Looks up a function definition by name.
    pub fn find_function(&self, name: &str) -> Option<FunctionDefinitionIndex> {
        self.function_defs
            .iter()
            .position(|fd| self.identifier_at(self.function_handle_at(fd.function).name) == name)
            .map(|i| FunctionDefinitionIndex(i as u16))
    }
    /// Module handles other than self: the modules this one depends on.
    pub fn immediate_dependencies(&self) -> Vec<(AccountAddress, String)> {
        self.module_handles
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.self_module_handle_idx.idx())
            .map(|(_, h)| (*self.address_identifier_at(h.address), self.identifier_at(h.name).to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::AccountAddress;

    #[test]
    fn addresses_print_in_long_and_short_hex() {
        let cases: [(AccountAddress, &str, &str); 3] = [
            (AccountAddress::from_u64(0), "0x0000000000000000000000000000000000000000000000000000000000000000", "0x0"),
            (
                AccountAddress::from_u64(0xcafe),
                "0x000000000000000000000000000000000000000000000000000000000000cafe",
                "0xcafe",
            ),
            (
                AccountAddress([0xab; 32]),
                "0xabababababababababababababababababababababababababababababababab",
                "0xabababababababababababababababababababababababababababababababab",
            ),
        ];
        for (a, long, short) in cases {
            assert_eq!((a.to_hex_long().as_str(), a.to_hex_short().as_str()), (long, short));
        }
    }
}
