//! Model → `.masm` text. Indices become names: modules by `use` alias,
//! structs, functions, fields and variants by name, locals as `l<i>`, type
//! parameters as `T<i>`, branch targets as labels `L<i>`, constants as
//! values. Imported struct and function handles are declared under their
//! `use` line so the text assembles without the dependencies at hand.

use crate::error::DisasmError;
use crate::value::AsmValue;
use movejit_format::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

type Res<T> = Result<T, DisasmError>;

fn bad(msg: impl Into<String>) -> DisasmError {
    DisasmError(msg.into())
}

fn get<'a, T>(table: &'a [T], idx: usize, what: &str) -> Res<&'a T> {
    table.get(idx).ok_or_else(|| bad(format!("{what} index {idx} out of bounds")))
}

/// Disassembles a module.
pub fn disassemble_module(m: &CompiledModule) -> Res<String> {
    Printer::new(m, false)?.run()
}

/// Disassembles a script (printed as `script` with one function `main`).
pub fn disassemble_script(s: &CompiledScript) -> Res<String> {
    let m = script_as_module(s)?;
    Printer::new(&m, true)?.run()
}

/// The name the script's pseudo module and function get while printing.
const SCRIPT_MODULE: &str = "<script>";

/// The script as a module with one function `main`.
fn script_as_module(s: &CompiledScript) -> Res<CompiledModule> {
    s.as_module(SCRIPT_MODULE).ok_or_else(|| bad("script table full"))
}

/// Names that a self-module struct cannot be written as without qualifying it.
fn is_reserved_type_name(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "bool", "u8", "u16", "u32", "u64", "u128", "u256", "i8", "i16", "i32", "i64", "i128", "i256", "address",
        "signer", "vector", "has", "mut", "phantom",
    ];
    RESERVED.contains(&name)
        || (name.len() > 1 && name.starts_with('T') && name[1..].bytes().all(|b| b.is_ascii_digit()))
}

pub(crate) fn abilities_str(a: AbilitySet) -> String {
    let mut parts = vec![];
    if a.has_copy() {
        parts.push("copy");
    }
    if a.has_drop() {
        parts.push("drop");
    }
    if a.has_store() {
        parts.push("store");
    }
    if a.has_key() {
        parts.push("key");
    }
    parts.join(" + ")
}

fn attribute_str(a: &FunctionAttribute) -> String {
    match a {
        FunctionAttribute::Persistent => "persistent".into(),
        FunctionAttribute::ModuleLock => "module_lock".into(),
        FunctionAttribute::Pack => "pack".into(),
        FunctionAttribute::Unpack => "unpack".into(),
        FunctionAttribute::PackVariant(i) => format!("pack_variant({i})"),
        FunctionAttribute::UnpackVariant(i) => format!("unpack_variant({i})"),
        FunctionAttribute::TestVariant(i) => format!("test_variant({i})"),
        FunctionAttribute::BorrowFieldImmutable(i) => format!("borrow({i})"),
        FunctionAttribute::BorrowFieldMutable(i) => format!("borrow_mut({i})"),
    }
}

/// `  // "text"` when `bytes` read as printable ASCII (a reading aid for
/// string constants and metadata keys; comments are ignored when parsing).
fn ascii_comment(bytes: &[u8]) -> String {
    if !bytes.is_empty() && bytes.iter().all(|b| (0x20..0x7f).contains(b) && *b != b'"' && *b != b'\\') {
        format!("  // \"{}\"", String::from_utf8_lossy(bytes))
    } else {
        String::new()
    }
}

fn local_name(i: usize) -> String {
    format!("l{i}")
}

fn type_param_name(i: usize) -> String {
    format!("T{i}")
}

struct Printer<'a> {
    m: &'a CompiledModule,
    is_script: bool,
    out: String,
    self_id: (AccountAddress, String),
    /// The prefix (`alias::`, or empty for the self module) per module handle.
    prefixes: Vec<String>,
}

