//! Syntax tree → model. Names are resolved against the unit's own
//! declarations (structs, enums, functions) and the handles declared under
//! its `use` lines; every table entry is interned so equal entries share an
//! index.

use crate::ast::*;
use crate::error::{AsmError, AsmErrorKind, AsmResult, Pos};
use crate::parser::parse;
use movejit_format::*;
use std::collections::HashMap;
use std::hash::Hash;

/// What a `.masm` unit assembles to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // one value per assembled file
pub enum Assembled {
    Module(CompiledModule),
    Script(CompiledScript),
}

mod code;
mod import;

/// Assembler settings that the text does not fix itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsmOptions<'d> {
    /// The bytecode version when the text has no `version` directive.
    pub default_version: Option<u32>,
    /// Compiled dependencies: a struct or function of one of them that the
    /// text uses without declaring it under its `use` line is imported from
    /// here (as move-asm does).
    pub deps: &'d [CompiledModule],
}

/// Assembles `.masm` text.
pub fn assemble(src: &str) -> AsmResult<Assembled> {
    assemble_with(src, AsmOptions::default())
}

/// Assembles `.masm` text with `options`.
pub fn assemble_with(src: &str, options: AsmOptions<'_>) -> AsmResult<Assembled> {
    let unit = parse(src)?;
    Builder::new(&unit, options)?.build()
}

fn err(kind: AsmErrorKind, pos: Pos, msg: impl Into<String>) -> AsmError {
    AsmError::new(kind, pos, msg)
}

/// Interns `key` in `table` (through `map`), making the entry with `make`.
fn intern<K: Hash + Eq, V>(
    map: &mut HashMap<K, u16>,
    table: &mut Vec<V>,
    key: K,
    pos: Pos,
    what: &str,
    make: impl FnOnce() -> V,
) -> AsmResult<u16> {
    if let Some(i) = map.get(&key) {
        return Ok(*i);
    }
    let i = push(table, pos, what, make())?;
    map.insert(key, i);
    Ok(i)
}

fn push<V>(table: &mut Vec<V>, pos: Pos, what: &str, v: V) -> AsmResult<u16> {
    let i = u16::try_from(table.len())
        .map_err(|_| err(AsmErrorKind::Limit, pos, format!("too many {what} entries (max 65535)")))?;
    table.push(v);
    Ok(i)
}

#[derive(Default)]
struct Maps {
    idents: HashMap<String, u16>,
    addrs: HashMap<AccountAddress, u16>,
    modules: HashMap<ModuleName, u16>,
    struct_handles: HashMap<(ModuleName, String), u16>,
    fun_handles: HashMap<(ModuleName, String), u16>,
    sigs: HashMap<Vec<SignatureToken>, u16>,
    consts: HashMap<(SignatureToken, Vec<u8>), u16>,
    field_handles: HashMap<(u16, u16), u16>,
    field_insts: HashMap<(u16, u16), u16>,
    struct_insts: HashMap<(u16, u16), u16>,
    fun_insts: HashMap<(u16, u16), u16>,
    variant_handles: HashMap<(u16, u16), u16>,
    variant_insts: HashMap<(u16, u16), u16>,
    variant_fields: HashMap<(u16, Vec<u16>, u16), u16>,
    variant_field_insts: HashMap<(u16, u16), u16>,
    enum_insts: HashMap<(u16, u16), u16>,
    sui_variant_handles: HashMap<(u16, u16), u16>,
    sui_variant_insts: HashMap<(u16, u16), u16>,
}

/// A self-module datatype definition: where it lives.
#[derive(Clone, Copy)]
enum DefRef {
    Struct(StructDefinitionIndex),
    /// Sui enum table.
    Enum(EnumDefinitionIndex),
}

struct Builder<'u> {
    unit: &'u Unit,
    deps: &'u [CompiledModule],
    m: CompiledModule,
    maps: Maps,
    self_module: Option<ModuleName>,
    aliases: HashMap<String, ModuleName>,
    defs: HashMap<String, DefRef>,
    /// The definition of each declared datatype, in declaration order.
    def_order: Vec<DefRef>,
    fun_defs: HashMap<String, usize>,
    /// Whether the version came from the text or the options (else it is
    /// chosen after assembling).
    version_fixed: bool,
    // Per declaration context.
    type_params: HashMap<String, u16>,
    locals: HashMap<String, u8>,
    // Script parts.
    script_main: Option<(Vec<AbilitySet>, SignatureIndex, Option<Vec<AccessSpecifier>>)>,
}

