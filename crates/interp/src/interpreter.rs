//! The interpreter loop: one instruction at a time over explicit frames.
//!
//! Move calls never recurse on the host stack: a call pushes a [`Frame`] and
//! the loop continues in the callee; `Ret` pops it. Operands live on one
//! operand stack shared by all frames (as in the Move VM, so the stack limit
//! counts the same values); locals live in [`Memory`] so references can
//! point at them.

use crate::engine::Session;
use crate::loader::LoadedModule;
use movejit_format::{Bytecode, CodeUnit, SignatureToken};
use movejit_runtime::arith::{self, BinOp, CmpOp};
use movejit_runtime::error::vec_err;
use movejit_runtime::error::TrapResult;
use movejit_runtime::natives::{NativeContext, TypeInfo};
use movejit_runtime::values::values_equal;
use movejit_runtime::ScalarKind;
use movejit_runtime::{
    ClosureValue, ErrorLocation, FunctionId, GasMeter, Memory, RefRoot, Reference, StatusCode, Type, Value, VmError,
    VmResult,
};
use std::sync::Arc;

/// An active Move function.
struct Frame {
    module: Arc<LoadedModule>,
    def: u16,
    /// Where to continue (for frames below the top: the instruction after the call).
    pc: usize,
    /// Where this frame's locals start in the locals stack.
    base: usize,
    ty_args: Arc<Vec<Type>>,
}

pub(crate) struct Interpreter<'a, 'e, 'r> {
    s: &'a mut Session<'e, 'r>,
    gas: &'a mut GasMeter,
    mem: Memory,
    stack: Vec<Value>,
    frames: Vec<Frame>,
    max_stack: usize,
    max_depth: usize,
    /// The type arguments of non-generic functions, shared.
    no_ty_args: Arc<Vec<Type>>,
}

/// Mixed execution from the tree interpreter: never. The seam to compiled
/// code is over flat memory (`movejit_runtime::compiled`), so only the flat
/// interpreter offers calls to it (the `Jit` / `Auto` executors of
/// movejit-engine always run the flat interpreter); here every call is
/// interpreted (`None`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn call_compiled(
    _s: &mut Session<'_, '_>,
    _gas: &mut GasMeter,
    _m: &Arc<LoadedModule>,
    _def: u16,
    _ty_args: &[Type],
    _args: &[Value],
    _depth: u64,
    _stack_base: usize,
) -> TrapResult<Option<Vec<Value>>> {
    Ok(None)
}

fn invariant(m: &str) -> VmError {
    VmError::invariant(m)
}

impl<'a, 'e, 'r> Interpreter<'a, 'e, 'r> {
    pub(crate) fn new(s: &'a mut Session<'e, 'r>, gas: &'a mut GasMeter) -> Self {
        let limits = &s.engine.config.limits;
        let (max_stack, max_depth) = (limits.max_operand_stack, limits.max_call_depth);
        Interpreter {
            s,
            gas,
            mem: Memory::default(),
            stack: Vec::new(),
            frames: Vec::new(),
            max_stack,
            max_depth,
            no_ty_args: Arc::new(Vec::new()),
        }
    }

    /// Runs `def` of `m` with `args` (already deserialized; `&`/`&mut`
    /// parameters are passed by reference to a root frame holding the
    /// values). Returns the return values and the memory (root frame and
    /// globals) so the caller can serialize results.
    pub(crate) fn run_entry(
        &mut self,
        m: Arc<LoadedModule>,
        def: u16,
        ty_args: Vec<Type>,
        params: &[Type],
        args: Vec<Value>,
    ) -> VmResult<(Vec<Value>, Memory)> {
        let saved_meta: Vec<_> = self.s.globals.meta.iter().map(|g| (g.existed, g.dirty)).collect();
        let saved_values = self.s.globals.values.clone();
        self.mem.globals = std::mem::take(&mut self.s.globals.values);
        let mut call_args = Vec::with_capacity(args.len());
        for (i, t) in params.iter().enumerate() {
            call_args.push(if matches!(t, Type::Reference(_) | Type::MutableReference(_)) {
                Value::Ref(Reference::new(RefRoot::Local(i as u32)))
            } else {
                Value::Invalid
            });
        }
        let mut root = args;
        for (i, a) in call_args.iter_mut().enumerate() {
            if matches!(a, Value::Invalid) {
                *a = std::mem::take(&mut root[i]);
            }
        }
        self.mem.locals = root;
        let result = self.call(m, def, Arc::new(ty_args), call_args).and_then(|()| self.run());
        match result {
            Ok(()) => {
                let rets = std::mem::take(&mut self.stack);
                Ok((rets, std::mem::take(&mut self.mem)))
            }
            Err(e) => {
                // A failed call changes nothing.
                self.s.globals.values = saved_values;
                self.s.globals.meta.truncate(saved_meta.len());
                for (g, (existed, dirty)) in self.s.globals.meta.iter_mut().zip(saved_meta) {
                    g.existed = existed;
                    g.dirty = dirty;
                }
                let n = self.s.globals.meta.len();
                self.s.globals.values.resize(n, None);
                self.s.globals.index.retain(|_, slot| (*slot as usize) < n);
                Err(*e)
            }
        }
    }

    #[inline(always)]
    fn push(&mut self, v: Value) -> TrapResult<()> {
        if self.stack.len() >= self.max_stack {
            return Err(Box::new(VmError::new(StatusCode::EXECUTION_STACK_OVERFLOW)));
        }
        self.stack.push(v);
        Ok(())
    }

