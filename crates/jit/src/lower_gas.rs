//! Metered lowering of one gas segment (see [`gas`](crate::gas)): ONE copy
//! of the segment's code, charged at once on entry.
//!
//! On entry the segment computes `sane`: the gas left covers the whole
//! segment and the frame's operand-stack room exceeds every height the
//! segment pushes from. When it holds, nothing but the instructions' own
//! errors can stop the segment, and those refund the cost of the
//! instructions after them. When it does not, the first failing event
//! (running out of gas at instruction `k`, or an operand-stack overflow at a
//! push of instruction `k`) follows from the gas and room on entry and the
//! segment's static prefix sums alone, as long as only instructions that
//! cannot fail ran before it. So every instruction that may fail, and the
//! segment's last instruction, starts with a test of `sane`; its cold side
//! resolves the events since the previous test (a select chain over the
//! prefix sums and recorded push heights) and either fails exactly where
//! the interpreter would or lets the instruction run, its own errors
//! taking precedence over events after it.
//!
//! Which instructions may fail is decided before each is lowered
//! ([`Lowerer::may_fail`]); a failure site lowered for an instruction
//! without a test is caught and refused (the function is then not
//! compiled), never silently miscounted.

use super::*;

/// The state of the segment being lowered.
pub(super) struct Segment {
    /// Offset of the first instruction.
    start: usize,
    /// Gas left on entry (before the segment's charge).
    gas: Value,
    /// Whether gas and room suffice for the whole segment.
    sane: Value,
    /// `prefix[k]`: the summed cost of the first `k` instructions.
    prefix: Vec<u64>,
    /// First instruction whose running out of gas is not yet resolved.
    unresolved: usize,
    /// Pushes (instruction, height) not yet resolved, in order.
    pending: Vec<(usize, usize)>,
    /// The highest height the segment pushes from (deferred pushes).
    hmax: Option<usize>,
    /// Pushes of the instruction being lowered are checked in place.
    inline_pushes: bool,
    /// The instruction whose test was lowered last.
    tested: Option<usize>,
}

