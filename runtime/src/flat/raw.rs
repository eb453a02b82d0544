//! The only raw-memory code of the flat representation: aligned zeroed
//! buffers, vector headers and their data, pointer slots. Everything else in
//! `flat` is safe code over these primitives.
//!
//! Invariant the safe functions here rely on (module-private to `flat`):
//! a slot slice given as a vector slot holds either 0 (an empty vector that
//! never allocated) or a pointer made by [`vec_reserve`] and not yet freed,
//! owned by that slot; a reference slot holds a pointer to a live value of
//! the size given. Only `flat` code builds such slots, from zeroed memory.

#![allow(unsafe_code)]

use crate::error::{vec_err, VmError, VmResult};
use crate::memory;
use std::alloc::{self, Layout as AllocLayout};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::Arc;

#[cfg(not(target_pointer_width = "64"))]
compile_error!("the flat value layout assumes 64-bit pointers");

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Heap blocks allocated minus freed by flat values on this thread (tests
/// use it to prove drops free everything).
pub fn live_allocations() -> isize {
    LIVE.with(|c| c.get())
}

fn count(delta: isize) {
    LIVE.with(|c| c.set(c.get() + delta));
}

/// An owned, zero-initialised, aligned block of bytes.
#[derive(Debug)]
pub struct Buf {
    ptr: NonNull<u8>,
    size: usize,
    align: usize,
}

// SAFETY: a `Buf` is a uniquely owned heap block; moving it across threads
// moves ownership, like `Box<[u8]>`.
unsafe impl Send for Buf {}

// SAFETY: shared access only reads the block (`bytes`); writing needs
// `&mut self`, as with `Box<[u8]>`.
unsafe impl Sync for Buf {}

impl Buf {
    /// `size` zero bytes aligned to `align` (a power of two).
    pub fn zeroed(size: usize, align: usize) -> Buf {
        let l = alloc_layout(size, align);
        // SAFETY: `l` has non-zero size (alloc_layout rounds 0 up to 1).
        let p = unsafe { alloc::alloc_zeroed(l) };
        let ptr = NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(l));
        count(1);
        Buf { ptr, size, align }
    }
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` owns `size` initialised (zeroed at birth) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.size) }
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.size) }
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with exactly this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), alloc_layout(self.size, self.align)) };
        count(-1);
    }
}

fn alloc_layout(size: usize, align: usize) -> AllocLayout {
    // Sizes are bounded by MAX_FLAT_SIZE times a checked element count, and
    // alignments are 1, 2, 4 or 8, so this cannot fail for flat layouts.
    AllocLayout::from_size_align(size.max(1), align.max(1)).unwrap_or(AllocLayout::new::<u64>())
}

/// The heap header a vector slot points to (jit-abi.md 1.3).
#[repr(C)]
#[derive(Debug)]
pub struct VecHeader {
    pub len: u64,
    pub cap: u64,
    /// `cap * stride` bytes aligned to the element alignment (null when cap = 0).
    pub data: *mut u8,
}

/// Pointers live in slots as plain 8-byte words (compiled code writes them
/// too), so their provenance is exposed when stored and recovered on read.
fn read_ptr(slot: &[u8]) -> usize {
    let mut b = [0u8; 8];
    b.copy_from_slice(&slot[..8]);
    usize::from_le_bytes(b)
}

fn write_ptr(slot: &mut [u8], p: usize) {
    slot[..8].copy_from_slice(&p.to_le_bytes());
}

fn header(slot: &[u8]) -> Option<&VecHeader> {
    let p = std::ptr::with_exposed_provenance::<VecHeader>(read_ptr(slot));
    // SAFETY: module invariant: a non-zero vector slot points to a live
    // header owned by the slot, borrowed here for as long as the slot.
    unsafe { p.as_ref() }
}

fn header_mut(slot: &mut [u8]) -> Option<&mut VecHeader> {
    let p = std::ptr::with_exposed_provenance_mut::<VecHeader>(read_ptr(slot));
    // SAFETY: as in `header`; the slot is borrowed mutably, so the header is too.
    unsafe { p.as_mut() }
}

/// Elements in the vector at `slot`.
pub(crate) fn vec_len(slot: &[u8]) -> u64 {
    header(slot).map_or(0, |h| h.len)
}

/// Sets the length (the elements below it must be initialised values).
pub(crate) fn vec_set_len(slot: &mut [u8], len: u64) {
    if let Some(h) = header_mut(slot) {
        debug_assert!(len <= h.cap);
        h.len = len.min(h.cap);
    }
}

/// The bytes of the first `len` elements.
pub(crate) fn vec_data(slot: &[u8], stride: u32) -> &[u8] {
    match header(slot) {
        // SAFETY: `data` holds `cap * stride` initialised bytes and len <= cap.
        Some(h) if h.len > 0 => unsafe { std::slice::from_raw_parts(h.data, h.len as usize * stride as usize) },
        _ => &[],
    }
}

/// The bytes of the whole capacity (elements and zeroed / moved-out spare
/// room: plain bytes that own nothing).
pub(crate) fn vec_data_mut(slot: &mut [u8], stride: u32) -> &mut [u8] {
    match header_mut(slot) {
        // SAFETY: `data` holds `cap * stride` initialised bytes, borrowed
        // uniquely through the slot.
        Some(h) if h.cap > 0 => unsafe { std::slice::from_raw_parts_mut(h.data, h.cap as usize * stride as usize) },
        _ => &mut [],
    }
}

/// Bytes a vector header takes from the memory budget.
const HEADER_BYTES: u64 = std::mem::size_of::<VecHeader>() as u64;

/// Makes room for at least `additional` more elements (allocating the header
/// on first use). Growth is charged to the memory budget (`crate::memory`)
/// by the bytes a reallocation adds. A size that overflows is
/// `VEC_SIZE_LIMIT_REACHED`, an exhausted budget or a refused allocation
/// `MEMORY_LIMIT_EXCEEDED`; the slot is then as it was.
pub(crate) fn vec_reserve(slot: &mut [u8], additional: u64, stride: u32, align: u32) -> VmResult<()> {
    reserve(slot, additional, stride, align, true)
}

/// [`vec_reserve`] past the budget (charged all the same, so the next
/// checked growth fails): for copies that cannot report an error. An
/// allocation the system refuses still ends the process here.
pub(crate) fn vec_reserve_unchecked(slot: &mut [u8], additional: u64, stride: u32, align: u32) -> VmResult<()> {
    reserve(slot, additional, stride, align, false)
}

fn reserve(slot: &mut [u8], additional: u64, stride: u32, align: u32, checked: bool) -> VmResult<()> {
    let fresh = read_ptr(slot) == 0;
    let r = grow(slot, additional, stride, align, checked);
    if r.is_err() && fresh {
        // Leave the slot as it was: an empty vector without a header.
        vec_free(slot, stride, align);
    }
    r
}

fn grow(slot: &mut [u8], additional: u64, stride: u32, align: u32, checked: bool) -> VmResult<()> {
    let too_long = || VmError::vector(vec_err::VEC_SIZE_LIMIT_REACHED);
    let charge = |bytes: u64| {
        if checked {
            memory::charge(bytes)
        } else {
            memory::charge_unchecked(bytes);
            Ok(())
        }
    };
    if read_ptr(slot) == 0 {
        charge(HEADER_BYTES)?;
        let h = Box::new(VecHeader { len: 0, cap: 0, data: std::ptr::null_mut() });
        count(1);
        write_ptr(slot, Box::into_raw(h).expose_provenance());
    }
    let Some(h) = header_mut(slot) else { return Err(VmError::invariant("vector header")) };
    let need = h.len.checked_add(additional).ok_or_else(too_long)?;
    if need <= h.cap {
        return Ok(());
    }
    // Double, but not past what the budget still allows: the last growth
    // before the limit fills the budget instead of failing early. Growth
    // is charged by the bytes it adds.
    let fit = match checked {
        true => memory::remaining().checked_div(stride as u64).map_or(u64::MAX, |f| h.cap.saturating_add(f)),
        false => u64::MAX,
    };
    let cap = need.max(h.cap.saturating_mul(2)).max(4).min(fit).max(need);
    let bytes = cap.checked_mul(stride as u64).filter(|b| *b <= isize::MAX as u64 / 2).ok_or_else(too_long)?;
    let old = h.cap * stride as u64;
    charge(bytes - old)?;
    let l = alloc_layout(bytes as usize, align as usize);
    let p = if h.data.is_null() {
        // SAFETY: `l` has non-zero size.
        unsafe { alloc::alloc_zeroed(l) }
    } else {
        // SAFETY: the block was made here with the layout of `old` bytes
        // and this alignment; the new size is non-zero, larger and fits
        // `isize` (checked above). The grown part is zeroed (spare room is
        // plain bytes).
        unsafe {
            let p = alloc::realloc(h.data, alloc_layout(old as usize, align as usize), l.size());
            if !p.is_null() {
                std::ptr::write_bytes(p.add(old as usize), 0, (bytes - old) as usize);
            }
            p
        }
    };
    if p.is_null() {
        if !checked {
            alloc::handle_alloc_error(l);
        }
        memory::release(bytes - old);
        return Err(memory::exceeded());
    }
    if h.data.is_null() {
        count(1);
    }
    h.data = p;
    h.cap = cap;
    Ok(())
}

/// Frees the vector's buffer and header (its elements must already be
/// dropped or moved out) and leaves an empty vector (0) in the slot.
pub(crate) fn vec_free(slot: &mut [u8], stride: u32, align: u32) {
    let p = std::ptr::with_exposed_provenance_mut::<VecHeader>(read_ptr(slot));
    if p.is_null() {
        return;
    }
    // SAFETY: module invariant: the slot owns this header, made by
    // `Box::into_raw` in `vec_reserve`; it is cleared below so it is freed once.
    let h = unsafe { Box::from_raw(p) };
    count(-1);
    memory::release(HEADER_BYTES);
    if !h.data.is_null() {
        let bytes = h.cap as usize * stride as usize;
        // SAFETY: allocated in `vec_reserve` with this size and alignment.
        unsafe { alloc::dealloc(h.data, alloc_layout(bytes, align as usize)) };
        memory::release(bytes as u64);
        count(-1);
    }
    write_ptr(slot, 0);
}

/// Address of element `i` (no bounds check: callers check against the length).
pub(crate) fn vec_elem_ptr(slot: &mut [u8], i: u64, stride: u32) -> *mut u8 {
    vec_data_mut(slot, stride).as_mut_ptr().wrapping_add(i as usize * stride as usize)
}

/// The `size` bytes a reference slot points to.
pub(crate) fn deref(slot: &[u8], size: u32) -> &[u8] {
    let p = std::ptr::with_exposed_provenance::<u8>(read_ptr(slot));
    if p.is_null() {
        return &[];
    }
    // SAFETY: module invariant: a reference slot points to a live value of
    // `size` bytes for as long as the reference exists.
    unsafe { std::slice::from_raw_parts(p, size as usize) }
}

/// Borrows `len` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads of `len` bytes for `'a`, and not written
/// through another pointer meanwhile.
pub unsafe fn slice<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, len) }
}

