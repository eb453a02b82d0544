//! Reference safety: an abstract interpretation over a borrow graph. No
//! reference outlives what it borrows, no value is moved, overwritten or
//! read while mutably borrowed, no mutable reference is used while other
//! references to the same place exist, and nothing borrowed from the frame
//! is returned.

mod borrow_graph;

use crate::{
    absint::{analyze, Domain, Transfer},
    acquires::ModuleAcquires,
    binary::FunctionContext,
    cfg::Cfg,
    error::{VerifyError, VerifyResult},
    meter::Meter,
};
use borrow_graph::{BorrowGraph, Label, RefId};
use movejit_format::{
    Bytecode, CompiledModule, FunctionAttribute, FunctionHandleIndex, SignatureToken as ST, StatusCode,
    StructDefinitionIndex,
};
use std::collections::{BTreeMap, BTreeSet};

const STEP_BASE_COST: u128 = 10;
const STEP_PER_LOCAL_COST: u128 = 20;
const STEP_PER_GRAPH_ITEM_COST: u128 = 50;
const JOIN_BASE_COST: u128 = 100;
const JOIN_PER_LOCAL_COST: u128 = 10;
const JOIN_PER_GRAPH_ITEM_COST: u128 = 50;
const REF_PARAM_EDGE_COST: u128 = 100;
const REF_PARAM_EDGE_COST_GROWTH: f32 = 1.5;
const CALL_PER_ACQUIRES_COST: u128 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Ref(RefId),
    NonRef,
}

