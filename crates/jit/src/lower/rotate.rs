//! Loop rotation: a loop's back edge runs the loop test itself.
//!
//! `while (c) body` compiles to a test block ending in a conditional
//! branch and a body ending in `branch <test>`. Lowered as is, every
//! iteration takes two branches: the jump back and the test's branch into
//! the body. When the test is short and pure (reads locals and constants,
//! compares, takes a vector's length; nothing fails but an operand-stack
//! check, nothing is written), the body's `branch` lowers a copy of the
//! test instead, whose conditional branch goes straight back into the
//! body: one branch per iteration, as a compiler rotating the loop emits.
//!
//! The copy does what the test does, at the test's offsets (a failing
//! stack check reports the test's offset, as the interpreter would). The
//! test must dominate the branching block: then every way to the copy ran
//! the test first, so what the test's successors assume of the checks
//! done before them (`lower/checked.rs`) holds after the copy too.

use movejit_format::Bytecode;
use std::collections::HashMap;

/// The longest test copied, in instructions.
const MAX_TEST: usize = 8;

/// The `branch` instructions to lower as a copy of their target's test:
/// branch offset -> the test block `(start, end)`. `dominates(a, b)`:
/// whether the block starting at `a` dominates the one starting at `b`.
pub(super) fn back_edges(
    code: &[Bytecode],
    blocks: &[(usize, usize)],
    dominates: impl Fn(usize, usize) -> bool,
) -> HashMap<usize, (usize, usize)> {
    let ends: HashMap<usize, usize> = blocks.iter().copied().collect();
    let mut out = HashMap::new();
    for &(s, e) in blocks {
        let Some(Bytecode::Branch(t)) = e.checked_sub(1).and_then(|l| code.get(l)) else { continue };
        let t = *t as usize;
        let Some(&te) = ends.get(&t) else { continue };
        if t > s || !is_test(code.get(t..te).unwrap_or(&[])) || !dominates(t, s) || calls(&code[t..e]) {
            continue;
        }
        out.insert(e - 1, (t, te));
    }
    out
}

/// Whether the loop `code` (test to back edge) calls: a call costs far
/// more than the jump rotation saves, and the changed shape can make the
/// register allocator spill the counter across the call (measured on the
/// structs kernel: 4% slower rotated).
fn calls(code: &[Bytecode]) -> bool {
    code.iter().any(|i| matches!(i, Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_)))
}

/// A short, pure block ending in a conditional branch.
fn is_test(block: &[Bytecode]) -> bool {
    use Bytecode::*;
    let Some((last, body)) = block.split_last() else { return false };
    block.len() <= MAX_TEST
        && matches!(last, BrTrue(_) | BrFalse(_))
        && body.iter().all(|i| {
            matches!(
                i,
                CopyLoc(_)
                    | ImmBorrowLoc(_)
                    | LdTrue
                    | LdFalse
                    | LdU8(_)
                    | LdU16(_)
                    | LdU32(_)
                    | LdU64(_)
                    | LdU128(_)
                    | LdU256(_)
                    | Lt
                    | Gt
                    | Le
                    | Ge
                    | Eq
                    | Neq
                    | Not
                    | VecLen(_)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::{cfg, Bytecode::*, CodeUnit, FunctionHandleIndex, SignatureIndex};

    /// (what, code, dominance holds, the branches rotated).
    #[rustfmt::skip]
    fn cases() -> Vec<(&'static str, Vec<Bytecode>, bool, Vec<usize>)> {
        vec![
            (
                "while (l1 < l0) l1 = l1 + 1",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(9),
                    MoveLoc(1), LdU64(1), Add, StLoc(1), Branch(0),
                    Ret,
                ],
                true,
                vec![8],
            ),
            (
                "the test does not dominate",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(9),
                    MoveLoc(1), LdU64(1), Add, StLoc(1), Branch(0),
                    Ret,
                ],
                false,
                vec![],
            ),
            (
                "the test writes a local",
                vec![
                    LdU64(0), StLoc(1), CopyLoc(1), CopyLoc(0), Lt, BrFalse(8),
                    Branch(0),
                    Ret,
                ],
                true,
                vec![],
            ),
            (
                "a loop that calls",
                vec![
                    CopyLoc(1), CopyLoc(0), Lt, BrFalse(9),
                    MoveLoc(1), LdU64(1), Call(FunctionHandleIndex(0)), StLoc(1), Branch(0),
                    Ret,
                ],
                true,
                vec![],
            ),
            (
                "a forward branch",
                vec![
                    Branch(1),
                    CopyLoc(0), LdU64(0), Eq, BrFalse(1),
                    Ret,
                ],
                true,
                vec![],
            ),
        ]
    }

    #[test]
    fn rotated_back_edges() {
        for (what, code, dom, want) in cases() {
            let unit = CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] };
            let blocks = cfg::basic_blocks(&unit);
            let mut got: Vec<usize> = back_edges(&unit.code, &blocks, |_, _| dom).into_keys().collect();
            got.sort();
            assert_eq!(got, want, "{what}");
        }
    }
}
