//! Control flow of a code unit: each instruction's successors and the basic
//! blocks (Move's definition: a block starts at offset 0, at every branch or
//! jump-table target and after every branch). The one definition the
//! verifier, the interpreter's preparation and the JIT's lowering share.

use crate::model::{Bytecode, CodeUnit};

/// Why a code unit's control flow is not well formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CfgError {
    /// The instruction at `at` jumps to `target`, past the end of the code.
    TargetOutOfRange { at: usize, target: usize },
    /// The `VariantSwitch` at `at` names a jump table the unit lacks.
    MissingJumpTable { at: usize },
}

impl std::fmt::Display for CfgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CfgError::TargetOutOfRange { at, target } => write!(f, "branch target {target} at {at} out of range"),
            CfgError::MissingJumpTable { at } => write!(f, "jump table of the switch at {at}"),
        }
    }
}

/// Calls `f` with each branch or jump-table target of `instr`; `false` if
/// it is a `VariantSwitch` whose table the unit lacks.
fn for_each_target(unit: &CodeUnit, instr: &Bytecode, mut f: impl FnMut(usize)) -> bool {
    if let Some(t) = instr.branch_target() {
        f(t as usize);
    }
    if let Bytecode::VariantSwitch(jt) = instr {
        let Some(table) = unit.jump_tables.get(jt.idx()) else { return false };
        table.jump_table.iter().for_each(|t| f(*t as usize));
    }
    true
}

/// Where control may go after the instruction at `pc`: its targets and,
/// unless it never falls through, the next instruction (when there is one).
/// Ascending and distinct. A target past the end is kept, for the caller to
/// reject; a missing jump table contributes none.
pub fn successors(unit: &CodeUnit, pc: usize) -> Vec<usize> {
    let Some(instr) = unit.code.get(pc) else { return Vec::new() };
    let mut out = Vec::new();
    for_each_target(unit, instr, |t| out.push(t));
    if pc + 1 < unit.code.len() && !instr.is_unconditional_branch() {
        out.push(pc + 1);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Checks that every target lies inside the code and every jump table exists.
pub fn check_targets(unit: &CodeUnit) -> Result<(), CfgError> {
    let len = unit.code.len();
    for (at, instr) in unit.code.iter().enumerate() {
        let mut bad = None;
        let found = for_each_target(unit, instr, |target| {
            if target >= len {
                bad.get_or_insert(CfgError::TargetOutOfRange { at, target });
            }
        });
        if !found {
            return Err(CfgError::MissingJumpTable { at });
        }
        if let Some(e) = bad {
            return Err(e);
        }
    }
    Ok(())
}

/// `(start, end)` of each basic block, in code order (`end` exclusive);
/// none for empty code. Targets past the end start no block (see
/// [`check_targets`]).
pub fn basic_blocks(unit: &CodeUnit) -> Vec<(usize, usize)> {
    let len = unit.code.len();
    if len == 0 {
        return Vec::new();
    }
    let mut starts = vec![false; len];
    starts[0] = true;
    for (pc, instr) in unit.code.iter().enumerate() {
        for_each_target(unit, instr, |t| {
            if let Some(s) = starts.get_mut(t) {
                *s = true;
            }
        });
        if instr.is_branch() && pc + 1 < len {
            starts[pc + 1] = true;
        }
    }
    let mut blocks = Vec::new();
    let mut s = 0;
    for (pc, _) in starts.iter().enumerate().skip(1).filter(|(_, start)| **start) {
        blocks.push((s, pc));
        s = pc;
    }
    blocks.push((s, len));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EnumDefinitionIndex, SignatureIndex, VariantJumpTable, VariantJumpTableIndex};
    use Bytecode::*;

    fn unit(code: Vec<Bytecode>, tables: &[&[u16]]) -> CodeUnit {
        let jump_tables = tables
            .iter()
            .map(|t| VariantJumpTable { head_enum: EnumDefinitionIndex(0), jump_table: t.to_vec() })
            .collect();
        CodeUnit { locals: SignatureIndex(0), code, jump_tables }
    }

    #[test]
    fn blocks_and_successors() {
        type Case = (Vec<Bytecode>, &'static [&'static [u16]], Vec<(usize, usize)>, Vec<Vec<usize>>);
        let cases: Vec<Case> = vec![
            (
                vec![LdTrue, BrFalse(4), LdU64(1), Ret, LdU64(2), Ret],
                &[],
                vec![(0, 2), (2, 4), (4, 6)],
                vec![vec![1], vec![2, 4], vec![3], vec![], vec![5], vec![]],
            ),
            (vec![LdU64(0), Pop, Branch(0)], &[], vec![(0, 3)], vec![vec![1], vec![2], vec![0]]),
            (
                vec![LdU64(0), VariantSwitch(VariantJumpTableIndex(0)), Ret, Ret],
                &[&[3, 2, 3]],
                vec![(0, 2), (2, 3), (3, 4)],
                vec![vec![1], vec![2, 3], vec![], vec![]],
            ),
            (vec![], &[], vec![], vec![]),
        ];
        for (code, tables, blocks, succs) in cases {
            let u = unit(code, tables);
            assert_eq!(basic_blocks(&u), blocks, "{:?}", u.code);
            let got: Vec<_> = (0..u.code.len()).map(|pc| successors(&u, pc)).collect();
            assert_eq!(got, succs, "{:?}", u.code);
            assert_eq!(check_targets(&u), Ok(()));
        }
    }

    #[test]
    fn bad_targets() {
        let cases: Vec<(CodeUnit, CfgError)> = vec![
            (unit(vec![Branch(9)], &[]), CfgError::TargetOutOfRange { at: 0, target: 9 }),
            (unit(vec![LdU64(0), VariantSwitch(VariantJumpTableIndex(0))], &[]), CfgError::MissingJumpTable { at: 1 }),
            (
                unit(vec![LdU64(0), VariantSwitch(VariantJumpTableIndex(0))], &[&[0, 5]]),
                CfgError::TargetOutOfRange { at: 1, target: 5 },
            ),
        ];
        for (u, want) in cases {
            assert_eq!(check_targets(&u), Err(want));
            // Lenient users still get blocks and successors.
            assert!(!basic_blocks(&u).is_empty());
        }
    }
}
