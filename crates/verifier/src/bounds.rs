//! Bounds: every index in every table points at an existing entry, type
//! parameters are in range for their context, struct arities match, and code
//! operands (locals, branch targets, jump tables) are in range.
//!
//! The decoder already bounds-checks what it reads; this pass makes the
//! verifier safe on models built any other way (mutation tests, fuzzing),
//! so that every later pass may index tables directly.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{Bytecode, CompiledModule, SignatureToken as ST, StatusCode, StructFieldInformation};

const OOB: StatusCode = StatusCode::INDEX_OUT_OF_BOUNDS;

fn chk(i: usize, len: usize) -> VerifyResult {
    if i < len {
        Ok(())
    } else {
        Err(VerifyError::module(OOB).with_message(format!("index {i} out of bounds (len {len})")))
    }
}

/// Checks a type's handles and arities; returns how many type parameters
/// it needs (highest index + 1).
fn type_needs(m: &CompiledModule, ty: &ST) -> VerifyResult<usize> {
    let mut need = 0usize;
    let mut stack = vec![ty];
    while let Some(t) = stack.pop() {
        match t {
            ST::Struct(h) => {
                chk(h.idx(), m.struct_handles.len())?;
                if !m.struct_handles[h.idx()].type_parameters.is_empty() {
                    return Err(VerifyError::module(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH));
                }
            }
            ST::StructInstantiation(h, args) => {
                chk(h.idx(), m.struct_handles.len())?;
                if m.struct_handles[h.idx()].type_parameters.len() != args.len() {
                    return Err(VerifyError::module(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH));
                }
                stack.extend(args.iter());
            }
            ST::TypeParameter(i) => need = need.max(*i as usize + 1),
            ST::Vector(i) | ST::Reference(i) | ST::MutableReference(i) => stack.push(i),
            ST::Function(p, r, _) => {
                stack.extend(p.iter());
                stack.extend(r.iter());
            }
            _ => {}
        }
    }
    Ok(need)
}

/// Checks a type against `num_tparams` type parameters (None: any).
fn chk_type(m: &CompiledModule, ty: &ST, num_tparams: Option<usize>) -> VerifyResult {
    let need = type_needs(m, ty)?;
    match num_tparams {
        Some(n) if need > n => Err(VerifyError::module(OOB).with_message("type parameter out of range")),
        _ => Ok(()),
    }
}

/// Per signature: how many type parameters it needs (each checked once).
struct SigNeeds(Vec<usize>);

impl SigNeeds {
    fn new(m: &CompiledModule) -> VerifyResult<SigNeeds> {
        let mut out = Vec::with_capacity(m.signatures.len());
        for s in &m.signatures {
            let mut need = 0;
            for t in &s.0 {
                need = need.max(type_needs(m, t)?);
            }
            out.push(need);
        }
        Ok(SigNeeds(out))
    }
    fn chk(&self, idx: usize, num_tparams: Option<usize>) -> VerifyResult {
        chk(idx, self.0.len())?;
        match num_tparams {
            Some(n) if self.0[idx] > n => Err(VerifyError::module(OOB).with_message("type parameter out of range")),
            _ => Ok(()),
        }
    }
}

