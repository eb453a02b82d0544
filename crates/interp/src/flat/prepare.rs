//! Preparing a function instance for the flat interpreter: the types of the
//! operand stack at every instruction (the code is verified, so one forward
//! pass over the control flow finds them), a frame layout with every local
//! and operand slot at a fixed offset, and the code rewritten as [`Op`]s
//! whose operands are those offsets and whose types are resolved to flat
//! layouts. Done once per (module, function, type arguments) and shared by
//! every session of the engine.
//!
//! Errors the tree interpreter raises when it reaches an instruction (type
//! or value depth limits, a layout it cannot build) become [`Op::Fail`] at
//! that instruction, so they surface at the same place.

use crate::engine::SessionState as Session;
use movejit_format::{
    AbilitySet, Bytecode, FunctionHandleIndex, Opcode, SignatureIndex, SignatureToken, StructDefinitionIndex,
    StructFieldInformation,
};
use movejit_loader::LoadedModule;
use movejit_runtime::arith::{BinOp, CmpOp};
use movejit_runtime::flat::{FlatLayout, FlatValue, FrameLayout, Shape};
use movejit_runtime::gas::abstract_size::AbstractSizes;
use movejit_runtime::gas::aptos::SiteCounts;
use movejit_runtime::gas::memory::{locals_held_sets, LocalSet, MemoryPoint};
pub(crate) use movejit_runtime::ScalarKind as Kind;
use movejit_runtime::{StatusCode, Type, TypeId, TypeTable, VmError, VmResult};
use std::sync::Arc;

type L = Arc<FlatLayout>;

/// The integer kind of an arithmetic operand's type.
fn int_kind(t: &Type) -> VmResult<Kind> {
    Kind::integer_of(t).ok_or_else(|| VmError::invariant(format!("integer operation on {t}")))
}

/// A call's operands in the caller's frame.
#[derive(Debug)]
pub(crate) struct CallSite {
    /// Function handle in the caller's module (resolved per session).
    pub handle: FunctionHandleIndex,
    pub ty_args: Arc<Vec<Type>>,
    /// Argument slots and layouts (reference layouts for `&`/`&mut`).
    pub args: Vec<(u32, L)>,
    pub arg_mut: Vec<bool>,
    pub rets: Vec<(u32, L)>,
    /// Operand-stack height after the call returns (for natives' pushes).
    pub height_after: u32,
    /// Stack height below the arguments (the callee's stack base offset).
    pub height_below: u32,
    /// The number of this call site in its function (from 0, in pc order):
    /// where a session keeps what it resolved to.
    pub index: u32,
    /// Every argument (result) is 8 bytes (u64s, references): interpreted
    /// calls (returns) move them without a size dispatch.
    pub args8: bool,
    pub rets8: bool,
}

/// `PackClosure`'s operands.
#[derive(Debug)]
pub(crate) struct ClosureSite {
    pub handle: FunctionHandleIndex,
    pub ty_args: Vec<Type>,
    pub mask: u64,
    pub captured: Vec<(u32, L)>,
    /// The captured parameters' types (a storable closure builds their
    /// layouts: Aptos charges the modules they reach).
    pub captured_tys: Vec<Type>,
    pub dst: u32,
}

/// `CallClosure`'s operands.
#[derive(Debug)]
pub(crate) struct ClosureCallSite {
    pub closure: u32,
    /// The provided (not captured) arguments.
    pub args: Vec<(u32, L)>,
    pub rets: Vec<(u32, L)>,
    pub height_after: u32,
    pub height_below: u32,
}

/// One prepared instruction; `u32` operands are byte offsets in the frame.
#[derive(Debug)]
pub(crate) enum Op {
    Nop,
    Fail(Box<VmError>),
    Drop {
        src: u32,
        l: L,
    },
    Ret,
    BrTrue {
        c: u32,
        t: u32,
    },
    BrFalse {
        c: u32,
        t: u32,
    },
    Branch {
        t: u32,
    },
    /// A branch back to a loop header (`t` at or before its own pc) in an
    /// instance whose loops are counted ([`LoopHeat`]): always taken, or
    /// when the bool at `cond.0` is `cond.1`.
    LoopBranch {
        t: u32,
        cond: Option<(u32, bool)>,
    },
    LdU64 {
        dst: u32,
        v: u64,
    },
    LdBytes {
        dst: u32,
        v: Box<[u8]>,
    },
    Ld1 {
        dst: u32,
        v: u8,
    },
    LdConst {
        dst: u32,
        v: FlatValue,
    },
    /// Plain bytes (scalars, references; moves of owned values).
    MoveBytes {
        src: u32,
        dst: u32,
        n: u32,
    },
    /// `MoveBytes` of 1, 8, 16 and 32 bytes (bools and u8; u64, i64 and
    /// references; u128; u256 and addresses): fixed-size copies, no
    /// `memmove` call.
    Move1 {
        src: u32,
        dst: u32,
    },
    Move8 {
        src: u32,
        dst: u32,
    },
    Move16 {
        src: u32,
        dst: u32,
    },
    Move32 {
        src: u32,
        dst: u32,
    },
    Copy {
        src: u32,
        dst: u32,
        l: L,
    },
    /// `MoveLoc` of a value owning heap memory: the local is cleared.
    MoveOwned {
        src: u32,
        dst: u32,
        n: u32,
    },
    StLoc {
        src: u32,
        dst: u32,
        l: L,
    },
    BorrowLoc {
        local: u32,
        dst: u32,
    },
    BorrowField {
        r: u32,
        off: u32,
    },
    /// (tag, field offset) for each variant that has the field.
    BorrowVariantField {
        r: u32,
        variants: Box<[(u16, u32)]>,
    },
    ReadRef {
        r: u32,
        dst: u32,
        l: L,
    },
    WriteRef {
        r: u32,
        v: u32,
        l: L,
    },
    /// `ReadRef` / `WriteRef` of a value that owns no heap memory: `n`
    /// plain bytes.
    ReadRefBytes {
        r: u32,
        dst: u32,
        n: u32,
    },
    WriteRefBytes {
        r: u32,
        v: u32,
        n: u32,
    },
    BinU64 {
        op: BinOp,
        a: u32,
        b: u32,
    },
    /// Fused pairs (one dispatch for two instructions; the second keeps its
    /// own op for paths that jump to it): `LdU64` into `b` + `BinU64`,
    /// `Move8` into `b` + `BinU64`, `CmpU64` + `BrTrue`/`BrFalse`.
    LdBinU64 {
        op: BinOp,
        a: u32,
        b: u32,
        v: u64,
    },
    CopyBinU64 {
        op: BinOp,
        a: u32,
        b: u32,
        src: u32,
    },
    /// `LdU64` of an i64 constant into `b` + `Bin` on i64.
    LdBinI64 {
        op: BinOp,
        a: u32,
        b: u32,
        v: i64,
    },
    CmpBrU64 {
        op: CmpOp,
        a: u32,
        b: u32,
        t: u32,
        when: bool,
    },
    /// Register forms of u64 groups whose operands are locals (`x`, `y`)
    /// or a constant (`v`): stack slots resolved to frame offsets, one
    /// dispatch for the group. `copy_loc x; copy_loc y | ld_u64 v; op`
    /// leaves the result in `dst` (the first copy's slot, `len` 3), or
    /// with a `st_loc` after it in that local (`len` 4). Each instruction
    /// is still charged and checked in order; the operand slots the group
    /// consumes are not written. The instructions after the first keep
    /// their own ops for paths that jump to them.
    BinU64LL {
        op: BinOp,
        x: u32,
        y: u32,
        dst: u32,
        len: u8,
    },
    BinU64LC {
        op: BinOp,
        x: u32,
        v: u64,
        dst: u32,
        len: u8,
    },
    /// `copy_loc x; copy_loc y | ld_u64 v; cmp; br_true | br_false`: the
    /// branch is taken when `(x op y) == when`.
    CmpBrU64LL {
        op: CmpOp,
        x: u32,
        y: u32,
        t: u32,
        when: bool,
    },
    CmpBrU64LC {
        op: CmpOp,
        x: u32,
        v: u64,
        t: u32,
        when: bool,
    },
    /// Register forms of reads through a reference (`place`) of `n`
    /// plain bytes into `dst`, the reference's slot: `borrow_loc |
    /// copy_loc; borrow_field; read_ref` (the field at `off`) and
    /// `borrow_loc | copy_loc; copy_loc i; vec_borrow; read_ref` (element
    /// `i` of a vector of `e`). As [`Op::BinU64LL`], each instruction is
    /// charged in order; the reference slot holds what the original
    /// instructions put there whenever a charge may measure it.
    ReadField {
        place: Place,
        off: u32,
        dst: u32,
        n: u32,
    },
    ReadElem {
        place: Place,
        i: u32,
        e: L,
        dst: u32,
        n: u32,
    },
    Bin {
        op: BinOp,
        k: Kind,
        a: u32,
        b: u32,
    },
    CmpU64 {
        op: CmpOp,
        a: u32,
        b: u32,
    },
    Cmp {
        op: CmpOp,
        k: Kind,
        a: u32,
        b: u32,
    },
    Eq {
        a: u32,
        b: u32,
        l: L,
        neg: bool,
    },
    /// `Eq` of values equal exactly when their `n` bytes are (scalars,
    /// plain structs: `FlatLayout::bytewise_eq`, no heap memory to drop).
    EqBytes {
        a: u32,
        b: u32,
        n: u32,
        neg: bool,
    },
    /// `EqBytes` fused with the `BrTrue` / `BrFalse` that pops its result:
    /// the branch is taken when `(a == b) == when`.
    EqBrBytes {
        a: u32,
        b: u32,
        n: u32,
        t: u32,
        when: bool,
    },
    And {
        a: u32,
        b: u32,
    },
    Or {
        a: u32,
        b: u32,
    },
    Not {
        a: u32,
    },
    Shift {
        left: bool,
        k: Kind,
        a: u32,
        b: u32,
    },
    Cast {
        from: Kind,
        to: Kind,
        a: u32,
    },
    Negate {
        k: Kind,
        a: u32,
    },
    Abort {
        a: u32,
    },
    AbortMsg {
        code: u32,
        msg: u32,
        l: L,
    },
    Call(Box<CallSite>),
    /// Pack `fields` (source slot, offset in the value, size) into `dst`;
    /// enums write `tag` at offset 0. `order`: how the fields move.
    Pack {
        dst: u32,
        size: u32,
        tag: Option<u16>,
        order: FieldOrder,
        fields: Box<[(u32, u32, u32)]>,
    },
    /// Unpack the value at `src` into (offset in the value, slot, size);
    /// enums check the tag first (`mismatch` status) and drop the value on a mismatch.
    Unpack {
        src: u32,
        l: L,
        tag: Option<(u16, StatusCode)>,
        order: FieldOrder,
        fields: Box<[(u32, u32, u32)]>,
    },
    TestVariant {
        r: u32,
        tag: u16,
    },
    /// Sui: references to the variant's fields, after a tag check.
    UnpackVariantRef {
        r: u32,
        tag: u16,
        fields: Box<[(u32, u32)]>,
    },
    VariantSwitch {
        r: u32,
        targets: Box<[u32]>,
    },
    VecPack {
        dst: u32,
        e: L,
        elems: Box<[u32]>,
    },
    VecLen {
        r: u32,
    },
    VecBorrow {
        r: u32,
        i: u32,
        e: L,
    },
    VecPush {
        r: u32,
        v: u32,
        e: L,
    },
    VecPop {
        r: u32,
        dst: u32,
        e: L,
    },
    VecUnpack {
        src: u32,
        n: u64,
        e: L,
        dsts: Box<[u32]>,
    },
    VecSwap {
        r: u32,
        i: u32,
        j: u32,
        e: L,
    },
    /// Global-storage instructions name their resource type by its
    /// interned id (the session's global cache is keyed by it).
    Exists {
        a: u32,
        ty: TypeId,
    },
    BorrowGlobal {
        a: u32,
        ty: TypeId,
        mutable: bool,
    },
    MoveFrom {
        a: u32,
        ty: TypeId,
    },
    MoveTo {
        s: u32,
        v: u32,
        ty: TypeId,
        l: L,
    },
    PackClosure(Box<ClosureSite>),
    CallClosure(Box<ClosureCallSite>),
}

