//! The engine: one `cranelift_jit::JITModule` (the code cache), the modules
//! it knows, the flat layouts and constants compiled code points to, and the
//! compiled function instantiations.
//!
//! Compiling an instantiation compiles everything it can call (the
//! transitive closure of its direct calls) in one batch, defines every
//! declared function, then finalizes. A callee that does not compile gets
//! a stub, so the code cache never holds an unresolved symbol: inside an
//! interpreter session an interpreter stub (`engine/interp_stub.rs`: the callee
//! runs interpreted and its callers still compile), otherwise one that
//! reports `UNKNOWN_INVARIANT_VIOLATION_ERROR` (and its callers do not
//! compile). Runtime helpers are imported with
//! `Linkage::Import` and resolved from the JIT builder's symbol table, so on
//! aarch64 cranelift-jit routes the calls through veneers that reach any
//! address.

#![forbid(unsafe_code)]

mod closures;
mod interp_stub;

use crate::error::{CompileError, CompileResult};
use crate::exec::ConstPool;
use crate::gas::CostTable;
use crate::helpers::{self, HelperId};
use crate::kind::KindIr;
use crate::lower::{
    lower_function, move_signature, return_failure, CalleeRef, GasAbi, LowerEnv, Target, CTX_GAS_LEFT, CTX_STATUS,
    GAS_PARAM, GAS_RESULT,
};
use crate::ty::Ty;
use crate::types::{TypeLimits, Types};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{
    types, AbiParam, FuncRef, Function, InstBuilder, MemFlagsData, Signature, Type, UserFuncName,
};
use cranelift_codegen::isa::{CallConv, OwnedTargetIsa, TargetFrontendConfig};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module, ModuleReloc};
use movejit_format::{AccountAddress, CompiledModule, FunctionHandleIndex, StatusCode, StatusFlavour};
use movejit_loader::LoadedModule;
use movejit_runtime::flat::shims::NativeSite;
use movejit_runtime::flat::{FlatLayout, FlatLayouts};
use movejit_runtime::gas::aptos::AptosPricing;
use movejit_runtime::{Limits, ModuleId, NativeRegistry, Type as RType};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Engine settings.
#[derive(Clone)]
pub struct JitConfig {
    /// The interpreter's cost table; `None` compiles unmetered code (no gas
    /// code at all).
    pub cost: Option<CostTable>,
    /// Compile code charging Aptos's schedule, with `cost` its unit part
    /// (metered code needs one; [`CostTable::zero`]: Aptos charges no
    /// per-frame, per-byte or native base costs of its own).
    pub aptos: Option<Arc<AptosPricing>>,
    /// Frames that may be active at once (Move VM: 1,025).
    pub max_call_depth: u64,
    /// Operand-stack values across all frames (Move VM: 1,024).
    pub max_operand_stack: u64,
    /// Host stack of the thread executions run on.
    pub stack_size: usize,
    /// Functions with more instructions are not compiled (`Unsupported`), so
    /// compile time and code size stay bounded; the engine interprets them.
    pub max_code_len: usize,
    /// Functions whose lowered IR has more instructions are not compiled
    /// (`Unsupported`, checked while lowering, before code generation,
    /// the costly part: it bounds one function's compile time and memory);
    /// [`BASELINE_IR_FACTOR`] times as many on the baseline tier.
    pub max_ir_insts: usize,
    /// Functions with more bytecode instructions are compiled by the
    /// baseline tier (`opt_level=none`, single-pass register allocation):
    /// it compiles long functions several times faster, for bigger code
    /// (issue 16; `cargo bench -p movejit-benches --bench long_function`).
    /// 0: everything baseline; `usize::MAX`: nothing.
    pub baseline_above: usize,
    /// Functions of at most this many bytecode instructions that call or
    /// push are compiled twice: a fast copy without operand-stack and
    /// call-depth checks, and a checking copy that frames near a limit run
    /// (`lower::UNCHECKED_COPY_MAX_LEN` by default). Faster calls; inside a
    /// session the checking copy is an interpreter stub (Aptos framework,
    /// unmetered: 6,989 KiB of machine code split, 7,050 KiB not), in a
    /// standalone engine it is compiled too (+47% code); 0: never.
    pub unchecked_copy_max_len: usize,
    /// Type, value-depth and vector limits (the interpreter's).
    pub limits: Limits,
    /// The natives bound to the modules [`JitEngine::add_module`] loads
    /// (the interpreter's registry; a module of the loader comes bound).
    pub natives: NativeRegistry,
    /// Compiled code runs inside an interpreter session
    /// ([`JitEngine::execute_in_session`]): global storage and every
    /// registered native compile. Without one (standalone `execute`) they
    /// are refused at compile time, except the stateless stdlib natives.
    pub session_host: bool,
}

impl Default for JitConfig {
    fn default() -> Self {
        JitConfig {
            cost: None,
            aptos: None,
            max_call_depth: 1025,
            max_operand_stack: 1024,
            stack_size: 256 << 20,
            max_code_len: 1 << 16,
            max_ir_insts: MAX_IR_INSTS,
            baseline_above: BASELINE_ABOVE,
            unchecked_copy_max_len: crate::lower::UNCHECKED_COPY_MAX_LEN,
            limits: Limits::default(),
            natives: NativeRegistry::with_stdlib(),
            session_host: false,
        }
    }
}

/// Compile time budgeted per bytecode instruction before a function is
/// lowered ([`JitEngine::compile_until`]): above what the `long_function`
/// bench measures per instruction on either tier, metered, up to 16,000
/// instructions (20-85 us on a loaded 2-core machine).
pub const EST_COMPILE_NS_PER_INSTR: u64 = 100_000;

/// Default of [`JitConfig::max_ir_insts`]: bounds one function's compile
/// to about 0.7 s and 90 MB (measured: 134,153 IR instructions of metered
/// checked `add`s, optimizing tier, loaded 2-core machine), 13x the
/// largest function of the Aptos framework (9,655) and above the largest
/// of the Aptos calibration corpus. The lowering stops as soon as a
/// function grows past it (issue 16).
pub const MAX_IR_INSTS: usize = 1 << 17;

