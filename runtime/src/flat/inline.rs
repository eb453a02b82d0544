//! [`InlineValues`]: the values of one call's arguments or results held in
//! one inline block (no heap block per value and no vector of values): a
//! short call's arguments and results cost no allocation of their own.

use super::bcs::{read_into, serialize_into};
use super::layout::FlatLayout;
use super::mem::Addr;
use super::value::{drop_in_place, FlatValue};
use crate::bcs::Reader;
use crate::error::{VmError, VmResult};
use std::sync::Arc;

/// The most values [`InlineValues`] holds.
pub const MAX_VALUES: usize = 8;
/// The most bytes of values [`InlineValues`] holds (each slot is rounded
/// up to 8 bytes).
pub const MAX_BYTES: usize = 256;

/// Flat layouts align to at most 8 bytes.
#[repr(C, align(8))]
struct Block([u8; MAX_BYTES]);

/// Slots for a call's values, one after another at 8-byte boundaries,
/// zeroed at first. The values decoded or written there are the slots'
/// until moved out ([`InlineValues::take`], [`InlineValues::forget_at`]) or
/// dropped with them. The block is inline: addresses from
/// [`InlineValues::addr`] hold only while the slots are not moved.
pub struct InlineValues<'l> {
    layouts: &'l [Arc<FlatLayout>],
    /// Where each value's slot starts in `block`.
    offsets: [u16; MAX_VALUES],
    block: Block,
}

impl<'l> InlineValues<'l> {
    /// Zeroed slots for values of `layouts`; `None` when there are more
    /// than [`MAX_VALUES`] or they take more than [`MAX_BYTES`].
    #[inline]
    pub fn new(layouts: &'l [Arc<FlatLayout>]) -> Option<InlineValues<'l>> {
        if layouts.len() > MAX_VALUES {
            return None;
        }
        let mut offsets = [0u16; MAX_VALUES];
        let mut end = 0usize;
        for (at, l) in offsets.iter_mut().zip(layouts) {
            if l.align > 8 {
                return None;
            }
            *at = end as u16;
            end = end.checked_add((l.size as usize).next_multiple_of(8))?;
            if end > MAX_BYTES {
                return None;
            }
        }
        Some(InlineValues { layouts, offsets, block: Block([0; MAX_BYTES]) })
    }

    pub fn len(&self) -> usize {
        self.layouts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.layouts.is_empty()
    }

    /// Value `i`'s layout.
    pub fn layout(&self, i: usize) -> &'l Arc<FlatLayout> {
        &self.layouts[i]
    }

    fn bounds(&self, i: usize) -> std::ops::Range<usize> {
        let at = self.offsets[i] as usize;
        at..at + self.layouts[i].size as usize
    }

    /// The bytes of value `i`'s slot.
    pub fn bytes(&self, i: usize) -> &[u8] {
        &self.block.0[self.bounds(i)]
    }

    /// The address of value `i`'s slot, for code to read or write it.
    pub fn addr(&mut self, i: usize) -> Addr {
        let b = self.bounds(i);
        Addr::of_scratch(&mut self.block.0[b])
    }

    /// Decodes BCS `bytes` into slot `i`, which holds no value (as
    /// [`super::bcs::deserialize`], or `deserialize_arg` when `entry_arg`:
    /// a signer as `00` + address, every error
    /// `FAILED_TO_DESERIALIZE_ARGUMENT`). On error the slot holds what was
    /// read, dropped with the slots.
    pub fn decode(&mut self, i: usize, bytes: &[u8], entry_arg: bool) -> VmResult<()> {
        let mut r = Reader::new(bytes);
        r.signer_as_enum = entry_arg;
        let b = self.bounds(i);
        let read = read_into(&mut r, &self.layouts[i], &mut self.block.0[b], 0);
        let whole = read.and_then(|()| if r.remaining() == 0 { Ok(()) } else { Err(super::bcs::de_err()) });
        if entry_arg {
            return whole.map_err(|_| VmError::bad_argument());
        }
        whole
    }

