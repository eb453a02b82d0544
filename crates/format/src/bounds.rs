//! The bounds check: every index in a decoded module or script must point
//! into its table, as Move's `check_bounds.rs` requires (both flavours).
//!
//! Checks run in the real checker's order so the first failure reported is
//! the same: signatures, constants, handles, instantiations, definitions,
//! then each function's code. Beyond plain indices this covers field and
//! variant positions, type parameter indices, local indices, branch targets,
//! Sui jump tables and the locals limit (`TOO_MANY_LOCALS`).

use crate::*;

/// Where tables and function definitions start in the input, so bounds
/// errors can carry a byte offset. Empty for models not built from bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    pub table_offsets: Vec<(u8, usize)>,
    pub function_def_offsets: Vec<usize>,
    pub self_handle_offset: usize,
}

impl Layout {
    fn table(&self, kind: u8) -> usize {
        self.table_offsets.iter().find(|(k, _)| *k == kind).map_or(0, |(_, o)| *o)
    }
}

/// Bounds-checks a module built in memory (e.g. by an assembler).
pub fn check_module(module: &CompiledModule) -> FormatResult<()> {
    check_module_at(module, &Layout::default())
}

/// Bounds-checks a script built in memory.
pub fn check_script(script: &CompiledScript) -> FormatResult<()> {
    check_script_at(script, &Layout::default())
}

pub(crate) fn check_module_at(m: &CompiledModule, layout: &Layout) -> FormatResult<()> {
    let c = Checker::for_module(m, layout);
    if m.module_handles.is_empty() {
        return Err(FormatError::new(
            StatusCode::NO_MODULE_HANDLES,
            0,
            "module handle table",
            "module has no module handles",
        ));
    }
    c.common()?;
    for (i, fd) in m.function_defs.iter().enumerate() {
        c.function_def(i, fd)?;
    }
    Ok(())
}

pub(crate) fn check_script_at(s: &CompiledScript, layout: &Layout) -> FormatResult<()> {
    let c = Checker::for_script(s, layout);
    c.common()?;
    let at = layout.function_def_offsets.first().copied().unwrap_or(0);
    c.index(s.signatures.len(), s.parameters.idx(), "signature", at, "script parameters")?;
    c.tparams_in_sig(s.parameters, s.type_parameters.len(), at, "script parameters")?;
    c.code(&s.code, s.type_parameters.len(), s.parameters, at, "script main")
}

/// Tables the checker reads; module-only ones are `None` for scripts, which
/// makes their indices unchecked there, as in Move's checker.
struct Checker<'a> {
    layout: &'a Layout,
    self_handle: Option<ModuleHandleIndex>,
    module_handles: &'a [ModuleHandle],
    struct_handles: &'a [StructHandle],
    function_handles: &'a [FunctionHandle],
    function_instantiations: &'a [FunctionInstantiation],
    signatures: &'a [Signature],
    identifiers: &'a [Identifier],
    address_identifiers: &'a [AccountAddress],
    constant_pool: &'a [Constant],
    module: Option<&'a CompiledModule>,
    /// Largest type parameter index mentioned by each signature.
    sig_max_tparam: Vec<Option<u16>>,
}

fn max_tparam(tokens: &[SignatureToken]) -> Option<u16> {
    let mut max = None;
    for t in tokens {
        let _ = visit(t, &mut |n| {
            if let SignatureToken::TypeParameter(i) = n {
                max = max.max(Some(*i));
            }
            Ok(())
        });
    }
    max
}

/// Pre-order walk without allocating for the common leaf tokens.
fn visit(t: &SignatureToken, f: &mut impl FnMut(&SignatureToken) -> FormatResult<()>) -> FormatResult<()> {
    use SignatureToken as T;
    let mut stack = match t {
        T::Vector(_) | T::Reference(_) | T::MutableReference(_) | T::StructInstantiation(..) | T::Function(..) => {
            vec![t]
        }
        leaf => return f(leaf),
    };
    while let Some(t) = stack.pop() {
        f(t)?;
        match t {
            T::Vector(inner) | T::Reference(inner) | T::MutableReference(inner) => stack.push(inner),
            T::StructInstantiation(_, args) => stack.extend(args.iter().rev()),
            T::Function(params, results, _) => {
                stack.extend(results.iter().rev());
                stack.extend(params.iter().rev());
            }
            _ => {}
        }
    }
    Ok(())
}

