//! Code units: locals, the instruction stream, and Sui jump tables.

use crate::binary::{limit, JUMP_TABLE_FULL};
use crate::reader::Reader;
use crate::*;
use ethnum::{I256, U256};

/// Reads a code unit: locals signature, instructions, and (Sui v7 only) the
/// jump-table section, which is present even when empty.
pub(crate) fn code_unit(r: &mut Reader) -> FormatResult<CodeUnit> {
    let locals = SignatureIndex(r.index(limit::TABLE_INDEX, "locals signature index")?);
    let code = instructions(r)?;
    let jump_tables = if r.flavour == Flavour::Sui { jump_tables(r)? } else { Vec::new() };
    Ok(CodeUnit { locals, code, jump_tables })
}

fn jump_tables(r: &mut Reader) -> FormatResult<Vec<VariantJumpTable>> {
    let n = r.count(limit::JUMP_TABLE_INDEX, "jump table count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        let head_enum = EnumDefinitionIndex(r.index(limit::TABLE_INDEX, "jump table enum index")?);
        let branches = r.count(limit::VARIANT_COUNT, "jump table branch count")?;
        let at = r.offset();
        let kind = r.u8()?;
        if kind != JUMP_TABLE_FULL {
            return Err(r.error_at(at, StatusCode::UNKNOWN_JUMP_TABLE_FLAG, format!("jump table kind {kind:#04x}")));
        }
        let mut jump_table = Vec::with_capacity(branches.min(r.remaining()));
        for _ in 0..branches {
            jump_table.push(r.index(limit::BYTECODE_INDEX, "jump table target")?);
        }
        out.push(VariantJumpTable { head_enum, jump_table });
    }
    Ok(out)
}

fn instructions(r: &mut Reader) -> FormatResult<Vec<Bytecode>> {
    let n = r.count(limit::BYTECODE_COUNT, "instruction count")?;
    let mut code = Vec::with_capacity(n.min(r.remaining()));
    while code.len() < n {
        code.push(instruction(r)?);
    }
    Ok(code)
}

