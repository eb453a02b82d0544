//! Where an instruction feeds Aptos's memory meter (`MemoryTrackedGasMeter`,
//! jit-abi.md 5.2): the one list both executors take their memory charge
//! points from (the interpreter's prepared sites, the JIT's lowering).
//! Amounts are the abstract sizes of [`super::abstract_size`], used or
//! released through [`super::algebra::MemoryAlgebra`].

use super::abstract_size::AbstractSizes;
use crate::flat::FlatLayout;
use movejit_format::Bytecode;

/// An instruction's memory event, by what it measures. Each is fed before
/// the instruction's gas charge (the memory meter wraps the gas meter),
/// except [`UseConst`](Self::UseConst), fed after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryPoint {
    /// Nothing.
    None,
    /// Uses the stack sizes of the values packed into a container
    /// (`pack`, `pack_variant`; `pack_closure`: the captured values).
    UseFields,
    /// Releases the stack sizes of a struct's fields (`unpack`).
    ReleaseFields,
    /// Releases the stack sizes of the unpacked variant's fields and its
    /// tag (`unpack_variant`).
    ReleaseVariant,
    /// Uses the packed size of `n` elements (`vec_pack`, `vec_push_back`).
    UseElements(u64),
    /// Releases the packed size of `n` elements (`vec_unpack`).
    ReleaseElements(u64),
    /// Releases one element's packed size when the vector is not empty
    /// (`vec_pop_back`).
    PopBack,
    /// Uses the heap size of the value copied or read (`copy_loc`,
    /// `read_ref`).
    UseCopy,
    /// Releases the heap sizes of both compared values (`eq`, `neq`).
    ReleasePair,
    /// Releases the heap size of the value popped (`pop`).
    ReleaseTop,
    /// Releases the heap size of the value written over (`write_ref`).
    ReleaseTarget,
    /// Uses the heap size of the constant loaded (`ld_const`), after its
    /// charge.
    UseConst,
    /// Releases the heap sizes of the locals holding a value when the
    /// frame returns (`ret`: Aptos's `charge_drop_frame`).
    DropFrame,
}

impl MemoryPoint {
    /// The memory event of `ins`.
    pub fn of(ins: &Bytecode) -> Self {
        use Bytecode as B;
        match ins {
            B::Pack(_)
            | B::PackGeneric(_)
            | B::PackVariant(_)
            | B::PackVariantGeneric(_)
            | B::PackClosure(..)
            | B::PackClosureGeneric(..) => Self::UseFields,
            B::Unpack(_) | B::UnpackGeneric(_) => Self::ReleaseFields,
            B::UnpackVariant(_) | B::UnpackVariantGeneric(_) => Self::ReleaseVariant,
            B::VecPack(_, n) => Self::UseElements(*n),
            B::VecPushBack(_) => Self::UseElements(1),
            B::VecUnpack(_, n) => Self::ReleaseElements(*n),
            B::VecPopBack(_) => Self::PopBack,
            B::CopyLoc(_) | B::ReadRef => Self::UseCopy,
            B::Eq | B::Neq => Self::ReleasePair,
            B::Pop => Self::ReleaseTop,
            B::WriteRef => Self::ReleaseTarget,
            B::LdConst(_) => Self::UseConst,
            B::Ret => Self::DropFrame,
            _ => Self::None,
        }
    }

    /// Whether the event may feed a nonzero amount when the values it
    /// measures by heap size have layouts `measured` (the copied, read,
    /// compared, popped, overwritten or loaded value; a returning frame's
    /// locals). Stack and packed sizes are never zero; heap sizes are zero
    /// only for scalars and references ([`AbstractSizes::heapless`]).
    pub fn may_feed<'a>(self, mut measured: impl Iterator<Item = &'a FlatLayout>) -> bool {
        match self {
            Self::None => false,
            Self::UseFields
            | Self::ReleaseFields
            | Self::ReleaseVariant
            | Self::UseElements(_)
            | Self::ReleaseElements(_)
            | Self::PopBack => true,
            Self::UseCopy
            | Self::ReleasePair
            | Self::ReleaseTop
            | Self::ReleaseTarget
            | Self::UseConst
            | Self::DropFrame => measured.any(|l| !AbstractSizes::heapless(l)),
        }
    }
}

/// A set of a frame's locals (at most 256: a local index is a `u8`), small
/// and `Copy` so the dataflow below allocates one vector per function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalSet([u64; 4]);

impl LocalSet {
    /// Locals `0..n` (capped at 256).
    fn first(n: usize) -> Self {
        let mut s = LocalSet::default();
        (0..n.min(256)).for_each(|i| s.set(i, true));
        s
    }
    pub fn contains(&self, i: usize) -> bool {
        i < 256 && (self.0[i / 64] >> (i % 64)) & 1 == 1
    }
    fn set(&mut self, i: usize, v: bool) {
        if i < 256 {
            let bit = 1u64 << (i % 64);
            if v {
                self.0[i / 64] |= bit
            } else {
                self.0[i / 64] &= !bit
            }
        }
    }
}