impl<'a> Checker<'a> {
    fn for_module(m: &'a CompiledModule, layout: &'a Layout) -> Self {
        Checker {
            layout,
            self_handle: Some(m.self_module_handle_idx),
            module_handles: &m.module_handles,
            struct_handles: &m.struct_handles,
            function_handles: &m.function_handles,
            function_instantiations: &m.function_instantiations,
            signatures: &m.signatures,
            identifiers: &m.identifiers,
            address_identifiers: &m.address_identifiers,
            constant_pool: &m.constant_pool,
            module: Some(m),
            sig_max_tparam: m.signatures.iter().map(|s| max_tparam(&s.0)).collect(),
        }
    }

    fn for_script(s: &'a CompiledScript, layout: &'a Layout) -> Self {
        Checker {
            layout,
            self_handle: None,
            module_handles: &s.module_handles,
            struct_handles: &s.struct_handles,
            function_handles: &s.function_handles,
            function_instantiations: &s.function_instantiations,
            signatures: &s.signatures,
            identifiers: &s.identifiers,
            address_identifiers: &s.address_identifiers,
            constant_pool: &s.constant_pool,
            module: None,
            sig_max_tparam: s.signatures.iter().map(|s| max_tparam(&s.0)).collect(),
        }
    }

    fn index(&self, len: usize, idx: usize, pool: &str, at: usize, context: &str) -> FormatResult<()> {
        if idx < len {
            Ok(())
        } else {
            Err(FormatError::new(
                StatusCode::INDEX_OUT_OF_BOUNDS,
                at,
                context,
                format!("{pool} index {idx} out of bounds (table has {len})"),
            ))
        }
    }

    /// Checks an index into a module-only table; nothing to check in scripts.
    fn index_opt(&self, len: Option<usize>, idx: usize, pool: &str, at: usize, context: &str) -> FormatResult<()> {
        match len {
            Some(len) => self.index(len, idx, pool, at, context),
            None => Ok(()),
        }
    }

    fn at(&self, kind: u8) -> usize {
        self.layout.table(kind)
    }

    fn common(&self) -> FormatResult<()> {
        use crate::binary::table as k;
        for s in self.signatures {
            for t in &s.0 {
                self.type_(t, self.at(k::SIGNATURES), "signature table")?;
            }
        }
        for c in self.constant_pool {
            self.type_(&c.type_, self.at(k::CONSTANT_POOL), "constant pool")?;
        }
        let at = self.at(k::MODULE_HANDLES);
        for h in self.module_handles {
            self.module_handle(h, at, "module handle table")?;
        }
        if let Some(idx) = self.self_handle {
            let at = self.layout.self_handle_offset;
            self.index(self.module_handles.len(), idx.idx(), "module handle", at, "self module handle index")?;
        }
        let at = self.at(k::STRUCT_HANDLES);
        for h in self.struct_handles {
            self.index(self.module_handles.len(), h.module.idx(), "module handle", at, "struct handle table")?;
            self.index(self.identifiers.len(), h.name.idx(), "identifier", at, "struct handle table")?;
        }
        let at = self.at(k::FUNCTION_HANDLES);
        for h in self.function_handles {
            let cx = "function handle table";
            self.index(self.module_handles.len(), h.module.idx(), "module handle", at, cx)?;
            self.index(self.identifiers.len(), h.name.idx(), "identifier", at, cx)?;
            self.index(self.signatures.len(), h.parameters.idx(), "signature", at, cx)?;
            self.index(self.signatures.len(), h.return_.idx(), "signature", at, cx)?;
            self.tparams_in_sig(h.parameters, h.type_parameters.len(), at, cx)?;
            self.tparams_in_sig(h.return_, h.type_parameters.len(), at, cx)?;
        }
        if let Some(m) = self.module {
            self.module_tables(m)?;
        }
        let at = self.at(k::FUNCTION_INST);
        if self.module.is_none() {
            for fi in self.function_instantiations {
                self.function_instantiation(fi, at)?;
            }
        }
        Ok(())
    }

    fn function_instantiation(&self, fi: &FunctionInstantiation, at: usize) -> FormatResult<()> {
        let cx = "function instantiation table";
        self.index(self.function_handles.len(), fi.handle.idx(), "function handle", at, cx)?;
        self.index(self.signatures.len(), fi.type_parameters.idx(), "signature", at, cx)
    }

