//! The abstract-interpretation driver shared by locals and reference safety:
//! walk blocks in traversal order, join states at block entries, revisit a
//! loop head when a back edge changes its entry state.

use crate::{
    cfg::{BlockId, Cfg},
    error::VerifyResult,
    meter::Meter,
};
use movejit_format::{Bytecode, CodeUnit};
use std::collections::BTreeMap;

pub(crate) trait Domain: Clone {
    /// Joins `other` into `self`; true if `self` changed.
    fn join(&mut self, other: &Self, meter: &mut Meter) -> VerifyResult<bool>;
}

pub(crate) trait Transfer {
    type State: Domain;
    fn execute(
        &mut self,
        state: &mut Self::State,
        instr: &Bytecode,
        offset: u16,
        block_end: u16,
        meter: &mut Meter,
    ) -> VerifyResult;
}

pub(crate) fn analyze<T: Transfer>(
    t: &mut T,
    initial: T::State,
    code: &CodeUnit,
    cfg: &Cfg,
    meter: &mut Meter,
) -> VerifyResult {
    let mut pre: BTreeMap<BlockId, T::State> = BTreeMap::new();
    pre.insert(0, initial);
    let mut next = Some(0u16);
    while let Some(block_id) = next {
        let Some(state) = pre.get(&block_id) else {
            next = cfg.next_block(block_id);
            continue;
        };
        let mut state = state.clone();
        let b = cfg.block(block_id);
        for pc in b.start..=b.end {
            t.execute(&mut state, &code.code[pc as usize], pc, b.end, meter)?;
        }
        let mut candidates = Vec::new();
        if let Some(n) = cfg.next_block(block_id) {
            candidates.push(n);
        }
        for succ in cfg.successors_of(block_id) {
            match pre.get_mut(succ) {
                Some(old) => {
                    if old.join(&state, meter)? && cfg.is_back_edge(block_id, *succ) {
                        candidates.push(*succ);
                    }
                }
                None => {
                    pre.insert(*succ, state.clone());
                }
            }
        }
        next = candidates.into_iter().min_by_key(|b| cfg.traversal_index(*b));
    }
    Ok(())
}
