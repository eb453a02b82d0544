//! Type safety: an abstract interpretation over types, block by block (the
//! stack is empty between blocks). Every instruction's operands must have
//! the types it expects; generic operations are checked after substituting
//! their type arguments.

use crate::{
    binary::FunctionContext,
    cfg::Cfg,
    error::{VerifyError, VerifyResult},
    meter::Meter,
    types::{abilities, instantiate, is_assignable, node_count, struct_fields, struct_type},
};
use movejit_format::{
    AbilitySet, Bytecode, ClosureMask, CompiledModule, FunctionAttribute, FunctionHandleIndex, SignatureIndex,
    SignatureToken as ST, StatusCode, StructDefinitionIndex,
};

const TYPE_NODE_COST: u128 = 30;

struct Checker<'a, 'm> {
    m: &'a CompiledModule,
    f: &'a FunctionContext<'a>,
    stack: Vec<ST>,
    meter: &'m mut Meter,
    offset: u16,
}

pub(crate) fn verify(
    m: &CompiledModule,
    config: &crate::VerifierConfig,
    f: &FunctionContext,
    cfg: &Cfg,
    meter: &mut Meter,
) -> VerifyResult {
    let _ = config;
    let mut c = Checker { m, f, stack: Vec::new(), meter, offset: 0 };
    for id in cfg.block_ids() {
        let b = cfg.block(id);
        for pc in b.start..=b.end {
            c.offset = pc;
            c.instr(&f.code.code[pc as usize])?;
        }
    }
    Ok(())
}

impl Checker<'_, '_> {
    fn err(&self, s: StatusCode) -> VerifyError {
        self.f.err(s, self.offset)
    }
    fn pop(&mut self) -> VerifyResult<ST> {
        self.stack.pop().ok_or_else(|| self.err(StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK))
    }
    fn push(&mut self, t: ST) -> VerifyResult {
        self.meter.add_items(TYPE_NODE_COST, node_count(&t))?;
        self.stack.push(t);
        Ok(())
    }
    fn abilities(&self, t: &ST) -> VerifyResult<AbilitySet> {
        abilities(self.m, t, self.f.type_parameters).map_err(|e| self.err(e.status))
    }
    fn sig(&self, i: SignatureIndex) -> VerifyResult<&[ST]> {
        self.m.signatures.get(i.idx()).map(|s| &s.0[..]).ok_or_else(|| self.err(StatusCode::INDEX_OUT_OF_BOUNDS))
    }
    fn charge(&mut self, tys: &[ST]) -> VerifyResult {
        let n: usize = tys.iter().map(node_count).sum();
        self.meter.add_items(TYPE_NODE_COST, n)
    }
    fn vec_elem(&self, i: SignatureIndex) -> VerifyResult<ST> {
        self.sig(i)?.first().cloned().ok_or_else(|| self.err(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH))
    }