    fn module_handle(&self, h: &ModuleHandle, at: usize, cx: &str) -> FormatResult<()> {
        self.index(self.address_identifiers.len(), h.address.idx(), "address", at, cx)?;
        self.index(self.identifiers.len(), h.name.idx(), "identifier", at, cx)
    }

    /// The module-only tables, in the real checker's order.
    fn module_tables(&self, m: &CompiledModule) -> FormatResult<()> {
        use crate::binary::table as k;
        let defs = m.struct_defs.len();
        let at = self.at(k::FIELD_HANDLES);
        for fh in &m.field_handles {
            let cx = "field handle table";
            self.index(defs, fh.owner.idx(), "struct definition", at, cx)?;
            let count = field_count(&m.struct_defs[fh.owner.idx()].field_information, None);
            self.member(fh.field, count, at, cx)?;
        }
        let at = self.at(k::FRIEND_DECLS);
        for f in &m.friend_decls {
            self.module_handle(f, at, "friend table")?;
        }
        let at = self.at(k::STRUCT_DEF_INST);
        for si in &m.struct_def_instantiations {
            let cx = "struct instantiation table";
            self.index(defs, si.def.idx(), "struct definition", at, cx)?;
            self.index(self.signatures.len(), si.type_parameters.idx(), "signature", at, cx)?;
        }
        let at = self.at(k::FUNCTION_INST);
        for fi in self.function_instantiations {
            self.function_instantiation(fi, at)?;
        }
        let at = self.at(k::FIELD_INST);
        for fi in &m.field_instantiations {
            let cx = "field instantiation table";
            self.index(m.field_handles.len(), fi.handle.idx(), "field handle", at, cx)?;
            self.index(self.signatures.len(), fi.type_parameters.idx(), "signature", at, cx)?;
        }
        let at = self.at(k::STRUCT_DEFS);
        for sd in &m.struct_defs {
            self.struct_def(sd, at)?;
        }
        self.aptos_variant_tables(m)?;
        self.sui_enum_tables(m)?;
        Ok(())
    }

    fn member(&self, idx: u16, count: usize, at: usize, cx: &str) -> FormatResult<()> {
        self.index(count, idx as usize, "member", at, cx)
    }

    fn struct_def(&self, sd: &StructDefinition, at: usize) -> FormatResult<()> {
        let cx = "struct definition table";
        self.index(self.struct_handles.len(), sd.struct_handle.idx(), "struct handle", at, cx)?;
        let tparams = self.struct_handles[sd.struct_handle.idx()].type_parameters.len();
        match &sd.field_information {
            StructFieldInformation::Native => {}
            StructFieldInformation::Declared(fields) => {
                for f in fields {
                    self.field_def(f, tparams, at, cx)?;
                }
            }
            StructFieldInformation::DeclaredVariants(variants) => {
                for v in variants {
                    self.index(self.identifiers.len(), v.name.idx(), "identifier", at, cx)?;
                    for f in &v.fields {
                        self.field_def(f, tparams, at, cx)?;
                    }
                }
                if variants.is_empty() {
                    return Err(FormatError::new(
                        StatusCode::ZERO_VARIANTS_ERROR,
                        at,
                        cx,
                        "enum struct without variants",
                    ));
                }
            }
        }
        Ok(())
    }

    fn field_def(&self, f: &FieldDefinition, tparams: usize, at: usize, cx: &str) -> FormatResult<()> {
        self.index(self.identifiers.len(), f.name.idx(), "identifier", at, cx)?;
        self.type_(&f.signature, at, cx)?;
        self.tparams_in_type(&f.signature, tparams, at, cx)
    }

