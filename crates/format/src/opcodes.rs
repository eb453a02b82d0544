//! The opcode table: the one place that says, for every instruction, its
//! byte in each flavour, the bytecode version that introduced it, and its
//! mnemonic in `.masm` text. Decoder, serializer, disassembler, assembler and
//! verifier all read it from here.

use crate::model::{Bytecode, Flavour};

macro_rules! opcode_table {
    ($( $name:ident = $mnem:literal, aptos: $ab:expr, sui: $sb:expr, since: $ver:literal; )*) => {
        /// An instruction's kind, without operands.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($name,)* }

        impl Opcode {
            /// Every opcode of both flavours.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];

            /// The `.masm` mnemonic.
            pub fn mnemonic(self) -> &'static str {
                match self { $(Opcode::$name => $mnem,)* }
            }

            /// The byte in the Aptos (and v5/v6 common) encoding, if Aptos has it.
            pub fn aptos_byte(self) -> Option<u8> {
                match self { $(Opcode::$name => $ab,)* }
            }

            /// The byte in the Sui encoding, if Sui has it.
            pub fn sui_byte(self) -> Option<u8> {
                match self { $(Opcode::$name => $sb,)* }
            }

            /// The first bytecode version that has this opcode.
            pub fn since_version(self) -> u32 {
                match self { $(Opcode::$name => $ver,)* }
            }

            /// The Rust-style name (`MutBorrowField`).
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$name => stringify!($name),)* }
            }
        }
    };
}

