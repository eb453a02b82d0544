//! Metered lowering of one gas segment (see [`gas`](crate::gas)): ONE copy
//! of the segment's code, charged at once on entry.
//!
//! While only instructions that cannot fail run, nothing observable
//! happens, so the first failing event among them (running out of gas at
//! instruction `k`, or an operand-stack overflow at a push of instruction
//! `k`) follows from the gas left on entry, the frame's room and the
//! segment's static prefix sums and push heights alone. So every
//! instruction that may fail, and the segment's last instruction, starts
//! with a test: `gas < prefix(i + 1)` (the instruction itself cannot be
//! charged, or an earlier one could not) or `room <= h` for the highest
//! push since the previous test. Either branches to the function's one
//! shared resolver, which scans a constant event table for the first event
//! and fails there, exactly as in the interpreter; otherwise the
//! instruction runs, its own errors refunding the cost of the instructions
//! after it and taking precedence over events after it. The hot path pays
//! one compare-and-branch per instruction that may fail.
//!
//! Which instructions may fail is decided before each is lowered
//! ([`Lowerer::may_fail`]); a failure site lowered for an instruction
//! without a test is caught and refused (the function is then not
//! compiled), never silently miscounted.

use super::*;

/// Words per event of the gas resolver's table.
const EVENT_WORDS: usize = 3;

/// The state of the segment being lowered.
pub(super) struct Segment {
    /// Offset of the first instruction.
    start: usize,
    /// Gas left on entry (before the segment's charge).
    gas: Value,
    /// `prefix[k]`: the summed cost of the first `k` instructions.
    prefix: Vec<u64>,
    /// First instruction whose running out of gas is not yet resolved.
    unresolved: usize,
    /// Pushes (instruction, height) not yet resolved, in order.
    pending: Vec<(usize, usize)>,
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
        self.mode = Mode::Fast { start: a, refunds };
        self.seg = Some(Segment { start: a, gas, prefix, unresolved: a, pending: Vec::new(), inline_pushes: false, tested: None });
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

    /// The test before instruction `i`: when an event happens since the
    /// previous test (running out of gas at an instruction up to `i`, an
    /// overflow at a push before `i`), the function's shared resolver
    /// finds the first one in the event table and fails there, exactly as
    /// in the interpreter; otherwise `i` runs.
    fn gas_test(&mut self, i: usize) {
        let Some(seg) = self.seg.as_mut() else { return };
        seg.tested = Some(i);
        let (start, gas) = (seg.start, seg.gas);
        let pending = std::mem::take(&mut seg.pending);
        let first = self.gas_events.len() / EVENT_WORDS;
        let (mut last_oog, mut max_push) = (None, None);
        let mut pi = 0;
        for k in seg.unresolved..=i {
            let p = seg.prefix[k + 1 - start];
            if p > seg.prefix[k - start] {
                self.gas_events.extend([p, (k as u64) << 1, p]);
                last_oog = Some(p);
            }
            while let Some(&(pk, h)) = pending.get(pi) {
                if pk != k {
                    break;
                }
                self.gas_events.extend([h as u64, (k as u64) << 1 | 1, p]);
                max_push = Some(max_push.map_or(h, |m: usize| m.max(h)));
                pi += 1;
            }
        }
        seg.unresolved = i + 1;
        if last_oog.is_none() && max_push.is_none() {
            return;
        }
        let cont = self.b.create_block();
        let short = last_oog.map(|p| self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, gas, p as i64));
        let over = match (max_push, self.room) {
            (Some(h), Some(room)) => Some(self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64)),
            _ => None,
        };
        let any = match (short, over) {
            (Some(x), Some(y)) => self.b.ins().bor(x, y),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => self.b.ins().iconst(types::I8, 0),
        };
        let resolver = self.resolver();
        let firstv = self.b.ins().iconst(types::I64, first as i64);
        self.b.ins().brif(any, resolver, &[BlockArg::Value(firstv), BlockArg::Value(gas)], cont, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// The function's shared resolver block `(first event, gas on entry)`.
    fn resolver(&mut self) -> Block {
        if let Some(r) = self.gas_resolver {
            return r;
        }
        let r = self.b.create_block();
        self.b.set_cold_block(r);
        self.b.append_block_param(r, types::I64);
        self.b.append_block_param(r, types::I64);
        self.gas_resolver = Some(r);
        r
    }

    /// Fills the resolver: the event table becomes a constant (a
    /// `vector<u64>` of `[threshold, k << 1 | is_push, prefix]` entries,
    /// a sentinel last), scanned from the test's first event to the first
    /// that happens: `gas < threshold` for running out of gas at `k`,
    /// `room <= threshold` for an overflow at a push of `k` (which was
    /// charged: gas left `gas - prefix`).
    pub(super) fn finish_gas(&mut self) -> CompileResult<()> {
        let Some(r) = self.gas_resolver else { return Ok(()) };
        let room = self.room.ok_or_else(|| malformed("no prologue"))?;
        // A push at height i64::MAX always overflows: the scan ends.
        self.gas_events.extend([i64::MAX as u64, 1, 0]);
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
        let p = self.b.block_params(r).to_vec();
        let (first, gas) = (p[0], p[1]);
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
        let is_push = self.b.ins().band_imm_u(kw, 1);
        let k = self.b.ins().ushr_imm_u(kw, 1);
        let k = self.b.ins().ireduce(types::I32, k);
        let oog = self.b.ins().iconst(types::I32, status_number(StatusCode::OUT_OF_GAS));
        let ovf = self.b.ins().iconst(types::I32, status_number(StatusCode::EXECUTION_STACK_OVERFLOW));
        let st = self.b.ins().select(is_push, ovf, oog);
        // Out of gas leaves none (the failure path zeroes it).
        let left = self.b.ins().isub(gas, prefix);
        self.store_ctx(left, off::GAS_LEFT);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(self.fail, &[BlockArg::Value(st), BlockArg::Value(k), BlockArg::Value(zero)]);
        Ok(())
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
