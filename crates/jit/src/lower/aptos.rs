//! What an instruction charges under Aptos's schedule, as compiled code
//! sums it per segment (`lower/metered.rs`): the same charges, in the same
//! order, as the interpreter's prepared gas sites (`interp/src/flat/
//! prepare.rs` `gas_site`, charged by `exec.rs` `charge_aptos`), each priced
//! by the runtime's one pricing function, `InstructionCosts::site_cost`.
//!
//! Only charges fixed when the function is compiled are lowered: the types
//! an instruction builds (`subst_ty_per_node` × nodes, charged first) and
//! its price over counts of fields, elements, constant bytes, or abstract
//! sizes of values whose layout fixes them. What depends on run-time state
//! is charged on the meter where it runs, after compiled code settles what
//! it spent: a closure pack's module loads (`lower/metered.rs`
//! `aptos_pack`), a closure call's charges (the runtime's `call_closure`:
//! the target's module, its price, its frame; a target compiled code lacks,
//! or a native one, runs on the interpreter over the same meter). Copies and comparisons of values with a vector or
//! closure inside are priced by the values where they run (the runtime's
//! `aptos_copy`, `aptos_compare`).
//! Global storage charges its types here and its price in the segment; the
//! resource's first read in the transaction (its layout's modules, its I/O
//! and memory) and the price after it are made by the runtime's global shim
//! where it runs, on the meter (`flat::host::charge_global`; jit-abi.md).
//! A call of a compiled function charges its price
//! and its frame's types as constants too; running out in the frame's
//! charges is located as Aptos locates loading errors
//! (`ExecContext::AT_LOAD`). What a generic call or a call into another
//! module (not at a special address) charges once per transaction, its
//! instantiation's types and the module's loading, the runtime's
//! `aptos_call` helper charges where the call runs, before those constants
//! ([`call_site`](Lowerer::call_site)), on the same meter as the
//! interpreter.
//!
//! Aptos's memory meter is fed where compiling fixes the amount
//! ([`memory_feed`](Lowerer::memory_feed): packing, unpacking, vector
//! elements); an instruction whose memory event only its values fix is
//! interpreted (jit-abi.md 5.1, "Memory").

use super::*;
use movejit_format::StructFieldInformation;
use movejit_runtime::gas::abstract_size::AbstractSizes;
use movejit_runtime::gas::aptos::{AptosCallSite, SiteCounts};
use movejit_runtime::gas::memory::{locals_held, MemoryPoint};
use movejit_runtime::intern::instance_id;

