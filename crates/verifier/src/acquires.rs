//! Acquires (Aptos and v5/v6): a function's `acquires` list names exactly
//! the key resources it (or a callee in this module) moves from or borrows
//! globally.

use crate::{
    binary::FunctionContext,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{Bytecode, CompiledModule, FunctionHandleIndex, StatusCode, StructDefinitionIndex};
use std::collections::BTreeSet;

pub(crate) fn verify(m: &CompiledModule, f: &FunctionContext) -> VerifyResult {
    let annotated: BTreeSet<StructDefinitionIndex> = f.def.acquires_global_resources.iter().copied().collect();
    let mut actual = BTreeSet::new();
    let defs: std::collections::HashMap<FunctionHandleIndex, &movejit_format::FunctionDefinition> =
        m.function_defs.iter().map(|d| (d.function, d)).collect();
    let callee_acquires = |h: FunctionHandleIndex| -> BTreeSet<StructDefinitionIndex> {
        if m.function_handles[h.idx()].module != m.self_module_handle_idx {
            return BTreeSet::new();
        }
        defs.get(&h).map(|d| d.acquires_global_resources.iter().copied().collect()).unwrap_or_default()
    };
    for (off, instr) in f.code.code.iter().enumerate() {
        use Bytecode::*;
        let needed: BTreeSet<StructDefinitionIndex> = match instr {
            Call(h) => callee_acquires(*h),
            CallGeneric(i) => callee_acquires(m.function_instantiations[i.idx()].handle),
            MoveFrom(d) | MutBorrowGlobal(d) | ImmBorrowGlobal(d) => [*d].into(),
            MoveFromGeneric(i) | MutBorrowGlobalGeneric(i) | ImmBorrowGlobalGeneric(i) => {
                [m.struct_def_instantiations[i.idx()].def].into()
            }
            _ => continue,
        };
        for d in needed {
            if !annotated.contains(&d) {
                return Err(f.err(StatusCode::MISSING_ACQUIRES_ANNOTATION, off as u16));
            }
            actual.insert(d);
        }
    }
    for a in &annotated {
        if !actual.contains(a) {
            return Err(VerifyError::at_function(StatusCode::EXTRANEOUS_ACQUIRES_ANNOTATION, f.index));
        }
        let h = m.struct_defs[a.idx()].struct_handle;
        if !m.struct_handles[h.idx()].abilities.has_key() {
            return Err(VerifyError::at_function(StatusCode::INVALID_ACQUIRES_ANNOTATION, f.index));
        }
    }
    Ok(())
}
