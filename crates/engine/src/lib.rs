//! movejit-engine: the one engine API over both executors.
//!
//! [`new_engine`] builds a [`movejit_interp::Engine`] whose executor is
//! `Interpreter`, `Jit` or `Auto`; for the latter two it attaches
//! [`JitFactory`], which implements the runtime's
//! [`CompiledCode`](movejit_runtime::compiled::CompiledCode) seam over a
//! [`JitEngine`](movejit_jit::JitEngine). The interpreter consults it at
//! every call of a Move function: an instance whose whole reachable call
//! graph compiles (everything but global storage, closures and natives
//! outside the stateless stdlib modules) runs compiled, with call depth,
//! operand-stack base and gas carried across; its tree-value arguments are
//! converted to flat values and its results back (through BCS). Calls
//! passing references into interpreter memory, and anything that does not
//! compile, are interpreted. Compiled code never calls interpreted code
//! (an instance is compiled only if all its callees are).
//!
//! Code cache: one `JitEngine` per session (a `JitEngine` is `Send` but not
//! `Sync`, and a session sees exactly one version of each module, so no
//! cross-session name clash can reach compiled code). Instances compile on
//! their first call. Not yet: a cache shared by sessions keyed by module
//! hash, a hotness threshold, eager per-module compilation.

#![forbid(unsafe_code)]

mod adapter;
mod values;

pub use adapter::{JitFactory, JitSession};
pub use movejit_interp::{Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
pub use movejit_runtime::compiled::CompiledStats;

use std::sync::Arc;

/// An engine running `config.executor`: `Interpreter` alone, or `Jit` /
/// `Auto` with the JIT attached.
pub fn new_engine(config: EngineConfig) -> Engine {
    match config.executor {
        ExecutorKind::Interpreter => Engine::new(config),
        ExecutorKind::Jit | ExecutorKind::Auto => {
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
