//! `movejit run`: load modules, verify them, call one function and print
//! the outcome (status, abort code and location, returns, `&mut` results,
//! gas). Exit 0 whenever the call ran, whatever its status; non-zero when it
//! could not be run (bad path or argument, load or verification failure).
//! Metered by default (the schedule's maximum balance: Aptos's for
//! Aptos-flavoured modules, the unit schedule's for Sui), so a runaway
//! program ends with `OUT_OF_GAS`; `--unmetered` opts out.
//!
//! Everything after reading the files ([`Runner::run`] on a [`Request`])
//! and the `--json` object ([`Ran::json`], [`Failure::json`]) is library
//! code, so tests replay calls in-process exactly as the command runs them.

use crate::files::expand_mv_paths;
use movejit_engine::runtime::fmt::print_value;
use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{bcs, CostTable, GasMeter, InMemoryStorage, ModuleId, Type, VmError};
use movejit_engine::{engine_label, new_engine_with_cache, CacheStats, CompiledStats, ExecutorKind, JitFactory};
use movejit_engine::{Engine, EngineConfig, ExecutionResult, JitOptions};
use movejit_format::{AccountAddress, Flavour, StatusCode, StatusFlavour};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    Interp,
    Jit,
    Auto,
}

/// Gas schedules `movejit run` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GasScheduleChoice {
    /// Aptos's production schedule (gas feature version 50), charged
    /// identically by compiled code; functions whose charges compiled code
    /// cannot make yet run interpreted (jit-abi.md 5.1).
    Aptos,
    /// 1 per instruction, 20 per call or global operation, 5 per vector or
    /// pack instruction (for tests).
    Unit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FlavourChoice {
    Aptos,
    Sui,
}

#[derive(clap::Args)]
pub struct Args {
    /// Module files (.mv) and folders of them.
    paths: Vec<PathBuf>,
    /// The function to call: ADDRESS::MODULE::FUNCTION.
    #[arg(long)]
    function: Option<String>,
    /// An Aptos script to run instead of a module function.
    #[arg(long)]
    script: Option<PathBuf>,
    /// Type arguments (`u64`, `vector<u8>`, `0x1::string::String`).
    #[arg(long, num_args = 1..)]
    type_args: Vec<String>,
    /// Arguments, parsed by the parameter types (`5`, `true`, `0xcafe`,
    /// `0x0102` or `b"text"` for vector<u8>, `[1, 2]`).
    #[arg(long, num_args = 1.., allow_negative_numbers = true)]
    args: Vec<String>,
    /// Arguments as BCS hex, one per parameter (instead of --args).
    #[arg(long, num_args = 1.., conflicts_with = "args")]
    bcs_args: Vec<String>,
    /// The gas schedule (default: `aptos` for Aptos-flavoured modules,
    /// `unit` for Sui until Sui's schedule exists).
    #[arg(long, value_enum)]
    gas_schedule: Option<GasScheduleChoice>,
    /// Balance in the schedule's external units (default: the schedule's
    /// maximum).
    #[arg(long, value_name = "UNITS", conflicts_with_all = ["gas", "unmetered"])]
    max_gas: Option<u64>,
    /// Balance in internal gas units.
    #[arg(long, conflicts_with = "unmetered")]
    gas: Option<u64>,
    /// Run without gas metering (then a runaway program never ends).
    #[arg(long)]
    unmetered: bool,
    /// Executor: the interpreter, the JIT (fails when the function or
    /// anything it reaches cannot be compiled), or both (compiled where
    /// possible).
    #[arg(long, value_enum, default_value = "auto")]
    engine: EngineChoice,
    /// Also print compiled vs interpreted function counts and compile time.
    #[arg(long)]
    stats: bool,
    /// `--engine auto`: calls of a function interpreted before it is
    /// compiled (0: compile at the first call).
    #[arg(long, default_value_t = JitOptions::default().threshold)]
    jit_threshold: u32,
    /// `--engine auto` with `--jit-threshold` > 0: loop back edges a
    /// function takes interpreted before it is compiled whatever its calls
    /// (0: loops are not counted).
    #[arg(long, default_value_t = JitOptions::default().loop_threshold)]
    jit_loop_threshold: u32,
    /// Compile every non-generic function of a module when a call first
    /// reaches it.
    #[arg(long)]
    jit_eager: bool,
    /// Functions with more bytecode instructions are interpreted.
    #[arg(long, default_value_t = JitOptions::default().max_code_len)]
    jit_max_code_len: usize,
    /// Functions whose Cranelift IR has more instructions are interpreted
    /// (on the baseline tier: ten times as many).
    #[arg(long, default_value_t = JitOptions::default().max_ir_insts)]
    jit_max_ir: usize,
    /// Total compile time allowed (milliseconds); once spent, nothing more
    /// is compiled, and a function whose estimated compile time does not
    /// fit in what is left is interpreted.
    #[arg(long)]
    jit_budget_ms: Option<u64>,
    /// Functions with more bytecode instructions are compiled by the
    /// baseline tier (quicker compiles, bigger and slower code; 0: all).
    #[arg(long, default_value_t = JitOptions::default().baseline_above)]
    jit_baseline_above: usize,
    /// `--engine auto`: background compiler threads (calls are interpreted
    /// until their code is ready; a call never waits for a compile). 0:
    /// compile on the calling thread.
    #[arg(long, value_name = "N", default_value_t = 1)]
    jit_threads: usize,
    /// Bytes of value memory the call may hold; beyond it the call fails
    /// with MEMORY_LIMIT_EXCEEDED.
    #[arg(long, value_name = "BYTES", default_value_t = movejit_runtime::limits::DEFAULT_MAX_MEMORY)]
    memory_limit: u64,
    /// Status numbering and semantics (default: from the modules' version word).
    #[arg(long, value_enum)]
    flavour: Option<FlavourChoice>,
    /// Print exactly one JSON object.
    #[arg(long)]
    json: bool,
}

