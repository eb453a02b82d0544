//! The control-flow graph of one code unit: basic blocks, successors, a
//! depth-first traversal order and the back edges it finds (Move's
//! definition: an edge to a block whose exploration is still in progress).

use movejit_format::{Bytecode, CodeUnit};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) type BlockId = u16;

pub(crate) struct Block {
    pub start: u16,
    pub end: u16,
    pub successors: Vec<BlockId>,
}

pub(crate) struct Cfg {
    /// Blocks by start offset, in code order.
    pub blocks: BTreeMap<BlockId, Block>,
    /// Reachable blocks in reverse post-order.
    traversal: Vec<BlockId>,
    traversal_index: BTreeMap<BlockId, usize>,
    /// loop head -> blocks with a back edge to it.
    loop_heads: BTreeMap<BlockId, BTreeSet<BlockId>>,
}

/// Successor offsets of the instruction at `pc`, ascending.
pub(crate) fn successors(pc: u16, code: &CodeUnit) -> Vec<u16> {
    let instr = &code.code[pc as usize];
    let mut v: Vec<u16> = Vec::new();
    if let Some(t) = instr.branch_target() {
        v.push(t);
    }
    if let Bytecode::VariantSwitch(j) = instr {
        if let Some(jt) = code.jump_tables.get(j.idx()) {
            v.extend(jt.jump_table.iter().copied());
        }
    }
    let next = pc as usize + 1;
    if next < code.code.len() && !instr.is_unconditional_branch() && !v.contains(&(next as u16)) {
        v.push(next as u16);
    }
    v.sort_unstable();
    v.dedup();
    v
}

impl Cfg {
    /// Builds the graph; the code must be non-empty and bounds-checked.
    pub fn new(code: &CodeUnit) -> Cfg {
        let len = code.code.len();
        let mut starts = BTreeSet::new();
        starts.insert(0u16);
        for (pc, instr) in code.code.iter().enumerate() {
            if let Some(t) = instr.branch_target() {
                starts.insert(t);
            }
            if let Bytecode::VariantSwitch(j) = instr {
                if let Some(jt) = code.jump_tables.get(j.idx()) {
                    starts.extend(jt.jump_table.iter().copied());
                }
            }
            if instr.is_branch() && pc + 1 < len {
                starts.insert(pc as u16 + 1);
            }
        }
        let starts: Vec<u16> = starts.into_iter().filter(|s| (*s as usize) < len).collect();
        let mut blocks = BTreeMap::new();
        for (i, s) in starts.iter().enumerate() {
            let end = match starts.get(i + 1) {
                Some(n) => n - 1,
                None => (len - 1) as u16,
            };
            blocks.insert(*s, Block { start: *s, end, successors: successors(end, code) });
        }

        // Depth-first exploration from the entry, as Move does it.
        #[derive(Clone, Copy, PartialEq)]
        enum Ex {
            InProgress,
            Done,
        }
        let mut exploration: BTreeMap<BlockId, Ex> = BTreeMap::new();
        let mut stack = vec![0u16];
        let mut loop_heads: BTreeMap<BlockId, BTreeSet<BlockId>> = BTreeMap::new();
        let mut post_order = Vec::with_capacity(blocks.len());
        while let Some(b) = stack.pop() {
            match exploration.get(&b).copied() {
                None => {
                    exploration.insert(b, Ex::InProgress);
                    stack.push(b);
                    if let Some(block) = blocks.get(&b) {
                        for s in &block.successors {
                            match exploration.get(s) {
                                None => stack.push(*s),
                                Some(Ex::InProgress) => {
                                    loop_heads.entry(*s).or_default().insert(b);
                                }
                                Some(Ex::Done) => {}
                            }
                        }
                    }
                }
                Some(Ex::Done) => {}
                Some(Ex::InProgress) => {
                    post_order.push(b);
                    exploration.insert(b, Ex::Done);
                }
            }
        }
        post_order.reverse();
        let traversal_index = post_order.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        Cfg { blocks, traversal: post_order, traversal_index, loop_heads }
    }

    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    pub fn num_back_edges(&self) -> usize {
        self.loop_heads.values().map(|s| s.len()).sum()
    }
    pub fn block_ids(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.blocks.keys().copied()
    }
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[&id]
    }
    pub fn successors_of(&self, id: BlockId) -> &[BlockId] {
        &self.blocks[&id].successors
    }
    /// The block after `id` in traversal order.
    pub fn next_block(&self, id: BlockId) -> Option<BlockId> {
        let i = *self.traversal_index.get(&id)?;
        self.traversal.get(i + 1).copied()
    }
    pub fn traversal_index(&self, id: BlockId) -> usize {
        self.traversal_index.get(&id).copied().unwrap_or(self.traversal.len())
    }
    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> bool {
        self.loop_heads.get(&to).is_some_and(|s| s.contains(&from))
    }
}
