//! Lowering one Move function instantiation from stack bytecode to SSA
//! Cranelift IR.
//!
//! The verifier guarantees the operand stack is empty at every basic-block
//! boundary and that every instruction sees operands of the right types.
//! So a block is lowered by walking it once with an abstract stack of
//! `(Ty, Val)` pairs (the per-offset stack types fall out of that walk).
//! Anything that breaks those guarantees is a [`CompileError::Malformed`],
//! never a panic.
//!
//! Values (see [`Ty`]): scalars are SSA values; locals of scalar type are
//! `cranelift_frontend::Variable`s unless the function borrows them, then
//! they live in a frame slot. Structs, enums, vectors and signers live in
//! memory of their flat layout: each local has a frame slot, and each
//! operand-stack height has one slot per (size, alignment) it holds, so a
//! value moves by copying bytes. A slot owning heap memory is all-zero when
//! it holds no value, so it can always be dropped: `MoveLoc` zeroes the
//! local, `StLoc`/`WriteRef` drop the old value, `Ret` and the failure
//! paths drop the locals. Copy, drop, equality and every vector operation
//! that may allocate go through the runtime's shims.
//!
//! Calling convention of compiled functions (internal, host call conv):
//! `(ctx, <params' lanes in Move order>, <one destination pointer per
//! in-memory result>) -> (failed: i8, <scalar and reference results' lanes>)`.
//! An in-memory argument is passed as the address of the caller's operand
//! slot; the callee owns the value from then on (it is its local). The
//! callee drops its locals before it writes in-memory results, since a
//! result's destination may be the slot an argument came in.
//! On failure the returns are zeros and `ctx` holds the status.

#![forbid(unsafe_code)]

mod aptos;
mod checked;
pub(crate) mod closure;
mod cold;
mod counters;
mod fastloop;
mod fastnative;
mod global;
mod headers;
mod index;
mod metered;
mod rotate;
mod vecops;
mod wide;

use crate::cfg::basic_blocks;
use crate::error::{CompileError, CompileResult};
use crate::gas::{segments, CostTable};
use crate::helpers::{op, status, GasAccess, HelperId};
use crate::kind::{Kind, KindIr};
use crate::ty::Ty;
use crate::types::{datatype_id, sig_types, to_type};
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, BlockCall, FuncRef, Function, InstBuilder, InstructionData, JumpTableData,
    MemFlagsData, Opcode, Signature, StackSlot, StackSlotData, StackSlotKind, Type, Value, ValueDef,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use movejit_format::{Bytecode, FunctionHandleIndex, SignatureToken, StatusCode, StatusFlavour, StructDefinitionIndex};
use movejit_runtime::flat::{ExecContext, FlatLayout, Shape};
use movejit_runtime::gas::aptos::AptosPricing;
use movejit_runtime::Type as RType;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Default of `JitConfig::unchecked_copy_max_len`: functions of at most
/// this many instructions get a fast copy without operand-stack and
/// call-depth checks (`lower_function`): small functions are where a
/// call's fixed costs show, and the copy doubles their code.
pub const UNCHECKED_COPY_MAX_LEN: usize = 96;

/// The status word compiled code records for Sui's `VARIANT_TAG_MISMATCH`,
/// which has no Aptos number (the context holds Aptos numbers); the engine
/// maps it back.
pub const SUI_VARIANT_TAG_MISMATCH: u64 = 0x7fff_0fbe;

/// Offsets of the execution context's fields.
mod off {
    use super::ExecContext;
    const O: movejit_runtime::flat::context::ContextOffsets = ExecContext::OFFSETS;
    pub const STATUS: i32 = O.status as i32;
    pub const ABORT_CODE: i32 = O.abort_code as i32;
    pub const MODULE: i32 = O.module as i32;
    pub const FUNCTION: i32 = O.function as i32;
    pub const CODE_OFFSET: i32 = O.code_offset as i32;
    pub const FLAGS: i32 = O.flags as i32;
    pub const DEPTH: i32 = O.depth as i32;
    pub const MAX_DEPTH: i32 = O.max_depth as i32;
    pub const STACK_BASE: i32 = O.stack_base as i32;
    pub const MAX_STACK: i32 = O.max_stack as i32;
    pub const GAS_LEFT: i32 = O.gas_left as i32;
    pub const STACK_LIMIT: i32 = O.stack_limit as i32;
    pub const GLOBAL_REST: i32 = O.global_rest as i32;
}
pub(crate) use cold::order_exits_after_branches;
pub(crate) use off::GAS_LEFT as CTX_GAS_LEFT;
pub(crate) use off::STATUS as CTX_STATUS;

/// Copies up to this many bytes inline; longer values go to `memmove`.
const INLINE_COPY: u32 = 128;

/// Where a function passing the gas left in registers (`GasAbi::Registers`)
/// takes it: the parameter after the context; and gives it back: the result
/// after the failure flag (jit-abi.md section 2, calling convention).
pub const GAS_PARAM: usize = 1;
pub const GAS_RESULT: usize = 1;

/// How a compiled function of a metered engine receives the gas left and
/// gives it back to its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GasAbi {
    /// Unmetered: no gas.
    Unmetered,
    /// Through `ExecContext::gas_left`: read at entry, written before it
    /// returns (functions without calls: measured, a register parameter
    /// costs queens' leaves more spills than the two memory accesses).
    Context,
    /// In registers (`GAS_PARAM`, `GAS_RESULT`): functions that call.
    Registers,
}

impl GasAbi {
    /// The convention of a function with `code` in a `metered` engine.
    pub fn of(metered: bool, code: &[Bytecode]) -> Self {
        let calls =
            code.iter().any(|i| matches!(i, Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_)));
        match (metered, calls) {
            (false, _) => GasAbi::Unmetered,
            (true, false) => GasAbi::Context,
            (true, true) => GasAbi::Registers,
        }
    }

    pub fn in_registers(self) -> bool {
        self == GasAbi::Registers
    }
}

/// The signature of a compiled Move function (see the module docs); with
/// `GasAbi::Registers` it takes and returns the gas left (`GAS_PARAM`,
/// `GAS_RESULT`).
pub fn move_signature(call_conv: CallConv, ptr: Type, params: &[Ty], rets: &[Ty], gas: GasAbi) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(ptr));
    if gas.in_registers() {
        sig.params.push(AbiParam::new(types::I64));
    }
    for t in params {
        sig.params.extend(t.lanes(ptr).into_iter().map(AbiParam::new));
    }
    for t in rets {
        if matches!(t, Ty::M(_)) {
            sig.params.push(AbiParam::new(ptr));
        }
    }
    sig.returns.push(AbiParam::new(types::I8));
    if gas.in_registers() {
        sig.returns.push(AbiParam::new(types::I64));
    }
    for t in rets {
        if !matches!(t, Ty::M(_)) {
            sig.returns.extend(t.lanes(ptr).into_iter().map(AbiParam::new));
        }
    }
    sig
}

/// A callee as the lowering needs it: a compiled function, or a native
/// call site of the engine (`call_native`).
pub struct CalleeRef {
    pub func: Option<FuncRef>,
    pub native: Option<u64>,
    pub params: Vec<Ty>,
    pub rets: Vec<Ty>,
    /// A Move callee: the type nodes of each of its locals, parameters
    /// first (Aptos charges building them when its frame is made).
    pub local_nodes: Vec<u64>,
    /// Calling it loads no module Aptos charges for (the caller's own, or
    /// one at a special address).
    pub module_free: bool,
    /// The callee's module (set by the engine for natives too).
    pub module: Option<movejit_runtime::ModuleId>,
    /// A native callee's function definition index in its module (where
    /// Aptos locates running out of gas in it).
    pub native_def: Option<u16>,
    /// How a Move callee takes the gas left.
    pub gas: GasAbi,
}

impl CalleeRef {
    /// A native callee at `site` with its parameter and result types.
    pub fn native(site: u64, (params, rets): (Vec<Ty>, Vec<Ty>)) -> Self {
        CalleeRef {
            func: None,
            native: Some(site),
            params,
            rets,
            local_nodes: Vec::new(),
            module_free: true,
            module: None,
            native_def: None,
            gas: GasAbi::Unmetered,
        }
    }
}

/// What the lowering asks of the engine: resolve and declare callees,
/// helpers, layouts and constants.
pub trait LowerEnv {
    fn pointer_type(&self) -> Type;
    fn frontend_config(&self) -> TargetFrontendConfig;
    /// Declares the function a call instruction names (queuing it for
    /// compilation) and imports it into `func`.
    fn callee(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<RType>,
        func: &mut Function,
    ) -> CompileResult<CalleeRef>;
    /// Imports the runtime helper `name` into `func`.
    fn helper(&mut self, h: HelperId, func: &mut Function) -> CompileResult<FuncRef>;
    /// The cached flat layout of `ty` (kept alive as long as the code).
    fn layout(&mut self, ty: &RType) -> CompileResult<Arc<FlatLayout>>;
    /// The interpreter's value depth of `ty` and its limit.
    fn value_depth(&self, ty: &RType) -> CompileResult<(usize, usize)>;
    /// A constant value deserialized once, kept alive as long as the code:
    /// its address.
    fn constant(&mut self, layout: &Arc<FlatLayout>, bytes: &[u8]) -> CompileResult<u64>;
    /// An error kept alive as long as the code (for `fail_with`): its
    /// address.
    fn error_constant(&mut self, e: movejit_runtime::VmError) -> u64;
    /// Registers a `PackClosure` site naming `handle<type_args>` of module
    /// `module_idx` (`lower/closure.rs`); the target compiles with the caller.
    fn pack_site(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<RType>,
        mask: u64,
    ) -> CompileResult<closure::PackInfo> {
        let _ = (module_idx, handle, type_args, mask);
        Err(unsupported("closures"))
    }
    /// Keeps an Aptos call site (`lower/metered.rs` `charge_call_site`)
    /// alive as long as the code; its address.
    fn aptos_call_site(&mut self, site: movejit_runtime::gas::aptos::AptosCallSite) -> CompileResult<u64> {
        let _ = site;
        Err(unsupported("Aptos call sites"))
    }
    /// Registers a `CallClosure` site; its address.
    fn call_site(&mut self, spec: closure::CallSpec) -> CompileResult<u64> {
        let _ = spec;
        Err(unsupported("closures"))
    }
    /// The interned type id (`movejit_runtime::intern::TypeId`) the
    /// global-storage shims know resource type `ty` by, as an immediate
    /// (`lower/global.rs`); engines without session storage refuse.
    fn global_type(&mut self, ty: &RType) -> CompileResult<u64> {
        Err(unsupported(format!("global storage ({ty})")))
    }
    /// Declares the checking copy of the function being lowered (same
    /// signature as `func`, lowered with `Target::split` false and defined
    /// by the engine next to it) and imports it into `func`; engines that
    /// do not split refuse.
    fn checking_copy(&mut self, func: &mut Function) -> CompileResult<FuncRef> {
        let _ = func;
        Err(unsupported("checking copies"))
    }
}

/// The function instantiation to lower.
pub struct Target<'a> {
    pub module: &'a movejit_loader::LoadedModule,
    pub module_idx: u32,
    pub fdef: u16,
    pub type_args: &'a [RType],
    pub params: Vec<Ty>,
    pub rets: Vec<Ty>,
    pub cost: Option<&'a CostTable>,
    /// Charge Aptos's schedule (with `cost` its unit part, all zeros):
    /// instruction sites priced by `InstructionCosts::site_cost`.
    pub aptos: Option<&'a AptosPricing>,
    pub max_code_len: usize,
    /// Lowering stops (`Unsupported`) once the function has more IR
    /// instructions: a function too big to compile costs no more than that.
    pub max_ir_insts: usize,
    /// Bytes an `AbortMsg` message may have.
    pub max_abort_message: usize,
    /// Lowered for the baseline tier (`JitConfig::baseline_above`).
    pub baseline: bool,
    /// May be lowered as a fast copy handing frames near a limit to a
    /// checking copy (`LowerEnv::checking_copy`); false when lowering that
    /// checking copy.
    pub split: bool,
    /// Only functions of at most this many instructions are split
    /// (`JitConfig::unchecked_copy_max_len`).
    pub unchecked_copy_max_len: usize,
    /// How the function takes and gives back the gas left.
    pub gas: GasAbi,
}

/// An integer instruction a cold failure site hands back to the runtime's
/// helper for its error: the helper code (as the shims take it) and the
/// operands.
#[derive(Clone, Copy, Debug)]
enum Redo {
    /// `int_binop`: `kind | op << 4`, lhs, rhs.
    Bin(u8, Val, Val),
    /// `int_shift`: `kind | dir << 4`, value, amount (u8).
    Shift(u8, Val, Value),
    /// `int_cast`: `source kind | target kind << 4`, value.
    Cast(u8, Val),
    /// `int_negate`: kind, value.
    Negate(u8, Val),
}

/// Integer failure sites of one helper share a redo block from this many
/// instructions that may have one: below it the block costs more code
/// than the calls it replaces.
const REDO_SHARE_MIN: usize = 2;

/// Per integer helper ([`Redo::HELPERS`]): the instructions of `code` that
/// may fail through it (an upper bound of its failure sites).
fn redo_sites(code: &[Bytecode]) -> [usize; 4] {
    let mut n = [0; 4];
    for ins in code {
        let h = match ins {
            Bytecode::Add | Bytecode::Sub | Bytecode::Mul | Bytecode::Div | Bytecode::Mod => 0,
            Bytecode::Shl | Bytecode::Shr => 1,
            Bytecode::Negate => 3,
            _ if Kind::cast_target(ins).is_some() => 2,
            _ => continue,
        };
        n[h] += 1;
    }
    n
}

impl Redo {
    /// The integer helpers, in the order of `redo_sites`.
    const HELPERS: [fn() -> HelperId; 4] =
        [HelperId::int_binop, HelperId::int_shift, HelperId::int_cast, HelperId::int_negate];

    fn helper(&self) -> HelperId {
        match self {
            Redo::Bin(..) => HelperId::int_binop(),
            Redo::Shift(..) => HelperId::int_shift(),
            Redo::Cast(..) => HelperId::int_cast(),
            Redo::Negate(..) => HelperId::int_negate(),
        }
    }
}

/// A value on the abstract operand stack.
#[derive(Clone, Copy, Debug)]
enum Val {
    One(Value),
    Wide([Value; 4]),
    /// The address of an in-memory value (its operand slot).
    Mem(Value),
}

impl Val {
    fn lanes(&self) -> Vec<Value> {
        match self {
            Val::One(v) | Val::Mem(v) => vec![*v],
            Val::Wide(w) => w.to_vec(),
        }
    }
    fn one(&self) -> CompileResult<Value> {
        match self {
            Val::One(v) => Ok(*v),
            _ => Err(malformed("expected a narrow value")),
        }
    }
    fn wide(&self) -> CompileResult<[Value; 4]> {
        match self {
            Val::Wide(w) => Ok(*w),
            _ => Err(malformed("expected a 256-bit value")),
        }
    }
    fn addr(&self) -> CompileResult<Value> {
        match self {
            Val::Mem(v) => Ok(*v),
            _ => Err(malformed("expected a value in memory")),
        }
    }
    /// Rebuilds a value of `ty` from its lanes.
    fn from_lanes(ty: &Ty, lanes: &[Value]) -> Val {
        match ty {
            Ty::S(k) if k.is_wide() => Val::Wide([lanes[0], lanes[1], lanes[2], lanes[3]]),
            Ty::M(_) => Val::Mem(lanes[0]),
            _ => Val::One(lanes[0]),
        }
    }
}

/// Where a local lives.
#[derive(Clone)]
enum Local {
    /// A scalar never borrowed: SSA variables (its lanes).
    Var(Kind, Vec<Variable>),
    /// A reference: one pointer variable.
    Ref(Arc<FlatLayout>, Variable),
    /// A frame slot (or, for an in-memory parameter, the caller's slot).
    Mem(Arc<FlatLayout>, Value),
}

fn malformed(msg: impl Into<String>) -> CompileError {
    CompileError::Malformed(msg.into())
}

fn unsupported(msg: impl Into<String>) -> CompileError {
    CompileError::Unsupported(msg.into())
}

fn status_number(s: StatusCode) -> i64 {
    s.number(StatusFlavour::Aptos) as i64
}

/// Returns "failed" from a compiled function: the flag set and every
/// scalar or reference result lane zero (the calling convention's failure
/// return, shared by lowered code and the engine's stubs).
pub(crate) fn return_failure(b: &mut FunctionBuilder<'_>, rets: &[Ty], ptr: Type, gas: GasAbi) {
    let mut vals = vec![b.ins().iconst(types::I8, 1)];
    if gas.in_registers() {
        // A failure's gas left is the context's (`GAS_RESULT` unused).
        vals.push(b.ins().iconst(types::I64, 0));
    }
    for t in rets.iter().filter(|t| !matches!(t, Ty::M(_))) {
        for ty in t.lanes(ptr) {
            let z = if ty == types::I128 {
                let z = b.ins().iconst(types::I64, 0);
                b.ins().uextend(types::I128, z)
            } else {
                b.ins().iconst(ty, 0)
            };
            vals.push(z);
        }
    }
    b.ins().return_(&vals);
}