/// How `Pack` / `Unpack` move their fields between the operand slots and
/// the value, which share frame memory (the value's slot is the first
/// field's). `Forward` / `Backward`: straight, field by field in that
/// order of the value's offsets, no field landing on a source not yet
/// moved ([`field_order`] proves it when preparing); `Scratch`: through a
/// copy of all sources first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldOrder {
    Forward,
    Backward,
    Scratch,
}

/// The order (of `moves`' indices) in which `moves` (source, destination,
/// size) can run in place: each move may overlap its own source, never
/// the source of a later move.
pub(crate) fn field_order(moves: &[(u32, u32, u32)]) -> FieldOrder {
    let hits = |w: &(u32, u32, u32), r: &(u32, u32, u32)| {
        let (ws, we) = (u64::from(w.1), u64::from(w.1) + u64::from(w.2));
        let (rs, re) = (u64::from(r.0), u64::from(r.0) + u64::from(r.2));
        w.2 > 0 && r.2 > 0 && ws < re && rs < we
    };
    let safe =
        |seq: &[usize]| seq.iter().enumerate().all(|(k, &i)| seq[k + 1..].iter().all(|&j| !hits(&moves[i], &moves[j])));
    let forward: Vec<usize> = (0..moves.len()).collect();
    let backward: Vec<usize> = (0..moves.len()).rev().collect();
    if safe(&forward) {
        FieldOrder::Forward
    } else if safe(&backward) {
        FieldOrder::Backward
    } else {
        FieldOrder::Scratch
    }
}

/// Where a register-form read starts: a local itself (`borrow_loc`) or
/// the reference a local holds (`copy_loc` / `move_loc` of a reference).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    Local(u32),
    RefIn(u32),
}

/// A prepared function instance.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub module: Arc<LoadedModule>,
    pub def: u16,
    pub ty_args: Arc<Vec<Type>>,
    pub ops: Vec<Op>,
    /// The opcode of each instruction (gas).
    pub opcodes: Vec<Opcode>,
    /// Operand-stack height after each instruction when it pushes more than
    /// it pops (0 otherwise): the stack limit is checked there.
    pub grows: Vec<u32>,
    pub frame_size: u32,
    /// Whether a new frame must start zeroed: some local or operand may
    /// own heap memory (dropped when zero, or read by the unwind) or a
    /// local has a flag byte ([`Held`]). Other frames hold plain bytes,
    /// each written before it is read, and skip the zeroing.
    pub zero_frame: bool,
    /// The largest operand-stack height (above which the limit is checked).
    pub max_height: u32,
    /// Offset of each parameter.
    pub params: Vec<(u32, L)>,
    /// Locals that may own heap memory (dropped when the frame returns).
    pub owned_locals: Vec<(u32, L)>,
    /// Operand-stack values that may own heap memory before each
    /// instruction: (stack depth, slot, layout). Read only when an error
    /// unwinds the frame.
    pub owned_stack: Vec<Box<[(u32, u32, L)]>>,
    /// Slots of the returned values at each `Ret` (by pc; empty elsewhere).
    pub ret_slots: Vec<Vec<u32>>,
    /// The loaded modules (id, address) this was prepared against.
    pub links: Vec<(movejit_runtime::ModuleId, usize)>,
    /// How many `Op::Call`s `ops` has ([`CallSite::index`] counts them).
    pub call_sites: u32,
    /// What each instruction charges under Aptos's schedule (by pc).
    pub gas: Vec<GasSite>,
    /// Type nodes of each local (parameters first): a new frame builds them.
    pub local_nodes: Box<[u64]>,
    /// The instance's process-wide number (`movejit_runtime::intern::
    /// instance_id`): Aptos's meter keys its instantiations by it.
    pub instance_id: u32,
    /// What compiled code knows about this instance, for every session.
    pub compiled_hint: movejit_runtime::compiled::CompiledHint,
    /// Loop back edges taken while interpreted ([`Op::LoopBranch`]).
    pub loop_heat: LoopHeat,
    /// What the call sites reach in one warm module set, for every
    /// session over it ([`super::SiteTargets`]).
    pub site_targets: super::SiteTargets,
}

/// Loop back edges an instance took, over all sessions and threads, up to
/// the engine's `JitOptions::loop_threshold` (then its compiled code is
/// asked for, once). Lost updates between threads only delay that.
#[derive(Debug, Default)]
pub(crate) struct LoopHeat {
    taken: std::sync::atomic::AtomicU32,
    hot_at: u32,
}

impl LoopHeat {
    /// Counts a back edge; `true` for the one that makes the instance hot.
    #[inline(always)]
    pub fn take(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let n = self.taken.load(Relaxed);
        if n >= self.hot_at {
            return false;
        }
        self.taken.store(n + 1, Relaxed);
        n + 1 == self.hot_at
    }
}

/// Back edges become [`Op::LoopBranch`] (not fused: the pair's first op
/// keeps its own meaning when jumped to, so fusing is only skipped).
fn count_loops(ops: &mut [Op]) {
    for (pc, op) in ops.iter_mut().enumerate() {
        let back = match *op {
            Op::Branch { t } if t as usize <= pc => Some((t, None)),
            Op::BrTrue { c, t } if t as usize <= pc => Some((t, Some((c, true)))),
            Op::BrFalse { c, t } if t as usize <= pc => Some((t, Some((c, false)))),
            _ => None,
        };
        if let Some((t, cond)) = back {
            *op = Op::LoopBranch { t, cond };
        }
    }
}

/// An instruction's charges under Aptos's schedule that its prepared site
/// fixes: the counts its formula multiplies, the type nodes it builds
/// first, and which value a value-sized instruction measures.
#[derive(Clone, Debug, Default)]
pub(crate) struct GasSite {
    pub counts: SiteCounts,
    pub nodes: u64,
    pub measure: Measure,
    /// What it does to Aptos's memory usage (`copy_loc`, `read_ref` and
    /// `eq` / `neq` measure by `measure`).
    pub memory: Memory,
}

/// The values whose abstract sizes an instruction adds to or takes from
/// Aptos's memory usage (`MemoryTrackedGasMeter`).
#[derive(Clone, Debug, Default)]
pub(crate) enum Memory {
    #[default]
    None,
    /// Uses the stack sizes of values packed into a container (`pack`,
    /// `pack_closure`).
    UseStack(Box<[L]>),
    /// Releases the stack sizes of a struct's fields (`unpack`).
    ReleaseStack(Box<[L]>),
    /// Releases the stack sizes of the fields of the enum value in a frame
    /// slot, its tag included (`unpack_variant`).
    ReleaseVariant(u32, L),
    /// Uses (`vec_pack`, `vec_push_back`) or releases (`vec_unpack`) the
    /// packed size of `n` elements.
    UsePacked(L, u64),
    ReleasePacked(L, u64),
    /// As `UsePacked`, for elements whose packed size depends on their value
    /// (`AbstractSizes::packed_fixed`): the element values in these frame
    /// slots.
    UsePackedAt(L, Box<[u32]>),
    /// As `ReleasePacked`, for such elements: those of the vector value in
    /// a frame slot (`vec_unpack`).
    ReleasePackedIn(L, u32),
    /// Releases the last element's packed size when the vector a reference
    /// in a frame slot points to is not empty (`vec_pop_back`).
    PopBack(u32, L),
    /// Releases the heap size of the value in a frame slot (`pop`).
    ReleaseHeap(u32, L),
    /// Releases the heap size of the value a reference in a frame slot
    /// points to (`write_ref`: the old value).
    ReleaseHeapRef(u32, L),
    /// Uses the heap size of the constant the op loads (`ld_const`).
    Const,
    /// Uses the heap size of the value its `Measure` copies or reads
    /// (`copy_loc`, `read_ref`).
    UseCopy,
    /// Releases the heap sizes of the two values its `Measure` compares
    /// (`eq`, `neq`).
    ReleasePair,
    /// Releases the heap sizes of the locals that may hold a value when
    /// the frame returns (`ret`: Aptos's `charge_drop_frame`).
    DropFrame(Box<[FrameDrop]>),
    /// A tracked local now holds a value (`st_loc`: `true`) or not
    /// (`move_loc`).
    Track(Held, bool),
}

/// A local a returning frame drops, if it holds a value.
#[derive(Clone, Debug)]
pub(crate) struct FrameDrop {
    pub off: u32,
    pub l: L,
    pub held: Holds,
}

