//! The direct compiled entry path (executors `Jit` and `Auto`): a warm entry plan
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
//! - on `Auto`, the compiled code decides as on the interpreter's entry
//!   (below its threshold, or while its code compiles in the background,
//!   it answers `NotCompiled` and the interpreter's entry runs the call
//!   with the arguments already decoded);
//! - the meter is unmetered: metered calls keep the interpreter's entry,
//!   which charges the entry frame, so its charges stay the one source
//!   of truth;
//! - the limits let the entry frame and its results be pushed (else the
//!   interpreter's entry reports it).
//!
//! `unsafe` only to copy out returned references (as the interpreter's
//! entry does) and to hand the call's slots to compiled code
//! (`SeamSlot::new`).

#![allow(unsafe_code)]

use crate::engine::{EntryPlan, ExecutionResult, SessionState};
use movejit_runtime::compiled::{CallState, CompiledCall, CompiledHint, SeamCall, SeamSlot};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::{bcs as flat_bcs, mem, FlatLayout, FlatValue, InlineValues, Shape};
use movejit_runtime::ExecutorKind;
use movejit_runtime::{GasMeter, Layout, Type, VmError, VmResult};
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
    pub(crate) layouts: ResultLayouts,
    /// Some parameter is a reference (its target outlives the call).
    takes_references: bool,
    /// On `Auto`: what the compiled code learnt of the entry's instance
    /// (not compilable, or compiling in the background), so that its
    /// interpreted calls skip the direct path without a code-cache look-up.
    hint: CompiledHint,
}

/// Seam slots (arguments and results) a direct call keeps on the stack.
const FEW_SEAMS: usize = 8;

/// [`ExecutionResult::return_layouts`] and `mutref_layouts` of an entry
/// plan's calls (copied per call, not shared: sessions on other threads
/// run the same plan, and a shared count would be a shared write per call).
pub(crate) struct ResultLayouts {
    pub returns: Vec<Layout>,
    pub mutrefs: Vec<Layout>,
}

