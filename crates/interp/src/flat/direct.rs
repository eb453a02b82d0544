//! The direct compiled entry path (executor `Jit`): a warm entry plan
//! whose instance is compiled runs straight in compiled code, its decoded
//! arguments handed over as seam slots, without a [`super::exec::FlatInterp`]
//! (frame stack, frames, callee look-up) that the compiled code would not
//! use. Should the compiled code call back into the interpreter, the
//! session makes a nested interpreter then (`seam.rs`), as on the
//! interpreter's entry path.
//!
//! It makes exactly the call the interpreter's entry makes
//! (`FlatInterp::try_compiled` at depth 1, stack base 0) and gives the same
//! results, errors and change sets. It is taken only where that call is
//! all the interpreter's entry would do before it:
//! - the plan ran through the interpreter's entry once and succeeded, so
//!   every layout the entry needs is known ([`DirectEntry`]);
//! - the function has bytecode (a native entry runs as a native);
//! - the meter is unmetered: metered calls keep the interpreter's entry,
//!   which charges the entry frame, so its charges stay the one source
//!   of truth;
//! - the limits let the entry frame and its results be pushed (else the
//!   interpreter's entry reports it).
//!
//! `unsafe` only to copy out returned references (as the interpreter's
//! entry does).

#![allow(unsafe_code)]

use crate::engine::{EntryPlan, ExecutionResult, ExecutorKind, Session};
use movejit_runtime::compiled::{CallState, CompiledCall, SeamCall, SeamSlot};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::{bcs as flat_bcs, mem, FlatLayout, FlatValue, Shape};
use movejit_runtime::{GasMeter, Layout, StatusCode, Type, VmError, VmResult};
use std::sync::Arc;

/// What the direct path adds to an entry plan, recorded after the plan's
/// first successful run on the interpreter's entry (each of these was
/// found then, for the same modules and type arguments).
pub(crate) struct DirectEntry {
    /// Per parameter, the layout of its seam slot: the value's, or for a
    /// reference the reference's (its address being the target's).
    seam_layouts: Vec<Arc<FlatLayout>>,
    /// Per result, the layout of the slot it is written to.
    ret_layouts: Vec<Arc<FlatLayout>>,
    /// [`ExecutionResult::return_layouts`] and `mutref_layouts`.
    return_layouts: Vec<Layout>,
    mutref_layouts: Vec<Layout>,
}

