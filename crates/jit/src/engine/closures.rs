//! The engine's side of function values: pack and call sites for the
//! lowering (`lower/closure.rs`), the closure table compiled code
//! dispatches through, and compiling the targets of closures.
//!
//! Which targets are compiled:
//! * every function a `PackClosure` of compiled code names, with the
//!   packing instance (it is one of its callees; inside a session a target
//!   that does not compile is interpreted like any callee that does not);
//! * the targets of closures handed to compiled code as arguments (values,
//!   and what reference arguments point to), before the run starts
//!   ([`JitEngine::compile_closure_args`]);
//! * nothing else: a closure read from storage or returned by a native may
//!   name any function. When a `CallClosure` meets a target the table does
//!   not hold, inside a session the runtime's `call_closure` runs it on the
//!   session's interpreter; a standalone run (no interpreter) fails with
//!   `CLOSURE_NOT_COMPILED`, the engine compiles the target
//!   ([`JitEngine::compile_closure_misses`]) and reports not compiled
//!   (nothing outside the run changed). Standalone engines therefore still
//!   refuse natives whose results can hold function values (global storage
//!   needs a session anyway).
//!
//! A Move target is entered through its entry trampoline, published in the
//! table once its whole call graph compiled; a native target through a
//! native site of the engine.

#![forbid(unsafe_code)]

use super::{Declarer, InstanceKey, JitEngine, State};
use crate::error::{CompileError, CompileResult};
use crate::lower::closure::{CallSpec, PackInfo};
use movejit_format::{AbilitySet, FunctionAttribute, FunctionHandleIndex, Visibility};
use movejit_runtime::compiled::SeamSlot;
use movejit_runtime::flat::closure_shims::{self, CallSite, ClosureTable, FastTarget, PackSite, Target, TargetCode};
use movejit_runtime::flat::FlatLayout;
use movejit_runtime::functions::{self, FunctionIndex};
use movejit_runtime::{FunctionId, ModuleId, Type as RType};
use std::sync::Arc;

/// Outside a session, natives whose results can hold a closure (from bytes,
/// from storage) are not compiled: there compiled code can only call
/// closures whose targets the engine compiled before the run.
pub(super) fn refuse_closure_results(rets: &[Arc<FlatLayout>]) -> CompileResult<()> {
    if rets.iter().any(|l| closure_shims::may_hold_closure(l)) {
        return Err(CompileError::Unsupported("native returning function values".into()));
    }
    Ok(())
}

/// Parameter or result layouts.
type Layouts = Vec<Arc<FlatLayout>>;

/// Closure sites and targets of one engine.
#[derive(Default)]
pub(crate) struct ClosureState {
    pub(crate) table: Arc<ClosureTable>,
    /// Sites compiled code points to (boxed: their addresses are fixed).
    #[allow(clippy::vec_box)]
    packs: Vec<Box<PackSite>>,
    #[allow(clippy::vec_box)]
    calls: Vec<Box<CallSite>>,
    /// Move targets named by code compiled since the last publication.
    pending: Vec<InstanceKey>,
    /// Non-generic Move targets packed with these masks, capturing only
    /// scalars: they get a fast entry once published.
    fast_pending: Vec<(InstanceKey, u64)>,
}

fn bad(what: &str) -> CompileError {
    CompileError::Malformed(format!("closure: bad {what}"))
}

