//! Lowering of function values (bytecode v8+): `PackClosure`,
//! `PackClosureGeneric` and `CallClosure`, over the runtime's closure box
//! (`movejit_runtime::flat::closure_shims`, jit-abi.md 1.3).
//!
//! * `PackClosure`: the engine resolves the named function at compile time
//!   into a pack site (function identity, type arguments, mask, captured
//!   layouts, serializable) and compiles the target with the caller (one
//!   that does not compile is interpreted, inside a session). The captured
//!   operands move into a new box through the `pack_closure` shim.
//! * `CallClosure`: the target is known only at run time (the closure is a
//!   value). The `call_closure` shim looks it up in the engine's closure
//!   table and does what the interpreter does at that instruction: depth
//!   check and frame charge for a Move target, `native_base` for a native,
//!   arguments interleaved by the mask, callee's stack base above this
//!   frame's operands; a target the table does not hold (a closure read
//!   from storage or returned by a native) runs on the session's
//!   interpreter, which does those checks itself. Its results are then
//!   pushed with the usual stack checks (they only fire for natives, as in
//!   the interpreter). A segment
//!   of gas ends after every `CallClosure` (`gas::segments`), so the callee
//!   sees exactly the interpreter's gas.
//! * Under Aptos's schedule a pack first calls `aptos_pack` (the target's
//!   module loads, `lower/metered.rs`), and the `call_closure` shim makes
//!   the interpreter's closure-call charges on the meter (jit-abi.md 5.1);
//!   a borrowed site's fast path goes through `aptos_closure_fast`, called
//!   at the closure's `CopyLoc`: it charges that copy (a constant for a
//!   fast target's closure of scalars), then a warm target's constant price
//!   (module loaded in this transaction, price fits the gas left) or sends
//!   the call to the shim (one trip out of compiled code for both).

#![forbid(unsafe_code)]

use super::{malformed, Lowerer, Val};
use crate::error::CompileResult;
use crate::helpers::HelperId;
use crate::ty::Ty;
use crate::types::to_type;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, StackSlot, Value};
use movejit_format::{Bytecode, FunctionHandleIndex, SignatureIndex, SignatureToken};
use movejit_runtime::flat::closure_shims::{
    CALLEE_FAILED, COPY_FAILED, FAILED_HERE, FAST_CAPTURES, FAST_CAPTURE_STRIDE,
};
use movejit_runtime::flat::{FlatLayout, Shape};
use movejit_runtime::Type as RType;
use std::sync::Arc;

/// A `PackClosure` site as the engine registered it.
pub struct PackInfo {
    /// Address of the runtime's `PackSite` (alive as long as the code).
    pub site: u64,
    /// Layouts of the captured parameters, in order.
    pub captured: Vec<Arc<FlatLayout>>,
    /// The layout of the closure value (a box pointer).
    pub closure: Arc<FlatLayout>,
}

type Layouts = Vec<Arc<FlatLayout>>;

/// What a borrowed `CallClosure` site's fast path starts from: its site
/// and closure slot, and under Aptos what its copy's charge found.
struct Fast<'c> {
    site: Value,
    closure: Value,
    charged: Option<&'c ChargedCopy>,
}

/// A `CallClosure` site for the engine to register.
pub struct CallSpec {
    pub provided: Vec<Arc<FlatLayout>>,
    pub rets: Vec<Arc<FlatLayout>>,
    pub held: u64,
    pub per_frame: u64,
    pub native_base: u64,
    pub metered: bool,
    /// The closure operand is a local's, left in place (see
    /// [`Lowerer::closure_copy_elided`]).
    pub borrowed: bool,
    /// Aptos's schedule: the call makes the interpreter's charges on the
    /// meter (`closure_shims::call_closure`).
    pub aptos: bool,
}

/// Under Aptos's schedule: the `CopyLoc` of a closure local before a
/// `CallClosure` from it, charged with that call's fast path
/// ([`Lowerer::charge_closure_copy`]).
pub(super) struct ChargedCopy {
    /// The `CallClosure` instruction.
    call: usize,
    /// Its registered `CallSite`.
    site: u64,
    /// `aptos_closure_fast`'s answer there: the adapter, or 0 (the slow
    /// path).
    adapter: Value,
    /// The captured values' scratch it filled.
    caps: StackSlot,
}

impl Lowerer<'_, '_> {
    /// `CopyLoc(l)` of a function-value local right before a `CallClosure`
    /// needs no copy: the call passes copies of the captured values and
    /// leaves the local's closure in place (a copy's only use is to be
    /// consumed by that call; nothing runs in between). The push is still
    /// checked against the operand-stack limit at the `CopyLoc`.
    pub(super) fn closure_copy_elided(&self, l: u8, i: usize) -> bool {
        matches!(self.code.get(i + 1), Some(Bytecode::CallClosure(_)))
            && matches!(self.locals.get(l as usize), Some(super::Local::Mem(layout, _)) if matches!(layout.shape, Shape::Closure))
    }