/// How many times [`JitConfig::max_ir_insts`] a function compiled by the
/// baseline tier may lower to: its compile time and memory are linear in
/// its IR (1.7-3.2 us and ~250 bytes per IR instruction on a 2-core machine
/// at load 5-8), so the default cap of 1,310,720 bounds one function to
/// 2.2-4.2 s and ~330 MB there. A straight-line function of 64,850 checked `add`s
/// lowers to 583,274 IR instructions unmetered and 1,101,728 metered
/// (engine test `big_function`).
pub const BASELINE_IR_FACTOR: usize = 10;

/// Default of [`JitConfig::baseline_above`] (bytecode instructions).
pub use movejit_runtime::config::BASELINE_ABOVE;

/// A Cranelift ISA for the host with `shared` and `tier` flags.
fn host_isa(shared: &[(&str, &str)], tier: &[(&str, &str)]) -> CompileResult<OwnedTargetIsa> {
    let mut flags = settings::builder();
    for (name, value) in shared.iter().chain(tier) {
        flags.set(name, value).map_err(codegen)?;
    }
    let isa = cranelift_native::builder().map_err(|e| codegen(format!("host machine not supported: {e}")))?;
    isa.finish(settings::Flags::new(flags)).map_err(codegen)
}

/// One function instantiation: module number, definition index, type
/// arguments (fully instantiated runtime types).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceKey {
    pub module: u32,
    pub fdef: u16,
    pub type_args: Vec<RType>,
}

#[derive(Debug)]
enum State {
    Queued,
    Defined,
    /// Does not compile; its function is an interpreter stub (sessions).
    Interpreted(CompileError),
    Failed(CompileError),
}

#[derive(Debug)]
struct Instance {
    func: FuncId,
    params: Vec<Ty>,
    rets: Vec<Ty>,
    /// How its compiled function takes the gas left.
    gas: GasAbi,
    state: State,
    callees: Vec<InstanceKey>,
}

/// What `--emit` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Clif,
    Asm,
}

/// The JIT engine and its code cache.
pub struct JitEngine {
    pub(crate) config: JitConfig,
    /// The loader's modules, by number (compiled code reports locations
    /// with it); one version per module id.
    modules: Vec<Arc<LoadedModule>>,
    by_id: HashMap<ModuleId, u32>,
    jit: Option<JITModule>,
    /// The baseline tier's ISA (the JIT module's own ISA is the optimizing
    /// tier): same target and ABI flags, quick code generation.
    baseline: OwnedTargetIsa,
    call_conv: CallConv,
    ptr: Type,
    frontend: TargetFrontendConfig,
    instances: HashMap<InstanceKey, Instance>,
    queue: Vec<InstanceKey>,
    helpers: HashMap<HelperId, FuncId>,
    entries: HashMap<InstanceKey, (FuncId, Option<usize>)>,
    fctx: FunctionBuilderContext,
    symbols: usize,
    /// Layouts compiled code points to (live as long as the code).
    pub(crate) layouts: FlatLayouts,
    /// Constants compiled code copies from (live as long as the code).
    consts: ConstPool,
    /// Native call sites compiled code names by index.
    pub(crate) native_sites: Vec<NativeSite>,
    native_keys: HashMap<InstanceKey, u64>,
    pub(crate) executor: Option<crate::exec::Executor>,
    /// Closure sites and the compiled closure targets (`engine/closures.rs`).
    closures: closures::ClosureState,
    /// Sites of interpreter stubs (`engine/interp_stub.rs`).
    interp_sites: interp_stub::InterpSites,
    /// Machine code bytes defined so far (functions, trampolines, stubs).
    code_bytes: u64,
    /// Bytecode instructions of the functions compiled so far.
    code_instructions: u64,
    /// When the compile under way must be done ([`JitEngine::compile_until`]).
    deadline: Option<Instant>,
}

/// Address space reserved per engine for machine code and data (the whole
/// Aptos framework, metered, is about 25 MiB). Defining more fails with a
/// typed error and the function is interpreted.
const CODE_ARENA_BYTES: usize = 512 << 20;

fn codegen(e: impl std::fmt::Display) -> CompileError {
    CompileError::Codegen(e.to_string())
}

