//! Flat memory by address, for the interpreter (jit-abi.md 1.3, 2): frames
//! on a stack that never moves, references as plain addresses, and every
//! value operation (copy, drop, equality, vectors, BCS) at an address.
//!
//! An [`Addr`] is a plain address, as a raw pointer is: making one (an
//! offset, a frame, the slot of an owned value, the target read from a
//! reference slot) is safe, and nothing about it is checked. Every function
//! here that reads or writes memory through one is therefore an `unsafe fn`
//! with one contract, exactly the one compiled code keeps: an [`Addr`]
//! handed to them points to a live slot of the layout given, made by this
//! module ([`FrameStack`], [`Addr::of_value`], a vector element or a field
//! offset below such a slot, or a reference read from such a slot); a
//! destination slot holds no live value; two addresses of one call do not
//! overlap unless the function says so. Callers meet it through the
//! verifier: reference safety guarantees a reference never outlives what it
//! points to and that a `&mut` is never aliased by a live `&`/`&mut`, and
//! type safety that every slot is read at the layout it was written with.

#![allow(unsafe_code, clippy::missing_safety_doc)]

use super::closure::FlatClosure;
use super::layout::FlatLayout;
use super::raw::{self, Buf};
use super::value::{self, FlatValue};
use super::{bcs as fbcs, vec};
use crate::bcs::Reader;
use crate::error::VmResult;

/// The address of a slot in flat memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr(usize);

impl Addr {
    /// The slot `off` bytes into this one (a field, or a frame slot).
    // An address plus a byte offset, not the sum of two addresses: no `Add`.
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn add(self, off: u32) -> Addr {
        Addr(self.0.wrapping_add(off as usize))
    }
    /// The address of an owned value's slot (stable while it lives: its
    /// buffer is on the heap).
    pub fn of_value(v: &FlatValue) -> Addr {
        Addr(v.as_ptr().expose_provenance())
    }
    /// The address of caller-owned scratch memory (copies a call hands
    /// over; the memory must outlive every use of the address).
    pub fn of_scratch(s: &mut [u8]) -> Addr {
        Addr(s.as_mut_ptr().expose_provenance())
    }
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
    #[inline(always)]
    fn ptr(self) -> *mut u8 {
        std::ptr::with_exposed_provenance_mut(self.0)
    }
}

#[inline(always)]
pub(crate) unsafe fn bytes<'a>(a: Addr, n: u32) -> &'a [u8] {
    // SAFETY: module contract: `a` is a live slot of at least `n` bytes.
    unsafe { raw::slice(a.ptr(), n as usize) }
}

#[inline(always)]
pub(crate) unsafe fn bytes_mut<'a>(a: Addr, n: u32) -> &'a mut [u8] {
    // SAFETY: module contract: `a` is a live slot of at least `n` bytes,
    // not accessed through another address during the call.
    unsafe { raw::slice_mut(a.ptr(), n as usize) }
}

/// `N` bytes at `a`.
#[inline(always)]
pub unsafe fn read<const N: usize>(a: Addr) -> [u8; N] {
    // SAFETY: module contract: `a` is a live slot of at least `N` bytes
    // (any alignment: read_unaligned).
    unsafe { a.ptr().cast::<[u8; N]>().read_unaligned() }
}

/// Writes `N` bytes at `a` (a plain-bytes slot: scalars, or a slot whose
/// old contents were moved out).
#[inline(always)]
pub unsafe fn write<const N: usize>(a: Addr, v: [u8; N]) {
    // SAFETY: module contract: `a` is a live slot of at least `N` bytes.
    unsafe { a.ptr().cast::<[u8; N]>().write_unaligned(v) }
}

#[inline(always)]
pub unsafe fn read_u64(a: Addr) -> u64 {
    u64::from_le_bytes(read(a))
}
#[inline(always)]
pub unsafe fn write_u64(a: Addr, v: u64) {
    write(a, v.to_le_bytes())
}
#[inline(always)]
pub unsafe fn read_bool(a: Addr) -> bool {
    read::<1>(a)[0] != 0
}
#[inline(always)]
pub unsafe fn write_bool(a: Addr, v: bool) {
    write(a, [v as u8])
}

/// The address held by a reference slot.
#[inline(always)]
pub unsafe fn read_addr(a: Addr) -> Addr {
    Addr(u64::from_le_bytes(read(a)) as usize)
}
/// Stores address `v` in the reference slot `a`.
#[inline(always)]
pub unsafe fn write_addr(a: Addr, v: Addr) {
    write(a, (v.0 as u64).to_le_bytes())
}

