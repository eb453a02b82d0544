//! Basic blocks of a Move code unit.
//!
//! Blocks start at offset 0, at every branch target and after every branch
//! (the verifier's own definition). The verifier guarantees the operand
//! stack is empty at every block boundary, which is what lets the lowering
//! keep stack slots as plain SSA values inside a block.

#![forbid(unsafe_code)]

use crate::error::{CompileError, CompileResult};
use movejit_format::{cfg, CodeUnit};

/// `(start, end)` offsets of each block of `unit`, in code order (`end`
/// exclusive): the shared definition ([`movejit_format::cfg`]), with code
/// the lowering cannot take (empty, too long, bad targets) rejected.
pub fn basic_blocks(unit: &CodeUnit) -> CompileResult<Vec<(usize, usize)>> {
    if unit.code.is_empty() {
        return Err(CompileError::Malformed("empty code unit".into()));
    }
    if unit.code.len() > u16::MAX as usize + 1 {
        return Err(CompileError::Malformed("code unit too long".into()));
    }
    cfg::check_targets(unit).map_err(|e| CompileError::Malformed(e.to_string()))?;
    Ok(cfg::basic_blocks(unit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::{Bytecode::*, SignatureIndex};

    #[test]
    fn rejects_what_lowering_cannot_take() {
        let unit = |code| CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] };
        assert_eq!(basic_blocks(&unit(vec![LdU64(0), Pop, Branch(0)])).unwrap(), vec![(0, 3)]);
        assert!(basic_blocks(&unit(vec![Branch(9)])).is_err());
        assert!(basic_blocks(&unit(vec![])).is_err());
        assert!(basic_blocks(&unit(vec![Ret; u16::MAX as usize + 2])).is_err());
    }
}
