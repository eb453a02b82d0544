//! Stack usage: within each basic block the operand stack never goes below
//! its height at block entry, never exceeds the limit, and is back to that
//! height at the block's end (Move keeps the stack empty between blocks).

use crate::{binary::FunctionContext, cfg::Cfg, config::VerifierConfig, error::VerifyResult, types::struct_fields};
use movejit_format::{Bytecode, CompiledModule, SignatureToken, StatusCode};

pub(crate) fn verify(m: &CompiledModule, config: &VerifierConfig, f: &FunctionContext, cfg: &Cfg) -> VerifyResult {
    for id in cfg.block_ids() {
        let block = cfg.block(id);
        let mut height: u64 = 0;
        let mut pushes: u64 = 0;
        for pc in block.start..=block.end {
            let (pops, push) = effect(m, f, &f.code.code[pc as usize])
                .ok_or_else(|| f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, pc))?;
            pushes = pushes.saturating_add(push);
            if config.max_push_size.is_some_and(|l| pushes > l as u64) {
                return Err(f.err(StatusCode::VALUE_STACK_PUSH_OVERFLOW, block.start));
            }
            if height < pops {
                return Err(f.err(StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK, block.start));
            }
            height = (height - pops).saturating_add(push);
            if height > config.max_value_stack_size as u64 {
                return Err(f.err(StatusCode::VALUE_STACK_OVERFLOW, block.start));
            }
        }
        if height != 0 {
            return Err(f.err(StatusCode::POSITIVE_STACK_SIZE_AT_BLOCK_END, block.start));
        }
    }
    Ok(())
}

