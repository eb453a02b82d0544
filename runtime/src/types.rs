//! Runtime types: signature tokens with every type parameter substituted,
//! and their type-tag text form (`0x1::option::Option<u64>`).

use movejit_format::{AbilitySet, AccountAddress, SignatureToken};
use std::fmt;
use std::sync::Arc;

/// A struct or enum, named by where it is declared.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatatypeId {
    pub address: AccountAddress,
    pub module: Arc<str>,
    pub name: Arc<str>,
}

/// A fully instantiated runtime type (no type parameters left, except
/// while instantiating).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
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
    Vector(Box<Type>),
    Datatype(Arc<DatatypeId>, Vec<Type>),
    Function(Vec<Type>, Vec<Type>, AbilitySet),
    Reference(Box<Type>),
    MutableReference(Box<Type>),
    TyParam(u16),
}

impl Type {
    /// A copy of this type sharing no reference count with it (its
    /// datatype ids and their names allocated anew): for types a session
    /// keeps, whose clones and drops then write no cache line that other
    /// threads' sessions also write.
    pub fn unshared(&self) -> Type {
        let all = |ts: &[Type]| ts.iter().map(Type::unshared).collect();
        match self {
            Type::Vector(e) => Type::Vector(Box::new(e.unshared())),
            Type::Reference(e) => Type::Reference(Box::new(e.unshared())),
            Type::MutableReference(e) => Type::MutableReference(Box::new(e.unshared())),
            Type::Datatype(id, args) => Type::Datatype(
                Arc::new(DatatypeId {
                    address: id.address,
                    module: Arc::from(&*id.module),
                    name: Arc::from(&*id.name),
                }),
                all(args),
            ),
            Type::Function(params, rets, abilities) => Type::Function(all(params), all(rets), *abilities),
            t => t.clone(),
        }
    }

    /// The type a primitive signature token names (integers, `bool`,
    /// `address`, `signer`); `None` for every token with parts (vectors,
    /// datatypes, functions, references, type parameters), which each
    /// caller resolves its own way.
    pub fn primitive(tok: &SignatureToken) -> Option<Type> {
        use SignatureToken as S;
        Some(match tok {
            S::Bool => Type::Bool,
            S::U8 => Type::U8,
            S::U16 => Type::U16,
            S::U32 => Type::U32,
            S::U64 => Type::U64,
            S::U128 => Type::U128,
            S::U256 => Type::U256,
            S::I8 => Type::I8,
            S::I16 => Type::I16,
            S::I32 => Type::I32,
            S::I64 => Type::I64,
            S::I128 => Type::I128,
            S::I256 => Type::I256,
            S::Address => Type::Address,
            S::Signer => Type::Signer,
            _ => return None,
        })
    }

