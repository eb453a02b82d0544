//! Tokens → syntax tree. The grammar is move-asm's, with the extensions
//! listed in the crate README (directives, import declarations under `use`,
//! `native struct`, `const`, `metadata`, `access`, jump tables).

use crate::ast::*;
use crate::error::{AsmError, AsmErrorKind, AsmResult, Pos};
use crate::lexer::{tokenize, Tok};
use crate::value::AsmValue;
use ethnum::U256;
use movejit_format::{AbilitySet, AccessKind, AccountAddress, FunctionAttribute, Visibility};
use std::collections::BTreeMap;

/// Parses `.masm` text into a syntax tree.
pub fn parse(src: &str) -> AsmResult<Unit> {
    let toks = tokenize(src)?;
    Parser { toks, i: 0, aliases: BTreeMap::new(), depth: 0 }.unit()
}

struct Parser {
    toks: Vec<(Pos, Tok)>,
    i: usize,
    /// `address name = 0x…` aliases.
    aliases: BTreeMap<String, AccountAddress>,
    /// Nesting of types and vector values, bounded so deep input cannot
    /// exhaust the stack.
    depth: usize,
}

/// Deepest nesting of types or vector values accepted.
const MAX_NESTING: usize = 300;

fn syntax(pos: Pos, msg: impl Into<String>) -> AsmError {
    AsmError::new(AsmErrorKind::Syntax, pos, msg)
}

impl Parser {
    // ---- token access -------------------------------------------------------

