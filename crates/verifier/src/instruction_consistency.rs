//! Instruction consistency: generic instructions name generic members and
//! non-generic ones non-generic members; closure masks fit the function;
//! vector pack/unpack counts are in range.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{Bytecode, CompiledModule, FunctionHandleIndex, StatusCode, StructDefinitionIndex};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for (fi, f) in m.function_defs.iter().enumerate() {
        let Some(code) = &f.code else { continue };
        for (off, instr) in code.code.iter().enumerate() {
            check(m, instr).map_err(|s| VerifyError::at_code(s, fi as u16, off as u16))?;
        }
    }
    Ok(())
}

fn check(m: &CompiledModule, instr: &Bytecode) -> Result<(), StatusCode> {
    use Bytecode::*;
    let struct_op = |d: StructDefinitionIndex, generic: bool| {
        let h = m.struct_defs[d.idx()].struct_handle;
        expect(m.struct_handles[h.idx()].type_parameters.is_empty() != generic)
    };
    let fun_op = |h: FunctionHandleIndex, generic: bool| {
        expect(m.function_handles[h.idx()].type_parameters.is_empty() != generic)
    };
    let enum_op = |e: movejit_format::EnumDefinitionIndex, generic: bool| {
        let h = m.enum_defs[e.idx()].enum_handle;
        expect(m.struct_handles[h.idx()].type_parameters.is_empty() != generic)
    };
    match instr {
        MutBorrowField(h) | ImmBorrowField(h) => struct_op(m.field_handles[h.idx()].owner, false),
        MutBorrowFieldGeneric(i) | ImmBorrowFieldGeneric(i) => {
            struct_op(m.field_handles[m.field_instantiations[i.idx()].handle.idx()].owner, true)
        }
        MutBorrowVariantField(h) | ImmBorrowVariantField(h) => {
            struct_op(m.variant_field_handles[h.idx()].struct_index, false)
        }
        MutBorrowVariantFieldGeneric(i) | ImmBorrowVariantFieldGeneric(i) => {
            struct_op(m.variant_field_handles[m.variant_field_instantiations[i.idx()].handle.idx()].struct_index, true)
        }
        Call(h) => fun_op(*h, false),
        CallGeneric(i) => fun_op(m.function_instantiations[i.idx()].handle, true),
        PackClosure(h, mask) => {
            fun_op(*h, false)?;
            closure_mask(m, *h, *mask)
        }
        PackClosureGeneric(i, mask) => {
            let h = m.function_instantiations[i.idx()].handle;
            fun_op(h, true)?;
            closure_mask(m, h, *mask)
        }
        Pack(d) | Unpack(d) | MutBorrowGlobal(d) | ImmBorrowGlobal(d) | Exists(d) | MoveFrom(d) | MoveTo(d) => {
            struct_op(*d, false)
        }
        PackGeneric(i)
        | UnpackGeneric(i)
        | MutBorrowGlobalGeneric(i)
        | ImmBorrowGlobalGeneric(i)
        | ExistsGeneric(i)
        | MoveFromGeneric(i)
        | MoveToGeneric(i) => struct_op(m.struct_def_instantiations[i.idx()].def, true),
        PackVariant(h) | UnpackVariant(h) | TestVariant(h) => {
            struct_op(m.struct_variant_handles[h.idx()].struct_index, false)
        }
        PackVariantGeneric(i) | UnpackVariantGeneric(i) | TestVariantGeneric(i) => struct_op(
            m.struct_variant_handles[m.struct_variant_instantiations[i.idx()].handle.idx()].struct_index,
            true,
        ),
        SuiPackVariant(h) | SuiUnpackVariant(h) | SuiUnpackVariantImmRef(h) | SuiUnpackVariantMutRef(h) => {
            enum_op(m.variant_handles[h.idx()].enum_def, false)
        }
        SuiPackVariantGeneric(h)
        | SuiUnpackVariantGeneric(h)
        | SuiUnpackVariantGenericImmRef(h)
        | SuiUnpackVariantGenericMutRef(h) => {
            let inst = m.variant_instantiation_handles[h.idx()].enum_def;
            enum_op(m.enum_def_instantiations[inst.idx()].def, true)
        }
        VecPack(_, n) | VecUnpack(_, n) if *n > u16::MAX as u64 => Err(StatusCode::CONSTRAINT_NOT_SATISFIED),
        _ => Ok(()),
    }
}

fn expect(ok: bool) -> Result<(), StatusCode> {
    if ok {
        Ok(())
    } else {
        Err(StatusCode::GENERIC_MEMBER_OPCODE_MISMATCH)
    }
}

fn closure_mask(
    m: &CompiledModule,
    h: FunctionHandleIndex,
    mask: movejit_format::ClosureMask,
) -> Result<(), StatusCode> {
    let n = m.signatures[m.function_handles[h.idx()].parameters.idx()].0.len();
    if mask.0 != 0 && (64 - mask.0.leading_zeros()) as usize > n {
        return Err(StatusCode::INVALID_CLOSURE_MASK);
    }
    Ok(())
}