impl<'e> SessionState<'e, '_> {
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
                layouts: ResultLayouts { returns: done.return_layouts.clone(), mutrefs: done.mutref_layouts.clone() },
                takes_references: plan
                    .params
                    .iter()
                    .any(|t| matches!(t, Type::Reference(_) | Type::MutableReference(_))),
                hint: CompiledHint::default(),
            });
        }
    }

    /// Runs `plan` straight in compiled code (see the module doc), its
    /// arguments decoded from `args` (`aptos`: as Aptos decodes entry
    /// arguments) into inline slots. `Err(None)` when the direct path does
    /// not apply (nothing decoded), `Err(Some(values))` with the decoded
    /// arguments when the compiled code did not run it: the interpreter's
    /// entry runs the call then.
    pub(crate) fn run_direct_entry(
        &mut self,
        plan: &EntryPlan,
        ty_args: &[Type],
        args: &[Vec<u8>],
        aptos: bool,
        gas: &mut GasMeter,
    ) -> Result<VmResult<ExecutionResult>, Option<Vec<FlatValue>>> {
        let limits = &self.engine.config.limits;
        let native = plan.module.fn_info.get(plan.def as usize).is_none_or(|f| f.is_native);
        let fits = limits.max_call_depth > 0 && plan.returns.len() as u64 <= limits.max_operand_stack as u32 as u64;
        let Some(direct) = plan.direct.get() else { return Err(None) };
        if self.engine.config.executor == ExecutorKind::Interpreter || gas.is_metered() || native || !fits {
            return Err(None);
        }
        if args.len() != direct.seam_layouts.len() || args.len() != plan.arg_layouts.len() {
            return Err(None);
        }
        let state = CallState { depth: 1, stack_base: 0, gas_left: None, aptos: false, aptos_meter: 0 };
        let auto = self.engine.config.executor == ExecutorKind::Auto;
        if auto {
            let known_interpreted = match self.compiled.as_mut() {
                Some(code) => code.interprets(&plan.module.id, plan.def, ty_args, &state, &direct.hint),
                None => true,
            };
            if known_interpreted {
                return Err(None);
            }
        }
        // Arguments and results in inline slots (no heap block per value);
        // too many or too large for them take the interpreter's entry.
        let (Some(mut values), Some(mut rets)) =
            (InlineValues::new(&plan.arg_layouts), InlineValues::new(&direct.ret_layouts))
        else {
            return Err(None);
        };
        for (i, bytes) in args.iter().enumerate() {
            if values.decode(i, bytes, aptos).is_err() {
                return Ok(Err(VmError::bad_argument()));
            }
        }
        let Some(mut code) = self.compiled.take() else {
            return Err(Some((0..values.len()).map(|i| values.take(i)).collect()));
        };
        // The arguments' seam slots, then the results' (on the stack when few).
        let nargs = values.len();
        let mut seam = |i: usize| {
            // SAFETY: the slots of `values` and `rets`, live for the call,
            // of these layouts (argument values, results holding none).
            if i < nargs {
                unsafe { SeamSlot::new(values.addr(i), &direct.seam_layouts[i]) }
            } else {
                unsafe { SeamSlot::new(rets.addr(i - nargs), &direct.ret_layouts[i - nargs]) }
            }
        };
        let n = nargs + direct.ret_layouts.len();
        let mut few: [SeamSlot; FEW_SEAMS];
        let many: Vec<SeamSlot>;
        let seams: &[SeamSlot] = if n == 0 {
            &[]
        } else if n <= FEW_SEAMS {
            few = [seam(0); FEW_SEAMS];
            for (i, s) in few.iter_mut().enumerate().take(n).skip(1) {
                *s = seam(i);
            }
            &few[..n]
        } else {
            many = (0..n).map(seam).collect();
            &many
        };
        let (seam_args, seam_rets) = seams.split_at(nargs);
        self.globals.begin_call();
        let call = SeamCall {
            module: &plan.module.id,
            fdef: plan.def,
            ty_args,
            args: seam_args,
            rets: seam_rets,
            state,
            hint: auto.then_some(&direct.hint),
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
                return Err(Some((0..values.len()).map(|i| values.take(i)).collect()));
            }
            CompiledCall::Returned { .. } => None,
            CompiledCall::Failed { error, .. } => Some(error),
        };
        // The call consumed each value argument; a reference argument's
        // target stays the caller's (its final value is a `&mut` result).
        if direct.takes_references {
            for (i, t) in plan.params.iter().enumerate() {
                if !matches!(t, Type::Reference(_) | Type::MutableReference(_)) {
                    values.forget_at(i);
                }
            }
        } else {
            values.forget_all();
        }
        if let Some(e) = failure {
            // The results were never written: forget, don't drop.
            rets.forget_all();
            drop(values);
            drop(natives);
            // A failed call changes nothing.
            self.globals.roll_back();
            return Ok(Err(e));
        }
        // Returned references: copies of what they point to (which may be
        // memory of this execution); failing here fails the call.
        let mut copies = Vec::new();
        for i in 0..rets.len() {
            if let Shape::Reference(t) = &rets.layout(i).shape {
                // SAFETY: an owned reference slot; verified code returns
                // references only into its reference arguments (`values`,
                // alive) or global storage (the session's).
                match unsafe { mem::to_owned(t, mem::read_addr(rets.addr(i))) } {
                    Ok(v) => copies.push(v),
                    Err(e) => {
                        drop(values);
                        drop(natives);
                        self.globals.roll_back();
                        return Ok(Err(e));
                    }
                }
            }
        }
        drop(natives);
        self.globals.end_call();
        Ok(Self::direct_results(plan, direct, &rets, copies, &values, gas))
    }

    /// The results of a direct entry that returned, as the interpreter's
    /// entry gives them (`copies`: the returned references' targets, in
    /// order).
    fn direct_results(
        plan: &EntryPlan,
        direct: &DirectEntry,
        rets: &InlineValues,
        copies: Vec<FlatValue>,
        values: &InlineValues,
        gas: &GasMeter,
    ) -> VmResult<ExecutionResult> {
        let mut out = ExecutionResult {
            returns: Vec::with_capacity(rets.len()),
            mutrefs: Vec::new(),
            gas_used: gas.used(),
            return_layouts: direct.layouts.returns.clone(),
            mutref_layouts: direct.layouts.mutrefs.clone(),
        };
        let mut copies = copies.iter();
        for i in 0..rets.len() {
            let bcs = match &rets.layout(i).shape {
                Shape::Reference(_) => match copies.next() {
                    Some(v) => flat_bcs::serialize(v),
                    None => Err(VmError::invariant("a returned reference without its copy")),
                },
                _ => rets.serialize(i),
            };
            out.returns.push(bcs.map_err(|_| VmError::invariant("failed to serialize return values"))?);
        }
        // (Values consumed by the call were forgotten: `values` holds only
        // the reference arguments' targets, when there are any.)
        for (i, t) in plan.params.iter().enumerate().take(values.len()) {
            if let Type::MutableReference(_) = t {
                out.mutrefs.push((i, values.serialize(i)?));
            }
        }
        Ok(out)
    }
}
