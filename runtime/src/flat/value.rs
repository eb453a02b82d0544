//! Drop, deep copy and equality of values in flat memory, and
//! [`FlatValue`], an owned value with its layout.

use super::layout::{FlatLayout, Shape};
use super::raw::{self, Buf};
use crate::error::VmResult;
use std::sync::Arc;

fn tag_of(slot: &[u8]) -> u16 {
    u16::from_le_bytes([slot[0], slot[1]])
}

/// The variant fields of the enum value in `slot` (`None`: bad tag).
pub(crate) fn variant<'a>(
    variants: &'a [Vec<super::layout::Field>],
    slot: &[u8],
) -> Option<&'a [super::layout::Field]> {
    variants.get(tag_of(slot) as usize).map(|v| v.as_slice())
}

fn field<'a>(slot: &'a [u8], f: &super::layout::Field) -> &'a [u8] {
    &slot[f.offset as usize..(f.offset + f.layout.size) as usize]
}

fn field_mut<'a>(slot: &'a mut [u8], f: &super::layout::Field) -> &'a mut [u8] {
    &mut slot[f.offset as usize..(f.offset + f.layout.size) as usize]
}

/// Frees everything the value in `slot` owns and zeroes its pointers (the
/// slot then holds no live value).
pub(crate) fn drop_in_place(l: &FlatLayout, slot: &mut [u8]) {
    if !l.owns_heap {
        return;
    }
    match &l.shape {
        Shape::Vector(e) => {
            if e.owns_heap {
                let n = raw::vec_len(slot) as usize;
                let data = raw::vec_data_mut(slot, e.size);
                for c in data.chunks_exact_mut(e.size as usize).take(n) {
                    drop_in_place(e, c);
                }
            }
            raw::vec_free(slot, e.size, e.align);
        }
        Shape::Struct(fs) => {
            for f in fs {
                drop_in_place(&f.layout, field_mut(slot, f));
            }
        }
        Shape::Enum(vs) => {
            if let Some(fs) = variant(vs, slot) {
                for f in fs {
                    drop_in_place(&f.layout, field_mut(slot, f));
                }
            }
        }
        Shape::Closure => drop(raw::closure_take(slot)),
        // References own nothing.
        Shape::Reference(_) => {}
        _ => {}
    }
}

/// Deep-copies the value in `src` into `dst`, which must hold no live value
/// (its old bytes are overwritten, not dropped). The copy's memory is
/// charged to the budget; when it is exhausted `dst` is left holding no
/// live value and the error returned.
pub(crate) fn copy_into(l: &FlatLayout, src: &[u8], dst: &mut [u8]) -> VmResult<()> {
    dst.copy_from_slice(src);
    if l.owns_heap {
        if let Err(e) = own_copies(l, src, dst, true) {
            drop_in_place(l, dst);
            return Err(e);
        }
    }
    Ok(())
}

/// [`copy_into`] for copies that cannot fail (captured values of a closure
/// copy): charged past the budget, so the next checked growth fails.
pub(crate) fn copy_into_unchecked(l: &FlatLayout, src: &[u8], dst: &mut [u8]) {
    dst.copy_from_slice(src);
    if l.owns_heap {
        // Only a checked copy fails.
        let _ = own_copies(l, src, dst, false);
    }
}