/// Copies `n` bytes (a move: the source then owns nothing the caller may
/// drop). The ranges may overlap.
#[inline(always)]
pub unsafe fn move_bytes(src: Addr, dst: Addr, n: u32) {
    // SAFETY: module contract: both are live slots of at least `n` bytes;
    // `copy` allows overlap.
    unsafe { std::ptr::copy(src.ptr(), dst.ptr(), n as usize) }
}

/// Zeroes `n` bytes (the slot then holds no live value).
#[inline(always)]
pub unsafe fn zero(a: Addr, n: u32) {
    // SAFETY: module contract: a live slot of at least `n` bytes.
    unsafe { std::ptr::write_bytes(a.ptr(), 0, n as usize) }
}

/// Whether the `n` bytes at `a` are all zero (a slot of a layout that owns
/// heap memory holds no live value exactly then).
pub unsafe fn is_zero(a: Addr, n: u32) -> bool {
    // SAFETY: module contract: a live slot of at least `n` bytes.
    unsafe { bytes(a, n) }.iter().all(|b| *b == 0)
}

/// Copies `n` bytes from `a` into `out`.
pub unsafe fn read_into(a: Addr, out: &mut [u8]) {
    out.copy_from_slice(bytes(a, out.len() as u32));
}

/// Writes `src` at `a`.
pub unsafe fn write_from(a: Addr, src: &[u8]) {
    bytes_mut(a, src.len() as u32).copy_from_slice(src);
}

/// Deep copy of the value at `src` into `dst` (holding no live value);
/// `MEMORY_LIMIT_EXCEEDED` (nothing live in `dst`) when the budget is spent.
#[inline]
pub unsafe fn copy_value(l: &FlatLayout, src: Addr, dst: Addr) -> VmResult<()> {
    if !l.owns_heap {
        move_bytes(src, dst, l.size);
        return Ok(());
    }
    value::copy_into(l, bytes(src, l.size), bytes_mut(dst, l.size))
}

/// [`copy_value`] that cannot fail (copies of a closure's captured
/// values, charged past the budget as `FlatValue::copy`).
#[inline]
pub unsafe fn copy_unchecked(l: &FlatLayout, src: Addr, dst: Addr) {
    if !l.owns_heap {
        move_bytes(src, dst, l.size);
        return;
    }
    value::copy_into_unchecked(l, bytes(src, l.size), bytes_mut(dst, l.size))
}

/// Drops the value at `a` (it then holds no live value).
#[inline]
pub unsafe fn drop_value(l: &FlatLayout, a: Addr) {
    if l.owns_heap {
        value::drop_in_place(l, bytes_mut(a, l.size));
    }
}

/// Move's `==` of the values at `a` and `b`.
pub unsafe fn equal(l: &FlatLayout, a: Addr, b: Addr) -> bool {
    value::equal(l, bytes(a, l.size), bytes(b, l.size))
}

/// `std::cmp::compare`'s order of the values at `a` and `b`.
pub unsafe fn compare(l: &FlatLayout, a: Addr, b: Addr) -> VmResult<std::cmp::Ordering> {
    value::compare(l, bytes(a, l.size), bytes(b, l.size))
}

/// A deep copy of the value at `a` as an owned value.
pub unsafe fn to_owned(l: &std::sync::Arc<FlatLayout>, a: Addr) -> VmResult<FlatValue> {
    let v = FlatValue::zeroed(l.clone());
    copy_value(l, a, Addr::of_value(&v))?;
    Ok(v)
}

/// Moves `v` into the slot `dst` (holding no live value).
pub unsafe fn move_in(v: FlatValue, dst: Addr) {
    move_bytes(Addr::of_value(&v), dst, v.layout().size);
    v.forget_moved();
}

/// Moves the value at `src` out into an owned value (the slot then owns
/// nothing: it is zeroed when it owns heap memory).
pub unsafe fn move_out(l: &std::sync::Arc<FlatLayout>, src: Addr) -> FlatValue {
    let v = FlatValue::zeroed(l.clone());
    move_bytes(src, Addr::of_value(&v), l.size);
    if l.owns_heap {
        zero(src, l.size);
    }
    v
}

/// BCS of the value at `a`.
pub unsafe fn serialize(l: &FlatLayout, a: Addr) -> VmResult<Vec<u8>> {
    let mut out = Vec::new();
    fbcs::serialize_into(&mut out, l, bytes(a, l.size))?;
    Ok(out)
}

/// Reads one value from `r` into the zeroed slot `a`; on error the slot
/// holds a partial value the caller must drop.
pub unsafe fn deserialize_into(r: &mut Reader<'_>, l: &FlatLayout, a: Addr) -> VmResult<()> {
    fbcs::read_into(r, l, bytes_mut(a, l.size), 0)
}

// ----- closures -----