/// Why the call could not be run: a Move status, or (for problems outside
/// Move: files, command line) a name of our own reported with the number of
/// `UNKNOWN_STATUS`.
#[derive(Debug)]
pub struct Failure {
    pub status: StatusCode,
    pub name: Option<&'static str>,
    pub message: String,
}

impl Failure {
    /// The `--json` object of a call that could not be run (`engine`: the
    /// executor chosen, as [`before_run_label`] names it).
    pub fn json(&self, flavour: StatusFlavour, engine: &str) -> Json {
        json!({
            "status": self.name.unwrap_or(self.status.name()), "status_code": self.status.number(flavour),
            "sub_status": null, "abort_code": null, "message": self.message,
            "location": null, "returns": [], "mutrefs": [], "gas_used": 0, "engine": engine,
            "execution_gas_used": 0, "io_gas_used": 0, "gas_used_external": 0, "memory_used": null,
        })
    }
}

/// The `engine` label of a call that failed before running: what the
/// chosen executor is called when nothing of the call was interpreted or
/// compiled yet (`auto` compiles lazily, so it is `interp` until then).
pub fn before_run_label(engine: EngineChoice) -> &'static str {
    match engine {
        EngineChoice::Jit => "jit",
        EngineChoice::Interp | EngineChoice::Auto => "interp",
    }
}

fn fail(status: StatusCode, message: impl Into<String>) -> Failure {
    Failure { status, name: None, message: message.into() }
}

fn usage(name: &'static str, message: impl Into<String>) -> Failure {
    Failure { status: StatusCode::UNKNOWN_STATUS, name: Some(name), message: message.into() }
}

pub fn run(args: Args) -> ExitCode {
    let flavour_hint = args.flavour;
    let json_out = args.json;
    let engine = args.engine;
    match prepare_and_run(args) {
        Ok(code) => code,
        Err(f) => {
            let flavour = match flavour_hint {
                Some(FlavourChoice::Sui) => StatusFlavour::Sui,
                _ => StatusFlavour::Aptos,
            };
            if json_out {
                crate::outln!("{}", f.json(flavour, before_run_label(engine)));
            } else {
                eprintln!("movejit run: {}: {}", f.name.unwrap_or(f.status.name()), f.message);
            }
            ExitCode::from(1)
        }
    }
}

/// The call's gas as the flags ask. Metered is the default, so a runaway
/// program ends with `OUT_OF_GAS`.
fn gas_request(args: &Args) -> GasRequest {
    if args.unmetered {
        return GasRequest::Unmetered;
    }
    let balance = match (args.gas, args.max_gas) {
        (Some(g), _) => Balance::Internal(g),
        (None, Some(u)) => Balance::External(u),
        (None, None) => Balance::ScheduleMax,
    };
    GasRequest::Metered { schedule: args.gas_schedule, balance }
}

/// How a call is metered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GasRequest {
    #[default]
    Unmetered,
    /// `schedule` (`None`: the flavour's default) with `balance`.
    Metered { schedule: Option<GasScheduleChoice>, balance: Balance },
}