    fn aptos_variant_tables(&self, m: &CompiledModule) -> FormatResult<()> {
        use crate::binary::table as k;
        let defs = m.struct_defs.len();
        let at = self.at(k::KIND_11);
        for h in &m.variant_field_handles {
            let cx = "variant field handle table";
            self.index(defs, h.struct_index.idx(), "struct definition", at, cx)?;
            if h.variants.is_empty() {
                return Err(FormatError::new(
                    StatusCode::ZERO_VARIANTS_ERROR,
                    at,
                    cx,
                    "variant field handle without variants",
                ));
            }
            let info = &m.struct_defs[h.struct_index.idx()].field_information;
            for &v in &h.variants {
                self.member(v, variant_count(info), at, cx)?;
                self.member(h.field, field_count(info, Some(v)), at, cx)?;
            }
        }
        let at = self.at(k::KIND_13);
        for h in &m.struct_variant_handles {
            let cx = "struct variant handle table";
            self.index(defs, h.struct_index.idx(), "struct definition", at, cx)?;
            let info = &m.struct_defs[h.struct_index.idx()].field_information;
            self.member(h.variant, variant_count(info), at, cx)?;
        }
        let at = self.at(k::KIND_12);
        for i in &m.variant_field_instantiations {
            let cx = "variant field instantiation table";
            self.index(m.variant_field_handles.len(), i.handle.idx(), "variant field handle", at, cx)?;
            self.index(self.signatures.len(), i.type_parameters.idx(), "signature", at, cx)?;
        }
        let at = self.at(k::KIND_14);
        for i in &m.struct_variant_instantiations {
            let cx = "struct variant instantiation table";
            self.index(m.struct_variant_handles.len(), i.handle.idx(), "struct variant handle", at, cx)?;
            self.index(self.signatures.len(), i.type_parameters.idx(), "signature", at, cx)?;
        }
        Ok(())
    }

    fn sui_enum_tables(&self, m: &CompiledModule) -> FormatResult<()> {
        use crate::binary::table as k;
        let at = self.at(k::KIND_11);
        for e in &m.enum_defs {
            let cx = "enum definition table";
            self.index(self.struct_handles.len(), e.enum_handle.idx(), "datatype handle", at, cx)?;
            let tparams = self.struct_handles[e.enum_handle.idx()].type_parameters.len();
            for v in &e.variants {
                self.index(self.identifiers.len(), v.name.idx(), "identifier", at, cx)?;
                for f in &v.fields {
                    self.field_def(f, tparams, at, cx)?;
                }
            }
        }
        let at = self.at(k::KIND_12);
        for i in &m.enum_def_instantiations {
            let cx = "enum instantiation table";
            self.index(m.enum_defs.len(), i.def.idx(), "enum definition", at, cx)?;
            self.index(self.signatures.len(), i.type_parameters.idx(), "signature", at, cx)?;
        }
        let at = self.at(k::KIND_13);
        for h in &m.variant_handles {
            let cx = "variant handle table";
            self.index(m.enum_defs.len(), h.enum_def.idx(), "enum definition", at, cx)?;
            self.member(h.variant, m.enum_defs[h.enum_def.idx()].variants.len(), at, cx)?;
        }
        let at = self.at(k::KIND_14);
        for h in &m.variant_instantiation_handles {
            let cx = "variant instantiation handle table";
            self.index(m.enum_def_instantiations.len(), h.enum_def.idx(), "enum instantiation", at, cx)?;
            let def = m.enum_def_instantiations[h.enum_def.idx()].def;
            self.member(h.variant, m.enum_defs[def.idx()].variants.len(), at, cx)?;
        }
        Ok(())
    }

    /// Struct handle indices in a type and their type argument counts.
    fn type_(&self, ty: &SignatureToken, at: usize, cx: &str) -> FormatResult<()> {
        visit(ty, &mut |t| {
            let (idx, given) = match t {
                SignatureToken::Struct(idx) => (*idx, 0),
                SignatureToken::StructInstantiation(idx, args) => (*idx, args.len()),
                _ => return Ok(()),
            };
            self.index(self.struct_handles.len(), idx.idx(), "struct handle", at, cx)?;
            let expected = self.struct_handles[idx.idx()].type_parameters.len();
            if expected != given {
                return Err(FormatError::new(
                    StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH,
                    at,
                    cx,
                    format!("struct handle {idx} expects {expected} type arguments, got {given}"),
                ));
            }
            Ok(())
        })
    }

    fn tparams_in_type(&self, ty: &SignatureToken, count: usize, at: usize, cx: &str) -> FormatResult<()> {
        if let Some(max) = max_tparam(std::slice::from_ref(ty)) {
            self.index(count, max as usize, "type parameter", at, cx)?;
        }
        Ok(())
    }

    fn tparams_in_sig(&self, sig: SignatureIndex, count: usize, at: usize, cx: &str) -> FormatResult<()> {
        if let Some(Some(max)) = self.sig_max_tparam.get(sig.idx()) {
            self.index(count, *max as usize, "type parameter", at, cx)?;
        }
        Ok(())
    }

