//! The Move bytecode verifier for both flavours (Aptos bytecode v5–v10, Sui
//! v5–v7).
//!
//! Input is a decoded [`CompiledModule`] (or Aptos script) plus the modules it
//! imports. Every check of the real Move verifiers runs as its own pass, in
//! Move's order; the first failure is reported as a [`VerifyError`] with the
//! status Move gives for it:
//!
//! 1. `bounds` – every index in range (a safety net behind the decoder's own check)
//! 2. `features` – opcodes and tables exist in the module's flavour and version
//! 3. `limits` – type parameter, parameter, type size/depth and definition counts
//! 4. `duplication` – unique table entries and names, handles ↔ definitions
//! 5. `signatures` – well-formed types, ability constraints of instantiations, phantoms
//! 6. `instruction_consistency` – generic vs non-generic forms, closure masks
//! 7. `constants`, 8. `friends`, 9. `struct_defs` (no recursive datatypes),
//!    10. `instantiation_loops`
//! 11. per function: `struct_api` (Aptos v10), `control_flow` (v5 loop rule or
//!     reducibility), `stack_usage`, `type_safety`, `locals_safety`,
//!     `reference_safety` (borrow graph), `acquires`
//! 12. `entry_points`, `access_specifiers` (what Aptos's loader checks),
//!     then Sui's package rules (`sui`: objects, global
//!     storage, id leak, private generics, init/entry, one-time witness)
//!     when configured
//! 13. `natives` – defined natives exist in the VM's table, when one is given
//! 14. `dependencies` – linking against the imported modules, no cycles
//!
//! Upgrade compatibility is [`compat::check_upgrade`]; [`publish`] stages a
//! bundle over published modules (duplicates, upgrades, then verification). Where Aptos and Sui
//! differ, [`VerifierConfig::flavour`] selects whose rules and status names
//! apply; limits and the work budget ([`VerifierConfig`]) default to each
//! chain's production values.
//!
//! The passes assume nothing about their input: the bounds pass runs first
//! (the model may come from anywhere), no pass panics on malformed tables,
//! and a work budget keeps the abstract interpreters from running
//! quadratic-plus. What the JIT may trust after `verify_module` returns
//! `Ok`: operand stack heights are balanced per basic block, every
//! instruction sees operands of the types it expects, locals are
//! initialised before use and never read after a move, and references obey
//! Move's borrow rules.

#![forbid(unsafe_code)]

mod absint;
mod access_specifiers;
mod acquires;
mod binary;
mod bounds;
mod cfg;
pub mod compat;
mod config;
mod constants;
mod control_flow;
pub mod dependencies;
mod duplication;
mod entry_points;
mod error;
mod features;
mod friends;
mod instantiation_loops;
mod instruction_consistency;
mod limits;
mod locals_safety;
mod meter;
mod natives;
pub mod publish;
mod reference_safety;
mod signatures;
mod stack_usage;
mod struct_api;
mod struct_defs;
mod sui;
mod type_safety;
mod types;

use movejit_format::{CompiledModule, CompiledScript};

pub use config::{NativeTable, VerifierConfig};
pub use error::{Location, VerifyError, VerifyResult};
pub use movejit_format::StatusCode;

/// Verifies `module` on its own and against its dependencies (every module it
/// imports must be in `deps`; extra modules are ignored).
pub fn verify_module(
    module: &CompiledModule,
    deps: &[&CompiledModule],
    config: &VerifierConfig,
) -> Result<(), VerifyError> {
    verify_module_against(module, &[], deps, config)
}

/// [`verify_module`] with the dependencies in two lists: `checked` are
/// modules known to be bounds-checked (made by `movejit_format`'s decoder,
/// or verified: a loader's loaded modules), which are not checked again;
/// `others` may be any model.
pub fn verify_module_against(
    module: &CompiledModule,
    checked: &[&CompiledModule],
    others: &[&CompiledModule],
    config: &VerifierConfig,
) -> Result<(), VerifyError> {
    guard(|| {
        verify_module_alone(module, config)?;
        dependencies::verify_module(module, checked, others, config)
    })
}

