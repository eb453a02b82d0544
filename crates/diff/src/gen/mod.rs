//! Generators of random verifiable programs and their assembly into
//! [`Case`]s.

#![forbid(unsafe_code)]

pub mod program;
pub mod single;
pub mod ty;

use crate::case::Case;
use movejit_format::{AccountAddress, CompiledModule, StatusFlavour};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use movejit_runtime::Type;
pub use program::{Expect, Features, Program};
use ty::Sc;

/// Why a generated program could not be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// The assembler refused the text (a generator bug).
    Assembler(String),
    /// The verifier refused the module: its status name.
    Verifier(String),
}

fn sc_type(s: Sc) -> Type {
    match s {
        Sc::Bool => Type::Bool,
        Sc::Int(i) => i.to_type(),
    }
}

/// Assembles the units of `p` (each against the ones before it).
pub fn assemble_units(units: &[String]) -> Result<Vec<CompiledModule>, Rejected> {
    let mut modules: Vec<CompiledModule> = Vec::new();
    for text in units {
        let opts = AsmOptions { default_version: None, deps: &modules };
        match assemble_with(text, opts) {
            Ok(Assembled::Module(m)) => modules.push(m),
            Ok(Assembled::Script(_)) => return Err(Rejected::Assembler("a script".into())),
            Err(e) => return Err(Rejected::Assembler(e.to_string())),
        }
    }
    Ok(modules)
}

/// Verifies each module against the ones before it.
pub fn verify_all(modules: &[CompiledModule], flavour: StatusFlavour) -> Result<(), Rejected> {
    let config = match flavour {
        StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
        StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
    };
    for (i, m) in modules.iter().enumerate() {
        let deps: Vec<&CompiledModule> = modules[..i].iter().collect();
        movejit_verifier::verify_module(m, &deps, &config)
            .map_err(|e| Rejected::Verifier(format!("{}: {}", e.status.name(), e.message)))?;
    }
    Ok(())
}

/// The cases of an assembled, verified program.
pub fn cases_of(p: &Program, modules: Vec<CompiledModule>, name: &str) -> Vec<Case> {
    let flavour = if p.sui { StatusFlavour::Sui } else { StatusFlavour::Aptos };
    let address = AccountAddress::from_u64(0xcafe);
    p.calls
        .iter()
        .map(|(f, tys, args)| Case {
            name: format!("{name}:{f}"),
            flavour,
            modules: modules.clone(),
            address,
            module: program::MODULE.into(),
            function: f.clone(),
            type_args: tys.iter().map(|t| sc_type(*t)).collect(),
            args: args.clone(),
        })
        .collect()
}

/// Assembles and verifies `p`; its cases.
pub fn build(p: &Program, name: &str) -> Result<Vec<Case>, Rejected> {
    let modules = assemble_units(&p.units)?;
    let flavour = if p.sui { StatusFlavour::Sui } else { StatusFlavour::Aptos };
    verify_all(&modules, flavour)?;
    Ok(cases_of(p, modules, name))
}