opcode_table! {
    Pop = "pop", aptos: Some(0x01), sui: Some(0x01), since: 5;
    Ret = "ret", aptos: Some(0x02), sui: Some(0x02), since: 5;
    BrTrue = "br_true", aptos: Some(0x03), sui: Some(0x03), since: 5;
    BrFalse = "br_false", aptos: Some(0x04), sui: Some(0x04), since: 5;
    Branch = "branch", aptos: Some(0x05), sui: Some(0x05), since: 5;
    LdU64 = "ld_u64", aptos: Some(0x06), sui: Some(0x06), since: 5;
    LdConst = "ld_const", aptos: Some(0x07), sui: Some(0x07), since: 5;
    LdTrue = "ld_true", aptos: Some(0x08), sui: Some(0x08), since: 5;
    LdFalse = "ld_false", aptos: Some(0x09), sui: Some(0x09), since: 5;
    CopyLoc = "copy_loc", aptos: Some(0x0A), sui: Some(0x0A), since: 5;
    MoveLoc = "move_loc", aptos: Some(0x0B), sui: Some(0x0B), since: 5;
    StLoc = "st_loc", aptos: Some(0x0C), sui: Some(0x0C), since: 5;
    MutBorrowLoc = "mut_borrow_loc", aptos: Some(0x0D), sui: Some(0x0D), since: 5;
    ImmBorrowLoc = "borrow_loc", aptos: Some(0x0E), sui: Some(0x0E), since: 5;
    MutBorrowField = "mut_borrow_field", aptos: Some(0x0F), sui: Some(0x0F), since: 5;
    ImmBorrowField = "borrow_field", aptos: Some(0x10), sui: Some(0x10), since: 5;
    Call = "call", aptos: Some(0x11), sui: Some(0x11), since: 5;
    Pack = "pack", aptos: Some(0x12), sui: Some(0x12), since: 5;
    Unpack = "unpack", aptos: Some(0x13), sui: Some(0x13), since: 5;
    ReadRef = "read_ref", aptos: Some(0x14), sui: Some(0x14), since: 5;
    WriteRef = "write_ref", aptos: Some(0x15), sui: Some(0x15), since: 5;
    Add = "add", aptos: Some(0x16), sui: Some(0x16), since: 5;
    Sub = "sub", aptos: Some(0x17), sui: Some(0x17), since: 5;
    Mul = "mul", aptos: Some(0x18), sui: Some(0x18), since: 5;
    Mod = "mod", aptos: Some(0x19), sui: Some(0x19), since: 5;
    Div = "div", aptos: Some(0x1A), sui: Some(0x1A), since: 5;
    BitOr = "bit_or", aptos: Some(0x1B), sui: Some(0x1B), since: 5;
    BitAnd = "bit_and", aptos: Some(0x1C), sui: Some(0x1C), since: 5;
    Xor = "xor", aptos: Some(0x1D), sui: Some(0x1D), since: 5;
    Or = "or", aptos: Some(0x1E), sui: Some(0x1E), since: 5;
    And = "and", aptos: Some(0x1F), sui: Some(0x1F), since: 5;
    Not = "not", aptos: Some(0x20), sui: Some(0x20), since: 5;
    Eq = "eq", aptos: Some(0x21), sui: Some(0x21), since: 5;
    Neq = "neq", aptos: Some(0x22), sui: Some(0x22), since: 5;
    Lt = "lt", aptos: Some(0x23), sui: Some(0x23), since: 5;
    Gt = "gt", aptos: Some(0x24), sui: Some(0x24), since: 5;
    Le = "le", aptos: Some(0x25), sui: Some(0x25), since: 5;
    Ge = "ge", aptos: Some(0x26), sui: Some(0x26), since: 5;
    Abort = "abort", aptos: Some(0x27), sui: Some(0x27), since: 5;
    Nop = "nop", aptos: Some(0x28), sui: Some(0x28), since: 5;
    Exists = "exists", aptos: Some(0x29), sui: Some(0x29), since: 5;
    MutBorrowGlobal = "mut_borrow_global", aptos: Some(0x2A), sui: Some(0x2A), since: 5;
    ImmBorrowGlobal = "borrow_global", aptos: Some(0x2B), sui: Some(0x2B), since: 5;
    MoveFrom = "move_from", aptos: Some(0x2C), sui: Some(0x2C), since: 5;
    MoveTo = "move_to", aptos: Some(0x2D), sui: Some(0x2D), since: 5;
    FreezeRef = "freeze_ref", aptos: Some(0x2E), sui: Some(0x2E), since: 5;
    Shl = "shl", aptos: Some(0x2F), sui: Some(0x2F), since: 5;
    Shr = "shr", aptos: Some(0x30), sui: Some(0x30), since: 5;
    LdU8 = "ld_u8", aptos: Some(0x31), sui: Some(0x31), since: 5;
    LdU128 = "ld_u128", aptos: Some(0x32), sui: Some(0x32), since: 5;
    CastU8 = "cast_u8", aptos: Some(0x33), sui: Some(0x33), since: 5;
    CastU64 = "cast_u64", aptos: Some(0x34), sui: Some(0x34), since: 5;
    CastU128 = "cast_u128", aptos: Some(0x35), sui: Some(0x35), since: 5;
    MutBorrowFieldGeneric = "mut_borrow_field", aptos: Some(0x36), sui: Some(0x36), since: 5;
    ImmBorrowFieldGeneric = "borrow_field", aptos: Some(0x37), sui: Some(0x37), since: 5;
    CallGeneric = "call", aptos: Some(0x38), sui: Some(0x38), since: 5;
    PackGeneric = "pack", aptos: Some(0x39), sui: Some(0x39), since: 5;
    UnpackGeneric = "unpack", aptos: Some(0x3A), sui: Some(0x3A), since: 5;
    ExistsGeneric = "exists", aptos: Some(0x3B), sui: Some(0x3B), since: 5;
    MutBorrowGlobalGeneric = "mut_borrow_global", aptos: Some(0x3C), sui: Some(0x3C), since: 5;
    ImmBorrowGlobalGeneric = "borrow_global", aptos: Some(0x3D), sui: Some(0x3D), since: 5;
    MoveFromGeneric = "move_from", aptos: Some(0x3E), sui: Some(0x3E), since: 5;
    MoveToGeneric = "move_to", aptos: Some(0x3F), sui: Some(0x3F), since: 5;
    VecPack = "vec_pack", aptos: Some(0x40), sui: Some(0x40), since: 5;
    VecLen = "vec_len", aptos: Some(0x41), sui: Some(0x41), since: 5;
    VecImmBorrow = "vec_borrow", aptos: Some(0x42), sui: Some(0x42), since: 5;
    VecMutBorrow = "vec_mut_borrow", aptos: Some(0x43), sui: Some(0x43), since: 5;
    VecPushBack = "vec_push_back", aptos: Some(0x44), sui: Some(0x44), since: 5;
    VecPopBack = "vec_pop_back", aptos: Some(0x45), sui: Some(0x45), since: 5;
    VecUnpack = "vec_unpack", aptos: Some(0x46), sui: Some(0x46), since: 5;
    VecSwap = "vec_swap", aptos: Some(0x47), sui: Some(0x47), since: 5;
    LdU16 = "ld_u16", aptos: Some(0x48), sui: Some(0x48), since: 6;
    LdU32 = "ld_u32", aptos: Some(0x49), sui: Some(0x49), since: 6;
    LdU256 = "ld_u256", aptos: Some(0x4A), sui: Some(0x4A), since: 6;
    CastU16 = "cast_u16", aptos: Some(0x4B), sui: Some(0x4B), since: 6;
    CastU32 = "cast_u32", aptos: Some(0x4C), sui: Some(0x4C), since: 6;
    CastU256 = "cast_u256", aptos: Some(0x4D), sui: Some(0x4D), since: 6;
    ImmBorrowVariantField = "borrow_variant_field", aptos: Some(0x4E), sui: None, since: 7;
    MutBorrowVariantField = "mut_borrow_variant_field", aptos: Some(0x4F), sui: None, since: 7;
    ImmBorrowVariantFieldGeneric = "borrow_variant_field", aptos: Some(0x50), sui: None, since: 7;
    MutBorrowVariantFieldGeneric = "mut_borrow_variant_field", aptos: Some(0x51), sui: None, since: 7;
    PackVariant = "pack_variant", aptos: Some(0x52), sui: None, since: 7;
    PackVariantGeneric = "pack_variant", aptos: Some(0x53), sui: None, since: 7;
    UnpackVariant = "unpack_variant", aptos: Some(0x54), sui: None, since: 7;
    UnpackVariantGeneric = "unpack_variant", aptos: Some(0x55), sui: None, since: 7;
    TestVariant = "test_variant", aptos: Some(0x56), sui: None, since: 7;
    TestVariantGeneric = "test_variant", aptos: Some(0x57), sui: None, since: 7;
    PackClosure = "pack_closure", aptos: Some(0x58), sui: None, since: 8;
    PackClosureGeneric = "pack_closure", aptos: Some(0x59), sui: None, since: 8;
    CallClosure = "call_closure", aptos: Some(0x5A), sui: None, since: 8;
    LdI8 = "ld_i8", aptos: Some(0x5B), sui: None, since: 9;
    LdI16 = "ld_i16", aptos: Some(0x5C), sui: None, since: 9;
    LdI32 = "ld_i32", aptos: Some(0x5D), sui: None, since: 9;
    LdI64 = "ld_i64", aptos: Some(0x5E), sui: None, since: 9;
    LdI128 = "ld_i128", aptos: Some(0x5F), sui: None, since: 9;
    LdI256 = "ld_i256", aptos: Some(0x60), sui: None, since: 9;
    CastI8 = "cast_i8", aptos: Some(0x61), sui: None, since: 9;
    CastI16 = "cast_i16", aptos: Some(0x62), sui: None, since: 9;
    CastI32 = "cast_i32", aptos: Some(0x63), sui: None, since: 9;
    CastI64 = "cast_i64", aptos: Some(0x64), sui: None, since: 9;
    CastI128 = "cast_i128", aptos: Some(0x65), sui: None, since: 9;
    CastI256 = "cast_i256", aptos: Some(0x66), sui: None, since: 9;
    Negate = "negate", aptos: Some(0x67), sui: None, since: 9;
    AbortMsg = "abort_msg", aptos: Some(0x68), sui: None, since: 10;
    SuiPackVariant = "pack_variant", aptos: None, sui: Some(0x4E), since: 7;
    SuiPackVariantGeneric = "pack_variant", aptos: None, sui: Some(0x4F), since: 7;
    SuiUnpackVariant = "unpack_variant", aptos: None, sui: Some(0x50), since: 7;
    SuiUnpackVariantImmRef = "unpack_variant_ref", aptos: None, sui: Some(0x51), since: 7;
    SuiUnpackVariantMutRef = "unpack_variant_mut_ref", aptos: None, sui: Some(0x52), since: 7;
    SuiUnpackVariantGeneric = "unpack_variant", aptos: None, sui: Some(0x53), since: 7;
    SuiUnpackVariantGenericImmRef = "unpack_variant_ref", aptos: None, sui: Some(0x54), since: 7;
    SuiUnpackVariantGenericMutRef = "unpack_variant_mut_ref", aptos: None, sui: Some(0x55), since: 7;
    VariantSwitch = "variant_switch", aptos: None, sui: Some(0x56), since: 7;
}