impl<'a> Printer<'a> {
    fn new(m: &'a CompiledModule, is_script: bool) -> Res<Self> {
        let self_handle = get(&m.module_handles, m.self_module_handle_idx.idx(), "self module handle")?;
        let self_id = Self::module_id_of(m, self_handle)?;
        let mut used = BTreeSet::new();
        used.insert(self_id.1.clone());
        let mut prefixes = Vec::with_capacity(m.module_handles.len());
        let mut seen: HashMap<(AccountAddress, String), String> = HashMap::new();
        for h in &m.module_handles {
            let id = Self::module_id_of(m, h)?;
            if id == self_id {
                prefixes.push(String::new());
                continue;
            }
            if let Some(p) = seen.get(&id) {
                prefixes.push(p.clone());
                continue;
            }
            let mut alias = id.1.clone();
            while !used.insert(alias.clone()) {
                alias.push('_');
            }
            let prefix = format!("{alias}::");
            seen.insert(id, prefix.clone());
            prefixes.push(prefix);
        }
        Ok(Printer { m, is_script, out: String::new(), self_id, prefixes })
    }

    fn module_id_of(m: &CompiledModule, h: &ModuleHandle) -> Res<(AccountAddress, String)> {
        let a = *get(&m.address_identifiers, h.address.idx(), "address")?;
        let n = get(&m.identifiers, h.name.idx(), "identifier")?.clone();
        Ok((a, n))
    }