impl<'u> Builder<'u> {
    fn new(unit: &'u Unit, options: AsmOptions<'u>) -> AsmResult<Self> {
        let flavour = match &unit.flavour {
            None => Flavour::Aptos,
            Some((pos, f)) => match f.as_str() {
                "aptos" | "common" => Flavour::Aptos,
                "sui" => Flavour::Sui,
                _ => return Err(err(AsmErrorKind::Syntax, *pos, format!("unknown flavour `{f}` (aptos or sui)"))),
            },
        };
        let (version, version_fixed, vpos) = match (unit.version, options.default_version) {
            (Some((pos, v)), _) => (v, true, pos),
            (None, Some(v)) => (v, true, unit.header_pos),
            (None, None) => (if flavour.is_sui() { 7 } else { 10 }, false, unit.header_pos),
        };
        let max = if flavour.is_sui() { 7 } else { 10 };
        if !(5..=max).contains(&version) {
            return Err(err(
                AsmErrorKind::Unsupported,
                vpos,
                format!("bytecode version {version} not supported (5..={max})"),
            ));
        }
        let flavour = if version <= 6 { Flavour::Common } else { flavour };
        let m = CompiledModule { version, flavour, ..Default::default() };
        Ok(Builder {
            unit,
            deps: options.deps,
            m,
            maps: Maps::default(),
            self_module: None,
            aliases: HashMap::new(),
            defs: HashMap::new(),
            def_order: Vec::new(),
            fun_defs: HashMap::new(),
            version_fixed,
            type_params: HashMap::new(),
            locals: HashMap::new(),
            script_main: None,
        })
    }

    fn is_sui(&self) -> bool {
        self.m.flavour.is_sui()
    }

    // ---- interning ------------------------------------------------------------

    fn ident(&mut self, s: &str, pos: Pos) -> AsmResult<IdentifierIndex> {
        intern(&mut self.maps.idents, &mut self.m.identifiers, s.to_string(), pos, "identifier", || s.to_string())
            .map(IdentifierIndex)
    }

    fn address(&mut self, a: AccountAddress, pos: Pos) -> AsmResult<AddressIdentifierIndex> {
        intern(&mut self.maps.addrs, &mut self.m.address_identifiers, a, pos, "address", || a)
            .map(AddressIdentifierIndex)
    }

    fn module_handle_value(&mut self, mn: &ModuleName, pos: Pos) -> AsmResult<ModuleHandle> {
        let address = self.address(mn.address, pos)?;
        let name = self.ident(&mn.name, pos)?;
        Ok(ModuleHandle { address, name })
    }

    fn module(&mut self, mn: &ModuleName, pos: Pos) -> AsmResult<ModuleHandleIndex> {
        if let Some(i) = self.maps.modules.get(mn) {
            return Ok(ModuleHandleIndex(*i));
        }
        let h = self.module_handle_value(mn, pos)?;
        intern(&mut self.maps.modules, &mut self.m.module_handles, mn.clone(), pos, "module handle", || h)
            .map(ModuleHandleIndex)
    }

    fn signature(&mut self, tys: Vec<SignatureToken>, pos: Pos) -> AsmResult<SignatureIndex> {
        let v = tys.clone();
        intern(&mut self.maps.sigs, &mut self.m.signatures, tys, pos, "signature", || Signature(v)).map(SignatureIndex)
    }

    // ---- the unit -------------------------------------------------------------

