//! movejit-engine: the product API of movejit, one engine over both
//! executors. Data flows one way: bytes → movejit-format (decode) →
//! movejit-verifier → the loader (`movejit-loader`) → the
//! interpreter (`movejit-interp`) or the JIT (`movejit-jit`) over the runtime
//! (`movejit-runtime`) → results and change sets. Hosts, tools and tests use
//! this crate only: [`Engine`], [`EngineConfig`], [`Session`] (publishing,
//! loading, entry calls, [`Session::finish`] into a [`ChangeSet`]),
//! [`ExecutionResult`], and the runtime's types re-exported ([`runtime`]).
//!
//! [`Engine::new`] builds an engine whose executor is `Interpreter`, `Jit`
//! or `Auto`. Each runs the flat interpreter's state (the one whose values
//! are laid out as compiled code's: `movejit_interp::EngineState`, one per
//! engine, and `SessionState`, one per session); for `Jit` and `Auto` the
//! engine attaches [`JitFactory`], which implements the runtime's
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
//! everything it calls).
//!
//! Configuration: [`EngineConfig`], [`ExecutorKind`] and [`JitOptions`] are
//! defined in `movejit_runtime::config`, the lowest crate that reads them
//! (the interpreter reads the limits, natives, costs and executor kind; the
//! code cache the JIT options), and re-exported here as the product's.
//!
//! Code cache (`cache.rs`): owned by the engine's [`JitFactory`] and shared
//! by all its sessions and threads. Code is keyed by module content (a
//! SHA-256 link hash over the module's bytes and its dependencies'),
//! function, type arguments and metering, so sessions loading the same
//! bytes share code and a republished module never runs old code. Runs take
//! no lock (each has its own execution stack); code generation holds only
//! its generation's JIT engine, never the cache's lock that look-ups take.
//! When code is compiled follows `EngineConfig::jit` ([`JitOptions`]): at
//! the first call (default), after `threshold` interpreted calls (executor
//! `Auto`), or for a whole module at once (`eager`); functions over the
//! size limits, or met once the compile budget is spent, are interpreted.
//! With `compile_threads` > 0, `Auto` compiles on background threads: a
//! call past the threshold queues its instance and is interpreted, as are
//! later calls until the code is ready (a session tests the request's slot,
//! one atomic load per call); no calling thread waits for a compile.
//! Code is unmapped when the engine and every session holding some drop.
//!
//! # A node-style loop
//!
//! Publish a package through a session (it is verified there), then run a
//! stream of entry calls, each in a session of its own over the same
//! storage, applying each change set before the next. `examples/node_loop.rs`
//! does the same with a ledger and compares the executors.
//!
//! ```
//! use movejit_engine::{AccountAddress, CostTable, Engine, EngineConfig, ExecutorKind, GasMeter};
//! use movejit_engine::{InMemoryStorage, ModuleId};
//!
//! let src = "version 7
//! module 0xcafe::counter
//! struct C has key
//!   n: u64
//!
//! entry public fun start(s: &signer)
//!     move_loc s
//!     ld_u64 0
//!     pack C
//!     move_to C
//!     ret
//!
//! entry public fun bump(a: address) acquires C
//!     copy_loc a
//!     borrow_global C
//!     borrow_field C, n
//!     read_ref
//!     ld_u64 1
//!     add
//!     move_loc a
//!     mut_borrow_global C
//!     mut_borrow_field C, n
//!     write_ref
//!     ret
//! ";
//! let Ok(movejit_masm::Assembled::Module(module)) = movejit_masm::assemble(src) else { panic!("assembles") };
//! let cafe = AccountAddress::from_u64(0xcafe);
//!
//! let engine = Engine::new(EngineConfig { executor: ExecutorKind::Auto, ..EngineConfig::aptos() });
//! let mut storage = InMemoryStorage::default();
//!
//! // Publish: verify and link in a session, then write the modules.
//! let mut session = engine.new_session(&storage);
//! let published = session.publish_bundle(&[movejit_format::serialize_module(&module)], cafe).unwrap();
//! session.finish().unwrap();
//! for (id, bytes) in published {
//!     storage.publish(id, bytes);
//! }
//!
//! // A stream of transactions, each a session whose change set is applied.
//! let counter = ModuleId::new(cafe, "counter");
//! let gas = GasMeter::new(CostTable::default(), 0); // built once; a fresh budget per call
//! let signer = [&[0u8][..], &cafe.0].concat(); // an account's own signer: variant 0, then the address
//! let calls = [("start", signer)].into_iter().chain((0..10).map(|_| ("bump", cafe.0.to_vec())));
//! for (function, arg) in calls {
//!     let mut session = engine.new_session(&storage);
//!     session.execute_function(&counter, function, &[], &[arg], &mut gas.with_budget(10_000)).unwrap();
//!     let changes = session.finish().unwrap();
//!     storage.apply(&changes);
//! }
//! let (key, value) = storage.resources.iter().next().unwrap();
//! assert_eq!((key.0, value.as_slice()), (cafe, &10u64.to_le_bytes()[..]));
//! ```

#![forbid(unsafe_code)]

mod adapter;
mod cache;
mod engine;
mod function_ref;
mod publish;

pub use adapter::{JitFactory, JitSession};
pub use cache::{CacheStats, MAX_GENERATIONS};
pub use engine::{Engine, Session};
pub use function_ref::FunctionRef;
pub use movejit_interp::{ExecutionResult, EUSER_TYPE_LOADING_FAILURE, JIT_NOT_COMPILED};
pub use movejit_runtime as runtime;
pub use movejit_runtime::compiled::CompiledStats;
pub use movejit_runtime::{
    AccountAddress, ChangeSet, CostTable, EngineConfig, ErrorLocation, ExecutorKind, GasMeter, InMemoryStorage,
    JitOptions, ModuleId, Resolver, StatusCode, Type, VmError, VmResult, WriteOp,
};

use std::sync::Arc;

/// An engine running `config.executor` ([`Engine::new`]).
pub fn new_engine(config: EngineConfig) -> Engine {
    Engine::new(config)
}

/// [`new_engine`], also returning its code cache (`None` for the
/// interpreter alone), whose [`JitFactory::stats`] count compiles over all
/// sessions.
pub fn new_engine_with_cache(config: EngineConfig) -> (Engine, Option<Arc<JitFactory>>) {
    let engine = Engine::new(config);
    let cache = engine.code_cache().cloned();
    (engine, cache)
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