/// A call's balance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balance {
    /// The schedule's maximum (Aptos: `txn.maximum_number_of_gas_units`).
    ScheduleMax,
    /// In the schedule's external units (the unit schedule has none of its
    /// own: there they are internal units).
    External(u64),
    /// In internal units.
    Internal(u64),
}

impl GasRequest {
    /// The meter for a call of `flavour`'s modules.
    fn meter(self, flavour: StatusFlavour) -> GasMeter {
        let GasRequest::Metered { schedule, balance } = self else { return GasMeter::unmetered() };
        let schedule = schedule.unwrap_or(match flavour {
            StatusFlavour::Aptos => GasScheduleChoice::Aptos,
            StatusFlavour::Sui => GasScheduleChoice::Unit,
        });
        match schedule {
            GasScheduleChoice::Aptos => {
                let pricing = AptosPricing::v50();
                let limits = pricing.limits;
                let internal = match balance {
                    Balance::ScheduleMax => limits.to_internal(limits.max_gas_units),
                    Balance::External(u) => limits.to_internal(u),
                    Balance::Internal(g) => g,
                };
                GasMeter::aptos(pricing, internal)
            }
            GasScheduleChoice::Unit => {
                let internal = match balance {
                    Balance::ScheduleMax => movejit_engine::runtime::gas::UNIT_MAX_GAS,
                    Balance::External(g) | Balance::Internal(g) => g,
                };
                GasMeter::new(CostTable::default(), internal)
            }
        }
    }
}

/// What a call used, for `--json` (internal units unless named
/// otherwise; the unit schedule has no I/O and no external unit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GasUsed {
    pub total: u64,
    pub execution: u64,
    pub io: u64,
    pub external: u64,
    /// Peak memory in abstract units (Aptos only).
    pub memory: Option<u64>,
}

impl GasUsed {
    /// `used` internal units of the unit schedule.
    pub fn unit(used: u64) -> Self {
        GasUsed { total: used, execution: used, io: 0, external: used, memory: None }
    }

    fn of(gas: &GasMeter) -> Self {
        match gas.aptos_meter() {
            Some(a) => GasUsed {
                total: gas.used(),
                execution: a.algebra.execution_used(),
                io: a.algebra.io_used(),
                external: a.algebra.total_used_external(),
                memory: Some(a.memory_used()),
            },
            None => GasUsed::unit(gas.used()),
        }
    }
}