/// Verifies `module` by itself: every pass except linking against deps.
pub fn verify_module_alone(module: &CompiledModule, config: &VerifierConfig) -> Result<(), VerifyError> {
    guard(|| {
        bounds::verify_module(module)?;
        let mut meter = meter::Meter::new(config);
        features::verify_module(module, config)?;
        limits::verify_module(module, config)?;
        duplication::verify_module(module)?;
        signatures::verify_module(module, config)?;
        instruction_consistency::verify_module(module)?;
        constants::verify_module(module)?;
        friends::verify_module(module)?;
        struct_defs::verify_module(module, config)?;
        instantiation_loops::verify_module(module)?;
        verify_code_units(module, config, &mut meter)?;
        entry_points::verify_module(module, config)?;
        access_specifiers::verify_module(module)?;
        if config.sui_rules {
            sui::verify_module(module, config)?;
        }
        if let Some(table) = &config.known_natives {
            natives::verify_module(module, table, config.is_sui())?;
        }
        Ok(())
    })
}

/// Verifies an Aptos script against its dependencies.
pub fn verify_script(
    script: &CompiledScript,
    deps: &[&CompiledModule],
    config: &VerifierConfig,
) -> Result<(), VerifyError> {
    guard(|| {
        let module = binary::script_as_module(script)?;
        let as_script = |e: VerifyError| e.into_script_error();
        bounds::verify_module(&module).map_err(as_script)?;
        let mut meter = meter::Meter::new(config);
        limits::verify_module(&module, config).map_err(as_script)?;
        signatures::verify_module(&module, config).map_err(as_script)?;
        instruction_consistency::verify_module(&module).map_err(as_script)?;
        constants::verify_module(&module).map_err(as_script)?;
        verify_code_units(&module, config, &mut meter).map_err(as_script)?;
        entry_points::verify_script_signature(&module, config).map_err(as_script)?;
        access_specifiers::verify_module(&module).map_err(as_script)?;
        dependencies::verify_module(&module, &[], deps, config).map_err(as_script)
    })
}

fn verify_code_units(
    module: &CompiledModule,
    config: &VerifierConfig,
    meter: &mut meter::Meter,
) -> Result<(), VerifyError> {
    let mut back_edges = 0usize;
    // Struct-API wrappers are checked before reference safety trusts them.
    let struct_api =
        if module.version >= 10 && !config.is_sui() { Some(struct_api::Context::new(module)?) } else { None };
    let module_acquires = acquires::ModuleAcquires::new(module);
    for (i, fdef) in module.function_defs.iter().enumerate() {
        let index = i as u16;
        if let Some(ctx) = &struct_api {
            struct_api::check_function(module, ctx, fdef, index)?;
        }
        let Some(code) = &fdef.code else { continue };
        meter.enter_function();
        let func = binary::FunctionContext::new(module, index, fdef, code)?;
        let cfg = control_flow::verify(module, config, &func)?;
        if let Some(limit) = config.max_basic_blocks {
            if cfg.num_blocks() > limit {
                return Err(VerifyError::at_code(StatusCode::TOO_MANY_BASIC_BLOCKS, index, 0));
            }
        }
        if let Some(limit) = config.max_back_edges_per_function {
            if cfg.num_back_edges() > limit {
                return Err(VerifyError::at_code(StatusCode::TOO_MANY_BACK_EDGES, index, 0));
            }
        }
        back_edges += cfg.num_back_edges();
        stack_usage::verify(module, config, &func, &cfg)?;
        type_safety::verify(module, config, &func, &cfg, meter)?;
        locals_safety::verify(module, &func, &cfg, meter)?;
        reference_safety::verify(module, config, &module_acquires, &func, &cfg, meter)?;
        acquires::verify(module, &module_acquires, &func)?;
        meter.leave_function()?;
    }
    if let Some(limit) = config.max_back_edges_per_module {
        if back_edges > limit {
            return Err(VerifyError::module(StatusCode::TOO_MANY_BACK_EDGES));
        }
    }
    Ok(())
}

/// Last line of defence: a bug in a pass must not take the process down.
fn guard(f: impl FnOnce() -> Result<(), VerifyError>) -> Result<(), VerifyError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(VerifyError::module(StatusCode::VERIFIER_INVARIANT_VIOLATION).with_message("verifier panicked")),
    }
}
