//! Inline 256-bit integer operations: `u256` add and subtract with overflow
//! checks, comparisons and shifts by a constant amount, and every cast to
//! or from `u256` / `i256`. The four `i64` limbs are paired into `i128`
//! halves where Cranelift's 128-bit operations do the carries (portable
//! IR, no host-specific code). Everything else on 256-bit values still goes
//! to the runtime's integer shims.

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

    /// `u256` `+` / `-`, failing with `ARITHMETIC_ERROR` on overflow.
    pub(super) fn u256_add_sub(&mut self, add: bool, a: &Val, b: &Val, i: usize) -> CompileResult<Val> {
        let (alo, ahi) = self.halves(a)?;
        let (blo, bhi) = self.halves(b)?;
        let (lo, hi, of) = if add {
            let (lo, c0) = self.b.ins().uadd_overflow(alo, blo);
            let (t, c1) = self.b.ins().uadd_overflow(ahi, bhi);
            let c0w = self.b.ins().uextend(types::I128, c0);
            let (hi, c2) = self.b.ins().uadd_overflow(t, c0w);
            (lo, hi, self.b.ins().bor(c1, c2))
        } else {
            let (lo, b0) = self.b.ins().usub_overflow(alo, blo);
            let (t, b1) = self.b.ins().usub_overflow(ahi, bhi);
            let b0w = self.b.ins().uextend(types::I128, b0);
            let (hi, b2) = self.b.ins().usub_overflow(t, b0w);
            (lo, hi, self.b.ins().bor(b1, b2))
        };
        let opc = if add { op::ADD } else { op::SUB };
        let code = Kind::U256.code() | opc << 4;
        self.arith_fail_if(of, i, Redo::Bin(code, *a, *b))?;
        Ok(self.join_halves(lo, hi))
    }

    /// `a < b` on `u256` (`strict`), or `a <= b`.
    fn u256_less(&mut self, a: &Val, b: &Val, strict: bool) -> CompileResult<Value> {
        let (alo, ahi) = self.halves(a)?;
        let (blo, bhi) = self.halves(b)?;
        let hi_lt = self.b.ins().icmp(IntCC::UnsignedLessThan, ahi, bhi);
        let hi_eq = self.b.ins().icmp(IntCC::Equal, ahi, bhi);
        let cc = if strict { IntCC::UnsignedLessThan } else { IntCC::UnsignedLessThanOrEqual };
        let lo_ok = self.b.ins().icmp(cc, alo, blo);
        let tie = self.b.ins().band(hi_eq, lo_ok);
        Ok(self.b.ins().bor(hi_lt, tie))
    }

    /// `Lt` / `Gt` / `Le` / `Ge` on `u256` as a bool.
    pub(super) fn u256_compare(&mut self, ins: &Bytecode, a: &Val, b: &Val) -> CompileResult<Value> {
        Ok(match ins {
            Bytecode::Lt => self.u256_less(a, b, true)?,
            Bytecode::Gt => self.u256_less(b, a, true)?,
            Bytecode::Le => self.u256_less(a, b, false)?,
            _ => self.u256_less(b, a, false)?,
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
