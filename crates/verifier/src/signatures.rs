//! Signatures: every type is well formed (references only at the top of
//! parameters, returns and locals; never inside vectors, fields or type
//! arguments), every instantiation has the right arity and satisfies the
//! ability constraints of what it instantiates, struct fields have the
//! abilities their struct declares, and phantom type parameters appear only
//! in phantom positions.

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
    types::requires,
};
use movejit_format::{
    AbilitySet, Bytecode, CompiledModule, FieldDefinition, SignatureIndex, SignatureToken as ST, StatusCode,
    StructDefinitionIndex, StructFieldInformation, StructTypeParameter,
};
use rustc_hash::FxHashSet;

const NONE: AbilitySet = AbilitySet::EMPTY;
const KEY: AbilitySet = AbilitySet(AbilitySet::KEY);

struct Checker<'a> {
    m: &'a CompiledModule,
    fun_types: bool,
}

/// Type parameter context: None accepts any use (the contextless checks).
type Ctx<'c> = Option<&'c [AbilitySet]>;

impl Checker<'_> {
    fn check_ty(&self, ty: &ST, allow_ref: bool, required: AbilitySet, ctx: Ctx) -> Result<(), StatusCode> {
        let has =
            |abs: AbilitySet| if abs.contains(required) { Ok(()) } else { Err(StatusCode::CONSTRAINT_NOT_SATISFIED) };
        match ty {
            ST::TypeParameter(i) => match ctx {
                None => Ok(()),
                Some(c) => match c.get(*i as usize) {
                    Some(a) => has(*a),
                    None => Err(StatusCode::INDEX_OUT_OF_BOUNDS),
                },
            },
            ST::Bool
            | ST::U8
            | ST::U16
            | ST::U32
            | ST::U64
            | ST::U128
            | ST::U256
            | ST::I8
            | ST::I16
            | ST::I32
            | ST::I64
            | ST::I128
            | ST::I256
            | ST::Address => has(AbilitySet::PRIMITIVES),
            ST::Signer => has(AbilitySet::SIGNER),
            ST::Reference(inner) | ST::MutableReference(inner) => {
                if !allow_ref {
                    return Err(StatusCode::INVALID_SIGNATURE_TOKEN);
                }
                has(AbilitySet::REFERENCES)?;
                self.check_ty(inner, false, NONE, ctx)
            }
            ST::Vector(inner) => {
                has(AbilitySet::VECTOR)?;
                self.check_ty(inner, false, requires(required), ctx)
            }
            ST::Function(params, results, abs) => {
                has(*abs)?;
                if self.fun_types {
                    for t in params.iter().chain(results) {
                        self.check_ty(t, true, NONE, ctx)?;
                    }
                }
                Ok(())
            }
            ST::Struct(h) => {
                let sh = self.m.struct_handles.get(h.idx()).ok_or(StatusCode::INDEX_OUT_OF_BOUNDS)?;
                has(sh.abilities)
            }
            ST::StructInstantiation(h, args) => {
                let sh = self.m.struct_handles.get(h.idx()).ok_or(StatusCode::INDEX_OUT_OF_BOUNDS)?;
                has(sh.abilities)?;
                if sh.type_parameters.len() != args.len() {
                    return Err(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH);
                }
                for (p, a) in sh.type_parameters.iter().zip(args) {
                    let req = if p.is_phantom { p.constraints } else { p.constraints.union(requires(required)) };
                    self.check_ty(a, false, req, ctx)?;
                }
                Ok(())
            }
        }
    }

    fn sig(&self, i: SignatureIndex) -> &[ST] {
        &self.m.signatures[i.idx()].0
    }

    fn check_sig(&self, i: SignatureIndex, allow_ref: bool, ctx: Ctx) -> Result<(), StatusCode> {
        self.sig(i).iter().try_for_each(|t| self.check_ty(t, allow_ref, NONE, ctx))
    }

    /// Type arguments `args` for a definition with `params`, where the
    /// instantiated thing must have `required`.
    fn check_struct_args(
        &self,
        def: StructDefinitionIndex,
        args: SignatureIndex,
        required: AbilitySet,
        ctx: Ctx,
    ) -> Result<(), StatusCode> {
        let h = self.m.struct_defs[def.idx()].struct_handle;
        self.check_datatype_args(h, args, required, ctx)
    }

    fn check_datatype_args(
        &self,
        h: movejit_format::StructHandleIndex,
        args: SignatureIndex,
        required: AbilitySet,
        ctx: Ctx,
    ) -> Result<(), StatusCode> {
        let sh = &self.m.struct_handles[h.idx()];
        let args = self.sig(args);
        if sh.type_parameters.len() != args.len() {
            return Err(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH);
        }
        if !sh.abilities.contains(required) {
            return Err(StatusCode::CONSTRAINT_NOT_SATISFIED);
        }
        for (p, a) in sh.type_parameters.iter().zip(args) {
            if a.is_reference() {
                return Err(StatusCode::INVALID_SIGNATURE_TOKEN);
            }
            let req = if p.is_phantom { p.constraints } else { p.constraints.union(requires(required)) };
            self.check_ty(a, false, req, ctx)?;
        }
        Ok(())
    }

    fn check_fun_args(
        &self,
        h: movejit_format::FunctionHandleIndex,
        args: SignatureIndex,
        ctx: Ctx,
    ) -> Result<(), StatusCode> {
        let fh = &self.m.function_handles[h.idx()];
        let args = self.sig(args);
        if fh.type_parameters.len() != args.len() {
            return Err(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH);
        }
        for (c, a) in fh.type_parameters.iter().zip(args) {
            self.check_ty(a, false, *c, ctx)?;
        }
        Ok(())
    }

    fn check_fields<'f>(
        &self,
        tparams: &[StructTypeParameter],
        abilities: AbilitySet,
        fields: impl Iterator<Item = &'f FieldDefinition>,
    ) -> Result<(), StatusCode> {
        let ctx: Vec<AbilitySet> = tparams.iter().map(|p| p.constraints).collect();
        let all: Vec<AbilitySet> = vec![AbilitySet::ALL; tparams.len()];
        let required = requires(abilities);
        for f in fields {
            self.check_ty(&f.signature, false, NONE, Some(&ctx))?;
            self.check_ty(&f.signature, false, required, Some(&all))
                .map_err(|_| StatusCode::FIELD_MISSING_TYPE_ABILITY)?;
            check_phantom(self.m, tparams, false, &f.signature)?;
        }
        Ok(())
    }

    fn check_code(&self, fi: usize) -> VerifyResult {
        let def = &self.m.function_defs[fi];
        let Some(code) = &def.code else { return Ok(()) };
        let fh = &self.m.function_handles[def.function.idx()];
        let ctx = Some(&fh.type_parameters[..]);
        let m = self.m;
        self.check_sig(code.locals, true, ctx).map_err(|s| VerifyError::at_function(s, fi as u16))?;
        let mut seen = FxHashSet::default();
        for (off, instr) in code.code.iter().enumerate() {
            use Bytecode::*;
            if !seen.insert(instr) {
                continue;
            }
            let r = match instr {
                CallGeneric(i) | PackClosureGeneric(i, _) => {
                    let inst = &m.function_instantiations[i.idx()];
                    self.check_fun_args(inst.handle, inst.type_parameters, ctx)
                }
                PackGeneric(i) | UnpackGeneric(i) => {
                    let inst = &m.struct_def_instantiations[i.idx()];
                    self.check_struct_args(inst.def, inst.type_parameters, NONE, ctx)
                }
                ExistsGeneric(i)
                | MoveFromGeneric(i)
                | MoveToGeneric(i)
                | ImmBorrowGlobalGeneric(i)
                | MutBorrowGlobalGeneric(i) => {
                    let inst = &m.struct_def_instantiations[i.idx()];
                    self.check_struct_args(inst.def, inst.type_parameters, KEY, ctx)
                }
                ImmBorrowFieldGeneric(i) | MutBorrowFieldGeneric(i) => {
                    let inst = &m.field_instantiations[i.idx()];
                    self.check_struct_args(m.field_handles[inst.handle.idx()].owner, inst.type_parameters, NONE, ctx)
                }
                ImmBorrowVariantFieldGeneric(i) | MutBorrowVariantFieldGeneric(i) => {
                    let inst = &m.variant_field_instantiations[i.idx()];
                    self.check_struct_args(
                        m.variant_field_handles[inst.handle.idx()].struct_index,
                        inst.type_parameters,
                        NONE,
                        ctx,
                    )
                }
                PackVariantGeneric(i) | UnpackVariantGeneric(i) | TestVariantGeneric(i) => {
                    let inst = &m.struct_variant_instantiations[i.idx()];
                    self.check_struct_args(
                        m.struct_variant_handles[inst.handle.idx()].struct_index,
                        inst.type_parameters,
                        NONE,
                        ctx,
                    )
                }
                SuiPackVariantGeneric(h)
                | SuiUnpackVariantGeneric(h)
                | SuiUnpackVariantGenericImmRef(h)
                | SuiUnpackVariantGenericMutRef(h) => {
                    let inst = &m.enum_def_instantiations[m.variant_instantiation_handles[h.idx()].enum_def.idx()];
                    self.check_datatype_args(m.enum_defs[inst.def.idx()].enum_handle, inst.type_parameters, NONE, ctx)
                }
                CallClosure(s) => match self.sig(*s) {
                    [ST::Function(..)] => self.check_sig(*s, false, ctx),
                    _ => Err(StatusCode::CLOSURE_CALL_REQUIRES_FUNCTION),
                },
                VecPack(s, _)
                | VecLen(s)
                | VecImmBorrow(s)
                | VecMutBorrow(s)
                | VecPushBack(s)
                | VecPopBack(s)
                | VecUnpack(s, _)
                | VecSwap(s) => match self.sig(*s) {
                    [t] if t.is_reference() => Err(StatusCode::INVALID_SIGNATURE_TOKEN),
                    [_] => self.check_sig(*s, false, ctx),
                    _ => Err(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH),
                },
                _ => Ok(()),
            };
            r.map_err(|s| VerifyError::at_code(s, fi as u16, off as u16))?;
        }
        Ok(())
    }
}

