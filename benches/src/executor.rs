//! The executor adapter: the only code here that knows how a program is
//! run. Both executors go through movejit-engine (`interp` and `jit`, the
//! `--engine` choices of `movejit run`); [`prepare`] loads a [`Program`]'s
//! modules and function, and the returned [`Prepared`] runs one call at a
//! time. A call is timed as a node pays for it: a new session over the warm
//! engine (its module cache and code cache filled by [`load`]), the call
//! (module loading into the session, function resolution, argument
//! decoding, execution) and finishing the session into a change set. The
//! Aptos VM figures of the conformance suite cover the same span. The
//! engine's code cache (shared by its sessions) keeps compiled code across
//! calls, so no call after the first pays a compile.

use crate::manifest::Program;
use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId, Type, VmError};
use movejit_engine::{Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
use movejit_format::{StatusCode, StatusFlavour};
use std::time::Instant;

/// An executor to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Executor {
    Interp,
    Jit,
    /// Interpreted until hot, then compiled (`ExecutorKind::Auto`).
    Auto,
}

impl Executor {
    /// The two executors the kernel benches compare.
    pub const ALL: [Executor; 2] = [Executor::Interp, Executor::Jit];
    /// Every executor choice (`--engine` of `movejit bench`).
    pub const WITH_AUTO: [Executor; 3] = [Executor::Interp, Executor::Jit, Executor::Auto];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Executor::Interp => "interp",
            Executor::Jit => "jit",
            Executor::Auto => "auto",
        }
    }

    pub fn from_name(s: &str) -> Option<Executor> {
        Executor::WITH_AUTO.into_iter().find(|e| e.name() == s)
    }

    /// The engine's executor choice.
    pub fn kind(self) -> ExecutorKind {
        match self {
            Executor::Interp => ExecutorKind::Interpreter,
            Executor::Jit => ExecutorKind::Jit,
            Executor::Auto => ExecutorKind::Auto,
        }
    }
}

/// Gas metering of the measured calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metering {
    /// No gas accounting at all (as the reference VMs were timed).
    Off,
    /// The runtime's default cost table with an unlimited budget.
    On,
    /// Aptos's v50 schedule with an unlimited balance and no execution
    /// limit (what metering costs, on programs past the limit).
    Aptos,
}

impl Metering {
    /// A meter for one call.
    pub fn meter(self) -> GasMeter {
        match self {
            Metering::Off => GasMeter::unmetered(),
            Metering::On => GasMeter::new(CostTable::default(), u64::MAX),
            Metering::Aptos => {
                let mut gas = GasMeter::aptos(AptosPricing::v50(), u64::MAX);
                if let Some(a) = gas.aptos_meter_mut() {
                    a.algebra.lift_execution_limit();
                }
                gas
            }
        }
    }
}

/// Why a program could not be prepared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// Valid code the executor does not handle yet (not a failure).
    #[error("not yet ({0})")]
    NotSupported(String),
    /// Loading, verification or compilation failed.
    #[error("{0}")]
    Failed(String),
}

/// One call: its BCS returns (or why it failed) and its duration.
#[derive(Clone, Debug)]
pub struct Call {
    pub returns: Result<Vec<Vec<u8>>, String>,
    /// The status of a failed call.
    pub status: Option<StatusCode>,
    pub ns: u64,
}

/// A program ready to be called repeatedly.
pub trait Prepared {
    /// Runs the function once in a new session; the session's start, the
    /// call and its finish (the change set) are timed.
    fn call(&mut self) -> Call;
    /// Time spent compiling in `prepare` (JIT only).
    fn compile_ns(&self) -> Option<u64>;
}

/// The engine configuration a program runs with (flavour, natives, limits).
fn engine_config(program: &Program, kind: ExecutorKind) -> EngineConfig {
    let base = match program.flavour() {
        StatusFlavour::Sui => EngineConfig::sui(),
        // The Aptos framework natives (clob needs them), as any host registers them.
        StatusFlavour::Aptos => {
            EngineConfig { natives: movejit_aptos_natives::aptos_registry(), ..EngineConfig::aptos() }
        }
    };
    EngineConfig { executor: kind, ..base }
}

