//! Lowering one Move function instantiation from stack bytecode to SSA
//! Cranelift IR.
//!
//! The verifier guarantees the operand stack is empty at every basic-block
//! boundary and that every instruction sees operands of the right types.
//! So a block is lowered by walking it once with an abstract stack of
//! `(Kind, SSA value)` pairs (the per-offset stack types fall out of that
//! walk); locals are `cranelift_frontend::Variable`s. Anything that breaks
//! those guarantees is a [`CompileError::Malformed`], never a panic.
//!
//! Calling convention of compiled functions (internal, host call conv):
//! `(ctx: ptr, <params' lanes in Move order>) -> (failed: i8, <returns' lanes>)`.
//! On failure the returns are zeros and `ctx` holds the status.

#![forbid(unsafe_code)]

use crate::cfg::basic_blocks;
use crate::context::off;
use crate::error::{CompileError, CompileResult};
use crate::gas::{instr_cost, segments, CostTable};
use crate::helpers::{op, Helper, HELPER_ARITHMETIC};
use crate::kind::Kind;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, Signature,
    StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use movejit_format::{
    Bytecode, CompiledModule, FunctionHandleIndex, FunctionInstantiationIndex, SignatureToken,
    StatusCode, StatusFlavour,
};
use std::collections::HashMap;

/// The signature of a compiled Move function (see the module docs).
pub fn move_signature(call_conv: CallConv, ptr: Type, params: &[Kind], rets: &[Kind]) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(ptr));
    for k in params {
        sig.params.extend(k.lanes().iter().map(|t| AbiParam::new(*t)));
    }
    sig.returns.push(AbiParam::new(types::I8));
    for k in rets {
        sig.returns.extend(k.lanes().iter().map(|t| AbiParam::new(*t)));
    }
    sig
}

/// A callee as the lowering needs it.
pub struct CalleeRef {
    pub func: FuncRef,
    pub params: Vec<Kind>,
    pub rets: Vec<Kind>,
}

/// What the lowering asks of the engine: resolve and declare callees and
/// helpers in the function being built.
pub trait LowerEnv {
    fn pointer_type(&self) -> Type;
    fn frontend_config(&self) -> TargetFrontendConfig;
    /// Declares the function a call instruction names (queuing it for
    /// compilation) and imports it into `func`.
    fn callee(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<Kind>,
        func: &mut Function,
    ) -> CompileResult<CalleeRef>;
    /// Imports a host helper into `func`.
    fn helper(&mut self, helper: Helper, func: &mut Function) -> CompileResult<FuncRef>;
}

/// The function instantiation to lower.
pub struct Target<'a> {
    pub module: &'a CompiledModule,
    pub module_idx: u32,
    pub fdef: u16,
    pub type_args: &'a [Kind],
    pub params: Vec<Kind>,
    pub rets: Vec<Kind>,
    pub cost: Option<&'a CostTable>,
    pub max_code_len: usize,
}

/// A value on the abstract operand stack.
#[derive(Clone, Copy, Debug)]
enum Val {
    One(Value),
    Wide([Value; 4]),
}

impl Val {
    fn lanes(&self) -> Vec<Value> {
        match self {
            Val::One(v) => vec![*v],
            Val::Wide(w) => w.to_vec(),
        }
    }
    fn one(&self) -> CompileResult<Value> {
        match self {
            Val::One(v) => Ok(*v),
            Val::Wide(_) => Err(malformed("expected a narrow value")),
        }
    }
    fn wide(&self) -> CompileResult<[Value; 4]> {
        match self {
            Val::Wide(w) => Ok(*w),
            Val::One(_) => Err(malformed("expected a 256-bit value")),
        }
    }
}

fn malformed(msg: impl Into<String>) -> CompileError {
    CompileError::Malformed(msg.into())
}

fn status_number(s: StatusCode) -> i64 {
    s.number(StatusFlavour::Aptos) as i64
}

/// How gas is charged for the instructions being lowered.
#[derive(Clone)]
enum Mode {
    Unmetered,
    /// The whole segment was charged up front; a failure at instruction `i`
    /// refunds `refunds[i - start]`.
    Fast { start: usize, refunds: Vec<u64> },
    /// Charge instruction by instruction.
    Slow { start: usize, costs: Vec<u64> },
}