/// The opcodes that take no operands: for them the opcode is the whole
/// instruction, so decoder, assembler and tests build it from here.
macro_rules! nullary_opcodes {
    ($($name:ident),* $(,)?) => {
        impl Opcode {
            /// The instruction itself when this opcode takes no operands.
            pub fn nullary(self) -> Option<Bytecode> {
                match self {
                    $(Opcode::$name => Some(Bytecode::$name),)*
                    _ => None,
                }
            }
        }
    };
}

nullary_opcodes! {
    Pop,
    Ret,
    LdTrue,
    LdFalse,
    ReadRef,
    WriteRef,
    FreezeRef,
    Add,
    Sub,
    Mul,
    Mod,
    Div,
    BitOr,
    BitAnd,
    Xor,
    Or,
    And,
    Not,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    Shl,
    Shr,
    CastU8,
    CastU16,
    CastU32,
    CastU64,
    CastU128,
    CastU256,
    CastI8,
    CastI16,
    CastI32,
    CastI64,
    CastI128,
    CastI256,
    Negate,
    Abort,
    AbortMsg,
    Nop,
}

impl Opcode {
    /// The byte for this opcode in `flavour`, if the flavour has it.
    /// v5/v6 (`Common`) modules use the Aptos numbering; whether the opcode
    /// exists at the module's version is a separate check (`since_version`).
    pub fn byte(self, flavour: Flavour) -> Option<u8> {
        match flavour {
            Flavour::Sui => self.sui_byte(),
            Flavour::Aptos | Flavour::Common => self.aptos_byte(),
        }
    }

