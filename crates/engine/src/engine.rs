//! The product API: an [`Engine`] (shared by sessions and threads) and its
//! [`Session`]s (one per transaction over a resolver). Each owns the
//! interpreter's state for it ([`EngineState`], [`SessionState`]) and, for
//! executors `Jit` / `Auto`, the engine owns the JIT's code cache
//! ([`JitFactory`]) attached to that state as its compiled code.
//!
//! Publishing is here (`publish.rs`); loading, entry calls and the change
//! set are the interpreter's, which every executor runs under (compiled
//! code is offered each call), and are forwarded without a cost of their
//! own (`#[inline]`: a short call is a few hundred nanoseconds).

use crate::adapter::JitFactory;
use movejit_interp::{EngineState, ExecutionResult, SessionState};
use movejit_runtime::compiled::{CompiledCodeFactory, CompiledStats};
use movejit_runtime::{
    ChangeSet, EngineConfig, ExecutorKind, GasMeter, ModuleId, Resolver, StatusFlavour, Type, VmError, VmResult,
};
use std::sync::Arc;

/// A shared execution engine. `Send + Sync`: sessions on many threads may
/// use one engine; decoded and verified modules, prepared code and compiled
/// code are cached by content and shared by all of them.
pub struct Engine {
    state: EngineState,
    /// The JIT's code cache (executors `Jit` / `Auto`; `None` for the
    /// interpreter alone).
    code_cache: Option<Arc<JitFactory>>,
}

impl Engine {
    /// An engine running `config.executor`: the interpreter alone, or
    /// (`Jit` / `Auto`) the interpreter with the JIT attached.
    pub fn new(config: EngineConfig) -> Self {
        let code_cache = match config.executor {
            ExecutorKind::Interpreter => None,
            ExecutorKind::Jit | ExecutorKind::Auto => Some(Arc::new(JitFactory::new(&config))),
        };
        let compiled = code_cache.clone().map(|f| f as Arc<dyn CompiledCodeFactory>);
        Engine { state: EngineState::new(config, compiled), code_cache }
    }

    pub fn config(&self) -> &EngineConfig {
        self.state.config()
    }

    /// The JIT's code cache, whose [`JitFactory::stats`] count compiles
    /// over all sessions (`None` for the interpreter alone).
    pub fn code_cache(&self) -> Option<&Arc<JitFactory>> {
        self.code_cache.as_ref()
    }

    /// A session reading modules and resources through `resolver`.
    #[inline]
    pub fn new_session<'e, 'r>(&'e self, resolver: &'r dyn Resolver) -> Session<'e, 'r> {
        Session { state: self.state.new_session(resolver) }
    }
}

/// A sequence of calls over one resolver (a transaction): what it loads,
/// the resources it reads and writes, and at the end its change set.
pub struct Session<'e, 'r> {
    pub(crate) state: SessionState<'e, 'r>,
}

impl Session<'_, '_> {
    /// Loads (decodes, links, verifies) a module and its dependencies.
    #[inline]
    pub fn load_module(&mut self, id: &ModuleId) -> VmResult<()> {
        self.state.load_module(id).map(drop)
    }

    /// Loads and checks a caller-given type argument the way the Move VM
    /// turns a type tag into a runtime type (`SessionState::load_type`).
    #[inline]
    pub fn load_type(&mut self, t: &Type) -> VmResult<()> {
        self.state.load_type(t)
    }

    /// The parameter and return types of `module::name<ty_args>` (loading
    /// and verifying the module first).
    #[inline]
    pub fn function_signature(
        &mut self,
        module: &ModuleId,
        name: &str,
        ty_args: &[Type],
    ) -> VmResult<(Vec<Type>, Vec<Type>)> {
        self.state.function_signature(module, name, ty_args)
    }

    /// Calls `module::name<ty_args>(args)`; `args` are BCS bytes, `&T`
    /// parameters given as the BCS of `T`. A failed call changes nothing.
    #[inline]
    pub fn execute_function(
        &mut self,
        module: &ModuleId,
        name: &str,
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<ExecutionResult, VmError> {
        let r = self.state.execute_function(module, name, ty_args, args, gas);
        self.reported(r)
    }

    /// Runs an Aptos script: decode, load its dependencies, verify, then
    /// call its `main` (as a module `0x0::<SELF>`).
    #[inline]
    pub fn execute_script(
        &mut self,
        bytes: &[u8],
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<ExecutionResult, VmError> {
        let r = self.state.execute_script(bytes, ty_args, args, gas);
        self.reported(r)
    }

    /// A call's error as the flavour's VM reports it.
    fn reported<T>(&self, r: Result<T, VmError>) -> Result<T, VmError> {
        match self.flavour() {
            StatusFlavour::Aptos => r.map_err(VmError::in_aptos_form),
            StatusFlavour::Sui => r,
        }
    }

    /// The resource writes of everything executed in the session.
    #[inline]
    pub fn finish(self) -> VmResult<ChangeSet> {
        self.state.finish()
    }

    /// Compiled vs interpreted counts (`None` when no compiled code is attached).
    pub fn compiled_stats(&self) -> Option<CompiledStats> {
        self.state.compiled_stats()
    }

    pub fn flavour(&self) -> StatusFlavour {
        self.state.flavour()
    }
}