    fn peek_at(&self, k: usize) -> &Tok {
        self.toks.get(self.i + k).map(|t| &t.1).unwrap_or(&Tok::End)
    }
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }
    fn pos(&self) -> Pos {
        self.toks.get(self.i).or(self.toks.last()).map(|t| t.0).unwrap_or_default()
    }
    fn bump(&mut self) {
        if self.i < self.toks.len() && *self.peek() != Tok::End {
            self.i += 1;
        }
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    fn is_sym_at(&self, k: usize, s: &str) -> bool {
        matches!(self.peek_at(k), Tok::Sym(x) if *x == s)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == kw)
    }
    fn is_ident(&self) -> bool {
        matches!(self.peek(), Tok::Ident(_))
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn unexpected(&self, what: &str) -> AsmError {
        syntax(self.pos(), format!("expected {what}, found `{}`", self.peek()))
    }
    fn expect_sym(&mut self, s: &str) -> AsmResult<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{s}`")))
        }
    }
    fn expect_kw(&mut self, kw: &str) -> AsmResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }
    fn expect_newline(&mut self) -> AsmResult<()> {
        match self.peek() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::End => Ok(()),
            _ => Err(self.unexpected("end of line")),
        }
    }
    fn ident(&mut self) -> AsmResult<String> {
        if let Tok::Ident(s) = self.peek() {
            let s = s.clone();
            self.bump();
            Ok(s)
        } else {
            Err(self.unexpected("identifier"))
        }
    }
    fn number(&mut self) -> AsmResult<U256> {
        if let Tok::Number(n) = self.peek() {
            let n = *n;
            self.bump();
            Ok(n)
        } else {
            Err(self.unexpected("number"))
        }
    }
    fn small_number<T: TryFrom<U256>>(&mut self, what: &str) -> AsmResult<T> {
        let pos = self.pos();
        let n = self.number()?;
        T::try_from(n).map_err(|_| AsmError::new(AsmErrorKind::Operand, pos, format!("{what} {n} out of range")))
    }
    fn bytes(&mut self) -> AsmResult<Vec<u8>> {
        if let Tok::Bytes(b) = self.peek() {
            let b = b.clone();
            self.bump();
            Ok(b)
        } else {
            Err(self.unexpected("byte string x\"..\""))
        }
    }
    /// A number as an address, or an address alias.
    fn address(&mut self) -> AsmResult<AccountAddress> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Number(n) => {
                self.bump();
                Ok(AccountAddress(n.to_be_bytes()))
            }
            Tok::Ident(name) => {
                self.bump();
                self.aliases.get(&name).copied().ok_or_else(|| {
                    AsmError::new(AsmErrorKind::Unresolved, pos, format!("unknown address alias `{name}`"))
                })
            }
            _ => Err(self.unexpected("address")),
        }
    }
    fn list<T>(&mut self, sep: &str, mut item: impl FnMut(&mut Self) -> AsmResult<T>) -> AsmResult<Vec<T>> {
        let mut out = vec![item(self)?];
        while self.eat_sym(sep) {
            out.push(item(self)?);
        }
        Ok(out)
    }

    // ---- unit ---------------------------------------------------------------

    fn unit(mut self) -> AsmResult<Unit> {
        let mut version = None;
        let mut flavour = None;
        loop {
            let pos = self.pos();
            if self.eat_kw("version") {
                let v: u32 = self.small_number("version")?;
                version = Some((pos, v));
            } else if self.eat_kw("flavour") {
                flavour = Some((pos, self.ident()?));
            } else if self.eat_kw("address") {
                let name = self.ident()?;
                self.expect_sym("=")?;
                let addr = self.address()?;
                self.aliases.insert(name, addr);
            } else {
                break;
            }
            self.expect_newline()?;
        }
        let header_pos = self.pos();
        let kind = if self.eat_kw("module") {
            UnitKind::Module(self.module_name()?)
        } else if self.eat_kw("script") {
            UnitKind::Script
        } else {
            return Err(self.unexpected("`module` or `script` header"));
        };
        self.expect_newline()?;
        let mut unit = Unit {
            version,
            flavour,
            kind,
            header_pos,
            uses: vec![],
            friends: vec![],
            metadata: vec![],
            constants: vec![],
            structs: vec![],
            functions: vec![],
        };
        loop {
            let pos = self.pos();
            if self.is_kw("use") {
                self.bump();
                unit.uses.push(self.use_block(pos)?);
                continue;
            } else if self.is_kw("friend") && self.is_sym_at(2, "::") {
                self.bump();
                unit.friends.push((pos, self.module_name()?));
            } else if self.eat_kw("metadata") {
                let key = self.bytes()?;
                self.expect_sym(",")?;
                let value = self.bytes()?;
                unit.metadata.push((key, value));
            } else if self.eat_kw("const") {
                self.expect_sym("<")?;
                let ty = self.type_()?;
                self.expect_sym(">")?;
                let value = self.const_value()?;
                unit.constants.push((pos, ty, value));
            } else {
                break;
            }
            self.expect_newline()?;
        }
        while *self.peek() != Tok::End {
            if self.is_kw("struct")
                || self.is_kw("enum")
                || (self.is_kw("native") && matches!(self.peek_at(1), Tok::Ident(s) if s == "struct"))
            {
                unit.structs.push(self.struct_def(true)?);
            } else if self.is_fun_start() {
                unit.functions.push(self.fun(true)?);
            } else {
                return Err(self.unexpected("a struct, enum or function declaration"));
            }
        }
        Ok(unit)
    }

    fn module_name(&mut self) -> AsmResult<ModuleName> {
        let address = self.address()?;
        self.expect_sym("::")?;
        let name = self.ident()?;
        Ok(ModuleName { address, name })
    }

    fn use_block(&mut self, pos: Pos) -> AsmResult<Use> {
        let module = self.module_name()?;
        let alias = if self.eat_kw("as") { self.ident()? } else { module.name.clone() };
        self.expect_newline()?;
        let mut u = Use { pos, module, alias, structs: vec![], functions: vec![] };
        while *self.peek() == Tok::Indent {
            self.bump();
            if self.is_kw("struct") {
                u.structs.push(self.struct_def(false)?);
            } else if self.is_fun_start() {
                u.functions.push(self.fun(false)?);
            } else {
                return Err(self.unexpected("an imported `struct` or `fun` declaration"));
            }
        }
        Ok(u)
    }

    // ---- structs ------------------------------------------------------------

    fn type_params(&mut self, allow_phantom: bool) -> AsmResult<Vec<TypeParam>> {
        if !self.eat_sym("<") {
            return Ok(vec![]);
        }
        let params = self.list(",", |p| {
            let is_phantom = allow_phantom && p.eat_kw("phantom");
            let name = p.ident()?;
            let constraints = if p.eat_sym(":") { p.abilities()? } else { AbilitySet::EMPTY };
            Ok(TypeParam { name, constraints, is_phantom })
        })?;
        self.expect_sym(">")?;
        Ok(params)
    }

    fn abilities(&mut self) -> AsmResult<AbilitySet> {
        let mut set = AbilitySet::EMPTY;
        for (pos, name) in self.list("+", |p| Ok((p.pos(), p.ident()?)))? {
            let bit = match name.as_str() {
                "copy" => AbilitySet::COPY,
                "drop" => AbilitySet::DROP,
                "store" => AbilitySet::STORE,
                "key" => AbilitySet::KEY,
                _ => return Err(syntax(pos, format!("expected one of copy, drop, store, key; found `{name}`"))),
            };
            set = set.union(AbilitySet(bit));
        }
        Ok(set)
    }

    /// A struct or enum definition (`with_body`), or an imported struct
    /// handle (a header line only).
    fn struct_def(&mut self, with_body: bool) -> AsmResult<StructDecl> {
        let is_native = self.eat_kw("native");
        let is_enum = if is_native || !with_body {
            self.expect_kw("struct")?;
            false
        } else if self.eat_kw("enum") {
            true
        } else {
            self.expect_kw("struct")?;
            false
        };
        let pos = self.pos();
        let name = self.ident()?;
        let type_params = self.type_params(true)?;
        let abilities = if self.eat_kw("has") { self.abilities()? } else { AbilitySet::EMPTY };
        self.expect_newline()?;
        let layout = if is_native || !with_body {
            Layout::Native
        } else if is_enum {
            let mut variants: Vec<(Pos, String, Vec<Decl>)> = vec![];
            while *self.peek() == Tok::Indent {
                self.bump();
                if self.is_ident() && *self.peek_at(1) == Tok::Newline {
                    let vpos = self.pos();
                    variants.push((vpos, self.ident()?, vec![]));
                } else {
                    let decl = self.decl()?;
                    match variants.last_mut() {
                        Some(v) => v.2.push(decl),
                        None => return Err(syntax(decl.pos, "field before the first variant of an enum")),
                    }
                }
                self.expect_newline()?;
            }
            if variants.is_empty() {
                return Err(syntax(pos, "an enum needs at least one variant"));
            }
            Layout::Variants(variants)
        } else {
            let mut fields = vec![];
            while *self.peek() == Tok::Indent {
                self.bump();
                fields.push(self.decl()?);
                self.expect_newline()?;
            }
            Layout::Fields(fields)
        };
        Ok(StructDecl { pos, name, type_params, abilities, layout })
    }

    fn decl(&mut self) -> AsmResult<Decl> {
        let pos = self.pos();
        let name = self.ident()?;
        self.expect_sym(":")?;
        let ty = self.type_()?;
        Ok(Decl { pos, name, ty })
    }

    // ---- types --------------------------------------------------------------

    fn is_type_start(&self) -> bool {
        self.is_ident()
            || (matches!(self.peek(), Tok::Number(_)) && self.is_sym_at(1, "::"))
            || self.is_sym("&")
            || self.is_sym("(")
            || self.is_sym("|")
    }

    fn path(&mut self) -> AsmResult<Path> {
        let pos = self.pos();
        let address = if matches!(self.peek(), Tok::Number(_)) && self.is_sym_at(1, "::") {
            let n = self.number()?;
            self.bump();
            Some(AccountAddress(n.to_be_bytes()))
        } else {
            None
        };
        let mut parts = vec![self.ident()?];
        while self.is_sym("::") && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            parts.push(self.ident()?);
        }
        // `alias::module::item` with an address alias.
        if address.is_none() && parts.len() == 3 {
            if let Some(a) = self.aliases.get(&parts[0]) {
                return Ok(Path { pos, address: Some(*a), parts: parts.split_off(1) });
            }
        }
        Ok(Path { pos, address, parts })
    }

    fn type_args_opt(&mut self) -> AsmResult<Option<Vec<Type>>> {
        if !self.eat_sym("<") {
            return Ok(None);
        }
        if self.eat_sym(">") {
            return Ok(Some(vec![]));
        }
        let tys = self.list(",", Self::type_)?;
        self.expect_sym(">")?;
        Ok(Some(tys))
    }

    fn type_(&mut self) -> AsmResult<Type> {
        self.nested(Self::type_inner)
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> AsmResult<T>) -> AsmResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(AsmError::new(AsmErrorKind::Limit, self.pos(), format!("nesting deeper than {MAX_NESTING}")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn type_inner(&mut self) -> AsmResult<Type> {
        if self.eat_sym("(") {
            let ty = self.type_()?;
            self.expect_sym(")")?;
            Ok(ty)
        } else if self.eat_sym("&") {
            let is_mut = self.eat_kw("mut");
            Ok(Type::Ref(is_mut, Box::new(self.type_()?)))
        } else if self.eat_sym("|") {
            let params = if self.is_sym("|") { vec![] } else { self.list(",", Self::type_)? };
            self.expect_sym("|")?;
            let results = if self.is_kw("has") || !self.is_type_start() { vec![] } else { self.result_types()? };
            let abilities = if self.eat_kw("has") { self.abilities()? } else { AbilitySet::EMPTY };
            Ok(Type::Func(params, results, abilities))
        } else if self.is_type_start() {
            let path = self.path()?;
            let args = self.type_args_opt()?;
            Ok(Type::Named(path, args))
        } else {
            Err(self.unexpected("type"))
        }
    }

    /// `T` or `(T1, T2, ...)` (also `()`).
    fn result_types(&mut self) -> AsmResult<Vec<Type>> {
        if self.eat_sym("(") {
            if self.eat_sym(")") {
                return Ok(vec![]);
            }
            let tys = self.list(",", Self::type_)?;
            self.expect_sym(")")?;
            Ok(tys)
        } else {
            Ok(vec![self.type_()?])
        }
    }

    // ---- functions ----------------------------------------------------------

    fn is_fun_start(&self) -> bool {
        ["fun", "entry", "public", "friend", "native"].iter().any(|k| self.is_kw(k))
            || (self.is_sym("#") && self.is_sym_at(1, "["))
    }

    fn attributes(&mut self) -> AsmResult<Vec<FunctionAttribute>> {
        if !(self.is_sym("#") && self.is_sym_at(1, "[")) {
            return Ok(vec![]);
        }
        self.bump();
        self.bump();
        let attrs = self.list(",", |p| {
            let pos = p.pos();
            let name = p.ident()?;
            let arg = |p: &mut Self| -> AsmResult<u16> {
                p.expect_sym("(")?;
                let n = p.small_number("attribute argument")?;
                p.expect_sym(")")?;
                Ok(n)
            };
            Ok(match name.as_str() {
                "persistent" => FunctionAttribute::Persistent,
                "module_lock" => FunctionAttribute::ModuleLock,
                "pack" => FunctionAttribute::Pack,
                "unpack" => FunctionAttribute::Unpack,
                "pack_variant" => FunctionAttribute::PackVariant(arg(p)?),
                "unpack_variant" => FunctionAttribute::UnpackVariant(arg(p)?),
                "test_variant" => FunctionAttribute::TestVariant(arg(p)?),
                "borrow" => FunctionAttribute::BorrowFieldImmutable(arg(p)?),
                "borrow_mut" => FunctionAttribute::BorrowFieldMutable(arg(p)?),
                _ => return Err(syntax(pos, format!("unknown function attribute `{name}`"))),
            })
        })?;
        self.expect_sym("]")?;
        Ok(attrs)
    }

    /// A function definition (`with_body`) or an imported function handle.
    fn fun(&mut self, with_body: bool) -> AsmResult<FunDecl> {
        let attributes = self.attributes()?;
        let is_entry = self.eat_kw("entry");
        let visibility = if self.eat_kw("public") {
            Visibility::Public
        } else if self.eat_kw("friend") {
            Visibility::Friend
        } else {
            Visibility::Private
        };
        let is_native = self.eat_kw("native");
        self.expect_kw("fun")?;
        let pos = self.pos();
        let name = self.ident()?;
        let type_params = self.type_params(false)?;
        self.expect_sym("(")?;
        let params = if self.is_sym(")") { vec![] } else { self.list(",", Self::decl)? };
        self.expect_sym(")")?;
        let results = if self.eat_sym(":") { self.result_types()? } else { vec![] };
        let acquires = if self.eat_kw("acquires") { self.list(",", |p| Ok((p.pos(), p.ident()?)))? } else { vec![] };
        let access = if self.eat_kw("access") {
            self.expect_sym("[")?;
            let specs = if self.is_sym("]") { vec![] } else { self.list(",", Self::access_spec)? };
            self.expect_sym("]")?;
            Some(specs)
        } else {
            None
        };
        self.expect_newline()?;
        let mut f = FunDecl {
            pos,
            name,
            attributes,
            visibility,
            is_entry,
            is_native,
            type_params,
            params,
            results,
            acquires,
            access,
            locals: vec![],
            code: vec![],
        };
        if !with_body {
            return Ok(f);
        }
        loop {
            let indented = *self.peek() == Tok::Indent;
            let label_line = self.is_ident() && self.is_sym_at(1, ":");
            if !indented && !label_line {
                break;
            }
            if indented {
                self.bump();
            }
            if self.is_kw("local") && !self.is_sym_at(1, ":") {
                let lpos = self.pos();
                if !f.code.is_empty() {
                    return Err(syntax(lpos, "local declarations must come before the instructions"));
                }
                self.bump();
                f.locals.push(self.decl()?);
            } else {
                f.code.push(self.instr()?);
            }
            self.expect_newline()?;
        }
        if f.is_native && !(f.locals.is_empty() && f.code.is_empty()) {
            return Err(syntax(f.pos, "a native function cannot have a body"));
        }
        // A non-native function without instructions has an empty code
        // unit (which the verifier rejects, but the format can hold).
        Ok(f)
    }

    fn access_spec(&mut self) -> AsmResult<AccessSpec> {
        let pos = self.pos();
        let negated = self.eat_sym("!");
        let kind = match self.ident()?.as_str() {
            "reads" => AccessKind::Reads,
            "writes" => AccessKind::Writes,
            "acquires" => AccessKind::Acquires,
            other => return Err(syntax(pos, format!("expected reads, writes or acquires; found `{other}`"))),
        };
        let resource = if self.eat_sym("*") {
            ResourceSpec::Any
        } else if matches!(self.peek(), Tok::Number(_)) && self.is_sym_at(1, "::") && self.is_sym_at(2, "*") {
            let a = self.address()?;
            self.bump();
            self.bump();
            ResourceSpec::AtAddress(a)
        } else {
            let path = self.path()?;
            if self.is_sym("::") && self.is_sym_at(1, "*") {
                self.bump();
                self.bump();
                ResourceSpec::InModule(path)
            } else {
                let args = self.type_args_opt()?;
                ResourceSpec::Resource(Type::Named(path, args))
            }
        };
        self.expect_sym("(")?;
        let address = if self.eat_sym("*") {
            AddressSpec::Any
        } else if matches!(self.peek(), Tok::Number(_)) && !self.is_sym_at(1, "::") {
            AddressSpec::Literal(self.address()?)
        } else {
            let path = self.path()?;
            if self.is_sym(")") && path.address.is_none() && path.parts.len() == 1 {
                AddressSpec::Param(path.parts.into_iter().next().unwrap_or_default())
            } else {
                let args = self.type_args_opt()?.unwrap_or_default();
                self.expect_sym("(")?;
                let param = self.ident()?;
                self.expect_sym(")")?;
                AddressSpec::Derived(path, args, param)
            }
        };
        self.expect_sym(")")?;
        Ok(AccessSpec { pos, kind, negated, resource, address })
    }

    // ---- instructions -------------------------------------------------------

    fn instr(&mut self) -> AsmResult<Instr> {
        let mut label = None;
        if self.is_ident() && self.is_sym_at(1, ":") {
            label = Some(self.ident()?);
            self.bump();
            // `label:` alone on its line labels the next instruction.
            if *self.peek() == Tok::Newline && *self.peek_at(1) == Tok::Indent {
                self.bump();
                self.bump();
            }
        }
        let pos = self.pos();
        let op = self.ident()?;
        let mut args = vec![];
        if !matches!(self.peek(), Tok::Newline | Tok::End) {
            args.push(self.arg()?);
            loop {
                if self.eat_sym(",") {
                    args.push(self.arg()?);
                } else if matches!(args.last(), Some(Arg::Types(_))) && self.is_value_start() {
                    // move-asm allows `ld_const <T> value` and `vec_pack <T> n`.
                    args.push(self.arg()?);
                } else {
                    break;
                }
            }
        }
        Ok(Instr { pos, label, op, args })
    }

    fn is_value_start(&self) -> bool {
        matches!(self.peek(), Tok::Number(_) | Tok::Bytes(_)) || self.is_sym("-") || self.is_sym("[")
    }

    fn arg(&mut self) -> AsmResult<Arg> {
        self.nested(Self::arg_inner)
    }

    fn arg_inner(&mut self) -> AsmResult<Arg> {
        if self.is_sym("<") {
            let tys = self.type_args_opt()?.unwrap_or_default();
            return Ok(Arg::Types(tys));
        }
        if self.eat_sym("-") {
            return Ok(Arg::Number(false, self.number()?));
        }
        if self.eat_sym("[") {
            let elems = if self.is_sym("]") { vec![] } else { self.list(",", Self::arg)? };
            self.expect_sym("]")?;
            return Ok(Arg::Vector(elems));
        }
        match self.peek().clone() {
            Tok::Bytes(b) => {
                self.bump();
                Ok(Arg::Bytes(b))
            }
            Tok::Number(n) if !self.is_sym_at(1, "::") => {
                self.bump();
                Ok(Arg::Number(true, n))
            }
            _ => {
                let path = self.path()?;
                let targs = self.type_args_opt()?;
                Ok(Arg::Name(path, targs))
            }
        }
    }

    fn const_value(&mut self) -> AsmResult<ConstValue> {
        let pos = self.pos();
        match self.arg()? {
            Arg::Bytes(b) => Ok(ConstValue::Raw(b)),
            a => Ok(ConstValue::Value(arg_to_value(pos, &a)?)),
        }
    }
}

/// Reads an instruction operand as a constant value.
pub fn arg_to_value(pos: Pos, a: &Arg) -> AsmResult<AsmValue> {
    match a {
        Arg::Number(sign, n) => Ok(AsmValue::Number(*sign, *n)),
        Arg::Vector(elems) => {
            Ok(AsmValue::Vector(elems.iter().map(|e| arg_to_value(pos, e)).collect::<AsmResult<_>>()?))
        }
        Arg::Name(p, None)
            if p.address.is_none() && p.parts.len() == 1 && (p.parts[0] == "true" || p.parts[0] == "false") =>
        {
            Ok(AsmValue::Number(true, U256::from(u8::from(p.parts[0] == "true"))))
        }
        // A vector<u8> written as a byte string inside a vector value.
        Arg::Bytes(b) => Ok(AsmValue::Vector(b.iter().map(|x| AsmValue::Number(true, U256::from(*x))).collect())),
        _ => Err(AsmError::new(AsmErrorKind::Operand, pos, "expected a constant value")),
    }
}