    /// The elided `CopyLoc(l)`: the local's own slot goes on the stack.
    pub(super) fn push_local_closure(&mut self, l: u8, i: usize) -> CompileResult<()> {
        match self.locals.get(l as usize).cloned() {
            Some(super::Local::Mem(layout, addr)) => {
                self.push(Ty::M(layout), Val::Mem(addr), i);
                Ok(())
            }
            _ => Err(malformed("closure local")),
        }
    }

    /// `PackClosure(handle, mask)` / `PackClosureGeneric` with `targs`.
    pub(super) fn pack_closure(
        &mut self,
        handle: FunctionHandleIndex,
        targs: Vec<RType>,
        mask: u64,
        i: usize,
    ) -> CompileResult<()> {
        let info = self.env.pack_site(self.target.module_idx, handle, targs, mask)?;
        if self.target.aptos.is_some() {
            self.aptos_pack(info.site, i)?;
        }
        let n = info.captured.len();
        if self.stack.len() < n {
            return Err(malformed("too few captured values on the stack"));
        }
        let vals = self.stack.split_off(self.stack.len() - n);
        let table = self.new_slot(8 * n.max(1) as u32, 8);
        for (k, ((t, v), l)) in vals.iter().zip(&info.captured).enumerate() {
            if !t.compatible(&Ty::of(l)) {
                return Err(malformed(format!("captured value of the wrong type: {t:?}")));
            }
            let p = self.operand_pointer(t, v)?;
            self.b.ins().stack_store(self.ptr, p, table, 8 * k as i32);
        }
        let dst = self.opslot(self.stack.len(), &info.closure);
        let site = self.b.ins().iconst(self.ptr, info.site as i64);
        let tp = self.b.ins().stack_addr(self.ptr, table, 0);
        self.call_status(HelperId::pack_closure(), &[self.ctx, site, tp, dst], i)?;
        self.push(Ty::M(info.closure), Val::Mem(dst), i);
        Ok(())
    }

    /// The layouts of the provided arguments and the results of a
    /// `CallClosure(sig)`.
    fn closure_layouts(&mut self, sig: SignatureIndex) -> CompileResult<(Layouts, Layouts)> {
        let m = self.target.module;
        let (params, rets) = match m.signatures.get(sig.idx()).and_then(|s| s.0.first()) {
            Some(SignatureToken::Function(p, r, _)) => (p.clone(), r.clone()),
            _ => return Err(malformed("CallClosure signature is not a function type")),
        };
        let mut layouts = |toks: &[SignatureToken]| -> CompileResult<Vec<Arc<FlatLayout>>> {
            toks.iter().map(|t| to_type(m, t, self.target.type_args).and_then(|t| self.env.layout(&t))).collect()
        };
        Ok((layouts(&params)?, layouts(&rets)?))
    }

    /// The `CallClosure` site to register for a call with `held` operands
    /// below its arguments.
    fn closure_spec(
        &self,
        provided: &[Arc<FlatLayout>],
        rets: &[Arc<FlatLayout>],
        held: usize,
        borrowed: bool,
    ) -> CallSpec {
        let (per_frame, native_base) = self.target.cost.map_or((0, 0), |c| (c.per_frame, c.native_base));
        CallSpec {
            provided: provided.to_vec(),
            rets: rets.to_vec(),
            held: held as u64,
            per_frame,
            native_base,
            metered: self.target.cost.is_some(),
            borrowed,
            aptos: self.target.aptos.is_some(),
        }
    }