/// How a returning frame tells whether a local holds a value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Holds {
    /// It does on every path to this `ret`.
    Surely,
    /// By its bytes: all zero when it does not, or when what it holds has
    /// no heap part (`AbstractSizes::bytes_tell_held`).
    ByBytes,
    /// As its flag byte says.
    Flag(Held),
}

/// The flag byte of a local that only may hold a value at a return: it
/// holds one when the flag differs from `param` (frames start zeroed;
/// parameters start holding).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub flag: u32,
    pub param: bool,
}

/// The value whose abstract size prices an instruction.
#[derive(Clone, Debug, Default)]
pub(crate) enum Measure {
    #[default]
    None,
    /// The value in a frame slot (`copy_loc`).
    Slot(u32, L),
    /// The value a reference in a frame slot points to (`read_ref`).
    Ref(u32, L),
    /// Two operands, references dereferenced (`eq`, `neq`).
    Pair(u32, u32, L),
    /// The fields of the enum value in a frame slot, its tag counted as
    /// one (`unpack_variant` is priced by the value's variant, before it
    /// is checked).
    Variant(u32, L),
}

pub(crate) struct Preparer<'a, 'e, 'r> {
    pub s: &'a Session<'e, 'r>,
    pub m: &'a Arc<LoadedModule>,
    pub ty_args: &'a [Type],
}

fn inv(m: &str) -> VmError {
    VmError::invariant(m)
}

impl Preparer<'_, '_, '_> {
    fn layout(&self, t: &Type) -> VmResult<L> {
        self.s.flat_layout(t)
    }

    fn sig(&self, i: SignatureIndex) -> VmResult<Vec<Type>> {
        self.m.sig_types(i, self.ty_args)
    }

    /// Type arguments of an instantiation, with the type depth limit.
    fn inst(&self, i: SignatureIndex) -> VmResult<Vec<Type>> {
        let tys = self.sig(i)?;
        if tys.iter().any(|t| t.depth() > self.s.engine.config.limits.max_type_depth) {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
        }
        Ok(tys)
    }

    fn struct_ty(&self, sd: StructDefinitionIndex, args: Vec<Type>) -> VmResult<Type> {
        let d = self.m.module.struct_defs.get(sd.idx()).ok_or_else(|| inv("struct def"))?;
        Ok(Type::Datatype(self.m.datatype_id(d.struct_handle)?, args))
    }

    fn struct_fields(&self, sd: StructDefinitionIndex, args: &[Type]) -> VmResult<Vec<Type>> {
        match self.m.module.struct_defs.get(sd.idx()).map(|d| &d.field_information) {
            Some(StructFieldInformation::Declared(fs)) => {
                fs.iter().map(|f| self.m.to_type(&f.signature, args)).collect()
            }
            _ => Err(inv("not a plain struct")),
        }
    }

    fn variant_fields(&self, sd: StructDefinitionIndex, v: u16, args: &[Type]) -> VmResult<Vec<Type>> {
        match self.m.module.struct_defs.get(sd.idx()).map(|d| &d.field_information) {
            Some(StructFieldInformation::DeclaredVariants(vs)) => vs
                .get(v as usize)
                .ok_or_else(|| inv("variant"))?
                .fields
                .iter()
                .map(|f| self.m.to_type(&f.signature, args))
                .collect(),
            _ => Err(inv("not an enum")),
        }
    }

    /// Sui enum `e`: its type and variant `v`'s field types.
    fn sui_variant(&self, e: u16, v: u16, args: Vec<Type>) -> VmResult<(Type, Vec<Type>)> {
        let ed = self.m.module.enum_defs.get(e as usize).ok_or_else(|| inv("enum def"))?;
        let fs = ed
            .variants
            .get(v as usize)
            .ok_or_else(|| inv("variant"))?
            .fields
            .iter()
            .map(|f| self.m.to_type(&f.signature, &args))
            .collect::<VmResult<Vec<_>>>()?;
        Ok((Type::Datatype(self.m.datatype_id(ed.enum_handle)?, args), fs))
    }

    fn generic_struct(
        &self,
        i: movejit_format::StructDefInstantiationIndex,
    ) -> VmResult<(StructDefinitionIndex, Vec<Type>)> {
        let inst = self.m.module.struct_def_instantiations.get(i.idx()).ok_or_else(|| inv("struct inst"))?;
        Ok((inst.def, self.inst(inst.type_parameters)?))
    }

    fn check_value_depth(&self, t: &Type) -> VmResult<()> {
        if self.s.type_value_depth_shared(t)? > self.s.engine.config.limits.max_value_depth {
            return Err(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED));
        }
        Ok(())
    }
}

/// The engine-wide id of a resource type (looked up by structure here,
/// once per instance, never when the instruction runs).
fn intern(t: &Type) -> VmResult<TypeId> {
    TypeTable::shared().intern(t)
}

fn pop(st: &mut Vec<Type>) -> VmResult<Type> {
    st.pop().ok_or_else(|| VmError::new(StatusCode::EMPTY_VALUE_STACK))
}

/// Whether [`Preparer::gas_site`] reads the types on the stack before
/// `instr` (not only their number).
fn gas_reads_types(instr: &Bytecode) -> bool {
    use Bytecode as B;
    matches!(
        instr,
        B::ReadRef
            | B::Pop
            | B::WriteRef
            | B::Pack(_)
            | B::PackVariant(_)
            | B::PackClosure(..)
            | B::PackClosureGeneric(..)
            | B::Eq
            | B::Neq
            | B::PackGeneric(_)
            | B::PackVariantGeneric(_)
            | B::UnpackGeneric(_)
            | B::UnpackVariant(_)
            | B::UnpackVariantGeneric(_)
            | B::ImmBorrowFieldGeneric(_)
            | B::MutBorrowFieldGeneric(_)
            | B::ImmBorrowVariantFieldGeneric(_)
            | B::MutBorrowVariantFieldGeneric(_)
            | B::TestVariantGeneric(_)
    )
}

fn deref_ty(t: &Type) -> VmResult<Type> {
    match t {
        Type::Reference(t) | Type::MutableReference(t) => Ok((**t).clone()),
        t => Err(VmError::invariant(format!("expected a reference, got {t}"))),
    }
}

fn field_off(l: &FlatLayout, i: usize) -> VmResult<u32> {
    match &l.shape {
        Shape::Struct(fs) => fs.get(i).map(|f| f.offset).ok_or_else(|| inv("field")),
        _ => Err(inv("field of a non-struct")),
    }
}

fn variant_offs(l: &FlatLayout, v: u16) -> VmResult<Vec<(u32, u32)>> {
    match &l.shape {
        Shape::Enum(vs) => {
            Ok(vs.get(v as usize).ok_or_else(|| inv("variant"))?.iter().map(|f| (f.offset, f.layout.size)).collect())
        }
        _ => Err(inv("variant of a non-enum")),
    }
}

/// [`field_order`] of a `Pack` into `dst` of `fields` (source slot,
/// offset in the value, size).
/// Direct packing also zeroes the bytes between the fields (as a value
/// built in zeroed memory has them): the fields must come in increasing,
/// disjoint offsets, after the tag of an enum.
pub(crate) fn pack_order(dst: u32, size: u32, tag: bool, fields: &[(u32, u32, u32)]) -> FieldOrder {
    let mut end = if tag { 2 } else { 0 };
    for &(_, off, n) in fields {
        if off < end {
            return FieldOrder::Scratch;
        }
        end = off.saturating_add(n);
    }
    if end > size {
        return FieldOrder::Scratch;
    }
    let moves: Vec<_> = fields.iter().map(|&(src, off, n)| (src, dst.saturating_add(off), n)).collect();
    field_order(&moves)
}

/// [`field_order`] of an `Unpack` of the value at `src` into `fields`
/// (offset in the value, slot, size).
pub(crate) fn unpack_order(src: u32, fields: &[(u32, u32, u32)]) -> FieldOrder {
    let moves: Vec<_> = fields.iter().map(|&(off, dst, n)| (src.saturating_add(off), dst, n)).collect();
    field_order(&moves)
}

fn struct_offs(l: &FlatLayout) -> VmResult<Vec<(u32, u32)>> {
    match &l.shape {
        Shape::Struct(fs) => Ok(fs.iter().map(|f| (f.offset, f.layout.size)).collect()),
        _ => Err(inv("fields of a non-struct")),
    }
}

/// Operand slot offsets of the frame being built (by stack depth).
struct Slots<'a> {
    locals: &'a [u32],
    ops: &'a [u32],
}

impl Slots<'_> {
    fn local(&self, i: u8) -> VmResult<u32> {
        self.locals.get(i as usize).copied().ok_or_else(|| inv("local index"))
    }
    fn at(&self, depth: usize) -> u32 {
        // Pass 1 has no offsets yet.
        self.ops.get(depth).copied().unwrap_or(0)
    }
}

