//! Operand-stack heights already checked when a block starts.
//!
//! A frame's room (`max_stack - stack_base`) is fixed for the whole call,
//! so once a push to height `h` has passed its overflow check, every later
//! push to a height up to `h` passes too. The lowering skips those checks
//! inside a block (its watermark); this carries the watermark across
//! blocks: a block starts with the lowest watermark its predecessors end
//! with. Blocks are lowered in code order. A predecessor lowered later is
//! ignored when the block dominates it (a loop's back edge: every path to
//! it ran the whole block first, so it ends with at least what the block
//! starts with); any other one counts with a static estimate: the
//! greatest fixpoint of "a block ends with at least what it starts with,
//! and at least its leading plain pushes" (constants, locals and their
//! borrows: each push checked). Checks that could still fail
//! stay exactly where the interpreter fails; only checks that cannot fail
//! go (issue 16: they were most failure sites of typical framework code).

use movejit_format::{cfg, Bytecode, CodeUnit};
use std::collections::HashMap;

pub(super) struct CheckedHeights {
    /// Block start -> its index in code order.
    index: HashMap<usize, usize>,
    /// Per block: the blocks that can jump or fall into it.
    preds: Vec<Vec<usize>>,
    /// Per block: its watermark at the end, once lowered.
    exits: Vec<Option<usize>>,
    /// Per block: its interval in a depth-first walk of the dominator
    /// tree (`None`: unreachable).
    span: Vec<Option<(u32, u32)>>,
    /// Per block: a static lower bound of its watermark at the end.
    estimate: Vec<usize>,
}

impl CheckedHeights {
    pub(super) fn new(unit: &CodeUnit, blocks: &[(usize, usize)]) -> Self {
        let index: HashMap<usize, usize> = blocks.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect();
        let n = blocks.len();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (b, &(_, e)) in blocks.iter().enumerate() {
            if e == 0 {
                continue;
            }
            for s in cfg::successors(unit, e - 1) {
                if let Some(&t) = index.get(&s) {
                    succs[b].push(t);
                    preds[t].push(b);
                }
            }
        }
        let span = dominator_spans(&succs, &preds);
        let leading: Vec<usize> = blocks
            .iter()
            .map(|&(s, e)| unit.code.get(s..e).map_or(0, |c| c.iter().take_while(|i| plain_push(i)).count()))
            .collect();
        let estimate = exit_estimates(&preds, &span, &leading);
        CheckedHeights { index, preds, exits: vec![None; n], span, estimate }
    }

    /// Whether the block starting at `a` dominates the one starting at `b`
    /// (both reachable).
    pub(super) fn dominates_at(&self, a: usize, b: usize) -> bool {
        match (self.index.get(&a), self.index.get(&b)) {
            (Some(&a), Some(&b)) => self.dominates(a, b),
            _ => false,
        }
    }

    /// Whether block `a` dominates block `b` (both reachable).
    fn dominates(&self, a: usize, b: usize) -> bool {
        match (self.span[a], self.span[b]) {
            (Some((a0, a1)), Some((b0, b1))) => a0 <= b0 && b1 <= a1,
            _ => false,
        }
    }

    /// The watermark block `start` begins with: heights below it are known
    /// to fit on every path into it. The entry block starts with none.
    pub(super) fn at_entry(&self, start: usize) -> usize {
        let Some(&b) = self.index.get(&start) else { return 0 };
        if b == 0 {
            return 0;
        }
        let mut known = usize::MAX;
        for &p in &self.preds[b] {
            let h = match self.exits[p] {
                Some(h) => h,
                // Never runs.
                None if self.span[p].is_none() => continue,
                None if self.dominates(b, p) => continue,
                None => self.estimate[p],
            };
            known = known.min(h);
        }
        // No predecessor counted (unreachable, or only back edges).
        if known == usize::MAX {
            0
        } else {
            known
        }
    }

    /// Records the watermark block `start` ends with.
    pub(super) fn at_exit(&mut self, start: usize, watermark: usize) {
        if let Some(&b) = self.index.get(&start) {
            self.exits[b] = Some(watermark);
        }
    }
}