fn elapsed_ns(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A VM error as one line: status, message, location.
fn describe(e: &VmError) -> String {
    let mut s = e.to_string();
    if let Some(m) = &e.message {
        s.push_str(&format!(": {m}"));
    }
    if let Some(l) = &e.location {
        s.push_str(&format!(" at {}::{} #{}", l.module, l.function_name, l.code_offset));
    }
    s
}

/// A program loaded into an engine of its own over an in-memory store:
/// what every call of it shares. It is `Sync`: threads may make calls on
/// one `Loaded` together, each call in a session of its own.
pub struct Loaded {
    engine: Engine,
    storage: InMemoryStorage,
    module: ModuleId,
    function: String,
    type_args: Vec<Type>,
    args: Vec<Vec<u8>>,
    compile_ns: Option<u64>,
}

/// A new engine for `program` on `kind` and an in-memory store holding its
/// modules (nothing loaded yet).
pub fn published(kind: ExecutorKind, program: &Program) -> (Engine, InMemoryStorage) {
    let mut storage = InMemoryStorage::default();
    for m in &program.modules {
        storage.publish(ModuleId::new(*m.module.address(), m.module.name()), m.bytes.clone());
    }
    (movejit_engine::new_engine(engine_config(program, kind)), storage)
}

/// Publishes the modules into an in-memory store and loads (verifies) the
/// called module once, so load errors surface here. With compiled code
/// (`Jit`, `Auto`), one untimed call compiles the function and everything
/// it calls (timed as the compile time); a function the JIT does not
/// compile whole is [`PrepareError::NotSupported`] on `Jit`. The warm-up
/// call is metered as `metering` says (compiled variants differ).
pub fn load(kind: ExecutorKind, program: &Program, metering: Metering) -> Result<Loaded, PrepareError> {
    let (engine, storage) = published(kind, program);
    let type_args = program
        .type_args
        .iter()
        .map(|t| Type::parse_tag(t).ok_or_else(|| PrepareError::Failed(format!("bad type argument `{t}`"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut run = Loaded {
        engine,
        storage,
        module: ModuleId::new(program.address, &program.module),
        function: program.function.clone(),
        type_args,
        args: program.args.clone(),
        compile_ns: None,
    };
    {
        let mut session = run.engine.new_session(&run.storage);
        session.load_module(&run.module).map_err(|e| {
            let what = format!("{}: {}", e.status.name(), e.message.clone().unwrap_or_default());
            // A native the runtime does not provide yet is a gap, not a bug.
            if e.status == StatusCode::MISSING_DEPENDENCY && what.contains("native") {
                PrepareError::NotSupported(what)
            } else {
                PrepareError::Failed(format!("load: {what}"))
            }
        })?;
        if kind != ExecutorKind::Interpreter {
            let mut gas = metering.meter();
            let r = session.execute_function(&run.module, &run.function, &run.type_args, &run.args, &mut gas);
            if let Err(e) = &r {
                if let Some(why) = e.message.as_deref().and_then(|m| m.strip_prefix(JIT_NOT_COMPILED)) {
                    if e.status == StatusCode::FEATURE_NOT_ENABLED {
                        return Err(PrepareError::NotSupported(why.to_string()));
                    }
                }
            }
            let stats = session.compiled_stats().unwrap_or_default();
            run.compile_ns = Some(u64::try_from(stats.compile_time.as_nanos()).unwrap_or(u64::MAX));
        }
    }
    Ok(run)
}

impl Loaded {
    /// One call as a node pays for it, all timed: a new session over the
    /// warm engine, the call, finishing the session into a change set.
    pub fn call(&self, gas: &mut GasMeter) -> Call {
        let t = Instant::now();
        let mut session = self.engine.new_session(&self.storage);
        let r = session.execute_function(&self.module, &self.function, &self.type_args, &self.args, gas);
        // A node finishes every session into a change set, failed call or not.
        let finished = session.finish();
        let ns = elapsed_ns(t);
        let (returns, status) = match (r, finished) {
            (Ok(r), Ok(_)) => (Ok(r.returns), None),
            (Err(e), _) | (Ok(_), Err(e)) => (Err(describe(&e)), Some(e.status)),
        };
        Call { returns, status, ns }
    }
}

struct EngineRun {
    loaded: Loaded,
    metering: Metering,
}

/// [`load`] for one of the measured executors, as a [`Prepared`].
pub fn prepare(executor: Executor, program: &Program, metering: Metering) -> Result<Box<dyn Prepared>, PrepareError> {
    Ok(Box::new(EngineRun { loaded: load(executor.kind(), program, metering)?, metering }))
}

impl Prepared for EngineRun {
    fn call(&mut self) -> Call {
        self.loaded.call(&mut self.metering.meter())
    }

    fn compile_ns(&self) -> Option<u64> {
        self.loaded.compile_ns
    }
}