    #[inline(always)]
    fn pop(&mut self) -> TrapResult<Value> {
        self.stack.pop().ok_or_else(|| Box::new(VmError::new(StatusCode::EMPTY_VALUE_STACK)))
    }

    fn pop_n(&mut self, n: usize) -> TrapResult<Vec<Value>> {
        if n > self.stack.len() {
            return Err(Box::new(VmError::new(StatusCode::EMPTY_VALUE_STACK)));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    #[inline]
    fn pop_ref(&mut self) -> TrapResult<Reference> {
        self.pop()?.into_ref()
    }

    #[inline]
    fn pop_u64(&mut self) -> TrapResult<u64> {
        self.pop()?.as_u64()
    }

    /// Calls a function with the top `n` operand-stack values as arguments.
    fn call_from_stack(&mut self, m: Arc<LoadedModule>, def: u16, ty_args: Arc<Vec<Type>>, n: usize) -> TrapResult<()> {
        if n > self.stack.len() {
            return Err(Box::new(VmError::new(StatusCode::EMPTY_VALUE_STACK)));
        }
        let info = *m.fn_info.get(def as usize).ok_or_else(|| invariant("function definition"))?;
        if info.is_native {
            let args = self.pop_n(n)?;
            return self.call(m, def, ty_args, args);
        }
        if self.frames.len() >= self.max_depth {
            return Err(Box::new(VmError::new(StatusCode::CALL_STACK_OVERFLOW)));
        }
        self.gas.charge_frame()?;
        let from = self.stack.len() - n;
        if self.s.compiled.is_some() {
            let depth = self.frames.len() as u64 + 1;
            let r = call_compiled(self.s, self.gas, &m, def, &ty_args, &self.stack[from..], depth, from);
            if let Some(values) = r? {
                self.stack.truncate(from);
                for v in values {
                    self.push(v)?;
                }
                return Ok(());
            }
        }
        let base = self.mem.locals.len();
        self.mem.locals.extend(self.stack.drain(from..));
        self.mem.locals.resize(base + n + info.locals, Value::Invalid);
        self.frames.push(Frame { module: m, def, pc: 0, base, ty_args });
        Ok(())
    }

    /// Calls a function: natives run at once, Move functions get a frame.
    fn call(&mut self, m: Arc<LoadedModule>, def: u16, ty_args: Arc<Vec<Type>>, args: Vec<Value>) -> TrapResult<()> {
        let fdef = m.module.function_defs.get(def as usize).ok_or_else(|| invariant("function definition"))?;
        let Some(code) = &fdef.code else {
            let native = m
                .natives
                .get(def as usize)
                .cloned()
                .flatten()
                .ok_or_else(|| VmError::missing_native(&m.id, &m.function_name(def)))?;
            self.gas.charge_native(0)?;
            let results = {
                let mut cx = NativeContext { mem: &mut self.mem, gas: self.gas, types: &*self.s };
                native(&mut cx, &ty_args, args)?
            };
            // What the native allocated for its results.
            tree_charge(results.iter().map(heap_slots).sum())?;
            for r in results {
                self.push(r)?;
            }
            return Ok(());
        };
        if self.frames.len() >= self.max_depth {
            return Err(Box::new(VmError::new(StatusCode::CALL_STACK_OVERFLOW)));
        }
        self.gas.charge_frame()?;
        if self.s.compiled.is_some() {
            let depth = self.frames.len() as u64 + 1;
            let r = call_compiled(self.s, self.gas, &m, def, &ty_args, &args, depth, self.stack.len());
            if let Some(values) = r? {
                for v in values {
                    self.push(v)?;
                }
                return Ok(());
            }
        }
        let nlocals = m.module.signatures.get(code.locals.idx()).map(|s| s.0.len()).unwrap_or(0);
        let base = self.mem.locals.len();
        let n = args.len();
        self.mem.locals.extend(args);
        self.mem.locals.resize(base + n + nlocals, Value::Invalid);
        self.frames.push(Frame { module: m, def, pc: 0, base, ty_args });
        Ok(())
    }

    fn run(&mut self) -> TrapResult<()> {
        while let Some(frame) = self.frames.last() {
            let m = frame.module.clone();
            let def = frame.def;
            let ty_args = frame.ty_args.clone();
            let mut pc = frame.pc;
            let code = m
                .module
                .function_defs
                .get(def as usize)
                .and_then(|f| f.code.as_ref())
                .ok_or_else(|| invariant("no code"))?;
            if let Err(mut e) = self.exec_block(&m, code, &ty_args, &mut pc) {
                if e.location.is_none() {
                    e.location = Some(ErrorLocation {
                        module: m.id.long_string(),
                        function_name: m.function_name(def),
                        function_index: def,
                        code_offset: pc as u16,
                    });
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Resolves a call through a function handle of `m`.
    fn resolve_handle(
        &mut self,
        m: &Arc<LoadedModule>,
        fh: movejit_format::FunctionHandleIndex,
    ) -> TrapResult<(Arc<LoadedModule>, u16)> {
        let key = (Arc::as_ptr(m) as usize, fh.0);
        if let Some(t) = self.s.call_cache.get(&key) {
            return Ok(t.clone());
        }
        let (module, name) = movejit_runtime::resolve::function_target(&m.module, fh)?;
        let target = self.s.resolve_function(&module, name)?;
        self.s.call_cache.insert(key, target.clone());
        Ok(target)
    }

    /// The callee's type arguments for generic call `fi` of `m` from a frame
    /// with `ty_args`, computed once per (instantiation, caller type arguments).
    fn cached_inst(
        &mut self,
        m: &Arc<LoadedModule>,
        fi: u16,
        sig: movejit_format::SignatureIndex,
        ty_args: &Arc<Vec<Type>>,
    ) -> TrapResult<Arc<Vec<Type>>> {
        let key = (Arc::as_ptr(m) as usize, fi, Arc::as_ptr(ty_args) as usize);
        if let Some((_, t)) = self.s.inst_cache.get(&key) {
            return Ok(t.clone());
        }
        let t = Arc::new(self.inst_types(m, sig, ty_args)?);
        self.s.inst_cache.insert(key, (ty_args.clone(), t.clone()));
        Ok(t)
    }

    fn inst_types(
        &self,
        m: &LoadedModule,
        sig: movejit_format::SignatureIndex,
        ty_args: &[Type],
    ) -> TrapResult<Vec<Type>> {
        let tys = m.sig_types(sig, ty_args)?;
        for t in &tys {
            if t.depth() > self.s.engine.config.limits.max_type_depth {
                return Err(Box::new(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED)));
            }
        }
        Ok(tys)
    }

    fn struct_type(
        &self,
        m: &LoadedModule,
        sd: movejit_format::StructDefinitionIndex,
        args: Vec<Type>,
    ) -> TrapResult<Type> {
        let d = m.module.struct_defs.get(sd.idx()).ok_or_else(|| invariant("struct def"))?;
        Ok(Type::Datatype(m.datatype_id(d.struct_handle)?, args))
    }

    fn generic_struct_type(
        &self,
        m: &LoadedModule,
        i: movejit_format::StructDefInstantiationIndex,
        ty_args: &[Type],
    ) -> TrapResult<(usize, Type)> {
        let inst = m.module.struct_def_instantiations.get(i.idx()).ok_or_else(|| invariant("struct inst"))?;
        let args = self.inst_types(m, inst.type_parameters, ty_args)?;
        Ok((inst.def.idx(), self.struct_type(m, inst.def, args)?))
    }

    fn signer_address(&self, v: &Value) -> TrapResult<movejit_runtime::AccountAddress> {
        self.mem.deref(v)?.as_address()
    }

    fn move_to(&mut self, ty: Type) -> TrapResult<()> {
        let value = self.pop()?;
        let signer = self.pop()?;
        let addr = self.signer_address(&signer)?;
        let slot = self.s.global_slot(addr, &ty, &mut self.mem.globals)? as usize;
        if self.mem.globals[slot].is_some() {
            return Err(Box::new(VmError::resource_exists(&addr)));
        }
        self.mem.globals[slot] = Some(value);
        self.s.globals.meta[slot].dirty = true;
        Ok(())
    }

    fn move_from(&mut self, ty: Type) -> TrapResult<()> {
        let addr = self.pop()?.as_address()?;
        let slot = self.s.global_slot(addr, &ty, &mut self.mem.globals)? as usize;
        let v = self.mem.globals[slot].take().ok_or_else(|| VmError::missing_resource(&addr, true))?;
        self.s.globals.meta[slot].dirty = true;
        self.push(v)
    }

    fn borrow_global(&mut self, ty: Type, mutable: bool) -> TrapResult<()> {
        let addr = self.pop()?.as_address()?;
        let slot = self.s.global_slot(addr, &ty, &mut self.mem.globals)?;
        if self.mem.globals[slot as usize].is_none() {
            return Err(Box::new(VmError::missing_resource(&addr, false)));
        }
        if mutable {
            self.s.globals.meta[slot as usize].dirty = true;
        }
        self.push(Value::Ref(Reference::new(RefRoot::Global(slot))))
    }

    fn exists(&mut self, ty: Type) -> TrapResult<()> {
        let addr = self.pop()?.as_address()?;
        let slot = self.s.global_slot(addr, &ty, &mut self.mem.globals)?;
        let e = self.mem.globals[slot as usize].is_some();
        self.push(Value::Bool(e))
    }

    fn pack_closure(&mut self, target: (Arc<LoadedModule>, u16), ty_args: Vec<Type>, mask: u64) -> TrapResult<()> {
        let (tm, tdef) = target;
        let fh = tm
            .module
            .function_defs
            .get(tdef as usize)
            .and_then(|f| tm.module.function_handles.get(f.function.idx()))
            .ok_or_else(|| invariant("closure target"))?;
        let params = tm.sig_types(fh.parameters, &ty_args)?;
        let captured = self.pop_n(mask.count_ones() as usize)?;
        let mut captured_layouts = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if i < 64 && (mask >> i) & 1 == 1 {
                captured_layouts.push(self.s.layout_of(p).unwrap_or(movejit_runtime::Layout::Function));
            }
        }
        let c = ClosureValue {
            function: FunctionId { module: tm.id.clone(), name: tm.function_name(tdef).into() },
            type_args: ty_args,
            mask,
            captured,
            captured_layouts,
            serializable: tm.is_persistent(tdef),
        };
        self.push(Value::Closure(Box::new(c)))
    }

    /// Executes the top frame until it calls a Move function or returns.
    fn exec_block(
        &mut self,
        m: &Arc<LoadedModule>,
        unit: &CodeUnit,
        ty_args: &Arc<Vec<Type>>,
        pc: &mut usize,
    ) -> TrapResult<()> {
        use Bytecode as B;
        let code = &unit.code;
        let base = self.frames.last().map(|f| f.base).ok_or_else(|| invariant("no frame"))?;
        let metered = self.gas.is_metered();
        loop {
            let instr = code.get(*pc).ok_or_else(|| VmError::new(StatusCode::PC_OVERFLOW))?;
            if metered {
                self.gas.charge_instr(instr.opcode())?;
            }
            match instr {
                B::Pop => {
                    self.pop()?.discard();
                }
                B::Ret => {
                    for v in self.mem.locals.drain(base..) {
                        v.discard();
                    }
                    self.frames.pop();
                    return Ok(());
                }
                B::BrTrue(t) => {
                    let c = self.pop()?;
                    let c = c.as_bool()?;
                    if c {
                        *pc = *t as usize;
                        continue;
                    }
                }
                B::BrFalse(t) => {
                    let c = self.pop()?;
                    let c = c.as_bool()?;
                    if !c {
                        *pc = *t as usize;
                        continue;
                    }
                }
                B::Branch(t) => {
                    *pc = *t as usize;
                    continue;
                }
                B::LdU8(v) => self.push(Value::U8(*v))?,
                B::LdU16(v) => self.push(Value::U16(*v))?,
                B::LdU32(v) => self.push(Value::U32(*v))?,
                B::LdU64(v) => self.push(Value::U64(*v))?,
                B::LdU128(v) => self.push(Value::U128(*v))?,
                B::LdU256(v) => self.push(Value::U256(*v))?,
                B::LdI8(v) => self.push(Value::I8(*v))?,
                B::LdI16(v) => self.push(Value::I16(*v))?,
                B::LdI32(v) => self.push(Value::I32(*v))?,
                B::LdI64(v) => self.push(Value::I64(*v))?,
                B::LdI128(v) => self.push(Value::I128(*v))?,
                B::LdI256(v) => self.push(Value::I256(*v))?,
                B::LdTrue => self.push(Value::Bool(true))?,
                B::LdFalse => self.push(Value::Bool(false))?,
                B::LdConst(i) => {
                    let c = m.module.constant_pool.get(i.idx()).ok_or_else(|| invariant("constant"))?;
                    let t = m.to_type(&c.type_, &[])?;
                    let l = self.s.layout_of(&t)?;
                    let v = movejit_runtime::bcs::deserialize(&c.data, &l).map_err(|_| {
                        VmError::new(StatusCode::VERIFIER_INVARIANT_VIOLATION).with_message("bad constant")
                    })?;
                    self.push(v)?;
                }
                B::CopyLoc(i) => {
                    let l = self.local(base, *i)?;
                    tree_charge(heap_slots(l))?;
                    let v = l.copy_value();
                    if matches!(v, Value::Invalid) {
                        return Err(Box::new(invariant("copy of an unavailable local")));
                    }
                    self.push(v)?;
                }
                B::MoveLoc(i) => {
                    let v = std::mem::take(self.local_mut(base, *i)?);
                    if matches!(v, Value::Invalid) {
                        return Err(Box::new(invariant("move of an unavailable local")));
                    }
                    self.push(v)?;
                }
                B::StLoc(i) => {
                    let v = self.pop()?;
                    std::mem::replace(self.local_mut(base, *i)?, v).discard();
                }
                B::MutBorrowLoc(i) | B::ImmBorrowLoc(i) => {
                    self.push(Value::Ref(Reference::new(RefRoot::Local((base + *i as usize) as u32))))?;
                }
                B::MutBorrowField(fh) | B::ImmBorrowField(fh) => {
                    let h = m.module.field_handles.get(fh.idx()).ok_or_else(|| invariant("field handle"))?;
                    self.borrow_child_in_place(h.field as u32)?;
                }
                B::MutBorrowFieldGeneric(fi) | B::ImmBorrowFieldGeneric(fi) => {
                    let inst = m.module.field_instantiations.get(fi.idx()).ok_or_else(|| invariant("field inst"))?;
                    let h = m.module.field_handles.get(inst.handle.idx()).ok_or_else(|| invariant("field handle"))?;
                    self.borrow_child_in_place(h.field as u32)?;
                }
                B::ImmBorrowVariantField(h) | B::MutBorrowVariantField(h) => {
                    let vh = m.module.variant_field_handles.get(h.idx()).ok_or_else(|| invariant("variant field"))?;
                    self.borrow_variant_field(&vh.variants, vh.field)?;
                }
                B::ImmBorrowVariantFieldGeneric(i) | B::MutBorrowVariantFieldGeneric(i) => {
                    let inst =
                        m.module.variant_field_instantiations.get(i.idx()).ok_or_else(|| invariant("variant field"))?;
                    let vh = m
                        .module
                        .variant_field_handles
                        .get(inst.handle.idx())
                        .ok_or_else(|| invariant("variant field"))?;
                    self.borrow_variant_field(&vh.variants, vh.field)?;
                }
                B::Call(fh) => {
                    let (tm, tdef) = self.resolve_handle(m, *fh)?;
                    let n = self.param_count(&tm, tdef)?;
                    let no_ty_args = self.no_ty_args.clone();
                    if self.is_native(&tm, tdef) {
                        self.call_from_stack(tm, tdef, no_ty_args, n)?;
                    } else {
                        self.frames.last_mut().ok_or_else(|| invariant("frame"))?.pc = *pc + 1;
                        self.call_from_stack(tm, tdef, no_ty_args, n)?;
                        return Ok(());
                    }
                }
                B::CallGeneric(fi) => {
                    let inst = m.module.function_instantiations.get(fi.idx()).ok_or_else(|| invariant("fn inst"))?;
                    let targs = self.cached_inst(m, fi.0, inst.type_parameters, ty_args)?;
                    let (tm, tdef) = self.resolve_handle(m, inst.handle)?;
                    let n = self.param_count(&tm, tdef)?;
                    if self.is_native(&tm, tdef) {
                        self.call_from_stack(tm, tdef, targs, n)?;
                    } else {
                        self.frames.last_mut().ok_or_else(|| invariant("frame"))?.pc = *pc + 1;
                        self.call_from_stack(tm, tdef, targs, n)?;
                        return Ok(());
                    }
                }
                B::Pack(sd) => {
                    self.check_struct_depth(m, *sd)?;
                    let n = m.struct_field_count(sd.idx())?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Struct(fields))?;
                }
                B::PackGeneric(si) => {
                    let key = (Arc::as_ptr(m) as usize, si.0 as u32, Arc::as_ptr(ty_args) as usize);
                    if !self.s.depth_checked.contains_key(&key) {
                        let (_, t) = self.generic_struct_type(m, *si, ty_args)?;
                        self.check_depth(&t)?;
                        self.s.depth_checked.insert(key, ty_args.clone());
                    }
                    let inst =
                        m.module.struct_def_instantiations.get(si.idx()).ok_or_else(|| invariant("struct inst"))?;
                    let n = m.struct_field_count(inst.def.idx())?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Struct(fields))?;
                }
                B::Unpack(_) | B::UnpackGeneric(_) => {
                    let fields = self.pop()?.into_fields()?;
                    for f in fields {
                        self.push(f)?;
                    }
                }
                B::PackVariant(h) => {
                    let vh = m.module.struct_variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    let n = m.variant_field_count(vh.struct_index.idx(), vh.variant)?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Variant(vh.variant, fields))?;
                }
                B::PackVariantGeneric(i) => {
                    let inst =
                        m.module.struct_variant_instantiations.get(i.idx()).ok_or_else(|| invariant("variant inst"))?;
                    let vh = m
                        .module
                        .struct_variant_handles
                        .get(inst.handle.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    let n = m.variant_field_count(vh.struct_index.idx(), vh.variant)?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Variant(vh.variant, fields))?;
                }
                B::UnpackVariant(h) => {
                    let vh = m.module.struct_variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant(vh.variant, StatusCode::STRUCT_VARIANT_MISMATCH)?;
                }
                B::UnpackVariantGeneric(i) => {
                    let inst =
                        m.module.struct_variant_instantiations.get(i.idx()).ok_or_else(|| invariant("variant inst"))?;
                    let vh = m
                        .module
                        .struct_variant_handles
                        .get(inst.handle.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant(vh.variant, StatusCode::STRUCT_VARIANT_MISMATCH)?;
                }
                B::TestVariant(h) => {
                    let vh = m.module.struct_variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    self.test_variant(vh.variant)?;
                }
                B::TestVariantGeneric(i) => {
                    let inst =
                        m.module.struct_variant_instantiations.get(i.idx()).ok_or_else(|| invariant("variant inst"))?;
                    let vh = m
                        .module
                        .struct_variant_handles
                        .get(inst.handle.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    self.test_variant(vh.variant)?;
                }
                B::SuiPackVariant(h) => {
                    let vh = m.module.variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    let n = m.sui_variant_field_count(vh.enum_def.idx(), vh.variant)?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Variant(vh.variant, fields))?;
                }
                B::SuiPackVariantGeneric(h) => {
                    let vh = m
                        .module
                        .variant_instantiation_handles
                        .get(h.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    let inst = m
                        .module
                        .enum_def_instantiations
                        .get(vh.enum_def.idx())
                        .ok_or_else(|| invariant("enum inst"))?;
                    let n = m.sui_variant_field_count(inst.def.idx(), vh.variant)?;
                    let fields = self.pop_n(n)?;
                    self.push(Value::Variant(vh.variant, fields))?;
                }
                B::SuiUnpackVariant(h) => {
                    let vh = m.module.variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant(vh.variant, StatusCode::VARIANT_TAG_MISMATCH)?;
                }
                B::SuiUnpackVariantGeneric(h) => {
                    let vh = m
                        .module
                        .variant_instantiation_handles
                        .get(h.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant(vh.variant, StatusCode::VARIANT_TAG_MISMATCH)?;
                }
                B::SuiUnpackVariantImmRef(h) | B::SuiUnpackVariantMutRef(h) => {
                    let vh = m.module.variant_handles.get(h.idx()).ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant_ref(vh.variant)?;
                }
                B::SuiUnpackVariantGenericImmRef(h) | B::SuiUnpackVariantGenericMutRef(h) => {
                    let vh = m
                        .module
                        .variant_instantiation_handles
                        .get(h.idx())
                        .ok_or_else(|| invariant("variant handle"))?;
                    self.unpack_variant_ref(vh.variant)?;
                }
                B::VariantSwitch(jt) => {
                    let r = self.pop_ref()?;
                    let tag = match self.mem.get(&r)? {
                        Value::Variant(t, _) => *t,
                        _ => return Err(Box::new(invariant("variant switch on a non-enum"))),
                    };
                    let table = unit.jump_tables.get(jt.idx()).ok_or_else(|| invariant("jump table"))?;
                    let target = table.jump_table.get(tag as usize).ok_or_else(|| invariant("jump table entry"))?;
                    *pc = *target as usize;
                    continue;
                }
                B::ReadRef => {
                    let r = self.pop_ref()?;
                    let t = self.mem.get(&r)?;
                    tree_charge(heap_slots(t))?;
                    let v = t.copy_value();
                    self.push(v)?;
                }
                B::WriteRef => {
                    let r = self.pop_ref()?;
                    let v = self.pop()?;
                    *self.mem.get_mut(&r)? = v;
                }
                B::FreezeRef | B::Nop => {}
                B::Add => self.binop(BinOp::Add)?,
                B::Sub => self.binop(BinOp::Sub)?,
                B::Mul => self.binop(BinOp::Mul)?,
                B::Mod => self.binop(BinOp::Mod)?,
                B::Div => self.binop(BinOp::Div)?,
                B::BitOr => self.binop(BinOp::BitOr)?,
                B::BitAnd => self.binop(BinOp::BitAnd)?,
                B::Xor => self.binop(BinOp::Xor)?,
                B::Or => {
                    let b = self.pop()?.as_bool()?;
                    let a = self.pop()?.as_bool()?;
                    self.push(Value::Bool(a || b))?;
                }
                B::And => {
                    let b = self.pop()?.as_bool()?;
                    let a = self.pop()?.as_bool()?;
                    self.push(Value::Bool(a && b))?;
                }
                B::Not => {
                    let a = self.pop()?.as_bool()?;
                    self.push(Value::Bool(!a))?;
                }
                B::Eq | B::Neq => {
                    let b = self.pop()?;
                    let a = self.pop()?;
                    let eq = values_equal(&self.mem, &a, &b)?;
                    self.push(Value::Bool(if matches!(instr, B::Eq) { eq } else { !eq }))?;
                }
                B::Lt => self.cmp(CmpOp::Lt)?,
                B::Gt => self.cmp(CmpOp::Gt)?,
                B::Le => self.cmp(CmpOp::Le)?,
                B::Ge => self.cmp(CmpOp::Ge)?,
                B::Shl | B::Shr => {
                    let n = self.pop()?;
                    let a = self.pop()?;
                    let r = arith::shift(matches!(instr, B::Shl), a, n)?;
                    self.push(r)?;
                }
                B::CastU8
                | B::CastU16
                | B::CastU32
                | B::CastU64
                | B::CastU128
                | B::CastU256
                | B::CastI8
                | B::CastI16
                | B::CastI32
                | B::CastI64
                | B::CastI128
                | B::CastI256 => {
                    let to = ScalarKind::cast_target(instr).ok_or_else(|| invariant("cast target"))?;
                    self.cast(to)?
                }
                B::Negate => {
                    let a = self.pop()?;
                    let r = arith::negate(a)?;
                    self.push(r)?;
                }
                B::Abort => {
                    let code = self.pop_u64()?;
                    return Err(Box::new(VmError::abort(code)));
                }
                B::AbortMsg => {
                    let msg = self.pop()?.to_bytes()?;
                    self.gas.charge_bytes(msg.len())?;
                    let code = self.pop_u64()?;
                    return Err(Box::new(VmError::abort_with_message(
                        code,
                        msg,
                        self.s.engine.config.limits.max_abort_message,
                    )));
                }
                B::Exists(sd) => {
                    let t = self.struct_type(m, *sd, Vec::new())?;
                    self.exists(t)?;
                }
                B::ExistsGeneric(si) => {
                    let (_, t) = self.generic_struct_type(m, *si, ty_args)?;
                    self.exists(t)?;
                }
                B::MutBorrowGlobal(sd) | B::ImmBorrowGlobal(sd) => {
                    let t = self.struct_type(m, *sd, Vec::new())?;
                    self.borrow_global(t, matches!(instr, B::MutBorrowGlobal(_)))?;
                }
                B::MutBorrowGlobalGeneric(si) | B::ImmBorrowGlobalGeneric(si) => {
                    let (_, t) = self.generic_struct_type(m, *si, ty_args)?;
                    self.borrow_global(t, matches!(instr, B::MutBorrowGlobalGeneric(_)))?;
                }
                B::MoveFrom(sd) => {
                    let t = self.struct_type(m, *sd, Vec::new())?;
                    self.move_from(t)?;
                }
                B::MoveFromGeneric(si) => {
                    let (_, t) = self.generic_struct_type(m, *si, ty_args)?;
                    self.move_from(t)?;
                }
                B::MoveTo(sd) => {
                    let t = self.struct_type(m, *sd, Vec::new())?;
                    self.move_to(t)?;
                }
                B::MoveToGeneric(si) => {
                    let (_, t) = self.generic_struct_type(m, *si, ty_args)?;
                    self.move_to(t)?;
                }
                B::VecPack(sig, n) => {
                    let key = (Arc::as_ptr(m) as usize, 0x1_0000 | sig.0 as u32, Arc::as_ptr(ty_args) as usize);
                    if !self.s.depth_checked.contains_key(&key) {
                        let et = self.inst_types(m, *sig, ty_args)?;
                        if let Some(et) = et.into_iter().next() {
                            self.check_depth(&Type::Vector(Box::new(et)))?;
                        }
                        self.s.depth_checked.insert(key, ty_args.clone());
                    }
                    let n = usize::try_from(*n).map_err(|_| invariant("vec_pack size"))?;
                    if n as u64 > self.s.engine.config.limits.max_vector_len {
                        return Err(Box::new(VmError::vector(vec_err::VEC_SIZE_LIMIT_REACHED)));
                    }
                    tree_charge(n)?;
                    let elems = self.pop_n(n)?;
                    self.push(Value::Vector(elems))?;
                }
                B::VecLen(_) => {
                    let r = self.pop_ref()?;
                    let n = match self.mem.get(&r)? {
                        Value::Vector(v) => v.len(),
                        _ => return Err(Box::new(invariant("vec_len of a non-vector"))),
                    };
                    self.push(Value::U64(n as u64))?;
                }
                B::VecImmBorrow(_) | B::VecMutBorrow(_) => {
                    let i = self.pop_u64()?;
                    let n = match self.stack.last() {
                        Some(Value::Ref(r)) => match self.mem.get(r)? {
                            Value::Vector(v) => v.len(),
                            _ => return Err(Box::new(invariant("vec_borrow of a non-vector"))),
                        },
                        _ => return Err(Box::new(invariant("vec_borrow of a non-reference"))),
                    };
                    if i >= n as u64 {
                        return Err(Box::new(VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS)));
                    }
                    self.borrow_child_in_place(i as u32)?;
                }
                B::VecPushBack(_) => {
                    let e = self.pop()?;
                    let r = self.pop_ref()?;
                    let max = self.s.engine.config.limits.max_vector_len;
                    match self.mem.get_mut(&r)? {
                        Value::Vector(v) => {
                            if v.len() as u64 >= max {
                                return Err(Box::new(VmError::vector(vec_err::VEC_SIZE_LIMIT_REACHED)));
                            }
                            if v.len() == v.capacity() {
                                let more = v.capacity().max(4);
                                tree_charge(more)?;
                                v.try_reserve(more).map_err(|_| movejit_runtime::memory::exceeded())?;
                            }
                            v.push(e);
                        }
                        _ => return Err(Box::new(invariant("push_back on a non-vector"))),
                    }
                }
                B::VecPopBack(_) => {
                    let r = self.pop_ref()?;
                    let e = match self.mem.get_mut(&r)? {
                        Value::Vector(v) => v.pop(),
                        _ => return Err(Box::new(invariant("pop_back on a non-vector"))),
                    };
                    let e = e.ok_or_else(|| VmError::vector(vec_err::POP_EMPTY_VEC))?;
                    self.push(e)?;
                }
                B::VecUnpack(_, n) => {
                    let v = self.pop()?.into_vec()?;
                    if v.len() as u64 != *n {
                        return Err(Box::new(VmError::vector(vec_err::VEC_UNPACK_PARITY_MISMATCH)));
                    }
                    for e in v {
                        self.push(e)?;
                    }
                }
                B::VecSwap(_) => {
                    let j = self.pop_u64()?;
                    let i = self.pop_u64()?;
                    let r = self.pop_ref()?;
                    match self.mem.get_mut(&r)? {
                        Value::Vector(v) => {
                            if i >= v.len() as u64 || j >= v.len() as u64 {
                                return Err(Box::new(VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS)));
                            }
                            v.swap(i as usize, j as usize);
                        }
                        _ => return Err(Box::new(invariant("swap on a non-vector"))),
                    }
                }
                B::PackClosure(fh, mask) => {
                    let target = self.resolve_handle(m, *fh)?;
                    self.pack_closure(target, Vec::new(), mask.0)?;
                }
                B::PackClosureGeneric(fi, mask) => {
                    let inst = m.module.function_instantiations.get(fi.idx()).ok_or_else(|| invariant("fn inst"))?;
                    let targs = self.inst_types(m, inst.type_parameters, ty_args)?;
                    let target = self.resolve_handle(m, inst.handle)?;
                    self.pack_closure(target, targs, mask.0)?;
                }
                B::CallClosure(sig) => {
                    let nparams = match m.module.signatures.get(sig.idx()).and_then(|s| s.0.first()) {
                        Some(SignatureToken::Function(p, _, _)) => p.len(),
                        _ => return Err(Box::new(invariant("call_closure signature"))),
                    };
                    let c = match self.pop()? {
                        Value::Closure(c) => c,
                        v => return Err(Box::new(invariant(&format!("call_closure on {v:?}")))),
                    };
                    let provided = self.pop_n(nparams)?;
                    let total = nparams + c.captured.len();
                    let mut captured = c.captured.into_iter();
                    let mut provided = provided.into_iter();
                    let mut args = Vec::with_capacity(total);
                    for i in 0..total {
                        let next = if i < 64 && (c.mask >> i) & 1 == 1 { captured.next() } else { provided.next() };
                        args.push(next.ok_or_else(|| invariant("closure mask does not fit the arguments"))?);
                    }
                    let (tm, tdef) = self.s.resolve_function(&c.function.module, &c.function.name)?;
                    if self.is_native(&tm, tdef) {
                        self.call(tm, tdef, Arc::new(c.type_args), args)?;
                    } else {
                        self.frames.last_mut().ok_or_else(|| invariant("frame"))?.pc = *pc + 1;
                        self.call(tm, tdef, Arc::new(c.type_args), args)?;
                        return Ok(());
                    }
                }
            }
            *pc += 1;
        }
    }

    /// `VM_MAX_VALUE_DEPTH_REACHED` when values of `t` would nest too deep.
    fn check_depth(&mut self, t: &Type) -> TrapResult<()> {
        if self.s.type_value_depth(t)? > self.s.engine.config.limits.max_value_depth {
            return Err(Box::new(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED)));
        }
        Ok(())
    }

    fn check_struct_depth(
        &mut self,
        m: &Arc<LoadedModule>,
        sd: movejit_format::StructDefinitionIndex,
    ) -> TrapResult<()> {
        let key = (Arc::as_ptr(m) as usize, sd.0);
        let d = match self.s.struct_depth_cache.get(&key) {
            Some(d) => *d,
            None => {
                let t = self.struct_type(m, sd, Vec::new())?;
                let d = self.s.type_value_depth(&t)?;
                self.s.struct_depth_cache.insert(key, d);
                d
            }
        };
        if d > self.s.engine.config.limits.max_value_depth {
            return Err(Box::new(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED)));
        }
        Ok(())
    }