    /// The BCS of value `i`.
    pub fn serialize(&self, i: usize) -> VmResult<Vec<u8>> {
        let l = &self.layouts[i];
        // Exact for scalars and flat structs, as `bcs::serialize`.
        let mut out = Vec::with_capacity(l.size as usize);
        serialize_into(&mut out, l, self.bytes(i))?;
        Ok(out)
    }

    /// Moves value `i` out into an owned value (the slot then holds none).
    pub fn take(&mut self, i: usize) -> FlatValue {
        let b = self.bounds(i);
        let slot = &mut self.block.0[b];
        let mut v = FlatValue::zeroed(self.layouts[i].clone());
        v.bytes_mut().copy_from_slice(slot);
        slot.fill(0);
        v
    }

    /// Forgets value `i` without dropping it: it was moved elsewhere as
    /// bytes (a call consumed it).
    pub fn forget_at(&mut self, i: usize) {
        let b = self.bounds(i);
        // An all-zero slot owns nothing.
        self.block.0[b].fill(0);
    }

    /// Forgets every value without dropping it: the values were never
    /// written (a failed call's results), or were moved elsewhere.
    pub fn forget_all(&mut self) {
        // All-zero slots own nothing: the drop then frees nothing.
        self.block.0.fill(0);
    }
}