fn prepare_and_run(args: Args) -> Result<ExitCode, Failure> {
    let script = match &args.script {
        Some(p) => Some(std::fs::read(p).map_err(|e| usage("PATH_ERROR", format!("{}: {e}", p.display())))?),
        None => None,
    };
    if script.is_none() && args.function.is_none() {
        return Err(usage("USAGE_ERROR", "--function or --script is required"));
    }
    let mut paths = expand_mv_paths(&args.paths).map_err(|e| usage("PATH_ERROR", format!("reading paths: {e}")))?;
    if let Some(sp) = args.script.as_ref().and_then(|p| p.canonicalize().ok()) {
        // A folder given for the script's dependencies may hold the script itself.
        paths.retain(|p| p.canonicalize().ok().as_ref() != Some(&sp));
    }
    if paths.is_empty() && script.is_none() {
        return Err(usage("PATH_ERROR", "no .mv files given"));
    }
    let mut modules = Vec::with_capacity(paths.len());
    for p in paths {
        let bytes = std::fs::read(&p).map_err(|e| usage("PATH_ERROR", format!("{}: {e}", p.display())))?;
        modules.push((p, bytes));
    }
    let request = Request {
        modules,
        script,
        function: args.function.clone(),
        type_args: args.type_args.clone(),
        args: args.args.clone(),
        bcs_args: args.bcs_args.clone(),
        gas: gas_request(&args),
        flavour: args.flavour,
    };
    let jit = JitOptions {
        threshold: args.jit_threshold,
        eager: args.jit_eager,
        max_code_len: args.jit_max_code_len,
        max_ir_insts: args.jit_max_ir,
        compile_budget: args.jit_budget_ms.map(std::time::Duration::from_millis),
        baseline_above: args.jit_baseline_above,
        compile_threads: args.jit_threads,
        loop_threshold: args.jit_loop_threshold,
    };
    let mut runner = Runner::new(args.engine, jit).with_memory_limit(args.memory_limit);
    let ran = runner.run(&request)?;
    let label = ran.label;
    if args.json {
        crate::outln!("{}", ran.json());
    } else {
        report_text(&ran.result, ran.flavour, ran.gas_used.total);
    }
    if args.stats {
        let s = ran.stats.clone().unwrap_or_default();
        let mut line = format!(
            "engine: {label}; functions compiled: {}, interpreted: {}; instances compiled: {}; compile time: {:.3} ms",
            s.compiled_functions,
            s.interpreted_functions,
            s.instances_compiled,
            s.compile_time.as_secs_f64() * 1e3
        );
        if let Some(c) = runner.cache_stats(ran.flavour) {
            line.push_str(&format!(
                "; code cache: {} compiled, {} not compiled ({} over size limits, {} over the time budget), {} calls below the threshold, {} code bytes for {} bytecode instructions ({} bytes per instruction)",
                c.compiled,
                c.not_compiled,
                c.over_limit,
                c.over_budget,
                c.below_threshold,
                c.code_bytes,
                c.code_instructions,
                match c.code_instructions {
                    0 => "-".to_string(),
                    n => format!("{:.1}", c.code_bytes as f64 / n as f64),
                }
            ));
        }
        // Keep --json output a single JSON object on stdout.
        if args.json {
            eprintln!("{line}");
        } else {
            crate::outln!("{line}");
        }
    }
    Ok(if ran.ran() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// One call as `movejit run` makes it, the files already read.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The modules (path for messages, bytes).
    pub modules: Vec<(PathBuf, Vec<u8>)>,
    /// A script to run instead of `function`.
    pub script: Option<Vec<u8>>,
    /// `ADDRESS::MODULE::FUNCTION`.
    pub function: Option<String>,
    pub type_args: Vec<String>,
    /// Arguments as literals, parsed by the parameter types.
    pub args: Vec<String>,
    /// Arguments as BCS hex (used when not empty).
    pub bcs_args: Vec<String>,
    pub gas: GasRequest,
    pub flavour: Option<FlavourChoice>,
}

/// A call that ran (to success or a Move error).
pub struct Ran {
    pub result: Result<ExecutionResult, VmError>,
    pub flavour: StatusFlavour,
    pub gas_used: GasUsed,
    /// `interp`, `jit` or `mixed` ([`engine_label`]).
    pub label: &'static str,
    pub stats: Option<CompiledStats>,
}

impl Ran {
    /// Whether the call ran (the exit status): it succeeded, aborted, or
    /// failed at a location inside Move code.
    pub fn ran(&self) -> bool {
        let flavour = self.flavour;
        match &self.result {
            Ok(_) => true,
            Err(e) => {
                e.status.status_type(flavour) == StatusCode::ABORTED.status_type(flavour)
                    || (e.location.is_some() && e.status != StatusCode::UNEXPECTED_VERIFIER_ERROR)
            }
        }
    }

    /// The `--json` object.
    pub fn json(&self) -> Json {
        let (flavour, label) = (self.flavour, self.label);
        let g = self.gas_used;
        let mut j = match &self.result {
            Ok(r) => {
                let returns: Vec<String> = r.returns.iter().map(hex::encode).collect();
                let mutrefs: Vec<String> = r.mutrefs.iter().map(|(_, b)| hex::encode(b)).collect();
                json!({
                    "status": "EXECUTED", "status_code": StatusCode::EXECUTED.number(flavour),
                    "sub_status": null, "abort_code": null, "message": null, "location": null,
                    "returns": returns, "mutrefs": mutrefs, "engine": label,
                })
            }
            Err(e) => {
                let (abort_code, sub_status) = codes(e);
                let location = e.location.as_ref().map(|l| {
                    json!({"module": l.module, "function": l.function_name, "function_index": l.function_index, "code_offset": l.code_offset})
                });
                json!({
                    "status": e.status.name(), "status_code": e.status.number(flavour),
                    "sub_status": sub_status, "abort_code": abort_code, "message": e.message,
                    "location": location, "returns": [], "mutrefs": [], "engine": label,
                })
            }
        };
        j["gas_used"] = json!(g.total);
        j["execution_gas_used"] = json!(g.execution);
        j["io_gas_used"] = json!(g.io);
        j["gas_used_external"] = json!(g.external);
        // Peak memory in abstract units: null under the unit schedule.
        j["memory_used"] = json!(g.memory);
        j
    }
}

/// (abort code, sub-status) of an error as reported.
fn codes(e: &VmError) -> (Option<u64>, Option<u64>) {
    if e.status == StatusCode::ABORTED {
        (e.sub_status, None)
    } else {
        (None, e.sub_status)
    }
}

/// Runs requests on one executor, keeping one engine per flavour (a
/// command-line run makes one call; tests make many on the same engines,
/// sharing compiled code as a host would).
pub struct Runner {
    engine: EngineChoice,
    jit: JitOptions,
    memory_limit: Option<u64>,
    engines: HashMap<bool, (Engine, Option<Arc<JitFactory>>)>,
}

impl Runner {
    pub fn new(engine: EngineChoice, jit: JitOptions) -> Self {
        Runner { engine, jit, memory_limit: None, engines: HashMap::new() }
    }

    /// Bounds the value memory of each call (default: the engine's limit).
    pub fn with_memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// The code cache's counters for `flavour`'s engine (JIT executors).
    pub fn cache_stats(&self, flavour: StatusFlavour) -> Option<CacheStats> {
        self.engines.get(&(flavour == StatusFlavour::Sui))?.1.as_ref().map(|c| c.stats())
    }

    /// The engine this runner runs `flavour`'s calls on (made at first use).
    pub fn engine(&mut self, flavour: StatusFlavour) -> &Engine {
        let (choice, jit, memory_limit) = (self.engine, self.jit.clone(), self.memory_limit);
        &self
            .engines
            .entry(flavour == StatusFlavour::Sui)
            .or_insert_with(|| {
                let mut config = match flavour {
                    // The framework natives of each flavour, registered as any host would.
                    StatusFlavour::Aptos => {
                        EngineConfig { natives: movejit_aptos_natives::aptos_registry(), ..EngineConfig::aptos() }
                    }
                    StatusFlavour::Sui => {
                        EngineConfig { natives: movejit_sui_natives::sui_registry(), ..EngineConfig::sui() }
                    }
                };
                config.executor = match choice {
                    EngineChoice::Interp => ExecutorKind::Interpreter,
                    EngineChoice::Jit => ExecutorKind::Jit,
                    EngineChoice::Auto => ExecutorKind::Auto,
                };
                config.jit = jit;
                if let Some(bytes) = memory_limit {
                    config.limits.max_memory = bytes;
                }
                new_engine_with_cache(config)
            })
            .0
    }

    /// Loads, verifies and runs `req`: `Err` when it could not be run.
    pub fn run(&mut self, req: &Request) -> Result<Ran, Failure> {
        let function = match (&req.script, req.function.as_deref()) {
            (Some(_), _) => "0x0::<SELF>::main",
            (None, Some(f)) => f,
            (None, None) => return Err(usage("USAGE_ERROR", "--function or --script is required")),
        };
        let mut storage = InMemoryStorage::default();
        let mut saw_sui = false;
        for (p, bytes) in &req.modules {
            let m = movejit_format::decode_module(bytes)
                .map_err(|e| fail(e.status, format!("{}: {}", p.display(), e.message)))?;
            saw_sui |= m.flavour == Flavour::Sui;
            // The files are one bundle: a module in it twice is refused, as publishing does.
            let id = ModuleId::new(*m.address(), m.name());
            if movejit_engine::runtime::Resolver::get_module(&storage, &id).is_some() {
                return Err(fail(
                    StatusCode::DUPLICATE_MODULE_NAME,
                    format!("{}: module {id} is given twice", p.display()),
                ));
            }
            storage.publish(id, bytes.clone());
        }
        let flavour = match req.flavour {
            Some(FlavourChoice::Sui) => StatusFlavour::Sui,
            Some(FlavourChoice::Aptos) => StatusFlavour::Aptos,
            None if saw_sui => StatusFlavour::Sui,
            None => StatusFlavour::Aptos,
        };
        let mut parts = function.rsplitn(3, "::");
        let fname = parts.next().unwrap_or_default();
        let mname = parts.next().ok_or_else(|| usage("USAGE_ERROR", "--function must be ADDRESS::MODULE::FUNCTION"))?;
        let addr = parts
            .next()
            .and_then(AccountAddress::parse)
            .ok_or_else(|| usage("USAGE_ERROR", "--function must be ADDRESS::MODULE::FUNCTION"))?;
        let module = ModuleId::new(addr, mname);
        let ty_args: Vec<Type> = req
            .type_args
            .iter()
            .map(|t| {
                Type::parse_tag(t).ok_or_else(|| {
                    fail(StatusCode::TYPE_RESOLUTION_FAILURE, format!("bad type argument {}", excerpt(t)))
                })
            })
            .collect::<Result<_, _>>()?;
        if !req.args.is_empty() && !req.bcs_args.is_empty() {
            return Err(usage("USAGE_ERROR", "--args and --bcs-args exclude each other"));
        }

        let engine = self.engine(flavour);
        // The session checks type arguments (Session::load_type) when it
        // resolves a function; a script's are checked before its parameters
        // are read.
        let mut session = engine.new_session(&storage);
        if req.script.is_some() {
            for t in &ty_args {
                session.load_type(t).map_err(|e| vm_fail(&e))?;
            }
        }
        let params = match &req.script {
            Some(bytes) => script_params(bytes, &ty_args)?,
            None => session.function_signature(&module, fname, &ty_args).map_err(|e| vm_fail(&e))?.0,
        };
        let call_args: Vec<Vec<u8>> = if !req.bcs_args.is_empty() {
            req.bcs_args
                .iter()
                .map(|h| {
                    hex::decode(h.trim_start_matches("0x"))
                        .map_err(|e| fail(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT, format!("{}: {e}", excerpt(h))))
                })
                .collect::<Result<_, _>>()?
        } else {
            if req.args.len() != params.len() {
                return Err(fail(
                    StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH,
                    format!("the function takes {} arguments, {} given", params.len(), req.args.len()),
                ));
            }
            params
                .iter()
                .zip(&req.args)
                .map(|(t, a)| {
                    arg_to_bcs(a, t, flavour)
                        .map_err(|m| fail(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT, format!("{}: {m}", excerpt(a))))
                })
                .collect::<Result<_, _>>()?
        };
        let mut gas = req.gas.meter(flavour);
        let result = match &req.script {
            Some(bytes) => session.execute_script(bytes, &ty_args, &call_args, &mut gas),
            None => session.execute_function(&module, fname, &ty_args, &call_args, &mut gas),
        };
        let stats = session.compiled_stats();
        let label = engine_label(stats.as_ref());
        Ok(Ran { result, flavour, gas_used: GasUsed::of(&gas), label, stats })
    }
}

/// The parameter types of a script's `main` (only the kinds --args can parse).
fn script_params(bytes: &[u8], ty_args: &[Type]) -> Result<Vec<Type>, Failure> {
    use movejit_format::SignatureToken as S;
    let s = movejit_format::decode_script(bytes).map_err(|e| fail(e.status, e.message))?;
    let sig =
        s.signatures.get(s.parameters.idx()).ok_or_else(|| fail(StatusCode::INDEX_OUT_OF_BOUNDS, "parameters"))?;
    fn conv(t: &S, ty_args: &[Type]) -> Option<Type> {
        if let Some(p) = Type::primitive(t) {
            return Some(p);
        }
        Some(match t {
            S::Vector(e) => Type::Vector(Box::new(conv(e, ty_args)?)),
            S::Reference(e) => Type::Reference(Box::new(conv(e, ty_args)?)),
            S::MutableReference(e) => Type::MutableReference(Box::new(conv(e, ty_args)?)),
            S::TypeParameter(i) => ty_args.get(*i as usize)?.clone(),
            _ => return None,
        })
    }
    sig.0
        .iter()
        .map(|t| {
            conv(t, ty_args)
                .ok_or_else(|| fail(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT, "use --bcs-args for this script"))
        })
        .collect()
}

fn vm_fail(e: &VmError) -> Failure {
    fail(e.status, e.message.clone().unwrap_or_default())
}

fn report_text(result: &Result<ExecutionResult, VmError>, flavour: StatusFlavour, gas_used: u64) {
    match result {
        Ok(r) => {
            crate::outln!("status: EXECUTED");
            for (i, (b, l)) in r.returns.iter().zip(&r.return_layouts).enumerate() {
                let text = bcs::deserialize(b, l).map(|v| print_value(&v, l)).unwrap_or_default();
                crate::outln!("return {i}: {text} (bcs 0x{})", hex::encode(b));
            }
            for ((p, b), l) in r.mutrefs.iter().zip(&r.mutref_layouts) {
                let text = bcs::deserialize(b, l).map(|v| print_value(&v, l)).unwrap_or_default();
                crate::outln!("&mut argument {p}: {text} (bcs 0x{})", hex::encode(b));
            }
            crate::outln!("gas used: {gas_used}");
        }
        Err(e) => {
            let (abort_code, sub_status) = codes(e);
            crate::outln!("status: {} ({})", e.status.name(), e.status.number(flavour));
            if let Some(c) = abort_code {
                crate::outln!("abort code: {c} (0x{c:x})");
            }
            if let Some(s) = sub_status {
                crate::outln!("sub-status: {s}");
            }
            if let Some(m) = &e.message {
                crate::outln!("message: {m}");
            }
            if let Some(l) = &e.location {
                crate::outln!(
                    "location: {}::{} (function #{}, offset {})",
                    l.module,
                    l.function_name,
                    l.function_index,
                    l.code_offset
                );
            }
            crate::outln!("gas used: {gas_used}");
        }
    }
}

/// BCS bytes of the literal `s` read as a value of type `t`.
fn arg_to_bcs(s: &str, t: &Type, flavour: StatusFlavour) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let t = match t {
        Type::Reference(inner) | Type::MutableReference(inner) => inner,
        t => t,
    };
    write_literal(&mut out, s.trim(), t, flavour)?;
    Ok(out)
}