/// The closure in the function-value slot `a` (`None`: no closure there).
pub unsafe fn closure<'a>(a: Addr) -> Option<&'a FlatClosure> {
    raw::closure_ref(bytes(a, 8))
}

/// Moves a new closure into the slot `a` (holding no live value).
pub unsafe fn put_closure(a: Addr, c: FlatClosure) {
    raw::closure_put(bytes_mut(a, 8), std::sync::Arc::new(c));
}

/// Moves the closure out of slot `a`, leaving it empty. Copies share the
/// box: `Arc::try_unwrap` tells whether this was the last one (its
/// captured values can then be moved out).
pub unsafe fn take_closure(a: Addr) -> Option<std::sync::Arc<FlatClosure>> {
    raw::closure_take(bytes_mut(a, 8))
}

// ----- vectors (`e` is the element layout; `v` the vector slot) -----

pub unsafe fn vec_len(v: Addr) -> u64 {
    vec::len(bytes(v, 8))
}

/// `VecPack` of `n` elements laid out contiguously at `src` (moved) into `dst`.
pub unsafe fn vec_pack(e: &FlatLayout, dst: Addr, src: &[u8], n: u64, max_len: u64) -> VmResult<()> {
    vec::pack(e, bytes_mut(dst, 8), src, n, max_len)
}

/// The address of element `i`.
pub unsafe fn vec_borrow(e: &FlatLayout, v: Addr, i: u64) -> VmResult<Addr> {
    vec::borrow(e, bytes_mut(v, 8), i).map(|p| Addr(p.expose_provenance()))
}

/// Moves the element at `elem` to the end of the vector at `v`.
pub unsafe fn vec_push_back(e: &FlatLayout, v: Addr, elem: Addr, max_len: u64) -> VmResult<()> {
    vec::push_back(e, bytes_mut(v, 8), bytes(elem, e.size), max_len)
}

/// Moves the last element into `dst`.
pub unsafe fn vec_pop_back(e: &FlatLayout, v: Addr, dst: Addr) -> VmResult<()> {
    vec::pop_back(e, bytes_mut(v, 8), bytes_mut(dst, e.size))
}

/// Moves the `n` elements of the vector at `v` (consumed) to `out`.
pub unsafe fn vec_unpack(e: &FlatLayout, v: Addr, n: u64, out: &mut [u8]) -> VmResult<()> {
    vec::unpack(e, bytes_mut(v, 8), n, out)
}

pub unsafe fn vec_swap(e: &FlatLayout, v: Addr, i: u64, j: u64) -> VmResult<()> {
    vec::swap(e, bytes_mut(v, 8), i, j)
}

pub unsafe fn vec_destroy_empty(e: &FlatLayout, v: Addr) -> VmResult<()> {
    vec::destroy_empty(e, bytes_mut(v, 8))
}

/// The element bytes of a vector (for natives reading `vector<u8>`).
pub unsafe fn vec_bytes<'a>(e: &FlatLayout, v: Addr) -> &'a [u8] {
    raw::vec_data(bytes(v, 8), e.size)
}

// ----- frames -----

/// Bytes of one stack chunk; bigger frames get a chunk of their own.
const CHUNK: usize = 256 * 1024;
/// Size of the first chunk. Most calls are short and shallow, and each
/// call starts a new stack, so a big first chunk meant zeroing 256 KiB per
/// call (the memset was 12.7% of a short interpreted call); chunks double
/// from here up to [`CHUNK`].
const FIRST_CHUNK: usize = 4 * 1024;

/// The memory of every active frame: chunks that never move once
/// allocated (references into frames stay valid), used as a stack.
#[derive(Debug, Default)]
pub struct FrameStack {
    chunks: Vec<Buf>,
    /// Chunk in use and the first free byte in it.
    chunk: usize,
    top: usize,
}

/// Where a frame was allocated (to free it).
#[derive(Clone, Copy, Debug)]
pub struct FrameMark {
    chunk: usize,
    top: usize,
}

impl FrameStack {
    /// A zeroed frame of `size` bytes aligned to 8.
    #[inline]
    pub fn push(&mut self, size: u32) -> (Addr, FrameMark) {
        self.push_frame(size, true)
    }

    /// A frame of `size` bytes aligned to 8 holding what earlier frames
    /// left there (initialised bytes, not zeroed): for frames whose slots
    /// are all plain bytes, each written before it is read.
    #[inline]
    pub fn push_unzeroed(&mut self, size: u32) -> (Addr, FrameMark) {
        self.push_frame(size, false)
    }