    fn ident(&self, i: IdentifierIndex) -> Res<&'a str> {
        get(&self.m.identifiers, i.idx(), "identifier").map(|s| s.as_str())
    }

    fn sig(&self, i: SignatureIndex) -> Res<&'a [SignatureToken]> {
        get(&self.m.signatures, i.idx(), "signature").map(|s| s.0.as_slice())
    }

    fn is_self(&self, mh: ModuleHandleIndex) -> Res<bool> {
        let h = get(&self.m.module_handles, mh.idx(), "module handle")?;
        Ok(Self::module_id_of(self.m, h)? == self.self_id)
    }

    fn prefix(&self, mh: ModuleHandleIndex) -> Res<&str> {
        get(&self.prefixes, mh.idx(), "module handle").map(|s| s.as_str())
    }

    // ---- names and types ------------------------------------------------------

    fn struct_name(&self, sh: StructHandleIndex) -> Res<String> {
        let h = get(&self.m.struct_handles, sh.idx(), "struct handle")?;
        let name = self.ident(h.name)?;
        if self.is_self(h.module)? {
            if is_reserved_type_name(name) {
                Ok(format!("{}::{}", self.self_id.1, name))
            } else {
                Ok(name.to_string())
            }
        } else {
            Ok(format!("{}{}", self.prefix(h.module)?, name))
        }
    }

    fn fun_name(&self, fh: FunctionHandleIndex) -> Res<String> {
        let h = get(&self.m.function_handles, fh.idx(), "function handle")?;
        Ok(format!("{}{}", self.prefix(h.module)?, self.ident(h.name)?))
    }

    fn ty(&self, t: &SignatureToken) -> Res<String> {
        use SignatureToken as T;
        Ok(match t {
            T::Bool => "bool".into(),
            T::U8 => "u8".into(),
            T::U16 => "u16".into(),
            T::U32 => "u32".into(),
            T::U64 => "u64".into(),
            T::U128 => "u128".into(),
            T::U256 => "u256".into(),
            T::I8 => "i8".into(),
            T::I16 => "i16".into(),
            T::I32 => "i32".into(),
            T::I64 => "i64".into(),
            T::I128 => "i128".into(),
            T::I256 => "i256".into(),
            T::Address => "address".into(),
            T::Signer => "signer".into(),
            T::Vector(e) => format!("vector<{}>", self.ty(e)?),
            T::Struct(sh) => self.struct_name(*sh)?,
            T::StructInstantiation(sh, args) => format!("{}{}", self.struct_name(*sh)?, self.ty_args(args)?),
            T::Reference(e) => format!("&{}", self.ty(e)?),
            T::MutableReference(e) => format!("&mut {}", self.ty(e)?),
            T::TypeParameter(i) => type_param_name(*i as usize),
            T::Function(params, results, abilities) => {
                let mut s = String::from("|");
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    // `||` would read as an empty parameter list: parenthesize.
                    if matches!(p, T::Function(..)) {
                        let _ = write!(s, "({})", self.ty(p)?);
                    } else {
                        s.push_str(&self.ty(p)?);
                    }
                }
                s.push('|');
                match results.as_slice() {
                    [] => {}
                    [r] if !matches!(r, T::Function(..)) => s.push_str(&self.ty(r)?),
                    rs => {
                        s.push('(');
                        s.push_str(&self.ty_list(rs)?);
                        s.push(')');
                    }
                }
                if *abilities != AbilitySet::EMPTY {
                    let _ = write!(s, " has {}", abilities_str(*abilities));
                }
                s
            }
        })
    }

    fn ty_list(&self, ts: &[SignatureToken]) -> Res<String> {
        Ok(ts.iter().map(|t| self.ty(t)).collect::<Res<Vec<_>>>()?.join(", "))
    }

    fn ty_args(&self, ts: &[SignatureToken]) -> Res<String> {
        Ok(format!("<{}>", self.ty_list(ts)?))
    }

    fn sig_args(&self, i: SignatureIndex) -> Res<String> {
        self.ty_args(self.sig(i)?)
    }

    fn results(&self, rs: &[SignatureToken]) -> Res<String> {
        Ok(match rs {
            [] => String::new(),
            [r] if !matches!(r, SignatureToken::Function(..)) => format!(": {}", self.ty(r)?),
            rs => format!(": ({})", self.ty_list(rs)?),
        })
    }

    fn type_params(&self, params: impl Iterator<Item = (AbilitySet, bool)>) -> String {
        let parts: Vec<String> = params
            .enumerate()
            .map(|(i, (c, phantom))| {
                let mut s = String::new();
                if phantom {
                    s.push_str("phantom ");
                }
                s.push_str(&type_param_name(i));
                if c != AbilitySet::EMPTY {
                    let _ = write!(s, ": {}", abilities_str(c));
                }
                s
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("<{}>", parts.join(", "))
        }
    }

    // ---- the unit ---------------------------------------------------------------

    fn run(mut self) -> Res<String> {
        let m = self.m;
        let _ = writeln!(self.out, "version {}", m.version);
        if m.version >= 7 {
            let f = match m.flavour {
                Flavour::Sui => "sui",
                Flavour::Aptos | Flavour::Common => "aptos",
            };
            let _ = writeln!(self.out, "flavour {f}");
        }
        if self.is_script {
            self.out.push_str("script\n");
        } else {
            let _ = writeln!(self.out, "module {}::{}", self.self_id.0.to_hex_short(), self.self_id.1);
        }
        self.uses()?;
        for f in &m.friend_decls {
            let (a, n) = Self::module_id_of(m, f)?;
            let _ = writeln!(self.out, "friend {}::{}", a.to_hex_short(), n);
        }
        for md in &m.metadata {
            let _ = writeln!(
                self.out,
                "metadata x\"{}\", x\"{}\"{}",
                hex::encode(&md.key),
                hex::encode(&md.value),
                ascii_comment(&md.key)
            );
        }
        self.unused_constants()?;
        for sd in &m.struct_defs {
            self.out.push('\n');
            self.struct_def(sd)?;
        }
        for ed in &m.enum_defs {
            self.out.push('\n');
            self.datatype_header("enum", ed.enum_handle)?;
            self.variants(&ed.variants)?;
        }
        for (i, fd) in m.function_defs.iter().enumerate() {
            self.out.push('\n');
            if !self.is_script {
                let _ = writeln!(self.out, "// Function definition at index {i}");
            }
            self.fun_def(fd)?;
        }
        Ok(self.out)
    }

    fn uses(&mut self) -> Res<()> {
        let m = self.m;
        let mut done = BTreeSet::new();
        for (i, h) in m.module_handles.iter().enumerate() {
            let id = Self::module_id_of(m, h)?;
            if id == self.self_id || !done.insert(id.clone()) {
                continue;
            }
            let alias = self.prefixes[i].trim_end_matches("::").to_string();
            let _ = write!(self.out, "use {}::{}", id.0.to_hex_short(), id.1);
            if alias != id.1 {
                let _ = write!(self.out, " as {alias}");
            }
            self.out.push('\n');
            let structs: Vec<&StructHandle> = m.struct_handles.iter().collect();
            let funs: Vec<&FunctionHandle> = m.function_handles.iter().collect();
            self.handle_block(&id, &structs, &funs)?;
        }
        // Handles of this module that no definition uses (modules the
        // verifier rejects have them): declared under a `use` of itself.
        let defined_structs: BTreeSet<usize> = m
            .struct_defs
            .iter()
            .map(|d| d.struct_handle.idx())
            .chain(m.enum_defs.iter().map(|d| d.enum_handle.idx()))
            .collect();
        let defined_funs: BTreeSet<usize> = m.function_defs.iter().map(|d| d.function.idx()).collect();
        let structs: Vec<&StructHandle> =
            m.struct_handles.iter().enumerate().filter(|(i, _)| !defined_structs.contains(i)).map(|(_, h)| h).collect();
        let funs: Vec<&FunctionHandle> =
            m.function_handles.iter().enumerate().filter(|(i, _)| !defined_funs.contains(i)).map(|(_, h)| h).collect();
        let before = self.out.len();
        let _ = writeln!(self.out, "use {}::{}", self.self_id.0.to_hex_short(), self.self_id.1);
        let header_len = self.out.len();
        let self_id = self.self_id.clone();
        self.handle_block(&self_id, &structs, &funs)?;
        if self.out.len() == header_len {
            self.out.truncate(before);
        }
        Ok(())
    }

    /// The indented handle declarations of module `id` among the given handles.
    fn handle_block(
        &mut self,
        id: &(AccountAddress, String),
        structs: &[&StructHandle],
        funs: &[&FunctionHandle],
    ) -> Res<()> {
        let m = self.m;
        for sh in structs {
            let owner = get(&m.module_handles, sh.module.idx(), "module handle")?;
            if Self::module_id_of(m, owner)? != *id {
                continue;
            }
            let params = self.type_params(sh.type_parameters.iter().map(|p| (p.constraints, p.is_phantom)));
            let _ = write!(self.out, "    struct {}{}", self.ident(sh.name)?, params);
            if sh.abilities != AbilitySet::EMPTY {
                let _ = write!(self.out, " has {}", abilities_str(sh.abilities));
            }
            self.out.push('\n');
        }
        for fh in funs {
            let owner = get(&m.module_handles, fh.module.idx(), "module handle")?;
            if Self::module_id_of(m, owner)? != *id {
                continue;
            }
            self.out.push_str("    ");
            self.fun_header(fh, None)?;
            self.out.push('\n');
        }
        Ok(())
    }

    fn unused_constants(&mut self) -> Res<()> {
        let mut used = BTreeSet::new();
        let units = self.m.function_defs.iter().filter_map(|f| f.code.as_ref());
        for unit in units {
            for bc in &unit.code {
                if let Bytecode::LdConst(c) = bc {
                    used.insert(c.idx());
                }
            }
        }
        for (i, c) in self.m.constant_pool.iter().enumerate() {
            if !used.contains(&i) {
                let line = format!("const <{}> {}{}", self.ty(&c.type_)?, self.const_value(c), self.const_comment(c));
                self.out.push_str(&line);
                self.out.push('\n');
            }
        }
        Ok(())
    }

    /// The text of a `vector<u8>` constant, as a comment.
    fn const_comment(&self, c: &Constant) -> String {
        if c.type_ != SignatureToken::Vector(Box::new(SignatureToken::U8)) {
            return String::new();
        }
        match AsmValue::from_bcs(&c.type_, &c.data) {
            Some(AsmValue::Vector(elems)) => {
                let bytes: Vec<u8> = elems
                    .iter()
                    .filter_map(|e| match e {
                        AsmValue::Number(true, n) => u8::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect();
                if bytes.len() == elems.len() {
                    ascii_comment(&bytes)
                } else {
                    String::new()
                }
            }
            _ => String::new(),
        }
    }

    fn const_value(&self, c: &Constant) -> String {
        match AsmValue::from_bcs(&c.type_, &c.data) {
            Some(v) => v.to_string(),
            None => format!("x\"{}\"", hex::encode(&c.data)),
        }
    }

    fn datatype_header(&mut self, keyword: &str, sh: StructHandleIndex) -> Res<()> {
        let h = get(&self.m.struct_handles, sh.idx(), "struct handle")?;
        let params = self.type_params(h.type_parameters.iter().map(|p| (p.constraints, p.is_phantom)));
        let _ = write!(self.out, "{keyword} {}{}", self.ident(h.name)?, params);
        if h.abilities != AbilitySet::EMPTY {
            let _ = write!(self.out, " has {}", abilities_str(h.abilities));
        }
        self.out.push('\n');
        Ok(())
    }

    fn struct_def(&mut self, sd: &StructDefinition) -> Res<()> {
        match &sd.field_information {
            StructFieldInformation::Native => self.datatype_header("native struct", sd.struct_handle),
            StructFieldInformation::Declared(fields) => {
                self.datatype_header("struct", sd.struct_handle)?;
                self.fields("  ", fields)
            }
            StructFieldInformation::DeclaredVariants(vs) => {
                self.datatype_header("enum", sd.struct_handle)?;
                self.variants(vs)
            }
        }
    }

    fn variants(&mut self, vs: &[VariantDefinition]) -> Res<()> {
        for v in vs {
            let _ = writeln!(self.out, "  {}", self.ident(v.name)?);
            self.fields("    ", &v.fields)?;
        }
        Ok(())
    }

    fn fields(&mut self, indent: &str, fields: &[FieldDefinition]) -> Res<()> {
        for f in fields {
            let line = format!("{indent}{}: {}\n", self.ident(f.name)?, self.ty(&f.signature)?);
            self.out.push_str(&line);
        }
        Ok(())
    }

    // ---- functions --------------------------------------------------------------

    /// `[#[attrs]] [entry] [vis] [native] fun name<..>(..): .. [acquires ..] [access [..]]`
    fn fun_header(&mut self, fh: &FunctionHandle, def: Option<&FunctionDefinition>) -> Res<()> {
        let mut s = String::new();
        if !fh.attributes.is_empty() {
            let attrs: Vec<String> = fh.attributes.iter().map(attribute_str).collect();
            let _ = write!(s, "#[{}] ", attrs.join(", "));
        }
        if let Some(d) = def {
            if d.is_entry {
                s.push_str("entry ");
            }
            match d.visibility {
                Visibility::Private => {}
                Visibility::Public => s.push_str("public "),
                Visibility::Friend => s.push_str("friend "),
            }
            if d.is_native() {
                s.push_str("native ");
            }
        }
        let _ = write!(
            s,
            "fun {}{}",
            self.ident(fh.name)?,
            self.type_params(fh.type_parameters.iter().map(|c| (*c, false)))
        );
        let params: Vec<String> = self
            .sig(fh.parameters)?
            .iter()
            .enumerate()
            .map(|(i, t)| Ok(format!("{}: {}", local_name(i), self.ty(t)?)))
            .collect::<Res<_>>()?;
        let _ = write!(s, "({})", params.join(", "));
        s.push_str(&self.results(self.sig(fh.return_)?)?);
        if let Some(d) = def {
            if !d.acquires_global_resources.is_empty() {
                let names: Vec<String> = d
                    .acquires_global_resources
                    .iter()
                    .map(|sd| {
                        let def = get(&self.m.struct_defs, sd.idx(), "struct definition")?;
                        let h = get(&self.m.struct_handles, def.struct_handle.idx(), "struct handle")?;
                        Ok(self.ident(h.name)?.to_string())
                    })
                    .collect::<Res<_>>()?;
                let _ = write!(s, " acquires {}", names.join(", "));
            }
        }
        if let Some(specs) = &fh.access_specifiers {
            let specs: Vec<String> = specs.iter().map(|a| self.access_spec(a)).collect::<Res<_>>()?;
            let _ = write!(s, " access [{}]", specs.join(", "));
        }
        self.out.push_str(&s);
        Ok(())
    }

    fn access_spec(&self, a: &AccessSpecifier) -> Res<String> {
        let kind = match a.kind {
            AccessKind::Reads => "reads",
            AccessKind::Writes => "writes",
            AccessKind::Acquires => "acquires",
        };
        let resource = match &a.resource {
            ResourceSpecifier::Any => "*".to_string(),
            ResourceSpecifier::DeclaredAtAddress(ai) => {
                format!("{}::*", get(&self.m.address_identifiers, ai.idx(), "address")?.to_hex_short())
            }
            ResourceSpecifier::DeclaredInModule(mh) => {
                let h = get(&self.m.module_handles, mh.idx(), "module handle")?;
                let (addr, name) = Self::module_id_of(self.m, h)?;
                format!("{}::{}::*", addr.to_hex_short(), name)
            }
            ResourceSpecifier::Resource(sh) => self.struct_name(*sh)?,
            ResourceSpecifier::ResourceInstantiation(sh, si) => {
                format!("{}{}", self.struct_name(*sh)?, self.sig_args(*si)?)
            }
        };
        let address = match &a.address {
            AddressSpecifier::Any => "*".to_string(),
            AddressSpecifier::Literal(ai) => get(&self.m.address_identifiers, ai.idx(), "address")?.to_hex_short(),
            AddressSpecifier::Parameter(l, None) => local_name(*l as usize),
            AddressSpecifier::Parameter(l, Some(fi)) => {
                let inst = get(&self.m.function_instantiations, fi.idx(), "function instantiation")?;
                format!(
                    "{}{}({})",
                    self.fun_name(inst.handle)?,
                    self.sig_args(inst.type_parameters)?,
                    local_name(*l as usize)
                )
            }
        };
        Ok(format!("{}{kind} {resource}({address})", if a.negated { "!" } else { "" }))
    }

    fn fun_def(&mut self, fd: &FunctionDefinition) -> Res<()> {
        let fh = get(&self.m.function_handles, fd.function.idx(), "function handle")?;
        self.fun_header(fh, Some(fd))?;
        self.out.push('\n');
        let Some(unit) = &fd.code else {
            return Ok(());
        };
        let n_params = self.sig(fh.parameters)?.len();
        for (i, t) in self.sig(unit.locals)?.iter().enumerate() {
            let line = format!("    local {}: {}\n", local_name(n_params + i), self.ty(t)?);
            self.out.push_str(&line);
        }
        // Labels for every branch target and jump-table entry, in code order.
        let mut targets = BTreeSet::new();
        for bc in &unit.code {
            if let Some(t) = bc.branch_target() {
                targets.insert(t);
            }
        }
        for jt in &unit.jump_tables {
            targets.extend(jt.jump_table.iter().copied());
        }
        let labels: BTreeMap<CodeOffset, String> =
            targets.into_iter().enumerate().map(|(i, off)| (off, format!("L{i}"))).collect();
        if let Some((&off, _)) = labels.iter().next_back() {
            if off as usize >= unit.code.len() {
                return Err(bad(format!("branch target {off} past the end of the code")));
            }
        }
        for (off, bc) in unit.code.iter().enumerate() {
            let text = self.instr(bc, unit, &labels)?;
            match labels.get(&(off as CodeOffset)) {
                Some(l) => {
                    let _ = writeln!(self.out, "{:<4}{text}", format!("{l}:"));
                }
                None => {
                    let _ = writeln!(self.out, "    {text}");
                }
            }
        }
        Ok(())
    }

    fn struct_def_name(&self, sd: StructDefinitionIndex) -> Res<String> {
        let def = get(&self.m.struct_defs, sd.idx(), "struct definition")?;
        self.struct_name(def.struct_handle)
    }

    fn struct_inst(&self, si: StructDefInstantiationIndex) -> Res<String> {
        let inst = get(&self.m.struct_def_instantiations, si.idx(), "struct instantiation")?;
        Ok(format!("{}{}", self.struct_def_name(inst.def)?, self.sig_args(inst.type_parameters)?))
    }

    fn field(&self, fh: FieldHandleIndex, args: Option<SignatureIndex>) -> Res<String> {
        let h = get(&self.m.field_handles, fh.idx(), "field handle")?;
        let def = get(&self.m.struct_defs, h.owner.idx(), "struct definition")?;
        let StructFieldInformation::Declared(fields) = &def.field_information else {
            return Err(bad("field handle on a struct without fields"));
        };
        let f = get(fields, h.field as usize, "field")?;
        let args = match args {
            Some(si) => self.sig_args(si)?,
            None => String::new(),
        };
        Ok(format!("{}{}, {}", self.struct_def_name(h.owner)?, args, self.ident(f.name)?))
    }

    fn aptos_variants(&self, sd: StructDefinitionIndex) -> Res<&'a [VariantDefinition]> {
        let def = get(&self.m.struct_defs, sd.idx(), "struct definition")?;
        match &def.field_information {
            StructFieldInformation::DeclaredVariants(vs) => Ok(vs),
            _ => Err(bad("variant operation on a struct without variants")),
        }
    }

    fn aptos_variant(&self, vh: StructVariantHandleIndex, args: Option<SignatureIndex>) -> Res<String> {
        let h = get(&self.m.struct_variant_handles, vh.idx(), "variant handle")?;
        let v = get(self.aptos_variants(h.struct_index)?, h.variant as usize, "variant")?;
        let args = match args {
            Some(si) => self.sig_args(si)?,
            None => String::new(),
        };
        Ok(format!("{}{}, {}", self.struct_def_name(h.struct_index)?, args, self.ident(v.name)?))
    }

    fn variant_field(&self, vf: VariantFieldHandleIndex, args: Option<SignatureIndex>) -> Res<String> {
        let h = get(&self.m.variant_field_handles, vf.idx(), "variant field handle")?;
        let vs = self.aptos_variants(h.struct_index)?;
        let mut s = self.struct_def_name(h.struct_index)?;
        if let Some(si) = args {
            s.push_str(&self.sig_args(si)?);
        }
        for v in &h.variants {
            let vd = get(vs, *v as usize, "variant")?;
            let f = get(&vd.fields, h.field as usize, "field")?;
            let _ = write!(s, ", {}::{}", self.ident(vd.name)?, self.ident(f.name)?);
        }
        Ok(s)
    }

    fn enum_def_name(&self, ed: EnumDefinitionIndex) -> Res<(String, &'a [VariantDefinition])> {
        let def = get(&self.m.enum_defs, ed.idx(), "enum definition")?;
        Ok((self.struct_name(def.enum_handle)?, &def.variants))
    }

    fn sui_variant(&self, vh: VariantHandleIndex) -> Res<String> {
        let h = get(&self.m.variant_handles, vh.idx(), "variant handle")?;
        let (name, vs) = self.enum_def_name(h.enum_def)?;
        let v = get(vs, h.variant as usize, "variant")?;
        Ok(format!("{name}, {}", self.ident(v.name)?))
    }

    fn sui_variant_inst(&self, vi: VariantInstantiationHandleIndex) -> Res<String> {
        let h = get(&self.m.variant_instantiation_handles, vi.idx(), "variant instantiation handle")?;
        let inst = get(&self.m.enum_def_instantiations, h.enum_def.idx(), "enum instantiation")?;
        let (name, vs) = self.enum_def_name(inst.def)?;
        let v = get(vs, h.variant as usize, "variant")?;
        Ok(format!("{name}{}, {}", self.sig_args(inst.type_parameters)?, self.ident(v.name)?))
    }

    fn fun_inst(&self, fi: FunctionInstantiationIndex) -> Res<String> {
        let inst = get(&self.m.function_instantiations, fi.idx(), "function instantiation")?;
        Ok(format!("{}{}", self.fun_name(inst.handle)?, self.sig_args(inst.type_parameters)?))
    }

    fn instr(&self, bc: &Bytecode, unit: &CodeUnit, labels: &BTreeMap<CodeOffset, String>) -> Res<String> {
        use Bytecode as B;
        let op = bc.opcode().mnemonic();
        let label = |off: &CodeOffset| labels.get(off).cloned().ok_or_else(|| bad("branch without label"));
        let operand: String = match bc {
            B::BrTrue(o) | B::BrFalse(o) | B::Branch(o) => label(o)?,
            B::LdU8(v) => v.to_string(),
            B::LdU16(v) => v.to_string(),
            B::LdU32(v) => v.to_string(),
            B::LdU64(v) => v.to_string(),
            B::LdU128(v) => v.to_string(),
            B::LdU256(v) => v.to_string(),
            B::LdI8(v) => v.to_string(),
            B::LdI16(v) => v.to_string(),
            B::LdI32(v) => v.to_string(),
            B::LdI64(v) => v.to_string(),
            B::LdI128(v) => v.to_string(),
            B::LdI256(v) => v.to_string(),
            B::LdConst(ci) => {
                let c = get(&self.m.constant_pool, ci.idx(), "constant")?;
                format!("<{}> {}{}", self.ty(&c.type_)?, self.const_value(c), self.const_comment(c))
            }
            B::CopyLoc(l) | B::MoveLoc(l) | B::StLoc(l) | B::MutBorrowLoc(l) | B::ImmBorrowLoc(l) => {
                local_name(*l as usize)
            }
            B::MutBorrowField(fh) | B::ImmBorrowField(fh) => self.field(*fh, None)?,
            B::MutBorrowFieldGeneric(fi) | B::ImmBorrowFieldGeneric(fi) => {
                let inst = get(&self.m.field_instantiations, fi.idx(), "field instantiation")?;
                self.field(inst.handle, Some(inst.type_parameters))?
            }
            B::Call(fh) => self.fun_name(*fh)?,
            B::CallGeneric(fi) => self.fun_inst(*fi)?,
            B::Pack(sd)
            | B::Unpack(sd)
            | B::Exists(sd)
            | B::MutBorrowGlobal(sd)
            | B::ImmBorrowGlobal(sd)
            | B::MoveFrom(sd)
            | B::MoveTo(sd) => self.struct_def_name(*sd)?,
            B::PackGeneric(si)
            | B::UnpackGeneric(si)
            | B::ExistsGeneric(si)
            | B::MutBorrowGlobalGeneric(si)
            | B::ImmBorrowGlobalGeneric(si)
            | B::MoveFromGeneric(si)
            | B::MoveToGeneric(si) => self.struct_inst(*si)?,
            B::VecPack(si, n) | B::VecUnpack(si, n) => format!("{}, {n}", self.sig_args(*si)?),
            B::VecLen(si)
            | B::VecImmBorrow(si)
            | B::VecMutBorrow(si)
            | B::VecPushBack(si)
            | B::VecPopBack(si)
            | B::VecSwap(si)
            | B::CallClosure(si) => self.sig_args(*si)?,
            B::ImmBorrowVariantField(vf) | B::MutBorrowVariantField(vf) => self.variant_field(*vf, None)?,
            B::ImmBorrowVariantFieldGeneric(vi) | B::MutBorrowVariantFieldGeneric(vi) => {
                let inst = get(&self.m.variant_field_instantiations, vi.idx(), "variant field instantiation")?;
                self.variant_field(inst.handle, Some(inst.type_parameters))?
            }
            B::PackVariant(vh) | B::UnpackVariant(vh) | B::TestVariant(vh) => self.aptos_variant(*vh, None)?,
            B::PackVariantGeneric(vi) | B::UnpackVariantGeneric(vi) | B::TestVariantGeneric(vi) => {
                let inst = get(&self.m.struct_variant_instantiations, vi.idx(), "variant instantiation")?;
                self.aptos_variant(inst.handle, Some(inst.type_parameters))?
            }
            B::PackClosure(fh, mask) => format!("{}, {}", self.fun_name(*fh)?, mask.0),
            B::PackClosureGeneric(fi, mask) => format!("{}, {}", self.fun_inst(*fi)?, mask.0),
            B::SuiPackVariant(vh)
            | B::SuiUnpackVariant(vh)
            | B::SuiUnpackVariantImmRef(vh)
            | B::SuiUnpackVariantMutRef(vh) => self.sui_variant(*vh)?,
            B::SuiPackVariantGeneric(vi)
            | B::SuiUnpackVariantGeneric(vi)
            | B::SuiUnpackVariantGenericImmRef(vi)
            | B::SuiUnpackVariantGenericMutRef(vi) => self.sui_variant_inst(*vi)?,
            B::VariantSwitch(ji) => {
                let jt = get(&unit.jump_tables, ji.idx(), "jump table")?;
                let (name, _) = self.enum_def_name(jt.head_enum)?;
                let targets: Vec<String> = jt.jump_table.iter().map(label).collect::<Res<_>>()?;
                format!("{name}, [{}]", targets.join(", "))
            }
            _ => String::new(),
        };
        Ok(if operand.is_empty() { op.to_string() } else { format!("{op} {operand}") })
    }
}