impl Drop for InlineValues<'_> {
    fn drop(&mut self) {
        let layouts = self.layouts;
        for (i, l) in layouts.iter().enumerate() {
            let b = self.bounds(i);
            drop_in_place(l, &mut self.block.0[b]);
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use crate::flat::{bcs, live_allocations, mem};
    use crate::Layout;
    use movejit_format::StatusCode;

    fn flat(l: &Layout) -> Arc<FlatLayout> {
        Arc::new(FlatLayout::from_layout(l, 64).expect("a flat layout"))
    }

    #[test]
    fn what_fits_inline() {
        let u64s = |n: usize| vec![flat(&Layout::U64); n];
        let cases: Vec<(&str, Vec<Arc<FlatLayout>>, bool)> = vec![
            ("no results", vec![], true),
            ("one u64", u64s(1), true),
            ("MAX_VALUES u64s", u64s(MAX_VALUES), true),
            ("one too many", u64s(MAX_VALUES + 1), false),
            ("256 bytes of u256", vec![flat(&Layout::U256); 8], true),
            ("past 256 bytes", vec![flat(&Layout::U256), flat(&Layout::Struct(vec![Layout::U256; 8]))], false),
            ("a vector", vec![flat(&Layout::Vector(Box::new(Layout::U8)))], true),
        ];
        for (what, layouts, fits) in cases {
            assert_eq!(InlineValues::new(&layouts).is_some(), fits, "{what}");
        }
    }

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let layouts = vec![flat(&Layout::U8), flat(&Layout::U128), flat(&Layout::Bool), flat(&Layout::U64)];
        let mut s = InlineValues::new(&layouts).expect("fits");
        let addrs: Vec<usize> = (0..s.len()).map(|i| s.addr(i).to_raw() as usize).collect();
        for (i, a) in addrs.iter().enumerate() {
            assert_eq!(a % 8, 0, "slot {i} is 8-aligned");
            if let Some(next) = addrs.get(i + 1) {
                assert!(a + layouts[i].size as usize <= *next, "slot {i} ends before slot {}", i + 1);
            }
        }
    }

    #[test]
    fn results_serialize_and_drop_what_they_own() {
        let layouts = vec![flat(&Layout::U64), flat(&Layout::Vector(Box::new(Layout::U64))), flat(&Layout::Bool)];
        let values: Vec<Vec<u8>> = vec![
            7u64.to_le_bytes().to_vec(),
            [vec![2u8], 1u64.to_le_bytes().to_vec(), 2u64.to_le_bytes().to_vec()].concat(),
            vec![1],
        ];
        let before = live_allocations();
        {
            let mut s = InlineValues::new(&layouts).expect("fits");
            for (i, b) in values.iter().enumerate() {
                let v = bcs::deserialize(b, layouts[i].clone()).expect("decodes");
                // SAFETY: slot `i` is live, holds no value and is of `v`'s layout.
                unsafe { mem::move_in(v, s.addr(i)) };
            }
            for (i, b) in values.iter().enumerate() {
                assert_eq!(&s.serialize(i).expect("serializes"), b, "result {i}");
            }
        }
        assert_eq!(live_allocations(), before, "dropping the slots frees the vector");
    }

    #[test]
    fn decoding_as_the_deserializers_do() {
        let u64s = 5u64.to_le_bytes().to_vec();
        let vec_u8 = vec![2u8, 7, 9];
        let signer = [vec![0u8], vec![0xab; 32]].concat();
        // (what, layout, bytes, as an entry argument, expected status)
        type Case = (&'static str, Layout, Vec<u8>, bool, Result<(), StatusCode>);
        let cases: Vec<Case> = vec![
            ("u64", Layout::U64, u64s.clone(), false, Ok(())),
            (
                "u64, trailing byte",
                Layout::U64,
                [u64s.clone(), vec![0]].concat(),
                false,
                Err(StatusCode::VALUE_DESERIALIZATION_ERROR),
            ),
            (
                "u64 argument, short",
                Layout::U64,
                u64s[..4].to_vec(),
                true,
                Err(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT),
            ),
            ("vector<u8>", Layout::Vector(Box::new(Layout::U8)), vec_u8.clone(), true, Ok(())),
            ("bool 2", Layout::Bool, vec![2], false, Err(StatusCode::VALUE_DESERIALIZATION_ERROR)),
            ("signer argument", Layout::Signer, signer.clone(), true, Ok(())),
        ];
        let before = live_allocations();
        for (what, l, bytes, entry_arg, expect) in cases {
            let layouts = vec![flat(&l)];
            let mut s = InlineValues::new(&layouts).expect("fits");
            let got = s.decode(0, &bytes, entry_arg).map_err(|e| e.status);
            assert_eq!(got, expect, "{what}");
            // The same as the deserializers give.
            let de = if entry_arg {
                bcs::deserialize_arg(&bytes, layouts[0].clone())
            } else {
                bcs::deserialize(&bytes, layouts[0].clone())
            };
            assert_eq!(de.as_ref().map(|_| ()).map_err(|e| e.status), expect, "{what}: as the deserializer");
            if let (Ok(()), Ok(v)) = (got, de) {
                assert_eq!(s.bytes(0).len(), v.bytes().len(), "{what}");
                let taken = s.take(0);
                assert_eq!(
                    bcs::serialize(&taken).expect("serializes"),
                    bcs::serialize(&v).expect("serializes"),
                    "{what}"
                );
                assert!(s.bytes(0).iter().all(|b| *b == 0), "{what}: taking empties the slot");
            }
        }
        assert_eq!(live_allocations(), before, "every decoded value freed");
    }

    #[test]
    fn forgotten_values_are_not_dropped() {
        let forget_one: fn(&mut InlineValues) = |s| s.forget_at(0);
        let forget_all: fn(&mut InlineValues) = |s| s.forget_all();
        for (what, forget) in [("forget_at", forget_one), ("forget_all", forget_all)] {
            let layouts = vec![flat(&Layout::Vector(Box::new(Layout::U8)))];
            let before = live_allocations();
            let mut s = InlineValues::new(&layouts).expect("fits");
            s.decode(0, &[1, 5], false).expect("decodes");
            // Moved elsewhere as bytes, as a call consumes an argument.
            let moved = FlatValue::zeroed(layouts[0].clone());
            let live = live_allocations();
            // SAFETY: `moved`'s slot holds no value and is of the same layout.
            unsafe { mem::move_bytes(s.addr(0), mem::Addr::of_value(&moved), layouts[0].size) };
            forget(&mut s);
            drop(s);
            assert_eq!(live_allocations(), live, "{what}: the vector lives on in `moved`");
            assert_eq!(bcs::serialize(&moved).expect("serializes"), vec![1, 5], "{what}");
            drop(moved);
            assert_eq!(live_allocations(), before, "{what}");
        }
    }
}