/// A user's input as an error message quotes it: at most 80 characters.
fn excerpt(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

fn parse_uint(s: &str) -> Result<movejit_engine::runtime::ethnum::U256, String> {
    let s = s.replace('_', "");
    // Strip a width suffix such as u8 / u64 / u256.
    let s = match s.rfind('u') {
        Some(i) if !s.starts_with("0x") && s[i + 1..].chars().all(|c| c.is_ascii_digit()) => &s[..i],
        _ => s.as_str(),
    };
    let r = if let Some(h) = s.strip_prefix("0x") {
        movejit_engine::runtime::ethnum::U256::from_str_radix(h, 16)
    } else {
        movejit_engine::runtime::ethnum::U256::from_str_radix(s, 10)
    };
    r.map_err(|e| e.to_string())
}

fn parse_int(s: &str) -> Result<movejit_engine::runtime::ethnum::I256, String> {
    let s = s.replace('_', "");
    let s = match s.rfind('i') {
        Some(i) if s[i + 1..].chars().all(|c| c.is_ascii_digit()) && i > 0 => s[..i].to_string(),
        _ => s,
    };
    movejit_engine::runtime::ethnum::I256::from_str_radix(&s, 10).map_err(|e| e.to_string())
}

/// The bytes of a Move byte string's body (`b"..."`), with Move's escapes:
/// `\\`, `\"`, `\n`, `\r`, `\t`, `\0` and `\xHH`.
fn unescape_byte_string(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match bytes.next() {
            Some(b'\\') => b'\\',
            Some(b'"') => b'"',
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'0') => 0,
            Some(b'x') => {
                let hex = [bytes.next(), bytes.next()];
                let digits = hex.map(|d| d.and_then(|d| (d as char).to_digit(16)));
                match digits {
                    [Some(h), Some(l)] => (h * 16 + l) as u8,
                    _ => return Err("expected two hex digits after \\x".into()),
                }
            }
            _ => return Err("unknown escape in byte string".into()),
        });
    }
    Ok(out)
}