/// A phantom type parameter may appear only as a phantom argument.
fn check_phantom(
    m: &CompiledModule,
    tparams: &[StructTypeParameter],
    phantom_pos: bool,
    ty: &ST,
) -> Result<(), StatusCode> {
    match ty {
        ST::Vector(t) => check_phantom(m, tparams, false, t),
        ST::Function(p, r, _) => p.iter().chain(r).try_for_each(|t| check_phantom(m, tparams, false, t)),
        ST::StructInstantiation(h, args) => {
            let sh = &m.struct_handles[h.idx()];
            for (i, a) in args.iter().enumerate() {
                let ph = sh.type_parameters.get(i).is_some_and(|p| p.is_phantom);
                check_phantom(m, tparams, ph, a)?;
            }
            Ok(())
        }
        ST::TypeParameter(i) => {
            if tparams.get(*i as usize).is_some_and(|p| p.is_phantom) && !phantom_pos {
                Err(StatusCode::INVALID_PHANTOM_TYPE_PARAM_POSITION)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

pub(crate) fn verify_module(m: &CompiledModule, config: &VerifierConfig) -> VerifyResult {
    let c = Checker { m, fun_types: config.check_function_type_signatures };
    let module = |s: StatusCode| VerifyError::module(s);
    for i in 0..m.signatures.len() {
        c.check_sig(SignatureIndex(i as u16), true, None).map_err(module)?;
    }
    for inst in &m.function_instantiations {
        c.check_fun_args(inst.handle, inst.type_parameters, None).map_err(module)?;
    }
    for inst in &m.struct_def_instantiations {
        c.check_struct_args(inst.def, inst.type_parameters, NONE, None).map_err(module)?;
    }
    for inst in &m.field_instantiations {
        c.check_struct_args(m.field_handles[inst.handle.idx()].owner, inst.type_parameters, NONE, None)
            .map_err(module)?;
    }
    for inst in &m.struct_variant_instantiations {
        c.check_struct_args(m.struct_variant_handles[inst.handle.idx()].struct_index, inst.type_parameters, NONE, None)
            .map_err(module)?;
    }
    for inst in &m.variant_field_instantiations {
        c.check_struct_args(m.variant_field_handles[inst.handle.idx()].struct_index, inst.type_parameters, NONE, None)
            .map_err(module)?;
    }
    for inst in &m.enum_def_instantiations {
        c.check_datatype_args(m.enum_defs[inst.def.idx()].enum_handle, inst.type_parameters, NONE, None)
            .map_err(module)?;
    }
    for fh in &m.function_handles {
        let ctx = Some(&fh.type_parameters[..]);
        c.check_sig(fh.parameters, true, ctx).map_err(module)?;
        c.check_sig(fh.return_, true, ctx).map_err(module)?;
    }
    for fi in 0..m.function_defs.len() {
        c.check_code(fi)?;
    }
    for (i, d) in m.struct_defs.iter().enumerate() {
        let sh = &m.struct_handles[d.struct_handle.idx()];
        let r = match &d.field_information {
            StructFieldInformation::Native => Ok(()),
            StructFieldInformation::Declared(f) => c.check_fields(&sh.type_parameters, sh.abilities, f.iter()),
            StructFieldInformation::DeclaredVariants(v) => {
                c.check_fields(&sh.type_parameters, sh.abilities, v.iter().flat_map(|v| v.fields.iter()))
            }
        };
        r.map_err(|s| VerifyError::at_struct(s, i as u16))?;
    }
    for (i, d) in m.enum_defs.iter().enumerate() {
        let sh = &m.struct_handles[d.enum_handle.idx()];
        c.check_fields(&sh.type_parameters, sh.abilities, d.variants.iter().flat_map(|v| v.fields.iter()))
            .map_err(|s| VerifyError::at_struct(s, i as u16))?;
    }
    Ok(())
}