fn instruction(r: &mut Reader) -> FormatResult<Bytecode> {
    let at = r.offset();
    let byte = r.u8()?;
    let Some(op) = Opcode::from_byte(byte, r.flavour) else {
        return Err(r.error_at(at, StatusCode::UNKNOWN_OPCODE, format!("unknown opcode {byte:#04x}")));
    };
    if op.since_version() > r.version {
        return Err(r.error_at(
            at,
            StatusCode::MALFORMED,
            format!("{} needs bytecode version {}, module is v{}", op.name(), op.since_version(), r.version),
        ));
    }
    let t = limit::TABLE_INDEX;
    let sig = |r: &mut Reader| r.index(t, "signature index").map(SignatureIndex);
    let local = |r: &mut Reader| Ok::<_, FormatError>(r.uleb(limit::LOCAL_INDEX, "local index")? as u8);
    let target = |r: &mut Reader| r.index(limit::BYTECODE_INDEX, "branch target");
    let sdef = |r: &mut Reader| r.index(t, "struct definition index").map(StructDefinitionIndex);
    let sinst = |r: &mut Reader| r.index(t, "struct instantiation index").map(StructDefInstantiationIndex);
    let fh = |r: &mut Reader| r.index(t, "function handle index").map(FunctionHandleIndex);
    let finst = |r: &mut Reader| r.index(t, "function instantiation index").map(FunctionInstantiationIndex);
    let fld = |r: &mut Reader| r.index(t, "field handle index").map(FieldHandleIndex);
    let fldi = |r: &mut Reader| r.index(t, "field instantiation index").map(FieldInstantiationIndex);
    let vfh = |r: &mut Reader| r.index(t, "variant field handle index").map(VariantFieldHandleIndex);
    let vfi = |r: &mut Reader| r.index(t, "variant field instantiation index").map(VariantFieldInstantiationIndex);
    let svh = |r: &mut Reader| r.index(t, "struct variant handle index").map(StructVariantHandleIndex);
    let svi = |r: &mut Reader| r.index(t, "struct variant instantiation index").map(StructVariantInstantiationIndex);
    let vh = |r: &mut Reader| r.index(limit::SUI_VARIANT_HANDLE_INDEX, "variant handle index").map(VariantHandleIndex);
    let vih = |r: &mut Reader| {
        r.index(limit::SUI_VARIANT_HANDLE_INDEX, "variant instantiation handle index")
            .map(VariantInstantiationHandleIndex)
    };
    let mask = |r: &mut Reader| r.uleb(u64::MAX, "closure mask").map(ClosureMask);
    let signed = StatusCode::MALFORMED;
    use Bytecode as B;
    use Opcode as O;
    if let Some(nullary) = op.nullary() {
        return Ok(nullary);
    }
    Ok(match op {
        O::BrTrue => B::BrTrue(target(r)?),
        O::BrFalse => B::BrFalse(target(r)?),
        O::Branch => B::Branch(target(r)?),
        O::LdU8 => B::LdU8(r.u8()?),
        O::LdU16 => B::LdU16(u16::from_le_bytes(r.array(StatusCode::BAD_U16)?)),
        O::LdU32 => B::LdU32(u32::from_le_bytes(r.array(StatusCode::BAD_U32)?)),
        O::LdU64 => B::LdU64(u64::from_le_bytes(r.array(StatusCode::BAD_U64)?)),
        O::LdU128 => B::LdU128(u128::from_le_bytes(r.array(StatusCode::BAD_U128)?)),
        O::LdU256 => B::LdU256(U256::from_le_bytes(r.array(StatusCode::BAD_U256)?)),
        O::LdI8 => B::LdI8(i8::from_le_bytes(r.array(signed)?)),
        O::LdI16 => B::LdI16(i16::from_le_bytes(r.array(signed)?)),
        O::LdI32 => B::LdI32(i32::from_le_bytes(r.array(signed)?)),
        O::LdI64 => B::LdI64(i64::from_le_bytes(r.array(signed)?)),
        O::LdI128 => B::LdI128(i128::from_le_bytes(r.array(signed)?)),
        O::LdI256 => B::LdI256(I256::from_le_bytes(r.array(signed)?)),
        O::LdConst => B::LdConst(ConstantPoolIndex(r.index(t, "constant index")?)),
        O::CopyLoc => B::CopyLoc(local(r)?),
        O::MoveLoc => B::MoveLoc(local(r)?),
        O::StLoc => B::StLoc(local(r)?),
        O::MutBorrowLoc => B::MutBorrowLoc(local(r)?),
        O::ImmBorrowLoc => B::ImmBorrowLoc(local(r)?),
        O::MutBorrowField => B::MutBorrowField(fld(r)?),
        O::MutBorrowFieldGeneric => B::MutBorrowFieldGeneric(fldi(r)?),
        O::ImmBorrowField => B::ImmBorrowField(fld(r)?),
        O::ImmBorrowFieldGeneric => B::ImmBorrowFieldGeneric(fldi(r)?),
        O::Call => B::Call(fh(r)?),
        O::CallGeneric => B::CallGeneric(finst(r)?),
        O::Pack => B::Pack(sdef(r)?),
        O::PackGeneric => B::PackGeneric(sinst(r)?),
        O::Unpack => B::Unpack(sdef(r)?),
        O::UnpackGeneric => B::UnpackGeneric(sinst(r)?),
        O::Exists => B::Exists(sdef(r)?),
        O::ExistsGeneric => B::ExistsGeneric(sinst(r)?),
        O::MutBorrowGlobal => B::MutBorrowGlobal(sdef(r)?),
        O::MutBorrowGlobalGeneric => B::MutBorrowGlobalGeneric(sinst(r)?),
        O::ImmBorrowGlobal => B::ImmBorrowGlobal(sdef(r)?),
        O::ImmBorrowGlobalGeneric => B::ImmBorrowGlobalGeneric(sinst(r)?),
        O::MoveFrom => B::MoveFrom(sdef(r)?),
        O::MoveFromGeneric => B::MoveFromGeneric(sinst(r)?),
        O::MoveTo => B::MoveTo(sdef(r)?),
        O::MoveToGeneric => B::MoveToGeneric(sinst(r)?),
        O::VecPack => {
            let s = sig(r)?;
            B::VecPack(s, u64::from_le_bytes(r.array(StatusCode::BAD_U64)?))
        }
        O::VecLen => B::VecLen(sig(r)?),
        O::VecImmBorrow => B::VecImmBorrow(sig(r)?),
        O::VecMutBorrow => B::VecMutBorrow(sig(r)?),
        O::VecPushBack => B::VecPushBack(sig(r)?),
        O::VecPopBack => B::VecPopBack(sig(r)?),
        O::VecUnpack => {
            let s = sig(r)?;
            B::VecUnpack(s, u64::from_le_bytes(r.array(StatusCode::BAD_U64)?))
        }
        O::VecSwap => B::VecSwap(sig(r)?),
        O::ImmBorrowVariantField => B::ImmBorrowVariantField(vfh(r)?),
        O::MutBorrowVariantField => B::MutBorrowVariantField(vfh(r)?),
        O::ImmBorrowVariantFieldGeneric => B::ImmBorrowVariantFieldGeneric(vfi(r)?),
        O::MutBorrowVariantFieldGeneric => B::MutBorrowVariantFieldGeneric(vfi(r)?),
        O::PackVariant => B::PackVariant(svh(r)?),
        O::PackVariantGeneric => B::PackVariantGeneric(svi(r)?),
        O::UnpackVariant => B::UnpackVariant(svh(r)?),
        O::UnpackVariantGeneric => B::UnpackVariantGeneric(svi(r)?),
        O::TestVariant => B::TestVariant(svh(r)?),
        O::TestVariantGeneric => B::TestVariantGeneric(svi(r)?),
        O::PackClosure => {
            let f = fh(r)?;
            B::PackClosure(f, mask(r)?)
        }
        O::PackClosureGeneric => {
            let f = finst(r)?;
            B::PackClosureGeneric(f, mask(r)?)
        }
        O::CallClosure => B::CallClosure(sig(r)?),
        O::SuiPackVariant => B::SuiPackVariant(vh(r)?),
        O::SuiPackVariantGeneric => B::SuiPackVariantGeneric(vih(r)?),
        O::SuiUnpackVariant => B::SuiUnpackVariant(vh(r)?),
        O::SuiUnpackVariantImmRef => B::SuiUnpackVariantImmRef(vh(r)?),
        O::SuiUnpackVariantMutRef => B::SuiUnpackVariantMutRef(vh(r)?),
        O::SuiUnpackVariantGeneric => B::SuiUnpackVariantGeneric(vih(r)?),
        O::SuiUnpackVariantGenericImmRef => B::SuiUnpackVariantGenericImmRef(vih(r)?),
        O::SuiUnpackVariantGenericMutRef => B::SuiUnpackVariantGenericMutRef(vih(r)?),
        O::VariantSwitch => {
            B::VariantSwitch(VariantJumpTableIndex(r.index(limit::JUMP_TABLE_INDEX, "jump table index")?))
        }
        // Only nullary opcodes (returned above) reach here; the opcode
        // table's tests keep that true.
        _ => return Err(r.error_at(at, StatusCode::UNKNOWN_OPCODE, format!("no operand decoder for {}", op.name()))),
    })
}
