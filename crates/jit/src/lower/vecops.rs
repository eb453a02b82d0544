//! Inline fast paths of `VecPushBack`, `VecPopBack` and `VecSwap`.
//!
//! The common case of each (a vector that already has a header, room in
//! its buffer, indices in range) is plain loads and stores on the vector
//! header (jit-abi.md 1.3: the slot points to `{len, cap, data}`); anything
//! else (first allocation, growth, every error) takes a cold call of the
//! runtime's shim, which decides and reports exactly as before. Elements
//! move as bytes, as the shims move them.

use super::*;

const OFF_LEN: i32 = 0;
const OFF_CAP: i32 = 8;
const OFF_DATA: i32 = 16;
const MAX_VECTOR_LEN: i32 = ExecContext::OFFSETS.max_vector_len as i32;

/// Elements up to this size are swapped inline.
const INLINE_SWAP: u32 = 64;

impl Lowerer<'_, '_> {
    /// Switches to a fresh block `blk` (sealed: all its predecessors exist).
    fn enter(&mut self, blk: Block) {
        self.b.switch_to_block(blk);
        self.b.seal_block(blk);
    }

    /// The address of element `idx` of the buffer at `data`.
    fn elem_addr(&mut self, data: Value, idx: Value, size: u32) -> Value {
        let scaled = self.b.ins().imul_imm_s(idx, size as i64);
        self.b.ins().iadd(data, scaled)
    }

