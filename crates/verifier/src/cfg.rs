//! The control-flow graph of one code unit: basic blocks, successors, a
//! depth-first traversal order and the back edges it finds (Move's
//! definition: an edge to a block whose exploration is still in progress).

use movejit_format::{cfg, CodeUnit};
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

impl Cfg {
    /// Builds the graph; the code must be non-empty and bounds-checked.
    pub fn new(code: &CodeUnit) -> Cfg {
        // Offsets are u16, as branch targets are.
        let mut blocks = BTreeMap::new();
        for (start, end) in cfg::basic_blocks(code) {
            let (start, last) = (start as u16, (end - 1) as u16);
            let successors = cfg::successors(code, end - 1).into_iter().map(|s| s as u16).collect();
            blocks.insert(start, Block { start, end: last, successors });
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
