//! What an engine is built from: the configuration every layer below the
//! product API reads (the interpreter: flavour, limits, natives, costs, the
//! executor kind and `Auto`'s thresholds; the JIT's code cache: the
//! [`JitOptions`]). It lives here, in the lowest crate both executors share,
//! so that each fact has one definition; `movejit-engine` re-exports
//! [`EngineConfig`] as the product's configuration.

use crate::{CostTable, Limits, NativeRegistry, StatusFlavour};

/// Which executor runs the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecutorKind {
    #[default]
    Interpreter,
    /// Compiled code only: the called function and everything it reaches
    /// must compile (needs an engine with compiled code attached, as
    /// `movejit_engine::Engine` attaches its JIT).
    Jit,
    /// Calls of instances that compile run compiled, the rest interpreted.
    Auto,
}

/// Everything an engine is built from.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub flavour: StatusFlavour,
    pub limits: Limits,
    pub natives: NativeRegistry,
    pub costs: CostTable,
    pub executor: ExecutorKind,
    /// When the compiled code attached to the engine (executors `Jit` /
    /// `Auto`) compiles; the interpreter reads only `Auto`'s thresholds.
    pub jit: JitOptions,
}

/// Default of [`JitOptions::baseline_above`] and the JIT's
/// `JitConfig::baseline_above` (bytecode instructions).
/// The optimizing tier's compile time grows quadratically with a function's
/// length (Cranelift's e-graph pass: 4,000 instructions take ~10x what
/// 1,000 do), the baseline tier's linearly (its failure sites ordered next
/// to their tests, movejit-jit's `lower/cold.rs`): 16,000 instructions compile in ~0.1 s
/// against ~1.4 s (`long_function` bench). No function of the Aptos
/// framework or of `../shared/bench` is this long (the longest has ~650),
/// so only generated or unusual code takes the baseline tier's slower code.
pub const BASELINE_ABOVE: usize = 2_000;

/// When and what the engine's JIT compiles (movejit-engine's code cache
/// reads these; the interpreter counts `Auto`'s calls and loop back edges
/// against the thresholds). Whatever is not
/// compiled is interpreted, with identical results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// Calls of an instance the `Auto` executor interprets (counted over
    /// all sessions of the engine) before compiling it. 0 (the default):
    /// compile at the first call, which is what one-shot runs (`movejit
    /// run`, benchmarks, conformance replays) measure; hosts with many
    /// short sessions raise it so code that runs once is never compiled.
    /// The `Jit` executor always compiles at the first call.
    pub threshold: u32,
    /// Compile every non-generic function of a module when a call first
    /// reaches the module, instead of one instance (and its callees) at a
    /// time.
    pub eager: bool,
    /// Functions with more bytecode instructions are interpreted (checked
    /// before lowering).
    pub max_code_len: usize,
    /// Functions whose lowered Cranelift IR has more instructions are
    /// interpreted (checked while lowering, before code generation, the
    /// costly part: bounds the time and memory of one function's compile);
    /// on the baseline tier, whose compile is linear, ten times as many
    /// (`movejit_jit::BASELINE_IR_FACTOR`).
    pub max_ir_insts: usize,
    /// Compile time the engine may spend in all: once the total reaches
    /// it, nothing new is compiled and further instances are interpreted.
    /// It holds during a compile too, per function: a function whose
    /// estimated compile time (by its size) does not fit in what is left
    /// is interpreted; Cranelift cannot be interrupted, so one whose code
    /// generation started finishes. `None`: unbounded.
    pub compile_budget: Option<std::time::Duration>,
    /// Functions with more bytecode instructions are compiled by the JIT's
    /// baseline tier (quick code generation, linear in the function's
    /// length; bigger and slower code; see [`BASELINE_ABOVE`]).
    /// 0: every function; `usize::MAX`: none. Default [`BASELINE_ABOVE`].
    pub baseline_above: usize,
    /// Background compiler threads of the `Auto` executor. With 1 or more,
    /// an instance past the threshold is queued for those threads and its
    /// calls stay interpreted until its code is ready: a calling thread
    /// never waits for a compile (results, gas and errors are the same
    /// whichever tier runs a call). 0 (the default): `Auto` compiles on the
    /// calling thread when the threshold is passed, deterministically (what
    /// tests of mixed execution rely on). The `Jit` executor always
    /// compiles on the calling thread.
    pub compile_threads: usize,
    /// Loop back edges an `Auto` instance takes while interpreted (counted
    /// over all sessions of the engine) before it is compiled whatever its
    /// count of calls: a single long call spent in a loop makes its
    /// function hot for the calls after it (there is no on-stack
    /// replacement). Counted only when `threshold` > 0 (at 0 every
    /// instance is compiled at its first call); 0: not counted.
    pub loop_threshold: u32,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            threshold: 0,
            eager: false,
            max_code_len: 1 << 16,
            // `movejit_jit::MAX_IR_INSTS` (engine test `big_function`
            // checks they agree).
            max_ir_insts: 1 << 17,
            compile_budget: None,
            baseline_above: BASELINE_ABOVE,
            compile_threads: 0,
            loop_threshold: 1000,
        }
    }
}

impl EngineConfig {
    /// Aptos flavour, default limits, the Move stdlib natives at 0x1.
    pub fn aptos() -> Self {
        EngineConfig {
            flavour: StatusFlavour::Aptos,
            limits: Limits::default(),
            natives: NativeRegistry::with_stdlib(),
            costs: CostTable::default(),
            executor: ExecutorKind::Interpreter,
            jit: JitOptions::default(),
        }
    }
    pub fn sui() -> Self {
        EngineConfig {
            flavour: StatusFlavour::Sui,
            natives: NativeRegistry::with_sui_stdlib(),
            limits: Limits::sui(),
            ..EngineConfig::aptos()
        }
    }
}