    fn build(mut self) -> AsmResult<Assembled> {
        let unit = self.unit;
        let is_script = matches!(unit.kind, UnitKind::Script);
        if let UnitKind::Module(mn) = &unit.kind {
            self.self_module = Some(mn.clone());
            self.module(mn, unit.header_pos)?;
            self.m.self_module_handle_idx = ModuleHandleIndex(0);
        }
        for u in &unit.uses {
            if self.aliases.insert(u.alias.clone(), u.module.clone()).is_some() {
                return Err(err(AsmErrorKind::Duplicate, u.pos, format!("duplicate module alias `{}`", u.alias)));
            }
            self.module(&u.module, u.pos)?;
        }
        if is_script {
            if let Some((pos, _)) = unit.friends.first() {
                return Err(err(AsmErrorKind::Unsupported, *pos, "a script has no friends"));
            }
            if let Some(s) = unit.structs.first() {
                return Err(err(AsmErrorKind::Unsupported, s.pos, "a script cannot define structs"));
            }
            if unit.functions.len() != 1 {
                return Err(err(AsmErrorKind::Unsupported, unit.header_pos, "a script has exactly one function"));
            }
        }
        for (pos, f) in &unit.friends {
            let h = self.module_handle_value(f, *pos)?;
            push(&mut self.m.friend_decls, *pos, "friend", h)?;
        }
        for (key, value) in &unit.metadata {
            self.m.metadata.push(Metadata { key: key.clone(), value: value.clone() });
        }
        // Declare datatypes (self, then imported) before any type is built.
        for s in &unit.structs {
            self.declare_datatype(s)?;
        }
        for u in &unit.uses {
            for s in &u.structs {
                self.declare_struct_handle(&u.module, s)?;
            }
        }
        // Imported functions first: access specifiers of this module's
        // functions may name them.
        // Other modules' functions first: access specifiers of this module's
        // functions may name them. Handles of this module without a
        // definition come last, so names resolve to definitions first.
        let is_self = |m: &ModuleName| Some(m) == self.self_module.as_ref();
        let (own, imported): (Vec<&Use>, Vec<&Use>) = unit.uses.iter().partition(|u| is_self(&u.module));
        for u in &imported {
            for f in &u.functions {
                self.declare_imported_fun(&u.module, f)?;
            }
        }
        for f in &unit.functions {
            self.declare_fun(f, is_script)?;
        }
        for u in &own {
            for f in &u.functions {
                self.declare_imported_fun(&u.module, f)?;
            }
        }
        for (i, s) in unit.structs.iter().enumerate() {
            self.define_datatype(i, s)?;
        }
        self.type_params.clear();
        for (pos, ty, value) in &unit.constants {
            let ty = self.build_type(ty)?;
            self.constant(ty, value, *pos)?;
        }
        for (i, f) in unit.functions.iter().enumerate() {
            self.define_fun(i, f)?;
        }
        if !self.version_fixed {
            self.m.version = self.lowest_default_version();
        }
        self.check_types_for_version()?;
        if is_script {
            let Some((type_parameters, parameters, access_specifiers)) = self.script_main.take() else {
                return Err(err(AsmErrorKind::Unsupported, unit.header_pos, "a script needs a function"));
            };
            let code = self.m.function_defs.pop().and_then(|d| d.code).unwrap_or_default();
            let m = self.m;
            return Ok(Assembled::Script(CompiledScript {
                version: m.version,
                flavour: m.flavour,
                module_handles: m.module_handles,
                struct_handles: m.struct_handles,
                function_handles: m.function_handles,
                function_instantiations: m.function_instantiations,
                signatures: m.signatures,
                identifiers: m.identifiers,
                address_identifiers: m.address_identifiers,
                constant_pool: m.constant_pool,
                metadata: m.metadata,
                code,
                type_parameters,
                parameters,
                access_specifiers,
            }));
        }
        Ok(Assembled::Module(self.m))
    }

    /// Without a `version` directive: Sui 7; Aptos 9, or 10 when the unit
    /// uses what only v10 has.
    fn lowest_default_version(&self) -> u32 {
        if self.is_sui() {
            return 7;
        }
        let needs_10 = self
            .m
            .function_defs
            .iter()
            .filter_map(|d| d.code.as_ref())
            .any(|c| c.code.iter().any(|b| b.opcode().since_version() >= 10))
            || self.m.function_handles.iter().any(|h| {
                h.attributes.iter().any(|a| !matches!(a, FunctionAttribute::Persistent | FunctionAttribute::ModuleLock))
            });
        if needs_10 {
            10
        } else {
            9
        }
    }

