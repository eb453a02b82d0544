//! One engine's compiled code run by many threads at once.
//!
//! [`SharedEngine`] puts a [`JitEngine`] behind a lock that only compiling
//! (and preparing closure arguments) takes. What a run reads from the
//! engine — native call sites, append-only — is copied into [`RunTables`]
//! after each compile (resource types are interned engine-wide ids, in
//! the code itself: `movejit_runtime::intern`); a run
//! takes the current tables (an `Arc`, no lock held while it runs) and an
//! execution stack of its own (one per run in progress, reused). A
//! [`SharedEntry`] holds the engine, so code stays mapped while any handle
//! to it lives.
//!
//! A warm run touches no lock and no reference count (issue 14 item 9):
//! a thread keeps one execution stack of its own ([`ThreadRuns`]; stacks
//! belong to no engine) and, for a few engines, their tables with the
//! version it took them at, taking them anew only after a compile added
//! sites. An engine's pool serves nested runs and threads' first runs.
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
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// Native call sites of an engine as of its last compile (see the module
/// doc).
#[derive(Default)]
pub struct RunTables {
    sites: Vec<NativeSite>,
}

fn copy_site(s: &NativeSite) -> NativeSite {
    NativeSite::new(s.native.clone(), s.ty_args.clone(), s.params.clone(), s.rets.clone())
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
    /// Bumped whenever `tables` changes (threads' kept copies compare it).
    tables_version: AtomicU64,
    /// Unique while the process runs: names the engine in threads' kept
    /// tables (an address could be reused by a later engine).
    serial: u64,
    /// Execution stacks not in use (the pool serves nested runs and
    /// threads' first runs; a thread keeps its own boxed, see
    /// [`ThreadRuns`]).
    stacks: Mutex<Vec<Executor>>,
    config: JitConfig,
}

impl SharedEngine {
    pub fn new(config: JitConfig) -> Result<Arc<SharedEngine>, ExecError> {
        let jit = JitEngine::new(config.clone())?;
        Ok(Arc::new(SharedEngine {
            jit: Mutex::new(jit),
            tables: RwLock::default(),
            tables_version: AtomicU64::new(0),
            serial: NEXT_ENGINE_SERIAL.fetch_add(1, Ordering::Relaxed),
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
            let before = t.sites.len();
            jit.refresh_run_tables(&mut t);
            if t.sites.len() != before {
                self.tables_version.fetch_add(1, Ordering::Release);
            }
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

    /// The current run tables and their version.
    fn current_tables(&self) -> Result<(u64, Arc<RunTables>), ExecError> {
        // The version first: tables read after it are at least that new.
        let version = self.tables_version.load(Ordering::Acquire);
        let tables = self.tables.read().map(|t| t.clone()).map_err(|_| ExecError::Thread("run tables".into()))?;
        Ok((version, tables))
    }

    fn take_stack(&self) -> Result<Box<Executor>, ExecError> {
        if let Some(e) = ThreadRuns::take_stack(self.config.stack_size) {
            return Ok(e);
        }
        let free = self.stacks.lock().ok().and_then(|mut s| s.pop());
        match free {
            Some(e) => Ok(Box::new(e)),
            None => Executor::start(self.config.stack_size).map(Box::new),
        }
    }

    fn give_stack(&self, e: Box<Executor>) {
        let Some(e) = ThreadRuns::keep_stack(e) else { return };
        if let Ok(mut s) = self.stacks.lock() {
            s.push(*e);
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
            engine.with(|jit| jit.compile_closure_args(args))??;
        }
        let tables = ThreadRuns::take_tables(engine)?;
        let view = Tables { config: &engine.config, sites: &tables.tables.sites };
        let stack = engine.take_stack()?;
        let r = run_session_entry(&view, &stack, &self.entry, args, rets, state, host, natives);
        engine.give_stack(stack);
        ThreadRuns::keep_tables(tables);
        let (out, missed) = r?;
        if missed {
            // As in `JitEngine::run_in_session`: the run failed; the
            // targets are compiled for the next one.
            let _ = engine.with(|jit| jit.compile_closure_misses());
        }
        Ok(out)
    }
}

static NEXT_ENGINE_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Engines a thread keeps tables for: the metered and unmetered engines of
/// a couple of code generations.
const KEPT_TABLES: usize = 4;

/// What the calling thread keeps between runs (module doc).
struct ThreadRuns {
    /// A stack no run of this thread is using.
    stack: Option<Box<Executor>>,
    /// Tables of a few engines, most recently used last.
    tables: Vec<KeptTables>,
}

/// An engine's run tables as of one version.
struct KeptTables {
    serial: u64,
    version: u64,
    tables: Arc<RunTables>,
}

thread_local! {
    static KEPT: RefCell<ThreadRuns> = const { RefCell::new(ThreadRuns { stack: None, tables: Vec::new() }) };
}

impl ThreadRuns {
    /// The thread's spare stack, if it has one of `size` bytes (a nested
    /// run finds none: the outer run has it).
    fn take_stack(size: usize) -> Option<Box<Executor>> {
        KEPT.try_with(|k| {
            let mut k = k.borrow_mut();
            if k.stack.as_ref().is_some_and(|e| e.stack_size() == size) {
                k.stack.take()
            } else {
                None
            }
        })
        .ok()
        .flatten()
    }

    /// Keeps `e` as the thread's spare stack; `Some(e)` when it has one.
    fn keep_stack(e: Box<Executor>) -> Option<Box<Executor>> {
        let mut e = Some(e);
        let _ = KEPT.try_with(|k| {
            let mut k = k.borrow_mut();
            if k.stack.is_none() {
                k.stack = e.take();
            }
        });
        e
    }

    /// `engine`'s current tables, taken out of the thread's copies while
    /// the engine's version has not moved (one atomic load, no reference
    /// count), else taken anew. [`ThreadRuns::keep_tables`] puts them back.
    fn take_tables(engine: &SharedEngine) -> Result<KeptTables, ExecError> {
        let version = engine.tables_version.load(Ordering::Acquire);
        let kept = KEPT
            .try_with(|k| {
                let mut k = k.borrow_mut();
                let at = k.tables.iter().position(|t| t.serial == engine.serial && t.version == version)?;
                Some(k.tables.remove(at))
            })
            .ok()
            .flatten();
        match kept {
            Some(t) => Ok(t),
            None => {
                let (version, tables) = engine.current_tables()?;
                Ok(KeptTables { serial: engine.serial, version, tables })
            }
        }
    }

    /// Keeps `t` for the thread's next run on its engine (replacing an
    /// older copy; the least recently used goes past [`KEPT_TABLES`]).
    fn keep_tables(t: KeptTables) {
        let dropped = KEPT.try_with(|k| {
            let mut k = k.borrow_mut();
            let mut out = Vec::new();
            if let Some(at) = k.tables.iter().position(|o| o.serial == t.serial) {
                out.push(k.tables.remove(at));
            }
            if k.tables.len() >= KEPT_TABLES {
                out.push(k.tables.remove(0));
            }
            k.tables.push(t);
            out
        });
        // Dropped outside the borrow.
        drop(dropped);
    }
}