    /// Under Aptos's schedule, the charge of `CopyLoc` `i` (the closure of
    /// layout `lp` at `at`; `rest` as for `aptos_copy`) when a borrowed
    /// `CallClosure` follows it: its site is registered here and
    /// `aptos_closure_fast` charges the copy, then looks the call's fast
    /// path up (kept for the call, [`ChargedCopy`]). Whether the copy
    /// failed; `None` for any other copy.
    pub(super) fn charge_closure_copy(
        &mut self,
        i: usize,
        lp: Value,
        at: Value,
        rest: Value,
    ) -> CompileResult<Option<Value>> {
        let Some(&Bytecode::CallClosure(sig)) = self.code.get(i + 1) else { return Ok(None) };
        if !matches!(self.code[i], Bytecode::CopyLoc(l) if self.closure_copy_elided(l, i)) {
            return Ok(None);
        }
        let (provided, rets) = self.closure_layouts(sig)?;
        // The call's arguments are on the stack already; the closure not yet.
        let held = self.stack.len().checked_sub(provided.len()).ok_or_else(|| malformed("CallClosure arguments"))?;
        let site = self.env.call_site(self.closure_spec(&provided, &rets, held, true))?;
        let sitev = self.b.ins().iconst(self.ptr, site as i64);
        let caps = self.new_slot((FAST_CAPTURES * FAST_CAPTURE_STRIDE) as u32, 8);
        let capsv = self.b.ins().stack_addr(self.ptr, caps, 0);
        let adapter = self.call_helper(HelperId::aptos_closure_fast(), &[self.ctx, sitev, lp, at, capsv, rest])?;
        self.closure_copy = Some(ChargedCopy { call: i + 1, site, adapter, caps });
        Ok(Some(self.b.ins().icmp_imm_u(IntCC::Equal, adapter, COPY_FAILED as i64)))
    }