    /// Types the chosen version or flavour lacks (signed integers: Aptos v9;
    /// function types: Aptos v8).
    fn check_types_for_version(&self) -> AsmResult<()> {
        let pos = self.unit.header_pos;
        let (signed_ok, fn_ok) =
            if self.is_sui() { (false, false) } else { (self.m.version >= 9, self.m.version >= 8) };
        let mut all: Vec<&SignatureToken> = vec![];
        for s in &self.m.signatures {
            all.extend(s.0.iter());
        }
        for c in &self.m.constant_pool {
            all.push(&c.type_);
        }
        for d in &self.m.struct_defs {
            match &d.field_information {
                StructFieldInformation::Declared(fs) => all.extend(fs.iter().map(|f| &f.signature)),
                StructFieldInformation::DeclaredVariants(vs) => {
                    all.extend(vs.iter().flat_map(|v| v.fields.iter().map(|f| &f.signature)))
                }
                StructFieldInformation::Native => {}
            }
        }
        for d in &self.m.enum_defs {
            all.extend(d.variants.iter().flat_map(|v| v.fields.iter().map(|f| &f.signature)));
        }
        for t in all {
            for s in t.preorder() {
                if s.is_signed_integer() && !signed_ok {
                    return Err(err(
                        AsmErrorKind::Unsupported,
                        pos,
                        format!("signed integer types need Aptos bytecode v9 (this unit is v{})", self.m.version),
                    ));
                }
                if matches!(s, SignatureToken::Function(..)) && !fn_ok {
                    return Err(err(
                        AsmErrorKind::Unsupported,
                        pos,
                        format!("function types need Aptos bytecode v8 (this unit is v{})", self.m.version),
                    ));
                }
            }
        }
        Ok(())
    }

    // ---- declarations ---------------------------------------------------------

    fn self_module(&self, pos: Pos) -> AsmResult<ModuleName> {
        self.self_module.clone().ok_or_else(|| err(AsmErrorKind::Unsupported, pos, "a script has no module of its own"))
    }

    fn struct_handle_value(&mut self, mh: ModuleHandleIndex, s: &StructDecl) -> AsmResult<StructHandle> {
        Ok(StructHandle {
            module: mh,
            name: self.ident(&s.name, s.pos)?,
            abilities: s.abilities,
            type_parameters: s
                .type_params
                .iter()
                .map(|p| StructTypeParameter { constraints: p.constraints, is_phantom: p.is_phantom })
                .collect(),
        })
    }

    fn add_struct_handle(&mut self, module: &ModuleName, s: &StructDecl) -> AsmResult<StructHandleIndex> {
        // A repeated name gets its own handle (the verifier rejects the
        // duplicate); the name resolves to the first.
        let key = (module.clone(), s.name.clone());
        let mh = self.module(module, s.pos)?;
        let h = self.struct_handle_value(mh, s)?;
        let i = push(&mut self.m.struct_handles, s.pos, "struct handle", h)?;
        self.maps.struct_handles.entry(key).or_insert(i);
        Ok(StructHandleIndex(i))
    }

    /// A handle declared under a `use` (of this module too: a handle that
    /// no definition uses).
    fn declare_struct_handle(&mut self, module: &ModuleName, s: &StructDecl) -> AsmResult<()> {
        self.add_struct_handle(module, s).map(|_| ())
    }

    fn declare_datatype(&mut self, s: &StructDecl) -> AsmResult<()> {
        let me = self.self_module(s.pos)?;
        let sh = self.add_struct_handle(&me, s)?;
        let def = match &s.layout {
            Layout::Variants(_) if self.m.version < 7 => {
                return Err(err(AsmErrorKind::Unsupported, s.pos, "enums need bytecode v7"));
            }
            Layout::Variants(_) if self.is_sui() => {
                let i = push(
                    &mut self.m.enum_defs,
                    s.pos,
                    "enum definition",
                    EnumDefinition { enum_handle: sh, variants: vec![] },
                )?;
                DefRef::Enum(EnumDefinitionIndex(i))
            }
            _ => {
                let i = push(
                    &mut self.m.struct_defs,
                    s.pos,
                    "struct definition",
                    StructDefinition { struct_handle: sh, field_information: StructFieldInformation::Native },
                )?;
                DefRef::Struct(StructDefinitionIndex(i))
            }
        };
        self.defs.entry(s.name.clone()).or_insert(def);
        self.def_order.push(def);
        Ok(())
    }

    fn define_datatype(&mut self, index: usize, s: &StructDecl) -> AsmResult<()> {
        self.set_type_params(&s.type_params, s.pos)?;
        let Some(def) = self.def_order.get(index).copied() else {
            return Err(err(AsmErrorKind::Unresolved, s.pos, format!("undeclared struct `{}`", s.name)));
        };
        match (&s.layout, def) {
            (Layout::Native, _) => Ok(()),
            (Layout::Fields(fields), DefRef::Struct(i)) => {
                let fields = self.fields(fields)?;
                self.m.struct_defs[i.idx()].field_information = StructFieldInformation::Declared(fields);
                Ok(())
            }
            (Layout::Variants(vs), def) => {
                let mut out = vec![];
                for (pos, name, fields) in vs {
                    let name = self.ident(name, *pos)?;
                    out.push(VariantDefinition { name, fields: self.fields(fields)? });
                }
                match def {
                    DefRef::Struct(i) => {
                        self.m.struct_defs[i.idx()].field_information = StructFieldInformation::DeclaredVariants(out)
                    }
                    DefRef::Enum(i) => self.m.enum_defs[i.idx()].variants = out,
                }
                Ok(())
            }
            (Layout::Fields(_), DefRef::Enum(_)) => Err(err(AsmErrorKind::Syntax, s.pos, "struct declared as enum")),
        }
    }