    #[inline]
    fn local(&self, base: usize, i: u8) -> TrapResult<&Value> {
        self.mem.locals.get(base + i as usize).ok_or_else(|| Box::new(invariant("local index")))
    }
    #[inline]
    fn local_mut(&mut self, base: usize, i: u8) -> TrapResult<&mut Value> {
        self.mem.locals.get_mut(base + i as usize).ok_or_else(|| Box::new(invariant("local index")))
    }

    /// Turns the reference on top of the stack into a reference to its child.
    #[inline]
    fn borrow_child_in_place(&mut self, idx: u32) -> TrapResult<()> {
        match self.stack.last_mut() {
            Some(Value::Ref(r)) => {
                r.path.push(idx);
                Ok(())
            }
            _ => Err(Box::new(invariant("field borrow of a non-reference"))),
        }
    }

    #[inline]
    fn param_count(&self, m: &LoadedModule, def: u16) -> TrapResult<usize> {
        m.fn_info.get(def as usize).map(|f| f.params).ok_or_else(|| Box::new(invariant("function def")))
    }

    #[inline]
    fn is_native(&self, m: &LoadedModule, def: u16) -> bool {
        m.fn_info.get(def as usize).is_some_and(|f| f.is_native)
    }

    #[inline]
    fn binop(&mut self, op: BinOp) -> TrapResult<()> {
        let b = self.pop()?;
        let a = self.stack.last_mut().ok_or_else(|| Box::new(VmError::new(StatusCode::EMPTY_VALUE_STACK)))?;
        arith::binop_in_place(op, a, &b)?;
        b.discard();
        Ok(())
    }

