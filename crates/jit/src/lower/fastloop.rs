//! Metered loops tested once per iteration (`lower/metered.rs` tests every
//! segment).
//!
//! An innermost loop whose body charges only constants (no calls, closures,
//! global storage, nor a helper that reads or writes the gas left: the
//! helper table's `GasAccess::ReadsWrites`; vector, value and memory-meter
//! helpers leave the gas alone and keep a loop eligible) costs at most a
//! fixed amount per iteration: the longest path of segment charges from
//! its header back to it or out of the loop. The loop gets a second, fast
//! copy of its body without out-of-gas tests, entered by a dispatch block
//! in front of the header: with at least that much gas left, no test of
//! the iteration can fail, so the fast copy runs; with less, the exact
//! copy (the one lowered first, testing every segment) runs and fails
//! where the interpreter does. Every back edge of either copy re-enters
//! the dispatch. Both copies share locals and the gas variable, so control
//! moves between them at block boundaries (the operand stack is empty
//! there). Stack-room tests stay in both copies; an event table entry of
//! the fast copy is only reached through them.

use super::*;

/// Loop bodies of at most this many instructions get a fast copy (the
/// copy doubles their code).
pub(super) const FAST_LOOP_MAX_LEN: usize = 64;

/// An innermost loop planned for a fast copy.
pub(super) struct FastLoop {
    /// Its header's offset.
    header: usize,
    /// Its blocks `[s, e)`, the header's first.
    body: Vec<(usize, usize)>,
    /// The block every entry of the header jumps to.
    dispatch: Block,
    /// The header's exact copy.
    exact: Block,
    /// Past the dispatch's stack-room test: the fast copy's back edges
    /// enter here (the room is fixed per frame).
    gas_dispatch: Block,
    /// Per body block: its successors inside the body.
    succs: HashMap<usize, Vec<usize>>,
}

impl Lowerer<'_, '_> {
    /// The innermost loops of `blocks` whose bodies may get a fast copy;
    /// each header's entries are redirected to its dispatch block
    /// (`block_of`). Metered code only.
    pub(super) fn plan_fast_loops(
        &mut self,
        unit: &movejit_format::CodeUnit,
        blocks: &[(usize, usize)],
    ) -> Vec<FastLoop> {
        let starts: HashMap<usize, (usize, usize)> = blocks.iter().map(|&b| (b.0, b)).collect();
        let succs = |e: usize| -> Vec<usize> {
            movejit_format::cfg::successors(unit, e - 1).into_iter().filter(|t| starts.contains_key(t)).collect()
        };
        let mut preds: HashMap<usize, Vec<usize>> = HashMap::new();
        for &(s, e) in blocks {
            for t in succs(e) {
                preds.entry(t).or_default().push(s);
            }
        }
        let mut out: Vec<FastLoop> = Vec::new();
        let mut taken: HashSet<usize> = HashSet::new();
        for &(h, _) in blocks {
            // Back edges into `h`: from blocks at or after it.
            let latches: Vec<usize> = preds.get(&h).into_iter().flatten().copied().filter(|&p| p >= h).collect();
            if latches.is_empty() {
                continue;
            }
            // The natural loop: blocks reaching a latch without passing `h`.
            let mut body: HashSet<usize> = HashSet::from([h]);
            let mut work = latches;
            while let Some(b) = work.pop() {
                if body.insert(b) {
                    work.extend(preds.get(&b).into_iter().flatten().copied());
                }
            }
            // A loop entered at its header only (a backward jump elsewhere
            // is no loop).
            let entered_elsewhere = body
                .iter()
                .any(|&b| b != h && (b == 0 || preds.get(&b).into_iter().flatten().any(|p| !body.contains(p))));
            if entered_elsewhere {
                continue;
            }
            // The header first.
            let mut body: Vec<(usize, usize)> = body.iter().map(|s| starts[s]).collect();
            body.sort_unstable_by_key(|&(s, _)| (s != h, s));
            let len: usize = body.iter().map(|&(s, e)| e - s).sum();
            let constant_charges = body.iter().all(|&(s, e)| {
                self.code[s..e].iter().all(|ins| {
                    !ins.is_global_storage()
                        && !matches!(
                            ins,
                            Bytecode::Call(_)
                                | Bytecode::CallGeneric(_)
                                | Bytecode::CallClosure(_)
                                | Bytecode::PackClosure(..)
                                | Bytecode::PackClosureGeneric(..)
                        )
                })
            });
            if len > FAST_LOOP_MAX_LEN || !constant_charges || body.iter().any(|(s, _)| taken.contains(s)) {
                continue;
            }
            let exact = self.block_of[&h];
            let inside: HashSet<usize> = body.iter().map(|&(s, _)| s).collect();
            let succs =
                body.iter().map(|&(s, e)| (s, succs(e).into_iter().filter(|t| inside.contains(t)).collect())).collect();
            let mut l = FastLoop { header: h, body, dispatch: exact, exact, gas_dispatch: exact, succs };
            // Innermost: no other cycle in the body.
            let zeros = l.body.iter().map(|&(s, _)| (s, 0)).collect();
            if Self::longest_charge(&l, &zeros).is_none() {
                continue;
            }
            taken.extend(l.body.iter().map(|&(s, _)| s));
            l.dispatch = self.b.create_block();
            l.gas_dispatch = self.b.create_block();
            self.block_of.insert(h, l.dispatch);
            out.push(l);
        }
        out
    }

