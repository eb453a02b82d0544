//! [`CompiledCode`] over a [`JitEngine`]: which instances compile, running
//! them on the flat interpreter's slots inside its session, and mapping
//! their errors back.

use movejit_format::{CompiledModule, StatusCode};
use movejit_interp::EngineConfig;
use movejit_jit::{FlatOutcome, InstanceKey, JitConfig, JitEngine, NestedState, SessionEntry};
use movejit_runtime::compiled::{CompiledCall, CompiledCode, CompiledCodeFactory, CompiledStats, ModuleSource, SeamCall, SessionHost};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::{ErrorLocation, ModuleId, Type, VmError};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Makes one [`JitSession`] per interpreter session.
pub struct JitFactory {
    metered: JitConfig,
    unmetered: JitConfig,
}

impl JitFactory {
    /// JIT settings matching the interpreter's limits and cost table.
    pub fn new(config: &EngineConfig) -> JitFactory {
        let base = JitConfig {
            max_call_depth: config.limits.max_call_depth as u64,
            max_operand_stack: config.limits.max_operand_stack as u64,
            limits: config.limits.clone(),
            natives: config.natives.clone(),
            session_host: true,
            ..JitConfig::default()
        };
        JitFactory { metered: JitConfig { cost: Some(config.costs.clone()), ..base.clone() }, unmetered: base }
    }
}

impl CompiledCodeFactory for JitFactory {
    fn new_session(&self) -> Box<dyn CompiledCode> {
        Box::new(JitSession {
            metered: Cache::new(self.metered.clone()),
            unmetered: Cache::new(self.unmetered.clone()),
            compiled_ran: HashSet::new(),
            interpreted: HashSet::new(),
            hot: HashMap::new(),
            stats: CompiledStats::default(),
        })
    }
}

/// One JIT engine and the modules it was given (metered and unmetered code
/// differ, so a session keeps one of each, made on first use).
struct Cache {
    config: JitConfig,
    jit: Option<JitEngine>,
    /// A compile or code-generator failure made the engine unusable.
    broken: Option<String>,
    numbers: HashMap<ModuleId, u32>,
    ids: Vec<ModuleId>,
    /// Compile verdict per instance (`Err`: why not).
    verdict: HashMap<InstanceKey, Result<(), String>>,
}

impl Cache {
    fn new(config: JitConfig) -> Cache {
        Cache { config, jit: None, broken: None, numbers: HashMap::new(), ids: Vec::new(), verdict: HashMap::new() }
    }

    fn engine(&mut self) -> Result<&mut JitEngine, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        if self.jit.is_none() {
            self.jit = Some(JitEngine::new(self.config.clone()).map_err(|e| e.to_string())?);
        }
        self.jit.as_mut().ok_or_else(|| "no JIT engine".to_string())
    }

    /// Gives the JIT `id` and every module it references (as far as the
    /// interpreter has loaded them).
    fn add_modules(&mut self, source: &dyn ModuleSource, id: &ModuleId) -> Result<u32, String> {
        let mut todo = vec![id.clone()];
        while let Some(next) = todo.pop() {
            if self.numbers.contains_key(&next) {
                continue;
            }
            let Some(m) = source.module(&next) else { continue };
            for h in &m.module_handles {
                if let (Some(a), Some(n)) = (m.address_identifiers.get(h.address.idx()), m.identifiers.get(h.name.idx())) {
                    let dep = ModuleId::new(*a, n);
                    if !self.numbers.contains_key(&dep) {
                        todo.push(dep);
                    }
                }
            }
            let copy = m.clone();
            let num = self.engine()?.add_module(copy).map_err(|e| e.to_string())?;
            self.numbers.insert(next.clone(), num);
            if self.ids.len() <= num as usize {
                self.ids.resize(num as usize + 1, next.clone());
            }
            self.ids[num as usize] = next;
        }
        self.numbers.get(id).copied().ok_or_else(|| format!("module {id} not loaded"))
    }

    /// Compiles the instance (cached verdict); returns its key.
    fn compile(
        &mut self,
        source: &dyn ModuleSource,
        id: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        stats: &mut CompiledStats,
    ) -> Result<InstanceKey, String> {
        let module = self.add_modules(source, id)?;
        let key = InstanceKey { module, fdef, type_args: ty_args.to_vec() };
        if let Some(v) = self.verdict.get(&key) {
            return v.clone().map(|()| key);
        }
        // Type arguments may name datatypes of modules `id` never references.
        let mut named = Vec::new();
        for t in ty_args {
            type_modules(t, &mut named);
        }
        for m in &named {
            // One not loaded fails the layout below, with the reason.
            let _ = self.add_modules(source, m);
        }
        let start = Instant::now();
        let jit = self.engine()?;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| jit.compile(&key)));
        stats.compile_time += start.elapsed();
        let v = match r {
            Ok(Ok(())) => {
                stats.instances_compiled += 1;
                Ok(())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => {
                // The engine's state after a panic is unknown: stop using it.
                self.broken = Some("code generator panicked".to_string());
                self.jit = None;
                Err("code generator panicked".to_string())
            }
        };
        self.verdict.insert(key.clone(), v.clone());
        v.map(|()| key)
    }

    /// The interpreter's error for a failed compiled run.
    fn error_of(&self, source: &dyn ModuleSource, out: &FlatOutcome) -> VmError {
        let mut e = VmError::new(out.status);
        if let Some(code) = out.abort_code {
            e = e.with_sub_status(code);
        }
        if let Some(m) = &out.message {
            e = e.with_message(m.clone());
        }
        if let Some(loc) = &out.location {
            if let Some(id) = self.ids.get(loc.module as usize) {
                let name = source.module(id).map(|m| function_name(m, loc.function)).unwrap_or_default();
                e.location = Some(ErrorLocation {
                    module: id.long_string(),
                    function_name: name,
                    function_index: loc.function,
                    code_offset: loc.code_offset,
                });
            }
        }
        e
    }
}