/// Lowers `target` into `func` (whose signature must already be set).
pub fn lower_function(
    env: &mut dyn LowerEnv,
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    target: &Target<'_>,
) -> CompileResult<()> {
    let fdef = target
        .module
        .function_defs
        .get(target.fdef as usize)
        .ok_or_else(|| malformed("function definition index out of range"))?;
    let code = fdef
        .code
        .as_ref()
        .ok_or_else(|| CompileError::Unsupported("native function".into()))?;
    if code.code.len() > target.max_code_len {
        return Err(CompileError::Unsupported(format!("function of {} instructions (limit {})", code.code.len(), target.max_code_len)));
    }
    let local_sig = target
        .module
        .signatures
        .get(code.locals.idx())
        .ok_or_else(|| malformed("locals signature index out of range"))?;
    let mut local_kinds = target.params.clone();
    for tok in &local_sig.0 {
        local_kinds.push(Kind::of_instantiated(tok, target.type_args).ok_or_else(|| {
            CompileError::Unsupported(format!("local of type {tok:?}"))
        })?);
    }
    if local_kinds.len() > 256 {
        return Err(malformed("more than 256 locals"));
    }
    let blocks = basic_blocks(&code.code)?;

    let ptr = env.pointer_type();
    let frontend = env.frontend_config();
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let ctx = b.block_params(entry)[0];
    let params: Vec<Value> = b.block_params(entry)[1..].to_vec();

    let metered = target.cost.is_some();
    let fail = b.create_block();
    b.set_cold_block(fail);
    b.append_block_param(fail, types::I32); // status
    b.append_block_param(fail, types::I32); // code offset
    if metered {
        b.append_block_param(fail, types::I64); // gas refund
    }
    let propagate = b.create_block();
    b.set_cold_block(propagate);

    let scratch = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 96, 4));

    let mut lw = Lowerer {
        b,
        env,
        target,
        code: &code.code,
        ptr,
        ctx,
        locals: Vec::new(),
        stack: Vec::new(),
        watermark: 0,
        room: None,
        base: None,
        depth: None,
        max_depth: None,
        block_of: HashMap::new(),
        fail,
        propagate,
        scratch,
        mode: Mode::Unmetered,
        helpers: HashMap::new(),
        callees: HashMap::new(),
    };
    lw.prologue(&local_kinds, &params)?;
    for &(s, _) in &blocks {
        let blk = lw.b.create_block();
        lw.block_of.insert(s, blk);
    }
    let first = lw.block_of[&0];
    lw.b.ins().jump(first, &[]);
    for &(s, e) in &blocks {
        let blk = lw.block_of[&s];
        lw.b.switch_to_block(blk);
        lw.lower_block(s, e)?;
    }
    lw.epilogues(metered);
    lw.b.seal_all_blocks();
    lw.b.finalize(frontend);
    Ok(())
}

struct Lowerer<'a, 'f> {
    b: FunctionBuilder<'f>,
    env: &'a mut dyn LowerEnv,
    target: &'a Target<'a>,
    code: &'a [Bytecode],
    ptr: Type,
    ctx: Value,
    locals: Vec<(Kind, Vec<Variable>)>,
    stack: Vec<(Kind, Val)>,
    /// Highest operand-stack height already checked in the current block.
    watermark: usize,
    /// `max_stack - stack_base` at entry: pushes to this height overflow.
    room: Option<Value>,
    base: Option<Value>,
    depth: Option<Value>,
    max_depth: Option<Value>,
    block_of: HashMap<usize, Block>,
    fail: Block,
    propagate: Block,
    scratch: StackSlot,
    mode: Mode,
    helpers: HashMap<Helper, FuncRef>,
    callees: HashMap<(FunctionHandleIndex, Vec<Kind>), std::rc::Rc<CalleeRef>>,
}

impl Lowerer<'_, '_> {
    fn mem() -> MemFlagsData {
        MemFlagsData::trusted()
    }

    fn load_ctx(&mut self, ty: Type, offset: i32) -> Value {
        self.b.ins().load(ty, Self::mem(), self.ctx, offset)
    }

    fn store_ctx(&mut self, v: Value, offset: i32) {
        self.b.ins().store(Self::mem(), v, self.ctx, offset);
    }

    fn prologue(&mut self, local_kinds: &[Kind], params: &[Value]) -> CompileResult<()> {
        // Host stack guard: frames start above `ctx.stack_limit`.
        let sp = self.b.ins().get_stack_pointer(self.ptr);
        let limit = self.load_ctx(self.ptr, off::STACK_LIMIT);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, limit);
        self.fail_if(low, StatusCode::EXECUTION_STACK_OVERFLOW, 0, 0);

        let base = self.load_ctx(types::I64, off::STACK_BASE);
        let max = self.load_ctx(types::I64, off::MAX_STACK);
        let room = self.b.ins().isub(max, base);
        self.base = Some(base);
        self.room = Some(room);
        // Depth: frames active when this one started, and the limit; both
        // are fixed for the frame's lifetime (callees restore `depth`).
        self.depth = Some(self.load_ctx(types::I64, off::DEPTH));
        self.max_depth = Some(self.load_ctx(types::I64, off::MAX_DEPTH));