    fn fields(&mut self, fields: &[Decl]) -> AsmResult<Vec<FieldDefinition>> {
        let mut out: Vec<FieldDefinition> = vec![];
        for f in fields {
            let name = self.ident(&f.name, f.pos)?;
            let signature = self.build_type(&f.ty)?;
            out.push(FieldDefinition { name, signature });
        }
        Ok(out)
    }

    fn set_type_params(&mut self, params: &[TypeParam], pos: Pos) -> AsmResult<()> {
        self.type_params.clear();
        for (i, p) in params.iter().enumerate() {
            let i = u16::try_from(i).map_err(|_| err(AsmErrorKind::Limit, pos, "too many type parameters"))?;
            if self.type_params.insert(p.name.clone(), i).is_some() {
                return Err(err(AsmErrorKind::Duplicate, pos, format!("duplicate type parameter `{}`", p.name)));
            }
        }
        Ok(())
    }

    fn set_locals(&mut self, decls: &[&Decl]) -> AsmResult<Vec<SignatureToken>> {
        self.locals.clear();
        let mut tys = vec![];
        for (i, d) in decls.iter().enumerate() {
            let i = u8::try_from(i).map_err(|_| err(AsmErrorKind::Limit, d.pos, "too many locals (max 256)"))?;
            if self.locals.insert(d.name.clone(), i).is_some() {
                return Err(err(AsmErrorKind::Duplicate, d.pos, format!("duplicate local `{}`", d.name)));
            }
            tys.push(self.build_type(&d.ty)?);
        }
        Ok(tys)
    }

    /// Builds the handle of `f` in `module` (params, results, access).
    fn fun_handle_value(&mut self, mh: ModuleHandleIndex, f: &FunDecl) -> AsmResult<FunctionHandle> {
        self.set_type_params(&f.type_params, f.pos)?;
        let params: Vec<&Decl> = f.params.iter().collect();
        let param_tys = self.set_locals(&params)?;
        let parameters = self.signature(param_tys, f.pos)?;
        let results = f.results.iter().map(|t| self.build_type(t)).collect::<AsmResult<Vec<_>>>()?;
        let return_ = self.signature(results, f.pos)?;
        let access_specifiers = match &f.access {
            None => None,
            Some(specs) => {
                if self.is_sui() || self.m.version < 7 {
                    return Err(err(AsmErrorKind::Unsupported, f.pos, "access specifiers need Aptos bytecode v7"));
                }
                Some(specs.iter().map(|s| self.access_spec(s)).collect::<AsmResult<Vec<_>>>()?)
            }
        };
        if !f.attributes.is_empty() && (self.is_sui() || self.m.version < 8) {
            return Err(err(AsmErrorKind::Unsupported, f.pos, "function attributes need Aptos bytecode v8"));
        }
        for p in &f.type_params {
            if p.is_phantom {
                return Err(err(AsmErrorKind::Syntax, f.pos, "function type parameters cannot be phantom"));
            }
        }
        Ok(FunctionHandle {
            module: mh,
            name: self.ident(&f.name, f.pos)?,
            parameters,
            return_,
            type_parameters: f.type_params.iter().map(|p| p.constraints).collect(),
            access_specifiers,
            attributes: f.attributes.clone(),
        })
    }

    fn add_fun_handle(&mut self, module: &ModuleName, f: &FunDecl) -> AsmResult<FunctionHandleIndex> {
        let key = (module.clone(), f.name.clone());
        let mh = self.module(module, f.pos)?;
        let h = self.fun_handle_value(mh, f)?;
        let i = push(&mut self.m.function_handles, f.pos, "function handle", h)?;
        self.maps.fun_handles.entry(key).or_insert(i);
        Ok(FunctionHandleIndex(i))
    }

    fn declare_imported_fun(&mut self, module: &ModuleName, f: &FunDecl) -> AsmResult<()> {
        self.add_fun_handle(module, f).map(|_| ())
    }

