//! Global storage belongs to Sui's object model, not to Move: no function may
//! use Move's global storage instructions.

use super::failure;
use crate::error::{VerifyError, VerifyResult};
use movejit_format::{Bytecode, CompiledModule, StatusCode};

pub(super) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for (fi, f) in m.function_defs.iter().enumerate() {
        let Some(code) = &f.code else { continue };
        for (off, instr) in code.code.iter().enumerate() {
            use Bytecode::*;
            if matches!(
                instr,
                MoveFrom(_)
                    | MoveFromGeneric(_)
                    | MoveTo(_)
                    | MoveToGeneric(_)
                    | ImmBorrowGlobal(_)
                    | ImmBorrowGlobalGeneric(_)
                    | MutBorrowGlobal(_)
                    | MutBorrowGlobalGeneric(_)
                    | Exists(_)
                    | ExistsGeneric(_)
            ) {
                let msg = failure(format!("access to Move global storage is not allowed ({instr:?})")).message;
                return Err(VerifyError::at_code(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16, off as u16)
                    .with_message(msg));
            }
        }
    }
    Ok(())
}