    /// Nesting depth (a primitive is 1).
    pub fn depth(&self) -> usize {
        match self {
            Type::Vector(t) | Type::Reference(t) | Type::MutableReference(t) => 1 + t.depth(),
            Type::Datatype(_, args) => 1 + args.iter().map(Type::depth).max().unwrap_or(0),
            Type::Function(p, r, _) => 1 + p.iter().chain(r).map(Type::depth).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// Nodes of the type tree (a primitive is 1): what building it costs
    /// under Aptos's `instr.subst_ty_per_node`.
    pub fn num_nodes(&self) -> u64 {
        match self {
            Type::Vector(t) | Type::Reference(t) | Type::MutableReference(t) => 1 + t.num_nodes(),
            Type::Datatype(_, args) => 1 + args.iter().map(Type::num_nodes).sum::<u64>(),
            Type::Function(p, r, _) => 1 + p.iter().chain(r).map(Type::num_nodes).sum::<u64>(),
            _ => 1,
        }
    }

    /// Substitutes type parameters by `args`.
    pub fn subst(&self, args: &[Type]) -> Option<Type> {
        Some(match self {
            Type::TyParam(i) => args.get(*i as usize)?.clone(),
            Type::Vector(t) => Type::Vector(Box::new(t.subst(args)?)),
            Type::Reference(t) => Type::Reference(Box::new(t.subst(args)?)),
            Type::MutableReference(t) => Type::MutableReference(Box::new(t.subst(args)?)),
            Type::Datatype(id, a) => {
                Type::Datatype(id.clone(), a.iter().map(|t| t.subst(args)).collect::<Option<_>>()?)
            }
            Type::Function(p, r, ab) => Type::Function(
                p.iter().map(|t| t.subst(args)).collect::<Option<_>>()?,
                r.iter().map(|t| t.subst(args)).collect::<Option<_>>()?,
                *ab,
            ),
            t => t.clone(),
        })
    }

    /// Parses a type tag: `u8`, `vector<T>`, `0x1::m::S<T, U>`, `signer`
    /// (no references: a type tag cannot hold one).
    pub fn parse_tag(s: &str) -> Option<Type> {
        let mut p = TagParser { s: s.as_bytes(), i: 0, depth: 0 };
        let t = p.ty()?;
        p.ws();
        (p.i == p.s.len()).then_some(t)
    }

    /// The canonical form: full 64-digit addresses (with or without `0x`).
    pub fn canonical_name(&self, with_prefix: bool) -> String {
        match self {
            Type::Vector(t) => format!("vector<{}>", t.canonical_name(with_prefix)),
            Type::Datatype(id, args) => {
                let a = id.address.to_hex_long();
                let a = if with_prefix { a } else { a[2..].to_string() };
                let mut s = format!("{a}::{}::{}", id.module, id.name);
                if !args.is_empty() {
                    let parts: Vec<_> = args.iter().map(|t| t.canonical_name(with_prefix)).collect();
                    s.push('<');
                    s.push_str(&parts.join(","));
                    s.push('>');
                }
                s
            }
            t => t.to_string(),
        }
    }

    /// The name `std::type_name` gives: short addresses, `vector<T>`,
    /// `|A,B|(R) has copy` for function types.
    pub fn type_name(&self) -> String {
        self.to_string()
    }
}

fn ability_suffix(ab: AbilitySet) -> String {
    let mut names = Vec::new();
    if ab.has_copy() {
        names.push("copy");
    }
    if ab.has_drop() {
        names.push("drop");
    }
    if ab.has_store() {
        names.push("store");
    }
    if ab.has_key() {
        names.push("key");
    }
    if names.is_empty() {
        String::new()
    } else {
        format!(" has {}", names.join(" + "))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => write!(f, "bool"),
            Type::U8 => write!(f, "u8"),
            Type::U16 => write!(f, "u16"),
            Type::U32 => write!(f, "u32"),
            Type::U64 => write!(f, "u64"),
            Type::U128 => write!(f, "u128"),
            Type::U256 => write!(f, "u256"),
            Type::I8 => write!(f, "i8"),
            Type::I16 => write!(f, "i16"),
            Type::I32 => write!(f, "i32"),
            Type::I64 => write!(f, "i64"),
            Type::I128 => write!(f, "i128"),
            Type::I256 => write!(f, "i256"),
            Type::Address => write!(f, "address"),
            Type::Signer => write!(f, "signer"),
            Type::Vector(t) => write!(f, "vector<{t}>"),
            Type::Datatype(id, args) => {
                write!(f, "{}::{}::{}", id.address.to_hex_short(), id.module, id.name)?;
                if !args.is_empty() {
                    write!(f, "<")?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ">")?;
                }
                Ok(())
            }
            Type::Function(p, r, ab) => {
                write!(f, "|")?;
                for (i, a) in p.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, "|")?;
                if !r.is_empty() {
                    write!(f, "(")?;
                    for (i, a) in r.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ")")?;
                }
                write!(f, "{}", ability_suffix(*ab))
            }
            Type::Reference(t) => write!(f, "&{t}"),
            Type::MutableReference(t) => write!(f, "&mut {t}"),
            Type::TyParam(i) => write!(f, "T{i}"),
        }
    }
}

struct TagParser<'a> {
    s: &'a [u8],
    i: usize,
    /// Nesting so far: bounded so hostile input cannot exhaust the host stack.
    depth: usize,
}

const MAX_TAG_DEPTH: usize = 256;

impl TagParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(c.as_bytes()) {
            self.i += c.len();
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    fn ty(&mut self) -> Option<Type> {
        self.depth += 1;
        if self.depth > MAX_TAG_DEPTH {
            return None;
        }
        let t = self.ty_inner();
        self.depth -= 1;
        t
    }
    fn ty_inner(&mut self) -> Option<Type> {
        let word = self.ident()?;
        Some(match word.as_str() {
            "bool" => Type::Bool,
            "u8" => Type::U8,
            "u16" => Type::U16,
            "u32" => Type::U32,
            "u64" => Type::U64,
            "u128" => Type::U128,
            "u256" => Type::U256,
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "i128" => Type::I128,
            "i256" => Type::I256,
            "address" => Type::Address,
            "signer" => Type::Signer,
            "vector" => {
                if !self.eat("<") {
                    return None;
                }
                let t = self.ty()?;
                if !self.eat(">") {
                    return None;
                }
                Type::Vector(Box::new(t))
            }
            addr => {
                let address = AccountAddress::parse(addr)?;
                if !self.eat("::") {
                    return None;
                }
                let module = self.ident()?;
                if !self.eat("::") {
                    return None;
                }
                let name = self.ident()?;
                let mut args = Vec::new();
                if self.eat("<") {
                    loop {
                        args.push(self.ty()?);
                        if self.eat(">") {
                            break;
                        }
                        if !self.eat(",") {
                            return None;
                        }
                    }
                }
                Type::Datatype(Arc::new(DatatypeId { address, module: module.into(), name: name.into() }), args)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn tags_round_trip() {
        for s in
            ["u8", "vector<vector<address>>", "0x1::option::Option<0x1::string::String>", "0xcafe::g::B<u64, bool>"]
        {
            assert_eq!(Type::parse_tag(s).map(|t| t.to_string()).as_deref(), Some(s));
        }
        assert!(Type::parse_tag("vector<u8").is_none());
        assert!(Type::parse_tag("u8 x").is_none());
        for s in ["&u64", "&mut u64", "vector<&u8>", "0x1::m::S<&mut u8>"] {
            assert!(Type::parse_tag(s).is_none(), "{s}");
        }
        let deep = format!("{}u8{}", "vector<".repeat(100_000), ">".repeat(100_000));
        assert!(Type::parse_tag(&deep).is_none());
    }
}
