//! `movejit compile`: compile one function instantiation with the JIT and
//! print its Cranelift IR (`--emit clif`) or machine code (`--emit asm`),
//! unmetered or metered by Aptos's schedule (`--metered`).
//! Modules are verified (with their dependencies) before the JIT sees them.

use crate::files::expand_mv_paths;
use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{InMemoryStorage, ModuleId, Type};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::AccountAddress;
use movejit_jit::{CostTable, Emit, JitConfig, JitEngine};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EmitChoice {
    Clif,
    Asm,
}

#[derive(clap::Args)]
pub struct Args {
    /// Module files (.mv) and folders of them, then ADDRESS::MODULE::FUNCTION.
    #[arg(required = true, num_args = 2..)]
    items: Vec<String>,
    /// Type arguments (type tags: `u64`, `vector<u8>`, `0x1::m::S<u8>`, ...).
    #[arg(long, num_args = 1..)]
    type_args: Vec<String>,
    #[arg(long, value_enum, default_value = "clif")]
    emit: EmitChoice,
    /// Show the code metered by Aptos's schedule, as the engine compiles it
    /// for metered sessions (`bench --metered`, `run` under Aptos).
    #[arg(long)]
    metered: bool,
}

pub fn run(args: Args) -> ExitCode {
    match compile(args) {
        Ok(text) => {
            movejit_cli::out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("movejit compile: {e}");
            ExitCode::from(1)
        }
    }
}

fn compile(args: Args) -> Result<String, String> {
    let (function, paths) = args.items.split_last().ok_or("ADDRESS::MODULE::FUNCTION is required")?;
    let mut parts = function.rsplitn(3, "::");
    let fname = parts.next().unwrap_or_default();
    let mname = parts.next().ok_or("the function must be ADDRESS::MODULE::FUNCTION")?;
    let addr = parts.next().and_then(AccountAddress::parse).ok_or("the function must be ADDRESS::MODULE::FUNCTION")?;
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let files = expand_mv_paths(&paths).map_err(|e| format!("reading paths: {e}"))?;
    let mut storage = InMemoryStorage::default();
    let mut modules = Vec::new();
    for p in &files {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let m = movejit_format::decode_module(&bytes).map_err(|e| format!("{}: {}", p.display(), e.message))?;
        let id = ModuleId::new(*m.address(), m.name());
        storage.publish(id.clone(), bytes);
        modules.push((id, m));
    }
    let target = ModuleId::new(addr, mname);
    // Verify the target and its dependencies the way `run` does.
    let engine = Engine::new(EngineConfig::aptos());
    let mut session = engine.new_session(&storage);
    session
        .load_module(&target)
        .map_err(|e| format!("{target}: {} {}", e.status.name(), e.message.unwrap_or_default()))?;
    let kinds = args
        .type_args
        .iter()
        .map(|t| Type::parse_tag(t).ok_or_else(|| format!("type argument {t}: not a type tag")))
        .collect::<Result<Vec<_>, _>>()?;
    let config = if args.metered {
        // As the engine's Aptos code cache (`adapter.rs`): Aptos prices only.
        JitConfig { cost: Some(CostTable::zero()), aptos: Some(AptosPricing::v50()), ..JitConfig::default() }
    } else {
        JitConfig::default()
    };
    let mut jit = JitEngine::new(config).map_err(|e| e.to_string())?;
    let mut number = None;
    for (id, m) in modules {
        let n = jit.add_module(m).map_err(|e| e.to_string())?;
        if id == target {
            number = Some(n);
        }
    }
    let number = number.ok_or_else(|| format!("module {target} not found"))?;
    let key = jit.instance_key(number, fname, &kinds).map_err(|e| e.to_string())?;
    let emit = match args.emit {
        EmitChoice::Clif => Emit::Clif,
        EmitChoice::Asm => Emit::Asm,
    };
    jit.dump(&key, emit).map_err(|e| e.to_string())
}