    pub(super) fn lower_vec_push_back(&mut self, i: usize) -> CompileResult<()> {
        let (et, ev) = self.pop()?;
        let (t, r) = self.pop_ref()?;
        let el = Self::elem_of(&t)?;
        if matches!(et, Ty::R(_)) {
            return Err(malformed("vector of references"));
        }
        let size = el.size;
        let fast = size <= INLINE_COPY;
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let done = self.b.create_block();
        if fast {
            let has = self.b.create_block();
            let room = self.b.create_block();
            let hdr = self.b.ins().load(types::I64, Self::vmem(), r, 0);
            self.b.ins().brif(hdr, has, &[], slow, &[]);
            self.enter(has);
            let len = self.b.ins().load(types::I64, Self::mem(), hdr, OFF_LEN);
            let cap = self.b.ins().load(types::I64, Self::mem(), hdr, OFF_CAP);
            let max = self.load_ctx(types::I64, MAX_VECTOR_LEN);
            let below_cap = self.b.ins().icmp(IntCC::UnsignedLessThan, len, cap);
            let below_max = self.b.ins().icmp(IntCC::UnsignedLessThan, len, max);
            let ok = self.b.ins().band(below_cap, below_max);
            self.b.ins().brif(ok, room, &[], slow, &[]);
            self.enter(room);
            let data = self.b.ins().load(self.ptr, Self::mem(), hdr, OFF_DATA);
            let at = self.elem_addr(data, len, size);
            self.store_operand(&et, &ev, at, 0)?;
            let len1 = self.b.ins().iadd_imm_s(len, 1);
            self.b.ins().store(Self::mem(), len1, hdr, OFF_LEN);
            self.b.ins().jump(done, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.enter(slow);
        let src = match &et {
            Ty::S(_) => {
                self.spill(&ev, 0);
                self.slot_addr(0)
            }
            _ => ev.addr()?,
        };
        let ep = self.layout_ptr(&el);
        self.call_status(HelperId::vec_push_back(), &[self.ctx, ep, r, src], i)?;
        self.b.ins().jump(done, &[]);
        self.enter(done);
        Ok(())
    }

    pub(super) fn lower_vec_pop_back(&mut self, i: usize) -> CompileResult<()> {
        let (t, r) = self.pop_ref()?;
        let el = Self::elem_of(&t)?;
        let ty = Ty::of(&el);
        let size = el.size;
        // Scalars come back as block parameters, others in their operand slot.
        let lanes: Vec<Type> = match &ty {
            Ty::S(k) => k.lanes().to_vec(),
            Ty::M(_) => Vec::new(),
            Ty::R(_) => return Err(malformed("vector of references")),
        };
        let dst = match &ty {
            Ty::M(_) => Some(self.opslot(self.stack.len(), &el)),
            _ => None,
        };
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let done = self.b.create_block();
        for l in &lanes {
            self.b.append_block_param(done, *l);
        }
        if size <= INLINE_COPY {
            let has = self.b.create_block();
            let nonempty = self.b.create_block();
            let hdr = self.b.ins().load(types::I64, Self::vmem(), r, 0);
            self.b.ins().brif(hdr, has, &[], slow, &[]);
            self.enter(has);
            let len = self.b.ins().load(types::I64, Self::mem(), hdr, OFF_LEN);
            self.b.ins().brif(len, nonempty, &[], slow, &[]);
            self.enter(nonempty);
            let last = self.b.ins().iadd_imm_s(len, -1);
            let data = self.b.ins().load(self.ptr, Self::mem(), hdr, OFF_DATA);
            let at = self.elem_addr(data, last, size);
            let args: Vec<BlockArg> = match (&ty, dst) {
                (Ty::S(k), _) => self.load_scalar(*k, at, 0).lanes().into_iter().map(BlockArg::Value).collect(),
                (_, Some(d)) => {
                    self.copy_mem(d, at, size);
                    Vec::new()
                }
                _ => return Err(malformed("pop_back destination")),
            };
            self.b.ins().store(Self::mem(), last, hdr, OFF_LEN);
            self.b.ins().jump(done, &args);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.enter(slow);
        let out = match dst {
            Some(d) => d,
            None => self.slot_addr(0),
        };
        let ep = self.layout_ptr(&el);
        self.call_status(HelperId::vec_pop_back(), &[self.ctx, ep, r, out], i)?;
        let args: Vec<BlockArg> = match &ty {
            Ty::S(k) => self.reload(*k, 0).lanes().into_iter().map(BlockArg::Value).collect(),
            _ => Vec::new(),
        };
        self.b.ins().jump(done, &args);
        self.enter(done);
        let v = match (&ty, dst) {
            (_, Some(d)) => Val::Mem(d),
            _ => {
                let ps = self.b.block_params(done).to_vec();
                Val::from_lanes(&ty, &ps)
            }
        };
        self.push(ty, v, i);
        Ok(())
    }

    pub(super) fn lower_vec_swap(&mut self, i: usize) -> CompileResult<()> {
        let j = self.pop_kind(Kind::U64)?.one()?;
        let k = self.pop_kind(Kind::U64)?.one()?;
        let (t, r) = self.pop_ref()?;
        let el = Self::elem_of(&t)?;
        let size = el.size;
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let done = self.b.create_block();
        if size <= INLINE_SWAP {
            let has = self.b.create_block();
            let inb = self.b.create_block();
            let hdr = self.b.ins().load(types::I64, Self::vmem(), r, 0);
            self.b.ins().brif(hdr, has, &[], slow, &[]);
            self.enter(has);
            let len = self.b.ins().load(types::I64, Self::mem(), hdr, OFF_LEN);
            let k_in = self.b.ins().icmp(IntCC::UnsignedLessThan, k, len);
            let j_in = self.b.ins().icmp(IntCC::UnsignedLessThan, j, len);
            let ok = self.b.ins().band(k_in, j_in);
            self.b.ins().brif(ok, inb, &[], slow, &[]);
            self.enter(inb);
            let data = self.b.ins().load(self.ptr, Self::mem(), hdr, OFF_DATA);
            let pa = self.elem_addr(data, k, size);
            let pb = self.elem_addr(data, j, size);
            // Both read before either is written, so k == j is harmless.
            let mut chunks = Vec::new();
            let mut at = 0u32;
            for (w, ty) in [(8u32, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)] {
                while size - at >= w {
                    let x = self.b.ins().load(ty, Self::vmem(), pa, at as i32);
                    let y = self.b.ins().load(ty, Self::vmem(), pb, at as i32);
                    chunks.push((x, y, at));
                    at += w;
                }
            }
            for (x, y, at) in chunks {
                self.b.ins().store(Self::vmem(), y, pa, at as i32);
                self.b.ins().store(Self::vmem(), x, pb, at as i32);
            }
            self.b.ins().jump(done, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.enter(slow);
        let ep = self.layout_ptr(&el);
        self.call_status(HelperId::vec_swap(), &[self.ctx, ep, r, k, j], i)?;
        self.b.ins().jump(done, &[]);
        self.enter(done);
        Ok(())
    }
}