    #[inline(always)]
    fn push_frame(&mut self, size: u32, zero: bool) -> (Addr, FrameMark) {
        let size = (size as usize).div_ceil(8) * 8;
        let mark = FrameMark { chunk: self.chunk, top: self.top };
        let fits = self.chunks.get(self.chunk).is_some_and(|c| self.top + size <= c.bytes().len());
        if !fits {
            self.next_chunk(size);
        }
        let buf = &mut self.chunks[self.chunk];
        let base = buf.as_ptr().expose_provenance() + self.top;
        if zero {
            buf.bytes_mut()[self.top..self.top + size].fill(0);
        }
        self.top += size;
        (Addr(base), mark)
    }

    /// Moves to the next chunk (reused when large enough for `size`
    /// bytes, else replaced), with nothing used in it.
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self, size: usize) {
        let next = if self.chunks.is_empty() { 0 } else { self.chunk + 1 };
        let chunk_size = (FIRST_CHUNK << next.min(6)).min(CHUNK).max(size);
        if next >= self.chunks.len() {
            self.chunks.push(Buf::zeroed(chunk_size, 8));
        } else if self.chunks[next].bytes().len() < size {
            self.chunks[next] = Buf::zeroed(chunk_size, 8);
        }
        self.chunk = next;
        self.top = 0;
    }

    /// Frees the frame allocated at `mark` (and everything above it).
    pub fn pop(&mut self, mark: FrameMark) {
        self.chunk = mark.chunk;
        self.top = mark.top;
    }
}

impl Addr {
    /// The address of a raw slot pointer handed over by compiled code
    /// (`flat::shims::call_native`).
    pub fn from_raw(p: *mut u8) -> Addr {
        Addr(p.expose_provenance())
    }
    /// The address as compiled code receives it (`crate::compiled` seam).
    pub fn to_raw(self) -> *mut u8 {
        self.ptr()
    }
}

#[cfg(test)]
mod frame_stack_tests {
    use super::*;

    /// Each push returns an 8-aligned frame that is zero even where an
    /// earlier (popped) frame wrote, and fits inside one chunk.
    #[test]
    fn frames_are_aligned_zeroed_and_chunk_local() {
        // (frame sizes pushed in order, expected chunk count afterwards)
        let cases: &[(&[u32], usize)] = &[
            (&[8], 1),
            (&[4096], 1),
            (&[4096, 1], 2),
            (&[3000, 3000, 3000], 2),
            (&[CHUNK as u32 + 1], 1),
            (&[1; 2000], 3), // 16000 bytes: chunks of 4, 8 and 16 KiB
        ];
        for &(sizes, chunks) in cases {
            let mut stack = FrameStack::default();
            for round in 0..2 {
                let mut marks = Vec::new();
                for &size in sizes {
                    let (addr, mark) = stack.push(size);
                    assert_eq!(addr.0 % 8, 0, "{sizes:?}");
                    let rounded = (size as usize).div_ceil(8) * 8;
                    let buf = &mut stack.chunks[stack.chunk];
                    let frame = &mut buf.bytes_mut()[stack.top - rounded..stack.top];
                    assert!(frame.iter().all(|&b| b == 0), "{sizes:?} round {round}");
                    frame.fill(0xAB);
                    marks.push(mark);
                }
                assert_eq!(stack.chunks.len(), chunks, "{} frames", sizes.len());
                stack.pop(marks[0]);
            }
        }
    }

    /// Unzeroed frames are placed as zeroed ones (aligned, inside one
    /// chunk, same chunk count) and keep what the popped frame left.
    #[test]
    fn unzeroed_frames_are_placed_as_zeroed_ones() {
        for sizes in [&[8u32][..], &[4096, 1], &[3000, 3000, 3000], &[1; 2000]] {
            let (mut zeroed, mut unzeroed) = (FrameStack::default(), FrameStack::default());
            for round in 0..2 {
                let mut marks = Vec::new();
                for &size in sizes {
                    zeroed.push(size);
                    let (u, mark) = unzeroed.push_unzeroed(size);
                    assert_eq!(u.0 % 8, 0, "{sizes:?}");
                    assert_eq!((zeroed.chunk, zeroed.top), (unzeroed.chunk, unzeroed.top), "{sizes:?}");
                    let rounded = (size as usize).div_ceil(8) * 8;
                    let buf = &mut unzeroed.chunks[unzeroed.chunk];
                    let frame = &mut buf.bytes_mut()[unzeroed.top - rounded..unzeroed.top];
                    let expected = if round == 0 { 0 } else { 0xAB };
                    assert!(frame.iter().all(|&b| b == expected), "{sizes:?} round {round}");
                    frame.fill(0xAB);
                    marks.push(mark);
                }
                unzeroed.pop(marks[0]);
                zeroed = FrameStack::default();
            }
        }
    }
}