impl Preparer<'_, '_, '_> {
    /// Applies `instr` to the type stack `st` and builds its op.
    #[allow(clippy::too_many_lines)]
    /// The Aptos charges of `instr`: `h` values on the type stack before
    /// it (`before`: that stack, when [`gas_reads_types`] says it is
    /// needed; empty otherwise), `after` it.
    fn gas_site(
        &self,
        instr: &Bytecode,
        h: usize,
        before: &[Type],
        after: &[Type],
        locals: &[Type],
        sl: &Slots<'_>,
    ) -> VmResult<GasSite> {
        use Bytecode as B;
        let nodes = |ts: &[Type]| ts.iter().map(Type::num_nodes).sum::<u64>();
        let deref_nodes = |t: Option<&Type>| t.map(|t| deref_ty(t).map_or(0, |t| t.num_nodes())).unwrap_or(0);
        let k = after.len();
        let units = |n: usize| SiteCounts { units: n as u64, ..SiteCounts::default() };
        let elem_nodes = |si: &movejit_format::SignatureIndex| -> VmResult<u64> { Ok(nodes(&self.sig(*si)?)) };
        let mut g = GasSite { memory: self.memory_site(instr, h, before, after, sl)?, ..GasSite::default() };
        match instr {
            B::LdConst(i) => {
                let c = self.m.module.constant_pool.get(i.idx()).ok_or_else(|| inv("constant"))?;
                g.nodes = self.m.to_type(&c.type_, &[])?.num_nodes();
                g.counts = units(c.data.len());
            }
            B::CopyLoc(i) => {
                let t = locals.get(*i as usize).ok_or_else(|| inv("local"))?;
                g.measure = Measure::Slot(sl.local(*i)?, self.layout(t)?);
            }
            B::ReadRef => {
                let t = deref_ty(before.last().ok_or_else(|| inv("read_ref"))?)?;
                g.measure = Measure::Ref(sl.at(h - 1), self.layout(&t)?);
            }
            B::Eq | B::Neq if h >= 2 => {
                g.measure = Measure::Pair(sl.at(h - 2), sl.at(h - 1), self.layout(&before[h - 1])?);
            }
            B::Pack(_) | B::PackVariant(_) => g.counts = units((h + 1).saturating_sub(k)),
            B::Unpack(_) => g.counts = units((k + 1).saturating_sub(h)),
            B::UnpackVariant(_) => g.measure = Measure::Variant(sl.at(h - 1), self.layout(&before[h - 1])?),
            B::PackGeneric(_) | B::PackVariantGeneric(_) => {
                let n = (h + 1).saturating_sub(k);
                g.nodes = nodes(&before[h - n..]) + nodes(&after[k - 1..]);
                g.counts = units(n);
            }
            B::UnpackGeneric(_) | B::UnpackVariantGeneric(_) => {
                let n = (k + 1).saturating_sub(h);
                g.nodes = nodes(&after[k - n..]) + nodes(&before[h - 1..]);
                g.counts = units(n);
                if matches!(instr, B::UnpackVariantGeneric(_)) {
                    g.measure = Measure::Variant(sl.at(h - 1), self.layout(&before[h - 1])?);
                }
            }
            B::ImmBorrowFieldGeneric(_)
            | B::MutBorrowFieldGeneric(_)
            | B::ImmBorrowVariantFieldGeneric(_)
            | B::MutBorrowVariantFieldGeneric(_) => g.nodes = deref_nodes(before.last()) + deref_nodes(after.last()),
            B::TestVariantGeneric(_) => g.nodes = deref_nodes(before.last()),
            B::ImmBorrowGlobalGeneric(si)
            | B::MutBorrowGlobalGeneric(si)
            | B::ExistsGeneric(si)
            | B::MoveFromGeneric(si)
            | B::MoveToGeneric(si) => {
                let (sd, args) = self.generic_struct(*si)?;
                g.nodes = self.struct_ty(sd, args)?.num_nodes();
            }
            B::VecPack(si, n) | B::VecUnpack(si, n) => {
                g.nodes = elem_nodes(si)?;
                g.counts = SiteCounts { units: *n, ..SiteCounts::default() };
            }
            B::VecLen(si)
            | B::VecImmBorrow(si)
            | B::VecMutBorrow(si)
            | B::VecPushBack(si)
            | B::VecPopBack(si)
            | B::VecSwap(si) => g.nodes = elem_nodes(si)?,
            B::PackClosure(_, mask) => g.counts = units(mask.captured_count()),
            B::PackClosureGeneric(fi, mask) => {
                let inst = self.m.module.function_instantiations.get(fi.idx()).ok_or_else(|| inv("fn inst"))?;
                g.nodes = nodes(&self.inst(inst.type_parameters)?);
                g.counts = units(mask.captured_count());
            }
            B::CallGeneric(fi) => {
                let inst = self.m.module.function_instantiations.get(fi.idx()).ok_or_else(|| inv("fn inst"))?;
                let tys = self.inst(inst.type_parameters)?;
                g.nodes = nodes(&tys);
                g.counts.ty_args = tys.len() as u64;
            }
            _ => {}
        }
        Ok(g)
    }

    /// What `instr` does to Aptos's memory usage (see [`Memory`]; `ret`'s
    /// frame drop is added by `prepare`, which knows the locals' state).
    fn memory_site(
        &self,
        instr: &Bytecode,
        h: usize,
        before: &[Type],
        after: &[Type],
        sl: &Slots<'_>,
    ) -> VmResult<Memory> {
        use Bytecode as B;
        let layouts = |ts: &[Type]| ts.iter().map(|t| self.layout(t)).collect::<VmResult<Box<[L]>>>();
        // The top `n` of a type stack.
        let top = |ts: &'_ [Type], n: usize| -> VmResult<Box<[L]>> {
            layouts(ts.get(ts.len().checked_sub(n).ok_or_else(|| inv("type stack"))?..).unwrap_or(&[]))
        };
        let last = || before.last().ok_or_else(|| inv("type stack"));
        let at_top = sl.at(h.wrapping_sub(1));
        let elem = |si: &SignatureIndex| -> VmResult<L> {
            self.layout(self.inst(*si)?.first().ok_or_else(|| inv("vector element type"))?)
        };
        let k = after.len();
        let vec_elem = || match instr {
            B::VecPack(si, _) | B::VecUnpack(si, _) | B::VecPushBack(si) | B::VecPopBack(si) => elem(si),
            _ => Err(inv("a vector instruction without an element type")),
        };
        // The runtime's one list of memory points; the frame slots and
        // layouts each measures are the interpreter's.
        Ok(match MemoryPoint::of(instr) {
            MemoryPoint::None => Memory::None,
            MemoryPoint::ReleaseTop => Memory::ReleaseHeap(at_top, self.layout(last()?)?),
            MemoryPoint::ReleaseTarget => Memory::ReleaseHeapRef(at_top, self.layout(&deref_ty(last()?)?)?),
            MemoryPoint::UseFields => match instr {
                B::PackClosure(_, mask) | B::PackClosureGeneric(_, mask) => {
                    Memory::UseStack(top(before, mask.captured_count())?)
                }
                _ => Memory::UseStack(top(before, (h + 1).saturating_sub(k))?),
            },
            MemoryPoint::ReleaseFields => Memory::ReleaseStack(top(after, (k + 1).saturating_sub(h))?),
            MemoryPoint::ReleaseVariant => Memory::ReleaseVariant(at_top, self.layout(last()?)?),
            MemoryPoint::UseElements(n) => match vec_elem()? {
                e if AbstractSizes::packed_fixed(&e) => Memory::UsePacked(e, n),
                // The top `n` operands (`vec_pack`'s elements, `vec_push_back`'s one).
                e => Memory::UsePackedAt(e, (h.saturating_sub(n as usize)..h).map(|d| sl.at(d)).collect()),
            },
            MemoryPoint::ReleaseElements(n) => match vec_elem()? {
                e if AbstractSizes::packed_fixed(&e) => Memory::ReleasePacked(e, n),
                e => Memory::ReleasePackedIn(e, at_top),
            },
            MemoryPoint::PopBack => Memory::PopBack(at_top, vec_elem()?),
            MemoryPoint::UseConst => Memory::Const,
            // Measured by the instruction's `Measure` (`charge_aptos`).
            MemoryPoint::UseCopy => Memory::UseCopy,
            MemoryPoint::ReleasePair => Memory::ReleasePair,
            // Added by `prepare`, which knows the locals' state.
            MemoryPoint::DropFrame => Memory::None,
        })
    }

    fn step(
        &self,
        instr: &Bytecode,
        st: &mut Vec<Type>,
        locals: &[Type],
        sl: &Slots<'_>,
        jump_tables: &[movejit_format::VariantJumpTable],
    ) -> VmResult<Op> {
        use Bytecode as B;
        let h = st.len();
        // Offset of the value `k` from the top (0 = top) before the instruction.
        let top = |k: usize| sl.at(h.wrapping_sub(k + 1));
        let m = &self.m.module;
        Ok(match instr {
            B::Nop => Op::Nop,
            B::Pop => {
                let t = pop(st)?;
                let l = self.layout(&t)?;
                if l.owns_heap {
                    Op::Drop { src: top(0), l }
                } else {
                    Op::Nop
                }
            }
            B::Ret => Op::Ret,
            B::BrTrue(t) | B::BrFalse(t) => {
                pop(st)?;
                let (c, t) = (top(0), *t as u32);
                if matches!(instr, B::BrTrue(_)) {
                    Op::BrTrue { c, t }
                } else {
                    Op::BrFalse { c, t }
                }
            }
            B::Branch(t) => Op::Branch { t: *t as u32 },
            B::LdU8(v) => self.ld(st, sl, Type::U8, &[*v]),
            B::LdU16(v) => self.ld(st, sl, Type::U16, &v.to_le_bytes()),
            B::LdU32(v) => self.ld(st, sl, Type::U32, &v.to_le_bytes()),
            B::LdU64(v) => {
                st.push(Type::U64);
                Op::LdU64 { dst: sl.at(h), v: *v }
            }
            B::LdU128(v) => self.ld(st, sl, Type::U128, &v.to_le_bytes()),
            B::LdU256(v) => self.ld(st, sl, Type::U256, &v.to_le_bytes()),
            B::LdI8(v) => self.ld(st, sl, Type::I8, &v.to_le_bytes()),
            B::LdI16(v) => self.ld(st, sl, Type::I16, &v.to_le_bytes()),
            B::LdI32(v) => self.ld(st, sl, Type::I32, &v.to_le_bytes()),
            B::LdI64(v) => {
                st.push(Type::I64);
                Op::LdU64 { dst: sl.at(h), v: *v as u64 }
            }
            B::LdI128(v) => self.ld(st, sl, Type::I128, &v.to_le_bytes()),
            B::LdI256(v) => self.ld(st, sl, Type::I256, &v.to_le_bytes()),
            B::LdTrue => self.ld(st, sl, Type::Bool, &[1]),
            B::LdFalse => self.ld(st, sl, Type::Bool, &[0]),
            B::LdConst(i) => {
                let c = m.constant_pool.get(i.idx()).ok_or_else(|| inv("constant"))?;
                let t = self.m.to_type(&c.type_, &[])?;
                st.push(t.clone());
                let l = self.layout(&t)?;
                let v = movejit_runtime::flat::bcs::deserialize(&c.data, l)
                    .map_err(|_| VmError::new(StatusCode::VERIFIER_INVARIANT_VIOLATION).with_message("bad constant"))?;
                Op::LdConst { dst: sl.at(h), v }
            }
            B::CopyLoc(i) => {
                let t = locals.get(*i as usize).ok_or_else(|| inv("local"))?.clone();
                st.push(t.clone());
                let l = self.layout(&t)?;
                let (src, dst) = (sl.local(*i)?, sl.at(h));
                if l.owns_heap {
                    Op::Copy { src, dst, l }
                } else {
                    move_bytes(src, dst, l.size)
                }
            }
            B::MoveLoc(i) => {
                let t = locals.get(*i as usize).ok_or_else(|| inv("local"))?.clone();
                st.push(t.clone());
                let l = self.layout(&t)?;
                let (src, dst) = (sl.local(*i)?, sl.at(h));
                if l.owns_heap {
                    Op::MoveOwned { src, dst, n: l.size }
                } else {
                    move_bytes(src, dst, l.size)
                }
            }
            B::StLoc(i) => {
                pop(st)?;
                let t = locals.get(*i as usize).ok_or_else(|| inv("local"))?;
                let l = self.layout(t)?;
                let (src, dst) = (top(0), sl.local(*i)?);
                if l.owns_heap {
                    Op::StLoc { src, dst, l }
                } else {
                    move_bytes(src, dst, l.size)
                }
            }
            B::MutBorrowLoc(i) | B::ImmBorrowLoc(i) => {
                let t = locals.get(*i as usize).ok_or_else(|| inv("local"))?.clone();
                st.push(if matches!(instr, B::MutBorrowLoc(_)) {
                    Type::MutableReference(Box::new(t))
                } else {
                    Type::Reference(Box::new(t))
                });
                Op::BorrowLoc { local: sl.local(*i)?, dst: sl.at(h) }
            }
            B::MutBorrowField(_) | B::ImmBorrowField(_) | B::MutBorrowFieldGeneric(_) | B::ImmBorrowFieldGeneric(_) => {
                let (fh, args) = match instr {
                    B::MutBorrowFieldGeneric(fi) | B::ImmBorrowFieldGeneric(fi) => {
                        let inst = m.field_instantiations.get(fi.idx()).ok_or_else(|| inv("field inst"))?;
                        (inst.handle, self.inst(inst.type_parameters)?)
                    }
                    _ => (*fh_of(instr).ok_or_else(|| inv("field"))?, Vec::new()),
                };
                let h_ = m.field_handles.get(fh.idx()).ok_or_else(|| inv("field handle"))?;
                pop(st)?;
                let ft =
                    self.struct_fields(h_.owner, &args)?.get(h_.field as usize).cloned().ok_or_else(|| inv("field"))?;
                let mutable = matches!(instr, B::MutBorrowField(_) | B::MutBorrowFieldGeneric(_));
                st.push(if mutable { Type::MutableReference(Box::new(ft)) } else { Type::Reference(Box::new(ft)) });
                let sl_ = self.layout(&self.struct_ty(h_.owner, args)?)?;
                Op::BorrowField { r: top(0), off: field_off(&sl_, h_.field as usize)? }
            }
            B::ImmBorrowVariantField(_)
            | B::MutBorrowVariantField(_)
            | B::ImmBorrowVariantFieldGeneric(_)
            | B::MutBorrowVariantFieldGeneric(_) => {
                let (vh, args) = match instr {
                    B::ImmBorrowVariantFieldGeneric(i) | B::MutBorrowVariantFieldGeneric(i) => {
                        let inst =
                            m.variant_field_instantiations.get(i.idx()).ok_or_else(|| inv("variant field inst"))?;
                        (inst.handle, self.inst(inst.type_parameters)?)
                    }
                    B::ImmBorrowVariantField(h) | B::MutBorrowVariantField(h) => (*h, Vec::new()),
                    _ => return Err(inv("unreachable")),
                };
                let vh = m.variant_field_handles.get(vh.idx()).ok_or_else(|| inv("variant field handle"))?;
                pop(st)?;
                let first = *vh.variants.first().ok_or_else(|| inv("variant field without variants"))?;
                let ft = self
                    .variant_fields(vh.struct_index, first, &args)?
                    .get(vh.field as usize)
                    .cloned()
                    .ok_or_else(|| inv("field"))?;
                let mutable = matches!(instr, B::MutBorrowVariantField(_) | B::MutBorrowVariantFieldGeneric(_));
                st.push(if mutable { Type::MutableReference(Box::new(ft)) } else { Type::Reference(Box::new(ft)) });
                let el = self.layout(&self.struct_ty(vh.struct_index, args)?)?;
                let mut variants = Vec::new();
                for v in &vh.variants {
                    let offs = variant_offs(&el, *v)?;
                    variants.push((*v, offs.get(vh.field as usize).ok_or_else(|| inv("field"))?.0));
                }
                Op::BorrowVariantField { r: top(0), variants: variants.into() }
            }
            B::Call(_) | B::CallGeneric(_) => {
                let (handle, targs) = match instr {
                    B::CallGeneric(fi) => {
                        let inst = m.function_instantiations.get(fi.idx()).ok_or_else(|| inv("fn inst"))?;
                        (inst.handle, self.inst(inst.type_parameters)?)
                    }
                    B::Call(h) => (*h, Vec::new()),
                    _ => return Err(inv("unreachable")),
                };
                let fh = m.function_handles.get(handle.idx()).ok_or_else(|| inv("function handle"))?;
                let sig_tokens = m.signatures.get(fh.parameters.idx()).ok_or_else(|| inv("signature"))?;
                let params = self.m.sig_types(fh.parameters, &targs)?;
                let rets = self.m.sig_types(fh.return_, &targs)?;
                let n = params.len();
                if n > h {
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n);
                st.extend(rets.iter().cloned());
                let mut args = Vec::with_capacity(n);
                for (i, p) in params.iter().enumerate() {
                    args.push((sl.at(h - n + i), self.layout(p)?));
                }
                let arg_mut = sig_tokens.0.iter().map(|t| matches!(t, SignatureToken::MutableReference(_))).collect();
                let mut rs = Vec::with_capacity(rets.len());
                for (i, r) in rets.iter().enumerate() {
                    rs.push((sl.at(h - n + i), self.layout(r)?));
                }
                let (args8, rets8) = (args.iter().all(|(_, l)| l.size == 8), rs.iter().all(|(_, l)| l.size == 8));
                Op::Call(Box::new(CallSite {
                    handle,
                    ty_args: Arc::new(targs),
                    args,
                    arg_mut,
                    rets: rs,
                    height_after: (h - n + rets.len()) as u32,
                    height_below: (h - n) as u32,
                    index: 0,
                    args8,
                    rets8,
                }))
            }
            B::Pack(_) | B::PackGeneric(_) => {
                let (sd, args) = match instr {
                    B::PackGeneric(si) => self.generic_struct(*si)?,
                    B::Pack(sd) => (*sd, Vec::new()),
                    _ => return Err(inv("unreachable")),
                };
                let fields = self.struct_fields(sd, &args)?;
                let n = fields.len();
                if n > h {
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n);
                let t = self.struct_ty(sd, args)?;
                st.push(t.clone());
                self.check_value_depth(&t)?;
                let l = self.layout(&t)?;
                let offs = struct_offs(&l)?;
                let fields: Box<[_]> =
                    offs.iter().enumerate().map(|(i, (off, size))| (sl.at(h - n + i), *off, *size)).collect();
                let order = pack_order(sl.at(h - n), l.size, false, &fields);
                Op::Pack { dst: sl.at(h - n), size: l.size, tag: None, order, fields }
            }
            B::Unpack(_) | B::UnpackGeneric(_) => {
                let (sd, args) = match instr {
                    B::UnpackGeneric(si) => self.generic_struct(*si)?,
                    B::Unpack(sd) => (*sd, Vec::new()),
                    _ => return Err(inv("unreachable")),
                };
                pop(st)?;
                let fields = self.struct_fields(sd, &args)?;
                st.extend(fields.iter().cloned());
                let l = self.layout(&self.struct_ty(sd, args)?)?;
                let offs = struct_offs(&l)?;
                let fields: Box<[_]> =
                    offs.iter().enumerate().map(|(i, (off, size))| (*off, sl.at(h - 1 + i), *size)).collect();
                let order = unpack_order(top(0), &fields);
                Op::Unpack { src: top(0), l, tag: None, order, fields }
            }
            B::PackVariant(_) | B::PackVariantGeneric(_) | B::SuiPackVariant(_) | B::SuiPackVariantGeneric(_) => {
                let (t, v, fields) = self.variant_of(instr)?;
                let n = fields.len();
                if n > h {
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n);
                st.push(t.clone());
                let l = self.layout(&t)?;
                let offs = variant_offs(&l, v)?;
                let fields: Box<[_]> =
                    offs.iter().enumerate().map(|(i, (off, size))| (sl.at(h - n + i), *off, *size)).collect();
                let order = pack_order(sl.at(h - n), l.size, true, &fields);
                Op::Pack { dst: sl.at(h - n), size: l.size, tag: Some(v), order, fields }
            }
            B::UnpackVariant(_)
            | B::UnpackVariantGeneric(_)
            | B::SuiUnpackVariant(_)
            | B::SuiUnpackVariantGeneric(_) => {
                let (t, v, fields) = self.variant_of(instr)?;
                pop(st)?;
                st.extend(fields.iter().cloned());
                let l = self.layout(&t)?;
                let offs = variant_offs(&l, v)?;
                let status = if matches!(instr, B::UnpackVariant(_) | B::UnpackVariantGeneric(_)) {
                    StatusCode::STRUCT_VARIANT_MISMATCH
                } else {
                    StatusCode::VARIANT_TAG_MISMATCH
                };
                let fields: Box<[_]> =
                    offs.iter().enumerate().map(|(i, (off, size))| (*off, sl.at(h - 1 + i), *size)).collect();
                let order = unpack_order(top(0), &fields);
                Op::Unpack { src: top(0), l, tag: Some((v, status)), order, fields }
            }
            B::TestVariant(_) | B::TestVariantGeneric(_) => {
                let (_, v, _) = self.variant_of(instr)?;
                pop(st)?;
                st.push(Type::Bool);
                Op::TestVariant { r: top(0), tag: v }
            }
            B::SuiUnpackVariantImmRef(_)
            | B::SuiUnpackVariantMutRef(_)
            | B::SuiUnpackVariantGenericImmRef(_)
            | B::SuiUnpackVariantGenericMutRef(_) => {
                let (t, v, fields) = self.variant_of(instr)?;
                pop(st)?;
                let mutable = matches!(instr, B::SuiUnpackVariantMutRef(_) | B::SuiUnpackVariantGenericMutRef(_));
                for f in &fields {
                    st.push(if mutable {
                        Type::MutableReference(Box::new(f.clone()))
                    } else {
                        Type::Reference(Box::new(f.clone()))
                    });
                }
                let l = self.layout(&t)?;
                let offs = variant_offs(&l, v)?;
                let fields = offs.iter().enumerate().map(|(i, (off, _))| (*off, sl.at(h - 1 + i))).collect();
                Op::UnpackVariantRef { r: top(0), tag: v, fields }
            }
            B::VariantSwitch(jt) => {
                pop(st)?;
                let table = jump_tables.get(jt.idx()).ok_or_else(|| inv("jump table"))?;
                Op::VariantSwitch { r: top(0), targets: table.jump_table.iter().map(|t| *t as u32).collect() }
            }
            B::ReadRef => {
                let t = deref_ty(&pop(st)?)?;
                st.push(t.clone());
                let l = self.layout(&t)?;
                if l.owns_heap {
                    Op::ReadRef { r: top(0), dst: top(0), l }
                } else {
                    Op::ReadRefBytes { r: top(0), dst: top(0), n: l.size }
                }
            }
            B::WriteRef => {
                let r = pop(st)?;
                pop(st)?;
                let l = self.layout(&deref_ty(&r)?)?;
                if l.owns_heap {
                    Op::WriteRef { r: top(0), v: top(1), l }
                } else {
                    Op::WriteRefBytes { r: top(0), v: top(1), n: l.size }
                }
            }
            B::FreezeRef => {
                let t = deref_ty(&pop(st)?)?;
                st.push(Type::Reference(Box::new(t)));
                Op::Nop
            }
            B::Add | B::Sub | B::Mul | B::Mod | B::Div | B::BitOr | B::BitAnd | B::Xor => {
                pop(st)?;
                let t = st.last().ok_or_else(|| VmError::new(StatusCode::EMPTY_VALUE_STACK))?;
                let k = int_kind(t)?;
                let op = match instr {
                    B::Add => BinOp::Add,
                    B::Sub => BinOp::Sub,
                    B::Mul => BinOp::Mul,
                    B::Mod => BinOp::Mod,
                    B::Div => BinOp::Div,
                    B::BitOr => BinOp::BitOr,
                    B::BitAnd => BinOp::BitAnd,
                    _ => BinOp::Xor,
                };
                let (a, b) = (top(1), top(0));
                if k == Kind::U64 {
                    Op::BinU64 { op, a, b }
                } else {
                    Op::Bin { op, k, a, b }
                }
            }
            B::Lt | B::Gt | B::Le | B::Ge => {
                pop(st)?;
                let k = int_kind(&pop(st)?)?;
                st.push(Type::Bool);
                let op = match instr {
                    B::Lt => CmpOp::Lt,
                    B::Gt => CmpOp::Gt,
                    B::Le => CmpOp::Le,
                    _ => CmpOp::Ge,
                };
                let (a, b) = (top(1), top(0));
                if k == Kind::U64 {
                    Op::CmpU64 { op, a, b }
                } else {
                    Op::Cmp { op, k, a, b }
                }
            }
            B::Eq | B::Neq => {
                pop(st)?;
                let t = pop(st)?;
                st.push(Type::Bool);
                let l = self.layout(&t)?;
                let (a, b, neg) = (top(1), top(0), matches!(instr, B::Neq));
                if l.bytewise_eq && !l.owns_heap {
                    Op::EqBytes { a, b, n: l.size, neg }
                } else {
                    Op::Eq { a, b, l, neg }
                }
            }
            B::And | B::Or => {
                pop(st)?;
                let (a, b) = (top(1), top(0));
                if matches!(instr, B::And) {
                    Op::And { a, b }
                } else {
                    Op::Or { a, b }
                }
            }
            B::Not => Op::Not { a: top(0) },
            B::Shl | B::Shr => {
                pop(st)?;
                let k = int_kind(st.last().ok_or_else(|| VmError::new(StatusCode::EMPTY_VALUE_STACK))?)?;
                Op::Shift { left: matches!(instr, B::Shl), k, a: top(1), b: top(0) }
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
                let from = int_kind(&pop(st)?)?;
                let to = Kind::cast_target(instr).ok_or_else(|| VmError::invariant("cast target"))?;
                st.push(to.to_type());
                Op::Cast { from, to, a: top(0) }
            }
            B::Negate => Op::Negate {
                k: int_kind(st.last().ok_or_else(|| VmError::new(StatusCode::EMPTY_VALUE_STACK))?)?,
                a: top(0),
            },
            B::Abort => {
                pop(st)?;
                Op::Abort { a: top(0) }
            }
            B::AbortMsg => {
                let t = pop(st)?;
                pop(st)?;
                Op::AbortMsg { code: top(1), msg: top(0), l: self.layout(&t)? }
            }
            B::Exists(_) | B::ExistsGeneric(_) => {
                let ty = self.global_ty(instr)?;
                pop(st)?;
                st.push(Type::Bool);
                Op::Exists { a: top(0), ty: intern(&ty)? }
            }
            B::MutBorrowGlobal(_)
            | B::ImmBorrowGlobal(_)
            | B::MutBorrowGlobalGeneric(_)
            | B::ImmBorrowGlobalGeneric(_) => {
                let ty = self.global_ty(instr)?;
                pop(st)?;
                let mutable = matches!(instr, B::MutBorrowGlobal(_) | B::MutBorrowGlobalGeneric(_));
                st.push(if mutable {
                    Type::MutableReference(Box::new(ty.clone()))
                } else {
                    Type::Reference(Box::new(ty.clone()))
                });
                self.layout(&ty)?;
                Op::BorrowGlobal { a: top(0), ty: intern(&ty)?, mutable }
            }
            B::MoveFrom(_) | B::MoveFromGeneric(_) => {
                let ty = self.global_ty(instr)?;
                pop(st)?;
                let id = intern(&ty)?;
                st.push(ty.clone());
                self.layout(&ty)?;
                Op::MoveFrom { a: top(0), ty: id }
            }
            B::MoveTo(_) | B::MoveToGeneric(_) => {
                let ty = self.global_ty(instr)?;
                pop(st)?;
                pop(st)?;
                let l = self.layout(&ty)?;
                Op::MoveTo { s: top(1), v: top(0), ty: intern(&ty)?, l }
            }
            B::VecPack(sig, n) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                let n = usize::try_from(*n).map_err(|_| inv("vec_pack size"))?;
                let vt = Type::Vector(Box::new(e.clone()));
                if n > h {
                    if n as u64 > self.s.engine.config.limits.max_vector_len {
                        return Err(VmError::vector(movejit_runtime::error::vec_err::VEC_SIZE_LIMIT_REACHED));
                    }
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n);
                st.push(vt.clone());
                self.check_value_depth(&vt)?;
                if n as u64 > self.s.engine.config.limits.max_vector_len {
                    return Err(VmError::vector(movejit_runtime::error::vec_err::VEC_SIZE_LIMIT_REACHED));
                }
                let el = self.layout(&e)?;
                Op::VecPack { dst: sl.at(h - n), e: el, elems: (0..n).map(|i| sl.at(h - n + i)).collect() }
            }
            B::VecLen(_) => {
                pop(st)?;
                st.push(Type::U64);
                Op::VecLen { r: top(0) }
            }
            B::VecImmBorrow(sig) | B::VecMutBorrow(sig) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                pop(st)?;
                pop(st)?;
                st.push(if matches!(instr, B::VecMutBorrow(_)) {
                    Type::MutableReference(Box::new(e.clone()))
                } else {
                    Type::Reference(Box::new(e.clone()))
                });
                Op::VecBorrow { r: top(1), i: top(0), e: self.layout(&e)? }
            }
            B::VecPushBack(sig) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                pop(st)?;
                pop(st)?;
                Op::VecPush { r: top(1), v: top(0), e: self.layout(&e)? }
            }
            B::VecPopBack(sig) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                pop(st)?;
                st.push(e.clone());
                Op::VecPop { r: top(0), dst: top(0), e: self.layout(&e)? }
            }
            B::VecUnpack(sig, n) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                pop(st)?;
                let n = *n;
                if n > self.s.engine.config.limits.max_operand_stack as u64 {
                    // More values than the operand stack holds: no slots;
                    // the op checks the length, then overflows.
                    return Ok(Op::VecUnpack { src: top(0), n, e: self.layout(&e)?, dsts: Box::new([]) });
                }
                for _ in 0..n {
                    st.push(e.clone());
                }
                Op::VecUnpack {
                    src: top(0),
                    n,
                    e: self.layout(&e)?,
                    dsts: (0..n as usize).map(|i| sl.at(h - 1 + i)).collect(),
                }
            }
            B::VecSwap(sig) => {
                let e = self.inst(*sig)?.into_iter().next().ok_or_else(|| inv("vector element type"))?;
                pop(st)?;
                pop(st)?;
                pop(st)?;
                Op::VecSwap { r: top(2), i: top(1), j: top(0), e: self.layout(&e)? }
            }
            B::PackClosure(_, mask) | B::PackClosureGeneric(_, mask) => {
                let (handle, targs) = match instr {
                    B::PackClosureGeneric(fi, _) => {
                        let inst = m.function_instantiations.get(fi.idx()).ok_or_else(|| inv("fn inst"))?;
                        (inst.handle, self.inst(inst.type_parameters)?)
                    }
                    B::PackClosure(h, _) => (*h, Vec::new()),
                    _ => return Err(inv("unreachable")),
                };
                let fh = m.function_handles.get(handle.idx()).ok_or_else(|| inv("function handle"))?;
                let params = self.m.sig_types(fh.parameters, &targs)?;
                let rets = self.m.sig_types(fh.return_, &targs)?;
                let mask = mask.0;
                let captured_tys: Vec<Type> = params
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i < 64 && (mask >> i) & 1 == 1)
                    .map(|(_, t)| t.clone())
                    .collect();
                let rest: Vec<Type> = params
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !(*i < 64 && (mask >> i) & 1 == 1))
                    .map(|(_, t)| t.clone())
                    .collect();
                let n = captured_tys.len();
                if n > h {
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n);
                st.push(Type::Function(rest, rets, AbilitySet::EMPTY));
                let mut captured = Vec::with_capacity(n);
                for (i, t) in captured_tys.iter().enumerate() {
                    captured.push((sl.at(h - n + i), self.layout(t)?));
                }
                Op::PackClosure(Box::new(ClosureSite {
                    handle,
                    ty_args: targs,
                    mask,
                    captured,
                    captured_tys,
                    dst: sl.at(h - n),
                }))
            }
            B::CallClosure(sig) => {
                let (params, rets) = match m.signatures.get(sig.idx()).and_then(|s| s.0.first()) {
                    Some(SignatureToken::Function(p, r, _)) => (
                        p.iter().map(|t| self.m.to_type(t, self.ty_args)).collect::<VmResult<Vec<_>>>()?,
                        r.iter().map(|t| self.m.to_type(t, self.ty_args)).collect::<VmResult<Vec<_>>>()?,
                    ),
                    _ => return Err(inv("call_closure signature")),
                };
                let n = params.len();
                if n + 1 > h {
                    return Err(VmError::new(StatusCode::EMPTY_VALUE_STACK));
                }
                st.truncate(h - n - 1);
                st.extend(rets.iter().cloned());
                let below = h - n - 1;
                let mut args = Vec::with_capacity(n);
                for (i, p) in params.iter().enumerate() {
                    args.push((sl.at(below + i), self.layout(p)?));
                }
                let mut rs = Vec::with_capacity(rets.len());
                for (i, r) in rets.iter().enumerate() {
                    rs.push((sl.at(below + i), self.layout(r)?));
                }
                Op::CallClosure(Box::new(ClosureCallSite {
                    closure: top(0),
                    args,
                    rets: rs,
                    height_after: (below + rets.len()) as u32,
                    height_below: below as u32,
                }))
            }
        })
    }

    fn ld(&self, st: &mut Vec<Type>, sl: &Slots<'_>, t: Type, bytes: &[u8]) -> Op {
        let h = st.len();
        st.push(t);
        match bytes {
            [b] => Op::Ld1 { dst: sl.at(h), v: *b },
            _ => Op::LdBytes { dst: sl.at(h), v: bytes.into() },
        }
    }

    fn global_ty(&self, instr: &Bytecode) -> VmResult<Type> {
        use Bytecode as B;
        match instr {
            B::Exists(sd) | B::MutBorrowGlobal(sd) | B::ImmBorrowGlobal(sd) | B::MoveFrom(sd) | B::MoveTo(sd) => {
                self.struct_ty(*sd, Vec::new())
            }
            B::ExistsGeneric(si)
            | B::MutBorrowGlobalGeneric(si)
            | B::ImmBorrowGlobalGeneric(si)
            | B::MoveFromGeneric(si)
            | B::MoveToGeneric(si) => {
                let (sd, args) = self.generic_struct(*si)?;
                self.struct_ty(sd, args)
            }
            _ => Err(inv("not a global instruction")),
        }
    }

    /// The enum type, variant and variant field types of a variant instruction.
    fn variant_of(&self, instr: &Bytecode) -> VmResult<(Type, u16, Vec<Type>)> {
        use Bytecode as B;
        let m = &self.m.module;
        let aptos =
            |h: movejit_format::StructVariantHandleIndex, args: Vec<Type>| -> VmResult<(Type, u16, Vec<Type>)> {
                let vh = m.struct_variant_handles.get(h.idx()).ok_or_else(|| inv("variant handle"))?;
                let fs = self.variant_fields(vh.struct_index, vh.variant, &args)?;
                Ok((self.struct_ty(vh.struct_index, args)?, vh.variant, fs))
            };
        match instr {
            B::PackVariant(h) | B::UnpackVariant(h) | B::TestVariant(h) => aptos(*h, Vec::new()),
            B::PackVariantGeneric(i) | B::UnpackVariantGeneric(i) | B::TestVariantGeneric(i) => {
                let inst = m.struct_variant_instantiations.get(i.idx()).ok_or_else(|| inv("variant inst"))?;
                aptos(inst.handle, self.inst(inst.type_parameters)?)
            }
            B::SuiPackVariant(h)
            | B::SuiUnpackVariant(h)
            | B::SuiUnpackVariantImmRef(h)
            | B::SuiUnpackVariantMutRef(h) => {
                let vh = m.variant_handles.get(h.idx()).ok_or_else(|| inv("variant handle"))?;
                let (t, fs) = self.sui_variant(vh.enum_def.0, vh.variant, Vec::new())?;
                Ok((t, vh.variant, fs))
            }
            B::SuiPackVariantGeneric(h)
            | B::SuiUnpackVariantGeneric(h)
            | B::SuiUnpackVariantGenericImmRef(h)
            | B::SuiUnpackVariantGenericMutRef(h) => {
                let vh = m.variant_instantiation_handles.get(h.idx()).ok_or_else(|| inv("variant handle"))?;
                let inst = m.enum_def_instantiations.get(vh.enum_def.idx()).ok_or_else(|| inv("enum inst"))?;
                let args = self.inst(inst.type_parameters)?;
                let (t, fs) = self.sui_variant(inst.def.0, vh.variant, args)?;
                Ok((t, vh.variant, fs))
            }
            _ => Err(inv("not a variant instruction")),
        }
    }
}