fn field_count(info: &StructFieldInformation, variant: Option<u16>) -> Option<usize> {
    match (info, variant) {
        (StructFieldInformation::Declared(f), None) => Some(f.len()),
        (StructFieldInformation::DeclaredVariants(v), Some(i)) => v.get(i as usize).map(|v| v.fields.len()),
        _ => None,
    }
}

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let ids = m.identifiers.len();
    let addrs = m.address_identifiers.len();
    let mhs = m.module_handles.len();
    let shs = m.struct_handles.len();
    let fhs = m.function_handles.len();
    let sdefs = m.struct_defs.len();
    chk(m.self_module_handle_idx.idx(), mhs)?;
    // Struct handles first: signature checks read them.
    for h in &m.struct_handles {
        chk(h.module.idx(), mhs)?;
        chk(h.name.idx(), ids)?;
    }
    let sigs = SigNeeds::new(m)?;
    let chk_sig = |_: &CompiledModule, idx: usize, n: Option<usize>| sigs.chk(idx, n);
    for h in m.module_handles.iter().chain(&m.friend_decls) {
        chk(h.address.idx(), addrs)?;
        chk(h.name.idx(), ids)?;
    }
    for h in &m.function_handles {
        chk(h.module.idx(), mhs)?;
        chk(h.name.idx(), ids)?;
        let n = Some(h.type_parameters.len());
        chk_sig(m, h.parameters.idx(), n)?;
        chk_sig(m, h.return_.idx(), n)?;
    }

    for c in &m.constant_pool {
        chk_type(m, &c.type_, Some(0))?;
    }
    for d in &m.struct_defs {
        chk(d.struct_handle.idx(), shs)?;
        let n = Some(m.struct_handles[d.struct_handle.idx()].type_parameters.len());
        let fields: Vec<_> = match &d.field_information {
            StructFieldInformation::Native => vec![],
            StructFieldInformation::Declared(f) => f.iter().collect(),
            StructFieldInformation::DeclaredVariants(v) => {
                for var in v {
                    chk(var.name.idx(), ids)?;
                }
                v.iter().flat_map(|v| v.fields.iter()).collect()
            }
        };
        for f in fields {
            chk(f.name.idx(), ids)?;
            chk_type(m, &f.signature, n)?;
        }
    }
    for d in &m.enum_defs {
        chk(d.enum_handle.idx(), shs)?;
        let n = Some(m.struct_handles[d.enum_handle.idx()].type_parameters.len());
        for v in &d.variants {
            chk(v.name.idx(), ids)?;
            for f in &v.fields {
                chk(f.name.idx(), ids)?;
                chk_type(m, &f.signature, n)?;
            }
        }
    }
    for h in &m.field_handles {
        chk(h.owner.idx(), sdefs)?;
        let n = field_count(&m.struct_defs[h.owner.idx()].field_information, None).unwrap_or(0);
        chk(h.field as usize, n)?;
    }
    for i in &m.struct_def_instantiations {
        chk(i.def.idx(), sdefs)?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for i in &m.function_instantiations {
        chk(i.handle.idx(), fhs)?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for i in &m.field_instantiations {
        chk(i.handle.idx(), m.field_handles.len())?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for h in &m.struct_variant_handles {
        chk(h.struct_index.idx(), sdefs)?;
        if field_count(&m.struct_defs[h.struct_index.idx()].field_information, Some(h.variant)).is_none() {
            return Err(VerifyError::module(OOB));
        }
    }
    for i in &m.struct_variant_instantiations {
        chk(i.handle.idx(), m.struct_variant_handles.len())?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for h in &m.variant_field_handles {
        chk(h.struct_index.idx(), sdefs)?;
        let info = &m.struct_defs[h.struct_index.idx()].field_information;
        for v in &h.variants {
            match field_count(info, Some(*v)) {
                Some(n) => chk(h.field as usize, n)?,
                None => return Err(VerifyError::module(OOB)),
            }
        }
    }
    for i in &m.variant_field_instantiations {
        chk(i.handle.idx(), m.variant_field_handles.len())?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for i in &m.enum_def_instantiations {
        chk(i.def.idx(), m.enum_defs.len())?;
        chk_sig(m, i.type_parameters.idx(), None)?;
    }
    for h in &m.variant_handles {
        chk(h.enum_def.idx(), m.enum_defs.len())?;
        chk(h.variant as usize, m.enum_defs[h.enum_def.idx()].variants.len())?;
    }
    for h in &m.variant_instantiation_handles {
        chk(h.enum_def.idx(), m.enum_def_instantiations.len())?;
        let def = m.enum_def_instantiations[h.enum_def.idx()].def;
        chk(h.variant as usize, m.enum_defs[def.idx()].variants.len())?;
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        let at_fn = |e: VerifyError| VerifyError {
            location: crate::Location::Function { index: fi as u16, code_offset: None },
            ..e
        };
        chk(f.function.idx(), fhs).map_err(at_fn)?;
        for a in &f.acquires_global_resources {
            chk(a.idx(), sdefs).map_err(at_fn)?;
        }
        if let Some(code) = &f.code {
            verify_code(m, &sigs, fi as u16, f.function.idx(), code)?;
        }
    }
    Ok(())
}

fn verify_code(
    m: &CompiledModule,
    sigs: &SigNeeds,
    fi: u16,
    handle: usize,
    code: &movejit_format::CodeUnit,
) -> VerifyResult {
    let chk_sig = |_: &CompiledModule, idx: usize, n: Option<usize>| sigs.chk(idx, n);
    let fh = &m.function_handles[handle];
    let ntp = Some(fh.type_parameters.len());
    let at = |off: usize| move |e: VerifyError| VerifyError::at_code(e.status, fi, off as u16).with_message(e.message);
    chk_sig(m, code.locals.idx(), ntp).map_err(at(0))?;
    let num_locals = m.signatures[fh.parameters.idx()].0.len() + m.signatures[code.locals.idx()].0.len();
    if num_locals > 255 {
        return Err(VerifyError::at_function(StatusCode::TOO_MANY_LOCALS, fi));
    }
    let len = code.code.len();
    if len > u16::MAX as usize {
        return Err(VerifyError::at_function(StatusCode::INDEX_OUT_OF_BOUNDS, fi));
    }
    for jt in &code.jump_tables {
        chk(jt.head_enum.idx(), m.enum_defs.len()).map_err(at(0))?;
        for t in &jt.jump_table {
            chk(*t as usize, len).map_err(at(0))?;
        }
    }
    use Bytecode::*;
    for (off, instr) in code.code.iter().enumerate() {
        let r = match instr {
            BrTrue(t) | BrFalse(t) | Branch(t) => chk(*t as usize, len),
            LdConst(i) => chk(i.idx(), m.constant_pool.len()),
            CopyLoc(l) | MoveLoc(l) | StLoc(l) | MutBorrowLoc(l) | ImmBorrowLoc(l) => chk(*l as usize, num_locals),
            MutBorrowField(h) | ImmBorrowField(h) => chk(h.idx(), m.field_handles.len()),
            MutBorrowFieldGeneric(i) | ImmBorrowFieldGeneric(i) => chk(i.idx(), m.field_instantiations.len())
                .and_then(|_| chk_sig(m, m.field_instantiations[i.idx()].type_parameters.idx(), ntp)),
            Call(h) | PackClosure(h, _) => chk(h.idx(), m.function_handles.len()),
            CallGeneric(i) | PackClosureGeneric(i, _) => chk(i.idx(), m.function_instantiations.len())
                .and_then(|_| chk_sig(m, m.function_instantiations[i.idx()].type_parameters.idx(), ntp)),
            Pack(d) | Unpack(d) | Exists(d) | MutBorrowGlobal(d) | ImmBorrowGlobal(d) | MoveFrom(d) | MoveTo(d) => {
                chk(d.idx(), m.struct_defs.len())
            }
            PackGeneric(i)
            | UnpackGeneric(i)
            | ExistsGeneric(i)
            | MutBorrowGlobalGeneric(i)
            | ImmBorrowGlobalGeneric(i)
            | MoveFromGeneric(i)
            | MoveToGeneric(i) => chk(i.idx(), m.struct_def_instantiations.len())
                .and_then(|_| chk_sig(m, m.struct_def_instantiations[i.idx()].type_parameters.idx(), ntp)),
            VecPack(s, _)
            | VecLen(s)
            | VecImmBorrow(s)
            | VecMutBorrow(s)
            | VecPushBack(s)
            | VecPopBack(s)
            | VecUnpack(s, _)
            | VecSwap(s)
            | CallClosure(s) => chk_sig(m, s.idx(), ntp),
            ImmBorrowVariantField(h) | MutBorrowVariantField(h) => chk(h.idx(), m.variant_field_handles.len()),
            ImmBorrowVariantFieldGeneric(i) | MutBorrowVariantFieldGeneric(i) => {
                chk(i.idx(), m.variant_field_instantiations.len())
                    .and_then(|_| chk_sig(m, m.variant_field_instantiations[i.idx()].type_parameters.idx(), ntp))
            }
            PackVariant(h) | UnpackVariant(h) | TestVariant(h) => chk(h.idx(), m.struct_variant_handles.len()),
            PackVariantGeneric(i) | UnpackVariantGeneric(i) | TestVariantGeneric(i) => {
                chk(i.idx(), m.struct_variant_instantiations.len())
                    .and_then(|_| chk_sig(m, m.struct_variant_instantiations[i.idx()].type_parameters.idx(), ntp))
            }
            SuiPackVariant(h) | SuiUnpackVariant(h) | SuiUnpackVariantImmRef(h) | SuiUnpackVariantMutRef(h) => {
                chk(h.idx(), m.variant_handles.len())
            }
            SuiPackVariantGeneric(h)
            | SuiUnpackVariantGeneric(h)
            | SuiUnpackVariantGenericImmRef(h)
            | SuiUnpackVariantGenericMutRef(h) => chk(h.idx(), m.variant_instantiation_handles.len()).and_then(|_| {
                let inst = m.variant_instantiation_handles[h.idx()].enum_def;
                chk_sig(m, m.enum_def_instantiations[inst.idx()].type_parameters.idx(), ntp)
            }),
            VariantSwitch(j) => chk(j.idx(), code.jump_tables.len()),
            _ => Ok(()),
        };
        r.map_err(at(off))?;
    }
    Ok(())
}
