//! Move assembly text (`.masm`, the format of Aptos move-asm): disassembler and assembler.