/// The second operand of a register-form group: a local or a constant.
enum Operand {
    Local(u32),
    Const(u64),
}

/// Fuses u64 groups into register forms (see [`Op::BinU64LL`]). Frame
/// offsets below `locals_end` are locals, the others operand slots.
fn fuse_groups(ops: &mut [Op], locals_end: u32) {
    let local = |o: u32| o < locals_end;
    let slot = |o: u32| o >= locals_end;
    for i in 0..ops.len() {
        let group = &ops[i..ops.len().min(i + 4)];
        let [Op::Move8 { src: x, dst: d0 }, second, third, rest @ ..] = group else { continue };
        let (x, d0) = (*x, *d0);
        if !local(x) || !slot(d0) {
            continue;
        }
        // The second operand, pushed into `d1`.
        let (y, d1) = match second {
            Op::Move8 { src, dst } if local(*src) => (Operand::Local(*src), *dst),
            Op::LdU64 { dst, v } => (Operand::Const(*v), *dst),
            _ => continue,
        };
        if !slot(d1) || d1 == d0 {
            continue;
        }
        let fused = match (third, rest.first()) {
            (Op::BinU64 { op, a, b }, next) if *a == d0 && *b == d1 => {
                let (dst, len) = match next {
                    Some(Op::Move8 { src, dst }) if *src == d0 && local(*dst) => (*dst, 4),
                    _ => (d0, 3),
                };
                match y {
                    Operand::Local(y) => Op::BinU64LL { op: *op, x, y, dst, len },
                    Operand::Const(v) => Op::BinU64LC { op: *op, x, v, dst, len },
                }
            }
            (Op::CmpU64 { op, a, b }, Some(Op::BrTrue { c, t } | Op::BrFalse { c, t }))
                if *a == d0 && *b == d1 && *c == d0 =>
            {
                let when = matches!(rest.first(), Some(Op::BrTrue { .. }));
                match y {
                    Operand::Local(y) => Op::CmpBrU64LL { op: *op, x, y, t: *t, when },
                    Operand::Const(v) => Op::CmpBrU64LC { op: *op, x, v, t: *t, when },
                }
            }
            _ => continue,
        };
        ops[i] = fused;
    }
}

