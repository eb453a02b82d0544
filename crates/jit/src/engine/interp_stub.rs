//! Interpreter stubs: how compiled code calls an instance the engine could
//! not compile (mixed execution, compiled → interpreted).
//!
//! Inside an interpreter session (`JitConfig::session_host`) an instance
//! whose own lowering fails with `Unsupported` (or a code-generator error)
//! does not fail its callers: its function is defined as a stub with the
//! same internal Move calling convention (`lower::move_signature`). The
//! stub marshals its parameters into the seam's slots (`SeamSlot`: scalars
//! stored to a slot, in-memory values by their address, references as
//! their target's address; results: in-memory ones at their destination,
//! scalars and references into slots it reads back) and calls the helper
//! `call_interpreted` with an [`InterpSite`] naming the instance. The shim
//! asks the session to interpret it with the calling code's state (depth
//! and stack base as the caller set them for the callee, the gas left), so
//! the interpreter's checks, charges and errors (location inside the
//! interpreted callee) are exactly those of an all-interpreted run.
//!
//! The caller already did the call's depth check and frame charge and
//! passes its gas left as for any compiled callee of the instance's
//! convention (`GasAbi`): in registers, the stub stores it to the context
//! for the interpreter and returns what the interpreter left (a failure
//! leaves it in the context); the stub adds no gas of its own. Standalone engines (no session)
//! cannot interpret: there a failed instance still gets the error stub and
//! its callers do not compile.

#![forbid(unsafe_code)]

use super::{codegen, JitEngine};
use crate::engine::InstanceKey;
use crate::error::{CompileError, CompileResult};
use crate::helpers::{status, HelperId};
use crate::kind::KindIr;
use crate::lower::{move_signature, return_failure, LowerEnv, CTX_GAS_LEFT, GAS_PARAM};
use crate::ty::Ty;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Function, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, UserFuncName};
use cranelift_codegen::Context;
use cranelift_frontend::FunctionBuilder;
use cranelift_module::FuncId;
use movejit_runtime::flat::closure_shims::InterpSite;
use movejit_runtime::Type as RType;

/// The interpreter sites stub code points to (boxed: fixed addresses),
/// alive as long as the engine's code.
#[derive(Default)]
pub(crate) struct InterpSites(#[allow(clippy::vec_box)] Vec<Box<InterpSite>>);

impl JitEngine {
    /// The site of instance `key` (parameter layouts as the interpreter's
    /// slots have them: reference layouts for references).
    fn interp_site(&mut self, key: &InstanceKey) -> CompileResult<u64> {
        let bad = |w: &str| CompileError::Malformed(format!("interpreter stub: bad {w}"));
        let m = self.modules.get(key.module as usize).ok_or_else(|| bad("module"))?.clone();
        let (params, rets) = crate::types::function_types(&m, key.fdef, &key.type_args)?;
        let layouts = |ts: &[RType]| ts.iter().map(|t| self.layout_of(t)).collect::<CompileResult<Vec<_>>>();
        let site = Box::new(InterpSite {
            module: m.id.clone(),
            fdef: key.fdef,
            ty_args: key.type_args.clone(),
            params: layouts(&params)?,
            rets: layouts(&rets)?,
            metered: self.config.cost.is_some(),
            module_number: key.module,
        });
        let addr = &*site as *const InterpSite as u64;
        self.interp_sites.0.push(site);
        Ok(addr)
    }

    /// Defines `id` (instance `key`, signature `params` → `rets`) as a stub
    /// that runs the instance on the session's interpreter.
    pub(super) fn define_interp_stub(
        &mut self,
        key: &InstanceKey,
        id: FuncId,
        params: &[Ty],
        rets: &[Ty],
    ) -> CompileResult<()> {
        let site = self.interp_site(key)?;
        let gas = self.instances.get(key).ok_or_else(|| codegen("interpreter stub of an undeclared instance"))?.gas;
        let metered = gas.in_registers();
        let sig = move_signature(self.call_conv, self.ptr, params, rets, gas);
        let mut func = Function::with_name_signature(UserFuncName::user(0, id.as_u32()), sig);
        let helper = self.env().helper(HelperId::call_interpreted(), &mut func)?;
        let (ptr, isa_cfg) = (self.ptr, self.frontend);
        {
            let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
            let blk = b.create_block();
            b.append_block_params_for_function_params(blk);
            b.switch_to_block(blk);
            b.seal_block(blk);
            let lanes = b.block_params(blk).to_vec();
            let ctx = lanes[0];
            let mut next = 1;
            let vmem = MemFlagsData::new().with_notrap();
            if metered {
                // The interpreter charges the context's gas left.
                b.ins().store(MemFlagsData::trusted(), lanes[GAS_PARAM], ctx, CTX_GAS_LEFT);
                next += 1;
            }
            let n = params.len() + rets.len();
            let table =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * n.max(1) as u32, 3));
            let slot_of = |b: &mut FunctionBuilder<'_>| {
                let s = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 32, 3));
                b.ins().stack_addr(ptr, s, 0)
            };
            for (i, t) in params.iter().enumerate() {
                let p = match t {
                    Ty::S(k) => {
                        let a = slot_of(&mut b);
                        for l in 0..k.lanes().len() {
                            b.ins().store(vmem, lanes[next + l], a, (8 * l) as i32);
                        }
                        next += k.lanes().len();
                        a
                    }
                    // In-memory values by address; references as their
                    // target (the seam's convention).
                    Ty::M(_) | Ty::R(_) => {
                        next += 1;
                        lanes[next - 1]
                    }
                };
                b.ins().stack_store(ptr, p, table, (8 * i) as i32);
            }
            let mut outs = Vec::with_capacity(rets.len());
            for (j, t) in rets.iter().enumerate() {
                let a = match t {
                    Ty::M(_) => {
                        next += 1;
                        lanes[next - 1]
                    }
                    _ => slot_of(&mut b),
                };
                b.ins().stack_store(ptr, a, table, (8 * (params.len() + j)) as i32);
                outs.push(a);
            }
            let sitev = b.ins().iconst(ptr, site as i64);
            let tp = b.ins().stack_addr(ptr, table, 0);
            let call = b.ins().call(helper, &[ctx, sitev, tp]);
            let st = b.inst_results(call)[0];
            let failed = b.ins().icmp_imm_u(IntCC::NotEqual, st, status::OK as i64);
            let (ok, bad) = (b.create_block(), b.create_block());
            b.ins().brif(failed, bad, &[], ok, &[]);
            // Failed: the shim recorded the error and its location.
            b.switch_to_block(bad);
            b.seal_block(bad);
            return_failure(&mut b, rets, ptr, gas);
            // Returned: scalar and reference results from their slots.
            b.switch_to_block(ok);
            b.seal_block(ok);
            let mut vals = vec![b.ins().iconst(types::I8, 0)];
            if metered {
                vals.push(b.ins().load(types::I64, MemFlagsData::trusted(), ctx, CTX_GAS_LEFT));
            }
            for (t, a) in rets.iter().zip(&outs) {
                match t {
                    Ty::M(_) => {}
                    Ty::S(k) => {
                        for (l, ty) in k.lanes().iter().enumerate() {
                            vals.push(b.ins().load(*ty, vmem, *a, (8 * l) as i32));
                        }
                    }
                    Ty::R(_) => vals.push(b.ins().load(ptr, vmem, *a, 0)),
                }
            }
            b.ins().return_(&vals);
            b.finalize(isa_cfg);
        }
        let mut ctx = Context::for_function(func);
        self.define(id, &mut ctx).map_err(|e| codegen(format!("interpreter stub: {e}")))
    }
}