impl JitEngine {
    /// An engine for the host ISA.
    pub fn new(config: JitConfig) -> CompileResult<JitEngine> {
        // Cranelift's IR verifier takes ~10% of compile time: release
        // builds skip it, debug builds and tests keep it. Both tiers share
        // every flag that shapes the ABI.
        let shared = [
            ("enable_multi_ret_implicit_sret", "true"),
            ("preserve_frame_pointers", "true"),
            ("enable_llvm_abi_extensions", "true"),
            ("enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" }),
            // What `JITBuilder::with_flags` sets: long-range relocations.
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
        ];
        let optimizing = host_isa(&shared, &[("opt_level", "speed")])?;
        let baseline = host_isa(&shared, &[("opt_level", "none"), ("regalloc_algorithm", "single_pass")])?;
        let mut builder = JITBuilder::with_isa(optimizing, default_libcall_names());
        for h in HelperId::all() {
            builder.symbol(helpers::symbol(h), h.entry().shim);
        }
        // All of an engine's code and data in one reserved range: functions
        // call each other with 32-bit PC-relative relocations, which the
        // default provider's scattered allocations can put out of range
        // (a panic in cranelift-jit) once other mappings (execution stacks,
        // other engines) fall between them. Reserved address space only;
        // pages are committed as code is defined.
        let arena = cranelift_jit::ArenaMemoryProvider::new_with_size(CODE_ARENA_BYTES)
            .map_err(|e| codegen(format!("reserving the code arena: {e}")))?;
        builder.memory_provider(Box::new(arena));
        let jit = JITModule::new(builder);
        let call_conv = jit.isa().default_call_conv();
        let ptr = jit.isa().pointer_type();
        let frontend = jit.isa().frontend_config();
        let layouts = FlatLayouts::new(movejit_runtime::flat::MAX_FLAT_DEPTH);
        Ok(JitEngine {
            config,
            modules: Vec::new(),
            by_id: HashMap::new(),
            jit: Some(jit),
            baseline,
            call_conv,
            ptr,
            frontend,
            instances: HashMap::new(),
            queue: Vec::new(),
            helpers: HashMap::new(),
            entries: HashMap::new(),
            fctx: FunctionBuilderContext::new(),
            symbols: 0,
            layouts,
            consts: ConstPool::default(),
            native_sites: Vec::new(),
            native_keys: HashMap::new(),
            executor: None,
            closures: Default::default(),
            interp_sites: Default::default(),
            code_bytes: 0,
            code_instructions: 0,
            deadline: None,
        })
    }

    /// Makes a (decoded, verified) module known, loaded with the engine's
    /// natives ([`JitEngine::add_loaded`]); returns its number.
    pub fn add_module(&mut self, module: CompiledModule) -> CompileResult<u32> {
        let loaded = LoadedModule::new(module, &self.config.natives)
            .map_err(|e| CompileError::Malformed(format!("loading a module: {e}")))?;
        self.add_loaded(Arc::new(loaded))
    }

    /// Makes a module of the loader known; returns its number. The same
    /// loaded module (by identity) keeps its number; a later module with
    /// the same id shadows the earlier one.
    pub fn add_loaded(&mut self, module: Arc<LoadedModule>) -> CompileResult<u32> {
        if let Some(&idx) = self.by_id.get(&module.id) {
            if Arc::ptr_eq(&self.modules[idx as usize], &module) {
                return Ok(idx);
            }
        }
        let idx =
            u32::try_from(self.modules.len()).map_err(|_| CompileError::Unsupported("too many modules".into()))?;
        self.by_id.insert(module.id.clone(), idx);
        self.modules.push(module);
        Ok(idx)
    }

    pub fn module(&self, idx: u32) -> Option<&LoadedModule> {
        self.modules.get(idx as usize).map(|m| &**m)
    }

    /// The number of the module `address::name`.
    pub fn module_index(&self, address: &AccountAddress, name: &str) -> Option<u32> {
        self.by_id.get(&ModuleId::new(*address, name)).copied()
    }

    /// The key of `module::function<type_args>`.
    pub fn instance_key(&self, module: u32, function: &str, type_args: &[RType]) -> CompileResult<InstanceKey> {
        let m = self.module(module).ok_or_else(|| CompileError::UnknownFunction(format!("module #{module}")))?;
        let fdef = *m.functions.get(function).ok_or_else(|| CompileError::UnknownFunction(function.to_string()))?;
        Ok(InstanceKey { module, fdef, type_args: type_args.to_vec() })
    }

    /// Parameter and return representations of a declarable instance.
    pub fn instance_signature(&mut self, key: &InstanceKey) -> CompileResult<(Vec<Ty>, Vec<Ty>)> {
        self.env().declare(key)?;
        let inst = &self.instances[key];
        Ok((inst.params.clone(), inst.rets.clone()))
    }

    /// The cached flat layout of a runtime type (datatypes resolved through
    /// the engine's modules).
    pub fn layout_of(&self, ty: &RType) -> CompileResult<Arc<FlatLayout>> {
        self.layouts.layout_of(&self.types(), ty).map_err(|e| CompileError::Unsupported(format!("layout of {ty}: {e}")))
    }

    /// Type resolution over the engine's modules.
    pub(crate) fn types(&self) -> Types<'_> {
        Types { modules: &self.modules, by_id: &self.by_id, limits: type_limits(&self.config.limits) }
    }

    /// The session layout (for tree-value BCS) of a runtime type.
    pub fn value_layout_of(&self, ty: &RType) -> CompileResult<movejit_runtime::Layout> {
        use movejit_runtime::natives::TypeInfo;
        self.types().layout_of(ty).map_err(|e| CompileError::Unsupported(format!("layout of {ty}: {e}")))
    }

    /// Bytes of machine code this engine has defined so far (compiled
    /// functions, entry trampolines and stubs).
    pub fn code_size(&self) -> u64 {
        self.code_bytes
    }

    /// Bytecode instructions of the functions compiled so far (with
    /// [`JitEngine::code_size`]: machine-code bytes per instruction).
    pub fn code_instructions(&self) -> u64 {
        self.code_instructions
    }

    /// [`JitEngine::compile`] under a deadline: a function (the root or one
    /// it calls) whose estimated compile time ([`EST_COMPILE_NS_PER_INSTR`]
    /// per bytecode instruction) does not fit before `deadline`, or that is
    /// reached after it, is not compiled (`Unsupported`: inside a session
    /// it is interpreted). A function whose code generation has started
    /// finishes (Cranelift cannot be interrupted): the size estimate bounds
    /// how far past the deadline that goes.
    pub fn compile_until(&mut self, key: &InstanceKey, deadline: Instant) -> CompileResult<()> {
        self.deadline = Some(deadline);
        let r = self.compile(key);
        self.deadline = None;
        r
    }

    /// `Err` when compiling `key` would not fit before the deadline.
    fn check_deadline(&self, key: &InstanceKey) -> CompileResult<()> {
        let Some(deadline) = self.deadline else { return Ok(()) };
        let len = self.code_len(key) as u64;
        let estimate = Duration::from_nanos(len.saturating_mul(EST_COMPILE_NS_PER_INSTR));
        if Instant::now() + estimate > deadline {
            return Err(CompileError::Unsupported(format!(
                "compile budget: a function of {len} instructions (estimated {estimate:?}) does not fit"
            )));
        }
        Ok(())
    }

    /// Defines `id` from `ctx` by the optimizing tier and counts its
    /// machine code.
    fn define(&mut self, id: FuncId, ctx: &mut Context) -> CompileResult<()> {
        self.jit_mut().define_function(id, ctx).map_err(|e| codegen(format!("{e:?}")))?;
        self.code_bytes += ctx.compiled_code().map_or(0, |c| c.code_buffer().len() as u64);
        Ok(())
    }

    /// Generates `ctx` with the baseline ISA and hands the JIT module the
    /// bytes and relocations (what `define_function` does with its own ISA).
    fn define_baseline(&mut self, id: FuncId, ctx: &mut Context) -> CompileResult<()> {
        let isa = self.baseline.clone();
        // Linear allocation time (`lower/cold.rs`).
        crate::lower::order_exits_after_branches(&mut ctx.func);
        ctx.compile(&*isa, &mut ControlPlane::default()).map_err(|e| codegen(format!("{:?}", e.inner)))?;
        let code = ctx.compiled_code().ok_or_else(|| codegen("no compiled code"))?;
        let relocs: Vec<ModuleReloc> =
            code.buffer.relocs().iter().map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id)).collect();
        let align = code.buffer.alignment as u64;
        let bytes = code.code_buffer();
        let len = bytes.len() as u64;
        self.jit
            .as_mut()
            .expect("JIT module present until drop")
            .define_function_bytes(id, align, bytes, &relocs)
            .map_err(|e| codegen(format!("{e:?}")))?;
        self.code_bytes += len;
        Ok(())
    }

    /// Compiles `key` and everything it calls (no-op when cached).
    pub fn compile(&mut self, key: &InstanceKey) -> CompileResult<()> {
        self.entry_address(key).map(|_| ())
    }

    /// Compiles `key` and returns the address of its entry trampoline
    /// `extern "C" fn(*mut ExecContext, args, rets) -> u32`.
    pub(crate) fn entry_address(&mut self, key: &InstanceKey) -> CompileResult<usize> {
        if let Some((_, Some(p))) = self.entries.get(key) {
            return Ok(*p);
        }
        self.env().declare(key)?;
        let tramp = match self.entries.get(key) {
            Some((id, _)) => *id,
            None => {
                let (params, rets, gas) = {
                    let i = &self.instances[key];
                    (i.params.clone(), i.rets.clone(), i.gas)
                };
                let callee = self.instances[key].func;
                let id = self.define_trampoline(callee, &params, &rets, gas)?;
                self.entries.insert(key.clone(), (id, None));
                id
            }
        };
        self.drain_queue();
        self.publish_closure_targets();
        self.jit_mut().finalize_definitions().map_err(codegen)?;
        self.closure_error(key)?;
        let p = self.jit_mut().get_finalized_function(tramp) as usize;
        self.entries.insert(key.clone(), (tramp, Some(p)));
        Ok(p)
    }

    /// The CLIF text or the disassembly of one instantiation.
    pub fn dump(&mut self, key: &InstanceKey, emit: Emit) -> CompileResult<String> {
        self.env().declare(key)?;
        let (func, checking) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.lower_one(key, true)))
            .unwrap_or_else(|_| Err(CompileError::Codegen("code generator panicked".into())))?;
        if let Some(id) = checking {
            // Defined, so the module holds no declared-only function.
            self.define_checking_copy(key, id)?;
        }
        match emit {
            Emit::Clif => Ok(func.display().to_string()),
            Emit::Asm => {
                let mut ctx = Context::for_function(func);
                ctx.set_disasm(true);
                let jit = self.jit.as_ref().expect("JIT module present until drop");
                ctx.compile(jit.isa(), &mut ControlPlane::default()).map_err(|e| codegen(format!("{e:?}")))?;
                Ok(ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default())
            }
        }
    }

    fn jit_mut(&mut self) -> &mut JITModule {
        // Only `Drop` takes the module out.
        self.jit.as_mut().expect("JIT module present until drop")
    }

    fn env(&mut self) -> Declarer<'_> {
        Declarer {
            jit: self.jit.as_mut().expect("JIT module present until drop"),
            modules: &self.modules,
            by_id: &self.by_id,
            instances: &mut self.instances,
            queue: &mut self.queue,
            helpers: &mut self.helpers,
            call_conv: self.call_conv,
            ptr: self.ptr,
            frontend: self.frontend,
            symbols: &mut self.symbols,
            layouts: &self.layouts,
            consts: &mut self.consts,
            native_sites: &mut self.native_sites,
            native_keys: &mut self.native_keys,
            session_host: self.config.session_host,
            limits: type_limits(&self.config.limits),
            callees: Vec::new(),
            checking: None,
            closures: &mut self.closures,
            metered: self.config.cost.is_some(),
        }
    }

    /// Lowers `key`; with `split`, possibly as a fast copy whose checking
    /// copy (to lower with `split` false) the second value declares.
    fn lower_one(&mut self, key: &InstanceKey, split: bool) -> CompileResult<(Function, Option<FuncId>)> {
        let module = self
            .modules
            .get(key.module as usize)
            .cloned()
            .ok_or_else(|| CompileError::UnknownFunction(format!("module #{}", key.module)))?;
        let (params, rets, gas) = {
            let i = &self.instances[key];
            (i.params.clone(), i.rets.clone(), i.gas)
        };
        let sig = move_signature(self.call_conv, self.ptr, &params, &rets, gas);
        let mut func = Function::with_name_signature(UserFuncName::user(0, self.instances[key].func.as_u32()), sig);
        let cost = self.config.cost.clone();
        let aptos = self.config.aptos.clone();
        let baseline = self.is_baseline(&module, key.fdef);
        let max_ir = self.ir_limit(baseline);
        let target = Target {
            module: &module,
            module_idx: key.module,
            fdef: key.fdef,
            type_args: &key.type_args,
            params,
            rets,
            cost: cost.as_ref(),
            aptos: aptos.as_deref(),
            max_code_len: self.config.max_code_len,
            max_ir_insts: max_ir,
            max_abort_message: self.config.limits.max_abort_message,
            baseline,
            split,
            unchecked_copy_max_len: self.config.unchecked_copy_max_len,
            gas,
        };
        let mut fctx = std::mem::take(&mut self.fctx);
        let mut env = self.env();
        let r = lower_function(&mut env, &mut func, &mut fctx, &target);
        let callees = std::mem::take(&mut env.callees);
        let checking = env.checking.take();
        // A failed lowering leaves the builder context half-used.
        self.fctx = if r.is_ok() { fctx } else { FunctionBuilderContext::new() };
        if let Some(inst) = self.instances.get_mut(key) {
            inst.callees = callees;
        }
        r.and_then(|_| match func.dfg.num_insts() {
            n if n > max_ir => {
                Err(CompileError::Unsupported(format!("function of {n} IR instructions (limit {max_ir})")))
            }
            _ => Ok((func, checking)),
        })
    }

    /// Defines `id`, the checking copy of split instance `key`, which runs
    /// only the rare frames near the operand-stack or call-depth limit.
    /// Where an interpreter stub may run `key` (a session, not under
    /// Aptos's schedule), `id` is that stub: the interpreter fails exactly
    /// where the checks would, and the copy costs neither a second lowering
    /// nor code generation (Aptos framework in a session: 30% less
    /// unmetered machine code). Elsewhere the copy is lowered with every
    /// check and compiled (optimizing tier).
    fn define_checking_copy(&mut self, key: &InstanceKey, id: FuncId) -> CompileResult<()> {
        if self.config.session_host && self.config.aptos.is_none() {
            let (params, rets) = {
                let i = &self.instances[key];
                (i.params.clone(), i.rets.clone())
            };
            return self.define_interp_stub(key, id, &params, &rets);
        }
        let (f, _) = self.lower_one(key, false)?;
        self.define(id, &mut Context::for_function(f))
    }

    /// Whether function `fdef` of `module` is compiled by the baseline tier.
    fn is_baseline(&self, module: &LoadedModule, fdef: u16) -> bool {
        let len = module.function_defs.get(fdef as usize).and_then(|f| f.code.as_ref()).map_or(0, |c| c.code.len());
        len > self.config.baseline_above
    }

    /// The IR limit of a function on the baseline tier (`true`) or the
    /// optimizing tier: [`BASELINE_IR_FACTOR`] times `max_ir_insts` on the
    /// baseline tier, whose compile time and memory grow linearly with size.
    fn ir_limit(&self, baseline: bool) -> usize {
        if baseline {
            self.config.max_ir_insts.saturating_mul(BASELINE_IR_FACTOR)
        } else {
            self.config.max_ir_insts
        }
    }

    /// Bytecode instructions of `key`'s function (0: none or native).
    fn code_len(&self, key: &InstanceKey) -> usize {
        self.modules
            .get(key.module as usize)
            .and_then(|m| m.function_defs.get(key.fdef as usize))
            .and_then(|f| f.code.as_ref())
            .map_or(0, |c| c.code.len())
    }

    /// Lowers and defines every queued instance.
    fn drain_queue(&mut self) {
        while let Some(key) = self.queue.pop() {
            // Cranelift reports most problems as errors but asserts some
            // (unsupported ABI shapes); contain those too.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.check_deadline(&key)?;
                self.lower_one(&key, true).and_then(|(func, checking)| {
                    let id = self.instances[&key].func;
                    let mut ctx = Context::for_function(func);
                    let module = self.modules.get(key.module as usize).cloned();
                    match module {
                        Some(m) if self.is_baseline(&m, key.fdef) => self.define_baseline(id, &mut ctx)?,
                        _ => self.define(id, &mut ctx)?,
                    }
                    if let Some(checking) = checking {
                        self.define_checking_copy(&key, checking)?;
                    }
                    Ok(())
                })
            }))
            .unwrap_or_else(|_| Err(CompileError::Codegen("code generator panicked".into())));
            let state = match result {
                Ok(()) => {
                    self.code_instructions += self.code_len(&key) as u64;
                    State::Defined
                }
                Err(e) => {
                    let (id, params, rets, gas) = {
                        let i = &self.instances[&key];
                        (i.func, i.params.clone(), i.rets.clone(), i.gas)
                    };
                    // Inside a session the interpreter runs what does not
                    // compile (not a malformed function: it fails its callers).
                    // Not under Aptos's schedule: the nested interpreter
                    // has no Aptos meter (its callers run interpreted).
                    let interpretable = self.config.session_host
                        && self.config.aptos.is_none()
                        && matches!(e, CompileError::Unsupported(_) | CompileError::Codegen(_));
                    // A stub keeps the cache free of unresolved symbols.
                    if interpretable && self.define_interp_stub(&key, id, &params, &rets).is_ok() {
                        if let Some(i) = self.instances.get_mut(&key) {
                            i.callees.clear();
                        }
                        State::Interpreted(e)
                    } else if let Err(stub_err) = self.define_stub(id, &params, &rets, gas) {
                        return self.poison(stub_err);
                    } else {
                        State::Failed(e)
                    }
                }
            };
            if let Some(i) = self.instances.get_mut(&key) {
                i.state = state;
            }
        }
    }

    fn poison(&mut self, e: CompileError) {
        for i in self.instances.values_mut() {
            if matches!(i.state, State::Queued) {
                i.state = State::Failed(e.clone());
            }
        }
    }

    /// Whether `key` can run compiled: it compiled itself and everything
    /// it reaches compiled or is interpreted through a stub.
    fn closure_error(&self, key: &InstanceKey) -> CompileResult<()> {
        if let Some(Instance { state: State::Interpreted(e), .. }) = self.instances.get(key) {
            return Err(e.clone());
        }
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![key.clone()];
        while let Some(k) = work.pop() {
            if !seen.insert(k.clone()) {
                continue;
            }
            match self.instances.get(&k) {
                Some(Instance { state: State::Failed(e), .. }) => return Err(e.clone()),
                Some(Instance { state: State::Interpreted(_), .. }) => {}
                Some(Instance { state: State::Queued, .. }) | None => {
                    return Err(CompileError::Codegen("instance left uncompiled".into()))
                }
                Some(i) => work.extend(i.callees.iter().cloned()),
            }
        }
        Ok(())
    }

    fn define_stub(&mut self, id: FuncId, params: &[Ty], rets: &[Ty], gas: GasAbi) -> CompileResult<()> {
        let sig = move_signature(self.call_conv, self.ptr, params, rets, gas);
        let mut func = Function::with_name_signature(UserFuncName::user(0, id.as_u32()), sig);
        let isa_cfg = self.frontend;
        let ptr = self.ptr;
        {
            let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
            let blk = b.create_block();
            b.append_block_params_for_function_params(blk);
            b.switch_to_block(blk);
            b.seal_block(blk);
            let ctx = b.block_params(blk)[0];
            if gas.in_registers() {
                // A failure leaves the gas left in the context.
                let g = b.block_params(blk)[GAS_PARAM];
                b.ins().store(MemFlagsData::trusted(), g, ctx, CTX_GAS_LEFT);
            }
            let st = b
                .ins()
                .iconst(types::I64, StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR.number(StatusFlavour::Aptos) as i64);
            b.ins().store(MemFlagsData::trusted(), st, ctx, CTX_STATUS);
            return_failure(&mut b, rets, ptr, gas);
            b.finalize(isa_cfg);
        }
        let mut ctx = Context::for_function(func);
        self.define(id, &mut ctx)
    }

    /// `extern "C" fn(ctx, args, rets) -> u32`: `args` and `rets` are arrays
    /// of one pointer per value, each to a slot of the value's flat layout
    /// (for a reference: to its target). Scalars are loaded from / stored
    /// to their slot; in-memory arguments are handed over by address (the
    /// callee owns them from then on) and in-memory results written to
    /// their slot. Returns 0 on success, 1 on failure.
    fn define_trampoline(&mut self, callee: FuncId, params: &[Ty], rets: &[Ty], gas: GasAbi) -> CompileResult<FuncId> {
        let metered = gas.in_registers();
        let mut sig = Signature::new(self.call_conv);
        for _ in 0..3 {
            sig.params.push(AbiParam::new(self.ptr));
        }
        sig.returns.push(AbiParam::new(types::I32));
        self.symbols += 1;
        let name = format!("movejit_entry_{}", self.symbols);
        let id = self.jit_mut().declare_function(&name, Linkage::Local, &sig).map_err(codegen)?;
        let mut func = Function::with_name_signature(UserFuncName::user(1, id.as_u32()), sig);
        let ptr = self.ptr;
        let fref = self.jit_mut().declare_func_in_func(callee, &mut func);
        let isa_cfg = self.frontend;
        {
            let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
            let blk = b.create_block();
            b.append_block_params_for_function_params(blk);
            b.switch_to_block(blk);
            b.seal_block(blk);
            let p = b.block_params(blk).to_vec();
            let (ctx, args, out) = (p[0], p[1], p[2]);
            let mem = MemFlagsData::trusted();
            let vmem = MemFlagsData::new().with_notrap();
            let mut lanes = vec![ctx];
            if metered {
                // The gas left goes in and out through the context here.
                lanes.push(b.ins().load(types::I64, mem, ctx, CTX_GAS_LEFT));
            }
            for (i, t) in params.iter().enumerate() {
                let slot = b.ins().load(ptr, mem, args, (8 * i) as i32);
                match t {
                    Ty::S(k) => {
                        for (l, ty) in k.lanes().iter().enumerate() {
                            lanes.push(b.ins().load(*ty, vmem, slot, (8 * l) as i32));
                        }
                    }
                    Ty::M(_) | Ty::R(_) => lanes.push(slot),
                }
            }
            for (i, t) in rets.iter().enumerate() {
                if matches!(t, Ty::M(_)) {
                    lanes.push(b.ins().load(ptr, mem, out, (8 * i) as i32));
                }
            }
            let call = b.ins().call(fref, &lanes);
            let mut res = b.inst_results(call).to_vec();
            if metered {
                gas_back_to_context(&mut b, ctx, &mut res);
            }
            let mut at = 1;
            for (i, t) in rets.iter().enumerate() {
                if matches!(t, Ty::M(_)) {
                    continue;
                }
                let slot = b.ins().load(ptr, mem, out, (8 * i) as i32);
                for l in 0..t.lanes(ptr).len() {
                    b.ins().store(vmem, res[at], slot, (8 * l) as i32);
                    at += 1;
                }
            }
            let flag = b.ins().uextend(types::I32, res[0]);
            b.ins().return_(&[flag]);
            b.finalize(isa_cfg);
        }
        let mut ctx = Context::for_function(func);
        self.define(id, &mut ctx)?;
        Ok(id)
    }
}