/// After a byte copy of `src` into `dst`, replaces every pointer `dst`
/// shares with `src` by a pointer to its own deep copy. On failure every
/// pointer of `dst` not yet replaced is zeroed, so `dst` is a valid value
/// owning only its own copies (the caller drops it).
fn own_copies(l: &FlatLayout, src: &[u8], dst: &mut [u8], checked: bool) -> VmResult<()> {
    match &l.shape {
        Shape::Vector(e) => {
            dst[..8].fill(0);
            let n = raw::vec_len(src);
            if n == 0 {
                return Ok(());
            }
            if checked {
                raw::vec_reserve(dst, n, e.size, e.align)?;
            } else {
                raw::vec_reserve_unchecked(dst, n, e.size, e.align)?;
            }
            let bytes = raw::vec_data(src, e.size);
            raw::vec_data_mut(dst, e.size)[..bytes.len()].copy_from_slice(bytes);
            // The length first: a failed element copy leaves a vector its
            // caller can drop whole.
            raw::vec_set_len(dst, n);
            let data = raw::vec_data_mut(dst, e.size);
            let mut r = Ok(());
            if e.owns_heap {
                for (s, d) in bytes.chunks_exact(e.size as usize).zip(data.chunks_exact_mut(e.size as usize)) {
                    own_part(&mut r, e, s, d, checked);
                }
            }
            r
        }
        Shape::Struct(fs) => own_fields(fs, src, dst, checked),
        Shape::Enum(vs) => match variant(vs, src) {
            Some(fs) => own_fields(fs, src, dst, checked),
            None => Ok(()),
        },
        // Closures are immutable: a copy shares the box (no allocation).
        Shape::Closure => {
            raw::closure_share(src, dst);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn own_fields(fs: &[super::layout::Field], src: &[u8], dst: &mut [u8], checked: bool) -> VmResult<()> {
    let mut r = Ok(());
    for f in fs.iter().filter(|f| f.layout.owns_heap) {
        own_part(&mut r, &f.layout, field(src, f), field_mut(dst, f), checked);
    }
    r
}

/// `own_copies` of one part of a value while `r` is still fine; after a
/// failure the remaining parts are zeroed instead (they still share
/// `src`'s pointers).
fn own_part(r: &mut VmResult<()>, l: &FlatLayout, src: &[u8], dst: &mut [u8], checked: bool) {
    if r.is_ok() {
        *r = own_copies(l, src, dst, checked);
    } else {
        dst.fill(0);
    }
}

/// Move's structural equality: byte comparison where the layout allows it,
/// field by field / element by element otherwise; references compare what
/// they point to.
pub(crate) fn equal(l: &FlatLayout, a: &[u8], b: &[u8]) -> bool {
    if l.bytewise_eq {
        return a == b;
    }
    match &l.shape {
        Shape::Vector(e) => {
            let (n, m) = (raw::vec_len(a), raw::vec_len(b));
            if n != m {
                return false;
            }
            let (x, y) = (raw::vec_data(a, e.size), raw::vec_data(b, e.size));
            if e.bytewise_eq {
                return x == y;
            }
            x.chunks_exact(e.size as usize).zip(y.chunks_exact(e.size as usize)).all(|(p, q)| equal(e, p, q))
        }
        Shape::Struct(fs) => fs.iter().all(|f| equal(&f.layout, field(a, f), field(b, f))),
        Shape::Enum(vs) => {
            tag_of(a) == tag_of(b)
                && variant(vs, a).is_some_and(|fs| fs.iter().all(|f| equal(&f.layout, field(a, f), field(b, f))))
        }
        Shape::Reference(t) => equal(t, raw::deref(a, t.size), raw::deref(b, t.size)),
        Shape::Closure => match (raw::closure_ref(a), raw::closure_ref(b)) {
            (Some(x), Some(y)) => x.equals(y),
            (x, y) => x.is_none() && y.is_none(),
        },
        _ => a == b,
    }
}

/// `std::cmp::compare`'s order of two values of layout `l` (the tree's
/// [`crate::values::compare_values`]), read in place: vectors element by
/// element then by length, structs field by field, enums by tag then
/// fields. Scalars and closures are read through their tree form, which
/// allocates nothing for a scalar, so the two orders cannot drift apart.
pub(crate) fn compare(l: &FlatLayout, a: &[u8], b: &[u8]) -> VmResult<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let fields_then = |fs: &[super::layout::Field], tail: Ordering| -> VmResult<Ordering> {
        for f in fs {
            let o = compare(&f.layout, field(a, f), field(b, f))?;
            if o != Ordering::Equal {
                return Ok(o);
            }
        }
        Ok(tail)
    };
    match &l.shape {
        Shape::Vector(e) => {
            let (x, y) = (raw::vec_data(a, e.size), raw::vec_data(b, e.size));
            if matches!(e.shape, Shape::U8) {
                return Ok(x.cmp(y));
            }
            let stride = e.size as usize;
            for (p, q) in x.chunks_exact(stride).zip(y.chunks_exact(stride)) {
                let o = compare(e, p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            Ok(raw::vec_len(a).cmp(&raw::vec_len(b)))
        }
        Shape::Struct(fs) => fields_then(fs, Ordering::Equal),
        Shape::Enum(vs) => {
            let bad = || crate::error::VmError::invariant("bad variant tag");
            let (fa, _) = (variant(vs, a).ok_or_else(bad)?, variant(vs, b).ok_or_else(bad)?);
            match tag_of(a).cmp(&tag_of(b)) {
                Ordering::Equal => fields_then(fa, Ordering::Equal),
                o => Ok(o),
            }
        }
        Shape::Reference(_) => Err(crate::error::VmError::invariant("a reference has no order")),
        _ => crate::values::compare_values(
            &super::native_bridge::to_value(l, a)?,
            &super::native_bridge::to_value(l, b)?,
        ),
    }
}

/// An owned flat value: its layout and an aligned buffer holding it.
/// Dropping it frees everything it owns.
#[derive(Debug)]
pub struct FlatValue {
    layout: Arc<FlatLayout>,
    buf: Buf,
}

impl FlatValue {
    /// The all-zero value of `layout` (integers 0, false, empty vectors,
    /// variant 0 with zero fields).
    pub fn zeroed(layout: Arc<FlatLayout>) -> FlatValue {
        let buf = Buf::zeroed(layout.size as usize, layout.align as usize);
        FlatValue { layout, buf }
    }
    pub fn layout(&self) -> &Arc<FlatLayout> {
        &self.layout
    }
    pub fn bytes(&self) -> &[u8] {
        self.buf.bytes()
    }
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        self.buf.bytes_mut()
    }
    /// The layout and the bytes, for writing the value in place (no clone
    /// of the shared layout).
    pub(crate) fn parts_mut(&mut self) -> (&FlatLayout, &mut [u8]) {
        (&self.layout, self.buf.bytes_mut())
    }
    /// The value's address, for compiled code and the `extern "C"` helpers.
    pub fn as_ptr(&self) -> *mut u8 {
        self.buf.as_ptr()
    }
    /// Frees the value's slot without dropping what it held: its contents
    /// were moved elsewhere as bytes (pushed, packed, written to a slot).
    pub fn forget_moved(mut self) {
        // An all-zero slot owns nothing, so the drop below frees only the block.
        self.buf.bytes_mut().fill(0);
    }
    /// A deep copy (past the memory budget: see [`copy_into_unchecked`]).
    pub fn copy(&self) -> FlatValue {
        let mut v = FlatValue::zeroed(self.layout.clone());
        copy_into_unchecked(&self.layout, self.buf.bytes(), v.buf.bytes_mut());
        v
    }
    /// Move's `==` (the layouts must be the same type's).
    pub fn equals(&self, other: &FlatValue) -> bool {
        (Arc::ptr_eq(&self.layout, &other.layout) || self.layout == other.layout)
            && equal(&self.layout, self.bytes(), other.bytes())
    }
}

impl Drop for FlatValue {
    fn drop(&mut self) {
        // Disjoint fields: no clone of the shared layout (an atomic count
        // per value dropped).
        drop_in_place(&self.layout, self.buf.bytes_mut());
    }
}
