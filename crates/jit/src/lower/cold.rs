//! Failure blocks next to their site in the baseline tier's block order.
//!
//! A checked instruction ends its block with `brif failed, site, next`:
//! `site` reads the operands it reports or redoes, then jumps to the shared
//! cold failure path. Cranelift lowers blocks in the reverse postorder of a
//! depth-first walk that takes a `brif`'s first target first, which puts
//! every `site` after the whole rest of the function. Its single-pass
//! register allocator (the baseline tier) scans the blocks backwards,
//! keeping the values live so far and revisiting all of them at every
//! block: an operand a site reads stays in that set from the site back to
//! its definition, through every block between. With one site per checked
//! instruction the set grows with the function and a straight-line function
//! of N checked adds allocates in O(N²) (`cargo bench -p movejit-benches
//! --bench long_function`).
//!
//! [`order_exits_after_branches`] makes each such branch take its hot
//! target first (`brif !failed, next, site`, the comparison inverted in
//! place when the branch is its only reader): the walk then places `site`
//! right after its branch, and the sites are marked cold so code emission
//! still moves them out of the hot path.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{Block, Function, InstBuilder, InstructionData, Opcode, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// See the module doc. An *exit* is a cold block or one whose successors
/// are all exits (it never returns to the hot path).
pub(crate) fn order_exits_after_branches(func: &mut Function) {
    let Some(entry) = func.layout.entry_block() else { return };
    let mut successors: HashMap<Block, Vec<Block>> = HashMap::new();
    let mut exits = HashSet::new();
    let mut reads: HashMap<Value, u32> = HashMap::new();
    for block in func.layout.blocks() {
        if func.layout.is_cold(block) {
            exits.insert(block);
        }
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                *reads.entry(func.dfg.resolve_aliases(v)).or_default() += 1;
            }
        }
        let Some(last) = func.layout.last_inst(block) else { continue };
        let succ = successors.entry(block).or_default();
        for call in func.dfg.insts[last].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables) {
            succ.push(call.block(&func.dfg.value_lists));
        }
    }
    // Blocks that return have no successors and are hot.
    loop {
        let more: Vec<Block> = successors
            .iter()
            .filter(|(b, s)| {
                **b != entry && !s.is_empty() && !exits.contains(*b) && s.iter().all(|x| exits.contains(x))
            })
            .map(|(b, _)| *b)
            .collect();
        if more.is_empty() {
            break;
        }
        exits.extend(more);
    }
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for block in blocks {
        let Some(branch) = func.layout.last_inst(block) else { continue };
        let InstructionData::Brif { arg, blocks: [first, second], .. } = func.dfg.insts[branch] else { continue };
        let (site, next) = (first.block(&func.dfg.value_lists), second.block(&func.dfg.value_lists));
        if !exits.contains(&site) || exits.contains(&next) || site == next {
            continue;
        }
        let failed = func.dfg.resolve_aliases(arg);
        let inverted = match func.dfg.value_def(failed) {
            ValueDef::Result(def, 0)
                if reads.get(&failed) == Some(&1) && func.layout.inst_block(def) == Some(block) =>
            {
                match &mut func.dfg.insts[def] {
                    InstructionData::IntCompare { opcode: Opcode::Icmp, cond, .. } => {
                        *cond = cond.complement();
                        Some(failed)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let inverted = inverted.unwrap_or_else(|| {
            let mut pos = FuncCursor::new(func).at_inst(branch);
            pos.ins().icmp_imm_u(IntCC::Equal, failed, 0)
        });
        if let InstructionData::Brif { arg, blocks, .. } = &mut func.dfg.insts[branch] {
            *arg = inverted;
            blocks.swap(0, 1);
        }
        func.layout.set_cold(site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::dominator_tree::DominatorTree;
    use cranelift_codegen::flowgraph::ControlFlowGraph;
    use cranelift_codegen::ir::{types, AbiParam, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// A chain of `n` checked adds, each `brif overflow, site, next` (the
    /// first sites test with a shared comparison, the rest with their own),
    /// every site reading the sum and jumping to one cold failure block.
    fn checked_chain(n: usize) -> (Function, Vec<(Block, Block)>) {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I64));
        let mut func = Function::with_name_signature(UserFuncName::default(), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut ctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let fail = b.create_block();
        b.set_cold_block(fail);
        b.switch_to_block(entry);
        let mut sum = b.block_params(entry)[0];
        let mut pairs = Vec::new();
        for i in 0..n {
            let here = b.current_block().expect("a block");
            let one = b.ins().iconst(types::I64, 1);
            let next_sum = b.ins().iadd(sum, one);
            let overflow = b.ins().icmp(IntCC::UnsignedLessThan, next_sum, one);
            let (site, next) = (b.create_block(), b.create_block());
            b.set_cold_block(site);
            b.ins().brif(overflow, site, &[], next, &[]);
            b.switch_to_block(site);
            if i % 2 == 0 {
                // A second reader of the comparison: it is not inverted in place.
                let _ = b.ins().uextend(types::I64, overflow);
            }
            let _ = b.ins().isub(next_sum, one);
            b.ins().jump(fail, &[]);
            b.switch_to_block(next);
            pairs.push((here, site));
            sum = next_sum;
        }
        b.ins().return_(&[sum]);
        b.switch_to_block(fail);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().return_(&[zero]);
        b.seal_all_blocks();
        b.finalize(cranelift_codegen::isa::TargetFrontendConfig {
            default_call_conv: CallConv::SystemV,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
        (func, pairs)
    }

    /// Cranelift's lowering order (the control-flow graph's reverse
    /// postorder).
    fn lowering_order(func: &Function) -> Vec<Block> {
        let cfg = ControlFlowGraph::with_function(func);
        DominatorTree::with_function(func, &cfg).cfg_rpo().copied().collect()
    }

    #[test]
    fn failure_sites_follow_their_branch_in_lowering_order() {
        let (mut func, pairs) = checked_chain(6);
        let before = lowering_order(&func);
        let follows = |order: &[Block], (branch, site): (Block, Block)| {
            order.iter().position(|&b| b == branch).map(|i| i + 1) == order.iter().position(|&b| b == site)
        };
        assert!(pairs.iter().skip(1).all(|&p| !follows(&before, p)), "sites already follow: {before:?}");
        order_exits_after_branches(&mut func);
        let after = lowering_order(&func);
        for &p in &pairs {
            assert!(follows(&after, p), "{p:?} in {after:?}");
            assert!(func.layout.is_cold(p.1));
        }
        cranelift_codegen::verifier::verify_function(
            &func,
            &cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder()),
        )
        .expect("valid IR");
        // Each branch now takes its hot target first, on the inverted test.
        for (branch, site) in pairs {
            let last = func.layout.last_inst(branch).expect("a branch");
            let InstructionData::Brif { blocks: [first, second], .. } = func.dfg.insts[last] else { panic!("brif") };
            assert_eq!(second.block(&func.dfg.value_lists), site);
            assert_ne!(first.block(&func.dfg.value_lists), site);
        }
    }
}