    fn declare_fun(&mut self, f: &FunDecl, is_script: bool) -> AsmResult<()> {
        let acquires = f
            .acquires
            .iter()
            .map(|(pos, name)| match self.defs.get(name) {
                Some(DefRef::Struct(i)) => Ok(*i),
                _ => Err(err(AsmErrorKind::Unresolved, *pos, format!("undeclared struct `{name}` in acquires"))),
            })
            .collect::<AsmResult<Vec<_>>>()?;
        if is_script {
            // The script's function has no handle: keep its signature aside.
            self.set_type_params(&f.type_params, f.pos)?;
            let params: Vec<&Decl> = f.params.iter().collect();
            let tys = self.set_locals(&params)?;
            let sig = self.signature(tys, f.pos)?;
            if !f.results.is_empty() {
                return Err(err(AsmErrorKind::Unsupported, f.pos, "a script function returns nothing"));
            }
            let access = match &f.access {
                None => None,
                Some(specs) => Some(specs.iter().map(|s| self.access_spec(s)).collect::<AsmResult<Vec<_>>>()?),
            };
            self.script_main = Some((f.type_params.iter().map(|p| p.constraints).collect(), sig, access));
            self.m.function_defs.push(FunctionDefinition {
                function: FunctionHandleIndex(0),
                visibility: Visibility::Private,
                is_entry: false,
                acquires_global_resources: vec![],
                code: None,
            });
            return Ok(());
        }
        let me = self.self_module(f.pos)?;
        let handle = self.add_fun_handle(&me, f)?.0;
        let i = push(
            &mut self.m.function_defs,
            f.pos,
            "function definition",
            FunctionDefinition {
                function: FunctionHandleIndex(handle),
                visibility: f.visibility,
                is_entry: f.is_entry,
                acquires_global_resources: acquires,
                code: None,
            },
        )?;
        self.fun_defs.entry(f.name.clone()).or_insert(i as usize);
        Ok(())
    }

    fn access_spec(&mut self, s: &AccessSpec) -> AsmResult<AccessSpecifier> {
        let resource = match &s.resource {
            ResourceSpec::Any => ResourceSpecifier::Any,
            ResourceSpec::AtAddress(a) => ResourceSpecifier::DeclaredAtAddress(self.address(*a, s.pos)?),
            ResourceSpec::InModule(p) => {
                let mn = match (p.address, p.parts.as_slice()) {
                    (Some(a), [name]) => ModuleName { address: a, name: name.clone() },
                    (None, [alias]) => self.alias(alias, p.pos)?,
                    _ => return Err(err(AsmErrorKind::Syntax, p.pos, "expected `0xADDR::module::*` or `alias::*`")),
                };
                ResourceSpecifier::DeclaredInModule(self.module(&mn, p.pos)?)
            }
            ResourceSpec::Resource(t) => match self.build_type(t)? {
                SignatureToken::Struct(sh) => ResourceSpecifier::Resource(sh),
                SignatureToken::StructInstantiation(sh, args) => {
                    ResourceSpecifier::ResourceInstantiation(sh, self.signature(args, s.pos)?)
                }
                _ => return Err(err(AsmErrorKind::Operand, s.pos, "an access specifier names a struct")),
            },
        };
        let address = match &s.address {
            AddressSpec::Any => AddressSpecifier::Any,
            AddressSpec::Literal(a) => AddressSpecifier::Literal(self.address(*a, s.pos)?),
            AddressSpec::Param(name) => AddressSpecifier::Parameter(self.local(name, s.pos)?, None),
            AddressSpec::Derived(path, args, name) => {
                let fh = self.resolve_fun(path)?;
                let args = args.iter().map(|t| self.build_type(t)).collect::<AsmResult<Vec<_>>>()?;
                let fi = self.fun_inst(fh, args, s.pos)?;
                AddressSpecifier::Parameter(self.local(name, s.pos)?, Some(fi))
            }
        };
        Ok(AccessSpecifier { kind: s.kind, negated: s.negated, resource, address })
    }

    // ---- name resolution ------------------------------------------------------

    fn alias(&self, alias: &str, pos: Pos) -> AsmResult<ModuleName> {
        if let Some(m) = self.aliases.get(alias) {
            return Ok(m.clone());
        }
        match &self.self_module {
            Some(me) if me.name == alias => Ok(me.clone()),
            _ => Err(err(AsmErrorKind::Unresolved, pos, format!("unknown module alias `{alias}`"))),
        }
    }