impl Declarer<'_> {
    /// The module and definition `handle` of module `module_idx` names.
    pub(crate) fn resolve_handle(&self, module_idx: u32, handle: FunctionHandleIndex) -> CompileResult<(u32, u16)> {
        let m = self.modules.get(module_idx as usize).ok_or_else(|| bad("module"))?;
        let fh = m.function_handles.get(handle.idx()).ok_or_else(|| bad("function handle"))?;
        let fname = m.identifiers.get(fh.name.idx()).ok_or_else(|| bad("identifier"))?;
        let target = if fh.module == m.self_module_handle_idx {
            module_idx
        } else {
            let mh = m.module_handles.get(fh.module.idx()).ok_or_else(|| bad("module handle"))?;
            let addr = m.address_identifiers.get(mh.address.idx()).ok_or_else(|| bad("address"))?;
            let mname = m.identifiers.get(mh.name.idx()).ok_or_else(|| bad("identifier"))?;
            *self
                .by_id
                .get(&ModuleId::new(*addr, mname))
                .ok_or_else(|| CompileError::UnknownFunction(format!("{}::{mname}::{fname}", addr.to_hex_short())))?
        };
        let tm = self.modules.get(target as usize).ok_or_else(|| bad("module"))?;
        let fdef = *tm.functions.get(fname).ok_or_else(|| CompileError::UnknownFunction(fname.clone()))?;
        Ok((target, fdef))
    }

    /// Makes `key` callable through the closure table: a native gets a
    /// table entry now; a Move function is declared (compiled in this
    /// batch) and published once compiled. Returns its parameter and
    /// result types.
    pub(super) fn closure_target(
        &mut self,
        key: &InstanceKey,
        table: &ClosureTable,
    ) -> CompileResult<(FunctionIndex, bool, Vec<RType>, Vec<RType>)> {
        let m = self.modules.get(key.module as usize).ok_or_else(|| bad("module"))?.clone();
        let (params, rets) = crate::types::function_types(&m, key.fdef, &key.type_args)?;
        let fdef = m.function_defs.get(key.fdef as usize).ok_or_else(|| bad("function definition"))?;
        let h = m.function_handles.get(fdef.function.idx()).ok_or_else(|| bad("function handle"))?;
        let name = m.identifiers.get(h.name.idx()).ok_or_else(|| bad("identifier"))?;
        let id = functions::intern(&FunctionId {
            module: ModuleId::new(*m.address(), m.name()),
            name: name.as_str().into(),
        });
        let serializable =
            fdef.visibility == Visibility::Public || h.attributes.contains(&FunctionAttribute::Persistent);
        if !table.contains(id, &key.type_args) {
            if fdef.code.is_none() {
                let site = self.native_callee(key)?.native.ok_or_else(|| bad("native site"))?;
                if site == super::MISSING_NATIVE {
                    // No such native: calls of the closure go to the
                    // interpreter, which fails them as it does.
                    return Ok((id, serializable, params, rets));
                }
                let target = Target {
                    code: TargetCode::Native(site),
                    params: params.iter().map(|t| self.layout_of(t)).collect::<CompileResult<_>>()?,
                    rets: rets.iter().map(|t| self.layout_of(t)).collect::<CompileResult<_>>()?,
                    module: m.id.clone(),
                    local_nodes: Arc::new([]),
                    loaded: Default::default(),
                };
                table.insert(id, key.type_args.clone(), target);
            } else {
                self.declare(key)?;
                self.closures.pending.push(key.clone());
            }
        }
        Ok((id, serializable, params, rets))
    }

    pub(super) fn closure_pack_site(
        &mut self,
        module_idx: u32,
        handle: FunctionHandleIndex,
        type_args: Vec<RType>,
        mask: u64,
    ) -> CompileResult<PackInfo> {
        let (module, fdef) = self.resolve_handle(module_idx, handle)?;
        let key = InstanceKey { module, fdef, type_args };
        let table = self.closures.table.clone();
        let (function, serializable, params, rets) = self.closure_target(&key, &table)?;
        if params.len() < 64 && mask >> params.len() != 0 {
            return Err(bad("capture mask"));
        }
        let captured_at = |i: usize| i < 64 && (mask >> i) & 1 == 1;
        let mut captured = Vec::new();
        let mut captured_tys = Vec::new();
        let mut rest = Vec::new();
        for (i, t) in params.iter().enumerate() {
            if captured_at(i) {
                captured.push(self.layout_of(t)?);
                if serializable {
                    captured_tys.push(t.clone());
                }
            } else {
                rest.push(t.clone());
            }
        }
        let closure = self.layout_of(&RType::Function(rest, rets, AbilitySet::EMPTY))?;
        // The target is one of the instance's callees: it must compile too.
        if self
            .modules
            .get(module as usize)
            .and_then(|m| m.function_defs.get(fdef as usize))
            .is_some_and(|d| d.code.is_some())
        {
            self.callees.push(key.clone());
            let scalars = captured.iter().all(|l| crate::ty::kind_of_layout(l).is_some());
            if key.type_args.is_empty() && scalars && captured.len() <= closure_shims::FAST_CAPTURES {
                self.closures.fast_pending.push((key.clone(), mask));
            }
        }
        let target_module = self.modules.get(module as usize).ok_or_else(|| bad("module"))?.id.clone();
        let site = Box::new(PackSite {
            function,
            type_args: key.type_args,
            mask,
            captured: captured.clone(),
            serializable,
            module: target_module,
            captured_tys,
            loaded: Default::default(),
        });
        let addr = &*site as *const PackSite as u64;
        self.closures.packs.push(site);
        Ok(PackInfo { site: addr, captured, closure })
    }

    pub(super) fn closure_call_site(&mut self, spec: CallSpec) -> CompileResult<u64> {
        let site = Box::new(CallSite {
            table: self.closures.table.clone(),
            class: self.closures.table.class_of(&spec.provided, &spec.rets),
            provided: spec.provided,
            rets: spec.rets,
            held: spec.held,
            per_frame: spec.per_frame,
            native_base: spec.native_base,
            metered: spec.metered,
            borrowed: spec.borrowed,
            aptos: spec.aptos,
        });
        let addr = &*site as *const CallSite as u64;
        self.closures.calls.push(site);
        Ok(addr)
    }
}

