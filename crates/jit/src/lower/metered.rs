//! Metered lowering of one gas segment (see [`gas`](crate::gas)): ONE copy
//! of the segment's code, charged at once on entry.
//!
//! Events that stop the interpreter without an error of the instruction
//! itself (running out of gas at instruction `k`, an operand-stack overflow
//! at a push of instruction `k`) follow from the gas left on entry, the
//! frame's room and the segment's static prefix sums and push heights. A
//! test `gas < prefix(i + 1)` (some instruction up to `i` cannot be
//! charged) or `room <= h` (the highest push since the last test overflows)
//! branches to the function's one shared, cold resolver, which scans a
//! constant event table from that range's first event for the first one
//! that happens, in interpreter order, and fails there.
//!
//! Tests sit where an event must be settled before anything depends on the
//! gas: on the hot path before calls (the callee or native sees the gas),
//! aborts, global storage and closure packing, and before the segment's
//! last instruction (nothing leaves the segment unsettled). Every other
//! instruction runs untested: when it succeeds, its effects (locals,
//! writes through references, vector shims) would be discarded by a
//! pending event anyway, which the next test reports; when it fails, its
//! cold failure site tests first, so an earlier event wins over its own
//! error, and an error of its own refunds the instructions after it. The
//! hot path pays one compare-and-branch per call-like instruction and per
//! segment.
//!
//! A chain of segments that follow one another (each ended by a hot test
//! of its whole charge, the gas left untouched since) is tested against
//! the chain's first entry gas with the charges before each segment added
//! to its thresholds (`fold_gas_floors`): the same outcome, with no
//! subtraction on the tests' hot path.

use super::aptos::MemoryFeed;
use super::*;
use crate::gas::instr_cost;
use cranelift_codegen::ir::Inst;
use movejit_runtime::flat::closure_shims::FAILED_HERE;
use movejit_runtime::gas::abstract_size::AbstractSizes;
use movejit_runtime::gas::algebra::MemoryAlgebra;
use movejit_runtime::gas::aptos::AptosCallSite;

/// Where compiled code feeds Aptos's memory algebra inline: the meter's
/// address in the context, then the algebra's fields from that address.
pub(super) const APTOS_METER: i32 = ExecContext::OFFSETS.aptos_meter as i32;
const METER_MEMORY: usize = std::mem::offset_of!(movejit_runtime::gas::aptos::AptosMeter, memory);
const MEMORY_REMAINING: i32 = (METER_MEMORY + MemoryAlgebra::OFFSETS.remaining) as i32;
const MEMORY_LOWEST: i32 = (METER_MEMORY + MemoryAlgebra::OFFSETS.lowest) as i32;

/// Words per event of the gas resolver's table.
const EVENT_WORDS: usize = 3;
/// Event kinds (the low two bits of an event's second word): running out
/// of gas, an operand-stack overflow at a push, running out of gas making
/// a callee's frame (Aptos: located as a loading error).
const EVENT_OUT_OF_GAS: u64 = 0;
const EVENT_PUSH: u64 = 1;
/// (The context's flag bit, which the resolver sets from it.)
const EVENT_AT_LOAD: u64 = ExecContext::AT_LOAD as u64;

/// The state of the segment being lowered.
pub(super) struct Segment {
    /// Offset of the first instruction.
    start: usize,
    /// Gas left on entry (before the segment's charge).
    gas: Value,
    /// The gas left after the segment's charge, and `gas_defs` then: a
    /// segment that ends with them unchanged records its floor.
    left: Value,
    defs: u32,
    /// The entry gas was rebased (a helper charged a run-time amount).
    rebased: bool,
    /// `prefix[k]`: the summed cost of the first `k` instructions.
    prefix: Vec<u64>,
    /// For each instruction, the running sum after each of its charges
    /// (Aptos charges some in several steps: the types it builds, then its
    /// price; a call's frame) and whether running out there is located as
    /// a loading error: each is a point where it can run out.
    steps: Vec<Vec<(u64, bool)>>,
    /// The segment's cost, charged on entry: its constant is set once
    /// every instruction is priced.
    total_at: Inst,
    /// Refund constants of failure sites (constant, the gas kept: the
    /// running sum at the failure), set with the total.
    refunds: Vec<(Inst, u64)>,
    /// First instruction whose out-of-gas events are not all in the table
    /// yet, and how many of its charge steps are.
    oog_upto: usize,
    oog_steps: usize,
    /// Pushes (instruction, height) not in the table yet, in order.
    pending: Vec<(usize, usize)>,
    /// Table index of the first event since the last test on the hot path.
    range_first: usize,
    /// Whether that range holds an out-of-gas event.
    range_oog: bool,
    /// The highest push height in that range.
    range_push: Option<usize>,
    /// Pushes of the instruction being lowered are checked in place.
    inline_pushes: bool,
    /// The instruction whose hot-path test was lowered last.
    tested: Option<usize>,
}