    #[inline]
    fn cmp(&mut self, op: CmpOp) -> TrapResult<()> {
        let b = self.pop()?;
        let a = self.stack.last_mut().ok_or_else(|| Box::new(VmError::new(StatusCode::EMPTY_VALUE_STACK)))?;
        let r = arith::compare(op, a, &b)?;
        std::mem::replace(a, Value::Bool(r)).discard();
        b.discard();
        Ok(())
    }

    #[inline]
    fn cast(&mut self, to: ScalarKind) -> TrapResult<()> {
        let a = self.pop()?;
        let r = arith::cast(a, to)?;
        self.push(r)
    }

    fn variant_tag(&self, r: &Reference) -> TrapResult<u16> {
        match self.mem.get(r)? {
            Value::Variant(t, _) => Ok(*t),
            _ => Err(Box::new(invariant("not an enum value"))),
        }
    }

    fn borrow_variant_field(&mut self, variants: &[u16], field: u16) -> TrapResult<()> {
        let r = self.pop_ref()?;
        let tag = self.variant_tag(&r)?;
        if !variants.contains(&tag) {
            return Err(Box::new(VmError::new(StatusCode::STRUCT_VARIANT_MISMATCH)));
        }
        self.push(Value::Ref(r.child(field as usize)))
    }

