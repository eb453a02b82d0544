//! Inline 256-bit integer operations: `u256` and `i256` add and subtract
//! with overflow checks and comparisons, `u256` shifts by a constant
//! amount, every cast to or from `u256` / `i256`, and `u128` / `u256` /
//! `i256` multiplication of operands that fit their lower halves. The four
//! `i64` limbs are paired into `i128` halves where Cranelift's 128-bit
//! operations do the carries (portable IR, no host-specific code).
//! Everything else on 256-bit values still goes to the runtime's integer
//! shims.

use super::*;
use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};

impl Lowerer<'_, '_> {
    /// The `(lo, hi)` `i128` halves of a 256-bit value.
    fn halves(&mut self, v: &Val) -> CompileResult<(Value, Value)> {
        let w = v.wide()?;
        let lo = self.b.ins().iconcat(w[0], w[1]);
        let hi = self.b.ins().iconcat(w[2], w[3]);
        Ok((lo, hi))
    }

    fn join_halves(&mut self, lo: Value, hi: Value) -> Val {
        let (a, b) = self.b.ins().isplit(lo);
        let (c, d) = self.b.ins().isplit(hi);
        Val::Wide([a, b, c, d])
    }

    /// `u256` / `i256` `+` / `-`, failing with `ARITHMETIC_ERROR` on
    /// overflow. The low halves carry (borrow) into the high ones; `u256`
    /// overflows when either high step wraps, `i256` when exactly one of
    /// them overflows signed (the carry can bring a wrapped sum back).
    pub(super) fn wide_add_sub(&mut self, k: Kind, add: bool, a: &Val, b: &Val, i: usize) -> CompileResult<Val> {
        let (alo, ahi) = self.halves(a)?;
        let (blo, bhi) = self.halves(b)?;
        let signed = k.is_signed();
        let (lo, hi, of) = if add {
            let (lo, c0) = self.b.ins().uadd_overflow(alo, blo);
            let c0w = self.b.ins().uextend(types::I128, c0);
            let ((_, c1), (hi, c2)) = if signed {
                let t = self.b.ins().sadd_overflow(ahi, bhi);
                (t, self.b.ins().sadd_overflow(t.0, c0w))
            } else {
                let t = self.b.ins().uadd_overflow(ahi, bhi);
                (t, self.b.ins().uadd_overflow(t.0, c0w))
            };
            (lo, hi, if signed { self.b.ins().bxor(c1, c2) } else { self.b.ins().bor(c1, c2) })
        } else {
            let (lo, b0) = self.b.ins().usub_overflow(alo, blo);
            let b0w = self.b.ins().uextend(types::I128, b0);
            let ((_, b1), (hi, b2)) = if signed {
                let t = self.b.ins().ssub_overflow(ahi, bhi);
                (t, self.b.ins().ssub_overflow(t.0, b0w))
            } else {
                let t = self.b.ins().usub_overflow(ahi, bhi);
                (t, self.b.ins().usub_overflow(t.0, b0w))
            };
            (lo, hi, if signed { self.b.ins().bxor(b1, b2) } else { self.b.ins().bor(b1, b2) })
        };
        let opc = if add { op::ADD } else { op::SUB };
        let code = k.code() | opc << 4;
        self.arith_fail_if(of, i, Redo::Bin(code, *a, *b))?;
        Ok(self.join_halves(lo, hi))
    }