/// Bytes of the scratch slot helpers read and write: operands at 0 and 32,
/// a result at 64. A failing integer instruction's shift amount and helper
/// code (read by its function's shared redo block before the call, so the
/// result may overwrite them) are staged in the result's bytes, at
/// `REDO_AMOUNT` and `REDO_CODE`: a bigger slot would lengthen every
/// frame-relative access past 127 bytes.
const SCRATCH_BYTES: u32 = 96;
const REDO_AMOUNT: i32 = 80;
const REDO_CODE: i32 = 88;

/// Bytes of the failure path's frame slot and its fields.
const FAIL_SLOT_BYTES: u32 = 16;
const FAIL_STATUS: i32 = 0;
const FAIL_OFFSET: i32 = 4;
const FAIL_REFUND: i32 = 8;
/// The gas resolver's operands, in the same slot (read before the resolver
/// jumps to the failure path).
const RESOLVE_FIRST: i32 = 0;
const RESOLVE_GAS: i32 = 8;

/// How gas is charged for the instructions being lowered.
#[derive(Clone)]
enum Mode {
    Unmetered,
    /// The whole segment was charged up front; a failure at instruction `i`
    /// refunds the cost of the segment's instructions after `i` (a constant
    /// set when the segment is lowered: `lower/metered.rs`).
    Fast,
}

fn align_shift(align: u32) -> u8 {
    align.max(1).trailing_zeros() as u8
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
    let code = fdef.code.as_ref().ok_or_else(|| unsupported("native function"))?;
    if code.code.len() > target.max_code_len {
        return Err(unsupported(format!(
            "function of {} instructions (limit {})",
            code.code.len(),
            target.max_code_len
        )));
    }
    let local_sig = target
        .module
        .signatures
        .get(code.locals.idx())
        .ok_or_else(|| malformed("locals signature index out of range"))?;
    let mut local_layouts: Vec<Option<Arc<FlatLayout>>> = vec![None; target.params.len()];
    for tok in &local_sig.0 {
        let t = to_type(target.module, tok, target.type_args)?;
        let l = env.layout(&t)?;
        local_layouts.push(Some(l));
    }
    if local_layouts.len() > 256 {
        return Err(malformed("more than 256 locals"));
    }
    let mut borrowed = vec![false; local_layouts.len()];
    for ins in &code.code {
        if let Bytecode::ImmBorrowLoc(l) | Bytecode::MutBorrowLoc(l) = ins {
            if let Some(b) = borrowed.get_mut(*l as usize) {
                *b = true;
            }
        }
    }
    let blocks = basic_blocks(code)?;

    let ptr = env.pointer_type();
    let frontend = env.frontend_config();
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let ctx = b.block_params(entry)[0];
    let metered = target.cost.is_some();
    // The gas left the caller passed in a register (`GAS_PARAM`).
    let in_registers = target.gas.in_registers();
    let gas_in = in_registers.then(|| b.block_params(entry)[GAS_PARAM]);
    let params: Vec<Value> = b.block_params(entry)[1 + usize::from(in_registers)..].to_vec();

    // The failure path takes its operands in a frame slot, not as block
    // parameters: one parameter fed by thousands of sites costs both
    // register allocators quadratic time (issue 16).
    let fail = b.create_block();
    b.set_cold_block(fail);
    let fail_slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, FAIL_SLOT_BYTES, 3));
    let fail_early = b.create_block();
    b.set_cold_block(fail_early);
    let propagate = b.create_block();
    b.set_cold_block(propagate);

    let scratch = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, SCRATCH_BYTES, 4));

    let mut lw = Lowerer {
        b,
        env,
        target,
        code: &code.code,
        jump_tables: &code.jump_tables,
        ptr,
        frontend,
        ctx,
        locals: Vec::new(),
        heap_locals: Vec::new(),
        frame_drops: None,
        ret_ptrs: Vec::new(),
        stack: Vec::new(),
        watermark: 0,
        seg: None,
        fast_gas: false,
        fast_push: None,
        fast_prepaid: None,
        fast_meter: None,
        block_totals: HashMap::new(),
        last_segment_total: 0,
        counters: counters::Counters::new(code, &blocks),
        block_start: 0,
        rotations: HashMap::new(),
        prechecked: HashMap::new(),
        bypass: HashMap::new(),
        copying: None,
        untested_failure: None,
        in_flight: Vec::new(),
        drop_error: None,
        drop_blocks: HashMap::new(),
        status_blocks: Vec::new(),
        gas_events: Vec::new(),
        gas_resolver: None,
        gas_var: None,
        gas_param: None,
        gas_defs: 0,
        gas_floors: Vec::new(),
        gas_tests: Vec::new(),
        room: None,
        checked_height: 0,
        depth_checked: false,
        base: None,
        depth: None,
        max_depth: None,
        block_of: HashMap::new(),
        fail,
        fail_slot,
        fail_early,
        propagate,
        scratch,
        redo_blocks: Vec::new(),
        redo_sites: redo_sites(&code.code),
        opslots: HashMap::new(),
        mode: Mode::Unmetered,
        helpers: HashMap::new(),
        callees: HashMap::new(),
        pinned_locals: headers::pinned_locals(&code.code, &target.params, local_layouts.len()),
        pinned_refs: HashSet::new(),
        headers_move: false,
        fused_sub: None,
        closure_copy: None,
    };
    lw.prologue(&local_layouts, &borrowed, &params, gas_in)?;
    lw.track_frame_drops(code)?;
    // The body starts past a dispatch block, filled once the copies exist.
    let dispatch = lw.b.create_block();
    lw.b.ins().jump(dispatch, &[]);
    // A loop without calls already checks its heights once per entry
    // (watermarks, prechecks): splitting gains it nothing, and measured
    // costs sieve 10% by a worse register assignment of its loop.
    let loops = code.code.iter().enumerate().any(|(pc, ins)| ins.branch_target().is_some_and(|t| t as usize <= pc));
    let calls = lw.depth.is_some();
    let may_split =
        target.split && !target.baseline && code.code.len() <= target.unchecked_copy_max_len && (calls || !loops);
    // A function that may split is lowered once, as the fast copy: its
    // lowering records the checks it leaves out (`checked_height`,
    // `depth_checked`), which decide the split. Only when it does not split
    // is the checking copy lowered after it (the fast copy is then left
    // unreachable).
    let fast = if may_split {
        let (room, max_depth) = (lw.room.take(), lw.max_depth.take());
        let fast = lw.lower_copy(code, &blocks, metered)?;
        lw.room = room;
        lw.max_depth = max_depth;
        Some(fast)
    } else {
        None
    };
    let height = lw.checked_height;
    let depth_checked = lw.depth_checked;
    let split = fast.is_some()
        && (depth_checked || (height > 0 && !loops))
        // The fast copy and the dispatch stay within the IR limit.
        && lw.b.func.dfg.num_insts() + 16 <= target.max_ir_insts;
    let checking_fn = if split { lw.env.checking_copy(lw.b.func).ok() } else { None };
    match (lw.room, checking_fn, fast) {
        // Small functions (metered too) become a fast copy without the checks
        // whose outcome is fixed per frame: operand-stack overflow (the
        // room is fixed, so a frame whose room holds the highest height any
        // check tests passes them all) and call depth (the depth is fixed,
        // so a frame below the limit passes every call's check). A frame
        // near either limit calls the checking copy, a function of its own
        // (so its registers cost the fast copy nothing), which fails
        // exactly where the interpreter does.
        (Some(room), Some(checking_fn), Some(fast)) => {
            let near = lw.b.create_block();
            lw.b.set_cold_block(near);
            lw.b.switch_to_block(dispatch);
            if height > 0 {
                let short = lw.b.ins().icmp_imm_s(IntCC::SignedLessThan, room, height as i64);
                let next = lw.b.create_block();
                lw.b.ins().brif(short, near, &[], next, &[]);
                lw.b.switch_to_block(next);
            }
            match lw.depth.zip(lw.max_depth) {
                Some((depth, max)) if depth_checked => {
                    let deep = lw.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, depth, max);
                    lw.b.ins().brif(deep, near, &[], fast, &[]);
                }
                _ => {
                    lw.b.ins().jump(fast, &[]);
                }
            }
            lw.b.switch_to_block(near);
            let args = lw.b.func.dfg.block_params(entry).to_vec();
            let call = lw.b.ins().call(checking_fn, &args);
            let results = lw.b.inst_results(call).to_vec();
            lw.b.ins().return_(&results);
        }
        _ => {
            let checking = lw.lower_copy(code, &blocks, metered)?;
            lw.b.switch_to_block(dispatch);
            lw.b.ins().jump(checking, &[]);
        }
    }
    // Once the whole body is lowered: a `WriteRef` anywhere unpins them all.
    lw.unpin_headers();
    lw.epilogues(metered)?;
    lw.fill_redo_blocks()?;
    lw.fill_status_blocks();
    lw.finish_gas()?;
    if let Some(e) = lw.drop_error.take() {
        return Err(e);
    }
    lw.b.seal_all_blocks();
    lw.fold_gas_floors();
    lw.b.finalize(frontend);
    Ok(())
}

struct Lowerer<'a, 'f> {
    b: FunctionBuilder<'f>,
    env: &'a mut dyn LowerEnv,
    target: &'a Target<'a>,
    code: &'a [Bytecode],
    jump_tables: &'a [movejit_format::VariantJumpTable],
    ptr: Type,
    frontend: TargetFrontendConfig,
    ctx: Value,
    locals: Vec<Local>,
    /// Locals owning heap memory: dropped at `Ret` and on failure.
    heap_locals: Vec<(Arc<FlatLayout>, Value)>,
    /// Under Aptos's schedule: what each `ret` releases of the locals
    /// with a fixed heap part (`lower/aptos.rs`).
    frame_drops: Option<aptos::FrameDrops>,
    /// Destinations of the in-memory results.
    ret_ptrs: Vec<Value>,
    stack: Vec<(Ty, Val)>,
    /// Highest operand-stack height already checked in the current block.
    watermark: usize,
    /// The gas segment being lowered (metered code, `lower/metered.rs`).
    seg: Option<metered::Segment>,
    /// Lowering a loop's fast copy: no out-of-gas or stack-room tests
    /// (`lower/fastloop.rs`), and the highest push height left untested.
    fast_gas: bool,
    fast_push: Option<usize>,
    /// In a fast copy's block: the gas variable as its successors along
    /// the iteration's longest path take it (prepaid at the dispatch),
    /// restored before the block's branch (`lower/fastloop.rs`).
    fast_prepaid: Option<Value>,
    /// In a fast copy: the meter's address (`ExecContext::aptos_meter`),
    /// loaded once at the loop's dispatch, and whether the copy fed it
    /// (`lower/fastloop.rs`).
    fast_meter: Option<(Variable, bool)>,
    /// The charge of each one-segment block of the main pass.
    block_totals: HashMap<usize, u64>,
    /// The charge of the segment lowered last.
    last_segment_total: u64,
    /// Loop counters whose `± 1` cannot wrap (`lower/counters.rs`).
    counters: counters::Counters,
    /// The start of the block being lowered.
    block_start: usize,
    /// Back edges lowered as a copy of their loop's test
    /// (`lower/rotate.rs`): branch offset -> the test block.
    rotations: HashMap<usize, (usize, usize)>,
    /// Loop bodies whose leading pushes are checked on entry from outside
    /// the loop only: body start -> (the block past those checks, how many
    /// leading pushes).
    prechecked: HashMap<usize, (Block, usize)>,
    /// Per rotated back edge (branch offset): the body its test copy enters
    /// past the body's checks, which already passed in this frame.
    bypass: HashMap<usize, usize>,
    /// While lowering a test copy: the body it may enter past its checks.
    copying: Option<usize>,
    /// A failure site lowered without a gas test before it (refused).
    untested_failure: Option<usize>,
    /// Owned values the current instruction has taken off the operand
    /// stack and not yet handed over (a call's arguments before the call):
    /// a failure of the instruction drops them, as the interpreter does.
    in_flight: Vec<(Arc<FlatLayout>, Value)>,
    /// An error met while lowering a failure site's drops (reported when
    /// the function is finished).
    drop_error: Option<CompileError>,
    /// Cold blocks dropping one set of owned operands, then jumping on:
    /// (where they jump, what they drop) -> the block, shared by every
    /// failure site leaving with that set.
    drop_blocks: HashMap<(Block, Vec<(usize, DropAt)>), Block>,
    /// Per constant failure status: the cold block storing it and jumping
    /// to the failure path, shared by the sites failing with it (filled at
    /// the end, [`Lowerer::fill_status_blocks`]).
    status_blocks: Vec<(i64, Block)>,
    /// The gas resolver's event table (`lower/metered.rs`).
    gas_events: Vec<u64>,
    /// The shared block resolving where a segment fails.
    gas_resolver: Option<Block>,
    /// When metered: the gas left, kept in a register between calls (the
    /// context's `gas_left` is written before every call out that reads it,
    /// jump to the failure path and `Context` return, and re-read after
    /// each such call; `Registers` callees and returns pass it as a value).
    gas_var: Option<Variable>,
    /// `GasAbi::Registers`: the gas left the caller passed (`GAS_PARAM`).
    gas_param: Option<Value>,
    /// How many times the gas left was redefined (a segment that saw no
    /// redefinition but its own charge may record a floor).
    gas_defs: u32,
    /// Segments whose last test settled their whole charge and left the
    /// gas untouched since it (gas left, gas on entry, charge), and the
    /// out-of-gas tests (compare, gas tested, threshold), for
    /// `fold_gas_floors` (`lower/metered.rs`).
    gas_floors: Vec<(Value, Value, u64)>,
    gas_tests: Vec<(cranelift_codegen::ir::Inst, Value, u64)>,
    /// `max_stack - stack_base` at entry: pushes to this height overflow.
    room: Option<Value>,
    /// The highest operand-stack height an overflow check tests, plus one:
    /// a frame whose room is at least this passes every check.
    checked_height: usize,
    /// Whether a call's depth check was lowered.
    depth_checked: bool,
    base: Option<Value>,
    depth: Option<Value>,
    max_depth: Option<Value>,
    block_of: HashMap<usize, Block>,
    fail: Block,
    /// The failure path's operands (`FAIL_*` offsets).
    fail_slot: StackSlot,
    fail_early: Block,
    propagate: Block,
    scratch: StackSlot,
    /// Per integer helper: the cold block shared by the arithmetic failure
    /// sites that re-run their instruction through it (filled at the end,
    /// [`Lowerer::fill_redo_blocks`]).
    redo_blocks: Vec<(HelperId, Block)>,
    /// Per integer helper ([`Redo::HELPERS`]): how many of the function's
    /// instructions may re-run through it (`redo_sites`).
    redo_sites: [usize; 4],
    /// Operand slots by (height, size, alignment).
    opslots: HashMap<(usize, u32, u32), StackSlot>,
    mode: Mode,
    helpers: HashMap<HelperId, FuncRef>,
    callees: HashMap<(FunctionHandleIndex, Vec<RType>), std::rc::Rc<CalleeRef>>,
    /// Per local: a vector reference parameter whose header is pinned for
    /// the frame (`lower/headers.rs`).
    pinned_locals: Vec<bool>,
    /// References read from those locals.
    pinned_refs: HashSet<Value>,
    /// Set by a `WriteRef` of an in-memory value: no header is pinned.
    headers_move: bool,
    /// A `sub` whose wrap test the vector borrow after it makes
    /// (`lower/index.rs`).
    fused_sub: Option<index::FusedSub>,
    /// Under Aptos's schedule, a closure's `copy_loc` already charged and
    /// looked up for the `CallClosure` after it (`lower/closure.rs`).
    closure_copy: Option<closure::ChargedCopy>,
}

impl Lowerer<'_, '_> {
    fn mem() -> MemFlagsData {
        MemFlagsData::trusted()
    }

    /// Flags for value memory, which may be unaligned (addresses, signers).
    fn vmem() -> MemFlagsData {
        MemFlagsData::new().with_notrap()
    }

    fn load_ctx(&mut self, ty: Type, offset: i32) -> Value {
        self.b.ins().load(ty, Self::mem(), self.ctx, offset)
    }

    fn store_ctx(&mut self, v: Value, offset: i32) {
        self.b.ins().store(Self::mem(), v, self.ctx, offset);
    }

