//! Operand-stack heights already checked when a block starts.
//!
//! A frame's room (`max_stack - stack_base`) is fixed for the whole call,
//! so once a push to height `h` has passed its overflow check, every later
//! push to a height up to `h` passes too. The lowering skips those checks
//! inside a block (its watermark); this carries the watermark across
//! blocks: a block starts with the lowest watermark its predecessors end
//! with. Blocks are lowered in code order, so a predecessor not lowered
//! yet (a loop's back edge) counts as 0, which keeps the result sound
//! without iterating. Checks that could still fail stay exactly where the
//! interpreter would fail; only checks that cannot fail go (issue 16:
//! they were most of the failure sites of typical framework code).

use movejit_format::{cfg, CodeUnit};
use std::collections::HashMap;

pub(super) struct CheckedHeights {
    /// Block start -> starts of the blocks that can jump or fall into it.
    preds: HashMap<usize, Vec<usize>>,
    /// Block start -> its watermark at the end (blocks lowered so far).
    exits: HashMap<usize, usize>,
}

impl CheckedHeights {
    pub(super) fn new(unit: &CodeUnit, blocks: &[(usize, usize)]) -> Self {
        let mut preds: HashMap<usize, Vec<usize>> = HashMap::new();
        for &(s, e) in blocks {
            if e == 0 {
                continue;
            }
            for succ in cfg::successors(unit, e - 1) {
                preds.entry(succ).or_default().push(s);
            }
        }
        CheckedHeights { preds, exits: HashMap::new() }
    }

    /// The watermark block `start` begins with: heights below it are known
    /// to fit on every path into it. The entry block starts with none.
    pub(super) fn at_entry(&self, start: usize) -> usize {
        if start == 0 {
            return 0;
        }
        match self.preds.get(&start) {
            Some(ps) => ps.iter().map(|p| self.exits.get(p).copied().unwrap_or(0)).min().unwrap_or(0),
            None => 0,
        }
    }

    /// Records the watermark block `start` ends with.
    pub(super) fn at_exit(&mut self, start: usize, watermark: usize) {
        self.exits.insert(start, watermark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::{Bytecode::*, SignatureIndex};

    #[test]
    fn block_starts_with_the_lowest_watermark_of_its_lowered_predecessors() {
        // 0: ld; 1: br_true 4 | 2: ld; 3: pop .. falls into 4 | 4: branch 0 (back edge)
        let code = vec![LdTrue, BrTrue(4), LdU64(1), Pop, Branch(0)];
        let unit = CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] };
        let blocks = cfg::basic_blocks(&unit);
        assert_eq!(blocks, vec![(0, 2), (2, 4), (4, 5)]);
        let mut c = CheckedHeights::new(&unit, &blocks);
        // Block 0 is the entry (and a loop header): nothing known.
        assert_eq!(c.at_entry(0), 0);
        c.at_exit(0, 1);
        assert_eq!(c.at_entry(2), 1);
        c.at_exit(2, 3);
        // From block 0 (1) and block 2 (3): the lower one holds on both.
        assert_eq!(c.at_entry(4), 1);
        c.at_exit(4, 1);
        // A later exit of a predecessor never raises what the entry block knew.
        assert_eq!(c.at_entry(0), 0);
    }

    #[test]
    fn unlowered_predecessors_count_as_nothing_checked() {
        // 0: branch 3 | 1: ld; pop, falls into 3 | 3: branch 1 (back edge)
        let code = vec![Branch(3), LdU64(1), Pop, Branch(1)];
        let unit = CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] };
        let blocks = cfg::basic_blocks(&unit);
        let mut c = CheckedHeights::new(&unit, &blocks);
        c.at_exit(0, 5);
        // Block 1's only predecessor (block 3) is lowered after it.
        assert_eq!(c.at_entry(1), 0);
        assert_eq!(c.at_entry(3), 0);
    }
}