impl JitEngine {
    /// A closure adapter of compiled function `callee` (parameters
    /// `params`, results `rets`) for closures packed with capture `mask`:
    /// the signature of a compiled function over the parameters not
    /// captured, with a pointer to the captured scalars after the context
    /// (`closure_shims::FAST_CAPTURE_STRIDE` bytes each, in order). It
    /// loads them into their places among the arguments and calls `callee`.
    /// Every captured parameter must be a scalar.
    pub(super) fn define_closure_adapter(
        &mut self,
        callee: FuncId,
        params: &[Ty],
        rets: &[Ty],
        mask: u64,
        gas: GasAbi,
    ) -> CompileResult<FuncId> {
        use movejit_runtime::flat::closure_shims::FAST_CAPTURE_STRIDE;
        let captured_at = |i: usize| i < 64 && (mask >> i) & 1 == 1;
        let provided: Vec<Ty> =
            params.iter().enumerate().filter(|(i, _)| !captured_at(*i)).map(|(_, t)| t.clone()).collect();
        let ptr = self.ptr;
        // An adapter of a metered engine takes the gas left in the context
        // whatever its callee's convention (call sites see only the
        // closure's type; most targets are leaf lambdas, which take it
        // there too).
        let own = if self.config.cost.is_some() { GasAbi::Context } else { GasAbi::Unmetered };
        let mut sig = move_signature(self.call_conv, ptr, &provided, rets, own);
        sig.params.insert(1, AbiParam::new(ptr));
        self.symbols += 1;
        let name = format!("movejit_closure_entry_{}", self.symbols);
        let id = self.jit_mut().declare_function(&name, Linkage::Local, &sig).map_err(codegen)?;
        let mut func = Function::with_name_signature(UserFuncName::user(1, id.as_u32()), sig);
        let fref = self.jit_mut().declare_func_in_func(callee, &mut func);
        let isa_cfg = self.frontend;
        {
            let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
            let blk = b.create_block();
            b.append_block_params_for_function_params(blk);
            b.switch_to_block(blk);
            b.seal_block(blk);
            let p = b.block_params(blk).to_vec();
            let (ctx, caps) = (p[0], p[1]);
            let vmem = MemFlagsData::new().with_notrap();
            let mut lanes = vec![ctx];
            // A callee taking the gas left in registers gets the context's.
            if gas.in_registers() {
                lanes.push(b.ins().load(types::I64, vmem, ctx, CTX_GAS_LEFT));
            }
            let (mut at, mut k) = (2, 0);
            for (i, t) in params.iter().enumerate() {
                if captured_at(i) {
                    let Ty::S(kind) = t else {
                        return Err(CompileError::Malformed("closure adapter: captured value not a scalar".into()));
                    };
                    for (l, ty) in kind.lanes().iter().enumerate() {
                        let off = (k * FAST_CAPTURE_STRIDE + 8 * l) as i32;
                        lanes.push(b.ins().load(*ty, vmem, caps, off));
                    }
                    k += 1;
                } else {
                    let n = t.lanes(ptr).len();
                    lanes.extend_from_slice(p.get(at..at + n).ok_or_else(|| codegen("closure adapter arity"))?);
                    at += n;
                }
            }
            lanes.extend_from_slice(&p[at..]);
            let call = b.ins().call(fref, &lanes);
            let mut res = b.inst_results(call).to_vec();
            if gas.in_registers() {
                gas_back_to_context(&mut b, ctx, &mut res);
            }
            b.ins().return_(&res);
            b.finalize(isa_cfg);
        }
        let mut ctx = Context::for_function(func);
        self.define(id, &mut ctx)?;
        Ok(id)
    }
}