/// The modules of the datatypes `t` names.
fn type_modules(t: &Type, out: &mut Vec<ModuleId>) {
    match t {
        Type::Datatype(d, args) => {
            out.push(ModuleId::new(d.address, &d.module));
            args.iter().for_each(|a| type_modules(a, out));
        }
        Type::Vector(t) | Type::Reference(t) | Type::MutableReference(t) => type_modules(t, out),
        Type::Function(p, r, _) => p.iter().chain(r).for_each(|a| type_modules(a, out)),
        _ => {}
    }
}

fn function_name(m: &CompiledModule, def: u16) -> String {
    m.function_defs
        .get(def as usize)
        .and_then(|f| m.function_handles.get(f.function.idx()))
        .and_then(|h| m.identifiers.get(h.name.idx()))
        .cloned()
        .unwrap_or_default()
}

/// The JIT side of one interpreter session.
pub struct JitSession {
    metered: Cache,
    unmetered: Cache,
    compiled_ran: HashSet<(ModuleId, u16, Vec<Type>)>,
    interpreted: HashSet<(ModuleId, u16, Vec<Type>)>,
    /// Per-call fast path: (module, definition) → (type arguments,
    /// metered, the compiled instance ready to run, or `None` when it does
    /// not compile), found without allocating. An entry belongs to the
    /// cache's engine, which lives as long as the session (a broken one is
    /// never replaced: `Cache::engine` fails and nothing runs).
    hot: HashMap<(ModuleId, u16), Vec<(Vec<Type>, bool, Option<SessionEntry>)>>,
    stats: CompiledStats,
}

impl JitSession {
    fn not_compiled(&mut self, id: &ModuleId, fdef: u16, ty_args: &[Type]) -> CompiledCall {
        self.interpreted.insert((id.clone(), fdef, ty_args.to_vec()));
        CompiledCall::NotCompiled
    }
}

impl CompiledCode for JitSession {
    fn call(&mut self, host: &mut dyn SessionHost, natives: &mut NativeSession, call: SeamCall<'_>) -> CompiledCall {
        let SeamCall { module, fdef, ty_args, args, rets, state } = call;
        let metered = state.gas_left.is_some();
        let site = (module.clone(), fdef);
        let known = self.hot.get(&site).and_then(|v| v.iter().find(|(t, m, _)| *m == metered && t[..] == *ty_args)).map(|e| e.2.clone());
        let first = known.is_none();
        let cache = if metered { &mut self.metered } else { &mut self.unmetered };
        let entry = match known {
            Some(Some(e)) => e,
            Some(None) => return CompiledCall::NotCompiled,
            None => match cache.compile(&*host, module, fdef, ty_args, &mut self.stats) {
                Ok(key) => match cache.engine().map(|jit| jit.session_entry(&key)) {
                    Ok(Ok(e)) => e,
                    _ => return self.not_compiled(module, fdef, ty_args),
                },
                Err(_) => {
                    self.hot.entry(site).or_default().push((ty_args.to_vec(), metered, None));
                    return self.not_compiled(module, fdef, ty_args);
                }
            },
        };
        let Ok(jit) = cache.engine() else { return self.not_compiled(module, fdef, ty_args) };
        let nested = NestedState { depth: state.depth, stack_base: state.stack_base, gas_left: state.gas_left };
        let out = match jit.run_in_session(&entry, args, rets, nested, host, natives) {
            Ok(out) => out,
            // Nothing ran: the interpreter can still run it.
            Err(_) => return self.not_compiled(module, fdef, ty_args),
        };
        if first {
            self.compiled_ran.insert((module.clone(), fdef, ty_args.to_vec()));
            self.hot.entry(site).or_default().push((ty_args.to_vec(), metered, Some(entry)));
        }
        // Running out of gas leaves none, as in the interpreter's meter.
        let gas_left = if out.status == StatusCode::OUT_OF_GAS { state.gas_left.map(|_| 0) } else { out.gas_left };
        if out.status != StatusCode::EXECUTED {
            return CompiledCall::Failed { error: cache.error_of(&*host, &out), gas_left };
        }
        CompiledCall::Returned { gas_left }
    }

    fn compile(&mut self, modules: &dyn ModuleSource, module: &ModuleId, fdef: u16, ty_args: &[Type]) -> Result<(), String> {
        // Both variants: the gas meter of the coming call decides which runs.
        self.unmetered.compile(modules, module, fdef, ty_args, &mut self.stats)?;
        self.metered.compile(modules, module, fdef, ty_args, &mut self.stats).map(|_| ())
    }

    fn stats(&self) -> CompiledStats {
        CompiledStats {
            compiled_functions: self.compiled_ran.len(),
            interpreted_functions: self.interpreted.len(),
            ..self.stats.clone()
        }
    }
}