/// Instructions pushing one value and popping none, through the
/// lowering's checked push.
fn plain_push(i: &Bytecode) -> bool {
    use Bytecode::*;
    matches!(
        i,
        LdU8(_)
            | LdU16(_)
            | LdU32(_)
            | LdU64(_)
            | LdU128(_)
            | LdU256(_)
            | LdI8(_)
            | LdI16(_)
            | LdI32(_)
            | LdI64(_)
            | LdI128(_)
            | LdI256(_)
            | LdTrue
            | LdFalse
            | LdConst(_)
            | CopyLoc(_)
            | MoveLoc(_)
            | MutBorrowLoc(_)
            | ImmBorrowLoc(_)
    )
}

/// Per block, the greatest fixpoint of `exit = max(entry, leading)`,
/// `entry = min(exit of reachable predecessors)` (0 for block 0): a lower
/// bound of every path's checked heights (the transfer is distributive,
/// so this is the meet over all paths).
fn exit_estimates(preds: &[Vec<usize>], span: &[Option<(u32, u32)>], leading: &[usize]) -> Vec<usize> {
    let n = preds.len();
    let mut exit = vec![usize::MAX; n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            if span[b].is_none() {
                exit[b] = 0;
                continue;
            }
            let entry = if b == 0 {
                0
            } else {
                preds[b].iter().filter(|&&p| span[p].is_some()).map(|&p| exit[p]).min().unwrap_or(0)
            };
            let new = entry.max(leading[b]);
            if new != exit[b] {
                exit[b] = new;
                changed = true;
            }
        }
    }
    exit
}

