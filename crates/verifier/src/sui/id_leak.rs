//! Id leak: a Sui object's UID is never reused. Packing a struct with `key`
//! needs, as its `id` field, a UID that came straight from one of the
//! functions that make fresh ones (`object::new`, ...), possibly through
//! locals (moved, not copied). An abstract interpreter tracks which stack
//! slots and locals hold such a fresh UID.

use super::{failure, function_name, QualifiedName, BRIDGE, SUI, SUI_SYSTEM};
use crate::{
    absint::{self, Domain, Transfer},
    binary::FunctionContext,
    cfg::Cfg,
    error::{VerifyError, VerifyResult},
    meter::Meter,
    stack_usage,
};
use movejit_format::{Bytecode, CompiledModule, FunctionHandle, StatusCode, StructDefinitionIndex};

/// Move's costs for this analysis (per instruction, per join, per local joined).
const STEP_COST: u128 = 15;
const JOIN_COST: u128 = 10;
const JOIN_PER_LOCAL_COST: u128 = 5;

/// Functions whose result is a fresh UID.
const FRESH_ID_FUNCTIONS: &[(u64, &str, &str)] = &[
    (SUI, "object", "new"),
    (SUI, "object", "new_uid_from_hash"),
    (SUI, "derived_object", "claim"),
    (SUI, "test_scenario", "new_object"),
];

/// System-object constructors, which pack objects with well-known ids.
const FUNCTIONS_TO_SKIP: &[(u64, &str, &str)] = &[
    (SUI_SYSTEM, "sui_system", "create"),
    (SUI, "clock", "create"),
    (SUI, "authenticator_state", "create"),
    (SUI, "random", "create"),
    (SUI, "deny_list", "create"),
    (BRIDGE, "bridge", "create"),
    (SUI, "accumulator", "create"),
    (SUI, "coin_registry", "create"),
    (SUI, "address_alias", "create"),
];

fn listed(list: &[(u64, &str, &str)], name: QualifiedName<'_>) -> bool {
    list.iter().any(|(a, m, f)| super::is(name, *a, m, f))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Fresh,
    Other,
}

impl Value {
    fn join(self, other: Value) -> Value {
        if self == other {
            self
        } else {
            Value::Other
        }
    }
}

/// Locals that hold a value (moved-out and never-set locals are absent).
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    locals: Vec<Option<Value>>,
}

impl Domain for State {
    fn join(&mut self, other: &Self, meter: &mut Meter) -> VerifyResult<bool> {
        meter.add(JOIN_COST)?;
        let present = other.locals.iter().filter(|l| l.is_some()).count();
        meter.add_items(JOIN_PER_LOCAL_COST, present)?;
        let mut changed = false;
        for (mine, theirs) in self.locals.iter_mut().zip(&other.locals) {
            if let Some(theirs) = theirs {
                let old = mine.unwrap_or(Value::Other);
                let new = theirs.join(old);
                changed |= new != old;
                *mine = Some(new);
            }
        }
        Ok(changed)
    }
}

struct Analysis<'a> {
    m: &'a CompiledModule,
    f: &'a FunctionContext<'a>,
    stack: Vec<Value>,
}