/// Fuses reads through a reference made from a local (see
/// [`Op::ReadField`]). Offsets below `locals_end` are locals.
fn fuse_reads(ops: &mut [Op], locals_end: u32) {
    let local = |o: u32| o < locals_end;
    for i in 0..ops.len() {
        let group = &ops[i..ops.len().min(i + 4)];
        let (place, d0) = match group.first() {
            Some(Op::BorrowLoc { local: l, dst }) => (Place::Local(*l), *dst),
            Some(Op::Move8 { src, dst }) if local(*src) => (Place::RefIn(*src), *dst),
            _ => continue,
        };
        if local(d0) {
            continue;
        }
        let fused = match group {
            [_, Op::BorrowField { r, off }, Op::ReadRefBytes { r: r2, dst, n }, ..]
                if *r == d0 && *r2 == d0 && *dst == d0 =>
            {
                Op::ReadField { place, off: *off, dst: d0, n: *n }
            }
            [_, Op::Move8 { src: i, dst: d1 }, Op::VecBorrow { r, i: i2, e }, Op::ReadRefBytes { r: r2, dst, n }]
                if local(*i) && !local(*d1) && *d1 != d0 && *r == d0 && *i2 == *d1 && *r2 == d0 && *dst == d0 =>
            {
                Op::ReadElem { place, i: *i, e: e.clone(), dst: d0, n: *n }
            }
            _ => continue,
        };
        ops[i] = fused;
    }
}