/// Each reachable block's (preorder, last preorder below it) in the
/// dominator tree of the graph from block 0 (Cooper, Harvey and Kennedy's
/// iterative algorithm over reverse postorder).
fn dominator_spans(succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<Option<(u32, u32)>> {
    let n = succs.len();
    let mut span = vec![None; n];
    if n == 0 {
        return span;
    }
    // Reverse postorder from block 0 (iterative depth-first search).
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        if let Some(&s) = succs[b].get(*i) {
            *i += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    let mut order = vec![usize::MAX; n];
    for (k, &b) in post.iter().enumerate() {
        order[b] = k;
    }
    let mut idom = vec![usize::MAX; n];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in post.iter().rev().skip(1) {
            let mut new = usize::MAX;
            for &p in &preds[b] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX { p } else { intersect(&idom, &order, p, new) };
            }
            if new != usize::MAX && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    let mut children = vec![Vec::new(); n];
    for &b in &post {
        if b != 0 {
            children[idom[b]].push(b);
        }
    }
    let mut next = 0u32;
    let mut walk = vec![(0usize, false)];
    while let Some((b, done)) = walk.pop() {
        if done {
            span[b] = span[b].map(|(first, _)| (first, next - 1));
            continue;
        }
        span[b] = Some((next, next));
        next += 1;
        walk.push((b, true));
        walk.extend(children[b].iter().map(|&c| (c, false)));
    }
    span
}

/// The nearest common dominator of `a` and `b` (postorder numbers grow
/// towards the root).
fn intersect(idom: &[usize], order: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while order[a] < order[b] {
            a = idom[a];
        }
        while order[b] < order[a] {
            b = idom[b];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::{Bytecode::*, SignatureIndex};

    fn heights(code: Vec<movejit_format::Bytecode>) -> (CheckedHeights, Vec<(usize, usize)>) {
        let unit = CodeUnit { locals: SignatureIndex(0), code, jump_tables: vec![] };
        let blocks = cfg::basic_blocks(&unit);
        (CheckedHeights::new(&unit, &blocks), blocks)
    }

    #[test]
    fn block_starts_with_the_lowest_watermark_of_its_predecessors() {
        // 0: ld; br_true 4 | 2: ld; pop, falls into 4 | 4: branch 0 (back edge)
        let (mut c, blocks) = heights(vec![LdTrue, BrTrue(4), LdU64(1), Pop, Branch(0)]);
        assert_eq!(blocks, vec![(0, 2), (2, 4), (4, 5)]);
        // Block 0 is the entry (and a loop header): nothing known.
        assert_eq!(c.at_entry(0), 0);
        c.at_exit(0, 1);
        assert_eq!(c.at_entry(2), 1);
        c.at_exit(2, 3);
        // From block 0 (1) and block 2 (3): the lower one holds on both.
        assert_eq!(c.at_entry(4), 1);
        c.at_exit(4, 1);
        assert_eq!(c.at_entry(0), 0);
    }

    #[test]
    fn a_loop_header_ignores_its_back_edges_but_not_other_later_predecessors() {
        // 0: ld; pop | 2: loop header: ld; br_true 6 | 4: ld; pop .. | 6: branch 2
        let code = vec![LdU64(1), Pop, LdTrue, BrTrue(6), LdU64(1), Pop, Branch(2)];
        let (mut c, blocks) = heights(code);
        assert_eq!(blocks, vec![(0, 2), (2, 4), (4, 6), (6, 7)]);
        c.at_exit(0, 1);
        // Block 6 (lowered later) jumps back to 2, which dominates it.
        assert_eq!(c.at_entry(2), 1);
        // 0: branch 3 | 1: ld; pop, falls into 3 | 3: branch 1: block 1 is
        // entered only from block 3, which it does not dominate.
        let (mut c, _) = heights(vec![Branch(3), LdU64(1), Pop, Branch(1)]);
        c.at_exit(0, 5);
        assert_eq!(c.at_entry(1), 0);
        // Block 3 dominates block 1 (its only way in): block 1 ends with at
        // least what block 3 starts with, so block 0's 5 holds.
        c.at_exit(1, 2);
        assert_eq!(c.at_entry(3), 2);
        let (mut c, _) = heights(vec![Branch(3), LdU64(1), Pop, Branch(1)]);
        c.at_exit(0, 5);
        assert_eq!(c.at_entry(3), 5, "block 1 not lowered yet: a back edge");
    }

    #[test]
    fn a_join_after_later_blocks_takes_their_leading_pushes() {
        // The `&&` shape: 0: ld; br_false 7 | 2: ld; st_loc (falls into 4)
        // | 4: join: ld; pop; ret | 7: ld_false; st_loc; branch 4 (lowered
        // later, not dominated by 4).
        let code = vec![LdTrue, BrFalse(7), LdTrue, StLoc(0), LdU64(1), Pop, Ret, LdFalse, StLoc(0), Branch(4)];
        let (mut c, blocks) = heights(code);
        assert_eq!(blocks, vec![(0, 2), (2, 4), (4, 7), (7, 10)]);
        c.at_exit(0, 1);
        assert_eq!(c.at_entry(2), 1);
        c.at_exit(2, 1);
        // Block 7 is lowered after block 4; it starts with 1 (from block 0)
        // and pushes 1 itself.
        assert_eq!(c.at_entry(4), 1);
        // Without a leading push of its own, block 7 still ends with what
        // block 0's leading push checked.
        let code = vec![LdTrue, BrFalse(7), LdTrue, StLoc(0), LdU64(1), Pop, Ret, Nop, Nop, Branch(4)];
        let (mut c, _) = heights(code);
        c.at_exit(0, 1);
        c.at_exit(2, 1);
        assert_eq!(c.at_entry(4), 1, "block 7 starts with block 0's 1");
        // A later predecessor that may start with nothing checked.
        let code = vec![Nop, LdTrue, BrFalse(8), LdTrue, StLoc(0), LdU64(1), Pop, Ret, Nop, Branch(5)];
        let (mut c, blocks) = heights(code);
        assert_eq!(blocks, vec![(0, 3), (3, 5), (5, 8), (8, 10)]);
        c.at_exit(0, 1);
        c.at_exit(3, 1);
        assert_eq!(c.at_entry(5), 0);
    }

    #[test]
    fn dominators_of_a_diamond_and_an_irreducible_pair() {
        // A diamond: 0: br_true 4 | 2: branch 5 | 4: falls into 5 | 5: ret.
        let code = vec![LdTrue, BrTrue(4), Nop, Branch(5), Nop, Ret];
        let (c, blocks) = heights(code);
        assert_eq!(blocks, vec![(0, 2), (2, 4), (4, 5), (5, 6)]);
        assert!(c.dominates(0, 3) && c.dominates(0, 1) && c.dominates(0, 2));
        assert!(!c.dominates(1, 3) && !c.dominates(2, 3) && !c.dominates(3, 1));
        // Two blocks entered from the entry that jump into each other:
        // neither dominates the other.
        let code = vec![LdTrue, BrTrue(5), Nop, LdTrue, BrTrue(7), Nop, Branch(2), Ret];
        let (c, blocks) = heights(code);
        assert_eq!(blocks, vec![(0, 2), (2, 5), (5, 7), (7, 8)]);
        assert!(!c.dominates(1, 2) && !c.dominates(2, 1) && c.dominates(0, 3));
    }
}