/// After a call of a function taking the gas left in registers from code
/// keeping it in the context (trampolines, closure adapters): removes the
/// returned gas from `results` and writes it to the context when the call
/// succeeded (a failed callee already wrote the exact gas left there).
fn gas_back_to_context(
    b: &mut FunctionBuilder<'_>,
    ctx: cranelift_codegen::ir::Value,
    results: &mut Vec<cranelift_codegen::ir::Value>,
) {
    let mem = MemFlagsData::trusted();
    let left = results.remove(GAS_RESULT);
    let recorded = b.ins().load(types::I64, mem, ctx, CTX_GAS_LEFT);
    let g = b.ins().select(results[0], recorded, left);
    b.ins().store(mem, g, ctx, CTX_GAS_LEFT);
}

/// Type limits of the JIT's flat layouts: the nesting bound the flat
/// interpreter uses too (`flat::MAX_FLAT_DEPTH`), whose memory compiled code
/// shares. As there, flat layouts of any verified type are built (no
/// type-depth or layout-node budget: those bound serialized layouts, and
/// values are bounded by the value-depth checks), so the JIT compiles what
/// the interpreter runs.
fn type_limits(l: &Limits) -> TypeLimits {
    TypeLimits {
        max_type_depth: movejit_runtime::flat::MAX_FLAT_DEPTH,
        max_value_depth: l.max_value_depth,
        max_layout_nodes: None,
    }
}

