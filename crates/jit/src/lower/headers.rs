//! Vector headers that cannot change while the frame runs, read with loads
//! Cranelift may hoist out of loops.
//!
//! A vector reference parameter that the function never reassigns points
//! into the caller's memory for the whole call. Its slot and the heap header
//! the slot points to (jit-abi.md 1.3) change only through an instruction
//! that writes a vector as a whole through a reference (`WriteRef` of an
//! in-memory value), grows or shrinks one (`VecPushBack`, `VecPopBack`), or
//! hands control to code that may (calls, closures, global storage). The
//! verifier's reference rules leave no other way: no other parameter may
//! alias a mutable one, and the frame's own locals are not the caller's
//! memory. In a function with none of those instructions, the slot, the
//! length and the data pointer of such a parameter are loaded `readonly`,
//! `notrap` and `can_move`: pure for Cranelift, so they are computed once
//! per frame instead of once per borrow. A null slot (an empty vector that
//! never allocated) reads a static all-zero header instead of branching,
//! so each load is valid wherever Cranelift places it; a borrow of such a
//! vector fails its bounds check as before.
//!
//! `WriteRef` types are only known while lowering: the first `WriteRef` of
//! an in-memory value marks the function, and [`Lowerer::unpin_headers`]
//! turns the loads already emitted back into ordinary ones.

use super::{Lowerer, Ty};
use cranelift_codegen::ir::{types, Function, InstBuilder, InstructionData, MemFlagsData, Value};
use movejit_format::Bytecode;
use movejit_runtime::flat::raw::VecHeader;

/// What a null vector slot reads as: length 0 (so every index is out of
/// bounds) and a null data pointer that is never dereferenced.
static EMPTY_HEADER: [u64; 3] = [0; 3];
const _: () = assert!(std::mem::size_of::<VecHeader>() == std::mem::size_of::<[u64; 3]>());

/// Offsets of `VecHeader::len` and `VecHeader::data`.
const LEN: i32 = std::mem::offset_of!(VecHeader, len) as i32;
const DATA: i32 = std::mem::offset_of!(VecHeader, data) as i32;

/// The flags of a load of a pinned header word (see the module docs).
fn pinned(base: MemFlagsData) -> MemFlagsData {
    base.with_readonly().with_can_move()
}

/// Whether an instruction may replace, grow or shrink a vector that a
/// reference parameter points to (besides `WriteRef`, decided by type).
fn may_move_headers(ins: &Bytecode) -> bool {
    use Bytecode as B;
    matches!(
        ins,
        B::Call(_)
            | B::CallGeneric(_)
            | B::CallClosure(_)
            | B::VecPushBack(_)
            | B::VecPopBack(_)
            | B::MutBorrowGlobal(_)
            | B::MutBorrowGlobalGeneric(_)
            | B::ImmBorrowGlobal(_)
            | B::ImmBorrowGlobalGeneric(_)
            | B::MoveFrom(_)
            | B::MoveFromGeneric(_)
            | B::MoveTo(_)
            | B::MoveToGeneric(_)
            | B::Exists(_)
            | B::ExistsGeneric(_)
    )
}

/// Per local: whether it is a vector reference parameter whose header is
/// pinned for the frame (all false when the code may move headers).
pub(super) fn pinned_locals(code: &[Bytecode], params: &[Ty], locals: usize) -> Vec<bool> {
    let mut pinned = vec![false; locals];
    if code.iter().any(may_move_headers) {
        return pinned;
    }
    for (i, p) in params.iter().enumerate() {
        if let (Ty::R(t), Some(slot)) = (p, pinned.get_mut(i)) {
            *slot = t.elem().is_some();
        }
    }
    for ins in code {
        if let Bytecode::StLoc(l) = ins {
            if let Some(slot) = pinned.get_mut(*l as usize) {
                *slot = false;
            }
        }
    }
    pinned
}

impl Lowerer<'_, '_> {
    /// Records a reference read from local `l` (`CopyLoc`/`MoveLoc`).
    pub(super) fn note_local_ref(&mut self, l: u8, v: Value) {
        if self.pinned_locals.get(l as usize).copied().unwrap_or(false) {
            self.pinned_refs.insert(v);
        }
    }

    /// A `WriteRef` of type `t`: an in-memory value may be a vector.
    pub(super) fn note_write_ref(&mut self, t: &Ty) {
        if matches!(t, Ty::M(_)) {
            self.headers_move = true;
        }
    }

    /// `(len, data)` of the vector reference `r` when its header is
    /// pinned; `None` for any other reference.
    pub(super) fn pinned_header(&mut self, r: Value) -> Option<(Value, Value)> {
        if self.headers_move || !self.pinned_refs.contains(&r) {
            return None;
        }
        let p = self.b.ins().load(types::I64, pinned(Self::vmem()), r, 0);
        let empty = self.b.ins().iconst(self.ptr, EMPTY_HEADER.as_ptr() as i64);
        let h = self.b.ins().select(p, p, empty);
        let len = self.b.ins().load(types::I64, pinned(Self::mem()), h, LEN);
        let data = self.b.ins().load(self.ptr, pinned(Self::mem()), h, DATA);
        Some((len, data))
    }

    /// Turns pinned loads back into ordinary ones when the function turned
    /// out to write vectors through references (see the module docs).
    pub(super) fn unpin_headers(&mut self) {
        if self.headers_move {
            unpin(self.b.func);
        }
    }
}

fn unpin(func: &mut Function) {
    let plain = [Lowerer::vmem(), Lowerer::mem()];
    let pairs: Vec<_> = plain
        .iter()
        .filter_map(|&f| func.dfg.mem_flags.get(pinned(f)).map(|from| (from, func.dfg.mem_flags.insert_unchecked(f))))
        .collect();
    if pairs.is_empty() {
        return;
    }
    let insts: Vec<_> = func.layout.blocks().flat_map(|b| func.layout.block_insts(b)).collect();
    for inst in insts {
        if let InstructionData::Load { flags, .. } = &mut func.dfg.insts[inst] {
            if let Some(&(_, to)) = pairs.iter().find(|(from, _)| from == flags) {
                *flags = to;
            }
        }
    }
}
