//! Global storage in compiled code: `Exists`, `ImmBorrowGlobal` /
//! `MutBorrowGlobal`, `MoveFrom`, `MoveTo` (and their generic forms) become
//! calls of the runtime's global-storage shims
//! (`movejit_runtime::flat::host`), which reach the interpreter session's
//! flat global cache with the interpreter's semantics and statuses. The
//! resource type travels as an immediate, its engine-wide interned id
//! ([`LowerEnv::global_type`], `movejit_runtime::intern`), which the shims
//! hand to the session as it is. `Exists` and the borrows pass the address
//! as its four words (no spill: the shim's hit path compares registers);
//! `MoveFrom` / `MoveTo` spill it to a 32-byte slot.
//! Resources may hold function values: a closure read from storage whose
//! target compiled code does not have runs on the session's interpreter
//! when called (`closure_shims::call_closure`).

use super::*;

impl Lowerer<'_, '_> {
    /// The resource type a global-storage instruction names.
    fn global_resource(&self, ins: &Bytecode) -> CompileResult<RType> {
        use Bytecode as B;
        let m = self.target.module;
        match *ins {
            B::Exists(sd) | B::MutBorrowGlobal(sd) | B::ImmBorrowGlobal(sd) | B::MoveFrom(sd) | B::MoveTo(sd) => {
                self.struct_type(sd, Vec::new())
            }
            B::ExistsGeneric(si)
            | B::MutBorrowGlobalGeneric(si)
            | B::ImmBorrowGlobalGeneric(si)
            | B::MoveFromGeneric(si)
            | B::MoveToGeneric(si) => {
                let inst =
                    m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct instantiation"))?;
                let args = self.inst_args(inst.type_parameters)?;
                self.struct_type(inst.def, args)
            }
            _ => Err(malformed("not a global-storage instruction")),
        }
    }

    /// Pops an address into a fresh 32-byte slot; returns the slot's address.
    fn pop_address_slot(&mut self) -> CompileResult<Value> {
        let v = self.pop_kind(Kind::Address)?;
        let s = self.new_slot(32, 8);
        let a = self.b.ins().stack_addr(self.ptr, s, 0);
        self.store_scalar(Kind::Address, &v, a, 0);
        Ok(a)
    }

    /// Pops an address as its four words.
    fn pop_address_words(&mut self) -> CompileResult<Vec<Value>> {
        let v = self.pop_kind(Kind::Address)?;
        let words = v.lanes();
        if words.len() != 4 {
            return Err(malformed("address lanes"));
        }
        Ok(words)
    }

    /// Lowers global-storage instruction `ins` at offset `i`. Under Aptos's
    /// schedule the shim also makes the charges only the transaction fixes
    /// (the resource's loading and I/O, then the price:
    /// `flat::host::charge_global`), between `aptos_global_enter` and
    /// `aptos_global_leave` (`lower/metered.rs`).
    pub(super) fn lower_global(&mut self, ins: &Bytecode, i: usize) -> CompileResult<()> {
        use Bytecode as B;
        let t = self.global_resource(ins)?;
        let id = self.env.global_type(&t)?;
        let l = self.env.layout(&t)?;
        let code = self.b.ins().iconst(types::I64, ((ins.opcode() as u64) << 32 | id) as i64);
        // Settled while the operands are on the stack (running out drops them).
        self.aptos_global_enter(i)?;
        match ins {
            B::Exists(_) | B::ExistsGeneric(_) => {
                let a = self.pop_address_words()?;
                let r = self.call_helper(HelperId::global_exists(), &[self.ctx, code, a[0], a[1], a[2], a[3]])?;
                self.aptos_global_leave(i);
                let bad = self.b.ins().icmp_imm_u(IntCC::Equal, r, status::EXISTS_FAILED as i64);
                let refund = self.refund_at(i);
                self.fail_if_with(bad, i, refund, |lw| lw.b.ins().iconst(types::I32, 0));
                self.push(Ty::S(Kind::Bool), Val::One(r), i);
            }
            B::ImmBorrowGlobal(_)
            | B::ImmBorrowGlobalGeneric(_)
            | B::MutBorrowGlobal(_)
            | B::MutBorrowGlobalGeneric(_) => {
                let a = self.pop_address_words()?;
                let shim = if matches!(ins, B::MutBorrowGlobal(_) | B::MutBorrowGlobalGeneric(_)) {
                    HelperId::global_borrow_mut()
                } else {
                    HelperId::global_borrow()
                };
                let p = self.call_helper(shim, &[self.ctx, code, a[0], a[1], a[2], a[3]])?;
                self.aptos_global_leave(i);
                // 0: the shim recorded the error.
                let bad = self.b.ins().icmp_imm_u(IntCC::Equal, p, 0);
                let refund = self.refund_at(i);
                self.fail_if_with(bad, i, refund, |lw| lw.b.ins().iconst(types::I32, 0));
                self.push(Ty::R(l), Val::One(p), i);
            }
            B::MoveFrom(_) | B::MoveFromGeneric(_) => {
                let a = self.pop_address_slot()?;
                let dst = self.opslot(self.stack.len(), &l);
                let st = self.call_helper(HelperId::global_move_from(), &[self.ctx, code, a, dst])?;
                self.aptos_global_leave(i);
                self.fail_unless_ok(st, i);
                self.push(Ty::M(l), Val::Mem(dst), i);
            }
            B::MoveTo(_) | B::MoveToGeneric(_) => {
                let (_, v) = self.pop_mem()?;
                let (_, signer) = self.pop_ref()?;
                let st = self.call_helper(HelperId::global_move_to(), &[self.ctx, code, signer, v])?;
                self.aptos_global_leave(i);
                self.fail_unless_ok(st, i);
            }
            _ => return Err(malformed("not a global-storage instruction")),
        }
        Ok(())
    }

    /// Fails at `i` with the error the shim recorded when `st` is not OK.
    fn fail_unless_ok(&mut self, st: Value, i: usize) {
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, st, status::OK as i64);
        let refund = self.refund_at(i);
        self.fail_if_with(bad, i, refund, |lw| lw.b.ins().iconst(types::I32, 0));
    }
}
