//! The executor adapter: the ONE place that knows how each executor is
//! driven. "Run this case on executor X with this gas budget → [`Outcome`]".
//! When the unified engine (executor `interp | jit | auto`) lands, only this
//! module changes.

#![forbid(unsafe_code)]

use crate::case::Case;
use crate::outcome::{Loc, Outcome};
use movejit_format::{AccountAddress, StatusCode, StatusFlavour};
use movejit_interp::runtime::{CostTable, GasMeter, InMemoryStorage, Limits, ModuleId, Type, VmError, WriteOp};
use movejit_interp::{Engine, EngineConfig};
use movejit_jit::{CompileError, ExecError, InstanceKey, JitConfig, JitEngine, Kind};

/// The executors compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    Interp,
    Jit,
}

/// Why a case did not produce an [`Outcome`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// Valid code the executor does not handle yet (not a divergence);
    /// the reason is short and stable so runs can be counted by it.
    Unsupported(String),
    /// The executor failed in a way it never may on verified code
    /// (compile error other than "unsupported", thread failure).
    Failed(String),
}

/// The gas table every comparison uses.
pub fn cost_table() -> CostTable {
    CostTable::default()
}

fn engine_config(flavour: StatusFlavour) -> EngineConfig {
    match flavour {
        StatusFlavour::Aptos => EngineConfig::aptos(),
        StatusFlavour::Sui => EngineConfig::sui(),
    }
}

fn limits(flavour: StatusFlavour) -> Limits {
    engine_config(flavour).limits
}

/// A case made ready to run many times on one executor (modules published,
/// code compiled once).
pub enum Prepared<'c> {
    Interp(Box<InterpRunner<'c>>),
    Jit(Box<JitRunner<'c>>),
}

impl<'c> Prepared<'c> {
    pub fn new(executor: Executor, case: &'c Case) -> Result<Prepared<'c>, RunError> {
        Ok(match executor {
            Executor::Interp => Prepared::Interp(Box::new(InterpRunner::new(case))),
            Executor::Jit => Prepared::Jit(Box::new(JitRunner::new(case)?)),
        })
    }

    /// Runs the case with `budget` gas units.
    pub fn run(&mut self, budget: u64) -> Result<Outcome, RunError> {
        match self {
            Prepared::Interp(r) => Ok(r.run(budget)),
            Prepared::Jit(r) => r.run(budget),
        }
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

pub struct InterpRunner<'c> {
    case: &'c Case,
    engine: Engine,
    storage: InMemoryStorage,
}

impl<'c> InterpRunner<'c> {
    fn new(case: &'c Case) -> Self {
        let mut storage = InMemoryStorage::default();
        for (m, bytes) in case.modules.iter().zip(case.module_bytes()) {
            storage.publish(ModuleId::new(*m.address(), m.name()), bytes);
        }
        InterpRunner { case, engine: Engine::new(engine_config(case.flavour)), storage }
    }

    fn run(&self, budget: u64) -> Outcome {
        let c = self.case;
        let mut session = self.engine.new_session(&self.storage);
        let mut gas = GasMeter::new(cost_table(), budget);
        let id = ModuleId::new(c.address, &c.module);
        let result = session.execute_function(&id, &c.function, &c.type_args, &c.args, &mut gas);
        let failed = |e: VmError, gas_used: u64| {
            let aborted = e.status == StatusCode::ABORTED;
            Outcome {
                status: e.status,
                sub_status: if aborted { None } else { e.sub_status },
                abort_code: if aborted { e.sub_status } else { None },
                message: if aborted { e.message } else { None },
                location: e.location.map(|l| Loc {
                    module: short_module(&l.module),
                    function: l.function_index,
                    code_offset: l.code_offset,
                }),
                returns: Vec::new(),
                mutrefs: Vec::new(),
                changes: Vec::new(),
                gas_used,
            }
        };
        match result {
            Err(e) => failed(e, gas.used()),
            Ok(r) => match session.finish() {
                Err(e) => failed(e, gas.used()),
                Ok(cs) => Outcome {
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
                        .collect(),
                    gas_used: r.gas_used,
                },
            },
        }
    }
}

pub struct JitRunner<'c> {
    case: &'c Case,
    jit: JitEngine,
    key: InstanceKey,
}

/// The JIT's kind of a runtime type (phase 1: scalars only).
fn kind_of(t: &Type) -> Option<Kind> {
    Some(match t {
        Type::Bool => Kind::Bool,
        Type::U8 => Kind::U8,
        Type::U16 => Kind::U16,
        Type::U32 => Kind::U32,
        Type::U64 => Kind::U64,
        Type::U128 => Kind::U128,
        Type::U256 => Kind::U256,
        Type::I8 => Kind::I8,
        Type::I16 => Kind::I16,
        Type::I32 => Kind::I32,
        Type::I64 => Kind::I64,
        Type::I128 => Kind::I128,
        Type::I256 => Kind::I256,
        _ => return None,
    })
}

/// A compile error in the executor's terms: "unsupported" reasons are
/// shortened to their kind (`instruction Pack`, `local of type`, ...).
fn compile_error(e: CompileError) -> RunError {
    match e {
        CompileError::Unsupported(reason) => {
            let short = match reason.split_once('(') {
                Some((head, _)) => head.trim().to_string(),
                None => reason,
            };
            let short = if short.starts_with("function of ") { "function too long".to_string() } else { short };
            RunError::Unsupported(short)
        }
        other => RunError::Failed(other.to_string()),
    }
}

impl<'c> JitRunner<'c> {
    fn new(case: &'c Case) -> Result<Self, RunError> {
        let l = limits(case.flavour);
        let config = JitConfig {
            cost: Some(cost_table()),
            max_call_depth: l.max_call_depth as u64,
            max_operand_stack: l.max_operand_stack as u64,
            ..JitConfig::default()
        };
        let mut jit = JitEngine::new(config).map_err(|e| RunError::Failed(e.to_string()))?;
        for m in &case.modules {
            jit.add_module(m.clone()).map_err(compile_error)?;
        }
        let kinds = case
            .type_args
            .iter()
            .map(|t| kind_of(t).ok_or_else(|| RunError::Unsupported("type argument".into())))
            .collect::<Result<Vec<_>, _>>()?;
        let midx = jit
            .module_index(&case.address, &case.module)
            .ok_or_else(|| RunError::Failed(format!("module {} not added", case.module)))?;
        let key = jit.instance_key(midx, &case.function, &kinds).map_err(compile_error)?;
        jit.compile(&key).map_err(compile_error)?;
        Ok(JitRunner { case, jit, key })
    }

    fn run(&mut self, budget: u64) -> Result<Outcome, RunError> {
        let o = match self.jit.execute(&self.key, &self.case.args, Some(budget)) {
            Ok(o) => o,
            Err(ExecError::Compile(e)) => return Err(compile_error(e)),
            Err(e) => return Err(RunError::Failed(e.to_string())),
        };
        let location = o.location.map(|l| Loc {
            module: self
                .jit
                .module(l.module)
                .map(|m| format!("{}::{}", m.address().to_hex_short(), m.name()))
                .unwrap_or_else(|| format!("#{}", l.module)),
            function: l.function,
            code_offset: l.code_offset,
        });
        Ok(Outcome {
            status: o.status,
            sub_status: None,
            abort_code: o.abort_code,
            message: None,
            location,
            returns: o.returns,
            mutrefs: Vec::new(),
            changes: Vec::new(),
            gas_used: budget.saturating_sub(o.gas_left.unwrap_or(budget)),
        })
    }
}