    /// The module and item name a path denotes (`item`, `alias::item`,
    /// `0xA::m::item`).
    fn qualified(&self, p: &Path) -> AsmResult<(ModuleName, String)> {
        match (p.address, p.parts.as_slice()) {
            (None, [item]) => Ok((self.self_module(p.pos)?, item.clone())),
            (None, [alias, item]) => Ok((self.alias(alias, p.pos)?, item.clone())),
            (Some(address), [module, item]) => Ok((ModuleName { address, name: module.clone() }, item.clone())),
            _ => Err(err(AsmErrorKind::Syntax, p.pos, "expected `name`, `alias::name` or `0xADDR::module::name`")),
        }
    }

    fn resolve_fun(&mut self, p: &Path) -> AsmResult<FunctionHandleIndex> {
        let key = self.qualified(p)?;
        if let Some(i) = self.maps.fun_handles.get(&key) {
            return Ok(FunctionHandleIndex(*i));
        }
        if let Some(i) = self.import_fun(&key, p.pos)? {
            return Ok(i);
        }
        Err(err(
            AsmErrorKind::Unresolved,
            p.pos,
            format!(
                "unknown function `{}` (declare it under its `use` line or pass the dependency)",
                p.parts.join("::")
            ),
        ))
    }

    fn resolve_struct_handle(&mut self, p: &Path) -> AsmResult<StructHandleIndex> {
        let key = self.qualified(p)?;
        if let Some(i) = self.maps.struct_handles.get(&key) {
            return Ok(StructHandleIndex(*i));
        }
        if let Some(i) = self.import_struct(&key, p.pos)? {
            return Ok(i);
        }
        Err(err(
            AsmErrorKind::Unresolved,
            p.pos,
            format!("unknown struct `{}` (declare it under its `use` line or pass the dependency)", p.parts.join("::")),
        ))
    }

    /// A datatype defined in this module: `S` or `self_module::S`.
    fn resolve_def(&self, p: &Path) -> AsmResult<DefRef> {
        let name = match (p.address, p.parts.as_slice()) {
            (None, [name]) => name,
            (None, [m, name]) if self.self_module.as_ref().is_some_and(|me| me.name == *m) => name,
            _ => return Err(err(AsmErrorKind::Syntax, p.pos, "expected the name of a struct defined in this module")),
        };
        self.defs
            .get(name)
            .copied()
            .ok_or_else(|| err(AsmErrorKind::Unresolved, p.pos, format!("undeclared struct `{name}` in this module")))
    }

    fn local(&self, name: &str, pos: Pos) -> AsmResult<LocalIndex> {
        self.locals
            .get(name)
            .copied()
            .ok_or_else(|| err(AsmErrorKind::Unresolved, pos, format!("unknown local `{name}`")))
    }

    fn build_type(&mut self, t: &Type) -> AsmResult<SignatureToken> {
        use SignatureToken as T;
        Ok(match t {
            Type::Ref(is_mut, inner) => {
                let inner = Box::new(self.build_type(inner)?);
                if *is_mut {
                    T::MutableReference(inner)
                } else {
                    T::Reference(inner)
                }
            }
            Type::Func(params, results, abilities) => T::Function(
                params.iter().map(|t| self.build_type(t)).collect::<AsmResult<_>>()?,
                results.iter().map(|t| self.build_type(t)).collect::<AsmResult<_>>()?,
                *abilities,
            ),
            Type::Named(p, args) => {
                if let (None, [name]) = (p.address, p.parts.as_slice()) {
                    if let Some(i) = self.type_params.get(name) {
                        if args.is_some() {
                            return Err(err(AsmErrorKind::Operand, p.pos, "a type parameter takes no type arguments"));
                        }
                        return Ok(T::TypeParameter(*i));
                    }
                    let prim = match name.as_str() {
                        "bool" => Some(T::Bool),
                        "u8" => Some(T::U8),
                        "u16" => Some(T::U16),
                        "u32" => Some(T::U32),
                        "u64" => Some(T::U64),
                        "u128" => Some(T::U128),
                        "u256" => Some(T::U256),
                        "i8" => Some(T::I8),
                        "i16" => Some(T::I16),
                        "i32" => Some(T::I32),
                        "i64" => Some(T::I64),
                        "i128" => Some(T::I128),
                        "i256" => Some(T::I256),
                        "address" => Some(T::Address),
                        "signer" => Some(T::Signer),
                        _ => None,
                    };
                    if let Some(prim) = prim {
                        if args.is_some() {
                            return Err(err(AsmErrorKind::Operand, p.pos, format!("`{name}` takes no type arguments")));
                        }
                        return Ok(prim);
                    }
                    if name == "vector" {
                        return match args.as_deref() {
                            Some([elem]) => Ok(T::Vector(Box::new(self.build_type(elem)?))),
                            _ => Err(err(AsmErrorKind::Operand, p.pos, "`vector` takes one type argument")),
                        };
                    }
                }
                let sh = self.resolve_struct_handle(p)?;
                match args {
                    None => T::Struct(sh),
                    Some(args) => {
                        T::StructInstantiation(sh, args.iter().map(|t| self.build_type(t)).collect::<AsmResult<_>>()?)
                    }
                }
            }
        })
    }