    fn instr(&mut self, instr: &Bytecode) -> VerifyResult {
        use Bytecode::*;
        let m = self.m;
        match instr {
            Pop => {
                let t = self.pop()?;
                if !self.abilities(&t)?.has_drop() {
                    return Err(self.err(StatusCode::POP_WITHOUT_DROP_ABILITY));
                }
            }
            BrTrue(_) | BrFalse(_) => {
                if self.pop()? != ST::Bool {
                    return Err(self.err(StatusCode::BR_TYPE_MISMATCH_ERROR));
                }
            }
            StLoc(i) => {
                let t = self.pop()?;
                let l = self.f.local_at(*i).ok_or_else(|| self.err(StatusCode::INDEX_OUT_OF_BOUNDS))?;
                if !is_assignable(l, &t) {
                    return Err(self.err(StatusCode::STLOC_TYPE_MISMATCH_ERROR));
                }
            }
            Abort => {
                if self.pop()? != ST::U64 {
                    return Err(self.err(StatusCode::ABORT_TYPE_MISMATCH_ERROR));
                }
            }
            AbortMsg => {
                let msg = self.pop()?;
                let code = self.pop()?;
                if code != ST::U64 || msg != ST::Vector(Box::new(ST::U8)) {
                    return Err(self.err(StatusCode::ABORT_TYPE_MISMATCH_ERROR));
                }
            }
            Ret => {
                for r in self.f.returns.iter().rev() {
                    let t = self.pop()?;
                    if !is_assignable(r, &t) {
                        return Err(self.err(StatusCode::RET_TYPE_MISMATCH_ERROR));
                    }
                }
            }
            Branch(_) | Nop => {}
            FreezeRef => match self.pop()? {
                ST::MutableReference(inner) => self.push(ST::Reference(inner))?,
                _ => return Err(self.err(StatusCode::FREEZEREF_TYPE_MISMATCH_ERROR)),
            },
            MutBorrowField(h) | ImmBorrowField(h) => {
                let fh = &m.field_handles[h.idx()];
                self.borrow_field(matches!(instr, MutBorrowField(_)), fh.owner, None, fh.field, &[])?
            }
            MutBorrowFieldGeneric(i) | ImmBorrowFieldGeneric(i) => {
                let inst = &m.field_instantiations[i.idx()];
                let fh = &m.field_handles[inst.handle.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                self.borrow_field(matches!(instr, MutBorrowFieldGeneric(_)), fh.owner, None, fh.field, &args)?
            }
            MutBorrowVariantField(h) | ImmBorrowVariantField(h) => {
                let fh = &m.variant_field_handles[h.idx()];
                let mut_ = matches!(instr, MutBorrowVariantField(_));
                self.borrow_field(mut_, fh.struct_index, Some(&fh.variants), fh.field, &[])?
            }
            MutBorrowVariantFieldGeneric(i) | ImmBorrowVariantFieldGeneric(i) => {
                let inst = &m.variant_field_instantiations[i.idx()];
                let fh = &m.variant_field_handles[inst.handle.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                let mut_ = matches!(instr, MutBorrowVariantFieldGeneric(_));
                self.borrow_field(mut_, fh.struct_index, Some(&fh.variants), fh.field, &args)?
            }
            LdU8(_) => self.push(ST::U8)?,
            LdU16(_) => self.push(ST::U16)?,
            LdU32(_) => self.push(ST::U32)?,
            LdU64(_) => self.push(ST::U64)?,
            LdU128(_) => self.push(ST::U128)?,
            LdU256(_) => self.push(ST::U256)?,
            LdI8(_) => self.push(ST::I8)?,
            LdI16(_) => self.push(ST::I16)?,
            LdI32(_) => self.push(ST::I32)?,
            LdI64(_) => self.push(ST::I64)?,
            LdI128(_) => self.push(ST::I128)?,
            LdI256(_) => self.push(ST::I256)?,
            LdTrue | LdFalse => self.push(ST::Bool)?,
            LdConst(i) => self.push(m.constant_pool[i.idx()].type_.clone())?,
            CopyLoc(i) => {
                let l = self.f.local_at(*i).ok_or_else(|| self.err(StatusCode::INDEX_OUT_OF_BOUNDS))?.clone();
                if !self.abilities(&l)?.has_copy() {
                    return Err(self.err(StatusCode::COPYLOC_WITHOUT_COPY_ABILITY));
                }
                self.push(l)?
            }
            MoveLoc(i) => {
                let l = self.f.local_at(*i).ok_or_else(|| self.err(StatusCode::INDEX_OUT_OF_BOUNDS))?.clone();
                self.push(l)?
            }
            MutBorrowLoc(i) | ImmBorrowLoc(i) => {
                let l = self.f.local_at(*i).ok_or_else(|| self.err(StatusCode::INDEX_OUT_OF_BOUNDS))?.clone();
                if l.is_reference() {
                    return Err(self.err(StatusCode::BORROWLOC_REFERENCE_ERROR));
                }
                let r = if matches!(instr, MutBorrowLoc(_)) {
                    ST::MutableReference(Box::new(l))
                } else {
                    ST::Reference(Box::new(l))
                };
                self.push(r)?
            }
            Call(h) => self.call(*h, &[])?,
            CallGeneric(i) => {
                let inst = &m.function_instantiations[i.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                self.call(inst.handle, &args)?
            }
            PackClosure(h, mask) => self.pack_closure(*h, &[], *mask)?,
            PackClosureGeneric(i, mask) => {
                let inst = &m.function_instantiations[i.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                self.pack_closure(inst.handle, &args, *mask)?
            }
            CallClosure(s) => {
                let expected = self
                    .sig(*s)?
                    .first()
                    .cloned()
                    .ok_or_else(|| self.err(StatusCode::CLOSURE_CALL_REQUIRES_FUNCTION))?;
                let ST::Function(params, results, _) = &expected else {
                    return Err(self.err(StatusCode::CLOSURE_CALL_REQUIRES_FUNCTION));
                };
                let closure = self.pop()?;
                if !is_assignable(&expected, &closure) {
                    return Err(self.err(StatusCode::CALL_TYPE_MISMATCH_ERROR));
                }
                for p in params.iter().rev() {
                    let a = self.pop()?;
                    if !is_assignable(p, &a) {
                        return Err(self.err(StatusCode::CALL_TYPE_MISMATCH_ERROR));
                    }
                }
                for r in results {
                    self.push(r.clone())?;
                }
            }
            Pack(d) => self.pack(*d, None, &[])?,
            Unpack(d) => self.unpack(*d, None, &[])?,
            PackGeneric(i) | UnpackGeneric(i) => {
                let inst = &m.struct_def_instantiations[i.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                if matches!(instr, PackGeneric(_)) {
                    self.pack(inst.def, None, &args)?
                } else {
                    self.unpack(inst.def, None, &args)?
                }
            }
            PackVariant(h) | UnpackVariant(h) | TestVariant(h) => {
                let vh = &m.struct_variant_handles[h.idx()];
                match instr {
                    PackVariant(_) => self.pack(vh.struct_index, Some(vh.variant), &[])?,
                    UnpackVariant(_) => self.unpack(vh.struct_index, Some(vh.variant), &[])?,
                    _ => self.test_variant(vh.struct_index, &[])?,
                }
            }
            PackVariantGeneric(i) | UnpackVariantGeneric(i) | TestVariantGeneric(i) => {
                let inst = &m.struct_variant_instantiations[i.idx()];
                let vh = &m.struct_variant_handles[inst.handle.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                match instr {
                    PackVariantGeneric(_) => {
                        self.charge(&args)?;
                        self.pack(vh.struct_index, Some(vh.variant), &args)?
                    }
                    UnpackVariantGeneric(_) => {
                        self.charge(&args)?;
                        self.unpack(vh.struct_index, Some(vh.variant), &args)?
                    }
                    _ => self.test_variant(vh.struct_index, &args)?,
                }
            }
            ReadRef => match self.pop()? {
                ST::Reference(inner) | ST::MutableReference(inner) => {
                    if !self.abilities(&inner)?.has_copy() {
                        return Err(self.err(StatusCode::READREF_WITHOUT_COPY_ABILITY));
                    }
                    self.push(*inner)?
                }
                _ => return Err(self.err(StatusCode::READREF_TYPE_MISMATCH_ERROR)),
            },
            WriteRef => {
                let r = self.pop()?;
                let v = self.pop()?;
                let inner = match r {
                    ST::MutableReference(inner) => *inner,
                    _ => return Err(self.err(StatusCode::WRITEREF_NO_MUTABLE_REFERENCE_ERROR)),
                };
                if !self.abilities(&inner)?.has_drop() {
                    return Err(self.err(StatusCode::WRITEREF_WITHOUT_DROP_ABILITY));
                }
                if !is_assignable(&inner, &v) {
                    return Err(self.err(StatusCode::WRITEREF_TYPE_MISMATCH_ERROR));
                }
            }
            CastU8 | CastU16 | CastU32 | CastU64 | CastU128 | CastU256 | CastI8 | CastI16 | CastI32 | CastI64
            | CastI128 | CastI256 => {
                if !self.pop()?.is_integer() {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(match instr {
                    CastU8 => ST::U8,
                    CastU16 => ST::U16,
                    CastU32 => ST::U32,
                    CastU64 => ST::U64,
                    CastU128 => ST::U128,
                    CastU256 => ST::U256,
                    CastI8 => ST::I8,
                    CastI16 => ST::I16,
                    CastI32 => ST::I32,
                    CastI64 => ST::I64,
                    CastI128 => ST::I128,
                    _ => ST::I256,
                })?
            }
            Add | Sub | Mul | Mod | Div => {
                let a = self.pop()?;
                let b = self.pop()?;
                if !(a.is_integer() && a == b) {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(a)?
            }
            BitOr | BitAnd | Xor => {
                let a = self.pop()?;
                let b = self.pop()?;
                if !(a.is_unsigned_integer() && a == b) {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(a)?
            }
            Negate => {
                let a = self.pop()?;
                if !a.is_signed_integer() {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(a)?
            }
            Shl | Shr => {
                let amount = self.pop()?;
                let v = self.pop()?;
                if !(v.is_unsigned_integer() && amount == ST::U8) {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(v)?
            }
            Or | And => {
                let a = self.pop()?;
                let b = self.pop()?;
                if a != ST::Bool || b != ST::Bool {
                    return Err(self.err(StatusCode::BOOLEAN_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(ST::Bool)?
            }
            Not => {
                if self.pop()? != ST::Bool {
                    return Err(self.err(StatusCode::BOOLEAN_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(ST::Bool)?
            }
            Eq | Neq => {
                let a = self.pop()?;
                let b = self.pop()?;
                if !(self.abilities(&a)?.has_drop() && a == b) {
                    return Err(self.err(StatusCode::EQUALITY_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(ST::Bool)?
            }
            Lt | Gt | Le | Ge => {
                let a = self.pop()?;
                let b = self.pop()?;
                if !(a.is_integer() && a == b) {
                    return Err(self.err(StatusCode::INTEGER_OP_TYPE_MISMATCH_ERROR));
                }
                self.push(ST::Bool)?
            }
            MutBorrowGlobal(d) | ImmBorrowGlobal(d) => {
                self.borrow_global(matches!(instr, MutBorrowGlobal(_)), *d, &[])?
            }
            MutBorrowGlobalGeneric(i) | ImmBorrowGlobalGeneric(i) => {
                let inst = &m.struct_def_instantiations[i.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                self.borrow_global(matches!(instr, MutBorrowGlobalGeneric(_)), inst.def, &args)?
            }
            Exists(d) => self.exists(*d, &[])?,
            MoveFrom(d) => self.move_from(*d, &[])?,
            MoveTo(d) => self.move_to(*d, &[])?,
            ExistsGeneric(i) | MoveFromGeneric(i) | MoveToGeneric(i) => {
                let inst = &m.struct_def_instantiations[i.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                match instr {
                    ExistsGeneric(_) => self.exists(inst.def, &args)?,
                    MoveFromGeneric(_) => self.move_from(inst.def, &args)?,
                    _ => self.move_to(inst.def, &args)?,
                }
            }
            VecPack(s, n) => {
                let elem = self.vec_elem(*s)?;
                if *n as usize > self.stack.len() {
                    return Err(self.err(StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK));
                }
                for _ in 0..*n {
                    let t = self.pop()?;
                    if !is_assignable(&elem, &t) {
                        return Err(self.err(StatusCode::TYPE_MISMATCH));
                    }
                }
                self.push(ST::Vector(Box::new(elem)))?
            }
            VecLen(s) => {
                let elem = self.vec_elem(*s)?;
                let v = self.pop()?;
                if vec_ref_elem(&v, false) != Some(&elem) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
                self.push(ST::U64)?
            }
            VecImmBorrow(s) | VecMutBorrow(s) => {
                let mut_ = matches!(instr, VecMutBorrow(_));
                let elem = self.vec_elem(*s)?;
                let idx = self.pop()?;
                let v = self.pop()?;
                if idx != ST::U64 || vec_ref_elem(&v, mut_) != Some(&elem) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
                self.push(if mut_ { ST::MutableReference(Box::new(elem)) } else { ST::Reference(Box::new(elem)) })?
            }
            VecPushBack(s) => {
                let elem = self.vec_elem(*s)?;
                let e = self.pop()?;
                let v = self.pop()?;
                if !is_assignable(&elem, &e) || vec_ref_elem(&v, true) != Some(&elem) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
            }
            VecPopBack(s) => {
                let elem = self.vec_elem(*s)?;
                let v = self.pop()?;
                if vec_ref_elem(&v, true) != Some(&elem) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
                self.push(elem)?
            }
            VecUnpack(s, n) => {
                let elem = self.vec_elem(*s)?;
                let v = self.pop()?;
                if v != ST::Vector(Box::new(elem.clone())) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
                for _ in 0..*n {
                    self.push(elem.clone())?;
                }
            }
            VecSwap(s) => {
                let elem = self.vec_elem(*s)?;
                let i2 = self.pop()?;
                let i1 = self.pop()?;
                let v = self.pop()?;
                if i1 != ST::U64 || i2 != ST::U64 || vec_ref_elem(&v, true) != Some(&elem) {
                    return Err(self.err(StatusCode::TYPE_MISMATCH));
                }
            }
            SuiPackVariant(h) | SuiUnpackVariant(h) | SuiUnpackVariantImmRef(h) | SuiUnpackVariantMutRef(h) => {
                let vh = &m.variant_handles[h.idx()];
                self.sui_variant(instr, vh.enum_def, vh.variant, &[])?
            }
            SuiPackVariantGeneric(h)
            | SuiUnpackVariantGeneric(h)
            | SuiUnpackVariantGenericImmRef(h)
            | SuiUnpackVariantGenericMutRef(h) => {
                let vh = &m.variant_instantiation_handles[h.idx()];
                let inst = &m.enum_def_instantiations[vh.enum_def.idx()];
                let args = self.sig(inst.type_parameters)?.to_vec();
                self.charge(&args)?;
                self.sui_variant(instr, inst.def, vh.variant, &args)?
            }
            VariantSwitch(j) => {
                // Operand: an immutable reference to the table's enum; the
                // table covers every variant (so the switch is exhaustive).
                let jt = &self.f.code.jump_tables[j.idx()];
                let edef = &m.enum_defs[jt.head_enum.idx()];
                let inner = match self.pop()? {
                    ST::Reference(inner) => inner,
                    _ => return Err(self.err(StatusCode::ENUM_SWITCH_BAD_OPERAND)),
                };
                if !matches!(*inner, ST::Struct(h) | ST::StructInstantiation(h, _) if h == edef.enum_handle) {
                    return Err(self.err(StatusCode::ENUM_TYPE_MISMATCH));
                }
                if jt.jump_table.len() != edef.variants.len() {
                    return Err(self.err(StatusCode::INVALID_ENUM_SWITCH));
                }
            }
        }
        Ok(())
    }

    fn borrow_field(
        &mut self,
        mut_: bool,
        def: StructDefinitionIndex,
        variants: Option<&[u16]>,
        field: u16,
        args: &[ST],
    ) -> VerifyResult {
        let operand = self.pop()?;
        if mut_ && !operand.is_mutable_reference() {
            return Err(self.err(StatusCode::BORROWFIELD_TYPE_MISMATCH_ERROR));
        }
        let sdef = &self.m.struct_defs[def.idx()];
        let expected = struct_type(sdef.struct_handle, args);
        match &operand {
            ST::Reference(inner) | ST::MutableReference(inner) if **inner == expected => {}
            _ => return Err(self.err(StatusCode::BORROWFIELD_TYPE_MISMATCH_ERROR)),
        }
        let field_ty = match variants {
            Some(vs) => {
                if vs.is_empty() {
                    return Err(self.err(StatusCode::ZERO_VARIANTS_ERROR));
                }
                let mut ty: Option<ST> = None;
                for v in vs {
                    let fd = struct_fields(sdef, Some(*v))
                        .and_then(|f| f.get(field as usize))
                        .ok_or_else(|| self.err(StatusCode::BORROWFIELD_BAD_FIELD_ERROR))?;
                    let t = instantiate(&fd.signature, args);
                    match &ty {
                        Some(prev) if *prev != t => return Err(self.err(StatusCode::BORROWFIELD_TYPE_MISMATCH_ERROR)),
                        Some(_) => {}
                        None => ty = Some(t),
                    }
                }
                ty
            }
            None => {
                struct_fields(sdef, None).and_then(|f| f.get(field as usize)).map(|fd| instantiate(&fd.signature, args))
            }
        };
        let field_ty = field_ty.ok_or_else(|| self.err(StatusCode::BORROWFIELD_BAD_FIELD_ERROR))?;
        self.push(if mut_ { ST::MutableReference(Box::new(field_ty)) } else { ST::Reference(Box::new(field_ty)) })
    }

    fn call(&mut self, h: FunctionHandleIndex, args: &[ST]) -> VerifyResult {
        let fh = &self.m.function_handles[h.idx()];
        let params = self.sig(fh.parameters)?.to_vec();
        let returns = self.sig(fh.return_)?.to_vec();
        for p in params.iter().rev() {
            let a = self.pop()?;
            if !is_assignable(&instantiate(p, args), &a) {
                return Err(self.err(StatusCode::CALL_TYPE_MISMATCH_ERROR));
            }
        }
        for r in &returns {
            self.push(instantiate(r, args))?;
        }
        Ok(())
    }

    fn pack_closure(&mut self, h: FunctionHandleIndex, args: &[ST], mask: ClosureMask) -> VerifyResult {
        let fh = &self.m.function_handles[h.idx()];
        let mut abs = if fh.attributes.contains(&FunctionAttribute::Persistent) {
            AbilitySet(AbilitySet::COPY | AbilitySet::DROP | AbilitySet::STORE)
        } else {
            AbilitySet(AbilitySet::COPY | AbilitySet::DROP)
        };
        let params = self.sig(fh.parameters)?.to_vec();
        let returns = self.sig(fh.return_)?.to_vec();
        let captured: Vec<&ST> =
            params.iter().enumerate().filter(|(i, _)| mask.is_captured(*i)).map(|(_, t)| t).collect();
        for ty in captured.into_iter().rev() {
            let a = self.pop()?;
            abs = abs.intersect(self.abilities(&a)?);
            if !is_assignable(&instantiate(ty, args), &a) || ty.is_reference() {
                return Err(self.err(StatusCode::PACK_TYPE_MISMATCH_ERROR));
            }
        }
        let rest: Vec<ST> =
            params.iter().enumerate().filter(|(i, _)| !mask.is_captured(*i)).map(|(_, t)| t.clone()).collect();
        self.push(instantiate(&ST::Function(rest, returns, abs), args))
    }

    fn fields(&self, def: StructDefinitionIndex, variant: Option<u16>, args: &[ST]) -> VerifyResult<Vec<ST>> {
        let sdef = &self.m.struct_defs[def.idx()];
        match struct_fields(sdef, variant) {
            Some(fs) => Ok(fs.iter().map(|f| instantiate(&f.signature, args)).collect()),
            None => Err(self.err(StatusCode::PACK_TYPE_MISMATCH_ERROR)),
        }
    }

    fn pack(&mut self, def: StructDefinitionIndex, variant: Option<u16>, args: &[ST]) -> VerifyResult {
        let ty = struct_type(self.m.struct_defs[def.idx()].struct_handle, args);
        let fields = self.fields(def, variant, args)?;
        for ft in fields.iter().rev() {
            let a = self.pop()?;
            if !is_assignable(ft, &a) {
                return Err(self.err(StatusCode::PACK_TYPE_MISMATCH_ERROR));
            }
        }
        self.push(ty)
    }

    fn unpack(&mut self, def: StructDefinitionIndex, variant: Option<u16>, args: &[ST]) -> VerifyResult {
        let ty = struct_type(self.m.struct_defs[def.idx()].struct_handle, args);
        if self.pop()? != ty {
            return Err(self.err(StatusCode::UNPACK_TYPE_MISMATCH_ERROR));
        }
        for ft in self.fields(def, variant, args)? {
            self.push(ft)?;
        }
        Ok(())
    }

    fn test_variant(&mut self, def: StructDefinitionIndex, args: &[ST]) -> VerifyResult {
        let ty = struct_type(self.m.struct_defs[def.idx()].struct_handle, args);
        match self.pop()? {
            ST::Reference(inner) | ST::MutableReference(inner) if *inner == ty => self.push(ST::Bool),
            _ => Err(self.err(StatusCode::TEST_VARIANT_TYPE_MISMATCH_ERROR)),
        }
    }

    fn key_struct(&self, def: StructDefinitionIndex, args: &[ST], status: StatusCode) -> VerifyResult<ST> {
        let ty = struct_type(self.m.struct_defs[def.idx()].struct_handle, args);
        if !self.abilities(&ty)?.has_key() {
            return Err(self.err(status));
        }
        Ok(ty)
    }

    fn borrow_global(&mut self, mut_: bool, def: StructDefinitionIndex, args: &[ST]) -> VerifyResult {
        if self.pop()? != ST::Address {
            return Err(self.err(StatusCode::BORROWGLOBAL_TYPE_MISMATCH_ERROR));
        }
        let ty = self.key_struct(def, args, StatusCode::BORROWGLOBAL_WITHOUT_KEY_ABILITY)?;
        self.push(if mut_ { ST::MutableReference(Box::new(ty)) } else { ST::Reference(Box::new(ty)) })
    }

    fn exists(&mut self, def: StructDefinitionIndex, args: &[ST]) -> VerifyResult {
        self.key_struct(def, args, StatusCode::EXISTS_WITHOUT_KEY_ABILITY_OR_BAD_ARGUMENT)?;
        if self.pop()? != ST::Address {
            return Err(self.err(StatusCode::EXISTS_WITHOUT_KEY_ABILITY_OR_BAD_ARGUMENT));
        }
        self.push(ST::Bool)
    }

    fn move_from(&mut self, def: StructDefinitionIndex, args: &[ST]) -> VerifyResult {
        let ty = self.key_struct(def, args, StatusCode::MOVEFROM_WITHOUT_KEY_ABILITY)?;
        if self.pop()? != ST::Address {
            return Err(self.err(StatusCode::MOVEFROM_TYPE_MISMATCH_ERROR));
        }
        self.push(ty)
    }

    fn move_to(&mut self, def: StructDefinitionIndex, args: &[ST]) -> VerifyResult {
        let ty = self.key_struct(def, args, StatusCode::MOVETO_WITHOUT_KEY_ABILITY)?;
        let value = self.pop()?;
        let signer = self.pop()?;
        if value != ty || signer != ST::Reference(Box::new(ST::Signer)) {
            return Err(self.err(StatusCode::MOVETO_TYPE_MISMATCH_ERROR));
        }
        Ok(())
    }

    /// Sui enum instructions: pack, unpack by value / by reference.
    fn sui_variant(
        &mut self,
        instr: &Bytecode,
        def: movejit_format::EnumDefinitionIndex,
        variant: u16,
        args: &[ST],
    ) -> VerifyResult {
        use Bytecode::*;
        let edef = &self.m.enum_defs[def.idx()];
        let ty = struct_type(edef.enum_handle, args);
        let fields: Vec<ST> = match edef.variants.get(variant as usize) {
            Some(v) => v.fields.iter().map(|f| instantiate(&f.signature, args)).collect(),
            None => return Err(self.err(StatusCode::INDEX_OUT_OF_BOUNDS)),
        };
        match instr {
            SuiPackVariant(_) | SuiPackVariantGeneric(_) => {
                for ft in fields.iter().rev() {
                    let a = self.pop()?;
                    if !is_assignable(ft, &a) {
                        return Err(self.err(StatusCode::PACK_TYPE_MISMATCH_ERROR));
                    }
                }
                self.push(ty)
            }
            SuiUnpackVariant(_) | SuiUnpackVariantGeneric(_) => {
                if self.pop()? != ty {
                    return Err(self.err(StatusCode::UNPACK_TYPE_MISMATCH_ERROR));
                }
                for ft in fields {
                    self.push(ft)?;
                }
                Ok(())
            }
            _ => {
                let mut_ = matches!(instr, SuiUnpackVariantMutRef(_) | SuiUnpackVariantGenericMutRef(_));
                let ok = match self.pop()? {
                    ST::MutableReference(inner) => mut_ && *inner == ty,
                    ST::Reference(inner) => !mut_ && *inner == ty,
                    _ => false,
                };
                if !ok {
                    return Err(self.err(StatusCode::UNPACK_TYPE_MISMATCH_ERROR));
                }
                for ft in fields {
                    self.push(if mut_ { ST::MutableReference(Box::new(ft)) } else { ST::Reference(Box::new(ft)) })?;
                }
                Ok(())
            }
        }
    }
}

/// The element type of a `&vector<T>` (or `&mut`, required when `mut_only`).
fn vec_ref_elem(t: &ST, mut_only: bool) -> Option<&ST> {
    match t {
        ST::Reference(inner) if !mut_only => match &**inner {
            ST::Vector(e) => Some(e),
            _ => None,
        },
        ST::MutableReference(inner) => match &**inner {
            ST::Vector(e) => Some(e),
            _ => None,
        },
        _ => None,
    }
}
