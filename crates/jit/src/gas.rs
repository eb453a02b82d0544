//! Static gas costs and how compiled code charges them.
//!
//! A block's instructions are cut into segments that end after each call
//! (a callee must see exactly the gas the interpreter would leave it).
//! Each segment is lowered ONCE (`lower/metered.rs`): compiled code charges
//! the segment's summed cost at once on entry; an instruction's own error
//! refunds the cost of the instructions after it, so gas used matches the
//! interpreter. Tests before calls, aborts and global storage, before the
//! segment's last instruction and inside every failure site compare the
//! gas on entry with the static prefix sum (and the frame's operand-stack
//! room with the recorded push heights); a shared cold resolver finds the
//! first instruction at which the interpreter runs out of gas or overflows
//! the operand stack and fails there (earlier errors of the instructions
//! themselves win, as there).
//!
//! Costs come from the runtime's [`CostTable`], the interpreter's own: the
//! static cost of each instruction is charged before it runs, a call then
//! charges `per_frame` after its depth check, and running out of gas leaves
//! no gas (`gas_left = 0`), exactly as the interpreter's meter does.

#![forbid(unsafe_code)]

use movejit_format::Bytecode;
pub use movejit_runtime::CostTable;

/// The static cost of one instruction.
pub fn instr_cost(table: &CostTable, ins: &Bytecode) -> u64 {
    table.instr.get(&ins.opcode()).copied().unwrap_or(table.default_instr)
}

/// Segments `(start, end)` of the block `[start, end)`: each ends after a
/// call (closure calls included) or at the block end.
pub fn segments(code: &[Bytecode], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = start;
    for (i, ins) in code.iter().enumerate().take(end).skip(start) {
        if matches!(ins, Bytecode::Call(_) | Bytecode::CallGeneric(_) | Bytecode::CallClosure(_)) && i + 1 < end {
            out.push((s, i + 1));
            s = i + 1;
        }
    }
    out.push((s, end));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::FunctionHandleIndex;
    use Bytecode::*;

    #[test]
    fn cut_after_calls() {
        let code = vec![LdU64(1), Call(FunctionHandleIndex(0)), Pop, Call(FunctionHandleIndex(0)), Ret];
        assert_eq!(segments(&code, 0, 5), vec![(0, 2), (2, 4), (4, 5)]);
        let code = vec![LdU64(1), Call(FunctionHandleIndex(0))];
        assert_eq!(segments(&code, 0, 2), vec![(0, 2)]);
    }
}