impl Drop for JitEngine {
    fn drop(&mut self) {
        // Stop the executor before its code goes away.
        self.executor.take();
        if let Some(jit) = self.jit.take() {
            crate::exec::free_code(jit);
        }
    }
}

/// The lowering's view of the engine: declares instances and helpers.
struct Declarer<'e> {
    jit: &'e mut JITModule,
    modules: &'e [Arc<LoadedModule>],
    by_id: &'e HashMap<ModuleId, u32>,
    instances: &'e mut HashMap<InstanceKey, Instance>,
    queue: &'e mut Vec<InstanceKey>,
    helpers: &'e mut HashMap<HelperId, FuncId>,
    call_conv: CallConv,
    ptr: Type,
    frontend: TargetFrontendConfig,
    symbols: &'e mut usize,
    layouts: &'e FlatLayouts,
    consts: &'e mut ConstPool,
    native_sites: &'e mut Vec<NativeSite>,
    native_keys: &'e mut HashMap<InstanceKey, u64>,
    session_host: bool,
    limits: TypeLimits,
    callees: Vec<InstanceKey>,
    /// The checking copy the lowering declared (`LowerEnv::checking_copy`).
    checking: Option<FuncId>,
    closures: &'e mut closures::ClosureState,
    /// Compiled functions pass the gas left (`move_signature`).
    metered: bool,
}

