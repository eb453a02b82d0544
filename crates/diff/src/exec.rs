//! The executor adapter: runs a case on movejit-engine with executor
//! `interp`, `jit` or `auto` and a gas budget, and turns what the engine
//! returns into an [`Outcome`]. Every executor goes through the same engine
//! API and the same conversion, so whatever the JIT learns to compile is
//! compared here without change.

#![forbid(unsafe_code)]

use crate::case::Case;
use crate::outcome::{Loc, Outcome};
use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId, VmError, WriteOp};
use movejit_engine::{Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
use movejit_format::{AccountAddress, StatusCode, StatusFlavour};
use movejit_runtime::compiled::CompiledStats;
use movejit_runtime::natives::NativeExtensions;
use movejit_runtime::NativeRegistry;
use movejit_sui_natives::{ObjectEffects, ObjectRuntime, TransactionContext};
use std::sync::OnceLock;

/// The executors compared: the engine's executor choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    /// The reference interpreter alone.
    Interp,
    /// Compiled code only: refuses a case whose call graph does not compile.
    Jit,
    /// Compiled where it compiles, interpreted elsewhere (mixed execution).
    Auto,
}

impl Executor {
    pub fn kind(self) -> ExecutorKind {
        match self {
            Executor::Interp => ExecutorKind::Interpreter,
            Executor::Jit => ExecutorKind::Jit,
            Executor::Auto => ExecutorKind::Auto,
        }
    }
}

/// Why a case did not produce an [`Outcome`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// Valid code the JIT does not compile yet (not a divergence); the
    /// reason is short and stable so runs can be counted by it.
    Unsupported(String),
    /// The JIT failed in a way it never may on verified code (malformed
    /// code, code generation failure or panic).
    Failed(String),
}

/// The gas table of the unit schedule.
pub fn cost_table() -> CostTable {
    CostTable::default()
}

/// The gas schedule a comparison charges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// The placeholder table ([`cost_table`]).
    #[default]
    Unit,
    /// Aptos's production schedule (v50) with its memory quota, for
    /// Aptos-flavoured cases; Sui cases keep the unit schedule.
    Aptos,
}

impl Schedule {
    /// A meter with `budget` internal units for a case of `flavour`.
    fn meter(self, flavour: StatusFlavour, budget: u64) -> GasMeter {
        match (self, flavour) {
            (Schedule::Aptos, StatusFlavour::Aptos) => GasMeter::aptos(AptosPricing::v50(), budget),
            _ => GasMeter::new(cost_table(), budget),
        }
    }
}

/// The engine configuration of a flavour with executor `executor`: the
/// framework natives of the flavour registered, as a node registers them.
pub fn engine_config(flavour: StatusFlavour, executor: Executor) -> EngineConfig {
    static APTOS_NATIVES: OnceLock<NativeRegistry> = OnceLock::new();
    static SUI_NATIVES: OnceLock<NativeRegistry> = OnceLock::new();
    let base = match flavour {
        StatusFlavour::Aptos => EngineConfig {
            natives: APTOS_NATIVES.get_or_init(movejit_aptos_natives::aptos_registry).clone(),
            ..EngineConfig::aptos()
        },
        StatusFlavour::Sui => EngineConfig {
            natives: SUI_NATIVES.get_or_init(movejit_sui_natives::sui_registry).clone(),
            ..EngineConfig::sui()
        },
    };
    EngineConfig { executor: executor.kind(), ..base }
}

/// The transaction a Sui case runs as: its natives' context, and what a
/// `&TxContext` argument holds (the same on every executor).
pub fn sui_transaction() -> TransactionContext {
    let mut digest = [0u8; 32];
    digest[0] = 0xd1;
    TransactionContext { sender: AccountAddress::from_u64(0xA11CE), digest, epoch: 7, ..TransactionContext::default() }
}

/// A case made ready to run many times on one executor: modules in a store,
/// one engine whose code cache (shared by its sessions) keeps compiled code
/// across runs; each run gets a fresh interpreter session.
pub struct Prepared<'c> {
    case: &'c Case,
    executor: Executor,
    engine: Engine,
    storage: InMemoryStorage,
    /// Compiled-code counters after the first run (`None` for `Interp`).
    first_stats: Option<CompiledStats>,
    schedule: Schedule,
}