    /// The opcode a byte stands for in `flavour`.
    pub fn from_byte(byte: u8, flavour: Flavour) -> Option<Opcode> {
        BYTE_TABLES.with_flavour(flavour)[byte as usize]
    }
}

struct ByteTables {
    aptos: [Option<Opcode>; 256],
    sui: [Option<Opcode>; 256],
}

impl ByteTables {
    const fn build() -> ByteTables {
        let mut t = ByteTables { aptos: [None; 256], sui: [None; 256] };
        let mut i = 0;
        while i < Opcode::ALL.len() {
            let op = Opcode::ALL[i];
            if let Some(b) = op.aptos_byte_const() {
                t.aptos[b as usize] = Some(op);
            }
            if let Some(b) = op.sui_byte_const() {
                t.sui[b as usize] = Some(op);
            }
            i += 1;
        }
        t
    }
    fn with_flavour(&self, flavour: Flavour) -> &[Option<Opcode>; 256] {
        match flavour {
            Flavour::Aptos | Flavour::Common => &self.aptos,
            Flavour::Sui => &self.sui,
        }
    }
}

// `const fn` twins of the table accessors: the table macro's `match`es are
// not `const`, and the byte lookup tables are built at compile time.
impl Opcode {
    const fn aptos_byte_const(self) -> Option<u8> {
        let b = self as usize;
        if b < SUI_FIRST {
            // Aptos opcodes are declared in byte order from 0x01.
            Some(b as u8 + 1)
        } else {
            None
        }
    }
    const fn sui_byte_const(self) -> Option<u8> {
        let b = self as usize;
        if b < COMMON_COUNT {
            Some(b as u8 + 1)
        } else if b >= SUI_FIRST {
            Some((b - SUI_FIRST) as u8 + 0x4E)
        } else {
            None
        }
    }
}