impl Declarer<'_> {
    fn types(&self) -> Types<'_> {
        Types { modules: self.modules, by_id: self.by_id, limits: self.limits }
    }

    fn layout_of(&self, ty: &RType) -> CompileResult<Arc<FlatLayout>> {
        self.layouts.layout_of(&self.types(), ty).map_err(|e| CompileError::Unsupported(format!("layout of {ty}: {e}")))
    }

    fn declare(&mut self, key: &InstanceKey) -> CompileResult<FuncId> {
        if let Some(i) = self.instances.get(key) {
            return Ok(i.func);
        }
        let m = self
            .modules
            .get(key.module as usize)
            .ok_or_else(|| CompileError::UnknownFunction(format!("module #{}", key.module)))?
            .clone();
        let (params, rets) = crate::types::function_types(&m, key.fdef, &key.type_args)?;
        if m.fn_info.get(key.fdef as usize).is_none_or(|f| f.is_native) {
            return Err(CompileError::Unsupported("native function".into()));
        }
        let tys =
            |ts: &[RType]| ts.iter().map(|t| self.layout_of(t).map(|l| Ty::of(&l))).collect::<CompileResult<Vec<_>>>();
        let (params, rets) = (tys(&params)?, tys(&rets)?);
        let code =
            m.function_defs.get(key.fdef as usize).and_then(|d| d.code.as_ref()).map_or(&[][..], |c| &c.code[..]);
        let gas = GasAbi::of(self.metered, code);
        let sig = move_signature(self.call_conv, self.ptr, &params, &rets, gas);
        *self.symbols += 1;
        let name = format!("movejit_m{}_f{}_{}", key.module, key.fdef, self.symbols);
        let func = self.jit.declare_function(&name, Linkage::Local, &sig).map_err(codegen)?;
        self.instances
            .insert(key.clone(), Instance { func, params, rets, gas, state: State::Queued, callees: Vec::new() });
        self.queue.push(key.clone());
        Ok(func)
    }
}

/// The type nodes of each local of function `fdef` of `m` instantiated
/// with `type_args`, parameters first.
fn local_nodes(m: &LoadedModule, fdef: u16, type_args: &[RType]) -> CompileResult<Vec<u64>> {
    let bad = || CompileError::Malformed("function definition".into());
    let d = m.function_defs.get(fdef as usize).ok_or_else(bad)?;
    let h = m.function_handles.get(d.function.idx()).ok_or_else(bad)?;
    let code = d.code.as_ref().ok_or_else(bad)?;
    let params = crate::types::sig_types(m, h.parameters, type_args)?;
    let locals = crate::types::sig_types(m, code.locals, type_args)?;
    Ok(params.iter().chain(&locals).map(RType::num_nodes).collect())
}

/// The native site of a call of a native no registry provides (inside a
/// session): the call fails with `MISSING_DEPENDENCY`, as in the
/// interpreter.
pub(crate) const MISSING_NATIVE: u64 = u64::MAX;

/// Native modules at `0x1` compiled code may call outside an interpreter
/// session: they keep no state outside their arguments. Inside a session
/// (`JitConfig::session_host`) every registered native may be called: they
/// share the session's native state and installed extensions.
const STATELESS_NATIVE_MODULES: &[&str] =
    &["vector", "bcs", "hash", "signer", "string", "type_name", "aptos_hash", "from_bcs"];

