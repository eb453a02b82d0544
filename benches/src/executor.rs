//! The executor adapter: the only code here that knows how the interpreter
//! and the JIT are driven. One `prepare_*` function per executor loads a
//! [`Program`]'s modules and function; the returned [`Prepared`] runs one
//! call at a time and times the call alone (session setup and module
//! loading are outside the timed region, as in the reference method).
//!
//! When the executors are unified behind one engine API, this module is the
//! one place to change.

use crate::manifest::Program;
use movejit_format::{version_and_flavour, CompiledModule, Flavour, StatusCode, StatusFlavour};
use movejit_interp::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId, Type};
use movejit_interp::{Engine, EngineConfig};
use movejit_jit::{CompileError, InstanceKey, JitConfig, JitEngine};
use std::time::Instant;

/// An executor to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Executor {
    Interp,
    Jit,
}

impl Executor {
    pub const ALL: [Executor; 2] = [Executor::Interp, Executor::Jit];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Executor::Interp => "interp",
            Executor::Jit => "jit",
        }
    }

    pub fn from_name(s: &str) -> Option<Executor> {
        Executor::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// Gas metering of the measured calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metering {
    /// No gas accounting at all (as the reference VMs were timed).
    Off,
    /// The runtime's default cost table with an unlimited budget.
    On,
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
    pub ns: u64,
}

/// A program ready to be called repeatedly.
pub trait Prepared {
    /// Runs the function once; only the call itself is timed.
    fn call(&mut self) -> Call;
    /// Time spent compiling in `prepare` (JIT only).
    fn compile_ns(&self) -> Option<u64>;
}

/// Prepares `program` on `executor`.
pub fn prepare(executor: Executor, program: &Program, metering: Metering) -> Result<Box<dyn Prepared>, PrepareError> {
    match executor {
        Executor::Interp => prepare_interp(program, metering),
        Executor::Jit => prepare_jit(program, metering),
    }
}

fn flavour_of(program: &Program) -> StatusFlavour {
    let sui = program
        .modules
        .first()
        .and_then(|m| version_and_flavour(&m.bytes).ok())
        .is_some_and(|(_, f)| f == Flavour::Sui);
    if sui {
        StatusFlavour::Sui
    } else {
        StatusFlavour::Aptos
    }
}