impl Lowerer<'_, '_> {
    /// Instruction `i`'s Aptos charges, in the order the interpreter makes
    /// them (given the operand types before it).
    /// Each charge is `(amount, at_load)`: `at_load` for the charges of
    /// making a callee's frame.
    pub(super) fn aptos_charges(&mut self, p: &AptosPricing, i: usize) -> CompileResult<Vec<(u64, bool)>> {
        use Bytecode as B;
        let m = self.target.module;
        let ins = &self.code[i];
        let op = ins.opcode();
        let refused = || unsupported(format!("Aptos gas of {op:?} is charged at run time (interpreted)"));
        // Charged where it runs, by the value (`lower/metered.rs`
        // `charge_copy`).
        if self.copied_value(p, i)?.is_some() || self.compared_values(p, i)?.is_some() {
            return Ok(Vec::new());
        }
        // Its types here; its price by the value's variant where it runs
        // (`lower/metered.rs` `charge_variant_price`).
        if self.variant_prices(p, i)?.is_some() {
            let nodes = match ins {
                B::UnpackVariantGeneric(x) => {
                    let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                    let vh =
                        m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                    let args = self.inst_args(inst.type_parameters)?;
                    let fields = self.fields(vh.struct_index, Some(vh.variant), &args)?;
                    nodes_of(&fields) + self.struct_type(vh.struct_index, args)?.num_nodes()
                }
                _ => 0,
            };
            return Ok(if nodes > 0 {
                vec![(p.costs.subst_ty_per_node.saturating_mul(nodes), false)]
            } else {
                Vec::new()
            });
        }
        if self.feeds_memory(ins)? && self.memory_feed(p, i)?.is_none() {
            return Err(unsupported(format!("Aptos memory of {op:?} is tracked at run time (interpreted)")));
        }
        let units = |n: u64| SiteCounts { units: n, ..SiteCounts::default() };
        let (nodes, counts) = match ins {
            // A call of a Move function whose module is loaded already:
            // its price (arguments, the callee's locals), then its frame
            // builds each local's type (errors there are located as
            // loading errors).
            // (A generic call, or one loading another module, charges
            // more before these where it runs: `call_site`.)
            B::Call(_) | B::CallGeneric(_) => {
                let (callee, ty_args) = self.named_callee(i)?;
                // (A native has no locals: its price, then it charges its
                // own gas where it runs, `call_native`.)
                if callee.native == Some(crate::engine::MISSING_NATIVE) {
                    return Err(refused());
                }
                let counts = SiteCounts {
                    units: callee.params.len() as u64,
                    locals: callee.local_nodes.len() as u64,
                    ty_args: ty_args.len() as u64,
                };
                let mut out = vec![(p.costs.site_cost(op, counts), false)];
                out.extend(callee.local_nodes.iter().map(|n| (p.costs.subst_ty_per_node.saturating_mul(*n), true)));
                return Ok(out);
            }
            // Everything where it runs: its target's module, its price by
            // the closure's arguments and the target's locals, the frame
            // (`closure_shims::call_closure`).
            B::CallClosure(_) => return Ok(Vec::new()),
            // Its price by the captured values here; the target's module
            // (and a storable closure's captured layouts' modules) where it
            // runs (`lower/metered.rs` `aptos_pack`).
            B::PackClosure(_, mask) => (0, units(mask.captured_count() as u64)),
            // Priced first, then its type arguments are built.
            B::PackClosureGeneric(fi, mask) => {
                let inst =
                    m.function_instantiations.get(fi.idx()).ok_or_else(|| malformed("function instantiation"))?;
                let nodes = nodes_of(&self.inst_args(inst.type_parameters)?);
                let price = p.costs.site_cost(op, units(mask.captured_count() as u64));
                return Ok(vec![(price, false), (p.costs.subst_ty_per_node.saturating_mul(nodes), false)]);
            }
            // Its base here; per message byte where it runs (`lower/mod.rs`).
            B::AbortMsg => (0, SiteCounts::default()),
            // Its types, then its price: the resource's loading and I/O
            // come between them where it runs (`lower/global.rs`).
            B::ExistsGeneric(si)
            | B::ImmBorrowGlobalGeneric(si)
            | B::MutBorrowGlobalGeneric(si)
            | B::MoveFromGeneric(si)
            | B::MoveToGeneric(si) => {
                let inst = m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct inst"))?;
                let args = self.inst_args(inst.type_parameters)?;
                (self.struct_type(inst.def, args)?.num_nodes(), SiteCounts::default())
            }
            B::LdConst(c) => {
                let c = m.constant_pool.get(c.idx()).ok_or_else(|| malformed("constant index"))?;
                (to_type(m, &c.type_, &[])?.num_nodes(), units(c.data.len() as u64))
            }
            B::CopyLoc(l) => {
                let size = match self.local(*l)? {
                    Local::Var(k, _) => p.sizes.fixed(&scalar_layout(k)),
                    Local::Ref(..) => Some(p.sizes.reference()),
                    Local::Mem(l, _) => p.sizes.fixed(&l),
                };
                (0, units(size.ok_or_else(refused)?))
            }
            B::ReadRef => {
                let size = match self.stack.last() {
                    Some((Ty::R(t), _)) => p.sizes.fixed(t),
                    _ => return Err(malformed("ReadRef of a non-reference")),
                };
                (0, units(size.ok_or_else(refused)?))
            }
            // Priced by both operands, references dereferenced.
            B::Eq | B::Neq => {
                let size = match self.stack.last() {
                    Some((Ty::S(k), _)) => p.sizes.fixed(&scalar_layout(*k)),
                    Some((Ty::R(l) | Ty::M(l), _)) => p.sizes.fixed(l),
                    None => return Err(malformed("Eq without operands")),
                };
                (0, units(size.ok_or_else(refused)?.saturating_mul(2)))
            }
            B::Pack(sd) | B::Unpack(sd) => (0, units(self.fields(*sd, None, &[])?.len() as u64)),
            B::PackGeneric(si) | B::UnpackGeneric(si) => {
                let inst = m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct inst"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let fields = self.fields(inst.def, None, &args)?;
                let t = self.struct_type(inst.def, args)?;
                (nodes_of(&fields) + t.num_nodes(), units(fields.len() as u64))
            }
            B::PackVariant(h) => {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                (0, units(self.fields(vh.struct_index, Some(vh.variant), &[])?.len() as u64))
            }
            B::PackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let fields = self.fields(vh.struct_index, Some(vh.variant), &args)?;
                let t = self.struct_type(vh.struct_index, args)?;
                (nodes_of(&fields) + t.num_nodes(), units(fields.len() as u64))
            }
            // Priced by the value's variant (its fields and the tag): fixed
            // only when every variant has as many fields.
            B::UnpackVariant(h) => {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                (0, units(self.same_variant_fields(vh.struct_index).ok_or_else(refused)? + 1))
            }
            B::UnpackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                let n = self.same_variant_fields(vh.struct_index).ok_or_else(refused)?;
                let args = self.inst_args(inst.type_parameters)?;
                let fields = self.fields(vh.struct_index, Some(vh.variant), &args)?;
                let t = self.struct_type(vh.struct_index, args)?;
                (nodes_of(&fields) + t.num_nodes(), units(n + 1))
            }
            // The struct type and the field's type.
            B::ImmBorrowFieldGeneric(fi) | B::MutBorrowFieldGeneric(fi) => {
                let inst = m.field_instantiations.get(fi.idx()).ok_or_else(|| malformed("field instantiation"))?;
                let h = m.field_handles.get(inst.handle.idx()).ok_or_else(|| malformed("field handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let fields = self.fields(h.owner, None, &args)?;
                let f = fields.get(h.field as usize).ok_or_else(|| malformed("field index"))?;
                (f.num_nodes() + self.struct_type(h.owner, args)?.num_nodes(), SiteCounts::default())
            }
            B::ImmBorrowVariantFieldGeneric(x) | B::MutBorrowVariantFieldGeneric(x) => {
                let inst =
                    m.variant_field_instantiations.get(x.idx()).ok_or_else(|| malformed("variant field inst"))?;
                let vh =
                    m.variant_field_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant field handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                let v = vh.variants.first().copied().ok_or_else(|| malformed("variant field handle"))?;
                let fields = self.fields(vh.struct_index, Some(v), &args)?;
                let f = fields.get(vh.field as usize).ok_or_else(|| malformed("field index"))?;
                (f.num_nodes() + self.struct_type(vh.struct_index, args)?.num_nodes(), SiteCounts::default())
            }
            B::TestVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                (self.struct_type(vh.struct_index, args)?.num_nodes(), SiteCounts::default())
            }
            B::VecPack(si, n) | B::VecUnpack(si, n) => (nodes_of(&self.inst_args(*si)?), units(*n)),
            B::VecLen(si)
            | B::VecImmBorrow(si)
            | B::VecMutBorrow(si)
            | B::VecPushBack(si)
            | B::VecPopBack(si)
            | B::VecSwap(si) => (nodes_of(&self.inst_args(*si)?), SiteCounts::default()),
            _ => (0, SiteCounts::default()),
        };
        let price = p.costs.site_cost(op, counts);
        Ok(if nodes > 0 {
            vec![(p.costs.subst_ty_per_node.saturating_mul(nodes), false), (price, false)]
        } else {
            vec![(price, false)]
        })
    }

    /// A `copy_loc` or `read_ref` (instruction `i`) of a value whose Aptos
    /// charges depend on it (its layout fixes no size: a vector or closure
    /// inside): its layout and address (the local's slot, the reference's
    /// target). Both its price and its memory use are measured on it where
    /// it runs (the runtime's `aptos_copy`).
    pub(super) fn copied_value(
        &mut self,
        p: &AptosPricing,
        i: usize,
    ) -> CompileResult<Option<(Arc<FlatLayout>, Value)>> {
        let (l, at) = match self.code[i] {
            Bytecode::CopyLoc(x) => match self.local(x)? {
                Local::Mem(l, a) => (l, a),
                _ => return Ok(None),
            },
            Bytecode::ReadRef => match self.stack.last() {
                Some((Ty::R(l), v)) => (l.clone(), v.one()?),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(p.sizes.fixed(&l).is_none().then_some((l, at)))
    }

    /// An `eq` / `neq` (instruction `i`) of values whose Aptos charges
    /// depend on them (their layout fixes no size): the compared layout,
    /// both operands' addresses (the values, or the references' targets)
    /// and whether they are values (released as memory). Its price and
    /// memory are measured where it runs (the runtime's `aptos_compare`).
    pub(super) fn compared_values(&mut self, p: &AptosPricing, i: usize) -> CompileResult<Option<Compared>> {
        if !matches!(self.code[i], Bytecode::Eq | Bytecode::Neq) {
            return Ok(None);
        }
        let n = self.stack.len();
        if n < 2 {
            return Err(malformed("Eq without operands"));
        }
        let (l, values) = match &self.stack[n - 1].0 {
            Ty::M(l) => (l.clone(), true),
            Ty::R(l) => (l.clone(), false),
            Ty::S(_) => return Ok(None),
        };
        if p.sizes.fixed(&l).is_some() {
            return Ok(None);
        }
        let at = |v: &Val| if values { v.addr() } else { v.one() };
        let (a, b) = (at(&self.stack[n - 2].1)?, at(&self.stack[n - 1].1)?);
        Ok(Some((l, [a, b], values)))
    }

    /// The price of `unpack_variant` (instruction `i`) by the variant of
    /// the value it meets (its fields and the tag), when its enum's
    /// variants differ in field count (the interpreter prices the value's
    /// variant before it checks it): one price per variant.
    pub(super) fn variant_prices(&self, p: &AptosPricing, i: usize) -> CompileResult<Option<Vec<u64>>> {
        let m = self.target.module;
        let sd = match &self.code[i] {
            Bytecode::UnpackVariant(h) => {
                m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?.struct_index
            }
            Bytecode::UnpackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?.struct_index
            }
            _ => return Ok(None),
        };
        if self.same_variant_fields(sd).is_some() {
            return Ok(None);
        }
        let Some(StructFieldInformation::DeclaredVariants(vs)) =
            m.struct_defs.get(sd.idx()).map(|d| &d.field_information)
        else {
            return Err(malformed("unpack_variant of a struct"));
        };
        let op = self.code[i].opcode();
        let price = |n: usize| p.costs.site_cost(op, SiteCounts { units: n as u64 + 1, ..SiteCounts::default() });
        Ok(Some(vs.iter().map(|v| price(v.fields.len())).collect()))
    }

    /// The Move function call instruction `i` names, with its type
    /// arguments.
    fn named_callee(&mut self, i: usize) -> CompileResult<(std::rc::Rc<CalleeRef>, Vec<RType>)> {
        let (h, ty_args) = match &self.code[i] {
            Bytecode::Call(h) => (*h, Vec::new()),
            Bytecode::CallGeneric(fi) => {
                let m = self.target.module;
                let inst =
                    m.function_instantiations.get(fi.idx()).ok_or_else(|| malformed("function instantiation"))?;
                (inst.handle, self.inst_args(inst.type_parameters)?)
            }
            _ => return Err(malformed("a call site of another instruction")),
        };
        Ok((self.callee_ref(h, ty_args.clone())?, ty_args))
    }

    /// The Aptos charges of call instruction `i` that only the transaction
    /// fixes, made where it runs (`lower/metered.rs` `charge_call_site`),
    /// as the interpreter's `charge_aptos_call` makes them: a generic
    /// call's type arguments on the caller's first resolution of it, the
    /// callee module's loading on its first load. `charges`: the
    /// instruction's constant charges, which follow them. `None` for a call
    /// of a function of the caller's module or of one at a special address.
    pub(super) fn call_site(&mut self, i: usize, charges: &[(u64, bool)]) -> CompileResult<Option<AptosCallSite>> {
        if !matches!(self.code[i], Bytecode::Call(_) | Bytecode::CallGeneric(_)) {
            return Ok(None);
        }
        let (callee, ty_args) = self.named_callee(i)?;
        let generic = matches!(self.code[i], Bytecode::CallGeneric(_));
        if !generic && callee.module_free {
            return Ok(None);
        }
        let module = callee.module.clone().ok_or_else(|| malformed("a Move callee without its module"))?;
        let instantiation = match &self.code[i] {
            Bytecode::CallGeneric(fi) => {
                let m = self.target.module;
                let caller = movejit_runtime::ModuleId::new(*m.address(), m.name());
                let id = instance_id(&caller, self.target.fdef, self.target.type_args)
                    .map_err(|e| unsupported(format!("instance id: {e}")))?;
                Some((id, fi.0 as u64, nodes_of(&ty_args)))
            }
            _ => None,
        };
        let mut sum = 0u64;
        let steps = charges
            .iter()
            .map(|&(c, at_load)| {
                sum = sum.saturating_add(c);
                (sum, at_load)
            })
            .collect();
        Ok(Some(AptosCallSite::new(instantiation, generic, module, steps)))
    }

    /// Whether instruction `ins` may feed Aptos's memory meter a nonzero
    /// amount (jit-abi.md 5.2), given the operand types before it: the
    /// runtime's memory point of the instruction ([`MemoryPoint`]) over
    /// the layouts it measures here. Compiled code feeds it nothing, so
    /// such an instruction is interpreted.
    fn feeds_memory(&mut self, ins: &Bytecode) -> CompileResult<bool> {
        let measured = self.measured(ins)?;
        Ok(MemoryPoint::of(ins).may_feed(measured.iter().map(|l| &**l)))
    }

    /// The layouts whose values instruction `ins`'s memory event measures
    /// by heap size, given the operand types before it (none for the
    /// events measured by stack or packed sizes).
    fn measured(&mut self, ins: &Bytecode) -> CompileResult<Vec<Arc<FlatLayout>>> {
        use Bytecode as B;
        let point = MemoryPoint::of(ins);
        let top = self.stack.last().map(|(t, _)| t.clone());
        // A value's layout (a scalar's, a memory value's); a reference
        // measures its target.
        let value = |t: Option<Ty>| match t {
            Some(Ty::S(k)) => Some(scalar_layout(k)),
            Some(Ty::M(l)) => Some(l),
            _ => None,
        };
        let target = |t: Option<Ty>| match t {
            Some(Ty::R(l)) => Some(l),
            _ => None,
        };
        let measured: Vec<Arc<FlatLayout>> = match (point, ins) {
            (MemoryPoint::UseCopy, B::CopyLoc(l)) => match self.local(*l)? {
                Local::Mem(l, _) => vec![l],
                _ => Vec::new(),
            },
            (MemoryPoint::UseCopy, _) | (MemoryPoint::ReleaseTarget, _) => target(top).into_iter().collect(),
            (MemoryPoint::ReleasePair, _) | (MemoryPoint::ReleaseTop, _) => value(top).into_iter().collect(),
            (MemoryPoint::UseConst, B::LdConst(c)) => {
                let m = self.target.module;
                let c = m.constant_pool.get(c.idx()).ok_or_else(|| malformed("constant index"))?;
                vec![self.env.layout(&to_type(m, &c.type_, &[])?)?]
            }
            // The locals still holding a value when the frame returns.
            (MemoryPoint::DropFrame, _) => self
                .locals
                .iter()
                .filter_map(|l| match l {
                    Local::Mem(l, _) => Some(l.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(measured)
    }

    /// What instruction `i` feeds Aptos's memory meter when compiling fixes
    /// the amount or how to find it (`None`: nothing, or an amount only the
    /// values fix, which
    /// [`aptos_charges`](Self::aptos_charges) refuses): the stack sizes of
    /// the fields a struct or variant is packed from or unpacked to (the
    /// variant's tag too), the packed sizes of vector elements, the heap
    /// sizes of values copied, read, compared, popped or written over
    /// whose layout fixes them, and of constants. The
    /// interpreter's amounts (`interp/src/flat/exec.rs` `charge_memory`),
    /// from the same layouts.
    pub(super) fn memory_feed(&mut self, p: &AptosPricing, i: usize) -> CompileResult<Option<MemoryFeed>> {
        use Bytecode as B;
        let m = self.target.module;
        let code = self.code;
        let ins = &code[i];
        let point = MemoryPoint::of(ins);
        let fields = match ins {
            B::Pack(sd) | B::Unpack(sd) => Some(self.fields(*sd, None, &[])?),
            B::PackGeneric(si) | B::UnpackGeneric(si) => {
                let inst = m.struct_def_instantiations.get(si.idx()).ok_or_else(|| malformed("struct inst"))?;
                let args = self.inst_args(inst.type_parameters)?;
                Some(self.fields(inst.def, None, &args)?)
            }
            B::PackVariant(h) | B::UnpackVariant(h) => {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| malformed("variant handle"))?;
                Some(self.fields(vh.struct_index, Some(vh.variant), &[])?)
            }
            B::PackVariantGeneric(x) | B::UnpackVariantGeneric(x) => {
                let inst = m.struct_variant_instantiations.get(x.idx()).ok_or_else(|| malformed("variant inst"))?;
                let vh = m.struct_variant_handles.get(inst.handle.idx()).ok_or_else(|| malformed("variant handle"))?;
                let args = self.inst_args(inst.type_parameters)?;
                Some(self.fields(vh.struct_index, Some(vh.variant), &args)?)
            }
            _ => None,
        };
        // The captured values' stack sizes, before all its charges (a
        // generic pack's are its price, then its types).
        if let B::PackClosure(_, mask) | B::PackClosureGeneric(_, mask) = ins {
            let top =
                self.stack.len().checked_sub(mask.captured_count()).ok_or_else(|| malformed("captured values"))?;
            let mut used = 0u64;
            for (t, _) in &self.stack[top..] {
                let l = match t {
                    Ty::S(k) => scalar_layout(*k),
                    Ty::M(l) => l.clone(),
                    Ty::R(_) => return Err(malformed("a captured reference")),
                };
                used = used.saturating_add(p.sizes.stack(&l));
            }
            return Ok(Some(MemoryFeed::UseFirst(used)));
        }
        let mut stack_sizes = 0u64;
        for t in fields.iter().flatten() {
            stack_sizes = stack_sizes.saturating_add(p.sizes.stack(&*self.env.layout(t)?));
        }
        // A value-sized event of values whose layout fixes their heap size
        // (no vector or closure inside): `fixed − stack` each, as
        // `AbstractSizes::heap` measures every value of such a layout.
        let fixed_heap = |lw: &mut Self| -> CompileResult<Option<u64>> {
            let measured = lw.measured(ins)?;
            if !point.may_feed(measured.iter().map(|l| &**l)) {
                return Ok(None);
            }
            Ok(measured.iter().try_fold(0u64, |acc, l| {
                let heap =
                    if AbstractSizes::heapless(l) { 0 } else { p.sizes.fixed(l)?.saturating_sub(p.sizes.stack(l)) };
                Some(acc.saturating_add(heap))
            }))
        };
        let packed = |lw: &mut Self, n: u64| -> CompileResult<u64> {
            let (B::VecPack(si, _) | B::VecUnpack(si, _) | B::VecPushBack(si) | B::VecPopBack(si)) = ins else {
                return Err(malformed("a vector memory point of another instruction"));
            };
            let e = lw.inst_args(*si)?.into_iter().next().ok_or_else(|| malformed("vector element type"))?;
            let e = lw.env.layout(&e)?;
            // A vector of signed integers' packed size depends on whether
            // it is empty: measured where it runs, by the interpreter.
            if !AbstractSizes::packed_fixed(&e) {
                return Err(unsupported(format!(
                    "Aptos memory of {:?} is measured at run time (interpreted)",
                    ins.opcode()
                )));
            }
            Ok(p.sizes.packed(&e).saturating_mul(n))
        };
        Ok(match point {
            MemoryPoint::UseFields if fields.is_some() => Some(MemoryFeed::Use(stack_sizes)),
            MemoryPoint::ReleaseFields => Some(MemoryFeed::Release(stack_sizes)),
            // The unpacked value's variant: the instruction's, when it
            // succeeds (a mismatch fails, and what it released no longer
            // matters).
            MemoryPoint::ReleaseVariant => Some(MemoryFeed::Release(stack_sizes.saturating_add(p.sizes.variant_tag()))),
            MemoryPoint::UseElements(n) => Some(MemoryFeed::Use(packed(self, n)?)),
            MemoryPoint::ReleaseElements(n) => Some(MemoryFeed::Release(packed(self, n)?)),
            // One element, when the pop succeeds (the vector was not empty).
            MemoryPoint::PopBack => Some(MemoryFeed::Release(packed(self, 1)?)),
            MemoryPoint::UseCopy => fixed_heap(self)?.map(MemoryFeed::Use),
            // Both operands, of the same layout.
            MemoryPoint::ReleasePair => fixed_heap(self)?.map(|n| MemoryFeed::Release(n.saturating_mul(2))),
            // A value of no fixed size: measured where it runs.
            MemoryPoint::ReleaseTop | MemoryPoint::ReleaseTarget => {
                let measured = self.measured(ins)?;
                if !point.may_feed(measured.iter().map(|l| &**l)) {
                    return Ok(None);
                }
                Some(fixed_heap(self)?.map_or(MemoryFeed::ReleaseValue, MemoryFeed::Release))
            }
            // The locals still holding a value: vectors and closures tell
            // it by their bytes (zero once moved out, as in the
            // interpreter); the others with a heap part by the
            // interpreter's dataflow ([`FrameDrops`]).
            MemoryPoint::DropFrame => {
                let measured = self.measured(ins)?;
                point.may_feed(measured.iter().map(|l| &**l)).then_some(MemoryFeed::ReleaseFrame)
            }
            // The constant's heap size, measured on the value the
            // interpreter loads (deserialized the same way).
            MemoryPoint::UseConst => {
                let B::LdConst(c) = ins else { return Err(malformed("a constant point of another instruction")) };
                let c = m.constant_pool.get(c.idx()).ok_or_else(|| malformed("constant index"))?;
                let l = self.env.layout(&to_type(m, &c.type_, &[])?)?;
                if AbstractSizes::heapless(&l) {
                    return Ok(None);
                }
                let v = movejit_runtime::flat::bcs::deserialize(&c.data, l).map_err(|_| malformed("constant"))?;
                Some(MemoryFeed::UseAfterPrice(p.sizes.heap(v.layout(), v.bytes())))
            }
            _ => None,
        })
    }

    /// The field types of struct `sd` (of its `variant`) instantiated with
    /// `args`.
    fn fields(&self, sd: StructDefinitionIndex, variant: Option<u16>, args: &[RType]) -> CompileResult<Vec<RType>> {
        let m = self.target.module;
        let info = &m.struct_defs.get(sd.idx()).ok_or_else(|| malformed("struct definition index"))?.field_information;
        let fs = match (info, variant) {
            (StructFieldInformation::Declared(fs), None) => fs,
            (StructFieldInformation::DeclaredVariants(vs), Some(v)) => {
                &vs.get(v as usize).ok_or_else(|| malformed("variant index"))?.fields
            }
            _ => return Err(malformed("fields of a struct of another kind")),
        };
        fs.iter().map(|f| to_type(m, &f.signature, args)).collect()
    }

    /// The field count every variant of enum `sd` has, if they agree.
    fn same_variant_fields(&self, sd: StructDefinitionIndex) -> Option<u64> {
        match &self.target.module.struct_defs.get(sd.idx())?.field_information {
            StructFieldInformation::DeclaredVariants(vs) => {
                let n = vs.first()?.fields.len();
                vs.iter().all(|v| v.fields.len() == n).then_some(n as u64)
            }
            _ => None,
        }
    }
}

/// What a returning frame releases of its locals whose bytes do not tell
/// whether they hold a value with a heap part (structs, enums, signers:
/// `AbstractSizes::bytes_tell_held`; a held one may be all zero, a
/// moved-out one may not), so whether one holds a value is the
/// interpreter's dataflow (`gas::memory::locals_held`, its
/// prepared `ret`): surely, not at all, or, for a local that only may hold
/// one at some `ret`, a flag its `st_loc` and `move_loc` set (the
/// interpreter's `Held` flag byte): held ≠ parameter.
pub(super) struct FrameDrops {
    may: Vec<Vec<bool>>,
    surely: Vec<Vec<bool>>,
    /// Per local: its heap size (`None`: measured where it is released,
    /// an enum's varies with its variant), and its flag if tracked.
    locals: Vec<Option<(Option<u64>, Option<Variable>)>>,
    params: usize,
}

impl Lowerer<'_, '_> {
    /// Sets up [`FrameDrops`] (Aptos's schedule only), its flags cleared on
    /// entry (each local holds a value iff it is a parameter).
    pub(super) fn track_frame_drops(&mut self, code: &movejit_format::CodeUnit) -> CompileResult<()> {
        let Some(p) = self.target.aptos else { return Ok(()) };
        let (params, n) = (self.target.params.len(), self.locals.len());
        let may = locals_held(code, params, n, true);
        let surely = locals_held(code, params, n, false);
        let mut locals = Vec::with_capacity(n);
        for i in 0..n {
            let l = match &self.locals[i] {
                Local::Mem(l, _) if !AbstractSizes::heapless(l) && !AbstractSizes::bytes_tell_held(l) => l.clone(),
                _ => {
                    locals.push(None);
                    continue;
                }
            };
            let heap = p.sizes.fixed(&l).map(|f| f.saturating_sub(p.sizes.stack(&l)));
            let maybe = code.code.iter().enumerate().any(|(pc, b)| {
                matches!(b, Bytecode::Ret) && may[pc].get(i) == Some(&true) && surely[pc].get(i) != Some(&true)
            });
            let flag = maybe.then(|| {
                let v = self.b.declare_var(types::I8);
                let z = self.b.ins().iconst(types::I8, 0);
                self.b.def_var(v, z);
                v
            });
            locals.push(Some((heap, flag)));
        }
        self.frame_drops = Some(FrameDrops { may, surely, locals, params });
        Ok(())
    }

    /// After instruction `i`: a tracked local it stores to or moves from
    /// now holds a value, or not.
    pub(super) fn track_local(&mut self, i: usize) {
        let (l, holds) = match self.code[i] {
            Bytecode::StLoc(l) => (l as usize, true),
            Bytecode::MoveLoc(l) => (l as usize, false),
            _ => return,
        };
        let Some(d) = &self.frame_drops else { return };
        if let Some(Some((_, Some(v)))) = d.locals.get(l) {
            let v = *v;
            let flag = self.b.ins().iconst(types::I8, i64::from(holds != (l < d.params)));
            self.b.def_var(v, flag);
        }
    }

    /// At `ret` (instruction `i`): releases the heap sizes of the locals of
    /// [`FrameDrops`] that hold a value, as the interpreter does.
    pub(super) fn release_frame_drops(&mut self, i: usize) -> CompileResult<()> {
        let Some(d) = &self.frame_drops else { return Ok(()) };
        // (local, heap size, flag and whether it is a parameter)
        let mut drops = Vec::new();
        for (l, drop) in d.locals.iter().enumerate() {
            let Some((heap, flag)) = *drop else { continue };
            if d.may.get(i).and_then(|m| m.get(l)) != Some(&true) || heap == Some(0) {
                continue;
            }
            let surely = d.surely.get(i).and_then(|s| s.get(l)) == Some(&true);
            drops.push((l, heap, flag.filter(|_| !surely).map(|v| (v, l < d.params))));
        }
        let mut fixed = 0u64;
        let mut amount: Option<Value> = None;
        for (l, heap, flag) in drops {
            // Held: the flag differs from "is a parameter".
            let held = flag.map(|(v, param)| {
                let f = self.b.use_var(v);
                if param {
                    self.b.ins().icmp_imm_u(IntCC::Equal, f, 0)
                } else {
                    f
                }
            });
            match (heap, held) {
                (Some(h), None) => fixed = fixed.saturating_add(h),
                (Some(h), Some(held)) => {
                    let h = self.b.ins().iconst(types::I64, h as i64);
                    let z = self.b.ins().iconst(types::I64, 0);
                    let part = self.b.ins().select(held, h, z);
                    amount = Some(match amount {
                        Some(a) => self.b.ins().iadd(a, part),
                        None => part,
                    });
                }
                (None, held) => {
                    let Local::Mem(layout, addr) = self.local(l as u8)? else {
                        return Err(malformed("a frame drop of a local not in memory"));
                    };
                    let lp = self.layout_ptr(&layout);
                    let (run, done) = (self.b.create_block(), self.b.create_block());
                    match held {
                        Some(h) => {
                            self.b.ins().brif(h, run, &[], done, &[]);
                        }
                        None => {
                            self.b.ins().jump(run, &[]);
                        }
                    }
                    self.b.switch_to_block(run);
                    self.b.seal_block(run);
                    self.call_helper(HelperId::memory_release_heap(), &[self.ctx, lp, addr])?;
                    self.b.ins().jump(done, &[]);
                    self.b.switch_to_block(done);
                    self.b.seal_block(done);
                }
            }
        }
        let amount = match (amount, fixed) {
            (None, 0) => return Ok(()),
            (None, f) => self.b.ins().iconst(types::I64, f as i64),
            (Some(a), 0) => a,
            (Some(a), f) => self.b.ins().iadd_imm_u(a, f as i64),
        };
        self.memory_release(amount);
        Ok(())
    }
}

/// An `eq` / `neq` charged where it runs
/// ([`compared_values`](Lowerer::compared_values)): the compared layout,
/// both operands' addresses, whether they are values.
pub(super) type Compared = (Arc<FlatLayout>, [Value; 2], bool);

/// What an instruction feeds Aptos's memory meter, fixed when compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemoryFeed {
    /// Uses this many units before its price (after the types it builds):
    /// compiled code settles the gas events before it, then calls
    /// `memory_use`.
    Use(u64),
    /// Uses this many units after its price (`ld_const`).
    UseAfterPrice(u64),
    /// Uses this many units before all its charges (`pack_closure`'s
    /// captured values; a generic one is priced, then builds its types).
    UseFirst(u64),
    /// Releases this many units once it has run (a release only lowers
    /// the usage, so only its order among the uses matters).
    Release(u64),
    /// Releases the heap size of the value the instruction pops (`pop`) or
    /// writes over (`write_ref`), measured before it runs
    /// (`memory_release_heap`): its layout fixes no size.
    ReleaseValue,
    /// `ret`: releases the heap sizes of the frame's locals that still
    /// hold a value: those owning heap memory by `memory_release_value`
    /// each, the others by [`FrameDrops`].
    ReleaseFrame,
}

fn nodes_of(ts: &[RType]) -> u64 {
    ts.iter().map(RType::num_nodes).sum()
}