    fn function_def(&self, i: usize, fd: &FunctionDefinition) -> FormatResult<()> {
        let at = self.layout.function_def_offsets.get(i).copied().unwrap_or(0);
        // The definition's index goes into the context only on error.
        self.function_def_inner(fd, at, "function definition").map_err(|mut e| {
            e.context = e.context.replacen("function definition", &format!("function definition {i}"), 1);
            e
        })
    }

    fn function_def_inner(&self, fd: &FunctionDefinition, at: usize, cx: &str) -> FormatResult<()> {
        self.index(self.function_handles.len(), fd.function.idx(), "function handle", at, cx)?;
        let defs = self.module.map(|m| m.struct_defs.len());
        for a in &fd.acquires_global_resources {
            self.index_opt(defs, a.idx(), "struct definition", at, cx)?;
        }
        let Some(code) = &fd.code else { return Ok(()) };
        let handle = &self.function_handles[fd.function.idx()];
        self.code(code, handle.type_parameters.len(), handle.parameters, at, cx)
    }

    fn code(&self, unit: &CodeUnit, tparams: usize, params: SignatureIndex, at: usize, cx: &str) -> FormatResult<()> {
        let sigs = self.signatures.len();
        self.index(sigs, unit.locals.idx(), "signature", at, cx)?;
        let params_len = self.signatures.get(params.idx()).map_or(0, |s| s.0.len());
        let locals = self.signatures[unit.locals.idx()].0.len().saturating_add(params_len);
        if locals > u8::MAX as usize {
            return Err(FormatError::new(
                StatusCode::TOO_MANY_LOCALS,
                at,
                cx,
                format!("{locals} locals and parameters, at most 255 allowed"),
            ));
        }
        self.tparams_in_sig(unit.locals, tparams, at, cx)?;
        let m = self.module;
        let len_of = |f: fn(&CompiledModule) -> usize| m.map(f);
        let code_len = unit.code.len();
        for (pc, instr) in unit.code.iter().enumerate() {
            let cx_pc = || format!("{cx}, instruction {pc}");
            use Bytecode as B;
            // (pool length, index, pool name, signature to check for type parameters)
            let (len, idx, pool, inst_sig): (Option<usize>, usize, &str, Option<SignatureIndex>) = match instr {
                B::LdConst(i) => (Some(self.constant_pool.len()), i.idx(), "constant", None),
                B::MutBorrowField(i) | B::ImmBorrowField(i) => {
                    (len_of(|m| m.field_handles.len()), i.idx(), "field handle", None)
                }
                B::MutBorrowFieldGeneric(i) | B::ImmBorrowFieldGeneric(i) => (
                    len_of(|m| m.field_instantiations.len()),
                    i.idx(),
                    "field instantiation",
                    m.and_then(|m| m.field_instantiations.get(i.idx())).map(|x| x.type_parameters),
                ),
                B::MutBorrowVariantField(i) | B::ImmBorrowVariantField(i) => {
                    (len_of(|m| m.variant_field_handles.len()), i.idx(), "variant field handle", None)
                }
                B::MutBorrowVariantFieldGeneric(i) | B::ImmBorrowVariantFieldGeneric(i) => (
                    len_of(|m| m.variant_field_instantiations.len()),
                    i.idx(),
                    "variant field instantiation",
                    m.and_then(|m| m.variant_field_instantiations.get(i.idx())).map(|x| x.type_parameters),
                ),
                B::Call(i) | B::PackClosure(i, _) => {
                    (Some(self.function_handles.len()), i.idx(), "function handle", None)
                }
                B::CallGeneric(i) | B::PackClosureGeneric(i, _) => (
                    Some(self.function_instantiations.len()),
                    i.idx(),
                    "function instantiation",
                    self.function_instantiations.get(i.idx()).map(|x| x.type_parameters),
                ),
                B::Pack(i)
                | B::Unpack(i)
                | B::Exists(i)
                | B::ImmBorrowGlobal(i)
                | B::MutBorrowGlobal(i)
                | B::MoveFrom(i)
                | B::MoveTo(i) => (len_of(|m| m.struct_defs.len()), i.idx(), "struct definition", None),
                B::PackGeneric(i)
                | B::UnpackGeneric(i)
                | B::ExistsGeneric(i)
                | B::ImmBorrowGlobalGeneric(i)
                | B::MutBorrowGlobalGeneric(i)
                | B::MoveFromGeneric(i)
                | B::MoveToGeneric(i) => (
                    len_of(|m| m.struct_def_instantiations.len()),
                    i.idx(),
                    "struct instantiation",
                    m.and_then(|m| m.struct_def_instantiations.get(i.idx())).map(|x| x.type_parameters),
                ),
                B::PackVariant(i) | B::UnpackVariant(i) | B::TestVariant(i) => {
                    (len_of(|m| m.struct_variant_handles.len()), i.idx(), "struct variant handle", None)
                }
                B::PackVariantGeneric(i) | B::UnpackVariantGeneric(i) | B::TestVariantGeneric(i) => (
                    len_of(|m| m.struct_variant_instantiations.len()),
                    i.idx(),
                    "struct variant instantiation",
                    m.and_then(|m| m.struct_variant_instantiations.get(i.idx())).map(|x| x.type_parameters),
                ),
                B::SuiPackVariant(i)
                | B::SuiUnpackVariant(i)
                | B::SuiUnpackVariantImmRef(i)
                | B::SuiUnpackVariantMutRef(i) => {
                    (len_of(|m| m.variant_handles.len()), i.idx(), "variant handle", None)
                }
                B::SuiPackVariantGeneric(i)
                | B::SuiUnpackVariantGeneric(i)
                | B::SuiUnpackVariantGenericImmRef(i)
                | B::SuiUnpackVariantGenericMutRef(i) => (
                    len_of(|m| m.variant_instantiation_handles.len()),
                    i.idx(),
                    "variant instantiation handle",
                    m.and_then(|m| {
                        let h = m.variant_instantiation_handles.get(i.idx())?;
                        m.enum_def_instantiations.get(h.enum_def.idx()).map(|x| x.type_parameters)
                    }),
                ),
                B::VariantSwitch(i) => (Some(unit.jump_tables.len()), i.0 as usize, "jump table", None),
                B::BrTrue(t) | B::BrFalse(t) | B::Branch(t) => (Some(code_len), *t as usize, "branch target", None),
                B::CopyLoc(l) | B::MoveLoc(l) | B::StLoc(l) | B::MutBorrowLoc(l) | B::ImmBorrowLoc(l) => {
                    (Some(locals), *l as usize, "local", None)
                }
                B::CallClosure(s)
                | B::VecPack(s, _)
                | B::VecLen(s)
                | B::VecImmBorrow(s)
                | B::VecMutBorrow(s)
                | B::VecPushBack(s)
                | B::VecPopBack(s)
                | B::VecUnpack(s, _)
                | B::VecSwap(s) => (Some(sigs), s.idx(), "signature", Some(*s)),
                _ => continue,
            };
            if let Some(len) = len {
                if idx >= len {
                    return Err(FormatError::new(
                        StatusCode::INDEX_OUT_OF_BOUNDS,
                        at,
                        cx_pc(),
                        format!("{pool} index {idx} out of bounds (table has {len})"),
                    ));
                }
            }
            if let Some(sig) = inst_sig {
                // The instruction goes into the context only on error.
                self.tparams_in_sig(sig, tparams, at, cx).map_err(|mut e| {
                    e.context = cx_pc();
                    e
                })?;
            }
        }
        for (j, jt) in unit.jump_tables.iter().enumerate() {
            let cxj = format!("{cx}, jump table {j}");
            self.index_opt(len_of(|m| m.enum_defs.len()), jt.head_enum.idx(), "enum definition", at, &cxj)?;
            for &target in &jt.jump_table {
                self.index(code_len, target as usize, "branch target", at, &cxj)?;
            }
        }
        Ok(())
    }
}

fn field_count(info: &StructFieldInformation, variant: Option<u16>) -> usize {
    match info {
        StructFieldInformation::Native => 0,
        StructFieldInformation::Declared(fields) => fields.len(),
        StructFieldInformation::DeclaredVariants(variants) => {
            variant.and_then(|v| variants.get(v as usize)).map_or(0, |v| v.fields.len())
        }
    }
}

fn variant_count(info: &StructFieldInformation) -> usize {
    match info {
        StructFieldInformation::DeclaredVariants(v) => v.len(),
        _ => 0,
    }
}