impl Analysis<'_> {
    fn invariant(&self, offset: u16) -> VerifyError {
        self.f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, offset).with_message("id leak: inconsistent stack")
    }

    fn pop(&mut self, offset: u16) -> VerifyResult<Value> {
        self.stack.pop().ok_or_else(|| self.invariant(offset))
    }

    fn pop_n(&mut self, n: u64, offset: u16) -> VerifyResult {
        let n = usize::try_from(n).map_err(|_| self.invariant(offset))?;
        let keep = self.stack.len().checked_sub(n).ok_or_else(|| self.invariant(offset))?;
        self.stack.truncate(keep);
        Ok(())
    }

    fn push_n(&mut self, n: u64, v: Value) {
        // Stack usage bounded every block's height already.
        for _ in 0..n {
            self.stack.push(v);
        }
    }

    fn call(&mut self, handle: &FunctionHandle, offset: u16) -> VerifyResult {
        let params = self.m.signature_at(handle.parameters).0.len() as u64;
        let returns = self.m.signature_at(handle.return_).0.len() as u64;
        self.pop_n(params, offset)?;
        if listed(FRESH_ID_FUNCTIONS, function_name(self.m, handle)) {
            if returns != 1 {
                return Err(self
                    .f
                    .err(StatusCode::UNKNOWN_VERIFICATION_ERROR, offset)
                    .with_message("id leak: a UID-making function must return one value"));
            }
            self.stack.push(Value::Fresh);
        } else {
            self.push_n(returns, Value::Other);
        }
        Ok(())
    }

    fn pack(&mut self, def: StructDefinitionIndex, fields: u64, offset: u16) -> VerifyResult {
        // Field 0 (`id`) is the deepest of the packed values.
        self.pop_n(fields.saturating_sub(1), offset)?;
        let id = if fields > 0 { self.pop(offset)? } else { Value::Other };
        let handle = self.m.struct_handle_at(self.m.struct_def_at(def).struct_handle);
        if handle.abilities.has_key() && id != Value::Fresh {
            let (addr, module, function) = function_name(self.m, self.f.handle);
            let msg = failure(format!(
                "invalid object creation in {}::{module}::{function}: object created without a newly created UID; \
                 the UID must come directly from sui::object::new or sui::derived_object::claim",
                addr.to_hex_long()
            ))
            .message;
            return Err(self.f.err(StatusCode::UNKNOWN_VERIFICATION_ERROR, offset).with_message(msg));
        }
        self.stack.push(Value::Other);
        Ok(())
    }
}

impl Transfer for Analysis<'_> {
    type State = State;

    fn execute(
        &mut self,
        state: &mut State,
        instr: &Bytecode,
        offset: u16,
        block_end: u16,
        meter: &mut Meter,
    ) -> VerifyResult {
        meter.add(STEP_COST)?;
        match instr {
            Bytecode::MoveLoc(l) => {
                let v = state.locals.get_mut(*l as usize).and_then(Option::take).unwrap_or(Value::Other);
                self.stack.push(v);
            }
            Bytecode::StLoc(l) => {
                let v = self.pop(offset)?;
                let slot = state.locals.get_mut(*l as usize).ok_or_else(|| self.invariant(offset))?;
                *slot = Some(v);
            }
            Bytecode::Call(h) => self.call(self.m.function_handle_at(*h), offset)?,
            Bytecode::CallGeneric(i) => {
                let handle = self.m.function_handle_at(self.m.function_instantiations[i.idx()].handle);
                self.call(handle, offset)?
            }
            Bytecode::Pack(d) => {
                let (pops, _) = stack_usage::effect(self.m, self.f, instr).ok_or_else(|| self.invariant(offset))?;
                self.pack(*d, pops, offset)?
            }
            Bytecode::PackGeneric(i) => {
                let (pops, _) = stack_usage::effect(self.m, self.f, instr).ok_or_else(|| self.invariant(offset))?;
                self.pack(self.m.struct_def_instantiations[i.idx()].def, pops, offset)?
            }
            // Nothing else makes a fresh UID or passes one on.
            _ => {
                let (pops, pushes) =
                    stack_usage::effect(self.m, self.f, instr).ok_or_else(|| self.invariant(offset))?;
                self.pop_n(pops, offset)?;
                self.push_n(pushes, Value::Other);
            }
        }
        if offset == block_end && !self.stack.is_empty() {
            return Err(self.invariant(offset));
        }
        Ok(())
    }
}

pub(super) fn verify_module(m: &CompiledModule, meter: &mut Meter) -> VerifyResult {
    for (i, def) in m.function_defs.iter().enumerate() {
        let Some(code) = &def.code else { continue };
        let f = FunctionContext::new(m, i as u16, def, code)?;
        if listed(FUNCTIONS_TO_SKIP, function_name(m, f.handle)) {
            continue;
        }
        meter.enter_function();
        let cfg = Cfg::new(code);
        let mut locals = vec![None; f.num_locals()];
        for slot in locals.iter_mut().take(f.parameters.len()) {
            *slot = Some(Value::Other);
        }
        let mut analysis = Analysis { m, f: &f, stack: Vec::new() };
        absint::analyze(&mut analysis, State { locals }, code, &cfg, meter)?;
        meter.leave_function()?;
    }
    Ok(())
}