fn elapsed_ns(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

// ---- interpreter ----

struct InterpRun {
    engine: Engine,
    storage: InMemoryStorage,
    module: ModuleId,
    function: String,
    type_args: Vec<Type>,
    args: Vec<Vec<u8>>,
    metering: Metering,
}

/// Publishes the modules into an in-memory store and loads (verifies) the
/// called module once, so load errors surface here.
pub fn prepare_interp(program: &Program, metering: Metering) -> Result<Box<dyn Prepared>, PrepareError> {
    let config = match flavour_of(program) {
        StatusFlavour::Sui => EngineConfig::sui(),
        StatusFlavour::Aptos => EngineConfig::aptos(),
    };
    let mut storage = InMemoryStorage::default();
    for m in &program.modules {
        storage.publish(ModuleId::new(*m.module.address(), m.module.name()), m.bytes.clone());
    }
    let type_args = program
        .type_args
        .iter()
        .map(|t| Type::parse_tag(t).ok_or_else(|| PrepareError::Failed(format!("bad type argument `{t}`"))))
        .collect::<Result<Vec<_>, _>>()?;
    let run = InterpRun {
        engine: Engine::new(config),
        storage,
        module: ModuleId::new(program.address, &program.module),
        function: program.function.clone(),
        type_args,
        args: program.args.clone(),
        metering,
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
    }
    Ok(Box::new(run))
}

impl Prepared for InterpRun {
    fn call(&mut self) -> Call {
        // A fresh session per call, as the reference runner uses a fresh
        // data cache; modules are cached by the engine and loaded untimed.
        let mut session = self.engine.new_session(&self.storage);
        if let Err(e) = session.load_module(&self.module) {
            return Call { returns: Err(format!("load: {e}")), ns: 0 };
        }
        let mut gas = match self.metering {
            Metering::Off => GasMeter::unmetered(),
            Metering::On => GasMeter::new(CostTable::default(), u64::MAX),
        };
        let t = Instant::now();
        let r = session.execute_function(&self.module, &self.function, &self.type_args, &self.args, &mut gas);
        let ns = elapsed_ns(t);
        let returns = r.map(|r| r.returns).map_err(|e| {
            let mut s = e.to_string();
            if let Some(m) = e.message {
                s.push_str(&format!(": {m}"));
            }
            if let Some(l) = e.location {
                s.push_str(&format!(" at {}::{} #{}", l.module, l.function_name, l.code_offset));
            }
            s
        });
        Call { returns, ns }
    }

    fn compile_ns(&self) -> Option<u64> {
        None
    }
}

// ---- JIT ----

struct JitRun {
    engine: JitEngine,
    key: InstanceKey,
    args: Vec<Vec<u8>>,
    compile_ns: u64,
}

fn compile_error(e: CompileError) -> PrepareError {
    match e {
        CompileError::Unsupported(m) => PrepareError::NotSupported(m),
        other => PrepareError::Failed(format!("compile: {other}")),
    }
}

/// Verifies the modules (the JIT assumes verified code), adds them to a
/// fresh JIT engine and compiles the function with everything it calls;
/// the compilation is timed.
pub fn prepare_jit(program: &Program, metering: Metering) -> Result<Box<dyn Prepared>, PrepareError> {
    if !program.type_args.is_empty() {
        return Err(PrepareError::NotSupported("type arguments on the command line".into()));
    }
    let mut verifier = match flavour_of(program) {
        StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
        StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
    };
    // Loading stored modules, not publishing them: friends need not exist
    // (the manifests list the modules reachable through handles only).
    verifier.check_friends_exist = false;
    let all: Vec<&CompiledModule> = program.modules.iter().map(|m| &m.module).collect();
    for m in &program.modules {
        movejit_verifier::verify_module(&m.module, &all, &verifier)
            .map_err(|e| PrepareError::Failed(format!("verify {}: {} {}", m.path, e.status.name(), e.message)))?;
    }
    let cost = match metering {
        Metering::Off => None,
        Metering::On => Some(CostTable::default()),
    };
    let mut engine = JitEngine::new(JitConfig { cost, ..JitConfig::default() }).map_err(compile_error)?;
    for m in &program.modules {
        engine.add_module(m.module.clone()).map_err(compile_error)?;
    }
    let idx = engine
        .module_index(&program.address, &program.module)
        .ok_or_else(|| PrepareError::Failed(format!("module {} not in the program", program.module)))?;
    let key = engine.instance_key(idx, &program.function, &[]).map_err(compile_error)?;
    let t = Instant::now();
    engine.compile(&key).map_err(compile_error)?;
    let compile_ns = elapsed_ns(t);
    Ok(Box::new(JitRun { engine, key, args: program.args.clone(), compile_ns }))
}

impl Prepared for JitRun {
    fn call(&mut self) -> Call {
        let t = Instant::now();
        let r = self.engine.execute(&self.key, &self.args, None);
        let ns = elapsed_ns(t);
        let returns = match r {
            Ok(o) if o.status == StatusCode::EXECUTED => Ok(o.returns),
            Ok(o) => Err(format!(
                "{}{}{}",
                o.status.name(),
                o.abort_code.map(|c| format!(" (abort code {c})")).unwrap_or_default(),
                o.location.map(|l| format!(" at module #{} function #{} offset {}", l.module, l.function, l.code_offset)).unwrap_or_default()
            )),
            Err(e) => Err(e.to_string()),
        };
        Call { returns, ns }
    }

    fn compile_ns(&self) -> Option<u64> {
        Some(self.compile_ns)
    }
}