impl Lowerer<'_, '_> {
    /// Lowers segment `[a, z)` of the block ending at `e` (metered code).
    /// Each instruction is priced just before it is lowered (an Aptos
    /// price may depend on the types of its operands).
    pub(super) fn lower_segment(&mut self, a: usize, z: usize, e: usize) -> CompileResult<()> {
        let gas = self.gas_get();
        let t = self.b.ins().iconst(types::I64, 0);
        let total_at = self.def_inst(t)?;
        let left = self.b.ins().isub(gas, t);
        self.gas_set(left);
        self.mode = Mode::Fast;
        self.seg = Some(Segment {
            start: a,
            gas,
            left,
            defs: self.gas_defs,
            rebased: false,
            prefix: vec![0],
            steps: Vec::new(),
            total_at,
            refunds: Vec::new(),
            oog_upto: a,
            oog_steps: 0,
            pending: Vec::new(),
            range_first: self.gas_events.len() / EVENT_WORDS,
            range_oog: false,
            range_push: None,
            inline_pushes: false,
            tested: None,
        });
        for i in a..z {
            let charges = self.charges(i)?;
            let (call_site, copied, compared, variant_prices) = match self.target.aptos {
                Some(p) => (
                    self.call_site(i, &charges)?,
                    self.copied_value(p, i)?,
                    self.compared_values(p, i)?,
                    self.variant_prices(p, i)?,
                ),
                None => (None, None, None, None),
            };
            if let Some(s) = self.seg.as_mut() {
                let mut sum = s.prefix.last().copied().unwrap_or(0);
                let mut steps = Vec::new();
                for (c, at_load) in charges {
                    sum = sum.saturating_add(c);
                    steps.push((sum, at_load));
                }
                s.prefix.push(sum);
                s.steps.push(steps);
            }
            let feed = match self.target.aptos {
                Some(p) => self.memory_feed(p, i)?,
                None => None,
            };
            match feed {
                Some(MemoryFeed::Use(n)) => self.memory_use(i, n, 1)?,
                Some(MemoryFeed::UseAfterPrice(n)) => self.memory_use(i, n, 0)?,
                Some(MemoryFeed::UseFirst(n)) => self.memory_use(i, n, usize::MAX)?,
                // Before the frame's values are moved out and dropped.
                Some(MemoryFeed::ReleaseFrame) => {
                    let by_bytes = self.heap_locals.iter().filter(|(l, _)| AbstractSizes::bytes_tell_held(l));
                    for (l, a) in by_bytes.cloned().collect::<Vec<_>>() {
                        let lp = self.layout_ptr(&l);
                        self.call_helper(HelperId::memory_release_value(), &[self.ctx, lp, a])?;
                    }
                    self.release_frame_drops(i)?;
                }
                // Before it runs, while the value is there (a release only
                // lowers the usage: only its order among the uses matters).
                Some(MemoryFeed::ReleaseValue) => {
                    let (l, at) = match self.stack.last() {
                        Some((Ty::M(l), v)) if matches!(self.code[i], Bytecode::Pop) => (l.clone(), v.addr()?),
                        Some((Ty::R(l), v)) if matches!(self.code[i], Bytecode::WriteRef) => (l.clone(), v.one()?),
                        _ => return Err(malformed("a released value of another kind")),
                    };
                    let lp = self.layout_ptr(&l);
                    self.call_helper(HelperId::memory_release_heap(), &[self.ctx, lp, at])?;
                }
                _ => {}
            }
            if let Some(site) = call_site {
                self.charge_call_site(i, site)?;
            }
            if let Some((l, at)) = copied {
                self.charge_copy(i, &l, at)?;
            }
            if let Some((l, [a, b], values)) = compared {
                self.charge_compare(i, &l, a, b, values)?;
            }
            if let Some(prices) = variant_prices {
                self.charge_variant_price(i, &prices)?;
            }
            let last = i + 1 == z;
            // Global storage under Aptos: tested before its price
            // (`aptos_global_enter`).
            let aptos_global = self.target.aptos.is_some() && self.code[i].is_global_storage();
            if (last || self.needs_hot_test(i)) && !aptos_global {
                self.gas_test(i, true);
            }
            // A call ending the segment pushes its results after the
            // segment's events are settled: check those pushes in place.
            let call_like =
                matches!(self.code[i], Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_));
            if let Some(s) = self.seg.as_mut() {
                s.inline_pushes = last && call_like;
            }
            if last && self.code[i].is_branch() {
                self.fast_prepaid_exit();
            }
            self.lower_instr(i)?;
            self.track_local(i);
            if let Some(MemoryFeed::Release(n)) = feed {
                let n = self.b.ins().iconst(types::I64, n as i64);
                self.memory_release(n);
            }
        }
        let seg = self.seg.take().ok_or_else(|| malformed("segment state"))?;
        // The last instruction's test settled every earlier push; it
        // pushes nothing itself unless it is a call (checked in place) or
        // leaves values at a block end (malformed).
        if !seg.pending.is_empty() {
            return Err(malformed("operand-stack pushes after a segment's last test"));
        }
        if let Some(i) = self.untested_failure {
            return Err(unsupported(format!("internal: failure site at offset {i} without a gas test")));
        }
        let total = seg.prefix.last().copied().unwrap_or(0);
        self.b.func.replace(seg.total_at).iconst(types::I64, total as i64);
        self.last_segment_total = total;
        // The last instruction's hot test settled every charge (gas on
        // entry >= total) and nothing else changed the gas left since the
        // charge: wherever the gas left `entry - total` is used later
        // (dominated by this point), it is `base - offset` with
        // `base >= offset`, so later tests compare `base` and Cranelift
        // needs no subtraction on their hot path.
        if seg.tested == Some(z - 1) && !seg.rebased && seg.defs == self.gas_defs {
            self.gas_floors.push((seg.left, seg.gas, total));
        }
        for (at, kept) in seg.refunds {
            let refund = total - kept;
            self.b.func.replace(at).iconst(types::I64, refund as i64);
        }
        if z == e {
            self.fast_prepaid_exit();
            self.fall_through(e)?;
        }
        Ok(())
    }

    /// What instruction `i` charges before it runs, in the order charged:
    /// its unit-table cost, or its Aptos charges (`lower/aptos.rs`).
    fn charges(&mut self, i: usize) -> CompileResult<Vec<(u64, bool)>> {
        match (self.target.aptos, self.target.cost) {
            (Some(p), _) => self.aptos_charges(p, i),
            (None, Some(cost)) => Ok(vec![(instr_cost(cost, &self.code[i]), false)]),
            (None, None) => Err(malformed("a gas segment in unmetered code")),
        }
    }

    /// The gas kept by a failure of instruction `k` (its charges made).
    pub(super) fn kept_through(&self, k: usize) -> Option<u64> {
        self.seg.as_ref().and_then(|s| s.prefix.get(k + 1 - s.start).copied())
    }

    /// The refund constant of a failure that keeps `kept` of the segment's
    /// gas (0 for `None`), set when the segment is finished.
    pub(super) fn refund_const(&mut self, kept: Option<u64>) -> Value {
        let r = self.b.ins().iconst(types::I64, 0);
        if let (Some(kept), Ok(inst)) = (kept, self.def_inst(r)) {
            if let Some(s) = self.seg.as_mut() {
                s.refunds.push((inst, kept));
            }
        }
        r
    }

    /// Instruction `i` uses `amount` units of Aptos's memory before the
    /// last `later` of its charges (1: before its price, after the types
    /// it builds; 0: after its price; more than it has: before all), as
    /// the interpreter feeds its meter: the gas events up to that point are
    /// settled first (so memory is used exactly when the interpreter uses
    /// it, and the peak matches), then the runtime's `memory_use` runs;
    /// past the quota, `i` fails with `MEMORY_LIMIT_EXCEEDED`, keeping the
    /// gas charged up to that point.
    fn memory_use(&mut self, i: usize, amount: u64, later: usize) -> CompileResult<()> {
        let s = self.seg.as_ref().ok_or_else(|| malformed("a memory use outside a segment"))?;
        let steps = &s.steps[i - s.start];
        let own = steps.len().saturating_sub(later);
        let kept = match own {
            0 => s.prefix[i - s.start],
            n => steps[n - 1].0,
        };
        self.gas_test_steps(i, own, true);
        // Inline, as `MemoryAlgebra::use_memory`: what is left shrinks by
        // `amount` and its lowest value (the peak usage) follows; a use that
        // does not fit goes to the `memory_use` helper, which fails and
        // records it.
        let done = self.b.create_block();
        let m = self.memory_algebra(done);
        let rem = self.b.ins().load(types::I64, Self::mem(), m, MEMORY_REMAINING);
        let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, rem, amount as i64);
        let (fits, slow) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(slow);
        self.b.ins().brif(short, slow, &[], fits, &[]);
        self.b.switch_to_block(fits);
        self.b.seal_block(fits);
        let rem = self.b.ins().iadd_imm_s(rem, (amount as i64).wrapping_neg());
        self.b.ins().store(Self::mem(), rem, m, MEMORY_REMAINING);
        let lowest = self.b.ins().load(types::I64, Self::mem(), m, MEMORY_LOWEST);
        let lowest = self.b.ins().umin(lowest, rem);
        self.b.ins().store(Self::mem(), lowest, m, MEMORY_LOWEST);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let n = self.b.ins().iconst(types::I64, amount as i64);
        let failed = self.call_helper(HelperId::memory_use(), &[self.ctx, n])?;
        // The helper recorded the status.
        self.fail_keeping_if(failed, i, 0, true, Some(kept));
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        Ok(())
    }

    /// Releases `amount` units of Aptos's memory inline, as
    /// `MemoryAlgebra::release_memory` (never fails; what is left
    /// saturates).
    pub(super) fn memory_release(&mut self, amount: Value) {
        let done = self.b.create_block();
        let m = self.memory_algebra(done);
        let rem = self.b.ins().load(types::I64, Self::mem(), m, MEMORY_REMAINING);
        let (sum, carry) = self.b.ins().uadd_overflow(rem, amount);
        let max = self.b.ins().iconst(types::I64, -1);
        let rem = self.b.ins().select(carry, max, sum);
        self.b.ins().store(Self::mem(), rem, m, MEMORY_REMAINING);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// The address of the running meter's memory algebra
    /// (`ExecContext::aptos_meter`); without a meter, control goes to
    /// `done` (nothing to feed, as the helpers do). A loop's fast copy
    /// reads the address its dispatch loaded (nothing in the copy changes
    /// it; a frame without a meter runs the exact copy).
    fn memory_algebra(&mut self, done: Block) -> Value {
        if let Some((var, used)) = self.fast_meter.as_mut() {
            *used = true;
            let var = *var;
            return self.b.use_var(var);
        }
        let meter = self.load_ctx(self.ptr, APTOS_METER);
        let has = self.b.create_block();
        self.b.ins().brif(meter, has, &[], done, &[]);
        self.b.switch_to_block(has);
        self.b.seal_block(has);
        meter
    }

    /// When `failed` is set, instruction `i` fails on a cold path with
    /// status number `status` (0: the helper that answered `failed`
    /// recorded it), dropping the operand stack, writing the gas out first
    /// when `gas_out` (else a helper before it did), and keeping `kept` of
    /// the segment's charges; lowering continues on the other path.
    fn fail_keeping_if(&mut self, failed: Value, i: usize, status: i64, gas_out: bool, kept: Option<u64>) {
        let cont = self.b.create_block();
        let fail = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(failed, fail, &[], cont, &[]);
        self.b.switch_to_block(fail);
        self.b.seal_block(fail);
        let st = self.b.ins().iconst(types::I32, status);
        if gas_out {
            self.gas_out();
        }
        let offv = self.b.ins().iconst(types::I32, i as i64);
        self.stage_fail(st, offv, kept);
        self.drop_operands_then(self.fail);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Call instruction `i`'s Aptos charges that only the transaction
    /// fixes (`site`, see `lower/aptos.rs` `call_site`): the events before
    /// its charges are settled, then the runtime's `aptos_call` makes them
    /// and checks the call's constant charges after them (the segment's
    /// charge on entry included those), failing where the interpreter
    /// fails: out of gas, at the instruction or (module loading, the
    /// frame) as a loading error, or past the dependency limits. A failure
    /// leaves the gas the helper computed (nothing is refunded).
    fn charge_call_site(&mut self, i: usize, site: AptosCallSite) -> CompileResult<()> {
        self.gas_test_steps(i, 0, true);
        let at = self.env.aptos_call_site(site)?;
        self.gas_out();
        let sp = self.b.ins().iconst(self.ptr, at as i64);
        let failed = self.call_helper(HelperId::aptos_call(), &[self.ctx, sp])?;
        // The helper recorded the status and the gas left.
        self.fail_keeping_if(failed, i, 0, false, None);
        self.gas_in();
        Ok(())
    }

    /// `pack_closure` (instruction `i`, its `PackSite` at `site`) under
    /// Aptos's schedule, after its constant charges (settled by its hot
    /// test) and before the captured values move: the runtime's
    /// `aptos_pack` settles the segment on the meter (the fuel before the
    /// pack's module loads: the gas left plus the segment's charges after
    /// `i`) and charges the target's module and a storable closure's
    /// captured layouts' modules, as the interpreter's `charge_aptos_pack`.
    /// A failure fails here keeping the gas the helper left; the segment's
    /// entry gas is then rebased.
    pub(super) fn aptos_pack(&mut self, site: u64, i: usize) -> CompileResult<()> {
        let kept = self.kept_through(i).ok_or_else(|| malformed("a closure pack outside a segment"))?;
        let rest = self.refund_const(Some(kept));
        let sp = self.b.ins().iconst(self.ptr, site as i64);
        let failed = self.call_helper(HelperId::aptos_pack(), &[self.ctx, sp, rest])?;
        // The helper recorded the status and the gas left.
        self.fail_keeping_if(failed, i, 0, false, None);
        self.rebase_segment();
        Ok(())
    }

    /// Call instruction `i` of a native (`site`, its slot table at `table`)
    /// under Aptos's schedule: the segment's events through the call's
    /// price were settled by its hot test; the runtime's `aptos_native`
    /// settles them on the meter (the fuel before the call: the gas left
    /// plus the segment's charges after `i`), runs the native on the meter
    /// with its arguments' and results' memory, and leaves the gas left
    /// relative to the meter's fuel, so the segment is rebased. An error of
    /// the call fails here keeping the gas the helper left; running out of
    /// gas inside the native is located at the native (offset 0), as Aptos
    /// locates it, and passed on as a callee's error. A native with a
    /// `native_fast` operation (`fast`) runs through `aptos_native_fast`
    /// (no native bridge).
    pub(super) fn aptos_native(
        &mut self,
        site: Value,
        table: Value,
        callee: &CalleeRef,
        fast: Option<u64>,
        i: usize,
    ) -> CompileResult<()> {
        let kept = self.kept_through(i).ok_or_else(|| malformed("a native call outside a segment"))?;
        let rest = self.refund_const(Some(kept));
        let at = self.native_location(callee, i)?;
        let at = self.b.ins().iconst(self.ptr, at as i64);
        self.gas_out();
        let st = match fast {
            Some(op) => {
                let op = self.b.ins().iconst(types::I64, op as i64);
                self.call_helper(HelperId::aptos_native_fast(), &[self.ctx, site, table, rest, at, op])?
            }
            None => self.call_helper(HelperId::aptos_native(), &[self.ctx, site, table, rest, at])?,
        };
        let here = self.b.ins().icmp_imm_u(IntCC::Equal, st, FAILED_HERE as i64);
        // The helper recorded the status and the gas left.
        self.fail_keeping_if(here, i, 0, false, None);
        let located = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, 0);
        let cont = self.b.create_block();
        self.propagate_if(located, cont);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        self.gas_in();
        self.rebase_segment();
        Ok(())
    }

    /// The error constant locating running out of gas inside the native
    /// call instruction `i` calls: the native function, offset 0 (the
    /// interpreter's `native_error`).
    fn native_location(&mut self, callee: &CalleeRef, i: usize) -> CompileResult<u64> {
        let m = self.target.module;
        let h = match &self.code[i] {
            Bytecode::Call(h) => *h,
            Bytecode::CallGeneric(fi) => {
                m.function_instantiations.get(fi.idx()).ok_or_else(|| malformed("function instantiation"))?.handle
            }
            _ => return Err(malformed("a native call of another instruction")),
        };
        let fh = m.function_handles.get(h.idx()).ok_or_else(|| malformed("function handle index"))?;
        let module = callee.module.as_ref().ok_or_else(|| malformed("a native without its module"))?;
        let function_index = callee.native_def.ok_or_else(|| malformed("a native without its definition"))?;
        let mut e = movejit_runtime::VmError::new(StatusCode::OUT_OF_GAS);
        e.location = Some(movejit_runtime::ErrorLocation {
            module: module.long_string(),
            function_name: m.identifier_at(fh.name).to_string(),
            function_index,
            code_offset: 0,
        });
        Ok(self.env.error_constant(e))
    }

    /// `copy_loc` / `read_ref` (instruction `i`) of the value of layout `l`
    /// at `at`, charged by its size (`lower/aptos.rs` `copied_value`): the
    /// events before it are settled, then the runtime's `aptos_copy` uses
    /// its heap part and charges its price (with the fuel before it: the
    /// gas left plus the segment's charges after `i`, which its charge on
    /// entry included). A failure leaves the gas the helper computed. The
    /// segment's later tests measure from the gas on entry less what the
    /// helper charged: its entry gas is rebased (`gas left + total`).
    fn charge_copy(&mut self, i: usize, l: &Arc<FlatLayout>, at: Value) -> CompileResult<()> {
        self.gas_test_steps(i, 0, true);
        let kept = self.kept_through(i).ok_or_else(|| malformed("a copy outside a segment"))?;
        let rest = self.refund_const(Some(kept));
        self.gas_out();
        let lp = self.layout_ptr(l);
        // A closure's copy for the call right after it: one helper charges
        // both (`lower/closure.rs`).
        let failed = match self.charge_closure_copy(i, lp, at, rest)? {
            Some(failed) => failed,
            None => {
                let op = self.b.ins().iconst(types::I64, self.code[i].opcode() as i64);
                self.call_helper(HelperId::aptos_copy(), &[self.ctx, op, lp, at, rest])?
            }
        };
        // The helper recorded the status and the gas left.
        self.fail_keeping_if(failed, i, 0, false, None);
        self.gas_in();
        self.rebase_segment();
        Ok(())
    }

    /// Before global-storage instruction `i` under Aptos's schedule: the
    /// events before its price are settled (its price is charged after the
    /// resource's loading and I/O, which only the transaction fixes) and
    /// the gas left written out, and `rest` for the runtime's global shim
    /// (`ExecContext::global_rest`): the segment's charges from `i`'s price
    /// on, which its charge on entry included (`flat::host::charge_global`).
    /// Nothing outside Aptos's schedule.
    pub(super) fn aptos_global_enter(&mut self, i: usize) -> CompileResult<()> {
        if self.target.aptos.is_none() {
            return Ok(());
        }
        let s = self.seg.as_ref().ok_or_else(|| malformed("a global operation outside a segment"))?;
        let steps = &s.steps[i - s.start];
        let own = steps.len().saturating_sub(1);
        let kept = match own {
            0 => s.prefix[i - s.start],
            n => steps[n - 1].0,
        };
        self.gas_test_steps(i, own, true);
        let rest = self.refund_const(Some(kept));
        self.gas_out();
        self.store_ctx(rest, off::GLOBAL_REST);
        Ok(())
    }

    /// After the global shim of instruction `i` (Aptos's schedule): the
    /// gas left is read back and the segment's entry gas rebased, as after
    /// `charge_copy`, then `i`'s price is tested on the hot path. A shim
    /// that read the resource settled the price on the meter (the test
    /// cannot fire then); one that answered from `GlobalHints` charged
    /// nothing, and the price the segment precharged must still fit, or
    /// the run stops out of gas at `i` as in the interpreter.
    pub(super) fn aptos_global_leave(&mut self, i: usize) {
        if self.target.aptos.is_none() {
            return;
        }
        self.gas_in();
        self.rebase_segment();
        self.gas_test(i, true);
    }

    /// `eq` / `neq` (instruction `i`) of the values of layout `l` at `a`
    /// and `b`, charged by their sizes (`lower/aptos.rs`
    /// `compared_values`) as `charge_copy` charges a copy: the runtime's
    /// `aptos_compare` releases the operands' heap parts (`values`: they
    /// are values, not references) and charges the price; the segment's
    /// entry gas is then rebased.
    fn charge_compare(&mut self, i: usize, l: &Arc<FlatLayout>, a: Value, b: Value, values: bool) -> CompileResult<()> {
        self.gas_test_steps(i, 0, true);
        let kept = self.kept_through(i).ok_or_else(|| malformed("a comparison outside a segment"))?;
        let rest = self.refund_const(Some(kept));
        self.gas_out();
        let op = self.b.ins().iconst(types::I64, self.code[i].opcode() as i64);
        let lp = self.layout_ptr(l);
        let vals = self.b.ins().iconst(types::I64, i64::from(values));
        let failed = self.call_helper(HelperId::aptos_compare(), &[self.ctx, op, lp, a, b, vals, rest])?;
        // The helper recorded the status and the gas left.
        self.fail_keeping_if(failed, i, 0, false, None);
        self.gas_in();
        self.rebase_segment();
        Ok(())
    }

    /// `unpack_variant` (instruction `i`) of an enum whose variants differ
    /// in field count: after its constant charges (settled here), its
    /// price by the variant of the value on top of the stack (`prices`,
    /// one per variant), as the interpreter charges it before checking the
    /// variant. A price that does not fit is spent whole (the gas left
    /// wrapping below zero, settled as the interpreter's one charge); the
    /// segment's entry gas is then rebased, as after `charge_copy`.
    fn charge_variant_price(&mut self, i: usize, prices: &[u64]) -> CompileResult<()> {
        self.gas_test(i, true);
        let src = match self.stack.last() {
            Some((Ty::M(_), v)) => v.addr()?,
            _ => return Err(malformed("unpack_variant of a value not in memory")),
        };
        let tag = self.b.ins().load(types::I16, Self::vmem(), src, 0);
        let (last, rest) = prices.split_last().ok_or_else(|| malformed("an enum without variants"))?;
        let mut price = self.b.ins().iconst(types::I64, *last as i64);
        for (v, p) in rest.iter().enumerate() {
            let is = self.b.ins().icmp_imm_u(IntCC::Equal, tag, v as i64);
            let pv = self.b.ins().iconst(types::I64, *p as i64);
            price = self.b.ins().select(is, pv, price);
        }
        // The fuel before the price: the gas left plus the segment's
        // charges after `i`, which its charge on entry included.
        let gas = self.gas_get();
        let kept = self.kept_through(i);
        let rest = self.refund_const(kept);
        let fuel = self.b.ins().iadd(gas, rest);
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, fuel, price);
        let left = self.b.ins().isub(gas, price);
        self.gas_set(left);
        self.fail_keeping_if(short, i, status_number(StatusCode::OUT_OF_GAS), true, kept);
        self.rebase_segment();
        Ok(())
    }

    /// After a helper charged a run-time amount (the gas left holds it):
    /// the segment's later tests measure from its entry gas less that
    /// amount, so the entry gas is rebased to `gas left + total` (the
    /// total is the segment's charge on entry, set when it is finished).
    fn rebase_segment(&mut self) {
        let left = self.gas_get();
        let total = self.refund_const(Some(0));
        let rebased = self.b.ins().iadd(left, total);
        if let Some(s) = self.seg.as_mut() {
            s.gas = rebased;
            s.rebased = true;
        }
    }

    /// The instruction defining `v`.
    fn def_inst(&self, v: Value) -> CompileResult<Inst> {
        self.b.func.dfg.value_def(v).inst().ok_or_else(|| malformed("a constant without its instruction"))
    }

    /// Records a push of instruction `i` from height `h` above the
    /// checked watermark; `false` when it must be checked in place.
    pub(super) fn defer_push(&mut self, i: usize, h: usize) -> bool {
        match self.seg.as_mut() {
            Some(s) if !s.inline_pushes => {
                s.pending.push((i, h));
                // Recorded by a function's fast copy too, which tests no
                // room (`lower_function`'s dispatch tests it once).
                self.checked_height = self.checked_height.max(h + 1);
                if self.fast_gas {
                    self.fast_push = self.fast_push.max(Some(h));
                }
                true
            }
            _ => false,
        }
    }

    /// At a failure site of instruction `i` (its cold block): unless a
    /// hot-path test preceded `i`, an earlier event (out of gas up to `i`,
    /// an overflow before `i`) wins over the instruction's own error.
    pub(super) fn note_failure_site(&mut self, i: usize) {
        match &self.seg {
            Some(s) if s.tested != Some(i) => {
                if self.needs_hot_test(i) && self.untested_failure.is_none() {
                    self.untested_failure = Some(i);
                }
                self.gas_test(i, false)
            }
            _ => {}
        }
    }

    /// Instructions tested on the hot path: those that hand gas to others
    /// or charge it at run time (calls, natives), fail without a failure
    /// site (aborts), or touch global storage.
    fn needs_hot_test(&self, i: usize) -> bool {
        use Bytecode as B;
        let ins = &self.code[i];
        ins.is_global_storage()
            || matches!(
                ins,
                B::Call(_)
                    | B::CallGeneric(_)
                    | B::CallClosure(_)
                    | B::PackClosure(..)
                    | B::PackClosureGeneric(..)
                    | B::Abort
                    | B::AbortMsg
            )
    }

    /// A test before instruction `i` (`hot`: on the hot path, settling the
    /// events so far; else in a failure site of `i`): when an event
    /// happens since the last hot test (running out of gas at an
    /// instruction up to `i`, an overflow at a push before `i`), the
    /// function's shared resolver finds the first one in the event table
    /// and fails there, exactly as in the interpreter; otherwise `i` runs
    /// (or fails with its own error).
    fn gas_test(&mut self, i: usize, hot: bool) {
        self.gas_test_steps(i, usize::MAX, hot)
    }

    /// [`gas_test`](Self::gas_test) of the first `own` charge steps of
    /// `i` only (all: `usize::MAX`): a memory use sits before its last.
    fn gas_test_steps(&mut self, i: usize, own: usize, hot: bool) {
        let Some(seg) = self.seg.as_mut() else { return };
        let start = seg.start;
        let (first, done) = (seg.oog_upto, seg.oog_steps);
        let whole = own >= seg.steps[i - start].len();
        for k in first..=i {
            while let Some(&(pk, h)) = seg.pending.first() {
                if pk >= k {
                    break;
                }
                seg.pending.remove(0);
                let p = seg.prefix[pk + 1 - start];
                self.gas_events.extend([h as u64, (pk as u64) << 2 | EVENT_PUSH, p]);
                seg.range_push = Some(seg.range_push.map_or(h, |m| m.max(h)));
            }
            // Running out at each step of `k`'s charge (those not in the
            // table yet, up to `own` of `i`'s).
            let steps = &seg.steps[k - start];
            let from = if k == first { done.min(steps.len()) } else { 0 };
            let to = if k == i { own.min(steps.len()) } else { steps.len() };
            let mut reached = if from == 0 { seg.prefix[k - start] } else { steps[from - 1].0 };
            for &(q, at_load) in steps.get(from..to).unwrap_or(&[]) {
                if q > reached {
                    let kind = if at_load { EVENT_AT_LOAD } else { EVENT_OUT_OF_GAS };
                    self.gas_events.extend([q, (k as u64) << 2 | kind, q]);
                    seg.range_oog = true;
                    reached = q;
                }
            }
        }
        let threshold = if whole {
            if seg.oog_upto <= i {
                seg.oog_steps = 0;
            }
            seg.oog_upto = seg.oog_upto.max(i + 1);
            seg.prefix[i + 1 - start]
        } else {
            // The steps counted in the table are `i`'s own: a count left
            // by an earlier instruction's partial test does not carry over
            // (it would hide `i`'s first steps from the table).
            if seg.oog_upto < i {
                seg.oog_upto = i;
                seg.oog_steps = own;
            } else if seg.oog_upto == i {
                seg.oog_steps = seg.oog_steps.max(own);
            }
            if own == 0 {
                seg.prefix[i - start]
            } else {
                seg.steps[i - start][own - 1].0
            }
        };
        // A loop's fast copy runs only with the gas for its iteration
        // (`lower/fastloop.rs`): no out-of-gas event can happen there.
        // Nor an overflow: its dispatch tested the room for every push.
        let oog = seg.range_oog && !self.fast_gas;
        // A function's fast copy has no room to test: its dispatch
        // tested the room for every push (`defer_push`).
        let push = seg.range_push.filter(|_| !self.fast_gas && self.room.is_some());
        let (gas, first) = (seg.gas, seg.range_first);
        if hot && whole {
            seg.tested = Some(i);
        }
        if hot {
            seg.range_first = self.gas_events.len() / EVENT_WORDS;
            seg.range_oog = false;
            seg.range_push = None;
        }
        if !oog && push.is_none() {
            return;
        }
        let cont = self.b.create_block();
        // The resolver's arguments are set on a cold stub, off the hot path.
        let stub = self.b.create_block();
        self.b.set_cold_block(stub);
        // One compare-and-branch per condition (fused by the CPU), not a
        // combined flag.
        if oog {
            // (Rewritten by `fold_gas_floors` once every block is sealed.)
            let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, threshold as i64);
            if let Ok(inst) = self.def_inst(short) {
                self.gas_tests.push((inst, gas, threshold));
            }
            let next = match (push, self.room) {
                (Some(_), Some(_)) => self.b.create_block(),
                _ => cont,
            };
            self.b.ins().brif(short, stub, &[], next, &[]);
            if next != cont {
                self.b.switch_to_block(next);
                self.b.seal_block(next);
            }
        }
        match (push, self.room) {
            (Some(h), Some(room)) => {
                let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64);
                self.b.ins().brif(over, stub, &[], cont, &[]);
            }
            // (No room without a prologue: kept as the one branch.)
            _ if !oog => {
                let never = self.b.ins().iconst(types::I8, 0);
                self.b.ins().brif(never, stub, &[], cont, &[]);
            }
            _ => {}
        }
        self.b.switch_to_block(stub);
        self.b.seal_block(stub);
        // What the interpreter holds on its operand stack when it runs out
        // here: the values on it at this test (later pushes never ran).
        let resolver = self.resolver();
        let firstv = self.b.ins().iconst(types::I64, first as i64);
        self.b.ins().stack_store(self.ptr, firstv, self.fail_slot, RESOLVE_FIRST);
        self.b.ins().stack_store(self.ptr, gas, self.fail_slot, RESOLVE_GAS);
        self.drop_operands_then(resolver);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Once every block is sealed (the SSA builder's placeholders resolved
    /// to the values they alias): a test `gas < threshold` of a gas left
    /// known as `base - offset` with `base >= offset` (segments recorded
    /// in `gas_floors`, chained through their entry gas) becomes
    /// `base < offset + threshold`: the same outcome, and the hot path
    /// keeps no subtraction for it.
    pub(super) fn fold_gas_floors(&mut self) {
        let dfg = &self.b.func.dfg;
        let mut floors: HashMap<Value, (Value, u64)> = HashMap::new();
        for &(left, gas, total) in &self.gas_floors {
            let gas = dfg.resolve_aliases(gas);
            let (base, offset) = floors.get(&gas).copied().unwrap_or((gas, 0));
            if let Some(offset) = offset.checked_add(total).filter(|o| *o <= i64::MAX as u64) {
                floors.insert(dfg.resolve_aliases(left), (base, offset));
            }
        }
        for (inst, gas, threshold) in std::mem::take(&mut self.gas_tests) {
            let gas = self.b.func.dfg.resolve_aliases(gas);
            let Some(&(base, offset)) = floors.get(&gas) else { continue };
            let Some(t) = offset.checked_add(threshold).filter(|t| *t <= i64::MAX as u64) else { continue };
            self.b.func.replace(inst).icmp_imm_u(IntCC::UnsignedLessThan, base, t as i64);
        }
    }

    /// On the propagate path (Aptos): a callee's callee ran out of gas
    /// making its frame, which Aptos locates at the module of the frame
    /// below the caller: this one.
    pub(super) fn locate_at_load(&mut self) {
        let flags = self.load_ctx(types::I32, off::FLAGS);
        let pending = self.b.ins().band_imm_u(flags, ExecContext::AT_LOAD as i64);
        let here = self.b.create_block();
        let done = self.b.create_block();
        self.b.set_cold_block(here);
        self.b.ins().brif(pending, here, &[], done, &[]);
        self.b.switch_to_block(here);
        self.b.seal_block(here);
        let m = self.b.ins().iconst(types::I32, self.target.module_idx as i64);
        self.store_ctx(m, off::MODULE);
        let z = self.b.ins().iconst(types::I32, 0);
        self.store_ctx(z, off::FUNCTION);
        self.store_ctx(z, off::CODE_OFFSET);
        let flags = self.b.ins().bxor_imm_u(flags, (ExecContext::AT_LOAD | ExecContext::MODULE_ONLY) as i64);
        self.store_ctx(flags, off::FLAGS);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// The function's shared resolver block; its operands (first event,
    /// gas on entry) are in the fail slot (as the failure path's, and for
    /// the same reason).
    fn resolver(&mut self) -> Block {
        if let Some(r) = self.gas_resolver {
            return r;
        }
        let r = self.b.create_block();
        self.b.set_cold_block(r);
        self.gas_resolver = Some(r);
        r
    }

    /// Fills the resolver: the event table becomes a constant (a
    /// `vector<u64>` of `[threshold, k << 2 | kind, prefix]` entries,
    /// a sentinel last), scanned from the test's first event to the first
    /// that happens: `gas < threshold` for running out of gas at `k`,
    /// `room <= threshold` for an overflow at a push of `k` (which was
    /// charged: gas left `gas - prefix`).
    pub(super) fn finish_gas(&mut self) -> CompileResult<()> {
        let Some(r) = self.gas_resolver else { return Ok(()) };
        let room = self.room.ok_or_else(|| malformed("no prologue"))?;
        // A push at height i64::MAX always overflows: the scan ends.
        self.gas_events.extend([i64::MAX as u64, EVENT_PUSH, 0]);
        let words = std::mem::take(&mut self.gas_events);
        let mut bytes = Vec::with_capacity(10 + 8 * words.len());
        let mut n = words.len() as u64;
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                bytes.push(byte);
                break;
            }
            bytes.push(byte | 0x80);
        }
        for w in &words {
            bytes.extend(w.to_le_bytes());
        }
        let layout = self.env.layout(&RType::Vector(Box::new(RType::U64)))?;
        let at = self.env.constant(&layout, &bytes)?;

        self.b.switch_to_block(r);
        let first = self.b.ins().stack_load(self.ptr, types::I64, self.fail_slot, RESOLVE_FIRST);
        let gas = self.b.ins().stack_load(self.ptr, types::I64, self.fail_slot, RESOLVE_GAS);
        let slot = self.b.ins().iconst(self.ptr, at as i64);
        let hdr = self.b.ins().load(self.ptr, Self::mem(), slot, 0);
        let data = self.b.ins().load(self.ptr, Self::mem(), hdr, 16);
        let scan = self.b.create_block();
        self.b.append_block_param(scan, types::I64);
        let found = self.b.create_block();
        self.b.set_cold_block(scan);
        self.b.set_cold_block(found);
        self.b.append_block_param(found, self.ptr);
        self.b.ins().jump(scan, &[BlockArg::Value(first)]);
        self.b.switch_to_block(scan);
        let idx = self.b.block_params(scan)[0];
        let scaled = self.b.ins().imul_imm_s(idx, (8 * EVENT_WORDS) as i64);
        let e = self.b.ins().iadd(data, scaled);
        let thr = self.b.ins().load(types::I64, Self::mem(), e, 0);
        let kw = self.b.ins().load(types::I64, Self::mem(), e, 8);
        let is_push = self.b.ins().band_imm_u(kw, 1);
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, thr);
        let over = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, room, thr);
        let hit = self.b.ins().select(is_push, over, short);
        let next = self.b.ins().iadd_imm_s(idx, 1);
        self.b.ins().brif(hit, found, &[BlockArg::Value(e)], scan, &[BlockArg::Value(next)]);
        self.b.switch_to_block(found);
        let e = self.b.block_params(found)[0];
        let kw = self.b.ins().load(types::I64, Self::mem(), e, 8);
        let prefix = self.b.ins().load(types::I64, Self::mem(), e, 16);
        let is_push = self.b.ins().band_imm_u(kw, EVENT_PUSH as i64);
        let at_load = self.b.ins().band_imm_u(kw, EVENT_AT_LOAD as i64);
        let k = self.b.ins().ushr_imm_u(kw, 2);
        let k = self.b.ins().ireduce(types::I32, k);
        let oog = self.b.ins().iconst(types::I32, status_number(StatusCode::OUT_OF_GAS));
        let ovf = self.b.ins().iconst(types::I32, status_number(StatusCode::EXECUTION_STACK_OVERFLOW));
        let st = self.b.ins().select(is_push, ovf, oog);
        // Out of gas leaves none (the failure path zeroes it).
        let left = self.b.ins().isub(gas, prefix);
        self.store_ctx(left, off::GAS_LEFT);
        // A shim of the instruction whose failure site led here may have
        // recorded its own error's sub-status: this error has none.
        let flags = self.load_ctx(types::I32, off::FLAGS);
        let flags = self.b.ins().band_imm_u(flags, !ExecContext::HAS_SUB_STATUS as i64 & 0xffff_ffff);
        // Running out making a callee's frame: located by the frame below.
        let at_load = self.b.ins().ireduce(types::I32, at_load);
        let flags = self.b.ins().bor(flags, at_load);
        self.store_ctx(flags, off::FLAGS);
        self.jump_to_fail(st, k, None);
        Ok(())
    }
}
