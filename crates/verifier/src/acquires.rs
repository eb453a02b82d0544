//! Acquires (Aptos and v5/v6): a function's `acquires` list names exactly
//! the key resources it (or a callee in this module) moves from or borrows
//! globally.

use crate::{
    binary::FunctionContext,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{Bytecode, CompiledModule, FunctionHandleIndex, StatusCode, StructDefinitionIndex};
use std::collections::BTreeSet;

/// Each of the module's own functions' `acquires` list (sorted, without
/// repeats), by function handle: built once per module, read by this pass
/// and by reference safety at every call (building it per function made
/// both quadratic in the module's function count).
pub(crate) struct ModuleAcquires {
    by_handle: Vec<Option<Box<[StructDefinitionIndex]>>>,
}

impl ModuleAcquires {
    pub(crate) fn new(m: &CompiledModule) -> Self {
        let mut by_handle = vec![None; m.function_handles.len()];
        for def in &m.function_defs {
            let list: BTreeSet<StructDefinitionIndex> = def.acquires_global_resources.iter().copied().collect();
            if let Some(slot) = by_handle.get_mut(def.function.idx()) {
                *slot = Some(list.into_iter().collect());
            }
        }
        ModuleAcquires { by_handle }
    }

    /// What a call of handle `h` acquires: empty for other modules' functions.
    pub(crate) fn of(&self, h: FunctionHandleIndex) -> &[StructDefinitionIndex] {
        self.by_handle.get(h.idx()).and_then(|l| l.as_deref()).unwrap_or(&[])
    }
}

pub(crate) fn verify(m: &CompiledModule, acquires: &ModuleAcquires, f: &FunctionContext) -> VerifyResult {
    let annotated: BTreeSet<StructDefinitionIndex> = f.def.acquires_global_resources.iter().copied().collect();
    let mut actual = BTreeSet::new();
    let callee_acquires = |h: FunctionHandleIndex| -> &[StructDefinitionIndex] {
        if m.function_handles[h.idx()].module != m.self_module_handle_idx {
            return &[];
        }
        acquires.of(h)
    };
    for (off, instr) in f.code.code.iter().enumerate() {
        use Bytecode::*;
        let one;
        let needed: &[StructDefinitionIndex] = match instr {
            Call(h) => callee_acquires(*h),
            CallGeneric(i) => callee_acquires(m.function_instantiations[i.idx()].handle),
            MoveFrom(d) | MutBorrowGlobal(d) | ImmBorrowGlobal(d) => {
                one = [*d];
                &one
            }
            MoveFromGeneric(i) | MutBorrowGlobalGeneric(i) | ImmBorrowGlobalGeneric(i) => {
                one = [m.struct_def_instantiations[i.idx()].def];
                &one
            }
            _ => continue,
        };
        for &d in needed {
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
