//! Basic blocks of a Move code unit.
//!
//! Blocks start at offset 0, at every branch target and after every branch
//! (the verifier's own definition). The verifier guarantees the operand
//! stack is empty at every block boundary, which is what lets the lowering
//! keep stack slots as plain SSA values inside a block.

#![forbid(unsafe_code)]

use crate::error::{CompileError, CompileResult};
use movejit_format::{Bytecode, CodeUnit};

/// `(start, end)` offsets of each block of `unit`, in code order (`end`
/// exclusive). `VariantSwitch` targets (its jump table) start blocks too.
pub fn basic_blocks(unit: &CodeUnit) -> CompileResult<Vec<(usize, usize)>> {
    blocks_of(&unit.code, &unit.jump_tables)
}

fn blocks_of(code: &[Bytecode], tables: &[movejit_format::VariantJumpTable]) -> CompileResult<Vec<(usize, usize)>> {
    if code.is_empty() {
        return Err(CompileError::Malformed("empty code unit".into()));
    }
    if code.len() > u16::MAX as usize + 1 {
        return Err(CompileError::Malformed("code unit too long".into()));
    }
    let mut starts = vec![false; code.len()];
    starts[0] = true;
    for (i, ins) in code.iter().enumerate() {
        if let Some(t) = ins.branch_target() {
            let t = t as usize;
            if t >= code.len() {
                return Err(CompileError::Malformed(format!("branch target {t} out of range")));
            }
            starts[t] = true;
        }
        if let Bytecode::VariantSwitch(jt) = ins {
            let table = tables.get(jt.idx()).ok_or_else(|| CompileError::Malformed("jump table index".into()))?;
            for t in &table.jump_table {
                let t = *t as usize;
                if t >= code.len() {
                    return Err(CompileError::Malformed(format!("jump table target {t} out of range")));
                }
                starts[t] = true;
            }
        }
        if ins.is_branch() && i + 1 < code.len() {
            starts[i + 1] = true;
        }
    }
    let mut blocks = Vec::new();
    let mut s = 0;
    for (i, _) in starts.iter().enumerate().skip(1).filter(|(_, start)| **start) {
        blocks.push((s, i));
        s = i;
    }
    blocks.push((s, code.len()));
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Bytecode::*;

    #[test]
    fn splits_at_targets_and_after_branches() {
        let code = vec![LdTrue, BrFalse(4), LdU64(1), Ret, LdU64(2), Ret];
        assert_eq!(blocks_of(&code, &[]).unwrap(), vec![(0, 2), (2, 4), (4, 6)]);
        let code = vec![LdU64(0), Pop, Branch(0)];
        assert_eq!(blocks_of(&code, &[]).unwrap(), vec![(0, 3)]);
        assert!(blocks_of(&[Branch(9)], &[]).is_err());
        assert!(blocks_of(&[], &[]).is_err());
    }
}