    /// `CallClosure(sig)`: the closure on top, its provided arguments below.
    pub(super) fn call_closure(&mut self, sig: SignatureIndex, i: usize) -> CompileResult<()> {
        let (provided, ret_layouts) = self.closure_layouts(sig)?;
        let (ct, cv) = self.pop()?;
        let closure = match (&ct, cv) {
            (Ty::M(l), Val::Mem(a)) if matches!(l.shape, Shape::Closure) => a,
            _ => return Err(malformed(format!("CallClosure of a non-function value {ct:?}"))),
        };
        if self.stack.len() < provided.len() {
            return Err(malformed("too few arguments on the stack for CallClosure"));
        }
        let split = self.stack.len() - provided.len();
        let args = self.stack.split_off(split);
        for ((t, _), l) in args.iter().zip(&provided) {
            if !t.compatible(&Ty::of(l)) {
                return Err(malformed(format!("closure argument of the wrong type: {t:?}")));
            }
        }
        let mut outs = Vec::with_capacity(ret_layouts.len());
        for (j, l) in ret_layouts.iter().enumerate() {
            let a = match Ty::of(l) {
                Ty::M(l) => self.opslot(split + j, &l),
                _ => {
                    let s = self.new_slot(32, 8);
                    self.b.ins().stack_addr(self.ptr, s, 0)
                }
            };
            outs.push(a);
        }
        let borrowed = i > 0 && matches!(self.code[i - 1], Bytecode::CopyLoc(l) if self.closure_copy_elided(l, i - 1));
        // Under Aptos a borrowed site was registered and looked up at its
        // closure's copy (`charge_closure_copy`).
        let charged = self.closure_copy.take().filter(|c| c.call == i);
        if borrowed && self.target.aptos.is_some() && charged.is_none() {
            return Err(malformed("a closure call whose copy was not charged with it"));
        }
        let site = match &charged {
            Some(c) => c.site,
            None => self.env.call_site(self.closure_spec(&provided, &ret_layouts, split, borrowed))?,
        };
        let sitev = self.b.ins().iconst(self.ptr, site as i64);
        let merge = self.b.create_block();
        // (Under Aptos a call makes run-time charges before its frame: the
        // fast helper made them when they are constants that fit, else the
        // shim does.)
        if borrowed {
            let fast = Fast { site: sitev, closure, charged: charged.as_ref() };
            self.call_closure_fast(fast, &args, &provided, &ret_layouts, &outs, split, merge, i)?;
        }
        let n = provided.len() + ret_layouts.len();
        let table = self.new_slot(8 * n.max(1) as u32, 8);
        for (k, (t, v)) in args.iter().enumerate() {
            let p = self.operand_pointer(t, v)?;
            self.b.ins().stack_store(self.ptr, p, table, 8 * k as i32);
        }
        for (j, a) in outs.iter().enumerate() {
            self.b.ins().stack_store(self.ptr, *a, table, 8 * (provided.len() + j) as i32);
        }
        let tp = self.b.ins().stack_addr(self.ptr, table, 0);
        let st = self.call_helper(HelperId::call_closure(), &[self.ctx, sitev, closure, tp])?;
        // The shim recorded an error of this instruction (depth, gas, a
        // native's error, a target not compiled): fail here.
        let here = self.b.ins().icmp_imm_u(IntCC::Equal, st, FAILED_HERE as i64);
        let r = self.refund_at(i);
        self.fail_if_with(here, i, r, |lw| lw.b.ins().iconst(types::I32, 0));
        // The callee failed and recorded its own location: pass it on.
        debug_assert_eq!(CALLEE_FAILED, 2);
        let failed = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, 0);
        self.propagate_if(failed, merge);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        let mut vals = Vec::with_capacity(outs.len());
        for (l, a) in ret_layouts.iter().zip(outs) {
            let t = Ty::of(l);
            let v = match &t {
                Ty::S(k) => self.load_scalar(*k, a, 0),
                Ty::R(_) => Val::One(self.b.ins().load(self.ptr, Self::mem(), a, 0)),
                Ty::M(_) => Val::Mem(a),
            };
            vals.push((t, v));
        }
        // A native target pushes its results like any instruction; a Move
        // callee's pushes were checked as it ran, so these never fire then.
        self.push_all(vals, i);
        // (Under Aptos the shim charged the meter; nothing of the segment
        // follows: a closure call ends it, `gas::segments`.)
        Ok(())
    }

    /// The fast path of a `CallClosure` whose closure stays in its slot:
    /// the `closure_fast` helper finds the target's adapter (and copies the
    /// captured values to scratch), and the call goes straight into
    /// compiled code with the checks and charges of a direct call (depth,
    /// then the frame); results land in `outs` and control in `merge`. Leaves
    /// the builder in the slow path's block (the adapter was not found).
    #[allow(clippy::too_many_arguments)]
    fn call_closure_fast(
        &mut self,
        fast: Fast<'_>,
        args: &[(Ty, Val)],
        provided: &[Arc<FlatLayout>],
        rets: &[Arc<FlatLayout>],
        outs: &[Value],
        held: usize,
        merge: Block,
        i: usize,
    ) -> CompileResult<()> {
        let (adapter, caps) = match fast.charged {
            Some(c) => (c.adapter, self.b.ins().stack_addr(self.ptr, c.caps, 0)),
            None => {
                let caps_slot = self.new_slot((FAST_CAPTURES * FAST_CAPTURE_STRIDE) as u32, 8);
                let caps = self.b.ins().stack_addr(self.ptr, caps_slot, 0);
                (self.call_helper(HelperId::closure_fast(), &[self.ctx, fast.site, fast.closure, caps])?, caps)
            }
        };
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(slow);
        self.b.ins().brif(adapter, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);

        let ptys: Vec<Ty> = provided.iter().map(Ty::of).collect();
        let rtys: Vec<Ty> = rets.iter().map(Ty::of).collect();
        // Adapters of a metered engine take the gas left in the context
        // (`define_closure_adapter`).
        let gas = if self.target.cost.is_some() { super::GasAbi::Context } else { super::GasAbi::Unmetered };
        let mut sig = super::move_signature(self.b.func.signature.call_conv, self.ptr, &ptys, &rtys, gas);
        sig.params.insert(1, AbiParam::new(self.ptr));
        let sigref = self.b.import_signature(sig);
        let mut lanes = vec![self.ctx, caps];
        for (_, v) in args {
            lanes.extend(v.lanes());
        }
        for (t, a) in rtys.iter().zip(outs) {
            if matches!(t, Ty::M(_)) {
                lanes.push(*a);
            }
        }
        // As a direct call: the depth check, then the frame's charge.
        // An adapter takes the gas left after the captures (`define_closure_adapter`).
        let gas = (gas, 0);
        let results =
            self.compiled_call(i, held as i64, lanes, gas, |b, lanes| b.ins().call_indirect(sigref, adapter, lanes))?;
        let mut at = 1;
        for (t, a) in rtys.iter().zip(outs) {
            match t {
                Ty::M(_) => {}
                Ty::S(k) => {
                    let n = t.lanes(self.ptr).len();
                    let v = Val::from_lanes(t, &results[at..at + n]);
                    self.store_scalar(*k, &v, *a, 0);
                    at += n;
                }
                Ty::R(_) => {
                    self.b.ins().store(Self::mem(), results[at], *a, 0);
                    at += 1;
                }
            }
        }
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        Ok(())
    }

    /// A pointer to an operand for a shim: in-memory values are their
    /// slot; scalars and references are stored to a fresh slot (a
    /// reference's slot holds its target's address).
    fn operand_pointer(&mut self, t: &Ty, v: &Val) -> CompileResult<cranelift_codegen::ir::Value> {
        Ok(match t {
            Ty::M(_) => v.addr()?,
            Ty::S(k) => {
                let s = self.new_slot(32, 8);
                let a = self.b.ins().stack_addr(self.ptr, s, 0);
                self.store_scalar(*k, v, a, 0);
                a
            }
            Ty::R(_) => {
                let s = self.new_slot(8, 8);
                let a = self.b.ins().stack_addr(self.ptr, s, 0);
                self.b.ins().store(Self::mem(), v.one()?, a, 0);
                a
            }
        })
    }
}