impl JitEngine {
    /// Publishes the entry trampolines of the Move closure targets compiled
    /// code named since the last call (those whose call graph compiled).
    pub(super) fn publish_closure_targets(&mut self) {
        while let Some(key) = self.closures.pending.pop() {
            let _ = self.publish_target(&key);
        }
        // A target is published once its call graph compiled (maybe by
        // an enclosing call of this function): until then it stays
        // pending. One that does not compile never gets a fast entry: its
        // closures take `call_closure`.
        let mut waiting = Vec::new();
        while let Some((key, mask)) = self.closures.fast_pending.pop() {
            if let Ok(false) = self.publish_fast(&key, mask) {
                waiting.push((key, mask));
            }
        }
        self.closures.fast_pending.append(&mut waiting);
    }

    /// Gives the published non-generic Move target `key` a fast entry for
    /// closures packed with `mask` (the first mask published stays).
    /// `false` when the target is not published yet.
    fn publish_fast(&mut self, key: &InstanceKey, mask: u64) -> CompileResult<bool> {
        let (function, params, rets) = self.target_layouts(key)?;
        let table = self.closures.table.clone();
        let Some(target) = table.get(function, &[]).filter(|t| matches!(t.code, TargetCode::Move(_))) else {
            return Ok(false);
        };
        // Under Aptos's schedule a fast call charges this at once.
        let aptos_price = self.config.aptos.as_ref().and_then(|p| {
            p.call_price(movejit_format::Opcode::CallClosure, target.params.len() as u64, &target.local_nodes)
        });
        if !key.type_args.is_empty() || table.has_fast(function) {
            return Ok(true);
        }
        let captured_at = |i: usize| i < 64 && (mask >> i) & 1 == 1;
        let (mut captured, mut provided) = (Vec::new(), Vec::new());
        for (i, l) in params.into_iter().enumerate() {
            if captured_at(i) {
                captured.push(l);
            } else {
                provided.push(l);
            }
        }
        let scalars = captured.iter().all(|l| crate::ty::kind_of_layout(l).is_some());
        if !scalars || captured.len() > closure_shims::FAST_CAPTURES {
            return Ok(true);
        }
        let (func, tys, rtys, gas) = {
            let i = self.instances.get(key).ok_or_else(|| bad("instance"))?;
            (i.func, i.params.clone(), i.rets.clone(), i.gas)
        };
        let id = self.define_closure_adapter(func, &tys, &rtys, mask, gas)?;
        self.jit_mut().finalize_definitions().map_err(|e| CompileError::Codegen(e.to_string()))?;
        let adapter = self.jit_mut().get_finalized_function(id) as usize;
        let class = table.class_of(&provided, &rets);
        let aptos_copy = self.config.aptos.as_ref().and_then(|p| p.scalar_closure_copy(&captured));
        table.insert_fast(
            function,
            FastTarget { adapter, mask, class, captured, aptos_price, aptos_copy, loaded: Default::default() },
        );
        Ok(true)
    }