fn split_list(s: &str) -> Result<Vec<&str>, String> {
    let inner = s.strip_prefix('[').and_then(|x| x.strip_suffix(']')).ok_or("expected [a, b, ...]")?;
    let mut items = Vec::new();
    let (mut depth, mut start, mut in_str, mut escaped) = (0i32, 0usize, false, false);
    for (i, c) in inner.char_indices() {
        if std::mem::take(&mut escaped) {
            continue;
        }
        match c {
            '\\' if in_str => escaped = true,
            '"' => in_str = !in_str,
            '[' if !in_str => depth += 1,
            ']' if !in_str => depth -= 1,
            ',' if !in_str && depth == 0 => {
                items.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        items.push(last);
    }
    Ok(items)
}

fn write_literal(out: &mut Vec<u8>, s: &str, t: &Type, flavour: StatusFlavour) -> Result<(), String> {
    macro_rules! uint {
        ($ty:ty) => {{
            let v = parse_uint(s)?;
            let v = <$ty>::try_from(v).map_err(|_| format!("out of range for {t}"))?;
            out.extend_from_slice(&v.to_le_bytes());
        }};
    }
    macro_rules! sint {
        ($ty:ty) => {{
            let v = parse_int(s)?;
            let v = <$ty>::try_from(v).map_err(|_| format!("out of range for {t}"))?;
            out.extend_from_slice(&v.to_le_bytes());
        }};
    }
    match t {
        Type::Bool => match s {
            "true" => out.push(1),
            "false" => out.push(0),
            _ => return Err("expected true or false".into()),
        },
        Type::U8 => uint!(u8),
        Type::U16 => uint!(u16),
        Type::U32 => uint!(u32),
        Type::U64 => uint!(u64),
        Type::U128 => uint!(u128),
        Type::U256 => out.extend_from_slice(&parse_uint(s)?.to_le_bytes()),
        Type::I8 => sint!(i8),
        Type::I16 => sint!(i16),
        Type::I32 => sint!(i32),
        Type::I64 => sint!(i64),
        Type::I128 => sint!(i128),
        Type::I256 => out.extend_from_slice(&parse_int(s)?.to_le_bytes()),
        Type::Address => {
            let a = AccountAddress::parse(s.trim_start_matches('@')).ok_or("expected an address")?;
            out.extend_from_slice(&a.0);
        }
        Type::Signer => {
            let a = AccountAddress::parse(s.trim_start_matches('@')).ok_or("expected a signer address")?;
            if flavour == StatusFlavour::Aptos {
                out.push(0); // signer enum, variant Master
            }
            out.extend_from_slice(&a.0);
        }
        Type::Vector(e) if **e == Type::U8 && !s.starts_with('[') => {
            let bytes = if let Some(text) = s.strip_prefix("b\"").and_then(|x| x.strip_suffix('"')) {
                unescape_byte_string(text)?
            } else if let Some(h) =
                s.strip_prefix("0x").or_else(|| s.strip_prefix("x\"").and_then(|x| x.strip_suffix('"')))
            {
                hex::decode(h).map_err(|e| e.to_string())?
            } else {
                return Err("expected 0xHEX, b\"text\" or [..] for vector<u8>".into());
            };
            bcs::write_uleb(out, bytes.len() as u64);
            out.extend_from_slice(&bytes);
        }
        Type::Vector(e) => {
            let items = split_list(s)?;
            bcs::write_uleb(out, items.len() as u64);
            for i in items {
                write_literal(out, i, e, flavour)?;
            }
        }
        Type::Datatype(id, _) if &*id.module == "string" && &*id.name == "String" => {
            let text = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(s);
            bcs::write_uleb(out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
        t => return Err(format!("cannot parse arguments of type {t}; use --bcs-args")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--args` literals: each parses to its BCS bytes, or fails; numbers at
    /// both ends of their type's range and one past.
    #[test]
    fn argument_literals_parse_to_bcs_or_fail() {
        let bytes = || Type::Vector(Box::new(Type::U8));
        let nested = || Type::Vector(Box::new(Type::Vector(Box::new(Type::U16))));
        let u256_max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        let u256_past = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
        let i256_min = "-57896044618658097711785492504343953926634992332820282019728792003956564819968";
        // (type, literal, BCS bytes as hex; None: refused)
        let table: Vec<(Type, &str, Option<String>)> = vec![
            (Type::U8, "255", Some("ff".into())),
            (Type::U8, "256", None),
            (Type::U8, "-1", None),
            (Type::U8, "0x10", Some("10".into())),
            (Type::U64, "7u64", Some("0700000000000000".into())),
            (Type::I8, "-128", Some("80".into())),
            (Type::I8, "-129", None),
            (Type::I8, "128", None),
            (Type::U256, u256_max, Some("ff".repeat(32))),
            (Type::U256, u256_past, None),
            (Type::I256, i256_min, Some(format!("{}80", "00".repeat(31)))),
            (Type::I256, &i256_min[1..], None),
            (Type::Bool, "true", Some("01".into())),
            (Type::Bool, "1", None),
            (bytes(), "b\"a\\x00b\\\\\\\"\\n\"", Some("066100625c220a".into())),
            (bytes(), "b\"\\x4\"", None),
            (bytes(), "b\"\\q\"", None),
            (bytes(), "0x0102", Some("020102".into())),
            (bytes(), "0x0", None),
            (bytes(), "[1, 2]", Some("020102".into())),
            (Type::Vector(Box::new(bytes())), "[b\"a,\\\"]\", b\"\"]", Some("0204612c225d00".into())),
            (nested(), "[[1, 2], [3]]", Some("020201000200010300".into())),
            (nested(), "[[1, 65536]]", None),
            (nested(), "[[1, 2]", None),
            (Type::Address, "0x", None),
        ];
        for (t, lit, want) in table {
            let mut out = Vec::new();
            let got = write_literal(&mut out, lit, &t, StatusFlavour::Aptos).map(|()| hex::encode(&out));
            assert_eq!(got.ok(), want, "{t} from `{lit}`");
        }
    }
}