/// Fuses frequent instruction pairs (see [`Op::LdBinU64`]).
fn fuse(ops: &mut [Op]) {
    for i in 0..ops.len().saturating_sub(1) {
        let fused = match (&ops[i], &ops[i + 1]) {
            (Op::LdU64 { dst, v }, Op::BinU64 { op, a, b }) if dst == b && a != b => {
                Some(Op::LdBinU64 { op: *op, a: *a, b: *b, v: *v })
            }
            (Op::LdU64 { dst, v }, Op::Bin { op, k: Kind::I64, a, b }) if dst == b && a != b => {
                Some(Op::LdBinI64 { op: *op, a: *a, b: *b, v: *v as i64 })
            }
            (Op::Move8 { src, dst }, Op::BinU64 { op, a, b }) if dst == b && a != b => {
                Some(Op::CopyBinU64 { op: *op, a: *a, b: *b, src: *src })
            }
            (Op::CmpU64 { op, a, b }, Op::BrTrue { c, t }) if c == a => {
                Some(Op::CmpBrU64 { op: *op, a: *a, b: *b, t: *t, when: true })
            }
            (Op::CmpU64 { op, a, b }, Op::BrFalse { c, t }) if c == a => {
                Some(Op::CmpBrU64 { op: *op, a: *a, b: *b, t: *t, when: false })
            }
            (Op::EqBytes { a, b, n, neg }, Op::BrTrue { c, t }) if c == a => {
                Some(Op::EqBrBytes { a: *a, b: *b, n: *n, t: *t, when: !*neg })
            }
            (Op::EqBytes { a, b, n, neg }, Op::BrFalse { c, t }) if c == a => {
                Some(Op::EqBrBytes { a: *a, b: *b, n: *n, t: *t, when: *neg })
            }
            _ => None,
        };
        if let Some(f) = fused {
            ops[i] = f;
        }
    }
}