        let mut pi = 0;
        for (i, k) in local_kinds.iter().enumerate() {
            let vars: Vec<Variable> = k.lanes().iter().map(|t| self.b.declare_var(*t)).collect();
            for (lane, var) in vars.iter().enumerate() {
                let v = if i < self.target.params.len() {
                    let v = *params.get(pi).ok_or_else(|| malformed("parameter count"))?;
                    pi += 1;
                    v
                } else {
                    // Move locals are written before they are read (verifier);
                    // a zero keeps the SSA construction total.
                    self.iconst_ty(k.lanes()[lane], 0)
                };
                self.b.def_var(*var, v);
            }
            self.locals.push((*k, vars));
        }
        Ok(())
    }

    fn epilogues(&mut self, metered: bool) {
        let rets = self.target.rets.clone();
        // fail(status, offset[, refund]): record the error and return.
        self.b.switch_to_block(self.fail);
        let p = self.b.block_params(self.fail).to_vec();
        let status = self.b.ins().uextend(types::I64, p[0]);
        self.store_ctx(status, off::STATUS);
        let m = self.b.ins().iconst(types::I32, self.target.module_idx as i64);
        self.store_ctx(m, off::MODULE);
        let f = self.b.ins().iconst(types::I32, self.target.fdef as i64);
        self.store_ctx(f, off::FUNCTION);
        self.store_ctx(p[1], off::CODE_OFFSET);
        if metered {
            // Out of gas empties the meter; any other error refunds the
            // pre-charged cost of the instructions it skipped.
            let g = self.load_ctx(types::I64, off::GAS_LEFT);
            let g = self.b.ins().iadd(g, p[2]);
            let oog = self.b.ins().icmp_imm_u(IntCC::Equal, p[0], status_number(StatusCode::OUT_OF_GAS));
            let zero = self.b.ins().iconst(types::I64, 0);
            let g = self.b.ins().select(oog, zero, g);
            self.store_ctx(g, off::GAS_LEFT);
        }
        self.error_return(&rets);
        // propagate: a callee failed and already recorded why.
        self.b.switch_to_block(self.propagate);
        self.error_return(&rets);
    }

    fn error_return(&mut self, rets: &[Kind]) {
        let mut vals = vec![self.b.ins().iconst(types::I8, 1)];
        for k in rets {
            for t in k.lanes() {
                let z = self.iconst_ty(*t, 0);
                vals.push(z);
            }
        }
        self.b.ins().return_(&vals);
    }

    // ---- errors ----

    fn refund_at(&self, offset: usize) -> u64 {
        match &self.mode {
            Mode::Fast { start, refunds } => refunds.get(offset - start).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Branches to the failure path with `status` when `cond` is true.
    fn fail_if(&mut self, cond: Value, status: StatusCode, offset: usize, refund: u64) {
        self.fail_if_with(cond, offset, refund, |lw| lw.b.ins().iconst(types::I32, status_number(status)));
    }

    /// Branches to a cold per-site block when `cond` holds; that block
    /// computes the status (`status`) and jumps to the shared failure path,
    /// so the hot path carries no error constants.
    fn fail_if_with(&mut self, cond: Value, offset: usize, refund: u64, status: impl FnOnce(&mut Self) -> Value) {
        let cont = self.b.create_block();
        let site = self.b.create_block();
        self.b.set_cold_block(site);
        self.b.ins().brif(cond, site, &[], cont, &[]);
        self.b.switch_to_block(site);
        self.b.seal_block(site);
        let st = status(self);
        let offv = self.b.ins().iconst(types::I32, offset as i64);
        let mut args = vec![BlockArg::Value(st), BlockArg::Value(offv)];
        if self.target.cost.is_some() {
            let r = self.b.ins().iconst(types::I64, refund as i64);
            args.push(BlockArg::Value(r));
        }
        self.b.ins().jump(self.fail, &args);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    fn arith_fail_if(&mut self, cond: Value, offset: usize) {
        let r = self.refund_at(offset);
        self.fail_if(cond, StatusCode::ARITHMETIC_ERROR, offset, r);
    }

    // ---- operand stack ----

    fn pop(&mut self) -> CompileResult<(Kind, Val)> {
        self.stack.pop().ok_or_else(|| malformed("operand stack underflow"))
    }

    fn pop_kind(&mut self, want: Kind) -> CompileResult<Val> {
        let (k, v) = self.pop()?;
        if k != want {
            return Err(malformed(format!("expected {want:?} on the stack, found {k:?}")));
        }
        Ok(v)
    }

    /// Pushes a value the current instruction produced, checking the shared
    /// operand-stack limit exactly where the interpreter would.
    fn push(&mut self, k: Kind, v: Val, offset: usize) {
        let h = self.stack.len();
        if h + 1 > self.watermark {
            if let Some(room) = self.room {
                // Overflows iff stack_base + h >= max_stack, i.e. room <= h.
                let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64);
                let r = self.refund_at(offset);
                self.fail_if(over, StatusCode::EXECUTION_STACK_OVERFLOW, offset, r);
            }
            self.watermark = h + 1;
        }
        self.stack.push((k, v));
    }

    // ---- constants ----

    fn iconst_ty(&mut self, ty: Type, bits: u128) -> Value {
        if ty == types::I128 {
            let lo = self.b.ins().iconst(types::I64, bits as u64 as i64);
            let hi = self.b.ins().iconst(types::I64, (bits >> 64) as u64 as i64);
            self.b.ins().iconcat(lo, hi)
        } else {
            let w = ty.bits();
            let masked = if w >= 64 { bits as u64 } else { (bits as u64) & ((1u64 << w) - 1) };
            self.b.ins().iconst(ty, masked as i64)
        }
    }

    fn const_val(&mut self, k: Kind, le: &[u8]) -> Val {
        if k.is_wide() {
            let mut lanes = [Value::from_u32(0); 4];
            for (i, lane) in lanes.iter_mut().enumerate() {
                let mut b8 = [0u8; 8];
                b8.copy_from_slice(&le[i * 8..i * 8 + 8]);
                *lane = self.b.ins().iconst(types::I64, i64::from_le_bytes(b8));
            }
            Val::Wide(lanes)
        } else {
            let mut b16 = [0u8; 16];
            b16[..le.len()].copy_from_slice(le);
            let v = self.iconst_ty(k.ir_type(), u128::from_le_bytes(b16));
            Val::One(v)
        }
    }

    // ---- scratch memory for helpers ----

    fn spill(&mut self, v: &Val, at: i32) {
        for (i, lane) in v.lanes().into_iter().enumerate() {
            self.b.ins().stack_store(self.ptr, lane, self.scratch, at + 8 * i as i32);
        }
    }

    fn reload(&mut self, k: Kind, at: i32) -> Val {
        if k.is_wide() {
            let mut lanes = [Value::from_u32(0); 4];
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = self.b.ins().stack_load(self.ptr, types::I64, self.scratch, at + 8 * i as i32);
            }
            Val::Wide(lanes)
        } else {
            Val::One(self.b.ins().stack_load(self.ptr, k.ir_type(), self.scratch, at))
        }
    }

    fn slot_addr(&mut self, at: i32) -> Value {
        self.b.ins().stack_addr(self.ptr, self.scratch, at)
    }

    fn helper_ref(&mut self, h: Helper) -> CompileResult<FuncRef> {
        if let Some(f) = self.helpers.get(&h) {
            return Ok(*f);
        }
        let f = self.env.helper(h, self.b.func)?;
        self.helpers.insert(h, f);
        Ok(f)
    }

    /// Calls a status-returning helper and fails on a non-zero status
    /// (1 is `ARITHMETIC_ERROR`, anything else a broken invariant).
    fn call_checked(&mut self, h: Helper, args: &[Value], offset: usize) -> CompileResult<()> {
        let f = self.helper_ref(h)?;
        let call = self.b.ins().call(f, args);
        let st = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, 0);
        let r = self.refund_at(offset);
        self.fail_if_with(bad, offset, r, |lw| {
            let is_arith = lw.b.ins().icmp_imm_u(IntCC::Equal, st, HELPER_ARITHMETIC as i64);
            let a = lw.b.ins().iconst(types::I32, status_number(StatusCode::ARITHMETIC_ERROR));
            let u = lw.b.ins().iconst(types::I32, status_number(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR));
            lw.b.ins().select(is_arith, a, u)
        });
        Ok(())
    }

    fn helper_binop(&mut self, opc: u32, k: Kind, a: Val, b: Val, offset: usize) -> CompileResult<Val> {
        self.spill(&a, 0);
        self.spill(&b, 32);
        let args = [
            self.b.ins().iconst(types::I32, opc as i64),
            self.b.ins().iconst(types::I32, k.code() as i64),
            self.slot_addr(0),
            self.slot_addr(32),
            self.slot_addr(64),
        ];
        self.call_checked(Helper::WideBinop, &args, offset)?;
        Ok(self.reload(k, 64))
    }

    // ---- blocks and gas ----

    fn lower_block(&mut self, s: usize, e: usize) -> CompileResult<()> {
        self.stack.clear();
        self.watermark = 0;
        let Some(cost) = self.target.cost else {
            self.mode = Mode::Unmetered;
            return self.lower_range(s, e, e);
        };
        for (a, z) in segments(self.code, s, e) {
            let costs: Vec<u64> = self.code[a..z].iter().map(|i| instr_cost(cost, i)).collect();
            let total = costs.iter().fold(0u64, |x, y| x.saturating_add(*y));
            let mut refunds = Vec::with_capacity(costs.len());
            let mut spent = 0u64;
            for c in &costs {
                spent = spent.saturating_add(*c);
                refunds.push(total - spent);
            }
            let fast = self.b.create_block();
            let slow = self.b.create_block();
            self.b.set_cold_block(slow);
            let gas = self.load_ctx(types::I64, off::GAS_LEFT);
            let t = self.b.ins().iconst(types::I64, total as i64);
            let enough = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, gas, t);
            self.b.ins().brif(enough, fast, &[], slow, &[]);
            let (stack0, wm0) = (self.stack.clone(), self.watermark);

            self.b.switch_to_block(fast);
            self.b.seal_block(fast);
            let left = self.b.ins().isub(gas, t);
            self.store_ctx(left, off::GAS_LEFT);
            self.mode = Mode::Fast { start: a, refunds };
            self.lower_range(a, z, e)?;
            let cont = (z < e).then(|| self.b.create_block());
            let vars = cont.map(|c| self.spill_to_vars(c));

            self.b.switch_to_block(slow);
            self.b.seal_block(slow);
            self.stack = stack0;
            self.watermark = wm0;
            self.mode = Mode::Slow { start: a, costs };
            self.lower_range(a, z, e)?;
            if let (Some(c), Some(vars)) = (cont, vars) {
                self.def_vars_and_jump(&vars, c);
                self.b.switch_to_block(c);
                self.stack = vars
                    .iter()
                    .map(|(k, vs)| {
                        let lanes: Vec<Value> = vs.iter().map(|v| self.b.use_var(*v)).collect();
                        (*k, if k.is_wide() { Val::Wide([lanes[0], lanes[1], lanes[2], lanes[3]]) } else { Val::One(lanes[0]) })
                    })
                    .collect();
            }
        }
        Ok(())
    }

    /// Declares variables for the live stack, defines them from the current
    /// (fast) path and jumps to `cont`.
    fn spill_to_vars(&mut self, cont: Block) -> Vec<(Kind, Vec<Variable>)> {
        let mut vars = Vec::new();
        for (k, _) in self.stack.clone() {
            let vs: Vec<Variable> = k.lanes().iter().map(|t| self.b.declare_var(*t)).collect();
            vars.push((k, vs));
        }
        self.def_vars_and_jump(&vars, cont);
        vars
    }

    fn def_vars_and_jump(&mut self, vars: &[(Kind, Vec<Variable>)], cont: Block) {
        for ((_, val), (_, vs)) in self.stack.clone().iter().zip(vars) {
            for (lane, var) in val.lanes().into_iter().zip(vs) {
                self.b.def_var(*var, lane);
            }
        }
        self.b.ins().jump(cont, &[]);
    }

    /// Lowers `[a, z)` of the block ending at `e`; at the block end, falls
    /// through to the next block when the last instruction does not branch.
    fn lower_range(&mut self, a: usize, z: usize, e: usize) -> CompileResult<()> {
        for i in a..z {
            if let Mode::Slow { start, costs } = &self.mode {
                let c = costs[i - start];
                if c > 0 {
                    let gas = self.load_ctx(types::I64, off::GAS_LEFT);
                    let cv = self.b.ins().iconst(types::I64, c as i64);
                    let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, cv);
                    self.fail_if(short, StatusCode::OUT_OF_GAS, i, 0);
                    let left = self.b.ins().isub(gas, cv);
                    self.store_ctx(left, off::GAS_LEFT);
                }
            }
            self.lower_instr(i)?;
        }
        if z == e {
            let last = &self.code[e - 1];
            if !last.is_branch() {
                if !self.stack.is_empty() {
                    return Err(malformed(format!("operand stack not empty at block end {e}")));
                }
                let next = *self
                    .block_of
                    .get(&e)
                    .ok_or_else(|| malformed("control falls off the end of the code"))?;
                self.b.ins().jump(next, &[]);
            }
        }
        Ok(())
    }

    fn target_block(&self, t: u16) -> CompileResult<Block> {
        self.block_of.get(&(t as usize)).copied().ok_or_else(|| malformed("bad branch target"))
    }

    fn local(&self, i: u8) -> CompileResult<(Kind, Vec<Variable>)> {
        self.locals.get(i as usize).cloned().ok_or_else(|| malformed("local index out of range"))
    }

    // ---- instructions ----

    fn lower_instr(&mut self, i: usize) -> CompileResult<()> {
        use Bytecode as B;
        let ins = self.code[i].clone();
        match ins {
            B::Nop => {}
            B::Pop => {
                self.pop()?;
            }
            B::Ret => {
                let rets = self.target.rets.clone();
                let mut vals = Vec::new();
                for k in rets.iter().rev() {
                    let v = self.pop_kind(*k)?;
                    vals.push(v);
                }
                if !self.stack.is_empty() {
                    return Err(malformed("values left on the stack at Ret"));
                }
                let mut out = vec![self.b.ins().iconst(types::I8, 0)];
                for v in vals.iter().rev() {
                    out.extend(v.lanes());
                }
                self.b.ins().return_(&out);
            }
            B::Branch(t) => {
                self.expect_empty_stack()?;
                let blk = self.target_block(t)?;
                self.b.ins().jump(blk, &[]);
            }
            B::BrTrue(t) | B::BrFalse(t) => {
                let c = self.pop_kind(Kind::Bool)?.one()?;
                self.expect_empty_stack()?;
                let taken = self.target_block(t)?;
                let next = self.target_block((i + 1) as u16)?;
                if matches!(ins, B::BrTrue(_)) {
                    self.b.ins().brif(c, taken, &[], next, &[]);
                } else {
                    self.b.ins().brif(c, next, &[], taken, &[]);
                }
            }
            B::LdTrue | B::LdFalse => {
                let v = self.b.ins().iconst(types::I8, matches!(ins, B::LdTrue) as i64);
                self.push(Kind::Bool, Val::One(v), i);
            }
            B::LdU8(x) => self.push_const(Kind::U8, &x.to_le_bytes(), i),
            B::LdU16(x) => self.push_const(Kind::U16, &x.to_le_bytes(), i),
            B::LdU32(x) => self.push_const(Kind::U32, &x.to_le_bytes(), i),
            B::LdU64(x) => self.push_const(Kind::U64, &x.to_le_bytes(), i),
            B::LdU128(x) => self.push_const(Kind::U128, &x.to_le_bytes(), i),
            B::LdU256(x) => self.push_const(Kind::U256, &x.to_le_bytes(), i),
            B::LdI8(x) => self.push_const(Kind::I8, &x.to_le_bytes(), i),
            B::LdI16(x) => self.push_const(Kind::I16, &x.to_le_bytes(), i),
            B::LdI32(x) => self.push_const(Kind::I32, &x.to_le_bytes(), i),
            B::LdI64(x) => self.push_const(Kind::I64, &x.to_le_bytes(), i),
            B::LdI128(x) => self.push_const(Kind::I128, &x.to_le_bytes(), i),
            B::LdI256(x) => self.push_const(Kind::I256, &x.to_le_bytes(), i),
            B::LdConst(idx) => {
                let c = self
                    .target
                    .module
                    .constant_pool
                    .get(idx.idx())
                    .ok_or_else(|| malformed("constant index out of range"))?;
                let k = Kind::of(&c.type_)
                    .ok_or_else(|| CompileError::Unsupported(format!("constant of type {:?}", c.type_)))?;
                if c.data.len() != k.bytes() || (k == Kind::Bool && c.data[0] > 1) {
                    return Err(malformed("constant bytes do not match its type"));
                }
                let data = c.data.clone();
                self.push_const(k, &data, i);
            }
            B::CopyLoc(l) | B::MoveLoc(l) => {
                let (k, vars) = self.local(l)?;
                let lanes: Vec<Value> = vars.iter().map(|v| self.b.use_var(*v)).collect();
                let v = if k.is_wide() { Val::Wide([lanes[0], lanes[1], lanes[2], lanes[3]]) } else { Val::One(lanes[0]) };
                self.push(k, v, i);
            }
            B::StLoc(l) => {
                let (k, vars) = self.local(l)?;
                let v = self.pop_kind(k)?;
                for (lane, var) in v.lanes().into_iter().zip(vars) {
                    self.b.def_var(var, lane);
                }
            }
            B::Add | B::Sub | B::Mul | B::Div | B::Mod => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                if ka != kb || !ka.is_integer() {
                    return Err(malformed("arithmetic on mismatched or non-integer operands"));
                }
                let r = self.arith(&ins, ka, a, b, i)?;
                self.push(ka, r, i);
            }
            B::BitOr | B::BitAnd | B::Xor => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                if ka != kb || !ka.is_integer() {
                    return Err(malformed("bitwise operation on mismatched operands"));
                }
                let mut out = Vec::new();
                for (x, y) in a.lanes().into_iter().zip(b.lanes()) {
                    out.push(match ins {
                        B::BitOr => self.b.ins().bor(x, y),
                        B::BitAnd => self.b.ins().band(x, y),
                        _ => self.b.ins().bxor(x, y),
                    });
                }
                let r = if ka.is_wide() { Val::Wide([out[0], out[1], out[2], out[3]]) } else { Val::One(out[0]) };
                self.push(ka, r, i);
            }
            B::Or | B::And => {
                let b = self.pop_kind(Kind::Bool)?.one()?;
                let a = self.pop_kind(Kind::Bool)?.one()?;
                let r = if matches!(ins, B::Or) { self.b.ins().bor(a, b) } else { self.b.ins().band(a, b) };
                self.push(Kind::Bool, Val::One(r), i);
            }
            B::Not => {
                let a = self.pop_kind(Kind::Bool)?.one()?;
                let r = self.b.ins().bxor_imm_u(a, 1);
                self.push(Kind::Bool, Val::One(r), i);
            }
            B::Eq | B::Neq => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                if ka != kb {
                    return Err(malformed("equality on mismatched operands"));
                }
                let r = if ka.is_wide() {
                    let (x, y) = (a.wide()?, b.wide()?);
                    let mut acc = self.b.ins().bxor(x[0], y[0]);
                    for l in 1..4 {
                        let d = self.b.ins().bxor(x[l], y[l]);
                        acc = self.b.ins().bor(acc, d);
                    }
                    let cc = if matches!(ins, B::Eq) { IntCC::Equal } else { IntCC::NotEqual };
                    self.b.ins().icmp_imm_u(cc, acc, 0)
                } else {
                    let cc = if matches!(ins, B::Eq) { IntCC::Equal } else { IntCC::NotEqual };
                    self.b.ins().icmp(cc, a.one()?, b.one()?)
                };
                self.push(Kind::Bool, Val::One(r), i);
            }
            B::Lt | B::Gt | B::Le | B::Ge => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                if ka != kb || !ka.is_integer() {
                    return Err(malformed("comparison on mismatched operands"));
                }
                let s = ka.is_signed();
                let cc = match (&ins, s) {
                    (B::Lt, false) => IntCC::UnsignedLessThan,
                    (B::Lt, true) => IntCC::SignedLessThan,
                    (B::Gt, false) => IntCC::UnsignedGreaterThan,
                    (B::Gt, true) => IntCC::SignedGreaterThan,
                    (B::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (B::Le, true) => IntCC::SignedLessThanOrEqual,
                    (B::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                let r = if ka.is_wide() {
                    // The helper answers 0 less / 1 equal / 2 greater; compare
                    // that answer against 1 with the unsigned form of `cc`.
                    self.spill(&a, 0);
                    self.spill(&b, 32);
                    let f = self.helper_ref(Helper::WideCmp)?;
                    let args = [self.b.ins().iconst(types::I32, ka.code() as i64), self.slot_addr(0), self.slot_addr(32)];
                    let call = self.b.ins().call(f, &args);
                    let ord = self.b.inst_results(call)[0];
                    self.b.ins().icmp_imm_u(cc.unsigned(), ord, 1)
                } else {
                    self.b.ins().icmp(cc, a.one()?, b.one()?)
                };
                self.push(Kind::Bool, Val::One(r), i);
            }
            B::Shl | B::Shr => {
                let amt = self.pop_kind(Kind::U8)?.one()?;
                let (k, a) = self.pop()?;
                if !k.is_integer() || k.is_signed() {
                    return Err(malformed("shift of a non-unsigned-integer"));
                }
                let r = if k.is_wide() {
                    self.spill(&a, 0);
                    let args = [
                        self.b.ins().iconst(types::I32, if matches!(ins, B::Shl) { op::SHL } else { op::SHR } as i64),
                        self.b.ins().iconst(types::I32, k.code() as i64),
                        self.slot_addr(0),
                        self.b.ins().uextend(types::I32, amt),
                        self.slot_addr(64),
                    ];
                    self.call_checked(Helper::WideShift, &args, i)?;
                    self.reload(k, 64)
                } else {
                    let over = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, amt, k.bits() as i64);
                    self.arith_fail_if(over, i);
                    let x = a.one()?;
                    let n = if k == Kind::U128 { self.b.ins().uextend(types::I64, amt) } else { amt };
                    Val::One(if matches!(ins, B::Shl) { self.b.ins().ishl(x, n) } else { self.b.ins().ushr(x, n) })
                };
                self.push(k, r, i);
            }
            B::CastU8 | B::CastU16 | B::CastU32 | B::CastU64 | B::CastU128 | B::CastU256 | B::CastI8
            | B::CastI16 | B::CastI32 | B::CastI64 | B::CastI128 | B::CastI256 => {
                let dst = match ins {
                    B::CastU8 => Kind::U8,
                    B::CastU16 => Kind::U16,
                    B::CastU32 => Kind::U32,
                    B::CastU64 => Kind::U64,
                    B::CastU128 => Kind::U128,
                    B::CastU256 => Kind::U256,
                    B::CastI8 => Kind::I8,
                    B::CastI16 => Kind::I16,
                    B::CastI32 => Kind::I32,
                    B::CastI64 => Kind::I64,
                    B::CastI128 => Kind::I128,
                    _ => Kind::I256,
                };
                let (src, a) = self.pop()?;
                if !src.is_integer() {
                    return Err(malformed("cast of a non-integer"));
                }
                let r = if src.is_wide() || dst.is_wide() {
                    self.spill(&a, 0);
                    let args = [
                        self.b.ins().iconst(types::I32, src.code() as i64),
                        self.b.ins().iconst(types::I32, dst.code() as i64),
                        self.slot_addr(0),
                        self.slot_addr(64),
                    ];
                    self.call_checked(Helper::Cast, &args, i)?;
                    self.reload(dst, 64)
                } else {
                    Val::One(self.cast_inline(src, dst, a.one()?, i))
                };
                self.push(dst, r, i);
            }
            B::Negate => {
                let (k, a) = self.pop()?;
                if !k.is_signed() {
                    return Err(malformed("negate of a non-signed-integer"));
                }
                let r = if k.is_wide() {
                    self.spill(&a, 0);
                    let args = [self.b.ins().iconst(types::I32, k.code() as i64), self.slot_addr(0), self.slot_addr(64)];
                    self.call_checked(Helper::WideNeg, &args, i)?;
                    self.reload(k, 64)
                } else {
                    let x = a.one()?;
                    let min = self.iconst_ty(k.ir_type(), k.min_bits());
                    let is_min = self.b.ins().icmp(IntCC::Equal, x, min);
                    self.arith_fail_if(is_min, i);
                    Val::One(self.b.ins().ineg(x))
                };
                self.push(k, r, i);
            }
            B::Abort => {
                let code = self.pop_kind(Kind::U64)?.one()?;
                self.store_ctx(code, off::ABORT_CODE);
                let st = self.b.ins().iconst(types::I32, status_number(StatusCode::ABORTED));
                let offv = self.b.ins().iconst(types::I32, i as i64);
                let mut args = vec![BlockArg::Value(st), BlockArg::Value(offv)];
                if self.target.cost.is_some() {
                    let refund = self.refund_at(i) as i64;
                    let r = self.b.ins().iconst(types::I64, refund);
                    args.push(BlockArg::Value(r));
                }
                self.b.ins().jump(self.fail, &args);
            }
            B::Call(h) => self.call(h, Vec::new(), i)?,
            B::CallGeneric(fi) => {
                let (h, targs) = self.instantiation(fi)?;
                self.call(h, targs, i)?
            }
            other => {
                return Err(CompileError::Unsupported(format!("instruction {}", other.opcode().name())));
            }
        }
        Ok(())
    }

    fn expect_empty_stack(&self) -> CompileResult<()> {
        if self.stack.is_empty() {
            Ok(())
        } else {
            Err(malformed("operand stack not empty at a branch"))
        }
    }

    fn push_const(&mut self, k: Kind, le: &[u8], i: usize) {
        let v = self.const_val(k, le);
        self.push(k, v, i);
    }

    fn instantiation(&self, fi: FunctionInstantiationIndex) -> CompileResult<(FunctionHandleIndex, Vec<Kind>)> {
        let m = self.target.module;
        let inst = m
            .function_instantiations
            .get(fi.idx())
            .ok_or_else(|| malformed("function instantiation index out of range"))?;
        let sig = m.signatures.get(inst.type_parameters.idx()).ok_or_else(|| malformed("signature index"))?;
        let mut targs = Vec::new();
        for tok in &sig.0 {
            targs.push(Kind::of_instantiated(tok, self.target.type_args).ok_or_else(|| {
                CompileError::Unsupported(format!("type argument {tok:?}"))
            })?);
        }
        Ok((inst.handle, targs))
    }

    fn call(&mut self, h: FunctionHandleIndex, targs: Vec<Kind>, i: usize) -> CompileResult<()> {
        let callee = match self.callees.get(&(h, targs.clone())) {
            Some(c) => c.clone(),
            None => {
                let c = std::rc::Rc::new(self.env.callee(self.target.module_idx, h, targs.clone(), self.b.func)?);
                self.callees.insert((h, targs), c.clone());
                c
            }
        };
        if self.stack.len() < callee.params.len() {
            return Err(malformed("too few arguments on the stack for a call"));
        }
        let split = self.stack.len() - callee.params.len();
        let args: Vec<(Kind, Val)> = self.stack.split_off(split);
        let mut lanes = vec![self.ctx];
        for ((k, v), want) in args.iter().zip(&callee.params) {
            if k != want {
                return Err(malformed("call argument of the wrong type"));
            }
            lanes.extend(v.lanes());
        }
        let held = self.stack.len() as i64;
        // Depth: the interpreter fails the call that would make frame
        // `max_depth + 1`, at the call instruction.
        let (depth, max) = self.depth.zip(self.max_depth).ok_or_else(|| malformed("no prologue"))?;
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, depth, max);
        let r = self.refund_at(i);
        self.fail_if(over, StatusCode::CALL_STACK_OVERFLOW, i, r);
        if let Some(cost) = self.target.cost {
            self.charge_dynamic(cost.per_frame, i);
        }
        let d1 = self.b.ins().iadd_imm_s(depth, 1);
        self.store_ctx(d1, off::DEPTH);
        let base = self.base.ok_or_else(|| malformed("no prologue"))?;
        if held > 0 {
            let nb = self.b.ins().iadd_imm_s(base, held);
            self.store_ctx(nb, off::STACK_BASE);
        }
        let call = self.b.ins().call(callee.func, &lanes);
        let results = self.b.inst_results(call).to_vec();
        let cont = self.b.create_block();
        self.b.ins().brif(results[0], self.propagate, &[], cont, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        self.store_ctx(depth, off::DEPTH);
        if held > 0 {
            self.store_ctx(base, off::STACK_BASE);
        }
        let mut at = 1;
        for k in &callee.rets {
            let v = if k.is_wide() {
                let w = [results[at], results[at + 1], results[at + 2], results[at + 3]];
                at += 4;
                Val::Wide(w)
            } else {
                at += 1;
                Val::One(results[at - 1])
            };
            // The callee pushed its results while it ran, against its own
            // (higher) base: nothing to check here.
            self.stack.push((*k, v));
        }
        self.watermark = self.watermark.max(self.stack.len());
        Ok(())
    }

    /// Charges a cost known only at this point of the instruction (after
    /// its own checks), failing with `OUT_OF_GAS` at `offset`.
    fn charge_dynamic(&mut self, amount: u64, offset: usize) {
        if amount == 0 {
            return;
        }
        let gas = self.load_ctx(types::I64, off::GAS_LEFT);
        let c = self.b.ins().iconst(types::I64, amount as i64);
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, c);
        let r = self.refund_at(offset);
        self.fail_if(short, StatusCode::OUT_OF_GAS, offset, r);
        let left = self.b.ins().isub(gas, c);
        self.store_ctx(left, off::GAS_LEFT);
    }

    fn arith(&mut self, ins: &Bytecode, k: Kind, a: Val, b: Val, i: usize) -> CompileResult<Val> {
        use Bytecode as B;
        let opc = match ins {
            B::Add => op::ADD,
            B::Sub => op::SUB,
            B::Mul => op::MUL,
            B::Div => op::DIV,
            _ => op::MOD,
        };
        let inline = !k.is_wide() && (k.bits() < 128 || opc == op::ADD || opc == op::SUB);
        if !inline {
            return self.helper_binop(opc, k, a, b, i);
        }
        let (x, y) = (a.one()?, b.one()?);
        let s = k.is_signed();
        let r = match opc {
            op::ADD | op::SUB | op::MUL => {
                let (r, of) = match (opc, s) {
                    (op::ADD, false) => self.b.ins().uadd_overflow(x, y),
                    (op::ADD, true) => self.b.ins().sadd_overflow(x, y),
                    (op::SUB, false) => self.b.ins().usub_overflow(x, y),
                    (op::SUB, true) => self.b.ins().ssub_overflow(x, y),
                    (_, false) => self.b.ins().umul_overflow(x, y),
                    (_, true) => self.b.ins().smul_overflow(x, y),
                };
                self.arith_fail_if(of, i);
                r
            }
            _ => {
                // Division traps in hardware: test the divisor (and MIN / -1).
                let zero = self.b.ins().icmp_imm_u(IntCC::Equal, y, 0);
                self.arith_fail_if(zero, i);
                if s {
                    let min = self.iconst_ty(k.ir_type(), k.min_bits());
                    let m1 = self.iconst_ty(k.ir_type(), u128::MAX);
                    let a_min = self.b.ins().icmp(IntCC::Equal, x, min);
                    let b_m1 = self.b.ins().icmp(IntCC::Equal, y, m1);
                    let both = self.b.ins().band(a_min, b_m1);
                    self.arith_fail_if(both, i);
                }
                match (opc, s) {
                    (op::DIV, false) => self.b.ins().udiv(x, y),
                    (op::DIV, true) => self.b.ins().sdiv(x, y),
                    (_, false) => self.b.ins().urem(x, y),
                    (_, true) => self.b.ins().srem(x, y),
                }
            }
        };
        Ok(Val::One(r))
    }

    /// A range-checked cast between kinds of at most 128 bits.
    fn cast_inline(&mut self, src: Kind, dst: Kind, x: Value, i: usize) -> Value {
        let (sb, db) = (src.bits(), dst.bits());
        let wty = if sb >= db { src.ir_type() } else { dst.ir_type() };
        let xw = if sb < db {
            if src.is_signed() { self.b.ins().sextend(wty, x) } else { self.b.ins().uextend(wty, x) }
        } else {
            x
        };
        let mut bad: Option<Value> = None;
        let mut or = |lw: &mut Self, c: Value| {
            bad = Some(match bad {
                Some(b) => lw.b.ins().bor(b, c),
                None => c,
            });
        };
        if src.is_signed() && !dst.is_signed() {
            let zero = self.iconst_ty(wty, 0);
            let neg = self.b.ins().icmp(IntCC::SignedLessThan, xw, zero);
            or(self, neg);
        }
        if src.max_bits() > dst.max_bits() {
            let c = self.iconst_ty(wty, dst.max_bits());
            let cc = if src.is_signed() { IntCC::SignedGreaterThan } else { IntCC::UnsignedGreaterThan };
            let over = self.b.ins().icmp(cc, xw, c);
            or(self, over);
        }
        if src.is_signed() && dst.is_signed() && sb > db {
            // dst MIN, sign-extended to the working width.
            let min = (-(1i128 << (db - 1))) as u128;
            let c = self.iconst_ty(wty, min);
            let under = self.b.ins().icmp(IntCC::SignedLessThan, xw, c);
            or(self, under);
        }
        if let Some(b) = bad {
            self.arith_fail_if(b, i);
        }
        if db < wty.bits() {
            self.b.ins().ireduce(dst.ir_type(), xw)
        } else {
            xw
        }
    }
}

/// Instantiates a parameter or return signature.
pub fn kinds_of(
    module: &CompiledModule,
    sig: movejit_format::SignatureIndex,
    type_args: &[Kind],
) -> CompileResult<Vec<Kind>> {
    let s = module.signatures.get(sig.idx()).ok_or_else(|| malformed("signature index out of range"))?;
    s.0.iter()
        .map(|t: &SignatureToken| {
            Kind::of_instantiated(t, type_args)
                .ok_or_else(|| CompileError::Unsupported(format!("value of type {t:?}")))
        })
        .collect()
}
