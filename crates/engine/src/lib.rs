//! movejit-engine: the one engine API over both executors.
//!
//! [`new_engine`] builds a [`movejit_interp::Engine`] whose executor is
//! `Interpreter`, `Jit` or `Auto`; for the latter two it runs the flat
//! interpreter (the one whose values are laid out as compiled code's) and
//! attaches [`JitFactory`], which implements the runtime's
//! [`CompiledCode`](movejit_runtime::compiled::CompiledCode) seam over a
//! [`JitEngine`](movejit_jit::JitEngine). The flat interpreter offers it
//! every call of a Move function: an instance that compiles runs compiled
//! on the interpreter's own argument and result slots (reference arguments
//! as the addresses they hold; no conversion), with call depth,
//! operand-stack base and gas carried across. While it runs, compiled code
//! reaches the session's global storage and the interpreter's native state
//! (tables, events, objects... through the natives of the session's
//! registry) via the session handle the seam passes. Anything that does not
//! compile is interpreted, also below compiled code: a callee that does not
//! compile, or a closure whose target compiled code does not have, runs on
//! the session's interpreter (`runtime::compiled::Interpreter`, a nested
//! flat interpreter with the same limits, gas and errors; it interprets
//! everything it calls). The tree interpreter never offers calls to
//! compiled code.
//!
//! Code cache (`cache.rs`): owned by the engine's [`JitFactory`] and shared
//! by all its sessions and threads. Code is keyed by module content (a
//! SHA-256 link hash over the module's bytes and its dependencies'),
//! function, type arguments and metering, so sessions loading the same
//! bytes share code and a republished module never runs old code. Runs take
//! no lock (each has its own execution stack); compiling takes the cache's.
//! When code is compiled follows `EngineConfig::jit` ([`JitOptions`]): at
//! the first call (default), after `threshold` interpreted calls (executor
//! `Auto`), or for a whole module at once (`eager`); functions over the
//! size limits, or met once the compile budget is spent, are interpreted.
//! Code is unmapped when the engine and every session holding some drop.

#![forbid(unsafe_code)]

mod adapter;
mod cache;

pub use adapter::{JitFactory, JitSession};
pub use cache::{CacheStats, MAX_GENERATIONS};
pub use movejit_interp::{Engine, EngineConfig, ExecutorKind, InterpreterKind, JitOptions, JIT_NOT_COMPILED};
pub use movejit_runtime::compiled::CompiledStats;

use std::sync::Arc;

/// An engine running `config.executor`: `Interpreter` alone (the
/// configured interpreter), or `Jit` / `Auto`: the flat interpreter with the
/// JIT attached.
pub fn new_engine(config: EngineConfig) -> Engine {
    new_engine_with_cache(config).0
}

/// [`new_engine`], also returning its code cache (`None` for the
/// interpreter alone), whose [`JitFactory::stats`] count compiles over all
/// sessions.
pub fn new_engine_with_cache(config: EngineConfig) -> (Engine, Option<Arc<JitFactory>>) {
    match config.executor {
        ExecutorKind::Interpreter => (Engine::new(config), None),
        ExecutorKind::Jit | ExecutorKind::Auto => {
            let config = EngineConfig { interpreter: InterpreterKind::Flat, ..config };
            let factory = Arc::new(JitFactory::new(&config));
            (Engine::with_compiled(config, factory.clone()), Some(factory))
        }
    }
}

/// The `"engine"` label of a run: `interp` when nothing ran compiled, `jit`
/// when nothing was interpreted, `mixed` otherwise.
pub fn engine_label(stats: Option<&CompiledStats>) -> &'static str {
    match stats {
        Some(s) if s.compiled_functions > 0 && s.interpreted_functions == 0 => "jit",
        Some(s) if s.compiled_functions > 0 => "mixed",
        _ => "interp",
    }
}
