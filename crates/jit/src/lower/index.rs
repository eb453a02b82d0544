//! A vector index computed by `x - c` (`v[i - 1]`) tested once.
//!
//! Unmetered, a checked u64 `x - c` (small constant `c`) whose result is
//! the index of the vector borrow right after it leaves its wrap test to
//! that borrow: a wrapped result is at least `2^64 - c`, above the length
//! of any vector, so the borrow's bounds test (`idx >= len`, and the null
//! test of a vector that never allocated) also catches the wrap. Its cold
//! site tells the two apart and fails where the interpreter does: at the
//! `sub` with `ARITHMETIC_ERROR` when the result wrapped, else at the
//! borrow. Nothing runs between the two instructions that could fail or
//! be observed first (same block, the sub's push below the checked
//! height), so the failure's status, location and effects are the
//! interpreter's. Metered code keeps both tests: each instruction's
//! failure refunds its own segment part.

use super::{malformed, CompileResult, Kind, Lowerer, Redo, Val};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use movejit_format::Bytecode;
use movejit_runtime::flat::FlatLayout;
use std::sync::Arc;

/// The largest constant fused: a wrapped result (`>= 2^64 - c`) must be
/// above every vector length, which memory bounds far below `2^64 - 2^32`.
const MAX_FUSED_CONST: u64 = 1 << 32;

/// A `sub` whose wrap test waits for the borrow after it.
#[derive(Clone, Copy)]
pub(super) struct FusedSub {
    /// The result: the borrow's index.
    result: Value,
    /// The constant subtracted (an IR value) and its operand-stack form.
    rhs: Value,
    rhs_val: Val,
    /// The `int_binop` code of the sub, for the cold site's redo.
    code: u8,
    /// The sub's offset.
    at: usize,
    /// The result wrapped iff it is above this.
    limit: u64,
}

impl Lowerer<'_, '_> {
    /// Whether the u64 `sub` at `i` of constant `c` may leave its wrap
    /// test to the vector borrow at `i + 1`: unmetered, optimizing tier (cold sites), same block, and its
    /// push needs no operand-stack test (already below the block's checked
    /// height), so nothing between the two instructions can fail.
    pub(super) fn fusable_sub(&self, i: usize, k: Kind, c: u64) -> bool {
        self.target.cost.is_none()
            && !self.target.baseline
            && k == Kind::U64
            && (1..=MAX_FUSED_CONST).contains(&c)
            && matches!(self.code.get(i + 1), Some(Bytecode::VecImmBorrow(_) | Bytecode::VecMutBorrow(_)))
            && !self.block_of.contains_key(&(i + 1))
            && self.stack.len() < self.watermark
    }

    /// Lowers `x - c` at `i` without its wrap test, which the borrow at
    /// `i + 1` makes ([`index_fail_if`](Self::index_fail_if)).
    pub(super) fn lower_fused_sub(&mut self, x: Value, rhs: Value, rhs_val: Val, c: u64, code: u8, i: usize) -> Value {
        // `x + (-c)`: one `lea` on x86-64, `x` kept (a `sub` copies it
        // first); the borrow uses the index at once, so rematerialising
        // it at its uses costs nothing.
        let minus_c = self.b.ins().iconst(cranelift_codegen::ir::types::I64, c.wrapping_neg() as i64);
        let result = self.b.ins().iadd(x, minus_c);
        self.fused_sub = Some(FusedSub { result, rhs, rhs_val, code, at: i, limit: u64::MAX - c });
        result
    }

    /// The pending fused sub, which must have computed `idx` (the borrow
    /// at `i` pops it first).
    pub(super) fn take_fused_sub(&mut self, idx: Value) -> CompileResult<Option<FusedSub>> {
        match self.fused_sub.take() {
            Some(f) if f.result != idx => Err(malformed("a fused sub does not feed the vector index")),
            f => Ok(f),
        }
    }

    /// Refuses an instruction at `i` lowered while a fused sub waits for
    /// a borrow that is not `i`: its wrap test would be lost.
    pub(super) fn check_no_fused_sub(&self, i: usize) -> CompileResult<()> {
        match (&self.fused_sub, &self.code[i]) {
            (None, _) | (Some(_), Bytecode::VecImmBorrow(_) | Bytecode::VecMutBorrow(_)) => Ok(()),
            (Some(_), _) => Err(malformed("a fused sub not followed by its vector borrow")),
        }
    }

    /// The bounds (or null) test `cond` of the vector borrow at `i`; with
    /// `fused`, its cold site first fails the sub that computed `idx`
    /// when that wrapped.
    pub(super) fn index_fail_if(
        &mut self,
        cond: Value,
        i: usize,
        el: &Arc<FlatLayout>,
        vec: Value,
        idx: Value,
        fused: Option<FusedSub>,
    ) -> CompileResult<()> {
        let Some(f) = fused else {
            return self.vec_index_fail_if(cond, i, el, vec, idx);
        };
        let cont = self.b.create_block();
        let site = self.b.create_block();
        self.b.set_cold_block(site);
        self.b.ins().brif(cond, site, &[], cont, &[]);
        self.b.switch_to_block(site);
        self.b.seal_block(site);
        let wrapped = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, idx, f.limit as i64);
        self.arith_fail_if_lazy(wrapped, f.at, super::HelperId::int_binop(), |lw| {
            let idx = lw.opaque(wrapped, idx);
            let x = lw.b.ins().iadd(idx, f.rhs);
            Redo::Bin(f.code, Val::One(x), f.rhs_val)
        })?;
        // Not wrapped: the borrow itself fails.
        self.cold_here()?;
        let shim = self.helper_ref(super::HelperId::vec_borrow())?;
        self.fail_here(i, None, |lw| lw.vec_index_status(shim, el, vec, idx));
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        Ok(())
    }

    /// Marks the block being filled cold (laid out past the hot code).
    fn cold_here(&mut self) -> CompileResult<()> {
        let blk = self.b.current_block().ok_or_else(|| malformed("no current block"))?;
        self.b.set_cold_block(blk);
        Ok(())
    }
}