/// Mutably borrows `len` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of `len` bytes for `'a`, and not
/// accessed through another pointer meanwhile.
pub unsafe fn slice_mut<'a>(p: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(p, len) }
}

/// The closure box a function-value slot points to (`None`: empty slot).
pub(crate) fn closure_ref(slot: &[u8]) -> Option<&super::closure::FlatClosure> {
    let p = std::ptr::with_exposed_provenance::<super::closure::FlatClosure>(read_ptr(slot));
    // SAFETY: module invariant: a non-zero function-value slot holds one
    // strong count of a live `Arc` made by `closure_put`.
    unsafe { p.as_ref() }
}

/// Stores a closure in an empty function-value slot (which then owns one
/// strong count of it).
pub(crate) fn closure_put(slot: &mut [u8], c: Arc<super::closure::FlatClosure>) {
    count(1);
    write_ptr(slot, Arc::into_raw(c).expose_provenance());
}

/// Takes the closure out of its slot, leaving the slot empty.
pub(crate) fn closure_take(slot: &mut [u8]) -> Option<Arc<super::closure::FlatClosure>> {
    let p = std::ptr::with_exposed_provenance::<super::closure::FlatClosure>(read_ptr(slot));
    if p.is_null() {
        return None;
    }
    write_ptr(slot, 0);
    count(-1);
    // SAFETY: module invariant: the slot owned one strong count of this
    // `Arc`, made by `Arc::into_raw` in `closure_put`; the slot is cleared
    // above so that count is taken once.
    Some(unsafe { Arc::from_raw(p) })
}

/// Puts another strong count of the closure in `src` into the empty slot
/// `dst` (a copy: closures are immutable, copies share the box).
pub(crate) fn closure_share(src: &[u8], dst: &mut [u8]) {
    let p = std::ptr::with_exposed_provenance::<super::closure::FlatClosure>(read_ptr(src));
    if p.is_null() {
        write_ptr(dst, 0);
        return;
    }
    // SAFETY: module invariant (as in `closure_ref`): `src` holds a strong
    // count of a live `Arc`, so adding one is sound.
    unsafe { Arc::increment_strong_count(p) };
    count(1);
    write_ptr(dst, p.expose_provenance());
}
