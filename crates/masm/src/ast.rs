//! The syntax tree of a `.masm` unit, before names are resolved.

use crate::error::Pos;
use crate::value::AsmValue;
use ethnum::U256;
use movejit_format::{AbilitySet, AccessKind, AccountAddress, FunctionAttribute, Visibility};

/// A module id as written: address and module name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleName {
    pub address: AccountAddress,
    pub name: String,
}

#[derive(Clone, Debug)]
pub enum UnitKind {
    Module(ModuleName),
    Script,
}

#[derive(Clone, Debug)]
pub struct Unit {
    pub version: Option<(Pos, u32)>,
    /// `sui`, `aptos` (or `common`).
    pub flavour: Option<(Pos, String)>,
    pub kind: UnitKind,
    pub header_pos: Pos,
    pub uses: Vec<Use>,
    pub friends: Vec<(Pos, ModuleName)>,
    pub metadata: Vec<(Vec<u8>, Vec<u8>)>,
    /// Constants declared on their own (`const <T> value`), kept in the pool
    /// even when no instruction loads them.
    pub constants: Vec<(Pos, Type, ConstValue)>,
    pub structs: Vec<StructDecl>,
    pub functions: Vec<FunDecl>,
}

/// `use 0x1::m [as alias]`, with the imported struct and function handles
/// declared in the indented block below it.
#[derive(Clone, Debug)]
pub struct Use {
    pub pos: Pos,
    pub module: ModuleName,
    pub alias: String,
    pub structs: Vec<StructDecl>,
    pub functions: Vec<FunDecl>,
}

/// A (possibly qualified) name: `[addr ::] part { :: part }`.
#[derive(Clone, Debug)]
pub struct Path {
    pub pos: Pos,
    pub address: Option<AccountAddress>,
    pub parts: Vec<String>,
}

#[derive(Clone, Debug)]
pub enum Type {
    Named(Path, Option<Vec<Type>>),
    Ref(bool, Box<Type>),
    Func(Vec<Type>, Vec<Type>, AbilitySet),
}

#[derive(Clone, Debug)]
pub struct TypeParam {
    pub name: String,
    pub constraints: AbilitySet,
    pub is_phantom: bool,
}

#[derive(Clone, Debug)]
pub struct Decl {
    pub pos: Pos,
    pub name: String,
    pub ty: Type,
}

#[derive(Clone, Debug)]
pub enum Layout {
    Native,
    Fields(Vec<Decl>),
    Variants(Vec<(Pos, String, Vec<Decl>)>),
}

#[derive(Clone, Debug)]
pub struct StructDecl {
    pub pos: Pos,
    pub name: String,
    pub type_params: Vec<TypeParam>,
    pub abilities: AbilitySet,
    pub layout: Layout,
}

/// The resource part of an access specifier.
#[derive(Clone, Debug)]
pub enum ResourceSpec {
    Any,
    AtAddress(AccountAddress),
    InModule(Path),
    Resource(Type),
}

/// The address part of an access specifier.
#[derive(Clone, Debug)]
pub enum AddressSpec {
    Any,
    Literal(AccountAddress),
    Param(String),
    Derived(Path, Vec<Type>, String),
}

#[derive(Clone, Debug)]
pub struct AccessSpec {
    pub pos: Pos,
    pub kind: AccessKind,
    pub negated: bool,
    pub resource: ResourceSpec,
    pub address: AddressSpec,
}

#[derive(Clone, Debug)]
pub struct FunDecl {
    pub pos: Pos,
    pub name: String,
    pub attributes: Vec<FunctionAttribute>,
    pub visibility: Visibility,
    pub is_entry: bool,
    pub is_native: bool,
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Decl>,
    pub results: Vec<Type>,
    pub acquires: Vec<(Pos, String)>,
    /// `None`: no `access` clause; `Some([])`: `access []`.
    pub access: Option<Vec<AccessSpec>>,
    pub locals: Vec<Decl>,
    pub code: Vec<Instr>,
}

/// The value operand of `ld_const`.
#[derive(Clone, Debug)]
pub enum ConstValue {
    Value(AsmValue),
    /// `x"..."` as the whole operand: the raw BCS bytes of the constant.
    Raw(Vec<u8>),
}

#[derive(Clone, Debug)]
pub enum Arg {
    Number(bool, U256),
    Bytes(Vec<u8>),
    Vector(Vec<Arg>),
    Name(Path, Option<Vec<Type>>),
    /// `<T1, T2>` (usually one type; `<>` allowed).
    Types(Vec<Type>),
}

#[derive(Clone, Debug)]
pub struct Instr {
    pub pos: Pos,
    pub label: Option<String>,
    pub op: String,
    pub args: Vec<Arg>,
}