    fn new_slot(&mut self, size: u32, align: u32) -> StackSlot {
        self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size.max(1), align_shift(align)))
    }

    /// The address of the operand slot for a value of `l` at height `h`.
    fn opslot(&mut self, h: usize, l: &FlatLayout) -> Value {
        let key = (h, l.size, l.align);
        let slot = match self.opslots.get(&key) {
            Some(s) => *s,
            None => {
                let s = self.new_slot(l.size, l.align);
                self.opslots.insert(key, s);
                s
            }
        };
        self.b.ins().stack_addr(self.ptr, slot, 0)
    }

    fn prologue(
        &mut self,
        local_layouts: &[Option<Arc<FlatLayout>>],
        borrowed: &[bool],
        params: &[Value],
        gas_in: Option<Value>,
    ) -> CompileResult<()> {
        // Host stack guard: frames start above `ctx.stack_limit`.
        let sp = self.b.ins().get_stack_pointer(self.ptr);
        let limit = self.load_ctx(self.ptr, off::STACK_LIMIT);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, limit);
        let cont = self.b.create_block();
        self.gas_param = gas_in;
        self.b.ins().brif(low, self.fail_early, &[], cont, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);

        let base = self.load_ctx(types::I64, off::STACK_BASE);
        let max = self.load_ctx(types::I64, off::MAX_STACK);
        let room = self.b.ins().isub(max, base);
        self.base = Some(base);
        self.room = Some(room);
        // Depth: frames active when this one started, and the limit; both
        // are fixed for the frame's lifetime (callees restore `depth`).
        // Only calls of compiled code read them (`compiled_call`).
        let calls = self
            .code
            .iter()
            .any(|i| matches!(i, Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_)));
        if calls {
            self.depth = Some(self.load_ctx(types::I64, off::DEPTH));
            self.max_depth = Some(self.load_ctx(types::I64, off::MAX_DEPTH));
        }
        if self.target.cost.is_some() {
            let var = self.b.declare_var(types::I64);
            let g = match gas_in {
                Some(g) => g,
                None => self.load_ctx(types::I64, off::GAS_LEFT),
            };
            self.b.def_var(var, g);
            self.gas_var = Some(var);
        }

        let nparams = self.target.params.len();
        let mut pi = 0;
        let next_param = |pi: &mut usize| -> CompileResult<Value> {
            let v = *params.get(*pi).ok_or_else(|| malformed("parameter count"))?;
            *pi += 1;
            Ok(v)
        };
        for (i, ll) in local_layouts.iter().enumerate() {
            let is_param = i < nparams;
            let ty = match ll {
                Some(l) => Ty::of(l),
                None => self.target.params[i].clone(),
            };
            let local = match &ty {
                Ty::S(k) if !borrowed[i] => {
                    let vars: Vec<Variable> = k.lanes().iter().map(|t| self.b.declare_var(*t)).collect();
                    for (lane, var) in vars.iter().enumerate() {
                        // Move locals are written before they are read
                        // (verifier); a zero keeps the SSA construction total.
                        let v = if is_param { next_param(&mut pi)? } else { self.iconst_ty(k.lanes()[lane], 0) };
                        self.b.def_var(*var, v);
                    }
                    Local::Var(*k, vars)
                }
                Ty::S(k) => {
                    let l = scalar_layout(*k);
                    let slot = self.new_slot(l.size, l.align);
                    let addr = self.b.ins().stack_addr(self.ptr, slot, 0);
                    if is_param {
                        let lanes: Vec<Value> =
                            (0..k.lanes().len()).map(|_| next_param(&mut pi)).collect::<CompileResult<_>>()?;
                        let v = Val::from_lanes(&ty, &lanes);
                        self.store_scalar(*k, &v, addr, 0);
                    }
                    Local::Mem(l, addr)
                }
                Ty::R(t) => {
                    let var = self.b.declare_var(self.ptr);
                    let v = if is_param { next_param(&mut pi)? } else { self.b.ins().iconst(self.ptr, 0) };
                    self.b.def_var(var, v);
                    Local::Ref(t.clone(), var)
                }
                Ty::M(l) => {
                    let addr = if is_param {
                        next_param(&mut pi)?
                    } else {
                        let slot = self.new_slot(l.size, l.align);
                        let a = self.b.ins().stack_addr(self.ptr, slot, 0);
                        if l.owns_heap {
                            self.zero_mem(a, l.size);
                        }
                        a
                    };
                    if l.owns_heap {
                        self.heap_locals.push((l.clone(), addr));
                    }
                    Local::Mem(l.clone(), addr)
                }
            };
            self.locals.push(local);
        }
        for t in &self.target.rets {
            if matches!(t, Ty::M(_)) {
                let p = next_param(&mut pi)?;
                self.ret_ptrs.push(p);
            }
        }
        Ok(())
    }

    fn epilogues(&mut self, metered: bool) -> CompileResult<()> {
        // Every way into these paths wrote the gas left to the context.
        self.gas_var = None;
        let rets = self.target.rets.clone();
        // fail (status, offset[, refund] in the fail slot): record the
        // error and return.
        self.b.switch_to_block(self.fail);
        let mut p = vec![
            self.b.ins().stack_load(self.ptr, types::I32, self.fail_slot, FAIL_STATUS),
            self.b.ins().stack_load(self.ptr, types::I32, self.fail_slot, FAIL_OFFSET),
        ];
        if metered {
            p.push(self.b.ins().stack_load(self.ptr, types::I64, self.fail_slot, FAIL_REFUND));
        }
        let given = self.b.ins().uextend(types::I64, p[0]);
        let recorded = self.load_ctx(types::I64, off::STATUS);
        let is_given = self.b.ins().icmp_imm_u(IntCC::NotEqual, p[0], 0);
        let status = self.b.ins().select(is_given, given, recorded);
        self.store_ctx(status, off::STATUS);
        let m = self.b.ins().iconst(types::I32, self.target.module_idx as i64);
        self.store_ctx(m, off::MODULE);
        let f = self.b.ins().iconst(types::I32, self.target.fdef as i64);
        self.store_ctx(f, off::FUNCTION);
        self.store_ctx(p[1], off::CODE_OFFSET);
        if metered {
            // Out of gas empties the meter; any other error refunds the
            // pre-charged cost of the instructions it skipped. Under
            // Aptos's schedule the gas left stays below zero by what the
            // charge that did not fit lacked: the interpreter's meter
            // settles that charge (OUT_OF_GAS or EXECUTION_LIMIT_REACHED).
            let g = self.load_ctx(types::I64, off::GAS_LEFT);
            let mut g = self.b.ins().iadd(g, p[2]);
            if self.target.aptos.is_none() {
                let oog = self.b.ins().icmp_imm_u(IntCC::Equal, status, status_number(StatusCode::OUT_OF_GAS));
                let zero = self.b.ins().iconst(types::I64, 0);
                g = self.b.ins().select(oog, zero, g);
            }
            self.store_ctx(g, off::GAS_LEFT);
        }
        self.drop_locals()?;
        self.error_return(&rets);
        // propagate: a callee failed and already recorded why.
        self.b.switch_to_block(self.propagate);
        if self.target.aptos.is_some() {
            self.locate_at_load();
        }
        self.drop_locals()?;
        self.error_return(&rets);
        // The host-stack guard fired before the locals were initialised.
        self.b.switch_to_block(self.fail_early);
        if let Some(g) = self.gas_param {
            // Nothing was charged yet: the gas left is what the caller passed.
            self.store_ctx(g, off::GAS_LEFT);
        }
        let st = self.b.ins().iconst(types::I64, status_number(StatusCode::EXECUTION_STACK_OVERFLOW));
        self.store_ctx(st, off::STATUS);
        let m = self.b.ins().iconst(types::I32, self.target.module_idx as i64);
        self.store_ctx(m, off::MODULE);
        let f = self.b.ins().iconst(types::I32, self.target.fdef as i64);
        self.store_ctx(f, off::FUNCTION);
        let z = self.b.ins().iconst(types::I32, 0);
        self.store_ctx(z, off::CODE_OFFSET);
        self.error_return(&rets);
        Ok(())
    }

    fn drop_locals(&mut self) -> CompileResult<()> {
        for (l, a) in self.heap_locals.clone() {
            self.drop_value(&l, a)?;
        }
        Ok(())
    }

    /// On a path leaving the function by failure: drops the owned values
    /// on the operand stack and in flight, which the interpreter's unwind
    /// drops with its operand stack (the shared failure path drops only the
    /// locals). A slot of a moved-out value is never on the stack, so
    /// nothing is dropped twice.
    fn drop_operands(&mut self) {
        let mut owned = owned_values(&self.stack);
        owned.extend(self.in_flight.iter().cloned());
        // Drops charge no gas: the helper calls leave the gas left where
        // the failure found it (in the register, or already in the context
        // when a callee failed).
        let gas_var = self.gas_var.take();
        for (l, a) in owned {
            if let Err(e) = self.drop_value(&l, a) {
                self.drop_error.get_or_insert(e);
            }
        }
        self.gas_var = gas_var;
    }

    /// Ends the current (cold) block of a path leaving the function by
    /// failure: drops the owned operands as [`drop_operands`](Self::drop_operands)
    /// does, then jumps to `target`. The drops are made by a cold block
    /// shared by every site with the same owned operands in the same slots,
    /// so a function's failure sites carry no drop code of their own.
    fn drop_operands_then(&mut self, target: Block) {
        let mut owned = owned_values(&self.stack);
        owned.extend(self.in_flight.iter().cloned());
        if owned.is_empty() {
            self.b.ins().jump(target, &[]);
            return;
        }
        let key: Option<Vec<(usize, DropAt)>> =
            owned.iter().map(|(l, a)| Some((Arc::as_ptr(l) as usize, self.drop_at(*a)?))).collect();
        let Some(key) = key else {
            // An address no other block can name: drops of its own.
            self.drop_operands();
            self.b.ins().jump(target, &[]);
            return;
        };
        let key = (target, key);
        if let Some(&shared) = self.drop_blocks.get(&key) {
            self.b.ins().jump(shared, &[]);
            return;
        }
        let shared = self.b.create_block();
        self.b.set_cold_block(shared);
        self.b.ins().jump(shared, &[]);
        self.b.switch_to_block(shared);
        // Sealed with the function: later sites jump here too. Drops charge
        // no gas, and the site wrote the gas left to the context.
        let gas_var = self.gas_var.take();
        for ((l, _), (_, at)) in owned.iter().zip(&key.1) {
            let addr = match *at {
                DropAt::Slot(slot, off) => self.b.ins().stack_addr(self.ptr, slot, off),
                DropAt::Param(v) => v,
            };
            if let Err(e) = self.drop_value(l, addr) {
                self.drop_error.get_or_insert(e);
            }
        }
        self.gas_var = gas_var;
        self.b.ins().jump(target, &[]);
        self.drop_blocks.insert(key, shared);
    }

    /// Where the owned value at `addr` lives, named so that any block can
    /// compute the address again: a frame slot, or a parameter of the
    /// entry block (`None`: neither).
    fn drop_at(&self, addr: Value) -> Option<DropAt> {
        let dfg = &self.b.func.dfg;
        let addr = dfg.resolve_aliases(addr);
        match dfg.value_def(addr) {
            ValueDef::Param(block, _) if dfg.value_def(self.ctx) == ValueDef::Param(block, 0) => {
                Some(DropAt::Param(addr))
            }
            ValueDef::Result(inst, 0) => match dfg.insts[inst] {
                InstructionData::StackAddr { opcode: Opcode::StackAddr, stack_slot, offset } => {
                    Some(DropAt::Slot(stack_slot, offset.into()))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a failure here has owned operands to drop.
    fn operands_own_heap(&self) -> bool {
        !self.in_flight.is_empty() || !owned_values(&self.stack).is_empty()
    }

    /// Branches to the shared propagate path when `failed` (a callee
    /// failed), through a cold block dropping the caller's owned operands
    /// when it has any.
    fn propagate_if(&mut self, failed: Value, cont: Block) {
        if !self.operands_own_heap() {
            self.b.ins().brif(failed, self.propagate, &[], cont, &[]);
            return;
        }
        let site = self.b.create_block();
        self.b.set_cold_block(site);
        self.b.ins().brif(failed, site, &[], cont, &[]);
        self.b.switch_to_block(site);
        self.b.seal_block(site);
        self.drop_operands_then(self.propagate);
    }

    fn error_return(&mut self, rets: &[Ty]) {
        return_failure(&mut self.b, rets, self.ptr, self.target.gas);
    }

    // ---- errors ----

    /// What a failure at `offset` refunds: the segment's cost after it
    /// (`None`: nothing, unmetered code).
    fn refund_at(&self, offset: usize) -> Option<usize> {
        match &self.mode {
            Mode::Fast => Some(offset),
            Mode::Unmetered => None,
        }
    }

    /// Branches to the failure path with `status` when `cond` is true.
    fn fail_if(&mut self, cond: Value, status: StatusCode, offset: usize) {
        let r = self.refund_at(offset);
        self.fail_if_with(cond, offset, r, |lw| lw.b.ins().iconst(types::I32, status_number(status)));
    }

    /// The inline bounds check of a vector borrow: the cold site calls the
    /// `vec_borrow` shim, which fails with the interpreter's error.
    fn vec_index_fail_if(
        &mut self,
        cond: Value,
        offset: usize,
        el: &Arc<FlatLayout>,
        vec: Value,
        idx: Value,
    ) -> CompileResult<()> {
        let f = self.helper_ref(HelperId::vec_borrow())?;
        let r = self.refund_at(offset);
        self.fail_if_with(cond, offset, r, |lw| lw.vec_index_status(f, el, vec, idx));
        Ok(())
    }

    /// At a failing vector borrow's cold site: the `vec_borrow` shim
    /// (`f`) records the interpreter's error; returns its status.
    fn vec_index_status(&mut self, f: FuncRef, el: &Arc<FlatLayout>, vec: Value, idx: Value) -> Value {
        let lp = self.layout_ptr(el);
        let out = self.slot_addr(64);
        self.b.ins().call(f, &[self.ctx, lp, vec, idx, out]);
        self.b.ins().iconst(types::I32, status_number(StatusCode::VECTOR_OPERATION_ERROR))
    }

    /// Branches to a cold per-site block when `cond` holds; that block
    /// computes the status (`status`; 0 when a helper recorded it) and
    /// jumps to the shared failure path, so the hot path carries no error
    /// constants.
    fn fail_if_with(
        &mut self,
        cond: Value,
        offset: usize,
        refund: Option<usize>,
        status: impl FnOnce(&mut Self) -> Value,
    ) {
        let cont = self.b.create_block();
        let site = self.b.create_block();
        // (The baseline tier orders it next to its test: `lower/cold.rs`.)
        self.b.set_cold_block(site);
        self.b.ins().brif(cond, site, &[], cont, &[]);
        self.b.switch_to_block(site);
        self.b.seal_block(site);
        self.fail_here(offset, refund, status);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Fills the current (cold) block with a failure at `offset`: the
    /// status `status` computes, the operands dropped, then the shared
    /// failure path.
    fn fail_here(&mut self, offset: usize, refund: Option<usize>, status: impl FnOnce(&mut Self) -> Value) {
        // Metered code: an earlier out-of-gas or overflow wins (lower/metered.rs).
        self.note_failure_site(offset);
        let st = status(self);
        self.gas_out();
        let offv = self.b.ins().iconst(types::I32, offset as i64);
        let kept = refund.and_then(|k| self.kept_through(k));
        // A constant status is stored by a block shared by its sites.
        let target = match self.iconst_of(st) {
            Some(c) => self.status_block(c as i32 as i64),
            None => {
                self.b.ins().stack_store(self.ptr, st, self.fail_slot, FAIL_STATUS);
                self.fail
            }
        };
        self.stage_fail_offset(offv, kept);
        self.drop_operands_then(target);
    }

    /// The shared block failing with constant status `status` (created at
    /// its first site).
    fn status_block(&mut self, status: i64) -> Block {
        if let Some(&(_, b)) = self.status_blocks.iter().find(|(s, _)| *s == status) {
            return b;
        }
        let b = self.b.create_block();
        self.b.set_cold_block(b);
        self.status_blocks.push((status, b));
        b
    }

    /// Fills each shared status block: the status stored in the fail slot
    /// (its sites stored the offset and refund), then the failure path.
    fn fill_status_blocks(&mut self) {
        for (status, block) in std::mem::take(&mut self.status_blocks) {
            self.b.switch_to_block(block);
            let st = self.b.ins().iconst(types::I32, status);
            self.b.ins().stack_store(self.ptr, st, self.fail_slot, FAIL_STATUS);
            self.b.ins().jump(self.fail, &[]);
        }
    }

    /// Jumps to the failure path with `status` (0: a helper recorded it),
    /// the code offset and, in metered code, the gas refund of a failure
    /// at instruction `refund` (`None`: nothing).
    fn jump_to_fail(&mut self, status: Value, offset: Value, refund: Option<usize>) {
        let kept = refund.and_then(|k| self.kept_through(k));
        self.jump_to_fail_keeping(status, offset, kept)
    }

    /// [`jump_to_fail`](Self::jump_to_fail) of a failure keeping `kept` of
    /// the segment's gas (`None`: none of it is refunded).
    fn jump_to_fail_keeping(&mut self, status: Value, offset: Value, kept: Option<u64>) {
        self.stage_fail(status, offset, kept);
        self.b.ins().jump(self.fail, &[]);
    }

    /// Stores the failure path's operands in its slot: `status`, the code
    /// `offset` and, in metered code, the refund of a failure keeping `kept`.
    fn stage_fail(&mut self, status: Value, offset: Value, kept: Option<u64>) {
        self.b.ins().stack_store(self.ptr, status, self.fail_slot, FAIL_STATUS);
        self.stage_fail_offset(offset, kept);
    }

    /// [`stage_fail`](Self::stage_fail) but the status.
    fn stage_fail_offset(&mut self, offset: Value, kept: Option<u64>) {
        self.b.ins().stack_store(self.ptr, offset, self.fail_slot, FAIL_OFFSET);
        if self.target.cost.is_some() {
            let r = self.refund_const(kept);
            self.b.ins().stack_store(self.ptr, r, self.fail_slot, FAIL_REFUND);
        }
    }

    /// Branches to the failure path with `ARITHMETIC_ERROR` when `cond`
    /// holds. The cold site re-runs the instruction through the runtime's
    /// integer helper (`redo`), which fails and records the interpreter's
    /// error, message included: one source for the message, no work on the
    /// hot path.
    fn arith_fail_if(&mut self, cond: Value, offset: usize, redo: Redo) -> CompileResult<()> {
        self.arith_fail_if_lazy(cond, offset, redo.helper(), |_| redo)
    }

    /// [`arith_fail_if`](Self::arith_fail_if) with the instruction (whose
    /// helper is `h`) built at the failure site: `redo` may compute
    /// operands there.
    fn arith_fail_if_lazy(
        &mut self,
        cond: Value,
        offset: usize,
        h: HelperId,
        redo: impl FnOnce(&mut Self) -> Redo,
    ) -> CompileResult<()> {
        let f = self.helper_ref(h)?;
        let r = self.refund_at(offset);
        let sites = Redo::HELPERS.iter().position(|g| g() == h).map_or(0, |k| self.redo_sites[k]);
        if self.operands_own_heap() || sites < REDO_SHARE_MIN {
            // Drops after the helper recorded the error, or too few sites
            // to share: a site of its own.
            self.fail_if_with(cond, offset, r, |lw| {
                let redo = redo(lw);
                let args = lw.redo_args(redo);
                lw.b.ins().call(f, &args);
                lw.b.ins().iconst(types::I32, status_number(StatusCode::ARITHMETIC_ERROR))
            });
            return Ok(());
        }
        // The site only stages the helper's operands in the scratch slot
        // and its offset (and refund) in the fail slot; the helper call,
        // the same for every site of the helper, is made once per function
        // by the shared redo block.
        let shared = self.redo_block(h);
        let cont = self.b.create_block();
        let site = self.b.create_block();
        self.b.set_cold_block(site);
        self.b.ins().brif(cond, site, &[], cont, &[]);
        self.b.switch_to_block(site);
        self.b.seal_block(site);
        self.note_failure_site(offset);
        let redo = redo(self);
        self.stage_redo(redo);
        self.gas_out();
        let offv = self.b.ins().iconst(types::I32, offset as i64);
        self.b.ins().stack_store(self.ptr, offv, self.fail_slot, FAIL_OFFSET);
        if self.target.cost.is_some() {
            let kept = r.and_then(|k| self.kept_through(k));
            let refund = self.refund_const(kept);
            self.b.ins().stack_store(self.ptr, refund, self.fail_slot, FAIL_REFUND);
        }
        self.b.ins().jump(shared, &[]);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        Ok(())
    }

    /// The shared redo block of integer helper `h` (created at its first
    /// site).
    fn redo_block(&mut self, h: HelperId) -> Block {
        if let Some(&(_, b)) = self.redo_blocks.iter().find(|(g, _)| *g == h) {
            return b;
        }
        let b = self.b.create_block();
        self.b.set_cold_block(b);
        self.redo_blocks.push((h, b));
        b
    }

    /// Stores what `redo`'s helper reads into the scratch slot: the
    /// operands as [`redo_args`](Self::redo_args) passes them, the code at
    /// `REDO_CODE`, a shift's amount at `REDO_AMOUNT`.
    fn stage_redo(&mut self, redo: Redo) {
        let (code, a) = match redo {
            Redo::Bin(c, a, _) | Redo::Shift(c, a, _) | Redo::Cast(c, a) | Redo::Negate(c, a) => (c, a),
        };
        self.spill(&a, 0);
        match redo {
            Redo::Bin(_, _, b) => self.spill(&b, 32),
            Redo::Shift(_, _, amt) => {
                self.b.ins().stack_store(self.ptr, amt, self.scratch, REDO_AMOUNT);
            }
            Redo::Cast(..) | Redo::Negate(..) => {}
        }
        let c = self.code_const(code);
        self.b.ins().stack_store(self.ptr, c, self.scratch, REDO_CODE);
    }

    /// Fills each shared redo block: the helper re-runs the staged
    /// instruction, which fails and records the interpreter's error, then
    /// the failure path with `ARITHMETIC_ERROR` (the site stored the offset
    /// and refund).
    fn fill_redo_blocks(&mut self) -> CompileResult<()> {
        for (h, block) in std::mem::take(&mut self.redo_blocks) {
            self.b.switch_to_block(block);
            let f = self.helper_ref(h)?;
            let mut args = vec![self.ctx, self.slot_addr(64), self.slot_addr(0)];
            if h == HelperId::int_binop() {
                args.push(self.slot_addr(32));
            } else if h == HelperId::int_shift() {
                args.push(self.b.ins().stack_load(self.ptr, types::I8, self.scratch, REDO_AMOUNT));
            }
            args.push(self.b.ins().stack_load(self.ptr, types::I8, self.scratch, REDO_CODE));
            self.b.ins().call(f, &args);
            let st = self.b.ins().iconst(types::I32, status_number(StatusCode::ARITHMETIC_ERROR));
            self.b.ins().stack_store(self.ptr, st, self.fail_slot, FAIL_STATUS);
            self.b.ins().jump(self.fail, &[]);
        }
        Ok(())
    }

    /// The arguments of `redo`'s helper: operands spilled to the scratch
    /// slot, the result (never used) at offset 64.
    fn redo_args(&mut self, redo: Redo) -> Vec<Value> {
        let a = match redo {
            Redo::Bin(_, a, _) | Redo::Shift(_, a, _) | Redo::Cast(_, a) | Redo::Negate(_, a) => a,
        };
        self.spill(&a, 0);
        let mut args = vec![self.ctx, self.slot_addr(64), self.slot_addr(0)];
        let code = match redo {
            Redo::Bin(c, _, b) => {
                self.spill(&b, 32);
                args.push(self.slot_addr(32));
                c
            }
            Redo::Shift(c, _, amt) => {
                args.push(amt);
                c
            }
            Redo::Cast(c, _) | Redo::Negate(c, _) => c,
        };
        args.push(self.code_const(code));
        args
    }

    // ---- operand stack ----

    fn pop(&mut self) -> CompileResult<(Ty, Val)> {
        self.stack.pop().ok_or_else(|| malformed("operand stack underflow"))
    }

    fn pop_kind(&mut self, want: Kind) -> CompileResult<Val> {
        match self.pop()? {
            (Ty::S(k), v) if k == want => Ok(v),
            (t, _) => Err(malformed(format!("expected {want:?} on the stack, found {t:?}"))),
        }
    }

    fn pop_ref(&mut self) -> CompileResult<(Arc<FlatLayout>, Value)> {
        match self.pop()? {
            (Ty::R(t), v) => Ok((t, v.one()?)),
            (t, _) => Err(malformed(format!("expected a reference on the stack, found {t:?}"))),
        }
    }

    fn pop_mem(&mut self) -> CompileResult<(Arc<FlatLayout>, Value)> {
        match self.pop()? {
            (Ty::M(l), v) => Ok((l, v.addr()?)),
            (t, _) => Err(malformed(format!("expected an in-memory value on the stack, found {t:?}"))),
        }
    }

    /// Pushes a value the current instruction produced, checking the shared
    /// operand-stack limit exactly where the interpreter would.
    fn push(&mut self, t: Ty, v: Val, offset: usize) {
        let h = self.stack.len();
        if h + 1 > self.watermark && self.defer_push(offset, h) {
            // Metered code tests the segment's room before the next
            // instruction that may fail (`lower/metered.rs`).
            self.watermark = h + 1;
            self.stack.push((t, v));
            return;
        }
        if h + 1 > self.watermark {
            // Recorded by the fast copy too, which leaves the check out.
            self.checked_height = self.checked_height.max(h + 1);
            if let Some(room) = self.room {
                // Overflows iff stack_base + h >= max_stack, i.e. room <= h.
                let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64);
                self.fail_if(over, StatusCode::EXECUTION_STACK_OVERFLOW, offset);
            }
            self.watermark = h + 1;
        }
        self.stack.push((t, v));
    }

    /// Pushes `n` values whose slots the instruction filled, each checked.
    fn push_all(&mut self, vals: Vec<(Ty, Val)>, offset: usize) {
        for (t, v) in vals {
            self.push(t, v, offset);
        }
    }

    // ---- memory ----

    fn load_scalar(&mut self, k: Kind, addr: Value, off: i32) -> Val {
        if k.is_wide() {
            let mut lanes = [Value::from_u32(0); 4];
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = self.b.ins().load(types::I64, Self::vmem(), addr, off + 8 * i as i32);
            }
            Val::Wide(lanes)
        } else {
            Val::One(self.b.ins().load(k.ir_type(), Self::vmem(), addr, off))
        }
    }

    fn store_scalar(&mut self, _k: Kind, v: &Val, addr: Value, off: i32) {
        for (i, lane) in v.lanes().into_iter().enumerate() {
            self.b.ins().store(Self::vmem(), lane, addr, off + 8 * i as i32);
        }
    }

    /// Copies `size` bytes (the regions may be the same or overlap).
    fn copy_mem(&mut self, dst: Value, src: Value, size: u32) {
        if size > INLINE_COPY {
            let n = self.b.ins().iconst(self.ptr, size as i64);
            self.b.call_memmove(self.frontend, dst, src, n);
            return;
        }
        let mut chunks = Vec::new();
        let mut at = 0u32;
        for (w, ty) in [(8u32, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)] {
            while size - at >= w {
                let v = self.b.ins().load(ty, Self::vmem(), src, at as i32);
                chunks.push((v, at));
                at += w;
            }
        }
        for (v, at) in chunks {
            self.b.ins().store(Self::vmem(), v, dst, at as i32);
        }
    }

    fn zero_mem(&mut self, dst: Value, size: u32) {
        if size > INLINE_COPY {
            let z = self.b.ins().iconst(types::I8, 0);
            let n = self.b.ins().iconst(self.ptr, size as i64);
            self.b.call_memset(self.frontend, dst, z, n);
            return;
        }
        let mut at = 0u32;
        for (w, ty) in [(8u32, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)] {
            while size - at >= w {
                let z = self.b.ins().iconst(ty, 0);
                self.b.ins().store(Self::vmem(), z, dst, at as i32);
                at += w;
            }
        }
    }

    fn layout_ptr(&mut self, l: &Arc<FlatLayout>) -> Value {
        self.b.ins().iconst(self.ptr, Arc::as_ptr(l) as i64)
    }

    /// Calls helper `h`; the register copy of the gas left is written out
    /// before, and read back after, only a helper the table declares to
    /// read or write it (`GasAccess`).
    fn call_helper(&mut self, h: HelperId, args: &[Value]) -> CompileResult<Value> {
        let f = self.helper_ref(h)?;
        let gas = h.entry().gas == GasAccess::ReadsWrites;
        if gas {
            self.gas_out();
        }
        let call = self.b.ins().call(f, args);
        let r = self.b.inst_results(call)[0];
        if gas {
            self.gas_in();
        }
        Ok(r)
    }

    /// The gas left (metered code only).
    fn gas_get(&mut self) -> Value {
        match self.gas_var {
            Some(v) => self.b.use_var(v),
            None => self.load_ctx(types::I64, off::GAS_LEFT),
        }
    }

    fn gas_set(&mut self, g: Value) {
        self.gas_defs += 1;
        match self.gas_var {
            Some(v) => self.b.def_var(v, g),
            None => self.store_ctx(g, off::GAS_LEFT),
        }
    }

    /// Writes the register copy of the gas left to the context.
    fn gas_out(&mut self) {
        if let Some(v) = self.gas_var {
            let g = self.b.use_var(v);
            self.store_ctx(g, off::GAS_LEFT);
        }
    }

    /// Re-reads the gas left after a call that may have charged it.
    fn gas_in(&mut self) {
        self.gas_defs += 1;
        if let Some(v) = self.gas_var {
            let g = self.load_ctx(types::I64, off::GAS_LEFT);
            self.b.def_var(v, g);
        }
    }

    /// Calls a status-returning helper; a non-zero status fails at `offset`
    /// with the error the helper recorded.
    fn call_status(&mut self, h: HelperId, args: &[Value], offset: usize) -> CompileResult<()> {
        let st = self.call_helper(h, args)?;
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, status::OK as i64);
        let r = self.refund_at(offset);
        self.fail_if_with(bad, offset, r, |lw| lw.b.ins().iconst(types::I32, 0));
        Ok(())
    }

    /// Drops the value at `addr` (nothing to do unless it owns heap memory).
    fn drop_value(&mut self, l: &Arc<FlatLayout>, addr: Value) -> CompileResult<()> {
        if !l.owns_heap {
            return Ok(());
        }
        if let Shape::Vector(_) = l.shape {
            // Most drops are of empty or moved-out vectors: skip the call.
            let p = self.b.ins().load(types::I64, Self::vmem(), addr, 0);
            let live = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(p, live, &[], done, &[]);
            self.b.switch_to_block(live);
            self.b.seal_block(live);
            let lp = self.layout_ptr(l);
            self.call_helper(HelperId::value_drop(), &[self.ctx, lp, addr])?;
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
            self.b.seal_block(done);
            return Ok(());
        }
        let lp = self.layout_ptr(l);
        self.call_helper(HelperId::value_drop(), &[self.ctx, lp, addr])?;
        Ok(())
    }

    /// `*dst = copy(*src)` (`dst` holds no live value) for instruction `i`:
    /// a copy that owns heap memory can exceed the memory budget.
    fn copy_value(&mut self, l: &Arc<FlatLayout>, dst: Value, src: Value, i: usize) -> CompileResult<()> {
        if l.owns_heap {
            let lp = self.layout_ptr(l);
            self.call_status(HelperId::value_copy(), &[self.ctx, lp, dst, src], i)?;
        } else {
            self.copy_mem(dst, src, l.size);
        }
        Ok(())
    }

    /// Stores an operand (scalar lanes or in-memory value) at `addr + off`.
    fn store_operand(&mut self, t: &Ty, v: &Val, addr: Value, off: u32) -> CompileResult<()> {
        match t {
            Ty::S(k) => self.store_scalar(*k, v, addr, off as i32),
            Ty::M(l) => {
                let dst = if off == 0 { addr } else { self.b.ins().iadd_imm_s(addr, off as i64) };
                self.copy_mem(dst, v.addr()?, l.size);
            }
            Ty::R(_) => return Err(malformed("reference stored in a value")),
        }
        Ok(())
    }

    /// Moves the value of layout `l` at `addr + off` onto the operand stack
    /// at height `h` (scalars are loaded, others copied to the slot).
    fn load_operand(&mut self, l: &Arc<FlatLayout>, addr: Value, off: u32, h: usize) -> CompileResult<(Ty, Val)> {
        let t = Ty::of(l);
        let v = match &t {
            Ty::S(k) => self.load_scalar(*k, addr, off as i32),
            Ty::M(l) => {
                let src = if off == 0 { addr } else { self.b.ins().iadd_imm_s(addr, off as i64) };
                let dst = self.opslot(h, l);
                self.copy_mem(dst, src, l.size);
                Val::Mem(dst)
            }
            Ty::R(_) => return Err(malformed("reference inside a value")),
        };
        Ok((t, v))
    }

    fn helper_ref(&mut self, h: HelperId) -> CompileResult<FuncRef> {
        if let Some(f) = self.helpers.get(&h) {
            return Ok(*f);
        }
        let f = self.env.helper(h, self.b.func)?;
        self.helpers.insert(h, f);
        Ok(f)
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

    /// `v` as a failure site reads it, hidden from the mid-end's algebra:
    /// Cranelift folds `(x + y) - y` back to `x`, so a site recomputing an
    /// operand from the result would keep the operand alive past the
    /// instruction (and in its own register). `failed` is the test the
    /// site runs under (true there, so the select yields `v`).
    fn opaque(&mut self, failed: Value, v: Value) -> Value {
        let ty = self.b.func.dfg.value_type(v);
        let zero = self.b.ins().iconst(ty, 0);
        self.b.ins().select_spectre_guard(failed, v, zero)
    }

    fn code_const(&mut self, c: u8) -> Value {
        self.b.ins().iconst(types::I8, c as i64)
    }

    fn helper_binop(&mut self, opc: u8, k: Kind, a: Val, b: Val, offset: usize) -> CompileResult<Val> {
        self.spill(&a, 0);
        self.spill(&b, 32);
        let args =
            [self.ctx, self.slot_addr(64), self.slot_addr(0), self.slot_addr(32), self.code_const(k.code() | opc << 4)];
        self.call_status(HelperId::int_binop(), &args, offset)?;
        Ok(self.reload(k, 64))
    }

    /// Lowers one copy of the whole body (blocks in code order) and returns
    /// its first block. The lowering state of a previous copy is reset;
    /// locals, operand slots and the failure paths are shared.
    fn lower_copy(
        &mut self,
        code: &movejit_format::CodeUnit,
        blocks: &[(usize, usize)],
        metered: bool,
    ) -> CompileResult<Block> {
        self.block_of.clear();
        self.rotations.clear();
        self.prechecked.clear();
        self.bypass.clear();
        self.copying = None;
        self.in_flight.clear();
        for &(s, _) in blocks {
            let blk = self.b.create_block();
            self.block_of.insert(s, blk);
        }
        let mut checked = checked::CheckedHeights::new(code, blocks);
        // Metered code charges gas per segment of a block; a copied test would
        // need segments of its own.
        if !metered {
            self.rotations = rotate::back_edges(&code.code, blocks, |a, b| checked.dominates_at(a, b));
            self.plan_prechecks(code, blocks, &checked);
        }
        // Metered innermost loops get a fast copy (`lower/fastloop.rs`).
        let fast_loops = if metered && !self.target.baseline { self.plan_fast_loops(code, blocks) } else { Vec::new() };
        for &(s, e) in blocks {
            let blk = Self::exact_block(&fast_loops, s).unwrap_or(self.block_of[&s]);
            self.b.switch_to_block(blk);
            let mut at = checked.at_entry(s);
            if let Some(&(main, n)) = self.prechecked.get(&s) {
                at = self.precheck(s, n, at, main);
            }
            self.lower_block(s, e, at)?;
            checked.at_exit(s, self.watermark);
            let n = self.b.func.dfg.num_insts();
            if n > self.target.max_ir_insts {
                return Err(unsupported(format!(
                    "function of more than {n} IR instructions (limit {})",
                    self.target.max_ir_insts
                )));
            }
        }
        for l in &fast_loops {
            self.lower_fast_loop(l, &checked)?;
        }
        self.block_of.get(&0).copied().ok_or_else(|| malformed("empty code"))
    }

    // ---- blocks and gas ----

    /// Lowers block `[s, e)`; operand-stack heights below `checked` are
    /// known to fit (`lower/checked.rs`).
    fn lower_block(&mut self, s: usize, e: usize, checked: usize) -> CompileResult<()> {
        self.stack.clear();
        self.fused_sub = None;
        self.watermark = checked;
        self.block_start = s;
        if self.target.cost.is_none() {
            self.mode = Mode::Unmetered;
            for i in s..e {
                self.lower_instr(i)?;
            }
            return self.fall_through(e);
        }
        let segs = segments(self.code, s, e);
        for &(a, z) in &segs {
            self.lower_segment(a, z, e)?;
        }
        if segs.len() == 1 && !self.fast_gas {
            self.block_totals.insert(s, self.last_segment_total);
        }
        Ok(())
    }

    /// At the end `e` of a block: falls through to the next block when the
    /// last instruction does not branch.
    fn fall_through(&mut self, e: usize) -> CompileResult<()> {
        let last = self.code.get(e.wrapping_sub(1)).ok_or_else(|| malformed("empty block"))?;
        if !last.is_branch() {
            if !self.stack.is_empty() {
                return Err(malformed(format!("operand stack not empty at block end {e}")));
            }
            let next = *self.block_of.get(&e).ok_or_else(|| malformed("control falls off the end of the code"))?;
            self.b.ins().jump(next, &[]);
        }
        Ok(())
    }

    /// Whether the loop test `[s, e)` (pure by its instructions,
    /// `lower/rotate.rs`) only reads locals without copying memory: a
    /// copied test must not allocate or fail but at its stack checks.
    fn copyable_test(&self, s: usize, e: usize) -> bool {
        self.code.get(s..e).is_some_and(|test| {
            test.iter().all(|ins| match ins {
                Bytecode::CopyLoc(l) => match self.locals.get(*l as usize) {
                    Some(Local::Var(..) | Local::Ref(..)) => true,
                    Some(Local::Mem(layout, _)) => matches!(Ty::of(layout), Ty::S(_)),
                    None => false,
                },
                _ => true,
            })
        })
    }

    /// The block a conditional branch to `t` enters: a test copy enters
    /// its loop's body past the body's prechecks.
    fn branch_block(&self, t: usize) -> CompileResult<Block> {
        match (self.copying, self.prechecked.get(&t)) {
            (Some(body), Some(&(main, _))) if body == t => Ok(main),
            _ => self.target_block(t as u16),
        }
    }

    /// For each rotated loop (`lower/rotate.rs`) whose body starts with
    /// pushes of scalar locals and constants: the body's stack checks of
    /// those pushes move to its entry from outside the loop (they cannot
    /// fail between them: nothing else happens there), and the test copy
    /// enters past them. The copy's block is dominated by the body, so
    /// the checks passed in this frame before, and the room is fixed per
    /// frame. Unmetered code only (as rotation).
    fn plan_prechecks(
        &mut self,
        unit: &movejit_format::CodeUnit,
        blocks: &[(usize, usize)],
        checked: &checked::CheckedHeights,
    ) {
        for &(s, e) in blocks {
            let Some(&(ts, te)) = e.checked_sub(1).and_then(|l| self.rotations.get(&l)) else { continue };
            let body = movejit_format::cfg::successors(unit, te - 1)
                .into_iter()
                .find(|&b| b != ts && checked.dominates_at(b, s));
            let Some(body) = body else { continue };
            let end = blocks.iter().find(|&&(bs, _)| bs == body).map_or(body, |&(_, be)| be);
            // `freeze_ref` (a no-op here) may sit among them: `copy_loc v;
            // freeze_ref; copy_loc i` starts a loop reading `v[i]`.
            let lead = self.code[body..end].iter().take_while(|ins| self.scalar_push(ins) || self.no_op(ins)).count();
            let n = self.code[body..body + lead].iter().filter(|ins| self.scalar_push(ins)).count();
            if n == 0 || body + lead >= end {
                continue;
            }
            let main = match self.prechecked.get(&body) {
                Some(&(main, _)) => main,
                None => self.b.create_block(),
            };
            self.prechecked.insert(body, (main, n));
            self.bypass.insert(e - 1, body);
        }
    }

    /// Pushes a scalar or a reference, reading a local kept in SSA,
    /// borrowing a local or loading a constant: nothing but its stack
    /// check can fail, nothing is written.
    fn scalar_push(&self, ins: &Bytecode) -> bool {
        use Bytecode as B;
        match ins {
            B::CopyLoc(l) | B::MoveLoc(l) => {
                matches!(self.locals.get(*l as usize), Some(Local::Var(..) | Local::Ref(..)))
            }
            B::ImmBorrowLoc(l) | B::MutBorrowLoc(l) => (*l as usize) < self.locals.len(),
            B::LdTrue
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
            | B::LdI256(_) => true,
            _ => false,
        }
    }

    /// Lowered as nothing: leaves the operand stack as it is.
    fn no_op(&self, ins: &Bytecode) -> bool {
        matches!(ins, Bytecode::Nop | Bytecode::FreezeRef)
    }

    /// The entry of prechecked body `s` from outside its loop: the stack
    /// checks of its `n` leading pushes above watermark `w`, each at its
    /// push's offset, then on to `main`, where the body is lowered with
    /// those heights known. Returns the body's watermark.
    fn precheck(&mut self, s: usize, n: usize, w: usize, main: Block) -> usize {
        self.stack.clear();
        // The offsets of the leading pushes, past any no-ops among them.
        let pushes: Vec<usize> = (s..self.code.len()).filter(|&o| self.scalar_push(&self.code[o])).take(n).collect();
        for (h, &at) in pushes.iter().enumerate().skip(w) {
            // Recorded by the fast copy too, which leaves the check out.
            self.checked_height = self.checked_height.max(h + 1);
            if let Some(room) = self.room {
                let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, room, h as i64);
                self.fail_if(over, StatusCode::EXECUTION_STACK_OVERFLOW, at);
            }
        }
        self.b.ins().jump(main, &[]);
        self.b.switch_to_block(main);
        w.max(n)
    }

    fn target_block(&self, t: u16) -> CompileResult<Block> {
        self.block_of.get(&(t as usize)).copied().ok_or_else(|| malformed("bad branch target"))
    }

    fn local(&self, i: u8) -> CompileResult<Local> {
        self.locals.get(i as usize).cloned().ok_or_else(|| malformed("local index out of range"))
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
        self.push(Ty::S(k), v, i);
    }

    /// The constant `v` is, when an `iconst` of at most 64 bits made it
    /// (zero-extended).
    fn iconst_of(&self, v: Value) -> Option<u64> {
        use cranelift_codegen::ir::{InstructionData, Opcode};
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => {
                let bits = self.b.func.dfg.value_type(v).bits();
                let raw = imm.bits() as u64;
                Some(if bits >= 64 { raw } else { raw & ((1u64 << bits) - 1) })
            }
            _ => None,
        }
    }

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

    // ---- datatypes ----

    fn struct_type(&self, sd: StructDefinitionIndex, args: Vec<RType>) -> CompileResult<RType> {
        let m = self.target.module;
        let d = m.struct_defs.get(sd.idx()).ok_or_else(|| malformed("struct definition index"))?;
        Ok(RType::Datatype(datatype_id(m, d.struct_handle)?, args))
    }

    fn enum_type(&self, ed: movejit_format::EnumDefinitionIndex, args: Vec<RType>) -> CompileResult<RType> {
        let m = self.target.module;
        let d = m.enum_defs.get(ed.idx()).ok_or_else(|| malformed("enum definition index"))?;
        Ok(RType::Datatype(datatype_id(m, d.enum_handle)?, args))
    }

    fn inst_args(&self, sig: movejit_format::SignatureIndex) -> CompileResult<Vec<RType>> {
        sig_types(self.target.module, sig, self.target.type_args)
    }

    /// The layout of a packed type. With `depth_check_at`, values nesting
    /// deeper than the interpreter allows fail at that (packing) offset
    /// with `VM_MAX_VALUE_DEPTH_REACHED`, as in the interpreter.
    fn packed_layout(&mut self, t: &RType, depth_check_at: Option<usize>) -> CompileResult<Arc<FlatLayout>> {
        if let Some(i) = depth_check_at {
            let (d, max) = self.env.value_depth(t)?;
            if d > max {
                let always = self.b.ins().iconst(types::I8, 1);
                self.fail_if(always, StatusCode::VM_MAX_VALUE_DEPTH_REACHED, i);
            }
        }
        self.env.layout(t)
    }

    fn pack_struct(&mut self, l: Arc<FlatLayout>, i: usize) -> CompileResult<()> {
        let Shape::Struct(fields) = &l.shape else { return Err(malformed("Pack of a non-struct")) };
        let fields = fields.clone();
        if self.stack.len() < fields.len() {
            return Err(malformed("too few fields on the stack"));
        }
        let vals = self.stack.split_off(self.stack.len() - fields.len());
        let dst = self.opslot(self.stack.len(), &l);
        for (f, (t, v)) in fields.iter().zip(&vals) {
            self.store_operand(t, v, dst, f.offset)?;
        }
        self.push(Ty::M(l), Val::Mem(dst), i);
        Ok(())
    }

    fn unpack_fields(&mut self, fields: &[movejit_runtime::flat::Field], src: Value, i: usize) -> CompileResult<()> {
        let h = self.stack.len();
        let mut out = Vec::with_capacity(fields.len());
        // Later fields first: field 0 may share the source's slot.
        for (k, f) in fields.iter().enumerate().rev() {
            out.push(self.load_operand(&f.layout, src, f.offset, h + k)?);
        }
        out.reverse();
        self.push_all(out, i);
        Ok(())
    }

    fn variants(l: &FlatLayout) -> CompileResult<&Vec<Vec<movejit_runtime::flat::Field>>> {
        match &l.shape {
            Shape::Enum(vs) => Ok(vs),
            _ => Err(malformed("variant operation on a non-enum")),
        }
    }

    fn pack_variant(&mut self, l: Arc<FlatLayout>, variant: u16, i: usize) -> CompileResult<()> {
        let fields = Self::variants(&l)?.get(variant as usize).cloned().ok_or_else(|| malformed("variant index"))?;
        if self.stack.len() < fields.len() {
            return Err(malformed("too few fields on the stack"));
        }
        let vals = self.stack.split_off(self.stack.len() - fields.len());
        let dst = self.opslot(self.stack.len(), &l);
        for (f, (t, v)) in fields.iter().zip(&vals) {
            self.store_operand(t, v, dst, f.offset)?;
        }
        let tag = self.b.ins().iconst(types::I16, variant as i64);
        self.b.ins().store(Self::vmem(), tag, dst, 0);
        // The bytes no field of this variant covers are zero, as the
        // interpreter packs it: a slot's old bytes would make a variant
        // without heap fields look like a held value to the memory meter's
        // frame drop (a held value owning heap memory is never zero).
        let mut covered: Vec<(u32, u32)> = fields.iter().map(|f| (f.offset, f.offset + f.layout.size)).collect();
        covered.push((0, 2));
        covered.sort_unstable();
        let mut at = 0u32;
        for (start, end) in covered.into_iter().chain([(l.size, l.size)]) {
            if start > at {
                let gap = self.b.ins().iadd_imm_s(dst, at as i64);
                self.zero_mem(gap, start - at);
            }
            at = at.max(end);
        }
        self.push(Ty::M(l), Val::Mem(dst), i);
        Ok(())
    }

    fn unpack_variant(&mut self, variant: u16, mismatch: i64, i: usize) -> CompileResult<()> {
        let (l, src) = self.pop_mem()?;
        let fields = Self::variants(&l)?.get(variant as usize).cloned().ok_or_else(|| malformed("variant index"))?;
        let tag = self.b.ins().load(types::I16, Self::vmem(), src, 0);
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, tag, variant as i64);
        let r = self.refund_at(i);
        if mismatch == status_number(StatusCode::STRUCT_VARIANT_MISMATCH) {
            self.fail_if_with(bad, i, r, |lw| lw.variant_mismatch_status(tag));
        } else {
            self.fail_if_with(bad, i, r, |lw| lw.b.ins().iconst(types::I32, mismatch));
        }
        self.unpack_fields(&fields, src, i)
    }

    /// `&enum` → references to the fields of `variant` (Sui).
    fn unpack_variant_ref(&mut self, variant: u16, i: usize) -> CompileResult<()> {
        let (t, r) = self.pop_ref()?;
        let fields = Self::variants(&t)?.get(variant as usize).cloned().ok_or_else(|| malformed("variant index"))?;
        let tag = self.b.ins().load(types::I16, Self::vmem(), r, 0);
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, tag, variant as i64);
        let rf = self.refund_at(i);
        self.fail_if_with(bad, i, rf, |lw| lw.b.ins().iconst(types::I32, SUI_VARIANT_TAG_MISMATCH as i64));
        for f in fields {
            let p = self.b.ins().iadd_imm_s(r, f.offset as i64);
            self.push(Ty::R(f.layout.clone()), Val::One(p), i);
        }
        Ok(())
    }

    /// At an Aptos variant mismatch's cold site: the variant found (`tag`)
    /// goes to the context's `abort_code` (no sub-status flag), from which
    /// the engine builds the VM's message (jit-abi.md 4); the status.
    fn variant_mismatch_status(&mut self, tag: Value) -> Value {
        let found = self.b.ins().uextend(types::I64, tag);
        self.store_ctx(found, off::ABORT_CODE);
        self.b.ins().iconst(types::I32, status_number(StatusCode::STRUCT_VARIANT_MISMATCH))
    }

    /// Aptos `*BorrowVariantField`: the field at index `field` of whichever
    /// listed variant the value holds (`STRUCT_VARIANT_MISMATCH` otherwise).
    fn borrow_variant_field(&mut self, variants: &[u16], field: u16, i: usize) -> CompileResult<()> {
        let (t, r) = self.pop_ref()?;
        let vs = Self::variants(&t)?;
        let mut offs = Vec::new();
        let mut layout = None;
        for v in variants {
            let f =
                vs.get(*v as usize).and_then(|fs| fs.get(field as usize)).ok_or_else(|| malformed("variant field"))?;
            offs.push((*v, f.offset));
            layout.get_or_insert_with(|| f.layout.clone());
        }
        let layout = layout.ok_or_else(|| malformed("variant field handle without variants"))?;
        let tag = self.b.ins().load(types::I16, Self::vmem(), r, 0);
        let mut ok = self.b.ins().iconst(types::I8, 0);
        for (v, _) in &offs {
            let e = self.b.ins().icmp_imm_u(IntCC::Equal, tag, *v as i64);
            ok = self.b.ins().bor(ok, e);
        }
        let bad = self.b.ins().icmp_imm_u(IntCC::Equal, ok, 0);
        let rf = self.refund_at(i);
        self.fail_if_with(bad, i, rf, |lw| lw.variant_mismatch_status(tag));
        let mut off = self.b.ins().iconst(self.ptr, offs[0].1 as i64);
        for (v, o) in offs.iter().skip(1) {
            if *o != offs[0].1 {
                let e = self.b.ins().icmp_imm_u(IntCC::Equal, tag, *v as i64);
                let ov = self.b.ins().iconst(self.ptr, *o as i64);
                off = self.b.ins().select(e, ov, off);
            }
        }
        let p = self.b.ins().iadd(r, off);
        self.push(Ty::R(layout), Val::One(p), i);
        Ok(())
    }

    fn borrow_field(&mut self, field: u16, i: usize) -> CompileResult<()> {
        let (t, r) = self.pop_ref()?;
        let Shape::Struct(fields) = &t.shape else { return Err(malformed("field borrow of a non-struct")) };
        let f = fields.get(field as usize).cloned().ok_or_else(|| malformed("field index"))?;
        let p = if f.offset == 0 { r } else { self.b.ins().iadd_imm_s(r, f.offset as i64) };
        self.push(Ty::R(f.layout), Val::One(p), i);
        Ok(())
    }

    // ---- vectors ----

    fn elem_of(l: &FlatLayout) -> CompileResult<Arc<FlatLayout>> {
        l.elem().cloned().ok_or_else(|| malformed("vector operation on a non-vector"))
    }

    /// Length of the vector whose slot is at `v` (0 for a null header).
    fn vec_len_inline(&mut self, v: Value) -> Value {
        let p = self.b.ins().load(types::I64, Self::vmem(), v, 0);
        let nonnull = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().brif(p, nonnull, &[], done, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(nonnull);
        self.b.seal_block(nonnull);
        let n = self.b.ins().load(types::I64, Self::mem(), p, 0);
        self.b.ins().jump(done, &[BlockArg::Value(n)]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        self.b.block_params(done)[0]
    }

    /// A fresh buffer of `n` elements of `e` (for pack / unpack).
    fn elem_buffer(&mut self, e: &FlatLayout, n: u64) -> CompileResult<Value> {
        let bytes = n
            .checked_mul(e.size as u64)
            .filter(|b| *b < (1 << 24))
            .ok_or_else(|| unsupported("vector literal too large"))?;
        let s = self.new_slot(bytes as u32, e.align);
        Ok(self.b.ins().stack_addr(self.ptr, s, 0))
    }

    // ---- instructions ----

    fn lower_instr(&mut self, i: usize) -> CompileResult<()> {
        use Bytecode as B;
        self.check_no_fused_sub(i)?;
        let ins = self.code[i].clone();
        let m = self.target.module;
        match ins {
            B::Nop | B::FreezeRef => {}
            B::Pop => {
                let (t, v) = self.pop()?;
                if let Ty::M(l) = t {
                    self.drop_value(&l, v.addr()?)?;
                }
            }
            B::Ret => {
                let rets = self.target.rets.clone();
                let mut vals = Vec::new();
                for t in rets.iter().rev() {
                    let (got, v) = self.pop()?;
                    if !got.compatible(t) {
                        return Err(malformed("return value of the wrong type"));
                    }
                    vals.push((got, v));
                }
                vals.reverse();
                if !self.stack.is_empty() {
                    return Err(malformed("values left on the stack at Ret"));
                }
                // Locals go first: a result's destination may be the slot a
                // parameter came in.
                self.drop_locals()?;
                let mut out = vec![self.b.ins().iconst(types::I8, 0)];
                if self.target.gas.in_registers() {
                    // The gas left goes back in a register (`GAS_RESULT`).
                    out.push(self.gas_get());
                } else {
                    self.gas_out();
                }
                let mut mi = 0;
                for (t, v) in &vals {
                    match t {
                        Ty::M(l) => {
                            let dst = *self.ret_ptrs.get(mi).ok_or_else(|| malformed("result pointers"))?;
                            mi += 1;
                            self.copy_mem(dst, v.addr()?, l.size);
                        }
                        _ => out.extend(v.lanes()),
                    }
                }
                self.b.ins().return_(&out);
            }
            B::Branch(t) => {
                self.expect_empty_stack()?;
                match self.rotations.get(&i).copied() {
                    Some((s, e)) if self.copyable_test(s, e) => {
                        let here = std::mem::replace(&mut self.block_start, s);
                        self.copying = self.bypass.get(&i).copied();
                        for j in s..e {
                            self.lower_instr(j)?;
                        }
                        self.copying = None;
                        self.block_start = here;
                    }
                    _ => {
                        let blk = self.target_block(t)?;
                        self.b.ins().jump(blk, &[]);
                    }
                }
            }
            B::BrTrue(t) | B::BrFalse(t) => {
                let c = self.pop_kind(Kind::Bool)?.one()?;
                self.expect_empty_stack()?;
                let taken = self.branch_block(t as usize)?;
                let next = self.branch_block(i + 1)?;
                if matches!(ins, B::BrTrue(_)) {
                    self.b.ins().brif(c, taken, &[], next, &[]);
                } else {
                    self.b.ins().brif(c, next, &[], taken, &[]);
                }
            }
            B::VariantSwitch(jt) => {
                let (_, r) = self.pop_ref()?;
                self.expect_empty_stack()?;
                let table = self.jump_tables.get(jt.idx()).ok_or_else(|| malformed("jump table index"))?;
                let targets: Vec<Block> =
                    table.jump_table.iter().map(|t| self.target_block(*t)).collect::<CompileResult<_>>()?;
                let default = *targets.first().ok_or_else(|| malformed("empty jump table"))?;
                let tag = self.b.ins().load(types::I16, Self::vmem(), r, 0);
                let tag = self.b.ins().uextend(types::I32, tag);
                let pool = &mut self.b.func.dfg.value_lists;
                let calls: Vec<BlockCall> = targets.iter().map(|blk| BlockCall::new(*blk, [], pool)).collect();
                let def = BlockCall::new(default, [], pool);
                let jt = self.b.create_jump_table(JumpTableData::new(def, &calls));
                self.b.ins().br_table(tag, jt);
            }
            B::LdTrue | B::LdFalse => {
                let v = self.b.ins().iconst(types::I8, matches!(ins, B::LdTrue) as i64);
                self.push(Ty::S(Kind::Bool), Val::One(v), i);
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
                let c = m.constant_pool.get(idx.idx()).ok_or_else(|| malformed("constant index out of range"))?;
                if let Some(k) = Kind::of_token(&c.type_) {
                    if c.data.len() != k.bytes() || (k == Kind::Bool && c.data[0] > 1) {
                        return Err(malformed("constant bytes do not match its type"));
                    }
                    let data = c.data.clone();
                    self.push_const(k, &data, i);
                } else {
                    let t = to_type(m, &c.type_, &[])?;
                    let l = self.env.layout(&t)?;
                    let at = self.env.constant(&l, &c.data)?;
                    let src = self.b.ins().iconst(self.ptr, at as i64);
                    let dst = self.opslot(self.stack.len(), &l);
                    self.copy_value(&l, dst, src, i)?;
                    self.push(Ty::M(l), Val::Mem(dst), i);
                }
            }
            B::CopyLoc(l) if self.closure_copy_elided(l, i) => self.push_local_closure(l, i)?,
            B::CopyLoc(l) | B::MoveLoc(l) => {
                let moving = matches!(ins, B::MoveLoc(_));
                let (t, v) = match self.local(l)? {
                    Local::Var(k, vars) => {
                        let lanes: Vec<Value> = vars.iter().map(|v| self.b.use_var(*v)).collect();
                        let t = Ty::S(k);
                        let v = Val::from_lanes(&t, &lanes);
                        (t, v)
                    }
                    Local::Ref(t, var) => {
                        let r = self.b.use_var(var);
                        self.note_local_ref(l, r);
                        (Ty::R(t), Val::One(r))
                    }
                    Local::Mem(layout, addr) => match Ty::of(&layout) {
                        Ty::S(k) => (Ty::S(k), self.load_scalar(k, addr, 0)),
                        _ => {
                            let dst = self.opslot(self.stack.len(), &layout);
                            if moving {
                                self.copy_mem(dst, addr, layout.size);
                                if layout.owns_heap {
                                    self.zero_mem(addr, layout.size);
                                }
                            } else {
                                self.copy_value(&layout, dst, addr, i)?;
                            }
                            (Ty::M(layout), Val::Mem(dst))
                        }
                    },
                };
                self.push(t, v, i);
            }
            B::StLoc(l) => {
                let (t, v) = self.pop()?;
                match self.local(l)? {
                    Local::Var(k, vars) => {
                        if t.kind() != Some(k) {
                            return Err(malformed("StLoc of the wrong type"));
                        }
                        for (lane, var) in v.lanes().into_iter().zip(vars) {
                            self.b.def_var(var, lane);
                        }
                    }
                    Local::Ref(_, var) => self.b.def_var(var, v.one()?),
                    Local::Mem(layout, addr) => match t {
                        Ty::S(k) => self.store_scalar(k, &v, addr, 0),
                        Ty::M(_) => {
                            self.drop_value(&layout, addr)?;
                            self.copy_mem(addr, v.addr()?, layout.size);
                        }
                        Ty::R(_) => return Err(malformed("StLoc of a reference into a value local")),
                    },
                }
            }
            B::MutBorrowLoc(l) | B::ImmBorrowLoc(l) => match self.local(l)? {
                Local::Mem(layout, addr) => self.push(Ty::R(layout), Val::One(addr), i),
                _ => return Err(malformed("borrow of a local kept in registers")),
            },
            B::MutBorrowField(fh) | B::ImmBorrowField(fh) => {
                let h = m.field_handles.get(fh.idx()).ok_or_else(|| malformed("field handle"))?;
                self.borrow_field(h.field, i)?;
            }
            B::MutBorrowFieldGeneric(fi) | B::ImmBorrowFieldGeneric(fi) => {
                let inst = m.field_instantiations.get(fi.idx()).ok_or_else(|| malformed("field instantiation"))?;
                let h = m.field_handles.get(inst.handle.idx()).ok_or_else(|| malformed("field handle"))?;
                self.borrow_field(h.field, i)?;
            }
            B::ImmBorrowVariantField(h) | B::MutBorrowVariantField(h) => {
                let vh = m.variant_field_handles.get(h.idx()).ok_or_else(|| malformed("variant field handle"))?;
                let (vs, f) = (vh.variants.clone(), vh.field);
                self.borrow_variant_field(&vs, f, i)?;
            }
            B::ImmBorrowVariantFieldGeneric(x) | B::MutBorrowVariantFieldGeneric(x) => {
                let inst =
                    m.variant_field_instantiations.get(x.idx()).ok_or_else(|| malformed("variant field inst"))?;
                let vh =
                    m.variant_field_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant field handle"))?;
                let (vs, f) = (vh.variants.clone(), vh.field);
                self.borrow_variant_field(&vs, f, i)?;
            }
            B::Pack(sd) => {
                let t = self.struct_type(sd, Vec::new())?;
                let l = self.packed_layout(&t, Some(i))?;
                self.pack_struct(l, i)?;
            }
            B::PackGeneric(si) => {
                let inst =
                    m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct instantiation"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let t = self.struct_type(inst.def, args)?;
                let l = self.packed_layout(&t, Some(i))?;
                self.pack_struct(l, i)?;
            }
            B::Unpack(_) | B::UnpackGeneric(_) => {
                let (l, src) = self.pop_mem()?;
                let Shape::Struct(fields) = &l.shape else { return Err(malformed("Unpack of a non-struct")) };
                let fields = fields.clone();
                self.unpack_fields(&fields, src, i)?;
            }
            B::PackVariant(h) => {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                let t = self.struct_type(vh.struct_index, Vec::new())?;
                let l = self.packed_layout(&t, None)?;
                self.pack_variant(l, vh.variant, i)?;
            }
            B::PackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let t = self.struct_type(vh.struct_index, args)?;
                let l = self.packed_layout(&t, None)?;
                self.pack_variant(l, vh.variant, i)?;
            }
            B::UnpackVariant(h) => {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant(vh.variant, status_number(StatusCode::STRUCT_VARIANT_MISMATCH), i)?;
            }
            B::UnpackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant(vh.variant, status_number(StatusCode::STRUCT_VARIANT_MISMATCH), i)?;
            }
            B::TestVariant(_) | B::TestVariantGeneric(_) => {
                let h = match ins {
                    B::TestVariant(h) => h,
                    B::TestVariantGeneric(x) => {
                        m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?.handle
                    }
                    _ => unreachable_ins()?,
                };
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                let variant = vh.variant;
                let (_, r) = self.pop_ref()?;
                let tag = self.b.ins().load(types::I16, Self::vmem(), r, 0);
                let eq = self.b.ins().icmp_imm_u(IntCC::Equal, tag, variant as i64);
                self.push(Ty::S(Kind::Bool), Val::One(eq), i);
            }
            B::SuiPackVariant(h) => {
                let vh = m.variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                let t = self.enum_type(vh.enum_def, Vec::new())?;
                let l = self.packed_layout(&t, None)?;
                self.pack_variant(l, vh.variant, i)?;
            }
            B::SuiPackVariantGeneric(h) => {
                let vh = m.variant_instantiation_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                let inst = m.enum_def_instantiations.get(vh.enum_def.idx()).ok_or_else(|| malformed("enum inst"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let t = self.enum_type(inst.def, args)?;
                let l = self.packed_layout(&t, None)?;
                self.pack_variant(l, vh.variant, i)?;
            }
            B::SuiUnpackVariant(h) => {
                let vh = m.variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant(vh.variant, SUI_VARIANT_TAG_MISMATCH as i64, i)?;
            }
            B::SuiUnpackVariantGeneric(h) => {
                let vh = m.variant_instantiation_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant(vh.variant, SUI_VARIANT_TAG_MISMATCH as i64, i)?;
            }
            B::SuiUnpackVariantImmRef(h) | B::SuiUnpackVariantMutRef(h) => {
                let vh = m.variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant_ref(vh.variant, i)?;
            }
            B::SuiUnpackVariantGenericImmRef(h) | B::SuiUnpackVariantGenericMutRef(h) => {
                let vh = m.variant_instantiation_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                self.unpack_variant_ref(vh.variant, i)?;
            }
            B::ReadRef => {
                let (t, r) = self.pop_ref()?;
                let h = self.stack.len();
                let (ty, v) = match Ty::of(&t) {
                    Ty::S(k) => (Ty::S(k), self.load_scalar(k, r, 0)),
                    _ => {
                        let dst = self.opslot(h, &t);
                        self.copy_value(&t, dst, r, i)?;
                        (Ty::M(t), Val::Mem(dst))
                    }
                };
                self.push(ty, v, i);
            }
            B::WriteRef => {
                let (t, r) = self.pop_ref()?;
                let (vt, v) = self.pop()?;
                self.note_write_ref(&vt);
                match vt {
                    Ty::S(k) => self.store_scalar(k, &v, r, 0),
                    Ty::M(_) => {
                        self.drop_value(&t, r)?;
                        self.copy_mem(r, v.addr()?, t.size);
                    }
                    Ty::R(_) => return Err(malformed("WriteRef of a reference")),
                }
            }
            B::VecPack(sig, n) => {
                let et = self.inst_args(sig)?.into_iter().next().ok_or_else(|| malformed("VecPack signature"))?;
                let vt = RType::Vector(Box::new(et.clone()));
                let vl = self.packed_layout(&vt, Some(i))?;
                let el = Self::elem_of(&vl)?;
                let n_us = usize::try_from(n).map_err(|_| malformed("VecPack count"))?;
                if self.stack.len() < n_us {
                    return Err(malformed("too few elements on the stack"));
                }
                let vals = self.stack.split_off(self.stack.len() - n_us);
                let buf = self.elem_buffer(&el, n)?;
                for (k, (t, v)) in vals.iter().enumerate() {
                    self.store_operand(t, v, buf, k as u32 * el.size)?;
                }
                let dst = self.opslot(self.stack.len(), &vl);
                let (ep, nv) = (self.layout_ptr(&el), self.b.ins().iconst(types::I64, n as i64));
                self.call_status(HelperId::vec_pack(), &[self.ctx, ep, dst, buf, nv], i)?;
                self.push(Ty::M(vl), Val::Mem(dst), i);
            }
            B::VecUnpack(_, n) => {
                let (vl, v) = self.pop_mem()?;
                let el = Self::elem_of(&vl)?;
                let buf = self.elem_buffer(&el, n)?;
                let (ep, nv) = (self.layout_ptr(&el), self.b.ins().iconst(types::I64, n as i64));
                self.call_status(HelperId::vec_unpack(), &[self.ctx, ep, v, nv, buf], i)?;
                let fields: Vec<movejit_runtime::flat::Field> = (0..n as u32)
                    .map(|k| movejit_runtime::flat::Field { offset: k * el.size, layout: el.clone() })
                    .collect();
                self.unpack_fields(&fields, buf, i)?;
            }
            B::VecLen(_) => {
                let (_, r) = self.pop_ref()?;
                let n = match self.pinned_header(r) {
                    Some((len, _)) => len,
                    None => self.vec_len_inline(r),
                };
                self.push(Ty::S(Kind::U64), Val::One(n), i);
            }
            B::VecImmBorrow(_) | B::VecMutBorrow(_) => {
                let idx = self.pop_kind(Kind::U64)?.one()?;
                let fused = self.take_fused_sub(idx)?;
                let (t, r) = self.pop_ref()?;
                let el = Self::elem_of(&t)?;
                let data = match self.pinned_header(r) {
                    Some((len, data)) => {
                        let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, idx, len);
                        self.index_fail_if(oob, i, &el, r, idx, fused)?;
                        data
                    }
                    None => {
                        let p = self.b.ins().load(types::I64, Self::vmem(), r, 0);
                        let null = self.b.ins().icmp_imm_u(IntCC::Equal, p, 0);
                        self.index_fail_if(null, i, &el, r, idx, fused)?;
                        let len = self.b.ins().load(types::I64, Self::mem(), p, 0);
                        let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, idx, len);
                        self.index_fail_if(oob, i, &el, r, idx, fused)?;
                        self.b.ins().load(self.ptr, Self::mem(), p, 16)
                    }
                };
                let scaled = self.b.ins().imul_imm_s(idx, el.size as i64);
                let a = self.b.ins().iadd(data, scaled);
                self.push(Ty::R(el), Val::One(a), i);
            }
            B::VecPushBack(_) => self.lower_vec_push_back(i)?,
            B::VecPopBack(_) => self.lower_vec_pop_back(i)?,
            B::VecSwap(_) => self.lower_vec_swap(i)?,
            B::Add | B::Sub | B::Mul | B::Div | B::Mod => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                let k = ka.kind().filter(|k| Some(*k) == kb.kind() && k.is_integer());
                let k = k.ok_or_else(|| malformed("arithmetic on mismatched or non-integer operands"))?;
                let r = self.arith(&ins, k, a, b, i)?;
                self.push(Ty::S(k), r, i);
            }
            B::BitOr | B::BitAnd | B::Xor => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                let k = ka.kind().filter(|k| Some(*k) == kb.kind() && k.is_integer());
                let k = k.ok_or_else(|| malformed("bitwise operation on mismatched operands"))?;
                let mut out = Vec::new();
                for (x, y) in a.lanes().into_iter().zip(b.lanes()) {
                    out.push(match ins {
                        B::BitOr => self.b.ins().bor(x, y),
                        B::BitAnd => self.b.ins().band(x, y),
                        _ => self.b.ins().bxor(x, y),
                    });
                }
                let t = Ty::S(k);
                let r = Val::from_lanes(&t, &out);
                self.push(t, r, i);
            }
            B::Or | B::And => {
                let b = self.pop_kind(Kind::Bool)?.one()?;
                let a = self.pop_kind(Kind::Bool)?.one()?;
                let r = if matches!(ins, B::Or) { self.b.ins().bor(a, b) } else { self.b.ins().band(a, b) };
                self.push(Ty::S(Kind::Bool), Val::One(r), i);
            }
            B::Not => {
                let a = self.pop_kind(Kind::Bool)?.one()?;
                let r = self.bool_not(a);
                self.push(Ty::S(Kind::Bool), Val::One(r), i);
            }
            B::Eq | B::Neq => {
                let (tb, b) = self.pop()?;
                let (ta, a) = self.pop()?;
                if !ta.compatible(&tb) {
                    return Err(malformed("equality on mismatched operands"));
                }
                let eq = match &ta {
                    Ty::S(k) => self.scalar_eq(*k, a, b)?,
                    Ty::M(l) => {
                        let lp = self.layout_ptr(l);
                        let (pa, pb) = (a.addr()?, b.addr()?);
                        let r = self.call_helper(HelperId::value_eq(), &[self.ctx, lp, pa, pb])?;
                        self.drop_value(l, pa)?;
                        self.drop_value(l, pb)?;
                        self.b.ins().icmp_imm_u(IntCC::NotEqual, r, 0)
                    }
                    Ty::R(t) => {
                        let (pa, pb) = (a.one()?, b.one()?);
                        match Ty::of(t) {
                            Ty::S(k) => {
                                let (x, y) = (self.load_scalar(k, pa, 0), self.load_scalar(k, pb, 0));
                                self.scalar_eq(k, x, y)?
                            }
                            _ => {
                                let lp = self.layout_ptr(t);
                                let r = self.call_helper(HelperId::value_eq(), &[self.ctx, lp, pa, pb])?;
                                self.b.ins().icmp_imm_u(IntCC::NotEqual, r, 0)
                            }
                        }
                    }
                };
                let r = if matches!(ins, B::Eq) { eq } else { self.bool_not(eq) };
                self.push(Ty::S(Kind::Bool), Val::One(r), i);
            }
            B::Lt | B::Gt | B::Le | B::Ge => {
                let (kb, b) = self.pop()?;
                let (ka, a) = self.pop()?;
                let k = ka.kind().filter(|k| Some(*k) == kb.kind() && k.is_integer());
                let ka = k.ok_or_else(|| malformed("comparison on mismatched operands"))?;
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
                let r = if matches!(ka, Kind::U256 | Kind::I256) {
                    self.wide_compare(ka, &ins, &a, &b)?
                } else if ka.is_wide() {
                    let opc = match ins {
                        B::Lt => op::LT,
                        B::Gt => op::GT,
                        B::Le => op::LE,
                        _ => op::GE,
                    };
                    self.spill(&a, 0);
                    self.spill(&b, 32);
                    let args = [
                        self.ctx,
                        self.slot_addr(64),
                        self.slot_addr(0),
                        self.slot_addr(32),
                        self.code_const(ka.code() | opc << 4),
                    ];
                    self.call_status(HelperId::int_cmp(), &args, i)?;
                    self.b.ins().stack_load(self.ptr, types::I8, self.scratch, 64)
                } else {
                    self.b.ins().icmp(cc, a.one()?, b.one()?)
                };
                self.push(Ty::S(Kind::Bool), Val::One(r), i);
            }
            B::Shl | B::Shr => {
                let amt = self.pop_kind(Kind::U8)?.one()?;
                let (t, a) = self.pop()?;
                let k = t
                    .kind()
                    .filter(|k| k.is_integer() && !k.is_signed())
                    .ok_or_else(|| malformed("shift of a non-unsigned-integer"))?;
                let fast = if k == Kind::U256 { self.u256_shift_const(matches!(ins, B::Shl), &a, amt)? } else { None };
                let r = if let Some(v) = fast {
                    v
                } else if k.is_wide() {
                    self.spill(&a, 0);
                    let dir = if matches!(ins, B::Shl) { op::SHL } else { op::SHR };
                    let args =
                        [self.ctx, self.slot_addr(64), self.slot_addr(0), amt, self.code_const(k.code() | dir << 4)];
                    self.call_status(HelperId::int_shift(), &args, i)?;
                    self.reload(k, 64)
                } else {
                    let over = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, amt, k.bits() as i64);
                    let dir = if matches!(ins, B::Shl) { op::SHL } else { op::SHR };
                    self.arith_fail_if(over, i, Redo::Shift(k.code() | dir << 4, a, amt))?;
                    let x = a.one()?;
                    let n = if k == Kind::U128 { self.b.ins().uextend(types::I64, amt) } else { amt };
                    Val::One(if matches!(ins, B::Shl) { self.b.ins().ishl(x, n) } else { self.b.ins().ushr(x, n) })
                };
                self.push(Ty::S(k), r, i);
            }
            B::CastU8
            | B::CastU16
            | B::CastU32
            | B::CastU64
            | B::CastU128
            | B::CastU256
            | B::CastI8
            | B::CastI16
            | B::CastI32
            | B::CastI64
            | B::CastI128
            | B::CastI256 => {
                let dst = Kind::cast_target(&ins).ok_or_else(|| malformed("cast target"))?;
                let (t, a) = self.pop()?;
                let src = t.kind().filter(|k| k.is_integer()).ok_or_else(|| malformed("cast of a non-integer"))?;
                let redo = Redo::Cast(src.code() | dst.code() << 4, a);
                let fast = if src.is_wide() || dst.is_wide() { self.wide_cast(src, dst, &a, i, redo)? } else { None };
                let r = if let Some(v) = fast {
                    v
                } else if src.is_wide() || dst.is_wide() {
                    self.spill(&a, 0);
                    let args = [
                        self.ctx,
                        self.slot_addr(64),
                        self.slot_addr(0),
                        self.code_const(src.code() | dst.code() << 4),
                    ];
                    self.call_status(HelperId::int_cast(), &args, i)?;
                    self.reload(dst, 64)
                } else {
                    Val::One(self.cast_inline(src, dst, a.one()?, i, redo)?)
                };
                self.push(Ty::S(dst), r, i);
            }
            B::Negate => {
                let (t, a) = self.pop()?;
                let k =
                    t.kind().filter(|k| k.is_signed()).ok_or_else(|| malformed("negate of a non-signed-integer"))?;
                let r = if k.is_wide() {
                    self.spill(&a, 0);
                    let args = [self.ctx, self.slot_addr(64), self.slot_addr(0), self.code_const(k.code())];
                    self.call_status(HelperId::int_negate(), &args, i)?;
                    self.reload(k, 64)
                } else {
                    let x = a.one()?;
                    let min = self.iconst_ty(k.ir_type(), k.min_bits());
                    let is_min = self.b.ins().icmp(IntCC::Equal, x, min);
                    self.arith_fail_if(is_min, i, Redo::Negate(k.code(), a))?;
                    Val::One(self.b.ins().ineg(x))
                };
                self.push(Ty::S(k), r, i);
            }
            B::Abort => {
                let code = self.pop_kind(Kind::U64)?.one()?;
                self.store_ctx(code, off::ABORT_CODE);
                let fl = self.b.ins().iconst(types::I32, ExecContext::HAS_SUB_STATUS as i64);
                self.store_ctx(fl, off::FLAGS);
                let st = self.b.ins().iconst(types::I32, status_number(StatusCode::ABORTED));
                let offv = self.b.ins().iconst(types::I32, i as i64);
                self.gas_out();
                let refund = self.refund_at(i);
                self.jump_to_fail(st, offv, refund);
            }
            B::AbortMsg => {
                // As the interpreter: the message's bytes are charged, then
                // its length and encoding checked, then the code popped.
                let (_, msg) = self.pop_mem()?;
                let code = self.pop_kind(Kind::U64)?.one()?;
                let len = self.vec_len_inline(msg);
                if let Some(p) = self.target.aptos {
                    // Aptos prices the message per byte on top of the
                    // constant base (`lower/aptos.rs`), and releases its
                    // heap part, a `vector<u8>` of `len` bytes.
                    use movejit_runtime::gas::aptos::SiteCounts;
                    let at = |units| {
                        p.costs
                            .site_cost(movejit_format::Opcode::AbortMsg, SiteCounts { units, ..SiteCounts::default() })
                    };
                    let per_byte = at(1).saturating_sub(at(0));
                    let amount = self.saturating_mul_const(len, per_byte);
                    self.charge_dynamic_spent(amount, i);
                    let heap = self.saturating_mul_const(len, p.sizes.vector_heap(movejit_runtime::ScalarKind::U8, 1));
                    self.memory_release(heap);
                }
                if let Some(cost) = self.target.cost {
                    if cost.per_byte > 0 {
                        let (amount, of) = {
                            let pb = self.b.ins().iconst(types::I64, cost.per_byte as i64);
                            self.b.ins().umul_overflow(len, pb)
                        };
                        let max = self.b.ins().iconst(types::I64, -1);
                        let amount = self.b.ins().select(of, max, amount);
                        self.charge_dynamic_value(amount, i);
                    }
                }
                // The shim checks the length too (an always-failing path).
                let max = self.b.ins().iconst(types::I64, self.target.max_abort_message as i64);
                self.call_helper(HelperId::abort_msg(), &[self.ctx, code, msg, max])?;
                let st = self.b.ins().iconst(types::I32, 0);
                let offv = self.b.ins().iconst(types::I32, i as i64);
                self.gas_out();
                let refund = self.refund_at(i);
                self.jump_to_fail(st, offv, refund);
            }
            B::Call(h) => self.call(h, Vec::new(), i)?,
            B::CallGeneric(fi) => {
                let inst =
                    m.function_instantiations.get(fi.idx()).ok_or_else(|| malformed("function instantiation index"))?;
                let targs = self.inst_args(inst.type_parameters)?;
                self.call(inst.handle, targs, i)?
            }
            ref b if b.is_global_storage() => self.lower_global(b, i)?,
            B::PackClosure(h, mask) => self.pack_closure(h, Vec::new(), mask.0, i)?,
            B::PackClosureGeneric(fi, mask) => {
                let inst =
                    m.function_instantiations.get(fi.idx()).ok_or_else(|| malformed("function instantiation index"))?;
                let targs = self.inst_args(inst.type_parameters)?;
                self.pack_closure(inst.handle, targs, mask.0, i)?
            }
            B::CallClosure(sig) => self.call_closure(sig, i)?,
            // Every instruction lowers today; kept for new opcodes.
            #[allow(unreachable_patterns)]
            other => {
                return Err(unsupported(format!("instruction {}", other.opcode().name())));
            }
        }
        Ok(())
    }

    /// `!v` for a boolean: a comparison's complement where `v` is one, so
    /// a branch on it still fuses with the compare.
    fn bool_not(&mut self, v: Value) -> Value {
        let dfg = &self.b.func.dfg;
        let data = dfg.value_def(v).inst().map(|inst| dfg.insts[inst]);
        match data {
            Some(InstructionData::IntCompare { opcode: Opcode::Icmp, args: [x, y], cond }) => {
                self.b.ins().icmp(cond.complement(), x, y)
            }
            _ => self.b.ins().bxor_imm_u(v, 1),
        }
    }

    fn scalar_eq(&mut self, k: Kind, a: Val, b: Val) -> CompileResult<Value> {
        Ok(if k.is_wide() {
            let (x, y) = (a.wide()?, b.wide()?);
            let mut acc = self.b.ins().bxor(x[0], y[0]);
            for l in 1..4 {
                let d = self.b.ins().bxor(x[l], y[l]);
                acc = self.b.ins().bor(acc, d);
            }
            self.b.ins().icmp_imm_u(IntCC::Equal, acc, 0)
        } else {
            self.b.ins().icmp(IntCC::Equal, a.one()?, b.one()?)
        })
    }

    /// The callee a call instruction names (declared once per function).
    fn callee_ref(&mut self, h: FunctionHandleIndex, targs: Vec<RType>) -> CompileResult<std::rc::Rc<CalleeRef>> {
        if let Some(c) = self.callees.get(&(h, targs.clone())) {
            return Ok(c.clone());
        }
        let c = std::rc::Rc::new(self.env.callee(self.target.module_idx, h, targs.clone(), self.b.func)?);
        self.callees.insert((h, targs), c.clone());
        Ok(c)
    }

    fn call(&mut self, h: FunctionHandleIndex, targs: Vec<RType>, i: usize) -> CompileResult<()> {
        let type_args = targs.clone();
        let callee = self.callee_ref(h, targs)?;
        if self.stack.len() < callee.params.len() {
            return Err(malformed("too few arguments on the stack for a call"));
        }
        if callee.native == Some(crate::engine::MISSING_NATIVE) {
            return self.call_missing_native(h, &callee, i);
        }
        if let Some(site) = callee.native {
            // (Under Aptos's schedule every native runs on the meter: these
            // through `aptos_native_fast`.)
            let fast = self.fast_native_op(h, &callee);
            if let Some(op) = fast.filter(|_| self.target.aptos.is_none()) {
                return self.lower_fast_native(op, &callee, &type_args, i);
            }
            return self.call_native(site, &callee, fast, i);
        }
        let func = callee.func.ok_or_else(|| malformed("callee without code"))?;
        let split = self.stack.len() - callee.params.len();
        let args: Vec<(Ty, Val)> = self.stack.split_off(split);
        self.in_flight = owned_values(&args);
        let mut lanes = vec![self.ctx];
        for ((t, v), want) in args.iter().zip(&callee.params) {
            if !t.compatible(want) {
                return Err(malformed(format!("call argument of the wrong type: {t:?} vs {want:?}")));
            }
            lanes.extend(v.lanes());
        }
        let mut ret_slots = Vec::new();
        for (j, r) in callee.rets.iter().enumerate() {
            if let Ty::M(l) = r {
                let a = self.opslot(split + j, l);
                lanes.push(a);
                ret_slots.push(a);
            }
        }
        let held = self.stack.len() as i64;
        let gas = (callee.gas, GAS_PARAM);
        let results = self.compiled_call(i, held, lanes, gas, |b, lanes| b.ins().call(func, lanes))?;
        let mut at = 1;
        let mut mi = 0;
        for t in &callee.rets {
            let v = match t {
                Ty::M(_) => {
                    mi += 1;
                    Val::Mem(ret_slots[mi - 1])
                }
                _ => {
                    let n = t.lanes(self.ptr).len();
                    let v = Val::from_lanes(t, &results[at..at + n]);
                    at += n;
                    v
                }
            };
            // The callee pushed its results while it ran, against its own
            // (higher) base: nothing to check here.
            self.stack.push((t.clone(), v));
        }
        self.watermark = self.watermark.max(self.stack.len());
        Ok(())
    }

    /// A call of a native through the runtime's bridge: no frame, no depth
    /// check; `native_base` is charged first (the interpreter's
    /// `charge_native(0)`), the native charges its own costs, results are
    /// pushed (and checked) like any instruction's. `fast`: the native's
    /// `native_fast` operation, if it has one (run without the bridge under
    /// Aptos's schedule).
    fn call_native(&mut self, site: u64, callee: &CalleeRef, fast: Option<u64>, i: usize) -> CompileResult<()> {
        // Charged while the arguments are still operands (a failure drops
        // them).
        if let (Some(cost), None) = (self.target.cost, self.target.aptos) {
            self.charge_dynamic(cost.native_base, i);
        }
        let split = self.stack.len() - callee.params.len();
        let args: Vec<(Ty, Val)> = self.stack.split_off(split);
        let n = callee.params.len() + callee.rets.len();
        let table = self.new_slot(8 * n as u32, 8);
        for (k, ((t, v), want)) in args.iter().zip(&callee.params).enumerate() {
            if !t.compatible(want) {
                return Err(malformed("native argument of the wrong type"));
            }
            let p = match t {
                Ty::M(_) => v.addr()?,
                Ty::S(kd) => {
                    let s = self.new_slot(32, 8);
                    let a = self.b.ins().stack_addr(self.ptr, s, 0);
                    self.store_scalar(*kd, v, a, 0);
                    a
                }
                Ty::R(_) => {
                    let s = self.new_slot(8, 8);
                    let a = self.b.ins().stack_addr(self.ptr, s, 0);
                    self.b.ins().store(Self::mem(), v.one()?, a, 0);
                    a
                }
            };
            self.b.ins().stack_store(self.ptr, p, table, 8 * k as i32);
        }
        let mut outs = Vec::new();
        for (j, t) in callee.rets.iter().enumerate() {
            let a = match t {
                Ty::M(l) => self.opslot(split + j, l),
                _ => {
                    let s = self.new_slot(32, 8);
                    self.b.ins().stack_addr(self.ptr, s, 0)
                }
            };
            self.b.ins().stack_store(self.ptr, a, table, 8 * (callee.params.len() + j) as i32);
            outs.push(a);
        }
        let sitev = self.b.ins().iconst(types::I64, site as i64);
        let tp = self.b.ins().stack_addr(self.ptr, table, 0);
        if self.target.aptos.is_some() {
            self.aptos_native(sitev, tp, callee, fast, i)?;
        } else {
            self.call_status(HelperId::call_native(), &[self.ctx, sitev, tp], i)?;
        }
        let mut vals = Vec::new();
        for (t, a) in callee.rets.iter().zip(outs) {
            let v = match t {
                Ty::S(k) => self.load_scalar(*k, a, 0),
                Ty::R(_) => Val::One(self.b.ins().load(self.ptr, Self::mem(), a, 0)),
                Ty::M(_) => Val::Mem(a),
            };
            vals.push((t.clone(), v));
        }
        self.push_all(vals, i);
        Ok(())
    }

    /// `v × c`, saturating at `u64::MAX`.
    fn saturating_mul_const(&mut self, v: Value, c: u64) -> Value {
        let c = self.b.ins().iconst(types::I64, c as i64);
        let (product, of) = self.b.ins().umul_overflow(v, c);
        let max = self.b.ins().iconst(types::I64, -1);
        self.b.ins().select(of, max, product)
    }

    /// Charges a run-time amount at this point of the instruction,
    /// failing with `OUT_OF_GAS` at `offset`.
    fn charge_dynamic_value(&mut self, amount: Value, offset: usize) {
        let gas = self.gas_get();
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, amount);
        self.fail_if(short, StatusCode::OUT_OF_GAS, offset);
        let left = self.b.ins().isub(gas, amount);
        self.gas_set(left);
    }

    /// [`charge_dynamic_value`](Self::charge_dynamic_value) under Aptos's
    /// schedule: a charge that does not fit is still spent (the gas left
    /// wraps below zero), so that the meter settles it as the one charge
    /// that fails, with the interpreter's status and gas
    /// (`AptosMeter::charge_compiled`).
    fn charge_dynamic_spent(&mut self, amount: Value, offset: usize) {
        let gas = self.gas_get();
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, amount);
        let left = self.b.ins().isub(gas, amount);
        self.gas_set(left);
        self.fail_if(short, StatusCode::OUT_OF_GAS, offset);
    }

    /// Charges a cost known only at this point of the instruction (after
    /// its own checks), failing with `OUT_OF_GAS` at `offset`.
    fn charge_dynamic(&mut self, amount: u64, offset: usize) {
        if amount == 0 {
            return;
        }
        let gas = self.gas_get();
        let c = self.b.ins().iconst(types::I64, amount as i64);
        let short = self.b.ins().icmp(IntCC::UnsignedLessThan, gas, c);
        self.fail_if(short, StatusCode::OUT_OF_GAS, offset);
        let left = self.b.ins().isub(gas, c);
        self.gas_set(left);
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
        if matches!(k, Kind::U256 | Kind::I256) && (opc == op::ADD || opc == op::SUB) {
            return self.wide_add_sub(k, opc == op::ADD, &a, &b, i);
        }
        if opc == op::MUL && matches!(k, Kind::U128 | Kind::U256 | Kind::I256) {
            return self.wide_mul(k, a, b, i);
        }
        if !inline {
            return self.helper_binop(opc, k, a, b, i);
        }
        let (x, y) = (a.one()?, b.one()?);
        let s = k.is_signed();
        // Only locals never borrowed: nothing but `st_loc` writes them.
        let counter_step = !s
            && self.counters.step_fits(self.code, self.block_start, i)
            && matches!(self.code.get(i.wrapping_sub(2)), Some(Bytecode::CopyLoc(l) | Bytecode::MoveLoc(l))
                if matches!(self.locals.get(*l as usize), Some(Local::Var(..))));
        if counter_step {
            let r = if opc == op::ADD { self.b.ins().iadd(x, y) } else { self.b.ins().isub(x, y) };
            return Ok(Val::One(r));
        }
        let redo = Redo::Bin(k.code() | opc << 4, a, b);
        let r = match opc {
            // Unsigned add and sub up to 64 bits test with a compare,
            // which x86-64 fuses with its branch (`cmp; jb`).
            op::ADD if !s && k.bits() <= 64 => {
                let r = self.b.ins().iadd(x, y);
                let of = self.b.ins().icmp(IntCC::UnsignedLessThan, r, y);
                // The failure site recomputes the left operand (r - y), so
                // it need not outlive the add: a loop's accumulator keeps
                // one register.
                let code = k.code() | opc << 4;
                self.arith_fail_if_lazy(of, i, HelperId::int_binop(), |lw| {
                    let r = lw.opaque(of, r);
                    Redo::Bin(code, Val::One(lw.b.ins().isub(r, y)), b)
                })?;
                r
            }
            op::SUB if !s && k.bits() <= 64 => match self.iconst_of(y) {
                // `x - c` wraps iff the result is above `MAX - c`: the test
                // reads only the result and the failure site recomputes
                // `x`, so `x` need not outlive the sub (`n - 1` of a
                // spilled `n` reloads it once).
                Some(c) if self.fusable_sub(i, k, c) => self.lower_fused_sub(x, y, b, c, k.code() | opc << 4, i),
                Some(c) => {
                    // Not `x + (-c)` as the fused sub: Cranelift rematerialises
                    // an add of a constant at each use, which keeps `x` alive
                    // in place of the result (sort_quick's `hi - 1` spilled
                    // its vector reference).
                    let r = self.b.ins().isub(x, y);
                    let lim = self.iconst_ty(k.ir_type(), (k.max_bits() as u64).wrapping_sub(c) as u128);
                    let of = self.b.ins().icmp(IntCC::UnsignedGreaterThan, r, lim);
                    let code = k.code() | opc << 4;
                    self.arith_fail_if_lazy(of, i, HelperId::int_binop(), |lw| {
                        let r = lw.opaque(of, r);
                        Redo::Bin(code, Val::One(lw.b.ins().iadd(r, y)), b)
                    })?;
                    r
                }
                None => {
                    let of = self.b.ins().icmp(IntCC::UnsignedLessThan, x, y);
                    self.arith_fail_if(of, i, redo)?;
                    self.b.ins().isub(x, y)
                }
            },
            // Unsigned `x * c` (either side constant) wraps iff the other
            // operand is above `MAX / c`: a compare and branch before a
            // plain multiply, which leaves x86-64's `mul` (its flag
            // materialised and tested, `rdx` clobbered) out of the loop.
            op::MUL if !s && k.bits() <= 64 && self.iconst_of(y).or(self.iconst_of(x)).is_some() => {
                let (v, c) = match self.iconst_of(y) {
                    Some(c) => (x, c),
                    None => (y, self.iconst_of(x).unwrap_or(0)),
                };
                let max = k.max_bits() as u64;
                if let Some(lim) = max.checked_div(c).filter(|&l| l < max) {
                    let lim = self.iconst_ty(k.ir_type(), lim as u128);
                    let of = self.b.ins().icmp(IntCC::UnsignedGreaterThan, v, lim);
                    self.arith_fail_if(of, i, redo)?;
                }
                self.b.ins().imul(x, y)
            }
            op::ADD | op::SUB | op::MUL => {
                let (r, of) = match (opc, s) {
                    (op::ADD, false) => self.b.ins().uadd_overflow(x, y),
                    (op::ADD, true) => self.b.ins().sadd_overflow(x, y),
                    (op::SUB, false) => self.b.ins().usub_overflow(x, y),
                    (op::SUB, true) => self.b.ins().ssub_overflow(x, y),
                    (_, false) => self.b.ins().umul_overflow(x, y),
                    (_, true) => self.b.ins().smul_overflow(x, y),
                };
                self.arith_fail_if(of, i, redo)?;
                r
            }
            _ => {
                // Division traps in hardware: test the divisor (and MIN / -1).
                let zero = self.b.ins().icmp_imm_u(IntCC::Equal, y, 0);
                self.arith_fail_if(zero, i, redo)?;
                if s {
                    let min = self.iconst_ty(k.ir_type(), k.min_bits());
                    let m1 = self.iconst_ty(k.ir_type(), u128::MAX);
                    let a_min = self.b.ins().icmp(IntCC::Equal, x, min);
                    let b_m1 = self.b.ins().icmp(IntCC::Equal, y, m1);
                    let both = self.b.ins().band(a_min, b_m1);
                    self.arith_fail_if(both, i, redo)?;
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

    /// A range-checked cast between kinds of at most 128 bits (`redo`: the
    /// instruction it is part of, for its error).
    fn cast_inline(&mut self, src: Kind, dst: Kind, x: Value, i: usize, redo: Redo) -> CompileResult<Value> {
        let (sb, db) = (src.bits(), dst.bits());
        let wty = if sb >= db { src.ir_type() } else { dst.ir_type() };
        let xw = if sb < db {
            if src.is_signed() {
                self.b.ins().sextend(wty, x)
            } else {
                self.b.ins().uextend(wty, x)
            }
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
            self.arith_fail_if(b, i, redo)?;
        }
        Ok(if db < wty.bits() { self.b.ins().ireduce(dst.ir_type(), xw) } else { xw })
    }
}

/// The values of `operands` that own heap memory, with their layouts.
/// Where a failure site's owned operand lives (`Lowerer::drop_at`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum DropAt {
    /// `stack_addr slot + offset`.
    Slot(StackSlot, i32),
    /// A parameter of the entry block (an in-memory argument).
    Param(Value),
}

fn owned_values(operands: &[(Ty, Val)]) -> Vec<(Arc<FlatLayout>, Value)> {
    operands
        .iter()
        .filter_map(|(t, v)| match (t, v) {
            (Ty::M(l), Val::Mem(a)) if l.owns_heap => Some((l.clone(), *a)),
            _ => None,
        })
        .collect()
}

fn unreachable_ins<T>() -> CompileResult<T> {
    Err(malformed("unexpected instruction"))
}

/// The flat layout of a scalar kind (for borrowed scalar locals).
fn scalar_layout(k: Kind) -> Arc<FlatLayout> {
    use movejit_runtime::layout::Layout as L;
    let l = match k {
        Kind::Bool => L::Bool,
        Kind::U8 => L::U8,
        Kind::U16 => L::U16,
        Kind::U32 => L::U32,
        Kind::U64 => L::U64,
        Kind::U128 => L::U128,
        Kind::U256 => L::U256,
        Kind::I8 => L::I8,
        Kind::I16 => L::I16,
        Kind::I32 => L::I32,
        Kind::I64 => L::I64,
        Kind::I128 => L::I128,
        Kind::I256 => L::I256,
        Kind::Address => L::Address,
    };
    // Scalar layouts never fail (depth 1).
    Arc::new(FlatLayout::from_layout(&l, 1).unwrap_or(FlatLayout {
        size: k.bytes() as u32,
        align: 1,
        owns_heap: false,
        bytewise_eq: true,
        shape: Shape::U8,
    }))
}

#[allow(dead_code)]
fn _sig_token_unused(_: &SignatureToken) {}

impl Lowerer<'_, '_> {
    /// A call of compiled code at instruction `i`, `held` operand-stack
    /// bytes below it, as every call site makes it: the depth check (the
    /// interpreter fails the call that would make frame `max_depth + 1`, at
    /// the call instruction), the frame's gas charge, depth + 1 and the
    /// stack base past `held` for the callee, the call `emit` issues, a
    /// failure propagated, then depth and stack base restored. `gas`: the
    /// callee's convention, and where in `lanes` the gas left goes when it
    /// takes it in registers (it comes back as the result `GAS_RESULT`; the
    /// context's copy is not written: a failing callee writes it on its way
    /// out). Returns the call's results without the gas (the status word
    /// first).
    fn compiled_call(
        &mut self,
        i: usize,
        held: i64,
        mut lanes: Vec<Value>,
        (gas, gas_at): (GasAbi, usize),
        emit: impl FnOnce(&mut FunctionBuilder<'_>, &[Value]) -> cranelift_codegen::ir::Inst,
    ) -> CompileResult<Vec<Value>> {
        let depth = self.depth.ok_or_else(|| malformed("no prologue"))?;
        // Recorded by the fast copy too, which runs below the limit and
        // leaves the check out.
        self.depth_checked = true;
        if let Some(max) = self.max_depth {
            let over = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, depth, max);
            self.fail_if(over, StatusCode::CALL_STACK_OVERFLOW, i);
        }
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
        let in_registers = gas.in_registers();
        if in_registers {
            let g = self.gas_get();
            lanes.insert(gas_at, g);
        } else {
            self.gas_out();
        }
        // The callee owns its arguments from here on.
        self.in_flight.clear();
        let call = emit(&mut self.b, &lanes);
        let mut results = self.b.inst_results(call).to_vec();
        let left = in_registers.then(|| results.remove(GAS_RESULT));
        let cont = self.b.create_block();
        self.propagate_if(results[0], cont);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
        match left {
            Some(g) => self.gas_set(g),
            None => self.gas_in(),
        }
        self.store_ctx(depth, off::DEPTH);
        if held > 0 {
            self.store_ctx(base, off::STACK_BASE);
        }
        Ok(results)
    }
}