    // ---- table entries used by code ---------------------------------------------

    fn constant(&mut self, ty: SignatureToken, value: &ConstValue, pos: Pos) -> AsmResult<ConstantPoolIndex> {
        let data = match value {
            ConstValue::Raw(b) => b.clone(),
            ConstValue::Value(v) => v.to_bcs(&ty).map_err(|m| err(AsmErrorKind::Operand, pos, m))?,
        };
        let (t, d) = (ty.clone(), data.clone());
        intern(&mut self.maps.consts, &mut self.m.constant_pool, (ty, data), pos, "constant", || Constant {
            type_: t,
            data: d,
        })
        .map(ConstantPoolIndex)
    }

    fn fun_inst(
        &mut self,
        fh: FunctionHandleIndex,
        args: Vec<SignatureToken>,
        pos: Pos,
    ) -> AsmResult<FunctionInstantiationIndex> {
        let sig = self.signature(args, pos)?;
        intern(
            &mut self.maps.fun_insts,
            &mut self.m.function_instantiations,
            (fh.0, sig.0),
            pos,
            "function instantiation",
            || FunctionInstantiation { handle: fh, type_parameters: sig },
        )
        .map(FunctionInstantiationIndex)
    }

    fn struct_inst(
        &mut self,
        sd: StructDefinitionIndex,
        args: Vec<SignatureToken>,
        pos: Pos,
    ) -> AsmResult<StructDefInstantiationIndex> {
        let sig = self.signature(args, pos)?;
        intern(
            &mut self.maps.struct_insts,
            &mut self.m.struct_def_instantiations,
            (sd.0, sig.0),
            pos,
            "struct instantiation",
            || StructDefInstantiation { def: sd, type_parameters: sig },
        )
        .map(StructDefInstantiationIndex)
    }

    fn type_args(&mut self, args: &Option<Vec<Type>>) -> AsmResult<Option<Vec<SignatureToken>>> {
        match args {
            None => Ok(None),
            Some(ts) => Ok(Some(ts.iter().map(|t| self.build_type(t)).collect::<AsmResult<_>>()?)),
        }
    }

    fn field_names(&self, names: &[FieldDefinition]) -> Vec<String> {
        names.iter().map(|f| self.m.identifiers[f.name.idx()].clone()).collect()
    }

    fn struct_fields(&self, sd: StructDefinitionIndex, pos: Pos) -> AsmResult<Vec<String>> {
        match &self.m.struct_defs[sd.idx()].field_information {
            StructFieldInformation::Declared(fs) => Ok(self.field_names(fs)),
            _ => Err(err(AsmErrorKind::Operand, pos, "not a struct with fields")),
        }
    }

    fn variant_defs(&self, def: DefRef) -> Option<&Vec<VariantDefinition>> {
        match def {
            DefRef::Struct(i) => match &self.m.struct_defs[i.idx()].field_information {
                StructFieldInformation::DeclaredVariants(vs) => Some(vs),
                _ => None,
            },
            DefRef::Enum(i) => Some(&self.m.enum_defs[i.idx()].variants),
        }
    }

    fn variant_index(&self, def: DefRef, name: &str, pos: Pos) -> AsmResult<VariantIndex> {
        let vs = self.variant_defs(def).ok_or_else(|| err(AsmErrorKind::Operand, pos, "not an enum"))?;
        vs.iter()
            .position(|v| self.m.identifiers[v.name.idx()] == name)
            .map(|i| i as VariantIndex)
            .ok_or_else(|| err(AsmErrorKind::Unresolved, pos, format!("unknown variant `{name}`")))
    }
}