    /// The function index of instance `key` and its parameter and result
    /// layouts.
    fn target_layouts(&self, key: &InstanceKey) -> CompileResult<(FunctionIndex, Layouts, Layouts)> {
        let m = self.modules.get(key.module as usize).ok_or_else(|| bad("module"))?.clone();
        let id = functions::intern(&FunctionId { module: m.id.clone(), name: m.function_name(key.fdef).into() });
        let (params, rets) = crate::types::function_types(&m, key.fdef, &key.type_args)?;
        let layouts = |ts: &[RType]| ts.iter().map(|t| self.layout_of(t)).collect::<CompileResult<Vec<_>>>();
        Ok((id, layouts(&params)?, layouts(&rets)?))
    }

    fn publish_target(&mut self, key: &InstanceKey) -> CompileResult<()> {
        // The trampoline, after the instance and its callees compiled.
        let entry = self.entry_address(key)?;
        let (id, params, rets) = self.target_layouts(key)?;
        let code = TargetCode::Move(entry);
        let m = self.modules.get(key.module as usize).ok_or_else(|| bad("module"))?.clone();
        let local_nodes = super::local_nodes(&m, key.fdef, &key.type_args)?.into();
        let target = Target { code, params, rets, module: m.id.clone(), local_nodes, loaded: Default::default() };
        self.closures.table.insert(id, key.type_args.clone(), target);
        Ok(())
    }

    /// Compiles (and publishes) `function<type_args>` as a closure target.
    fn compile_closure_target(&mut self, function: &FunctionId, type_args: &[RType]) -> CompileResult<()> {
        let index = functions::intern(function);
        if self.closures.table.contains(index, type_args) {
            return Ok(());
        }
        let module = self
            .module_index(&function.module.address, &function.module.name)
            .ok_or_else(|| CompileError::UnknownFunction(format!("{}::{}", function.module, function.name)))?;
        let m = self.module(module).ok_or_else(|| bad("module"))?;
        let fdef = *m
            .functions
            .get(&*function.name)
            .ok_or_else(|| CompileError::UnknownFunction(function.name.to_string()))?;
        let key = InstanceKey { module, fdef, type_args: type_args.to_vec() };
        let table = self.closures.table.clone();
        self.env().closure_target(&key, &table)?;
        self.publish_closure_targets();
        if self.closures.table.contains(index, type_args) {
            Ok(())
        } else {
            // Why it did not compile, when the instance knows.
            match self.instances.get(&key).map(|i| &i.state) {
                Some(State::Failed(e)) => Err(e.clone()),
                _ => Err(CompileError::Unsupported(format!(
                    "closure target {}::{} does not compile",
                    function.module, function.name
                ))),
            }
        }
    }

    /// Compiles the targets of every closure in the values at seam slots
    /// `slots` before compiled code runs with them. Inside a session a
    /// target that does not compile is no obstacle (it is interpreted when
    /// called).
    pub(crate) fn compile_closure_args(&mut self, slots: &[SeamSlot<'_>]) -> CompileResult<()> {
        let mut found = Vec::new();
        for s in slots {
            closure_shims::closures_in(s, &mut found);
        }
        for (f, targs) in found {
            let r = self.compile_closure_target(&f, &targs);
            // Inside a session a target that does not compile is
            // interpreted when called.
            if !self.config.session_host {
                r?;
            }
        }
        Ok(())
    }

    /// After a run ended with `CLOSURE_NOT_COMPILED`: compiles the targets
    /// it missed, so the next run finds them (those that compile).
    pub(crate) fn compile_closure_misses(&mut self) -> CompileError {
        let misses: Vec<(FunctionId, Vec<RType>)> = (self.closures.table.take_misses().into_iter())
            .filter_map(|(f, targs)| Some((functions::name(f)?.clone(), targs)))
            .collect();
        let mut why = Vec::new();
        for (f, targs) in &misses {
            if let Err(e) = self.compile_closure_target(f, targs) {
                why.push(format!("{}::{}: {e}", f.module, f.name));
            }
        }
        let names: Vec<String> = misses.iter().map(|(f, _)| format!("{}::{}", f.module, f.name)).collect();
        CompileError::Unsupported(format!(
            "closure target not compiled before the run: {} {}",
            names.join(", "),
            why.join("; ")
        ))
    }
}