/// For each instruction of `code`, which locals may (`may`) or surely
/// (`!may`) hold a value before it runs (parameters hold one on entry;
/// `move_loc` empties a local, `st_loc` fills it): what a returning frame
/// drops (the interpreter's prepared `ret` and compiled code's alike).
/// Unreachable instructions hold nothing.
pub fn locals_held_sets(code: &movejit_format::CodeUnit, params: usize, may: bool) -> Vec<LocalSet> {
    let n = code.code.len();
    let mut held: Vec<Option<LocalSet>> = vec![None; n];
    if n == 0 {
        return Vec::new();
    }
    held[0] = Some(LocalSet::first(params));
    let mut work = vec![0usize];
    while let Some(pc) = work.pop() {
        let Some(mut h) = held[pc] else { continue };
        match &code.code[pc] {
            Bytecode::MoveLoc(i) => h.set(*i as usize, false),
            Bytecode::StLoc(i) => h.set(*i as usize, true),
            _ => {}
        }
        for succ in movejit_format::cfg::successors(code, pc) {
            let Some(next) = held.get_mut(succ) else { continue };
            match next {
                None => {
                    *next = Some(h);
                    work.push(succ);
                }
                Some(old) => {
                    // The union over the paths in ("may hold") or the
                    // intersection ("surely holds").
                    let mut joined = *old;
                    for (o, x) in joined.0.iter_mut().zip(h.0) {
                        *o = if may { *o | x } else { *o & x };
                    }
                    if joined != *old {
                        *old = joined;
                        work.push(succ);
                    }
                }
            }
        }
    }
    held.into_iter().map(Option::unwrap_or_default).collect()
}

/// [`locals_held_sets`] as one flag per local (`locals` of them).
pub fn locals_held(code: &movejit_format::CodeUnit, params: usize, locals: usize, may: bool) -> Vec<Vec<bool>> {
    locals_held_sets(code, params, may).iter().map(|s| (0..locals).map(|i| s.contains(i)).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use movejit_format::{ConstantPoolIndex, LocalIndex, SignatureIndex, StructDefinitionIndex};

    #[test]
    fn points_of_instructions() {
        let si = SignatureIndex(0);
        let table: &[(Bytecode, MemoryPoint)] = &[
            (Bytecode::Pack(StructDefinitionIndex(0)), MemoryPoint::UseFields),
            (Bytecode::Unpack(StructDefinitionIndex(0)), MemoryPoint::ReleaseFields),
            (Bytecode::VecPack(si, 3), MemoryPoint::UseElements(3)),
            (Bytecode::VecPushBack(si), MemoryPoint::UseElements(1)),
            (Bytecode::VecUnpack(si, 2), MemoryPoint::ReleaseElements(2)),
            (Bytecode::VecPopBack(si), MemoryPoint::PopBack),
            (Bytecode::CopyLoc(0 as LocalIndex), MemoryPoint::UseCopy),
            (Bytecode::ReadRef, MemoryPoint::UseCopy),
            (Bytecode::Eq, MemoryPoint::ReleasePair),
            (Bytecode::Pop, MemoryPoint::ReleaseTop),
            (Bytecode::WriteRef, MemoryPoint::ReleaseTarget),
            (Bytecode::LdConst(ConstantPoolIndex(0)), MemoryPoint::UseConst),
            (Bytecode::Ret, MemoryPoint::DropFrame),
            (Bytecode::Add, MemoryPoint::None),
            (Bytecode::MoveLoc(0), MemoryPoint::None),
        ];
        for (ins, point) in table {
            assert_eq!(MemoryPoint::of(ins), *point, "{ins:?}");
        }
    }

    #[test]
    fn heap_sized_points_feed_only_values_with_a_heap_part() {
        let scalar = FlatLayout::from_layout(&Layout::U64, 8).expect("layout");
        let vector = FlatLayout::from_layout(&Layout::Vector(Box::new(Layout::U8)), 8).expect("layout");
        // (point, measured layouts, may feed)
        let table: &[(MemoryPoint, &[&FlatLayout], bool)] = &[
            (MemoryPoint::UseFields, &[], true),
            (MemoryPoint::PopBack, &[], true),
            (MemoryPoint::None, &[&vector], false),
            (MemoryPoint::ReleaseTop, &[&scalar], false),
            (MemoryPoint::ReleaseTop, &[&vector], true),
            (MemoryPoint::DropFrame, &[&scalar, &vector], true),
            (MemoryPoint::DropFrame, &[], false),
        ];
        for (point, measured, feeds) in table {
            assert_eq!(point.may_feed(measured.iter().copied()), *feeds, "{point:?} over {measured:?}");
        }
    }
}