fn move_bytes(src: u32, dst: u32, n: u32) -> Op {
    match n {
        1 => Op::Move1 { src, dst },
        8 => Op::Move8 { src, dst },
        16 => Op::Move16 { src, dst },
        32 => Op::Move32 { src, dst },
        _ => Op::MoveBytes { src, dst, n },
    }
}

fn fh_of(instr: &Bytecode) -> Option<&movejit_format::FieldHandleIndex> {
    match instr {
        Bytecode::MutBorrowField(h) | Bytecode::ImmBorrowField(h) => Some(h),
        _ => None,
    }
}

/// Prepares `def` of `m` for `ty_args`.
pub(crate) fn prepare(
    s: &Session<'_, '_>,
    m: &Arc<LoadedModule>,
    def: u16,
    ty_args: Arc<Vec<Type>>,
    links: Vec<(movejit_runtime::ModuleId, usize)>,
) -> VmResult<Prepared> {
    let fdef = m.module.function_defs.get(def as usize).ok_or_else(|| inv("function definition"))?;
    let code = fdef.code.as_ref().ok_or_else(|| inv("prepare of a native"))?;
    let fh = m.module.function_handles.get(fdef.function.idx()).ok_or_else(|| inv("function handle"))?;
    let p = Preparer { s, m, ty_args: &ty_args };
    let params = p.sig(fh.parameters)?;
    let mut locals = params.clone();
    locals.extend(p.sig(code.locals)?);
    let ret_tys = p.sig(fh.return_)?;
    let local_layouts = locals.iter().map(|t| p.layout(t)).collect::<VmResult<Vec<_>>>()?;
    let n = code.code.len();

    // Pass 1: the type stack before each instruction.
    let mut states: Vec<Option<Vec<Type>>> = vec![None; n];
    let mut work = vec![0usize];
    if n > 0 {
        states[0] = Some(Vec::new());
    }
    let dummy_locals = vec![0u32; locals.len()];
    let empty = Slots { locals: &dummy_locals, ops: &[] };
    let mut max_size: Vec<u32> = Vec::new();
    while let Some(pc) = work.pop() {
        let Some(mut st) = states[pc].clone() else { continue };
        let instr = &code.code[pc];
        match p.step(instr, &mut st, &locals, &empty, &code.jump_tables) {
            // Always fails: nothing follows it.
            Err(_) | Ok(Op::Fail(_)) => continue,
            Ok(Op::VecUnpack { n, dsts, .. }) if dsts.len() as u64 != n => continue,
            Ok(_) => {}
        }
        for (d, t) in st.iter().enumerate() {
            if let Ok(l) = p.layout(t) {
                if max_size.len() <= d {
                    max_size.resize(d + 1, 0);
                }
                max_size[d] = max_size[d].max(l.size);
            }
        }
        for succ in movejit_format::cfg::successors(code, pc) {
            if succ < n && states[succ].is_none() {
                states[succ] = Some(st.clone());
                work.push(succ);
            }
        }
    }

    // Only locals with a heap part are dropped at `ret`; most functions have
    // none, and skip the dataflow.
    let (may_hold, holds) = if local_layouts.iter().all(|l| AbstractSizes::heapless(l)) {
        (vec![LocalSet::default(); n], vec![LocalSet::default(); n])
    } else {
        (locals_held_sets(code, params.len(), true), locals_held_sets(code, params.len(), false))
    };
    // Locals whose value has a heap part that their bytes do not tell
    // (see `AbstractSizes::bytes_tell_held`), and that only may hold a value
    // at some return: under Aptos's meter a flag byte in the frame says
    // whether they do (see `Held`).
    let tracked: Vec<usize> = (0..locals.len())
        .filter(|&i| {
            let l = &local_layouts[i];
            !AbstractSizes::heapless(l)
                && !AbstractSizes::bytes_tell_held(l)
                && code
                    .code
                    .iter()
                    .enumerate()
                    .any(|(pc, b)| matches!(b, Bytecode::Ret) && may_hold[pc].contains(i) && !holds[pc].contains(i))
        })
        .collect();

    // The frame: locals at their natural offsets, then one 8-aligned slot
    // per stack depth, as large as the largest value held at that depth.
    let fl = FrameLayout::new(&local_layouts, &[])?;
    let mut off = fl.size.div_ceil(8) * 8;
    let mut op_offs = Vec::with_capacity(max_size.len());
    for sz in &max_size {
        op_offs.push(off);
        off = off
            .checked_add(sz.div_ceil(8) * 8)
            .filter(|x| *x <= movejit_runtime::flat::layout::MAX_FLAT_SIZE)
            .ok_or_else(|| VmError::new(StatusCode::VM_MAX_TYPE_NODES_REACHED).with_message("frame too large"))?;
    }
    // The flag bytes of tracked locals, after the operand slots.
    let mut flags = vec![None; locals.len()];
    for &i in &tracked {
        flags[i] = Some(Held { flag: off, param: i < params.len() });
        off += 1;
    }
    off = off.div_ceil(8) * 8;
    let slots = Slots { locals: &fl.offsets, ops: &op_offs };

    // Pass 2: the ops.
    let mut ops = Vec::with_capacity(n);
    let mut grows = Vec::with_capacity(n);
    let mut ret_slots = Vec::with_capacity(n);
    let mut owned_stack = Vec::with_capacity(n);
    let mut gas = Vec::with_capacity(n);
    let no_types: Vec<Type> = Vec::new();
    for (pc, instr) in code.code.iter().enumerate() {
        let Some(mut st) = states[pc].clone() else {
            gas.push(GasSite::default());
            ops.push(Op::Fail(Box::new(inv("unreachable instruction"))));
            grows.push(0);
            ret_slots.push(Vec::new());
            owned_stack.push(Box::default());
            continue;
        };
        owned_stack.push(
            st.iter()
                .enumerate()
                .filter_map(|(d, t)| p.layout(t).ok().filter(|l| l.owns_heap).map(|l| (d as u32, slots.at(d), l)))
                .collect(),
        );
        let before = st.len();
        let rs = if matches!(instr, Bytecode::Ret) {
            let k = ret_tys.len();
            (before.saturating_sub(k)..before).map(|d| slots.at(d)).collect()
        } else {
            Vec::new()
        };
        ret_slots.push(rs);
        let before_tys = if gas_reads_types(instr) { Some(st.clone()) } else { None };
        let op = p.step(instr, &mut st, &locals, &slots, &code.jump_tables).unwrap_or_else(|e| Op::Fail(Box::new(e)));
        let mut site = if matches!(op, Op::Fail(_)) {
            GasSite::default()
        } else {
            p.gas_site(instr, before, before_tys.as_ref().unwrap_or(&no_types), &st, &locals, &slots)?
        };
        if matches!(op, Op::Ret) {
            // Locals that may hold a value with a heap part.
            let drops = (0..locals.len()).filter(|&i| may_hold[pc].contains(i)).filter_map(|i| {
                let l = &local_layouts[i];
                let held = if AbstractSizes::bytes_tell_held(l) {
                    Holds::ByBytes
                } else if holds[pc].contains(i) {
                    Holds::Surely
                } else {
                    // Tracked: it only may hold one here.
                    flags[i].map_or(Holds::Surely, Holds::Flag)
                };
                (!AbstractSizes::heapless(l)).then(|| FrameDrop { off: fl.offsets[i], l: l.clone(), held })
            });
            site.memory = Memory::DropFrame(drops.collect());
        }
        if let Bytecode::MoveLoc(i) | Bytecode::StLoc(i) = instr {
            if let Some(h) = flags.get(*i as usize).copied().flatten() {
                site.memory = Memory::Track(h, matches!(instr, Bytecode::StLoc(_)));
            }
        }
        gas.push(site);
        let after = st.len();
        // Calls to Move functions push nothing in the caller's frame (their
        // results arrive at return); natives and everything else push here.
        grows.push(if after > before && !matches!(op, Op::Call(_) | Op::CallClosure(_)) { after as u32 } else { 0 });
        ops.push(op);
    }
    // Loops are counted where a call's count alone may not make an
    // instance hot: `Auto` with a threshold of calls.
    let jit = &s.engine.config.jit;
    let loops = s.engine.config.executor == crate::ExecutorKind::Auto && jit.threshold > 0;
    let hot_at = if loops { jit.loop_threshold } else { 0 };
    if hot_at > 0 {
        count_loops(&mut ops);
    }
    let locals_end = fl.size.div_ceil(8) * 8;
    fuse_reads(&mut ops, locals_end);
    fuse_groups(&mut ops, locals_end);
    fuse(&mut ops);
    let mut call_sites = 0u32;
    for op in &mut ops {
        if let Op::Call(site) = op {
            site.index = call_sites;
            call_sites += 1;
        }
    }
    let owned_locals: Vec<(u32, L)> =
        fl.offsets.iter().zip(&local_layouts).filter(|(_, l)| l.owns_heap).map(|(o, l)| (*o, l.clone())).collect();
    let zero_frame = !owned_locals.is_empty() || !tracked.is_empty() || owned_stack.iter().any(|s| !s.is_empty());
    let param_slots = fl.offsets.iter().zip(&local_layouts).take(params.len()).map(|(o, l)| (*o, l.clone())).collect();
    let instance_id = movejit_runtime::intern::instance_id(&m.id, def, &ty_args)?;
    Ok(Prepared {
        instance_id,
        module: m.clone(),
        def,
        ty_args,
        ops,
        opcodes: code.code.iter().map(Bytecode::opcode).collect(),
        grows,
        frame_size: off,
        zero_frame,
        max_height: max_size.len() as u32,
        params: param_slots,
        owned_locals,
        owned_stack,
        ret_slots,
        links,
        call_sites,
        gas,
        local_nodes: locals.iter().map(Type::num_nodes).collect(),
        compiled_hint: Default::default(),
        loop_heat: LoopHeat { hot_at, ..LoopHeat::default() },
        site_targets: super::SiteTargets::default(),
    })
}
