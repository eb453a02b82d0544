//! Stdlib natives compiled code calls without the native bridge:
//! `0x1::hash::sha2_256`, `0x1::hash::sha3_256` and `0x1::bcs::to_bytes`
//! run in the runtime's `native_fast` shim straight on flat memory (the
//! bridge would convert the argument to a tree value and back, which costs
//! several times the hash itself). Results, errors and gas are the
//! registered natives'.
//!
//! Also here: a call of a native no registry provides (inside a session,
//! `engine::MISSING_NATIVE`), which fails as the interpreter's does.

use super::*;
use movejit_format::AccountAddress;
use movejit_runtime::flat::shims::fast_native;

impl Lowerer<'_, '_> {
    /// The `native_fast` operation for a call of handle `h`, if it is one
    /// of the stdlib natives handled there with the argument types it takes.
    pub(super) fn fast_native_op(&self, h: FunctionHandleIndex, callee: &CalleeRef) -> Option<u64> {
        let m = self.target.module;
        let fh = m.function_handles.get(h.idx())?;
        let mh = m.module_handles.get(fh.module.idx())?;
        if *m.address_identifiers.get(mh.address.idx())? != AccountAddress::from_u64(1) {
            return None;
        }
        let module = m.identifiers.get(mh.name.idx())?.as_str();
        let name = m.identifiers.get(fh.name.idx())?.as_str();
        let byte_vec =
            |t: &Ty| matches!(t, Ty::M(l) if matches!(&l.shape, Shape::Vector(e) if matches!(e.shape, Shape::U8)));
        if callee.rets.len() != 1 || !byte_vec(&callee.rets[0]) || callee.params.len() != 1 {
            return None;
        }
        match (module, name) {
            ("hash", "sha2_256") if byte_vec(&callee.params[0]) => Some(fast_native::SHA2_256),
            ("hash", "sha3_256") if byte_vec(&callee.params[0]) => Some(fast_native::SHA3_256),
            ("bcs", "to_bytes") => match &callee.params[0] {
                Ty::R(l) if !has_closure(l) => Some(fast_native::BCS_TO_BYTES),
                _ => None,
            },
            _ => None,
        }
    }

    /// Lowers a call of a native `native_fast` handles (see
    /// [`fast_native_op`](Self::fast_native_op)); gas as in `call_native`.
    pub(super) fn lower_fast_native(
        &mut self,
        op: u64,
        callee: &CalleeRef,
        type_args: &[RType],
        i: usize,
    ) -> CompileResult<()> {
        let (t, v) = self.pop()?;
        if !t.compatible(&callee.params[0]) {
            return Err(malformed("native argument of the wrong type"));
        }
        let (arg, lp) = match &t {
            Ty::M(_) => (v.addr()?, self.b.ins().iconst(self.ptr, 0)),
            Ty::R(_) => {
                // The shim reads the layout while the code lives: take the
                // engine's cached one (the callee's signature layouts are not
                // kept alive).
                let t = type_args.first().ok_or_else(|| malformed("bcs::to_bytes without a type argument"))?;
                let l = self.env.layout(t)?;
                (v.one()?, self.layout_ptr(&l))
            }
            Ty::S(_) => return Err(malformed("native argument of the wrong type")),
        };
        let rl = match &callee.rets[0] {
            Ty::M(l) => l.clone(),
            _ => return Err(malformed("native result")),
        };
        let dst = self.opslot(self.stack.len(), &rl);
        let (metered, base, per_byte) = match self.target.cost {
            Some(cost) => {
                self.charge_dynamic(cost.native_base, i);
                (1, cost.native_base, cost.per_byte)
            }
            None => (0, 0, 0),
        };
        let opv = self.b.ins().iconst(types::I64, op as i64);
        let mv = self.b.ins().iconst(types::I64, metered);
        let bv = self.b.ins().iconst(types::I64, base as i64);
        let pv = self.b.ins().iconst(types::I64, per_byte as i64);
        let st = self.call_helper(HelperId::native_fast(), &[self.ctx, opv, arg, lp, dst, mv, bv, pv])?;
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, 0);
        let r = self.refund_at(i);
        self.fail_if_with(bad, i, r, |lw| lw.b.ins().iconst(types::I32, 0));
        self.push(Ty::M(rl), Val::Mem(dst), i);
        Ok(())
    }
}

impl Lowerer<'_, '_> {
    /// A call of a native no registry provides: `MISSING_DEPENDENCY` at the
    /// call, before any charge (the interpreter fails it before charging
    /// `native_base`). The arguments are dropped first, as the
    /// interpreter's unwind drops them.
    pub(super) fn call_missing_native(
        &mut self,
        h: FunctionHandleIndex,
        callee: &CalleeRef,
        i: usize,
    ) -> CompileResult<()> {
        let split = self.stack.len() - callee.params.len();
        let args = self.stack.split_off(split);
        for (t, v) in &args {
            if let Ty::M(l) = t {
                let a = v.addr()?;
                self.drop_value(l, a)?;
            }
        }
        // The interpreter's error, message included, raised whole.
        let m = self.target.module;
        let fh = m.function_handles.get(h.idx()).ok_or_else(|| malformed("function handle index"))?;
        let mh = m.module_handles.get(fh.module.idx()).ok_or_else(|| malformed("module handle index"))?;
        let addr = *m.address_identifiers.get(mh.address.idx()).ok_or_else(|| malformed("address index"))?;
        let id = movejit_runtime::ModuleId::new(addr, m.identifier_at(mh.name));
        let err = self.env.error_constant(movejit_runtime::VmError::missing_native(&id, m.identifier_at(fh.name)));
        let f = self.helper_ref(HelperId::fail_with())?;
        let yes = self.b.ins().iconst(types::I8, 1);
        let r = self.refund_at(i);
        self.fail_if_with(yes, i, r, |lw| {
            let e = lw.b.ins().iconst(lw.ptr, err as i64);
            lw.b.ins().call(f, &[lw.ctx, e]);
            lw.b.ins().iconst(types::I32, status_number(StatusCode::MISSING_DEPENDENCY))
        });
        // Unreachable from here: placeholders keep the stack's shape.
        for (j, t) in callee.rets.iter().enumerate() {
            let v = match t {
                Ty::M(l) => Val::Mem(self.opslot(split + j, l)),
                _ => {
                    let zeros: Vec<Value> = t.lanes(self.ptr).into_iter().map(|ty| self.iconst_ty(ty, 0)).collect();
                    Val::from_lanes(t, &zeros)
                }
            };
            self.stack.push((t.clone(), v));
        }
        self.watermark = self.watermark.max(self.stack.len());
        Ok(())
    }
}

/// Whether values of `l` can hold a closure (whose BCS the shim leaves to
/// the bridge).
fn has_closure(l: &FlatLayout) -> bool {
    match &l.shape {
        Shape::Closure => true,
        Shape::Vector(e) => has_closure(e),
        Shape::Struct(fs) => fs.iter().any(|f| has_closure(&f.layout)),
        Shape::Enum(vs) => vs.iter().flatten().any(|f| has_closure(&f.layout)),
        _ => false,
    }
}
