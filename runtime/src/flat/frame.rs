//! Frame shape (jit-abi.md 2): one contiguous block per function
//! instantiation, `[locals][operand slots]`, every slot at an offset known
//! before execution. The caller supplies the slot layouts (parameters and
//! locals from the signatures, operand slots from the verifier's stack
//! types); this only places them.

use super::layout::{FlatLayout, MAX_FLAT_SIZE};
use crate::error::{VmError, VmResult};
use movejit_format::StatusCode;
use std::sync::Arc;

/// Slot offsets of one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameLayout {
    /// Byte offset of each slot, locals first, then operand slots.
    pub offsets: Vec<u32>,
    /// How many of the slots are locals (parameters included).
    pub locals: usize,
    /// Bytes of the whole frame, a multiple of `align`.
    pub size: u32,
    /// Alignment of the frame base (the largest slot alignment, at least 8).
    pub align: u32,
}

impl FrameLayout {
    /// Places `locals` then `operands`, each slot at its natural alignment,
    /// in order.
    pub fn new(locals: &[Arc<FlatLayout>], operands: &[Arc<FlatLayout>]) -> VmResult<FrameLayout> {
        let mut off: u32 = 0;
        let mut align = 8;
        let mut offsets = Vec::with_capacity(locals.len() + operands.len());
        for l in locals.iter().chain(operands) {
            off = off.div_ceil(l.align) * l.align;
            align = align.max(l.align);
            offsets.push(off);
            off = off
                .checked_add(l.size)
                .filter(|s| *s <= MAX_FLAT_SIZE)
                .ok_or_else(|| VmError::new(StatusCode::VM_MAX_TYPE_NODES_REACHED).with_message("frame too large"))?;
        }
        Ok(FrameLayout { offsets, locals: locals.len(), size: off.div_ceil(align) * align, align })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;

    #[test]
    fn slots_are_aligned_and_ordered() {
        let l = |x: Layout| Arc::new(FlatLayout::from_layout(&x, 8).expect("layout"));
        let f = FrameLayout::new(&[l(Layout::Bool), l(Layout::U64), l(Layout::U16)], &[l(Layout::U128), l(Layout::U8)])
            .expect("frame");
        assert_eq!(f.offsets, vec![0, 8, 16, 24, 40]);
        assert_eq!((f.locals, f.size, f.align), (3, 48, 8));
    }
}
