//! Static gas costs and how compiled code charges them.
//!
//! A block's instructions are cut into segments that end after each call
//! (a callee must see exactly the gas the interpreter would leave it). On
//! entry to a segment compiled code compares the gas left with the
//! segment's summed cost: if it suffices, it is charged at once and the
//! segment runs; an error raised inside refunds the cost of the
//! instructions after the failing one, so gas used matches the interpreter.
//! If it does not suffice, a second copy of the segment runs that charges
//! instruction by instruction and stops with `OUT_OF_GAS` at exactly the
//! instruction the interpreter would stop at (earlier errors win, as there).
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