impl Lowerer<'_, '_> {
    /// Lowers segment `[a, z)` of the block ending at `e` (metered code).
    pub(super) fn lower_segment(&mut self, cost: &CostTable, a: usize, z: usize, e: usize) -> CompileResult<()> {
        let costs: Vec<u64> = self.code[a..z].iter().map(|i| instr_cost(cost, i)).collect();
        let mut prefix = Vec::with_capacity(costs.len() + 1);
        prefix.push(0u64);
        for c in &costs {
            let p = prefix.last().copied().unwrap_or(0).saturating_add(*c);
            prefix.push(p);
        }
        let total = prefix.last().copied().unwrap_or(0);
        let refunds: Vec<u64> = prefix[1..].iter().map(|p| total - p).collect();

        let gas = self.gas_get();
        let t = self.b.ins().iconst(types::I64, total as i64);
        let left = self.b.ins().isub(gas, t);
        self.gas_set(left);
        let enough = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, gas, t);
        // The highest push height is known once the segment is lowered:
        // the constant is patched then.
        let hconst = self.b.ins().iconst(types::I64, 0);
        let room = self.room.ok_or_else(|| malformed("no prologue"))?;
        let roomy = self.b.ins().icmp(IntCC::SignedGreaterThan, room, hconst);
        let sane = self.b.ins().band(enough, roomy);
        self.mode = Mode::Fast { start: a, refunds };
        self.seg = Some(Segment {
            start: a,
            gas,
            sane,
            prefix,
            unresolved: a,
            pending: Vec::new(),
            hmax: None,
            inline_pushes: false,
            tested: None,
        });
        for i in a..z {
            let last = i + 1 == z;
            if last || self.may_fail(i)? {
                self.gas_test(i);
            }
            // A call ending the segment pushes its results after the
            // segment's events are settled: check those pushes in place.
            let call_like = matches!(self.code[i], Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_));
            if let Some(s) = self.seg.as_mut() {
                s.inline_pushes = last && call_like;
            }
            self.lower_instr(i)?;
        }
        let seg = self.seg.take().ok_or_else(|| malformed("segment state"))?;
        // The last instruction's test settled every earlier push; it
        // pushes nothing itself unless it is a call (checked in place) or
        // leaves values at a block end (malformed).
        if !seg.pending.is_empty() {
            return Err(malformed("operand-stack pushes after a segment's last test"));
        }
        let h = seg.hmax.map_or(i64::MIN, |h| h as i64);
        let inst = self.b.func.dfg.value_def(hconst).unwrap_inst();
        self.b.func.replace(inst).iconst(types::I64, h);
        if let Some(i) = self.untested_failure {
            return Err(unsupported(format!("internal: failure site at offset {i} without a gas test")));
        }
        if z == e {
            self.fall_through(e)?;
        }
        Ok(())
    }

    /// Records a push of instruction `i` from height `h` above the
    /// checked watermark; `false` when it must be checked in place.
    pub(super) fn defer_push(&mut self, i: usize, h: usize) -> bool {
        match self.seg.as_mut() {
            Some(s) if !s.inline_pushes => {
                s.pending.push((i, h));
                s.hmax = Some(s.hmax.map_or(h, |m| m.max(h)));
                true
            }
            _ => false,
        }
    }

    /// Notes a failure site of instruction `i`: metered code must have
    /// tested the segment's gas and room before it.
    pub(super) fn note_failure_site(&mut self, i: usize) {
        if let Some(s) = &self.seg {
            if s.tested != Some(i) && self.untested_failure.is_none() {
                self.untested_failure = Some(i);
            }
        }
    }

    /// The test before instruction `i`: when `sane` fails, resolve the
    /// events since the previous test (running out of gas at instructions
    /// up to `i`, overflows at pushes before `i`); the first one fails
    /// here, exactly as in the interpreter; none lets `i` run.
    fn gas_test(&mut self, i: usize) {
        let Some(seg) = self.seg.as_mut() else { return };
        seg.tested = Some(i);
        let (start, gas, sane) = (seg.start, seg.gas, seg.sane);
        let mut events: Vec<(usize, Option<usize>)> = Vec::new();
        let pending = std::mem::take(&mut seg.pending);
        let mut pi = 0;
        for k in seg.unresolved..=i {
            if seg.prefix[k + 1 - start] > seg.prefix[k - start] {
                events.push((k, None));
            }
            while let Some(&(pk, h)) = pending.get(pi) {
                if pk != k {
                    break;
                }
                events.push((k, Some(h)));
                pi += 1;
            }
        }
        seg.unresolved = i + 1;
        if events.is_empty() {
            return;
        }
        let prefix: Vec<u64> = events.iter().map(|(k, _)| seg.prefix[k + 1 - start]).collect();
        let room = self.room;
        let cont = self.b.create_block();
        let cold = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(sane, cont, &[], cold, &[]);
        self.b.switch_to_block(cold);
        self.b.seal_block(cold);
        // Latest event first, so the earliest true one wins.
        let mut st = self.b.ins().iconst(types::I32, 0);
        let mut off = st;
        let mut ga = gas;
        let oog = self.b.ins().iconst(types::I32, status_number(StatusCode::OUT_OF_GAS));
        let ovf = self.b.ins().iconst(types::I32, status_number(StatusCode::EXECUTION_STACK_OVERFLOW));
        for ((k, push), p) in events.iter().zip(&prefix).rev() {
            let kv = self.b.ins().iconst(types::I32, *k as i64);
            match (push, room) {
                (None, _) => {
                    let c = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, *p as i64);
                    st = self.b.ins().select(c, oog, st);
                    off = self.b.ins().select(c, kv, off);
                }
                (Some(h), Some(room)) => {
                    let c = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, *h as i64);
                    st = self.b.ins().select(c, ovf, st);
                    off = self.b.ins().select(c, kv, off);
                    // Overflow: instruction k was charged.
                    let g = self.b.ins().iadd_imm_s(gas, (*p as i64).wrapping_neg());
                    ga = self.b.ins().select(c, g, ga);
                }
                (Some(_), None) => {}
            }
        }
        self.store_ctx(ga, off::GAS_LEFT);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().brif(st, self.fail, &[BlockArg::Value(st), BlockArg::Value(off), BlockArg::Value(zero)], cont, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Whether lowering instruction `i` (with the current abstract stack)
    /// may emit a failure site. Conservative: `true` unless known not to.
    pub(super) fn may_fail(&mut self, i: usize) -> CompileResult<bool> {
        use Bytecode as B;
        let ins = &self.code[i];
        Ok(match ins {
            B::Nop
            | B::FreezeRef
            | B::Pop
            | B::Ret
            | B::Branch(_)
            | B::BrTrue(_)
            | B::BrFalse(_)
            | B::VariantSwitch(_)
            | B::LdTrue
            | B::LdFalse
            | B::LdU8(_)
            | B::LdU16(_)
            | B::LdU32(_)
            | B::LdU64(_)
            | B::LdU128(_)
            | B::LdU256(_)
            | B::LdI8(_)
            | B::LdI16(_)
            | B::LdI32(_)
            | B::LdI64(_)
            | B::LdI128(_)
            | B::LdI256(_)
            | B::LdConst(_)
            | B::CopyLoc(_)
            | B::MoveLoc(_)
            | B::StLoc(_)
            | B::MutBorrowLoc(_)
            | B::ImmBorrowLoc(_)
            | B::MutBorrowField(_)
            | B::ImmBorrowField(_)
            | B::MutBorrowFieldGeneric(_)
            | B::ImmBorrowFieldGeneric(_)
            | B::Unpack(_)
            | B::UnpackGeneric(_)
            | B::PackVariant(_)
            | B::PackVariantGeneric(_)
            | B::SuiPackVariant(_)
            | B::SuiPackVariantGeneric(_)
            | B::TestVariant(_)
            | B::TestVariantGeneric(_)
            | B::ReadRef
            | B::WriteRef
            | B::VecLen(_)
            | B::BitOr
            | B::BitAnd
            | B::Xor
            | B::Or
            | B::And
            | B::Not
            | B::Eq
            | B::Neq => false,
            // 256-bit signed comparisons go through a status-returning shim.
            B::Lt | B::Gt | B::Le | B::Ge => {
                matches!(self.stack.last(), Some((Ty::S(k), _)) if k.is_wide() && *k != Kind::U256)
            }
            // Packing fails only past the value-depth limit.
            B::Pack(sd) => {
                let t = self.struct_type(*sd, Vec::new())?;
                self.too_deep(&t)?
            }
            B::PackGeneric(si) => {
                let m = self.target.module;
                let inst = m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct instantiation"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let t = self.struct_type(inst.def, args)?;
                self.too_deep(&t)?
            }
            _ => true,
        })
    }

    fn too_deep(&mut self, t: &RType) -> CompileResult<bool> {
        let (d, max) = self.env.value_depth(t)?;
        Ok(d > max)
    }
}