impl Value {
    fn ref_id(self) -> Option<RefId> {
        match self {
            Value::Ref(id) => Some(id),
            Value::NonRef => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    locals: Vec<Value>,
    graph: BorrowGraph,
    next_id: usize,
}

impl State {
    fn new(f: &FunctionContext) -> Self {
        let n = f.num_locals();
        let mut s = State { locals: vec![Value::NonRef; n], graph: BorrowGraph::default(), next_id: n + 1 };
        for (i, t) in f.parameters.iter().enumerate() {
            if t.is_reference() {
                s.graph.new_ref(RefId(i), t.is_mutable_reference());
                s.locals[i] = Value::Ref(RefId(i));
            }
        }
        s.graph.new_ref(s.frame_root(), true);
        s
    }
    fn frame_root(&self) -> RefId {
        RefId(self.locals.len())
    }
    fn new_ref(&mut self, mut_: bool) -> RefId {
        let id = RefId(self.next_id);
        self.graph.new_ref(id, mut_);
        self.next_id += 1;
        id
    }
    fn value_for(&mut self, t: &ST) -> Value {
        match t {
            ST::Reference(_) => Value::Ref(self.new_ref(false)),
            ST::MutableReference(_) => Value::Ref(self.new_ref(true)),
            _ => Value::NonRef,
        }
    }
    fn release(&mut self, v: Value) {
        if let Value::Ref(id) = v {
            self.graph.release(id)
        }
    }
    fn local_borrowed(&self, i: u8) -> bool {
        self.graph.has_consistent_borrows(self.frame_root(), Some(&Label::Local(i)))
    }
    fn local_mut_borrowed(&self, i: u8) -> bool {
        self.graph.has_consistent_mutable_borrows(self.frame_root(), Some(&Label::Local(i)))
    }
    fn global_borrowed(&self, d: u16) -> bool {
        self.graph.has_consistent_borrows(self.frame_root(), Some(&Label::Global(d)))
    }
    fn global_mut_borrowed(&self, d: u16) -> bool {
        self.graph.has_consistent_mutable_borrows(self.frame_root(), Some(&Label::Global(d)))
    }

    /// Renames references so that a reference held in local `i` is `RefId(i)`
    /// and no other reference survives: states at block entries compare equal
    /// when they mean the same thing.
    fn canonicalize(&mut self) {
        let mut map = BTreeMap::new();
        map.insert(self.frame_root(), self.frame_root());
        let mut renames = false;
        for (i, v) in self.locals.iter_mut().enumerate() {
            if let Value::Ref(old) = *v {
                map.insert(old, RefId(i));
                renames |= old != RefId(i);
                *v = Value::Ref(RefId(i));
            }
        }
        // Most blocks end with their references where they started.
        if renames {
            self.graph.remap(&map);
        }
        self.next_id = self.locals.len() + 1;
    }
}

impl Domain for State {
    fn join(&mut self, other: &Self, meter: &mut Meter) -> VerifyResult<bool> {
        let mut g1 = self.graph.clone();
        let mut g2 = other.graph.clone();
        let mut locals = Vec::with_capacity(self.locals.len());
        for (a, b) in self.locals.iter().zip(&other.locals) {
            locals.push(match (a, b) {
                (Value::Ref(id), Value::NonRef) => {
                    g1.release(*id);
                    Value::NonRef
                }
                (Value::NonRef, Value::Ref(id)) => {
                    g2.release(*id);
                    Value::NonRef
                }
                (v, _) => *v,
            });
        }
        let joined = g1.join(&g2);
        meter.add(JOIN_BASE_COST)?;
        meter.add_items(JOIN_PER_LOCAL_COST, self.locals.len())?;
        meter.add_items(JOIN_PER_GRAPH_ITEM_COST, self.graph.graph_size())?;
        if locals == self.locals && self.graph.leq(&joined) {
            Ok(false)
        } else {
            self.locals = locals;
            self.graph = joined;
            Ok(true)
        }
    }
}

struct Analysis<'a> {
    m: &'a CompiledModule,
    config: &'a crate::VerifierConfig,
    f: &'a FunctionContext<'a>,
    stack: Vec<Value>,
    /// Calls to this module's functions (handles are unique per name after
    /// the duplication pass) must not touch resources they acquire.
    acquires: &'a ModuleAcquires,
}

pub(crate) fn verify(
    m: &CompiledModule,
    config: &crate::VerifierConfig,
    acquires: &ModuleAcquires,
    f: &FunctionContext,
    cfg: &Cfg,
    meter: &mut Meter,
) -> VerifyResult {
    let mut a = Analysis { m, config, f, stack: vec![], acquires };
    analyze(&mut a, State::new(f), f.code, cfg, meter)
}

impl Analysis<'_> {
    fn pop(&mut self, offset: u16) -> VerifyResult<Value> {
        self.stack.pop().ok_or_else(|| self.f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, offset))
    }
    fn pop_ref(&mut self, offset: u16) -> VerifyResult<RefId> {
        let v = self.pop(offset)?;
        v.ref_id().ok_or_else(|| self.f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, offset))
    }
    fn pop_n(&mut self, n: usize, offset: u16) -> VerifyResult<Vec<Value>> {
        if n > self.stack.len() {
            return Err(self.f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, offset));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    fn borrow_field(&mut self, s: &mut State, offset: u16, mut_: bool, id: RefId, label: Label) -> VerifyResult<Value> {
        if (mut_ && s.graph.has_full_borrows(id)) || (!mut_ && !s.graph.is_readable(id, Some(&label))) {
            return Err(self.f.err(self.field_borrow_status(), offset));
        }
        let child = s.new_ref(mut_);
        s.graph.add_strong_field_borrow(id, label, child);
        s.graph.release(id);
        Ok(Value::Ref(child))
    }

    fn call(
        &mut self,
        s: &mut State,
        offset: u16,
        args: Vec<Value>,
        acquired: &[StructDefinitionIndex],
        returns: &[ST],
        meter: &mut Meter,
    ) -> VerifyResult {
        meter.add_items(CALL_PER_ACQUIRES_COST, acquired.len())?;
        for a in acquired {
            if s.global_borrowed(a.0) {
                return Err(self.f.err(StatusCode::GLOBAL_REFERENCE_ERROR, offset));
            }
        }
        let mut all = BTreeSet::new();
        let mut muts = BTreeSet::new();
        for id in args.iter().filter_map(|v| v.ref_id()) {
            if s.graph.is_mutable(id) {
                if !s.graph.is_writable(id) {
                    return Err(self.f.err(StatusCode::CALL_BORROWED_MUTABLE_REFERENCE_ERROR, offset));
                }
                muts.insert(id);
            }
            all.insert(id);
        }
        let mut returned_refs = 0usize;
        for r in returns {
            let v = match r {
                ST::MutableReference(_) => {
                    let id = s.new_ref(true);
                    for p in &muts {
                        s.graph.add_weak_borrow(*p, id);
                    }
                    returned_refs += 1;
                    Value::Ref(id)
                }
                ST::Reference(_) => {
                    let id = s.new_ref(false);
                    for p in &all {
                        s.graph.add_weak_borrow(*p, id);
                    }
                    returned_refs += 1;
                    Value::Ref(id)
                }
                _ => Value::NonRef,
            };
            self.stack.push(v);
        }
        meter.add_items_with_growth(
            REF_PARAM_EDGE_COST,
            all.len().saturating_mul(returned_refs),
            REF_PARAM_EDGE_COST_GROWTH,
        )?;
        for id in all {
            s.graph.release(id);
        }
        Ok(())
    }

    fn call_handle(&mut self, s: &mut State, offset: u16, h: FunctionHandleIndex, meter: &mut Meter) -> VerifyResult {
        let m = self.m;
        let fh = &m.function_handles[h.idx()];
        // A struct-API borrow function behaves exactly like the field borrow.
        for attr in &fh.attributes {
            if let FunctionAttribute::BorrowFieldMutable(field) = attr {
                let id = self.pop_ref(offset)?;
                let v = self.borrow_field(s, offset, true, id, Label::Field(*field))?;
                self.stack.push(v);
                return Ok(());
            }
        }
        let nparams = m.signatures[fh.parameters.idx()].0.len();
        let args = self.pop_n(nparams, offset)?;
        let acquired = self.acquires.of(h);
        let returns = m.signatures[fh.return_.idx()].0.clone();
        self.call(s, offset, args, acquired, &returns, meter)
    }

    fn borrow_global(&mut self, s: &mut State, offset: u16, mut_: bool, d: StructDefinitionIndex) -> VerifyResult {
        self.pop(offset)?;
        if (mut_ && s.global_borrowed(d.0)) || s.global_mut_borrowed(d.0) {
            return Err(self.f.err(StatusCode::GLOBAL_REFERENCE_ERROR, offset));
        }
        let id = s.new_ref(mut_);
        let root = s.frame_root();
        s.graph.add_weak_field_borrow(root, Label::Global(d.0), id);
        self.stack.push(Value::Ref(id));
        Ok(())
    }

    fn move_from(&mut self, s: &mut State, offset: u16, d: StructDefinitionIndex) -> VerifyResult {
        self.pop(offset)?;
        if s.global_borrowed(d.0) {
            return Err(self.f.err(StatusCode::GLOBAL_REFERENCE_ERROR, offset));
        }
        self.stack.push(Value::NonRef);
        Ok(())
    }

    fn vector_op(&mut self, s: &mut State, offset: u16, mut_: bool) -> VerifyResult {
        let id = self.pop_ref(offset)?;
        if mut_ && !s.graph.is_writable(id) {
            return Err(self.f.err(StatusCode::VEC_UPDATE_EXISTS_MUTABLE_BORROW_ERROR, offset));
        }
        s.graph.release(id);
        Ok(())
    }

    fn read_ref(&mut self, s: &mut State, offset: u16, id: RefId) -> VerifyResult {
        if !s.graph.is_readable(id, None) {
            return Err(self.f.err(StatusCode::READREF_EXISTS_MUTABLE_BORROW_ERROR, offset));
        }
        s.graph.release(id);
        Ok(())
    }

    /// Aptos labels a field by its position, Sui by its field handle.
    fn field_label(&self, h: movejit_format::FieldHandleIndex) -> Label {
        if self.config.is_sui() {
            Label::Field(h.0)
        } else {
            Label::Field(self.m.field_handles[h.idx()].field)
        }
    }
    fn field_borrow_status(&self) -> StatusCode {
        if self.config.is_sui() {
            StatusCode::FIELD_EXISTS_MUTABLE_BORROW_ERROR
        } else {
            StatusCode::BORROWFIELD_EXISTS_MUTABLE_BORROW_ERROR
        }
    }
    /// Whether local `i` counts as mutably borrowed (for CopyLoc/ImmBorrowLoc).
    fn local_mut_borrowed(&self, s: &State, i: u8) -> bool {
        (self.config.additional_borrow_checks && s.graph.has_full_borrows(s.frame_root())) || s.local_mut_borrowed(i)
    }
    fn variant_field_label(&self, h: movejit_format::VariantFieldHandleIndex) -> Label {
        Label::Field(self.m.variant_field_handles[h.idx()].field)
    }

    fn step(&mut self, s: &mut State, instr: &Bytecode, offset: u16, meter: &mut Meter) -> VerifyResult {
        use Bytecode::*;
        meter.add(STEP_BASE_COST)?;
        meter.add_items(STEP_PER_LOCAL_COST, s.locals.len())?;
        meter.add_items(STEP_PER_GRAPH_ITEM_COST, s.graph.graph_size())?;
        let m = self.m;
        let err = |st| VerifyError::at_code(st, self.f.index, offset);
        let local =
            |s: &State, i: u8| s.locals.get(i as usize).copied().ok_or_else(|| err(StatusCode::INDEX_OUT_OF_BOUNDS));
        match instr {
            Pop => {
                let v = self.pop(offset)?;
                s.release(v)
            }
            CopyLoc(i) => {
                let v = match local(s, *i)? {
                    Value::Ref(id) => {
                        let new = s.new_ref(s.graph.is_mutable(id));
                        s.graph.add_strong_borrow(id, new);
                        Value::Ref(new)
                    }
                    Value::NonRef if self.local_mut_borrowed(s, *i) => {
                        return Err(err(StatusCode::COPYLOC_EXISTS_BORROW_ERROR))
                    }
                    Value::NonRef => Value::NonRef,
                };
                self.stack.push(v)
            }
            MoveLoc(i) => {
                let old = local(s, *i)?;
                s.locals[*i as usize] = Value::NonRef;
                if old == Value::NonRef && s.local_borrowed(*i) {
                    return Err(err(StatusCode::MOVELOC_EXISTS_BORROW_ERROR));
                }
                self.stack.push(old)
            }
            StLoc(i) => {
                let new = self.pop(offset)?;
                let old = local(s, *i)?;
                s.locals[*i as usize] = new;
                match old {
                    Value::Ref(id) => s.graph.release(id),
                    Value::NonRef if s.local_borrowed(*i) => {
                        return Err(err(StatusCode::STLOC_UNSAFE_TO_DESTROY_ERROR))
                    }
                    Value::NonRef => {}
                }
            }
            FreezeRef => {
                let id = self.pop_ref(offset)?;
                if !s.graph.is_freezable(id, None) {
                    return Err(err(StatusCode::FREEZEREF_EXISTS_MUTABLE_BORROW_ERROR));
                }
                let frozen = s.new_ref(false);
                s.graph.add_strong_borrow(id, frozen);
                s.graph.release(id);
                self.stack.push(Value::Ref(frozen))
            }
            Eq | Neq => {
                let v1 = self.pop(offset)?;
                let v2 = self.pop(offset)?;
                if let (Value::Ref(a), Value::Ref(b)) = (v1, v2) {
                    if !s.graph.is_readable(a, None) || !s.graph.is_readable(b, None) {
                        return Err(err(StatusCode::READREF_EXISTS_MUTABLE_BORROW_ERROR));
                    }
                    s.graph.release(a);
                    s.graph.release(b);
                }
                self.stack.push(Value::NonRef)
            }
            ReadRef => {
                let id = self.pop_ref(offset)?;
                self.read_ref(s, offset, id)?;
                self.stack.push(Value::NonRef)
            }
            WriteRef => {
                let id = self.pop_ref(offset)?;
                self.pop(offset)?;
                if !s.graph.is_writable(id) {
                    return Err(err(StatusCode::WRITEREF_EXISTS_BORROW_ERROR));
                }
                s.graph.release(id)
            }
            MutBorrowLoc(i) | ImmBorrowLoc(i) => {
                let mut_ = matches!(instr, MutBorrowLoc(_));
                if !mut_ && self.local_mut_borrowed(s, *i) {
                    return Err(err(StatusCode::BORROWLOC_EXISTS_BORROW_ERROR));
                }
                let check_full = !self.config.is_sui() || self.config.additional_borrow_checks;
                if mut_ && check_full && s.graph.has_full_borrows(s.frame_root()) {
                    return Err(err(StatusCode::BORROWLOC_EXISTS_BORROW_ERROR));
                }
                let id = s.new_ref(mut_);
                let root = s.frame_root();
                s.graph.add_strong_field_borrow(root, Label::Local(*i), id);
                self.stack.push(Value::Ref(id))
            }
            MutBorrowField(h) | ImmBorrowField(h) => {
                let id = self.pop_ref(offset)?;
                let v = self.borrow_field(s, offset, matches!(instr, MutBorrowField(_)), id, self.field_label(*h))?;
                self.stack.push(v)
            }
            MutBorrowFieldGeneric(i) | ImmBorrowFieldGeneric(i) => {
                let h = m.field_instantiations[i.idx()].handle;
                let id = self.pop_ref(offset)?;
                let v =
                    self.borrow_field(s, offset, matches!(instr, MutBorrowFieldGeneric(_)), id, self.field_label(h))?;
                self.stack.push(v)
            }
            MutBorrowVariantField(h) | ImmBorrowVariantField(h) => {
                let id = self.pop_ref(offset)?;
                let mut_ = matches!(instr, MutBorrowVariantField(_));
                let v = self.borrow_field(s, offset, mut_, id, self.variant_field_label(*h))?;
                self.stack.push(v)
            }
            MutBorrowVariantFieldGeneric(i) | ImmBorrowVariantFieldGeneric(i) => {
                let h = m.variant_field_instantiations[i.idx()].handle;
                let id = self.pop_ref(offset)?;
                let mut_ = matches!(instr, MutBorrowVariantFieldGeneric(_));
                let v = self.borrow_field(s, offset, mut_, id, self.variant_field_label(h))?;
                self.stack.push(v)
            }
            MutBorrowGlobal(d) | ImmBorrowGlobal(d) => {
                self.borrow_global(s, offset, matches!(instr, MutBorrowGlobal(_)), *d)?
            }
            MutBorrowGlobalGeneric(i) | ImmBorrowGlobalGeneric(i) => {
                let d = m.struct_def_instantiations[i.idx()].def;
                self.borrow_global(s, offset, matches!(instr, MutBorrowGlobalGeneric(_)), d)?
            }
            MoveFrom(d) => self.move_from(s, offset, *d)?,
            MoveFromGeneric(i) => self.move_from(s, offset, m.struct_def_instantiations[i.idx()].def)?,
            Call(h) => self.call_handle(s, offset, *h, meter)?,
            CallGeneric(i) => self.call_handle(s, offset, m.function_instantiations[i.idx()].handle, meter)?,
            CallClosure(sig) => {
                let Some(ST::Function(params, results, _)) = m.signatures[sig.idx()].0.first() else {
                    return Err(err(StatusCode::VERIFIER_INVARIANT_VIOLATION));
                };
                let (np, results) = (params.len(), results.clone());
                self.pop(offset)?;
                let args = self.pop_n(np, offset)?;
                self.call(s, offset, args, &[], &results, meter)?
            }
            PackClosure(_, mask) | PackClosureGeneric(_, mask) => {
                let h = match instr {
                    PackClosureGeneric(i, _) => m.function_instantiations[i.idx()].handle,
                    PackClosure(h, _) => *h,
                    _ => return Err(err(StatusCode::VERIFIER_INVARIANT_VIOLATION)),
                };
                let fh = &m.function_handles[h.idx()];
                let n = m.signatures[fh.parameters.idx()].0.len();
                let captured = (0..n).filter(|i| mask.is_captured(*i)).count();
                self.pop_n(captured, offset)?;
                self.stack.push(Value::NonRef)
            }
            Ret => {
                let values = self.pop_n(self.f.returns.len(), offset)?;
                let held: BTreeSet<RefId> = s.locals.iter().filter_map(|v| v.ref_id()).collect();
                for id in held {
                    s.graph.release(id);
                }
                if s.graph.has_consistent_borrows(s.frame_root(), None) {
                    return Err(err(StatusCode::UNSAFE_RET_LOCAL_OR_RESOURCE_STILL_BORROWED));
                }
                for id in values.iter().filter_map(|v| v.ref_id()) {
                    if s.graph.is_mutable(id) && !s.graph.is_writable(id) {
                        return Err(err(StatusCode::RET_BORROWED_MUTABLE_REFERENCE_ERROR));
                    }
                }
            }
            Branch(_) | Nop | CastU8 | CastU16 | CastU32 | CastU64 | CastU128 | CastU256 | CastI8 | CastI16
            | CastI32 | CastI64 | CastI128 | CastI256 | Negate | Not | Exists(_) | ExistsGeneric(_) => {
                if matches!(instr, Exists(_) | ExistsGeneric(_)) {
                    self.pop(offset)?;
                    self.stack.push(Value::NonRef);
                }
            }
            BrTrue(_) | BrFalse(_) | Abort => {
                self.pop(offset)?;
            }
            AbortMsg => {
                self.pop_n(2, offset)?;
            }
            MoveTo(_) | MoveToGeneric(_) => {
                self.pop(offset)?;
                let signer = self.pop(offset)?;
                s.release(signer)
            }
            LdTrue | LdFalse | LdU8(_) | LdU16(_) | LdU32(_) | LdU64(_) | LdU128(_) | LdU256(_) | LdI8(_)
            | LdI16(_) | LdI32(_) | LdI64(_) | LdI128(_) | LdI256(_) => self.stack.push(Value::NonRef),
            LdConst(c) => {
                let t = m.constant_pool[c.idx()].type_.clone();
                let v = s.value_for(&t);
                self.stack.push(v)
            }
            Add | Sub | Mul | Mod | Div | BitOr | BitAnd | Xor | Shl | Shr | Or | And | Lt | Gt | Le | Ge => {
                self.pop_n(2, offset)?;
                self.stack.push(Value::NonRef)
            }
            Pack(_)
            | PackGeneric(_)
            | PackVariant(_)
            | PackVariantGeneric(_)
            | SuiPackVariant(_)
            | SuiPackVariantGeneric(_)
            | Unpack(_)
            | UnpackGeneric(_)
            | UnpackVariant(_)
            | UnpackVariantGeneric(_)
            | SuiUnpackVariant(_)
            | SuiUnpackVariantGeneric(_) => {
                let (pops, pushes) = crate::stack_usage::effect(m, self.f, instr)
                    .ok_or_else(|| err(StatusCode::VERIFIER_INVARIANT_VIOLATION))?;
                self.pop_n(pops as usize, offset)?;
                for _ in 0..pushes {
                    self.stack.push(Value::NonRef);
                }
            }
            TestVariant(_) | TestVariantGeneric(_) => {
                let id = self.pop_ref(offset)?;
                self.read_ref(s, offset, id)?;
                self.stack.push(Value::NonRef)
            }
            VecPack(sig, n) => {
                self.pop_n(*n as usize, offset)?;
                let t = ST::Vector(Box::new(m.signatures[sig.idx()].0.first().cloned().unwrap_or(ST::Bool)));
                let v = s.value_for(&t);
                self.stack.push(v)
            }
            VecLen(_) => {
                self.vector_op(s, offset, false)?;
                self.stack.push(Value::NonRef)
            }
            VecImmBorrow(_) | VecMutBorrow(_) => {
                let mut_ = matches!(instr, VecMutBorrow(_));
                self.pop(offset)?;
                let id = self.pop_ref(offset)?;
                // Sui checks only the mutable case.
                let imm_bad = !mut_ && !self.config.is_sui() && !s.graph.is_readable(id, None);
                if imm_bad || (mut_ && !s.graph.is_writable(id)) {
                    return Err(err(StatusCode::VEC_BORROW_ELEMENT_EXISTS_MUTABLE_BORROW_ERROR));
                }
                let elem = s.new_ref(mut_);
                s.graph.add_weak_borrow(id, elem);
                s.graph.release(id);
                self.stack.push(Value::Ref(elem))
            }
            VecPushBack(_) => {
                self.pop(offset)?;
                self.vector_op(s, offset, true)?
            }
            VecPopBack(sig) => {
                self.vector_op(s, offset, true)?;
                let t = m.signatures[sig.idx()].0.first().cloned().unwrap_or(ST::Bool);
                let v = s.value_for(&t);
                self.stack.push(v)
            }
            VecUnpack(sig, n) => {
                self.pop(offset)?;
                let t = m.signatures[sig.idx()].0.first().cloned().unwrap_or(ST::Bool);
                for _ in 0..*n {
                    let v = s.value_for(&t);
                    self.stack.push(v)
                }
            }
            VecSwap(_) => {
                self.pop_n(2, offset)?;
                self.vector_op(s, offset, true)?
            }
            SuiUnpackVariantImmRef(h) | SuiUnpackVariantMutRef(h) => {
                let vh = &m.variant_handles[h.idx()];
                let mut_ = matches!(instr, SuiUnpackVariantMutRef(_));
                let n = m.enum_defs[vh.enum_def.idx()].variants[vh.variant as usize].fields.len();
                self.unpack_variant_ref(s, offset, mut_, vh.enum_def.0, vh.variant, n)?
            }
            SuiUnpackVariantGenericImmRef(h) | SuiUnpackVariantGenericMutRef(h) => {
                let vh = &m.variant_instantiation_handles[h.idx()];
                let def = m.enum_def_instantiations[vh.enum_def.idx()].def;
                let mut_ = matches!(instr, SuiUnpackVariantGenericMutRef(_));
                let n = m.enum_defs[def.idx()].variants[vh.variant as usize].fields.len();
                self.unpack_variant_ref(s, offset, mut_, def.0, vh.variant, n)?
            }
            VariantSwitch(_) => {
                let v = self.pop(offset)?;
                s.release(v)
            }
        }
        Ok(())
    }

    /// Sui: unpacking an enum by reference borrows each field of the variant.
    fn unpack_variant_ref(
        &mut self,
        s: &mut State,
        offset: u16,
        mut_: bool,
        enum_def: u16,
        variant: u16,
        n: usize,
    ) -> VerifyResult {
        let id = self.pop_ref(offset)?;
        if (mut_ && s.graph.has_full_borrows(id)) || (!mut_ && !s.graph.is_readable(id, None)) {
            return Err(self.f.err(StatusCode::FIELD_EXISTS_MUTABLE_BORROW_ERROR, offset));
        }
        for i in 0..n {
            let child = s.new_ref(mut_);
            s.graph.add_strong_field_borrow(id, Label::VariantField(enum_def, variant, i as u16), child);
            self.stack.push(Value::Ref(child));
        }
        s.graph.release(id);
        Ok(())
    }
}

impl Transfer for Analysis<'_> {
    type State = State;
    fn execute(&mut self, s: &mut State, instr: &Bytecode, offset: u16, end: u16, meter: &mut Meter) -> VerifyResult {
        self.step(s, instr, offset, meter)?;
        if offset == end {
            if !self.stack.is_empty() {
                return Err(self.f.err(StatusCode::VERIFIER_INVARIANT_VIOLATION, offset));
            }
            s.canonicalize();
        }
        Ok(())
    }
}
