//! One engine's compiled code run by many threads at once.
//!
//! [`SharedEngine`] puts a [`JitEngine`] behind a lock that only compiling
//! (and preparing closure arguments) takes. What a run reads from the
//! engine — native call sites, append-only — is copied into [`RunTables`]
//! after each compile (resource types are interned engine-wide ids, in
//! the code itself: `movejit_runtime::intern`); a run
//! takes the current tables (an `Arc`, no lock held while it runs) and an
//! execution stack of its own from the engine's pool (one per run in
//! progress, reused, unmapped with the engine). A [`SharedEntry`] holds
//! the engine, so code stays mapped while any handle to it lives.
//!
//! Sites compiled after a run took its tables are absent from them: the
//! shims check every index (`get`), and a run only reaches code
//! compiled before it started (its callees, and closure targets compiled
//! with their packers or before the run).

#![forbid(unsafe_code)]

use super::{check_slots, run_session_entry, ExecError, Executor, FlatOutcome, NestedState, SessionEntry, Tables};
use crate::engine::{InstanceKey, JitConfig, JitEngine};
use movejit_runtime::compiled::{SeamSlot, SessionHost};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::shims::NativeSite;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// Native call sites of an engine as of its last compile (see the module
/// doc).
#[derive(Default)]
pub struct RunTables {
    sites: Vec<NativeSite>,
}

fn copy_site(s: &NativeSite) -> NativeSite {
    NativeSite { native: s.native.clone(), ty_args: s.ty_args.clone(), params: s.params.clone(), rets: s.rets.clone() }
}

impl JitEngine {
    /// Brings `tables` up to date: appends the sites added since (in place
    /// when no run holds the tables, else into a copy).
    fn refresh_run_tables(&self, tables: &mut Arc<RunTables>) {
        let sites = &self.native_sites;
        if tables.sites.len() == sites.len() {
            return;
        }
        if Arc::get_mut(tables).is_none() {
            *tables = Arc::new(RunTables { sites: tables.sites.iter().map(copy_site).collect() });
        }
        if let Some(t) = Arc::get_mut(tables) {
            t.sites.extend(sites.get(t.sites.len()..).unwrap_or_default().iter().map(copy_site));
        }
    }
}

/// A [`JitEngine`] whose code threads run in parallel (module doc).
pub struct SharedEngine {
    jit: Mutex<JitEngine>,
    tables: RwLock<Arc<RunTables>>,
    /// Execution stacks not in use.
    stacks: Mutex<Vec<Executor>>,
    config: JitConfig,
}

impl SharedEngine {
    pub fn new(config: JitConfig) -> Result<Arc<SharedEngine>, ExecError> {
        let jit = JitEngine::new(config.clone())?;
        Ok(Arc::new(SharedEngine {
            jit: Mutex::new(jit),
            tables: RwLock::default(),
            stacks: Mutex::new(Vec::new()),
            config,
        }))
    }

    /// Runs `f` on the engine under its lock (adding modules, compiling),
    /// then publishes what it compiled to later runs. `Err` when an earlier
    /// `f` panicked (the engine's state is unknown: nothing more compiles).
    pub fn with<R>(&self, f: impl FnOnce(&mut JitEngine) -> R) -> Result<R, ExecError> {
        let mut jit = self.lock()?;
        let r = f(&mut jit);
        self.publish(&jit);
        Ok(r)
    }

    fn lock(&self) -> Result<MutexGuard<'_, JitEngine>, ExecError> {
        self.jit.lock().map_err(|_| ExecError::Thread("the engine panicked while compiling".into()))
    }

    fn publish(&self, jit: &JitEngine) {
        if let Ok(mut t) = self.tables.write() {
            jit.refresh_run_tables(&mut t);
        }
    }

    /// Compiles `key` (if needed) into a handle for runs on any thread.
    pub fn entry(self: &Arc<Self>, key: &InstanceKey) -> Result<SharedEntry, ExecError> {
        let entry = self.with(|jit| jit.session_entry(key))??;
        Ok(SharedEntry { entry, engine: self.clone() })
    }

    /// Machine-code bytes the engine has defined.
    pub fn code_size(&self) -> u64 {
        self.lock().map(|j| j.code_size()).unwrap_or(0)
    }

    /// Bytecode instructions of the functions the engine has compiled.
    pub fn code_instructions(&self) -> u64 {
        self.lock().map(|j| j.code_instructions()).unwrap_or(0)
    }

    /// Execution stacks made so far (the most runs that were in progress
    /// at once).
    pub fn stacks(&self) -> usize {
        self.stacks.lock().map(|s| s.len()).unwrap_or(0)
    }

    fn take_stack(&self) -> Result<Executor, ExecError> {
        let free = self.stacks.lock().ok().and_then(|mut s| s.pop());
        match free {
            Some(e) => Ok(e),
            None => Executor::start(self.config.stack_size),
        }
    }

    fn give_stack(&self, e: Executor) {
        if let Ok(mut s) = self.stacks.lock() {
            s.push(e);
        }
    }
}

/// A compiled instance of a [`SharedEngine`], ready to run on any thread;
/// keeps the engine (its code) alive.
#[derive(Clone)]
pub struct SharedEntry {
    entry: SessionEntry,
    engine: Arc<SharedEngine>,
}

impl SharedEntry {
    pub fn engine(&self) -> &Arc<SharedEngine> {
        &self.engine
    }

    /// Some parameter may hold a function value: each run first compiles
    /// the targets of the closures it is given (under the engine's lock).
    pub fn takes_closures(&self) -> bool {
        self.entry.closures
    }

    /// [`JitEngine::run_in_session`] without the engine's lock: runs in
    /// parallel with other threads' runs and compiles.
    pub fn run(
        &self,
        args: &[SeamSlot],
        rets: &[SeamSlot],
        state: NestedState,
        host: &mut dyn SessionHost,
        natives: &mut NativeSession,
    ) -> Result<FlatOutcome, ExecError> {
        check_slots(&self.entry, args, rets)?;
        let engine = &self.engine;
        if self.entry.closures {
            let slots: Vec<_> = args.iter().map(|s| (s.addr, s.layout.clone())).collect();
            engine.with(|jit| jit.compile_closure_args(&slots))??;
        }
        let tables = engine.tables.read().map(|t| t.clone()).map_err(|_| ExecError::Thread("run tables".into()))?;
        let view = Tables { config: &engine.config, sites: &tables.sites };
        let stack = engine.take_stack()?;
        let r = run_session_entry(&view, &stack, &self.entry, args, rets, state, host, natives);
        engine.give_stack(stack);
        let (out, missed) = r?;
        if missed {
            // As in `JitEngine::run_in_session`: the run failed; the
            // targets are compiled for the next one.
            let _ = engine.with(|jit| jit.compile_closure_misses());
        }
        Ok(out)
    }
}