impl<'c> Prepared<'c> {
    pub fn new(executor: Executor, case: &'c Case) -> Prepared<'c> {
        Self::with_config(executor, case, engine_config(case.flavour, executor))
    }

    /// Executor `Auto` switching tiers inside runs: each instance is
    /// interpreted for its first `threshold` calls (over all runs of this
    /// engine), then compiled, so a function called in a loop changes tier
    /// in the middle of a run, at a point set by `threshold`.
    pub fn tiered(case: &'c Case, threshold: u32) -> Prepared<'c> {
        let base = engine_config(case.flavour, Executor::Auto);
        let jit = movejit_engine::JitOptions { threshold, ..base.jit.clone() };
        Self::with_config(Executor::Auto, case, EngineConfig { jit, ..base })
    }

    fn with_config(executor: Executor, case: &'c Case, config: EngineConfig) -> Prepared<'c> {
        let mut storage = InMemoryStorage::default();
        for (m, bytes) in case.modules.iter().zip(case.module_bytes()) {
            storage.publish(ModuleId::new(*m.address(), m.name()), bytes);
        }
        let engine = movejit_engine::new_engine(config);
        Prepared { case, executor, engine, storage, first_stats: None, schedule: Schedule::Unit }
    }

    /// Runs charge `schedule` (the unit schedule unless set).
    pub fn with_schedule(self, schedule: Schedule) -> Self {
        Prepared { schedule, ..self }
    }

    /// What compiled code did in the first run: `None` for the interpreter.
    pub fn first_stats(&self) -> Option<&CompiledStats> {
        self.first_stats.as_ref()
    }

    /// Runs the case with `budget` gas units. `Jit` reports a case it
    /// cannot compile as [`RunError`] instead of an outcome.
    pub fn run(&mut self, budget: u64) -> Result<Outcome, RunError> {
        let c = self.case;
        self.run_call(&c.function, &c.args, budget)
    }

    /// Runs another function of the case's module (the case's type
    /// arguments) on `args`: tables of many calls share one engine.
    pub fn run_call(&mut self, function: &str, args: &[Vec<u8>], budget: u64) -> Result<Outcome, RunError> {
        let c = self.case;
        let mut gas = self.schedule.meter(c.flavour, budget);
        let id = ModuleId::new(c.address, &c.module);
        let (engine, storage) = (&self.engine, &self.storage);
        let call = |gas: &mut GasMeter| {
            let mut session = engine.new_session(storage);
            let result = session.execute_function(&id, function, &c.type_args, args, gas);
            let stats = session.compiled_stats();
            (result.and_then(|r| Ok((r, session.finish()?))), stats)
        };
        // A Sui call is a transaction: its natives share one object runtime,
        // rolled back when it fails, whose effects are compared too.
        let (result, stats, effects) = match c.flavour {
            StatusFlavour::Aptos => {
                let (result, stats) = call(&mut gas);
                (result, stats, Vec::new())
            }
            StatusFlavour::Sui => {
                let mut ext = NativeExtensions::new();
                ext.insert(sui_transaction());
                let mut stats = None;
                let result = movejit_sui_natives::run_transaction(&mut ext, || {
                    let (r, s) = call(&mut gas);
                    stats = s;
                    r
                });
                let effects = sui_effects(ext.get_or_default::<ObjectRuntime>().take_effects());
                (result, stats, effects)
            }
        };
        if self.first_stats.is_none() {
            self.first_stats = stats;
        }
        let outcome = match result {
            Err(e) => {
                if self.executor == Executor::Jit {
                    not_compiled(&e)?;
                }
                failed(e, gas.used())
            }
            Ok((r, cs)) => Outcome {
                status: StatusCode::EXECUTED,
                sub_status: None,
                abort_code: None,
                message: None,
                location: None,
                returns: r.returns,
                mutrefs: r.mutrefs,
                changes: cs
                    .resources
                    .into_iter()
                    .map(|((a, t), op)| {
                        let bytes = match op {
                            WriteOp::Write(b) => Some(b),
                            WriteOp::Delete => None,
                        };
                        (format!("{}/{}", a.to_hex_short(), t), bytes)
                    })
                    .chain(effects)
                    .collect(),
                gas_used: r.gas_used,
                memory_used: None,
            },
        };
        let outcome = Outcome { memory_used: gas.aptos_meter().map(|a| a.memory_used()), ..outcome };
        Ok(outcome)
    }
}

/// A Sui transaction's object effects as [`Outcome::changes`] entries:
/// ids created and deleted, transfers (owner, type, value), events in
/// order.
fn sui_effects(e: ObjectEffects) -> Vec<(String, Option<Vec<u8>>)> {
    let id = |a: &AccountAddress| a.to_hex_short();
    let mut out: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    out.extend(e.new_ids.iter().map(|a| (format!("new object {}", id(a)), None)));
    out.extend(e.deleted_ids.iter().map(|a| (format!("deleted object {}", id(a)), None)));
    out.extend(e.transfers.iter().map(|(a, t)| {
        (format!("transfer {} to {:?} as {}", id(a), t.owner, t.ty), Some(format!("{:?}", t.value).into_bytes()))
    }));
    out.extend(e.events.into_iter().enumerate().map(|(i, ev)| (format!("event {i} {}", ev.ty), Some(ev.data))));
    out
}

/// `Err` when `e` is executor `Jit`'s refusal of code it does not compile.
fn not_compiled(e: &VmError) -> Result<(), RunError> {
    if e.status != StatusCode::FEATURE_NOT_ENABLED {
        return Ok(());
    }
    let Some(why) = e.message.as_deref().and_then(|m| m.strip_prefix(JIT_NOT_COMPILED)) else { return Ok(()) };
    Err(classify(why))
}

/// A compile refusal in stable terms: "not supported yet" reasons shortened
/// to their kind (`instruction Pack`, `local of type`, ...); failures that
/// must never happen on verified code are [`RunError::Failed`].
pub fn classify(why: &str) -> RunError {
    const UNSUPPORTED: &str = "not supported by the JIT yet: ";
    const FATAL: [&str; 3] = ["malformed or unverified code", "code generation failed", "code generator panicked"];
    if FATAL.iter().any(|f| why.contains(f)) {
        return RunError::Failed(why.to_string());
    }
    let reason = match why.find(UNSUPPORTED) {
        Some(i) => &why[i + UNSUPPORTED.len()..],
        // e.g. "type argument … is not a scalar": the part after the function name.
        None => why.rsplit(": ").next().unwrap_or(why),
    };
    let short = match reason.split_once('(') {
        Some((head, _)) => head.trim(),
        None => reason.trim(),
    };
    let short = if short.starts_with("function of ") {
        "function too long"
    } else if short.starts_with("type argument") {
        "type argument"
    } else {
        short
    };
    RunError::Unsupported(short.to_string())
}

/// The outcome of a call that failed with `e` after using `gas_used`.
fn failed(e: VmError, gas_used: u64) -> Outcome {
    let aborted = e.status == StatusCode::ABORTED;
    Outcome {
        status: e.status,
        sub_status: if aborted { None } else { e.sub_status },
        abort_code: if aborted { e.sub_status } else { None },
        // Every executor reports the same message (jit-abi.md 4).
        message: e.message,
        location: e.location.map(|l| Loc {
            module: short_module(&l.module),
            function: l.function_index,
            code_offset: l.code_offset,
        }),
        returns: Vec::new(),
        mutrefs: Vec::new(),
        changes: Vec::new(),
        gas_used,
        memory_used: None,
    }
}

/// `0x<long>::m` → `0xshort::m`.
fn short_module(long: &str) -> String {
    match long.split_once("::") {
        Some((a, n)) => match AccountAddress::parse(a) {
            Some(addr) => format!("{}::{}", addr.to_hex_short(), n),
            None => long.to_string(),
        },
        None => long.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_classified() {
        let table: &[(&str, RunError)] = &[
            (
                "0xcafe::m::f: not supported by the JIT yet: instruction Pack (at 3)",
                RunError::Unsupported("instruction Pack".into()),
            ),
            ("0xcafe::m::f: type argument Vector(U8) is not a scalar", RunError::Unsupported("type argument".into())),
            (
                "0xcafe::m::f: not supported by the JIT yet: function of 70000 instructions",
                RunError::Unsupported("function too long".into()),
            ),
            ("0xcafe::m::f: code generator panicked", RunError::Failed("0xcafe::m::f: code generator panicked".into())),
            (
                "0xcafe::m::f: malformed or unverified code: stack",
                RunError::Failed("0xcafe::m::f: malformed or unverified code: stack".into()),
            ),
        ];
        for (why, want) in table {
            assert_eq!(&classify(why), want, "{why}");
        }
    }
}