/// Opcodes 0x01..=0x4D, shared by both flavours.
const COMMON_COUNT: usize = 0x4D;
/// Index of the first Sui-only opcode in declaration order.
const SUI_FIRST: usize = 0x68;

static BYTE_TABLES: ByteTables = ByteTables::build();

impl Bytecode {
    /// The instruction's kind.
    pub fn opcode(&self) -> Opcode {
        use Bytecode as B;
        use Opcode as O;
        match self {
            B::Pop => O::Pop,
            B::Ret => O::Ret,
            B::BrTrue(_) => O::BrTrue,
            B::BrFalse(_) => O::BrFalse,
            B::Branch(_) => O::Branch,
            B::LdU8(_) => O::LdU8,
            B::LdU16(_) => O::LdU16,
            B::LdU32(_) => O::LdU32,
            B::LdU64(_) => O::LdU64,
            B::LdU128(_) => O::LdU128,
            B::LdU256(_) => O::LdU256,
            B::LdI8(_) => O::LdI8,
            B::LdI16(_) => O::LdI16,
            B::LdI32(_) => O::LdI32,
            B::LdI64(_) => O::LdI64,
            B::LdI128(_) => O::LdI128,
            B::LdI256(_) => O::LdI256,
            B::LdConst(_) => O::LdConst,
            B::LdTrue => O::LdTrue,
            B::LdFalse => O::LdFalse,
            B::CopyLoc(_) => O::CopyLoc,
            B::MoveLoc(_) => O::MoveLoc,
            B::StLoc(_) => O::StLoc,
            B::MutBorrowLoc(_) => O::MutBorrowLoc,
            B::ImmBorrowLoc(_) => O::ImmBorrowLoc,
            B::MutBorrowField(_) => O::MutBorrowField,
            B::MutBorrowFieldGeneric(_) => O::MutBorrowFieldGeneric,
            B::ImmBorrowField(_) => O::ImmBorrowField,
            B::ImmBorrowFieldGeneric(_) => O::ImmBorrowFieldGeneric,
            B::Call(_) => O::Call,
            B::CallGeneric(_) => O::CallGeneric,
            B::Pack(_) => O::Pack,
            B::PackGeneric(_) => O::PackGeneric,
            B::Unpack(_) => O::Unpack,
            B::UnpackGeneric(_) => O::UnpackGeneric,
            B::ReadRef => O::ReadRef,
            B::WriteRef => O::WriteRef,
            B::FreezeRef => O::FreezeRef,
            B::Add => O::Add,
            B::Sub => O::Sub,
            B::Mul => O::Mul,
            B::Mod => O::Mod,
            B::Div => O::Div,
            B::BitOr => O::BitOr,
            B::BitAnd => O::BitAnd,
            B::Xor => O::Xor,
            B::Or => O::Or,
            B::And => O::And,
            B::Not => O::Not,
            B::Eq => O::Eq,
            B::Neq => O::Neq,
            B::Lt => O::Lt,
            B::Gt => O::Gt,
            B::Le => O::Le,
            B::Ge => O::Ge,
            B::Shl => O::Shl,
            B::Shr => O::Shr,
            B::CastU8 => O::CastU8,
            B::CastU16 => O::CastU16,
            B::CastU32 => O::CastU32,
            B::CastU64 => O::CastU64,
            B::CastU128 => O::CastU128,
            B::CastU256 => O::CastU256,
            B::CastI8 => O::CastI8,
            B::CastI16 => O::CastI16,
            B::CastI32 => O::CastI32,
            B::CastI64 => O::CastI64,
            B::CastI128 => O::CastI128,
            B::CastI256 => O::CastI256,
            B::Negate => O::Negate,
            B::Abort => O::Abort,
            B::AbortMsg => O::AbortMsg,
            B::Nop => O::Nop,
            B::Exists(_) => O::Exists,
            B::ExistsGeneric(_) => O::ExistsGeneric,
            B::MutBorrowGlobal(_) => O::MutBorrowGlobal,
            B::MutBorrowGlobalGeneric(_) => O::MutBorrowGlobalGeneric,
            B::ImmBorrowGlobal(_) => O::ImmBorrowGlobal,
            B::ImmBorrowGlobalGeneric(_) => O::ImmBorrowGlobalGeneric,
            B::MoveFrom(_) => O::MoveFrom,
            B::MoveFromGeneric(_) => O::MoveFromGeneric,
            B::MoveTo(_) => O::MoveTo,
            B::MoveToGeneric(_) => O::MoveToGeneric,
            B::VecPack(..) => O::VecPack,
            B::VecLen(_) => O::VecLen,
            B::VecImmBorrow(_) => O::VecImmBorrow,
            B::VecMutBorrow(_) => O::VecMutBorrow,
            B::VecPushBack(_) => O::VecPushBack,
            B::VecPopBack(_) => O::VecPopBack,
            B::VecUnpack(..) => O::VecUnpack,
            B::VecSwap(_) => O::VecSwap,
            B::ImmBorrowVariantField(_) => O::ImmBorrowVariantField,
            B::MutBorrowVariantField(_) => O::MutBorrowVariantField,
            B::ImmBorrowVariantFieldGeneric(_) => O::ImmBorrowVariantFieldGeneric,
            B::MutBorrowVariantFieldGeneric(_) => O::MutBorrowVariantFieldGeneric,
            B::PackVariant(_) => O::PackVariant,
            B::PackVariantGeneric(_) => O::PackVariantGeneric,
            B::UnpackVariant(_) => O::UnpackVariant,
            B::UnpackVariantGeneric(_) => O::UnpackVariantGeneric,
            B::TestVariant(_) => O::TestVariant,
            B::TestVariantGeneric(_) => O::TestVariantGeneric,
            B::PackClosure(..) => O::PackClosure,
            B::PackClosureGeneric(..) => O::PackClosureGeneric,
            B::CallClosure(_) => O::CallClosure,
            B::SuiPackVariant(_) => O::SuiPackVariant,
            B::SuiPackVariantGeneric(_) => O::SuiPackVariantGeneric,
            B::SuiUnpackVariant(_) => O::SuiUnpackVariant,
            B::SuiUnpackVariantImmRef(_) => O::SuiUnpackVariantImmRef,
            B::SuiUnpackVariantMutRef(_) => O::SuiUnpackVariantMutRef,
            B::SuiUnpackVariantGeneric(_) => O::SuiUnpackVariantGeneric,
            B::SuiUnpackVariantGenericImmRef(_) => O::SuiUnpackVariantGenericImmRef,
            B::SuiUnpackVariantGenericMutRef(_) => O::SuiUnpackVariantGenericMutRef,
            B::VariantSwitch(_) => O::VariantSwitch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_tables_agree_with_the_declared_table() {
        for &op in Opcode::ALL {
            assert_eq!(op.aptos_byte_const(), op.aptos_byte(), "{op:?}");
            assert_eq!(op.sui_byte_const(), op.sui_byte(), "{op:?}");
        }
    }

    #[test]
    fn byte_lookup_round_trips() {
        for flavour in [Flavour::Common, Flavour::Aptos, Flavour::Sui] {
            for &op in Opcode::ALL {
                if let Some(b) = op.byte(flavour) {
                    assert_eq!(Opcode::from_byte(b, flavour), Some(op));
                }
            }
        }
        assert_eq!(Opcode::from_byte(0x56, Flavour::Sui), Some(Opcode::VariantSwitch));
        assert_eq!(Opcode::from_byte(0x56, Flavour::Aptos), Some(Opcode::TestVariant));
        assert_eq!(Opcode::from_byte(0x56, Flavour::Common), Some(Opcode::TestVariant));
        assert_eq!(Opcode::from_byte(0x69, Flavour::Aptos), None);
        assert_eq!(Opcode::from_byte(0x00, Flavour::Aptos), None);
    }

    #[test]
    fn nullary_instructions_have_their_own_opcode() {
        for &op in Opcode::ALL {
            if let Some(b) = op.nullary() {
                assert_eq!(b.opcode(), op);
            }
        }
        assert_eq!(Opcode::ALL.iter().filter(|o| o.nullary().is_some()).count(), 42);
    }
}