    /// `u128` / `u256` / `i256` `*`. When both operands fit the lower half
    /// (`u128`, `u256`: upper half zero; `i256`: upper half the sign
    /// extension of the lower) the product fits the type, so it cannot
    /// fail: one widening multiply for `u128`, four 64x64->128 partial
    /// products for the 256-bit kinds. Otherwise the runtime's shim
    /// computes it or fails as the interpreter does.
    pub(super) fn wide_mul(&mut self, k: Kind, a: Val, b: Val, i: usize) -> CompileResult<Val> {
        let (x, y, spill) = match k {
            Kind::U128 => {
                let (a0, a1) = self.b.ins().isplit(a.one()?);
                let (b0, b1) = self.b.ins().isplit(b.one()?);
                ([a0, a1, a1, a1], [b0, b1, b1, b1], self.b.ins().bor(a1, b1))
            }
            Kind::U256 => {
                let (x, y) = (a.wide()?, b.wide()?);
                let ax = self.b.ins().bor(x[2], x[3]);
                let bx = self.b.ins().bor(y[2], y[3]);
                (x, y, self.b.ins().bor(ax, bx))
            }
            Kind::I256 => {
                let (alo, ahi) = self.halves(&a)?;
                let (blo, bhi) = self.halves(&b)?;
                let asign = self.b.ins().sshr_imm_u(alo, 127);
                let bsign = self.b.ins().sshr_imm_u(blo, 127);
                let awide = self.b.ins().icmp(IntCC::NotEqual, ahi, asign);
                let bwide = self.b.ins().icmp(IntCC::NotEqual, bhi, bsign);
                (a.wide()?, b.wide()?, self.b.ins().bor(awide, bwide))
            }
            _ => return self.helper_binop(op::MUL, k, a, b, i),
        };
        let narrow = self.b.create_block();
        let shim = self.b.create_block();
        let done = self.b.create_block();
        self.b.set_cold_block(shim);
        self.b.ins().brif(spill, shim, &[], narrow, &[]);

        self.b.switch_to_block(narrow);
        self.b.seal_block(narrow);
        let lanes = match k {
            Kind::U128 => vec![self.mul_64x64(x[0], y[0])],
            Kind::U256 => self.mul_128x128(x, y).to_vec(),
            _ => {
                // Two's complement: a = A - 2^128 [a < 0] for the unsigned
                // lower half A, so a * b = A * B - 2^128 (B [a < 0] +
                // A [b < 0]) mod 2^256, exact since |a * b| <= 2^254.
                let r = self.mul_128x128(x, y);
                let alo = self.b.ins().iconcat(x[0], x[1]);
                let blo = self.b.ins().iconcat(y[0], y[1]);
                let zero = self.iconst_ty(types::I128, 0);
                let aneg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, alo, 0);
                let bneg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, blo, 0);
                let fix_a = self.b.ins().select(aneg, blo, zero);
                let fix_b = self.b.ins().select(bneg, alo, zero);
                let hi = self.b.ins().iconcat(r[2], r[3]);
                let hi = self.b.ins().isub(hi, fix_a);
                let hi = self.b.ins().isub(hi, fix_b);
                let (r2, r3) = self.b.ins().isplit(hi);
                vec![r[0], r[1], r2, r3]
            }
        };
        let args: Vec<BlockArg> = lanes.iter().map(|v| BlockArg::Value(*v)).collect();
        for v in &lanes {
            let t = self.b.func.dfg.value_type(*v);
            self.b.append_block_param(done, t);
        }
        self.b.ins().jump(done, &args);

        self.b.switch_to_block(shim);
        self.b.seal_block(shim);
        let r = self.helper_binop(op::MUL, k, a, b, i)?;
        let args: Vec<BlockArg> = r.lanes().into_iter().map(BlockArg::Value).collect();
        self.b.ins().jump(done, &args);

        self.b.switch_to_block(done);
        self.b.seal_block(done);
        let params = self.b.block_params(done).to_vec();
        Ok(Val::from_lanes(&Ty::S(k), &params))
    }

    /// The 256-bit product of the unsigned 128-bit lower halves (limbs 0
    /// and 1) of `x` and `y`, as four limbs.
    fn mul_128x128(&mut self, x: [Value; 4], y: [Value; 4]) -> [Value; 4] {
        // (x0 + x1 X)(y0 + y1 X), X = 2^64: limb 0 is lo(x0 y0); limb 1
        // collects hi(x0 y0), lo(x0 y1), lo(x1 y0); the rest and its carry
        // form limbs 2-3 (below 2^128: the product is < 2^256).
        let p00 = self.mul_64x64(x[0], y[0]);
        let p01 = self.mul_64x64(x[0], y[1]);
        let p10 = self.mul_64x64(x[1], y[0]);
        let p11 = self.mul_64x64(x[1], y[1]);
        let (r0, h00) = self.b.ins().isplit(p00);
        let (l01, h01) = self.b.ins().isplit(p01);
        let (l10, h10) = self.b.ins().isplit(p10);
        let mid = self.sum_u64s(&[h00, l01, l10]);
        let (r1, carry) = self.b.ins().isplit(mid);
        let hi = self.sum_u64s(&[h01, h10, carry]);
        let top = self.b.ins().iadd(p11, hi);
        let (r2, r3) = self.b.ins().isplit(top);
        [r0, r1, r2, r3]
    }

    /// The full 128-bit product of two 64-bit lanes.
    fn mul_64x64(&mut self, x: Value, y: Value) -> Value {
        let x = self.b.ins().uextend(types::I128, x);
        let y = self.b.ins().uextend(types::I128, y);
        self.b.ins().imul(x, y)
    }

    /// The 128-bit sum of 64-bit lanes (at most 3, so it cannot wrap).
    fn sum_u64s(&mut self, lanes: &[Value]) -> Value {
        let mut acc = self.iconst_ty(types::I128, 0);
        for &l in lanes {
            let w = self.b.ins().uextend(types::I128, l);
            acc = self.b.ins().iadd(acc, w);
        }
        acc
    }

    /// `a < b` on `u256` / `i256` (`strict`), or `a <= b`: the high halves
    /// decide (signed for `i256`), the low halves break a tie unsigned.
    fn wide_less(&mut self, signed: bool, a: &Val, b: &Val, strict: bool) -> CompileResult<Value> {
        let (alo, ahi) = self.halves(a)?;
        let (blo, bhi) = self.halves(b)?;
        let hi_cc = if signed { IntCC::SignedLessThan } else { IntCC::UnsignedLessThan };
        let hi_lt = self.b.ins().icmp(hi_cc, ahi, bhi);
        let hi_eq = self.b.ins().icmp(IntCC::Equal, ahi, bhi);
        let cc = if strict { IntCC::UnsignedLessThan } else { IntCC::UnsignedLessThanOrEqual };
        let lo_ok = self.b.ins().icmp(cc, alo, blo);
        let tie = self.b.ins().band(hi_eq, lo_ok);
        Ok(self.b.ins().bor(hi_lt, tie))
    }

    /// `Lt` / `Gt` / `Le` / `Ge` on `u256` / `i256` as a bool.
    pub(super) fn wide_compare(&mut self, k: Kind, ins: &Bytecode, a: &Val, b: &Val) -> CompileResult<Value> {
        let s = k.is_signed();
        Ok(match ins {
            Bytecode::Lt => self.wide_less(s, a, b, true)?,
            Bytecode::Gt => self.wide_less(s, b, a, true)?,
            Bytecode::Le => self.wide_less(s, a, b, false)?,
            _ => self.wide_less(s, b, a, false)?,
        })
    }

    /// The value of `v` if an `iconst` defines it.
    fn const_of(&self, v: Value) -> Option<i64> {
        let ValueDef::Result(inst, 0) = self.b.func.dfg.value_def(v) else { return None };
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
            _ => None,
        }
    }

    /// A `u256` shift by a constant amount below 256, if `amt` is one.
    pub(super) fn u256_shift_const(&mut self, left: bool, a: &Val, amt: Value) -> CompileResult<Option<Val>> {
        let Some(n) = self.const_of(amt).map(|n| n as u8 as u32) else { return Ok(None) };
        let x = a.wide()?;
        let (q, s) = ((n / 64) as usize, (n % 64) as i64);
        let zero = self.b.ins().iconst(types::I64, 0);
        let limb = |j: isize| -> Option<Value> { (0..4).contains(&j).then(|| x[j as usize]) };
        let mut out = [zero; 4];
        for (idx, o) in out.iter_mut().enumerate() {
            let idx = idx as isize;
            let (main, carry) = if left {
                (limb(idx - q as isize), limb(idx - q as isize - 1))
            } else {
                (limb(idx + q as isize), limb(idx + q as isize + 1))
            };
            let mut r = match main {
                Some(m) if s == 0 => m,
                Some(m) if left => self.b.ins().ishl_imm_u(m, s),
                Some(m) => self.b.ins().ushr_imm_u(m, s),
                None => zero,
            };
            if s != 0 {
                if let Some(c) = carry {
                    let part =
                        if left { self.b.ins().ushr_imm_u(c, 64 - s) } else { self.b.ins().ishl_imm_u(c, 64 - s) };
                    r = self.b.ins().bor(r, part);
                }
            }
            *o = r;
        }
        Ok(Some(Val::Wide(out)))
    }

    /// Casts to or from a 256-bit integer kind, inline: range checks on the
    /// `i128` halves, then [`cast_inline`](Self::cast_inline) for the
    /// narrow side.
    pub(super) fn wide_cast(
        &mut self,
        src: Kind,
        dst: Kind,
        a: &Val,
        i: usize,
        redo: Redo,
    ) -> CompileResult<Option<Val>> {
        if !src.is_integer() || !dst.is_integer() {
            return Ok(None);
        }
        match (src.is_wide(), dst.is_wide()) {
            (false, true) => {
                let x = a.one()?;
                let v = if src.is_signed() && dst == Kind::U256 {
                    self.cast_inline(src, Kind::U128, x, i, redo)?
                } else if src.bits() == 128 {
                    x
                } else if src.is_signed() {
                    self.b.ins().sextend(types::I128, x)
                } else {
                    self.b.ins().uextend(types::I128, x)
                };
                let hi = if src.is_signed() && dst == Kind::I256 {
                    self.b.ins().sshr_imm_u(v, 127)
                } else {
                    self.iconst_ty(types::I128, 0)
                };
                Ok(Some(self.join_halves(v, hi)))
            }
            (true, false) => {
                let (lo, hi) = self.halves(a)?;
                // A signed target takes the low half as an i128 (the high
                // half must be its sign extension); an unsigned target needs
                // a zero high half whatever the source's sign, since
                // [2^127, 2^128) fits u128 but not i128.
                let (mid, expect_hi) = if src == Kind::I256 && dst.is_signed() {
                    (Kind::I128, self.b.ins().sshr_imm_u(lo, 127))
                } else {
                    (Kind::U128, self.iconst_ty(types::I128, 0))
                };
                let bad = self.b.ins().icmp(IntCC::NotEqual, hi, expect_hi);
                self.arith_fail_if(bad, i, redo)?;
                Ok(Some(Val::One(self.cast_inline(mid, dst, lo, i, redo)?)))
            }
            (true, true) => {
                let w = a.wide()?;
                if src != dst {
                    // u256 <-> i256: the same bits when bit 255 is clear.
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, w[3], 0);
                    self.arith_fail_if(neg, i, redo)?;
                }
                Ok(Some(Val::Wide(w)))
            }
            (false, false) => Ok(None),
        }
    }
}
