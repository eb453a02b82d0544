//! An engine whose sessions reuse one JIT session, one after the other.
//!
//! movejit-engine gives every interpreter session a fresh
//! [`CompiledCode`] (its own JIT engine, code cache and executor thread).
//! Harnesses that run the same modules many times — tiny-gas reruns, timed
//! benchmark iterations — want a fresh interpreter session per run (fresh
//! global-storage cache, as the reference VMs use) but must not recompile
//! nor start a thread per run. [`warm_engine`] lends the one JIT session to
//! each new interpreter session and takes it back when that session ends.
//!
//! Assumes what movejit-engine's code cache assumes: the sessions of one
//! engine see one version of each module (a harness builds one engine per
//! set of modules).

#![forbid(unsafe_code)]

use movejit_engine::{Engine, EngineConfig, ExecutorKind, InterpreterKind, JitFactory};
use movejit_runtime::compiled::{CompiledCall, CompiledCode, CompiledCodeFactory, CompiledStats, ModuleSource, SeamCall, SessionHost};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::{ModuleId, Type};
use std::sync::{Arc, Mutex};

/// Like [`movejit_engine::new_engine`], but consecutive sessions share one
/// JIT session (compiled code, executor thread). Sessions alive at the same
/// time each get their own.
pub fn warm_engine(config: EngineConfig) -> Engine {
    match config.executor {
        ExecutorKind::Interpreter => Engine::new(config),
        ExecutorKind::Jit | ExecutorKind::Auto => {
            // Compiled code meets the flat interpreter (as in `new_engine`).
            let config = EngineConfig { interpreter: InterpreterKind::Flat, ..config };
            let factory = WarmFactory { inner: JitFactory::new(&config), idle: Arc::new(Mutex::new(None)) };
            Engine::with_compiled(config, Arc::new(factory))
        }
    }
}

type Slot = Arc<Mutex<Option<Box<dyn CompiledCode>>>>;

struct WarmFactory {
    inner: JitFactory,
    /// The JIT session no interpreter session holds right now.
    idle: Slot,
}

impl CompiledCodeFactory for WarmFactory {
    fn new_session(&self) -> Box<dyn CompiledCode> {
        let taken = self.idle.lock().ok().and_then(|mut s| s.take());
        let inner = taken.unwrap_or_else(|| self.inner.new_session());
        Box::new(Lease { inner: Some(inner), home: self.idle.clone() })
    }
}

/// A JIT session lent to one interpreter session; returned on drop.
struct Lease {
    inner: Option<Box<dyn CompiledCode>>,
    home: Slot,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let (Some(inner), Ok(mut slot)) = (self.inner.take(), self.home.lock()) {
            slot.get_or_insert(inner);
        }
    }
}

impl CompiledCode for Lease {
    fn call(&mut self, host: &mut dyn SessionHost, natives: &mut NativeSession, call: SeamCall<'_>) -> CompiledCall {
        match self.inner.as_mut() {
            Some(c) => c.call(host, natives, call),
            None => CompiledCall::NotCompiled,
        }
    }

    fn compile(&mut self, modules: &dyn ModuleSource, module: &ModuleId, fdef: u16, ty_args: &[Type]) -> Result<(), String> {
        match self.inner.as_mut() {
            Some(c) => c.compile(modules, module, fdef, ty_args),
            None => Err("no JIT session".into()),
        }
    }

    fn stats(&self) -> CompiledStats {
        self.inner.as_ref().map(|c| c.stats()).unwrap_or_default()
    }
}