impl<'e> Session<'e, '_> {
    /// Records what the direct path needs for `plan`, which just ran on the
    /// interpreter's entry with result `done`.
    pub(crate) fn record_direct_entry(&self, plan: &EntryPlan, done: &ExecutionResult) {
        if plan.direct.get().is_some() {
            return;
        }
        let seam_layouts = plan
            .params
            .iter()
            .zip(&plan.arg_layouts)
            .map(|(t, l)| match t {
                Type::Reference(_) | Type::MutableReference(_) => self.flat_layout(t),
                _ => Ok(l.clone()),
            })
            .collect::<VmResult<Vec<_>>>();
        let ret_layouts = plan.returns.iter().map(|t| self.flat_layout(t)).collect::<VmResult<Vec<_>>>();
        if let (Ok(seam_layouts), Ok(ret_layouts)) = (seam_layouts, ret_layouts) {
            let _ = plan.direct.set(DirectEntry {
                seam_layouts,
                ret_layouts,
                return_layouts: done.return_layouts.clone(),
                mutref_layouts: done.mutref_layouts.clone(),
            });
        }
    }

    /// Runs `plan` with its decoded `args` straight in compiled code (see
    /// the module doc). `Err(args)`, untouched, when the direct path does
    /// not apply or the compiled code did not run it: the interpreter's
    /// entry runs the call then.
    pub(crate) fn run_direct_entry(
        &mut self,
        plan: &EntryPlan,
        ty_args: &[Type],
        args: Vec<FlatValue>,
        gas: &mut GasMeter,
    ) -> Result<VmResult<ExecutionResult>, Vec<FlatValue>> {
        let limits = &self.engine.config.limits;
        let native = plan.module.fn_info.get(plan.def as usize).is_none_or(|f| f.is_native);
        let fits = limits.max_call_depth > 0 && plan.returns.len() as u64 <= limits.max_operand_stack as u32 as u64;
        let Some(direct) = plan.direct.get() else { return Err(args) };
        if self.engine.config.executor != ExecutorKind::Jit || gas.is_metered() || native || !fits {
            return Err(args);
        }
        let Some(mut code) = self.compiled.take() else { return Err(args) };
        let rets: Vec<FlatValue> = direct.ret_layouts.iter().map(|l| FlatValue::zeroed(l.clone())).collect();
        // The arguments' slots, then the results' (one allocation).
        let seams: Vec<SeamSlot> = args
            .iter()
            .zip(&direct.seam_layouts)
            .map(|(v, l)| SeamSlot { addr: mem::Addr::of_value(v), layout: l })
            .chain(rets.iter().map(|v| SeamSlot { addr: mem::Addr::of_value(v), layout: v.layout() }))
            .collect();
        let (seam_args, seam_rets) = seams.split_at(args.len().min(direct.seam_layouts.len()));
        self.globals.begin_call();
        let call = SeamCall {
            module: &plan.module.id,
            fdef: plan.def,
            ty_args,
            args: seam_args,
            rets: seam_rets,
            state: CallState { depth: 1, stack_base: 0, gas_left: None, aptos: false, memory_meter: 0 },
            hint: None,
        };
        // The natives' memory of this execution: a returned reference may
        // point into it, so it goes only once the results are owned (and
        // before the call's changes are kept or undone, as on the
        // interpreter's entry).
        let mut natives = NativeSession::default();
        let r = code.call(self, &mut natives, call);
        self.compiled = Some(code);
        let failure = match r {
            // Nothing ran: the interpreter's entry runs it.
            CompiledCall::NotCompiled => {
                self.globals.end_call();
                return Err(args);
            }
            CompiledCall::Returned { .. } => None,
            CompiledCall::Failed { error, .. } => Some(error),
        };
        // The call consumed each value argument; a reference argument's
        // target stays the caller's (its final value is a `&mut` result).
        let roots: Vec<Option<FlatValue>> = args
            .into_iter()
            .zip(&plan.params)
            .map(|(v, t)| match t {
                Type::Reference(_) | Type::MutableReference(_) => Some(v),
                _ => {
                    v.forget_moved();
                    None
                }
            })
            .collect();
        if let Some(e) = failure {
            // The results were never written: forget, don't drop.
            rets.into_iter().for_each(FlatValue::forget_moved);
            drop(roots);
            drop(natives);
            // A failed call changes nothing.
            self.globals.roll_back();
            return Ok(Err(e));
        }
        // Returned references: copies of what they point to (which may be
        // memory of this execution); failing here fails the call.
        let rets = rets
            .into_iter()
            .map(|v| match &v.layout().shape {
                // SAFETY: an owned reference slot; verified code returns
                // references only into its reference arguments (`roots`,
                // alive) or global storage (the session's).
                Shape::Reference(t) => unsafe { mem::to_owned(t, mem::read_addr(mem::Addr::of_value(&v))) },
                _ => Ok(v),
            })
            .collect::<VmResult<Vec<_>>>();
        let rets = match rets {
            Ok(rets) => rets,
            Err(e) => {
                drop(roots);
                drop(natives);
                self.globals.roll_back();
                return Ok(Err(e));
            }
        };
        drop(natives);
        self.globals.end_call();
        Ok(Self::direct_results(plan, direct, rets, roots, gas))
    }

    /// The results of a direct entry that returned, as the interpreter's
    /// entry gives them.
    fn direct_results(
        plan: &EntryPlan,
        direct: &DirectEntry,
        rets: Vec<FlatValue>,
        roots: Vec<Option<FlatValue>>,
        gas: &GasMeter,
    ) -> VmResult<ExecutionResult> {
        let mut out = ExecutionResult {
            returns: Vec::with_capacity(rets.len()),
            mutrefs: Vec::new(),
            gas_used: gas.used(),
            return_layouts: direct.return_layouts.clone(),
            mutref_layouts: direct.mutref_layouts.clone(),
        };
        for v in rets {
            out.returns.push(flat_bcs::serialize(&v).map_err(|e| {
                if e.status == StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR {
                    e
                } else {
                    VmError::invariant("failed to serialize return values")
                }
            })?);
        }
        for (i, (t, v)) in plan.params.iter().zip(&roots).enumerate() {
            if let (Type::MutableReference(_), Some(v)) = (t, v) {
                out.mutrefs.push((i, flat_bcs::serialize(v)?));
            }
        }
        Ok(out)
    }
}