    /// The block the main pass lowers `s` into: a planned loop header's
    /// exact copy, else `block_of`.
    pub(super) fn exact_block(loops: &[FastLoop], s: usize) -> Option<Block> {
        loops.iter().find(|l| l.header == s).map(|l| l.exact)
    }

    /// Lowers `l`'s fast copy (after the main pass, with its stack
    /// heights) and fills its dispatch block: the fast copy when the gas
    /// left covers the iteration's longest path of charges, else the exact
    /// copy. A body that turns out to charge at run time (a helper
    /// redefined the gas) keeps the exact copy only.
    pub(super) fn lower_fast_loop(&mut self, l: &FastLoop, checked: &checked::CheckedHeights) -> CompileResult<()> {
        // The copy at most doubles the function: stay within the IR limit.
        let room = self.b.func.dfg.num_insts().saturating_mul(2) <= self.target.max_ir_insts;
        let mut need = None;
        if room {
            let fast: Vec<Block> = l.body.iter().map(|_| self.b.create_block()).collect();
            let saved: Vec<Block> = l.body.iter().map(|(s, _)| self.block_of[s]).collect();
            // Back edges re-enter the dispatch, past its room test.
            for (&(s, _), &f) in l.body.iter().zip(&fast) {
                self.block_of.insert(s, if s == l.header { l.gas_dispatch } else { f });
            }
            self.fast_gas = true;
            self.fast_push = None;
            let mut totals = HashMap::new();
            let mut constant = true;
            let mut res = Ok(());
            for (&(s, e), &f) in l.body.iter().zip(&fast) {
                self.b.switch_to_block(f);
                let defs = self.gas_defs;
                res = self.lower_block(s, e, checked.at_entry(s));
                if res.is_err() {
                    break;
                }
                // One charge per block (one segment, no helper charging).
                constant &= self.gas_defs == defs + 1;
                totals.insert(s, self.last_segment_total);
                if !constant {
                    break;
                }
            }
            // Blocks of an abandoned copy left unlowered (unreachable):
            // each jumps to its exact copy.
            for (&(s, _), (&f, &exact)) in l.body.iter().zip(fast.iter().zip(&saved)) {
                if res.is_ok() && !totals.contains_key(&s) {
                    self.b.switch_to_block(f);
                    self.b.ins().jump(exact, &[]);
                }
            }
            self.fast_gas = false;
            for (&(s, _), &b) in l.body.iter().zip(&saved) {
                self.block_of.insert(s, b);
            }
            res?;
            if constant {
                need = Self::longest_charge(l, &totals).map(|n| (n, fast[0]));
            }
        }
        // The fast copy left out the stack-room tests of its pushes: a
        // frame without room for the highest takes the exact copy.
        self.b.switch_to_block(l.dispatch);
        match (need, self.fast_push.take(), self.room) {
            (Some(_), Some(h), Some(room)) => {
                let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64);
                self.b.ins().brif(over, l.exact, &[], l.gas_dispatch, &[]);
            }
            _ => {
                self.b.ins().jump(l.gas_dispatch, &[]);
            }
        }
        self.b.switch_to_block(l.gas_dispatch);
        match need {
            Some((n, fast)) => {
                let gas = self.gas_get();
                let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, n as i64);
                self.b.ins().brif(short, l.exact, &[], fast, &[]);
            }
            None => {
                self.b.ins().jump(l.exact, &[]);
            }
        }
        Ok(())
    }

    /// The most one iteration of `l` charges: the longest path of block
    /// charges from its header back to it or out of the loop (`None` when
    /// the body has another cycle or the sum does not fit).
    fn longest_charge(l: &FastLoop, totals: &HashMap<usize, u64>) -> Option<u64> {
        // A depth-first walk (a body may jump backwards without passing
        // the header: another cycle, found as a block still in progress).
        fn walk(
            b: usize,
            l: &FastLoop,
            totals: &HashMap<usize, u64>,
            memo: &mut HashMap<usize, Option<u64>>,
        ) -> Option<u64> {
            if let Some(&m) = memo.get(&b) {
                return m;
            }
            memo.insert(b, None);
            let mut most = 0u64;
            for &t in l.succs.get(&b).into_iter().flatten() {
                if t != l.header {
                    most = most.max(walk(t, l, totals, memo)?);
                }
            }
            let n = totals.get(&b)?.checked_add(most);
            memo.insert(b, n);
            n
        }
        walk(l.header, l, totals, &mut HashMap::new()).filter(|n| *n <= i64::MAX as u64)
    }
}