    fn unpack_variant(&mut self, variant: u16, mismatch: StatusCode) -> TrapResult<()> {
        match self.pop()? {
            Value::Variant(t, fields) if t == variant => {
                for f in fields {
                    self.push(f)?;
                }
                Ok(())
            }
            Value::Variant(..) => Err(Box::new(VmError::new(mismatch))),
            _ => Err(Box::new(invariant("unpack of a non-enum"))),
        }
    }

    fn unpack_variant_ref(&mut self, variant: u16) -> TrapResult<()> {
        let r = self.pop_ref()?;
        let n = match self.mem.get(&r)? {
            Value::Variant(t, fields) if *t == variant => fields.len(),
            Value::Variant(..) => return Err(Box::new(VmError::new(StatusCode::VARIANT_TAG_MISMATCH))),
            _ => return Err(Box::new(invariant("unpack of a non-enum"))),
        };
        for i in 0..n {
            self.push(Value::Ref(r.child(i)))?;
        }
        Ok(())
    }

    fn test_variant(&mut self, variant: u16) -> TrapResult<()> {
        let r = self.pop_ref()?;
        let tag = self.variant_tag(&r)?;
        self.push(Value::Bool(tag == variant))
    }
}

/// Charges `elems` value slots the tree interpreter allocates (vector
/// growth, deep copies) to the memory budget. Tree values are freed by Rust's drops, which the budget
/// does not see, so this mode counts what a call allocates, not what stays
/// live (an upper bound; the flat interpreter and compiled code count live
/// bytes).
/// Heap slots a deep copy of `v` allocates (its vectors' and structs'
/// elements, recursively).
fn heap_slots(v: &Value) -> usize {
    match v {
        Value::Vector(xs) | Value::Struct(xs) | Value::Variant(_, xs) => {
            xs.len() + xs.iter().map(heap_slots).sum::<usize>()
        }
        _ => 0,
    }
}

fn tree_charge(elems: usize) -> Result<(), VmError> {
    movejit_runtime::memory::charge((elems as u64).saturating_mul(std::mem::size_of::<Value>() as u64))
}
