//! The vector instructions and natives over flat memory, with Move's
//! statuses and sub-statuses (`VECTOR_OPERATION_ERROR`, see
//! `crate::error::vec_err`). Element values move as bytes: the source of a
//! move owns nothing afterwards, the caller must not drop it. Compiled
//! code reaches these through `super::shims`.

use super::layout::FlatLayout;
use super::raw;
use super::value::drop_in_place;
use crate::error::{vec_err, VmError, VmResult};

fn oob() -> VmError {
    VmError::vector(vec_err::INDEX_OUT_OF_BOUNDS)
}
fn too_long() -> VmError {
    VmError::vector(vec_err::VEC_SIZE_LIMIT_REACHED)
}

/// `VecPack`: a new vector in `dst` (holding no live value) from the `n`
/// elements laid out contiguously in `src`, which are moved.
pub(crate) fn pack(e: &FlatLayout, dst: &mut [u8], src: &[u8], n: u64, max_len: u64) -> VmResult<()> {
    if n > max_len {
        return Err(too_long());
    }
    dst[..8].fill(0);
    if n == 0 {
        return Ok(());
    }
    let bytes = (n as usize)
        .checked_mul(e.size as usize)
        .filter(|b| *b == src.len())
        .ok_or_else(|| VmError::invariant("vec_pack operands"))?;
    raw::vec_reserve(dst, n, e.size, e.align)?;
    raw::vec_data_mut(dst, e.size)[..bytes].copy_from_slice(src);
    raw::vec_set_len(dst, n);
    Ok(())
}

/// `VecLen`.
pub(crate) fn len(v: &[u8]) -> u64 {
    raw::vec_len(v)
}

/// `VecImmBorrow` / `VecMutBorrow` / `vector::borrow`: the element's address.
pub(crate) fn borrow(e: &FlatLayout, v: &mut [u8], i: u64) -> VmResult<*mut u8> {
    if i >= raw::vec_len(v) {
        return Err(oob());
    }
    Ok(raw::vec_elem_ptr(v, i, e.size))
}

/// `VecPushBack`: moves `elem` to the end.
pub(crate) fn push_back(e: &FlatLayout, v: &mut [u8], elem: &[u8], max_len: u64) -> VmResult<()> {
    let n = raw::vec_len(v);
    if n >= max_len {
        return Err(too_long());
    }
    raw::vec_reserve(v, 1, e.size, e.align)?;
    let at = n as usize * e.size as usize;
    raw::vec_data_mut(v, e.size)[at..at + e.size as usize].copy_from_slice(elem);
    raw::vec_set_len(v, n + 1);
    Ok(())
}

/// `VecPopBack`: moves the last element into `dst` (holding no live value).
pub(crate) fn pop_back(e: &FlatLayout, v: &mut [u8], dst: &mut [u8]) -> VmResult<()> {
    let n = raw::vec_len(v);
    if n == 0 {
        return Err(VmError::vector(vec_err::POP_EMPTY_VEC));
    }
    let at = (n - 1) as usize * e.size as usize;
    let data = raw::vec_data_mut(v, e.size);
    dst.copy_from_slice(&data[at..at + e.size as usize]);
    // The moved-out bytes stay behind as plain bytes past the length.
    raw::vec_set_len(v, n - 1);
    Ok(())
}

/// `VecUnpack`: moves the elements of the vector in `v` (which is consumed)
/// to `dst`, contiguously; the length must be `n`. On a mismatch the vector
/// is dropped and the error returned.
pub(crate) fn unpack(e: &FlatLayout, v: &mut [u8], n: u64, dst: &mut [u8]) -> VmResult<()> {
    let len = raw::vec_len(v);
    if len != n {
        destroy(e, v);
        return Err(VmError::vector(vec_err::VEC_UNPACK_PARITY_MISMATCH));
    }
    let bytes = raw::vec_data(v, e.size);
    if bytes.len() != dst.len() {
        return Err(VmError::invariant("vec_unpack operands"));
    }
    dst.copy_from_slice(bytes);
    raw::vec_free(v, e.size, e.align);
    Ok(())
}

/// `vector::destroy_empty`.
pub(crate) fn destroy_empty(e: &FlatLayout, v: &mut [u8]) -> VmResult<()> {
    if raw::vec_len(v) != 0 {
        return Err(VmError::vector(vec_err::DESTROY_NON_EMPTY_VEC));
    }
    raw::vec_free(v, e.size, e.align);
    Ok(())
}

fn destroy(e: &FlatLayout, v: &mut [u8]) {
    let vl = FlatLayout {
        size: 8,
        align: 8,
        owns_heap: true,
        bytewise_eq: false,
        shape: super::layout::Shape::Vector(std::sync::Arc::new(e.clone())),
    };
    drop_in_place(&vl, v);
}

/// `VecSwap` / `vector::swap`.
pub(crate) fn swap(e: &FlatLayout, v: &mut [u8], i: u64, j: u64) -> VmResult<()> {
    let n = raw::vec_len(v);
    if i >= n || j >= n {
        return Err(oob());
    }
    if i != j {
        let s = e.size as usize;
        let data = raw::vec_data_mut(v, e.size);
        let (lo, hi) = (i.min(j) as usize * s, i.max(j) as usize * s);
        let (a, b) = data.split_at_mut(hi);
        a[lo..lo + s].swap_with_slice(&mut b[..s]);
    }
    Ok(())
}

/// `vector::move_range(from, removal, len, to, insert)`: moves
/// `from[removal..removal+len]` into `to` at `insert`. Bounds are checked
/// before anything moves.
pub(crate) fn move_range(
    e: &FlatLayout,
    from: &mut [u8],
    removal: u64,
    len: u64,
    to: &mut [u8],
    insert: u64,
    max_len: u64,
) -> VmResult<()> {
    let (flen, tlen) = (raw::vec_len(from), raw::vec_len(to));
    if removal.checked_add(len).is_none_or(|end| end > flen) || insert > tlen {
        return Err(oob());
    }
    if len == 0 {
        return Ok(());
    }
    if tlen + len > max_len {
        return Err(too_long());
    }
    raw::vec_reserve(to, len, e.size, e.align)?;
    let s = e.size as usize;
    let (r, l, ins) = (removal as usize * s, len as usize * s, insert as usize * s);
    let tail_to = tlen as usize * s;
    {
        let fdata = raw::vec_data(from, e.size);
        let tdata = raw::vec_data_mut(to, e.size);
        tdata.copy_within(ins..tail_to, ins + l);
        tdata[ins..ins + l].copy_from_slice(&fdata[r..r + l]);
    }
    raw::vec_set_len(to, tlen + len);
    let tail_from = flen as usize * s;
    raw::vec_data_mut(from, e.size).copy_within(r + l..tail_from, r);
    raw::vec_set_len(from, flen - len);
    Ok(())
}
