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
//! where the interpreter does. A copy feeding the memory meter reads the
//! meter's address once per entry, at the dispatch (no instruction of such
//! a loop changes it). A loop whose iterations take one path has
//! that amount charged at the dispatch (its blocks charge nothing; exits
//! add back what the iteration left uncharged). Every back edge of either
//! copy re-enters the dispatch. Both copies share locals and the gas variable, so control
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
    /// Per body block: all its successors (exits included).
    targets: HashMap<usize, Vec<usize>>,
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
            let targets: HashMap<usize, Vec<usize>> = body.iter().map(|&(s, e)| (s, succs(e))).collect();
            let succs = targets
                .iter()
                .map(|(&s, ts)| (s, ts.iter().copied().filter(|t| inside.contains(t)).collect()))
                .collect();
            let mut l = FastLoop { header: h, body, dispatch: exact, exact, gas_dispatch: exact, succs, targets };
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
    /// redefined the gas) or to price a block otherwise than the main pass
    /// keeps the exact copy only.
    ///
    /// A loop of one path (`Prepaid::single`) has its iteration (`need`)
    /// charged at the dispatch: inside the copy the gas variable holds the
    /// gas left minus the part of `need` not charged yet on the way to the
    /// block (its credit), so its blocks charge nothing on the hot path. A
    /// block's failure sites see the exact gas left (its credit added
    /// back, minus its charge); an exit adds back what the iteration did
    /// not charge in a landing block of its own. Other loops charge each
    /// block on entry.
    pub(super) fn lower_fast_loop(&mut self, l: &FastLoop, checked: &checked::CheckedHeights) -> CompileResult<()> {
        // The copy at most doubles the function: stay within the IR limit.
        let room = self.b.func.dfg.num_insts().saturating_mul(2) <= self.target.max_ir_insts;
        let plan = if room { Prepaid::plan(l, &self.block_totals) } else { None };
        let mut need = None;
        let mut meter = None;
        if let Some(plan) = plan {
            let fast: Vec<Block> = l.body.iter().map(|_| self.b.create_block()).collect();
            let saved: Vec<Block> = l.body.iter().map(|(s, _)| self.block_of[s]).collect();
            // Back edges re-enter the dispatch, past its room test.
            for (&(s, _), &f) in l.body.iter().zip(&fast) {
                self.block_of.insert(s, if s == l.header { l.gas_dispatch } else { f });
            }
            self.fast_gas = true;
            self.fast_push = None;
            self.fast_meter = Some((self.b.declare_var(self.ptr), false));
            let mut lowered = HashSet::new();
            let mut same = true;
            let mut res = Ok(());
            for (&(s, e), &f) in l.body.iter().zip(&fast) {
                self.b.switch_to_block(f);
                let prepaid = self.gas_get();
                let credit = if plan.single { plan.need - plan.dist[&s] } else { 0 };
                let exact_gas = if credit == 0 { prepaid } else { self.b.ins().iadd_imm_s(prepaid, credit as i64) };
                self.gas_set(exact_gas);
                self.fast_prepaid = plan.single.then_some(prepaid);
                let mut landings = Vec::new();
                for &t in l.targets.get(&s).into_iter().filter(|_| plan.single).flatten() {
                    let add = plan.left_uncharged(l, s, t);
                    let to = *self.block_of.get(&t).ok_or_else(|| malformed("bad branch target"))?;
                    if add != 0 {
                        let land = self.b.create_block();
                        self.block_of.insert(t, land);
                        landings.push((t, land, to, add));
                    }
                }
                let defs = self.gas_defs;
                res = self.lower_block(s, e, checked.at_entry(s));
                self.fast_prepaid = None;
                for &(t, _, to, _) in &landings {
                    self.block_of.insert(t, to);
                }
                if res.is_err() {
                    break;
                }
                lowered.insert(s);
                // One charge per block (one segment, no helper charging),
                // the prepaid gas restored before its branch, and the main
                // pass's price.
                same &= self.gas_defs == defs + 1 + plan.single as u32 && self.last_segment_total == plan.total[&s];
                for (_, land, to, add) in landings {
                    self.b.switch_to_block(land);
                    let g = self.gas_get();
                    let g = self.b.ins().iadd_imm_s(g, add as i64);
                    self.gas_set(g);
                    self.b.ins().jump(to, &[]);
                }
                if !same {
                    break;
                }
            }
            // Blocks of an abandoned copy left unlowered (unreachable):
            // each jumps to its exact copy.
            for (&(s, _), (&f, &exact)) in l.body.iter().zip(fast.iter().zip(&saved)) {
                if res.is_ok() && !lowered.contains(&s) {
                    self.b.switch_to_block(f);
                    self.b.ins().jump(exact, &[]);
                }
            }
            self.fast_gas = false;
            meter = self.fast_meter.take().filter(|&(_, used)| used).map(|(var, _)| var);
            for (&(s, _), &b) in l.body.iter().zip(&saved) {
                self.block_of.insert(s, b);
            }
            res?;
            if same {
                need = Some((plan.need, plan.single, fast[0]));
            }
        }
        // The fast copy left out the stack-room tests of its pushes: a
        // frame without room for the highest takes the exact copy.
        self.b.switch_to_block(l.dispatch);
        // A copy feeding the memory meter reads its address from here; a
        // frame without a meter takes the exact copy.
        if let Some(var) = meter {
            let m = self.load_ctx(self.ptr, metered::APTOS_METER);
            self.b.def_var(var, m);
            if need.is_some() {
                let metered = self.b.create_block();
                self.b.ins().brif(m, metered, &[], l.exact, &[]);
                self.b.switch_to_block(metered);
                self.b.seal_block(metered);
            }
        }
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
            Some((n, false, fast)) => {
                let gas = self.gas_get();
                let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, n as i64);
                self.b.ins().brif(short, l.exact, &[], fast, &[]);
            }
            Some((n, true, fast)) => {
                let gas = self.gas_get();
                let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, n as i64);
                let prepay = self.b.create_block();
                self.b.ins().brif(short, l.exact, &[], prepay, &[]);
                self.b.switch_to_block(prepay);
                let prepaid = self.b.ins().iadd_imm_s(gas, (n as i64).wrapping_neg());
                self.gas_set(prepaid);
                self.b.ins().jump(fast, &[]);
            }
            None => {
                self.b.ins().jump(l.exact, &[]);
            }
        }
        Ok(())
    }

    /// Before a fast copy block's branch (or fall-through): its successors
    /// take the prepaid gas variable (landing blocks add what an edge off
    /// the longest path left uncharged). No-op elsewhere.
    pub(super) fn fast_prepaid_exit(&mut self) {
        if let Some(v) = self.fast_prepaid.take() {
            self.gas_set(v);
        }
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

/// How a fast copy charges an iteration at its dispatch: the longest path
/// of block charges from the header to each block (`dist`, the header's
/// 0), and the most an iteration charges (`need`).
struct Prepaid {
    /// Every iteration takes one path (branches inside the body only
    /// leave the loop): only then is `need` charged at the dispatch (with
    /// several paths of different costs the landing blocks of the cheaper
    /// ones made match_sum's loop twice as slow in wall time, though
    /// fewer instructions); otherwise each block charges its own.
    single: bool,
    need: u64,
    dist: HashMap<usize, u64>,
    total: HashMap<usize, u64>,
}

impl Prepaid {
    /// From the main pass's block charges (`None` when one is missing, the
    /// body has another cycle or a sum does not fit).
    fn plan(l: &FastLoop, totals: &HashMap<usize, u64>) -> Option<Prepaid> {
        let total: HashMap<usize, u64> =
            l.body.iter().map(|&(s, _)| totals.get(&s).map(|&t| (s, t))).collect::<Option<_>>()?;
        // Blocks in reverse postorder from the header (edges back to it
        // left out), so each comes after every block that jumps to it.
        let mut post = Vec::new();
        let mut state: HashMap<usize, bool> = HashMap::new();
        let mut work = vec![(l.header, 0usize)];
        state.insert(l.header, false);
        while let Some((b, k)) = work.pop() {
            let next = l.succs.get(&b).and_then(|ts| ts.iter().copied().filter(|&t| t != l.header).nth(k));
            match next {
                Some(t) => {
                    work.push((b, k + 1));
                    match state.get(&t) {
                        // In progress: another cycle.
                        Some(false) => return None,
                        Some(true) => {}
                        None => {
                            state.insert(t, false);
                            work.push((t, 0));
                        }
                    }
                }
                None => {
                    state.insert(b, true);
                    post.push(b);
                }
            }
        }
        if post.len() != l.body.len() {
            return None;
        }
        let mut dist: HashMap<usize, u64> = HashMap::from([(l.header, 0)]);
        let mut need = 0u64;
        for &b in post.iter().rev() {
            let out = dist.get(&b)?.checked_add(total[&b])?;
            need = need.max(out);
            for &t in l.succs.get(&b).into_iter().flatten().filter(|&&t| t != l.header) {
                let d = dist.entry(t).or_insert(0);
                *d = (*d).max(out);
            }
        }
        let single = l.body.iter().all(|&(b, _)| l.succs.get(&b).map_or(0, |ts| ts.len()) <= 1);
        (need <= i64::MAX as u64).then_some(Prepaid { single, need, dist, total })
    }

    /// What the path through block `b` to `t` left of `need` uncharged,
    /// beyond `t`'s own credit: a header or a block outside the loop take
    /// the exact gas left.
    fn left_uncharged(&self, l: &FastLoop, b: usize, t: usize) -> u64 {
        let out = self.dist[&b] + self.total[&b];
        match self.dist.get(&t) {
            Some(&d) if t != l.header => d - out,
            _ => self.need - out,
        }
    }
}
