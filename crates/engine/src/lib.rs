//! movejit-engine: the one engine API over both executors.
//!
//! [`new_engine`] builds a [`movejit_interp::Engine`] whose executor is
//! `Interpreter`, `Jit` or `Auto`; for the latter two it runs the flat
//! interpreter (the one whose values are laid out as compiled code's) and
//! attaches [`JitFactory`], which implements the runtime's
//! [`CompiledCode`](movejit_runtime::compiled::CompiledCode) seam over a
//! [`JitEngine`](movejit_jit::JitEngine). The flat interpreter offers it
//! every call of a Move function: an instance whose whole reachable call
//! graph compiles (everything but reads of resources that may hold function
//! values and natives the registry lacks) runs compiled on the
//! interpreter's own argument and result slots (reference arguments as the
//! addresses they hold; no conversion), with call depth, operand-stack base
//! and gas carried across. While it runs, compiled code reaches the
//! session's global storage and the interpreter's native state (tables,
//! events, objects... through the natives of the session's registry) via
//! the session handle the seam passes. Anything that does not compile is
//! interpreted. Compiled code never calls interpreted code (an instance is
//! compiled only if all its callees are). The tree interpreter never offers
//! calls to compiled code.
//!
//! Code cache: one `JitEngine` per session (a `JitEngine` is `Send` but not
//! `Sync`, and a session sees exactly one version of each module, so no
//! cross-session name clash can reach compiled code). Instances compile on
//! their first call. Not yet: a cache shared by sessions keyed by module
//! hash, a hotness threshold, eager per-module compilation.

#![forbid(unsafe_code)]

mod adapter;

pub use adapter::{JitFactory, JitSession};
pub use movejit_interp::{Engine, EngineConfig, ExecutorKind, InterpreterKind, JIT_NOT_COMPILED};
pub use movejit_runtime::compiled::CompiledStats;

use std::sync::Arc;

/// An engine running `config.executor`: `Interpreter` alone (the
/// configured interpreter), or `Jit` / `Auto`: the flat interpreter with the
/// JIT attached.
pub fn new_engine(config: EngineConfig) -> Engine {
    match config.executor {
        ExecutorKind::Interpreter => Engine::new(config),
        ExecutorKind::Jit | ExecutorKind::Auto => {
            let config = EngineConfig { interpreter: InterpreterKind::Flat, ..config };
            let factory = Arc::new(JitFactory::new(&config));
            Engine::with_compiled(config, factory)
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
