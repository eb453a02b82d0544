//! Sui package rules on top of Move's verifier (what `sui-verifier` adds
//! when a package is published): no global storage instructions, no
//! metadata, and entry functions return only droppable values.
//! Sui reports these outside Move's status space; they map here to
//! UNKNOWN_VERIFICATION_ERROR with a message saying which rule failed.

use crate::{error::{VerifyError, VerifyResult}, types::abilities};
use movejit_format::{Bytecode, CompiledModule, StatusCode};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let fail = |msg: &str| VerifyError::module(StatusCode::UNKNOWN_VERIFICATION_ERROR).with_message(msg.to_string());
    if !m.metadata.is_empty() {
        return Err(fail("sui: modules carry no metadata"));
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        if let Some(code) = &f.code {
            for (off, instr) in code.code.iter().enumerate() {
                use Bytecode::*;
                if matches!(
                    instr,
                    MoveFrom(_) | MoveFromGeneric(_) | MoveTo(_) | MoveToGeneric(_) | ImmBorrowGlobal(_)
                        | ImmBorrowGlobalGeneric(_) | MutBorrowGlobal(_) | MutBorrowGlobalGeneric(_) | Exists(_)
                        | ExistsGeneric(_)
                ) {
                    return Err(VerifyError::at_code(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16, off as u16)
                        .with_message("sui: global storage instructions are not allowed"));
                }
            }
        }
        if f.is_entry {
            let fh = &m.function_handles[f.function.idx()];
            for t in &m.signatures[fh.return_.idx()].0 {
                if !abilities(m, t, &fh.type_parameters)?.has_drop() {
                    return Err(VerifyError::at_function(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16)
                        .with_message("sui: entry function returns a value without drop"));
                }
            }
        }
    }
    Ok(())
}