impl Declarer<'_> {
    /// A call site of native `key` (registered once per instance).
    fn native_callee(&mut self, key: &InstanceKey) -> CompileResult<CalleeRef> {
        let m = self.modules.get(key.module as usize).ok_or_else(|| CompileError::Malformed("module".into()))?.clone();
        let (params_t, rets_t) = crate::types::function_types(&m, key.fdef, &key.type_args)?;
        let mut params = Vec::new();
        let mut rets = Vec::new();
        for t in &params_t {
            params.push((self.layout_of(t)?, matches!(t, RType::MutableReference(_))));
        }
        for t in &rets_t {
            rets.push(self.layout_of(t)?);
        }
        if !self.session_host {
            closures::refuse_closure_results(&rets)?;
        }
        let tys = (params.iter().map(|(l, _)| Ty::of(l)).collect(), rets.iter().map(Ty::of).collect());
        if let Some(site) = self.native_keys.get(key) {
            return Ok(CalleeRef::native(*site, tys));
        }
        let addr = *m.address();
        let (mname, fname) = (m.name().to_string(), m.function_name(key.fdef));
        let stdlib = addr == AccountAddress::from_u64(1) && STATELESS_NATIVE_MODULES.contains(&mname.as_str());
        // Bound when the module was loaded (the engine's registry).
        let native = m.natives.get(key.fdef as usize).cloned().flatten();
        if native.is_none() && self.session_host {
            // Inside a session a call of it fails as in the interpreter
            // (`MISSING_DEPENDENCY` at the call).
            return Ok(CalleeRef::native(MISSING_NATIVE, tys));
        }
        let native = native
            .filter(|_| stdlib || self.session_host)
            .ok_or_else(|| CompileError::Unsupported(format!("native function {mname}::{fname}")))?;
        let site = self.native_sites.len() as u64;
        self.native_sites.push(NativeSite::new(native, key.type_args.clone(), params, rets));
        self.native_keys.insert(key.clone(), site);
        Ok(CalleeRef::native(site, tys))
    }
}

impl LowerEnv for Declarer<'_> {
    fn pointer_type(&self) -> Type {
        self.ptr
    }

    fn frontend_config(&self) -> TargetFrontendConfig {
        self.frontend
    }

    fn callee(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<RType>,
        func: &mut Function,
    ) -> CompileResult<CalleeRef> {
        let (target, fdef) = self.resolve_handle(module_idx, handle)?;
        let tm = self.modules.get(target as usize).ok_or_else(|| CompileError::Malformed("call: bad module".into()))?;
        let key = InstanceKey { module: target, fdef, type_args };
        let module_free = target == module_idx || movejit_runtime::gas::algebra::is_special(tm.address());
        let module = Some(movejit_runtime::ModuleId::new(*tm.address(), tm.name()));
        if tm.function_defs.get(fdef as usize).is_some_and(|d| d.code.is_none()) {
            // Aptos charges a native's module and locates running out of
            // gas in it at the native itself.
            let native = self.native_callee(&key)?;
            return Ok(CalleeRef { module_free, module, native_def: Some(fdef), ..native });
        }
        let local_nodes = local_nodes(tm, fdef, &key.type_args)?;
        let id = self.declare(&key)?;
        let inst = &self.instances[&key];
        let (params, rets, gas) = (inst.params.clone(), inst.rets.clone(), inst.gas);
        self.callees.push(key);
        let fref = self.jit.declare_func_in_func(id, func);
        Ok(CalleeRef {
            func: Some(fref),
            native: None,
            params,
            rets,
            local_nodes,
            module_free,
            module,
            native_def: None,
            gas,
        })
    }

    fn helper(&mut self, h: HelperId, func: &mut Function) -> CompileResult<FuncRef> {
        let id = match self.helpers.get(&h) {
            Some(id) => *id,
            None => {
                let sig = helpers::signature(h, self.call_conv, self.ptr);
                let id = self.jit.declare_function(&helpers::symbol(h), Linkage::Import, &sig).map_err(codegen)?;
                self.helpers.insert(h, id);
                id
            }
        };
        Ok(self.jit.declare_func_in_func(id, func))
    }

    fn layout(&mut self, ty: &RType) -> CompileResult<Arc<FlatLayout>> {
        self.layout_of(ty)
    }

    fn checking_copy(&mut self, func: &mut Function) -> CompileResult<FuncRef> {
        *self.symbols += 1;
        let name = format!("movejit_checking_{}", self.symbols);
        let id = self.jit.declare_function(&name, Linkage::Local, &func.signature).map_err(codegen)?;
        self.checking = Some(id);
        Ok(self.jit.declare_func_in_func(id, func))
    }

    fn value_depth(&self, ty: &RType) -> CompileResult<(usize, usize)> {
        Ok((self.types().value_depth(ty)?, self.limits.max_value_depth))
    }

    fn constant(&mut self, layout: &Arc<FlatLayout>, bytes: &[u8]) -> CompileResult<u64> {
        self.consts.add(layout, bytes)
    }

    fn error_constant(&mut self, e: movejit_runtime::VmError) -> u64 {
        self.consts.add_error(e)
    }

    fn pack_site(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<RType>,
        mask: u64,
    ) -> CompileResult<crate::lower::closure::PackInfo> {
        self.closure_pack_site(module_idx, handle, type_args, mask)
    }

    fn call_site(&mut self, spec: crate::lower::closure::CallSpec) -> CompileResult<u64> {
        self.closure_call_site(spec)
    }

    fn aptos_call_site(&mut self, site: movejit_runtime::gas::aptos::AptosCallSite) -> CompileResult<u64> {
        Ok(self.consts.add_call_site(site))
    }

    /// The resource type's engine-wide interned id (`movejit_runtime::intern`).
    fn global_type(&mut self, ty: &RType) -> CompileResult<u64> {
        if !self.session_host {
            return Err(CompileError::Unsupported(format!("global storage ({ty}) outside an interpreter session")));
        }
        // The process-wide table: every session and engine agrees on the id.
        movejit_runtime::TypeTable::shared()
            .intern(ty)
            .map(movejit_runtime::TypeId::to_u64)
            .map_err(|e| CompileError::Unsupported(format!("global storage ({ty}): {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_can_move_between_threads() {
        fn is_send<T: Send>() {}
        is_send::<JitEngine>();
    }
}