/// (pops, pushes) of one instruction; None if an operand is inconsistent
/// (which earlier passes reject).
pub(crate) fn effect(m: &CompiledModule, f: &FunctionContext, instr: &Bytecode) -> Option<(u64, u64)> {
    use Bytecode::*;
    let sig_len = |i: movejit_format::SignatureIndex| m.signatures.get(i.idx()).map(|s| s.0.len() as u64);
    let call = |h: movejit_format::FunctionHandleIndex| {
        let fh = m.function_handles.get(h.idx())?;
        Some((sig_len(fh.parameters)?, sig_len(fh.return_)?))
    };
    let fields = |d: movejit_format::StructDefinitionIndex, v: Option<u16>| {
        let def = m.struct_defs.get(d.idx())?;
        // A native struct has no fields to pack; type safety reports it.
        Some(struct_fields(def, v).map(|f| f.len() as u64).unwrap_or(0))
    };
    let sui_fields = |e: movejit_format::EnumDefinitionIndex, v: u16| {
        Some(m.enum_defs.get(e.idx())?.variants.get(v as usize)?.fields.len() as u64)
    };
    Some(match instr {
        Pop | BrTrue(_) | BrFalse(_) | StLoc(_) | Abort | VariantSwitch(_) => (1, 0),
        LdU8(_) | LdU16(_) | LdU32(_) | LdU64(_) | LdU128(_) | LdU256(_) | LdI8(_) | LdI16(_) | LdI32(_) | LdI64(_)
        | LdI128(_) | LdI256(_) | LdTrue | LdFalse | LdConst(_) | CopyLoc(_) | MoveLoc(_) | MutBorrowLoc(_)
        | ImmBorrowLoc(_) => (0, 1),
        Not
        | Negate
        | FreezeRef
        | ReadRef
        | Exists(_)
        | ExistsGeneric(_)
        | MutBorrowGlobal(_)
        | MutBorrowGlobalGeneric(_)
        | ImmBorrowGlobal(_)
        | ImmBorrowGlobalGeneric(_)
        | MutBorrowField(_)
        | MutBorrowFieldGeneric(_)
        | ImmBorrowField(_)
        | ImmBorrowFieldGeneric(_)
        | MutBorrowVariantField(_)
        | MutBorrowVariantFieldGeneric(_)
        | ImmBorrowVariantField(_)
        | ImmBorrowVariantFieldGeneric(_)
        | MoveFrom(_)
        | MoveFromGeneric(_)
        | CastU8
        | CastU16
        | CastU32
        | CastU64
        | CastU128
        | CastU256
        | CastI8
        | CastI16
        | CastI32
        | CastI64
        | CastI128
        | CastI256
        | VecLen(_)
        | VecPopBack(_)
        | TestVariant(_)
        | TestVariantGeneric(_) => (1, 1),
        Add | Sub | Mul | Mod | Div | BitOr | BitAnd | Xor | Shl | Shr | Or | And | Eq | Neq | Lt | Gt | Le | Ge
        | VecImmBorrow(_) | VecMutBorrow(_) => (2, 1),
        MoveTo(_) | MoveToGeneric(_) | WriteRef | VecPushBack(_) | AbortMsg => (2, 0),
        VecSwap(_) => (3, 0),
        Branch(_) | Nop => (0, 0),
        Ret => (f.returns.len() as u64, 0),
        Call(h) => call(*h)?,
        CallGeneric(i) => call(m.function_instantiations.get(i.idx())?.handle)?,
        PackClosure(h, mask) => captured(m, *h, *mask)?,
        PackClosureGeneric(i, mask) => captured(m, m.function_instantiations.get(i.idx())?.handle, *mask)?,
        CallClosure(s) => match m.signatures.get(s.idx())?.0.first()? {
            SignatureToken::Function(p, r, _) => (p.len() as u64 + 1, r.len() as u64),
            _ => return None,
        },
        Pack(d) => (fields(*d, None)?, 1),
        Unpack(d) => (1, fields(*d, None)?),
        PackGeneric(i) => (fields(m.struct_def_instantiations.get(i.idx())?.def, None)?, 1),
        UnpackGeneric(i) => (1, fields(m.struct_def_instantiations.get(i.idx())?.def, None)?),
        PackVariant(h) => {
            let h = m.struct_variant_handles.get(h.idx())?;
            (fields(h.struct_index, Some(h.variant))?, 1)
        }
        UnpackVariant(h) => {
            let h = m.struct_variant_handles.get(h.idx())?;
            (1, fields(h.struct_index, Some(h.variant))?)
        }
        PackVariantGeneric(i) => {
            let h = m.struct_variant_handles.get(m.struct_variant_instantiations.get(i.idx())?.handle.idx())?;
            (fields(h.struct_index, Some(h.variant))?, 1)
        }
        UnpackVariantGeneric(i) => {
            let h = m.struct_variant_handles.get(m.struct_variant_instantiations.get(i.idx())?.handle.idx())?;
            (1, fields(h.struct_index, Some(h.variant))?)
        }
        VecPack(_, n) => (*n, 1),
        VecUnpack(_, n) => (1, *n),
        SuiPackVariant(h) => {
            let h = m.variant_handles.get(h.idx())?;
            (sui_fields(h.enum_def, h.variant)?, 1)
        }
        SuiUnpackVariant(h) | SuiUnpackVariantImmRef(h) | SuiUnpackVariantMutRef(h) => {
            let h = m.variant_handles.get(h.idx())?;
            (1, sui_fields(h.enum_def, h.variant)?)
        }
        SuiPackVariantGeneric(h) => {
            let h = m.variant_instantiation_handles.get(h.idx())?;
            let def = m.enum_def_instantiations.get(h.enum_def.idx())?.def;
            (sui_fields(def, h.variant)?, 1)
        }
        SuiUnpackVariantGeneric(h) | SuiUnpackVariantGenericImmRef(h) | SuiUnpackVariantGenericMutRef(h) => {
            let h = m.variant_instantiation_handles.get(h.idx())?;
            let def = m.enum_def_instantiations.get(h.enum_def.idx())?.def;
            (1, sui_fields(def, h.variant)?)
        }
    })
}

fn captured(
    m: &CompiledModule,
    h: movejit_format::FunctionHandleIndex,
    mask: movejit_format::ClosureMask,
) -> Option<(u64, u64)> {
    let fh = m.function_handles.get(h.idx())?;
    let n = m.signatures.get(fh.parameters.idx())?.0.len();
    let captured = (0..n).filter(|i| mask.is_captured(*i)).count();
    Some((captured as u64, 1))
}
