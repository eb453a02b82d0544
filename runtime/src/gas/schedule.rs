//! Gas schedules as data. A [`Schedule`] is a set of named parameters, as a
//! chain stores them (Aptos: the `(name, value)` entries of `GasScheduleV2`);
//! [`InstructionCosts`] resolves, once, what each Move instruction costs
//! under it, so that charging never looks a name up.
//!
//! Which parameter prices which instruction is written once, in
//! [`aptos_parameters`]. Formulas (`base + per_unit × n`) name their
//! per-unit parameter in [`PerUnit`].

use super::aptos_v50;
use movejit_format::Opcode;
use std::collections::BTreeMap;
use std::fmt;

/// Named gas parameters at a gas feature version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    feature_version: u64,
    params: BTreeMap<String, u64>,
}

/// A schedule lacks a parameter that pricing needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingParameter(pub String);

impl fmt::Display for MissingParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the gas schedule has no parameter `{}`", self.0)
    }
}

impl std::error::Error for MissingParameter {}

impl Schedule {
    /// Aptos's schedule at gas feature version 50 (built in).
    pub fn aptos_v50() -> Self {
        Self::from_params(aptos_v50::FEATURE_VERSION, aptos_v50::PARAMETERS.iter().map(|&(n, v)| (n.to_string(), v)))
    }

    /// A schedule from `(name, value)` entries, e.g. read from a chain's
    /// on-chain schedule or a JSON file. A repeated name keeps its last value.
    pub fn from_params(feature_version: u64, params: impl IntoIterator<Item = (String, u64)>) -> Self {
        Schedule { feature_version, params: params.into_iter().collect() }
    }

    pub fn feature_version(&self) -> u64 {
        self.feature_version
    }

    /// Every parameter, by name.
    pub fn params(&self) -> &BTreeMap<String, u64> {
        &self.params
    }

    pub fn get(&self, name: &str) -> Result<u64, MissingParameter> {
        self.params.get(name).copied().ok_or_else(|| MissingParameter(name.to_string()))
    }
}

/// The size an instruction's formula multiplies its per-unit parameter by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerUnit {
    /// Abstract value units of the value copied, read or compared.
    AbstractValueUnit(&'static str),
    /// Fields packed or unpacked, elements packed, closure arguments captured.
    Count(&'static str),
    /// Elements a `vec_unpack` expects.
    ExpectedElement(&'static str),
    /// Bytes of a constant or an abort message.
    Byte(&'static str),
    /// A call: per argument and per local (and per type argument, generic).
    Call { per_ty_arg: Option<&'static str>, per_arg: &'static str, per_local: &'static str },
}

/// The parameters that price `op` on Aptos: its base (fixed) cost and the
/// per-unit part of its formula, if any. `None` for instructions Aptos does
/// not have (no Aptos byte in the opcode table).
pub fn aptos_parameters(op: Opcode) -> Option<(&'static str, Option<PerUnit>)> {
    use Opcode::*;
    op.aptos_byte()?;
    let fixed = |name| Some((name, None));
    match op {
        Nop => fixed("instr.nop"),
        Ret => fixed("instr.ret"),
        Abort => fixed("instr.abort"),
        AbortMsg => Some(("instr.abort_msg.base", Some(PerUnit::Byte("instr.abort_msg.per_byte")))),
        BrTrue => fixed("instr.br_true"),
        BrFalse => fixed("instr.br_false"),
        Branch => fixed("instr.branch"),
        Pop => fixed("instr.pop"),
        LdU8 => fixed("instr.ld_u8"),
        LdU16 => fixed("instr.ld_u16"),
        LdU32 => fixed("instr.ld_u32"),
        LdU64 => fixed("instr.ld_u64"),
        LdU128 => fixed("instr.ld_u128"),
        LdU256 => fixed("instr.ld_u256"),
        LdI8 => fixed("instr.ld_i8"),
        LdI16 => fixed("instr.ld_i16"),
        LdI32 => fixed("instr.ld_i32"),
        LdI64 => fixed("instr.ld_i64"),
        LdI128 => fixed("instr.ld_i128"),
        LdI256 => fixed("instr.ld_i256"),
        LdTrue => fixed("instr.ld_true"),
        LdFalse => fixed("instr.ld_false"),
        LdConst => Some(("instr.ld_const.base", Some(PerUnit::Byte("instr.ld_const.per_byte")))),
        ImmBorrowLoc => fixed("instr.imm_borrow_loc"),
        MutBorrowLoc => fixed("instr.mut_borrow_loc"),
        ImmBorrowField => fixed("instr.imm_borrow_field"),
        MutBorrowField => fixed("instr.mut_borrow_field"),
        ImmBorrowFieldGeneric => fixed("instr.imm_borrow_field_generic"),
        MutBorrowFieldGeneric => fixed("instr.mut_borrow_field_generic"),
        ImmBorrowVariantField => fixed("instr.imm_borrow_variant_field"),
        MutBorrowVariantField => fixed("instr.mut_borrow_variant_field"),
        ImmBorrowVariantFieldGeneric => fixed("instr.imm_borrow_variant_field_generic"),
        MutBorrowVariantFieldGeneric => fixed("instr.mut_borrow_variant_field_generic"),
        TestVariant => fixed("instr.test_variant"),
        TestVariantGeneric => fixed("instr.test_variant_generic"),
        CopyLoc => Some(("instr.copy_loc.base", Some(PerUnit::AbstractValueUnit("instr.copy_loc.per_abs_val_unit")))),
        MoveLoc => fixed("instr.move_loc.base"),
        StLoc => fixed("instr.st_loc.base"),
        // A closure call is priced as a call of its target (generic or not).
        Call | CallClosure => Some((
            "instr.call.base",
            Some(PerUnit::Call { per_ty_arg: None, per_arg: "instr.call.per_arg", per_local: "instr.call.per_local" }),
        )),
        CallGeneric => Some((
            "instr.call_generic.base",
            Some(PerUnit::Call {
                per_ty_arg: Some("instr.call_generic.per_ty_arg"),
                per_arg: "instr.call_generic.per_arg",
                per_local: "instr.call_generic.per_local",
            }),
        )),
        // Variants are priced as structs.
        Pack | PackVariant => Some(("instr.pack.base", Some(PerUnit::Count("instr.pack.per_field")))),
        PackGeneric | PackVariantGeneric => {
            Some(("instr.pack_generic.base", Some(PerUnit::Count("instr.pack_generic.per_field"))))
        }
        Unpack | UnpackVariant => Some(("instr.unpack.base", Some(PerUnit::Count("instr.unpack.per_field")))),
        UnpackGeneric | UnpackVariantGeneric => {
            Some(("instr.unpack_generic.base", Some(PerUnit::Count("instr.unpack_generic.per_field"))))
        }
        // The on-chain name really is `instr.pack.closure.per_arg`.
        PackClosure => Some(("instr.pack_closure.base", Some(PerUnit::Count("instr.pack.closure.per_arg")))),
        PackClosureGeneric => {
            Some(("instr.pack_closure_generic.base", Some(PerUnit::Count("instr.pack_closure_generic.per_arg"))))
        }
        ReadRef => Some(("instr.read_ref.base", Some(PerUnit::AbstractValueUnit("instr.read_ref.per_abs_val_unit")))),
        WriteRef => fixed("instr.write_ref.base"),
        FreezeRef => fixed("instr.freeze_ref"),
        CastU8 => fixed("instr.cast_u8"),
        CastU16 => fixed("instr.cast_u16"),
        CastU32 => fixed("instr.cast_u32"),
        CastU64 => fixed("instr.cast_u64"),
        CastU128 => fixed("instr.cast_u128"),
        CastU256 => fixed("instr.cast_u256"),
        CastI8 => fixed("instr.cast_i8"),
        CastI16 => fixed("instr.cast_i16"),
        CastI32 => fixed("instr.cast_i32"),
        CastI64 => fixed("instr.cast_i64"),
        CastI128 => fixed("instr.cast_i128"),
        CastI256 => fixed("instr.cast_i256"),
        Add => fixed("instr.add"),
        Sub => fixed("instr.sub"),
        Mul => fixed("instr.mul"),
        Mod => fixed("instr.mod"),
        Div => fixed("instr.div"),
        Negate => fixed("instr.negate"),
        BitOr => fixed("instr.bit_or"),
        BitAnd => fixed("instr.bit_and"),
        Xor => fixed("instr.bit_xor"),
        Shl => fixed("instr.bit_shl"),
        Shr => fixed("instr.bit_shr"),
        Or => fixed("instr.or"),
        And => fixed("instr.and"),
        Not => fixed("instr.not"),
        Lt => fixed("instr.lt"),
        Gt => fixed("instr.gt"),
        Le => fixed("instr.le"),
        Ge => fixed("instr.ge"),
        Eq => Some(("instr.eq.base", Some(PerUnit::AbstractValueUnit("instr.eq.per_abs_val_unit")))),
        Neq => Some(("instr.neq.base", Some(PerUnit::AbstractValueUnit("instr.neq.per_abs_val_unit")))),
        ImmBorrowGlobal => fixed("instr.imm_borrow_global.base"),
        ImmBorrowGlobalGeneric => fixed("instr.imm_borrow_global_generic.base"),
        MutBorrowGlobal => fixed("instr.mut_borrow_global.base"),
        MutBorrowGlobalGeneric => fixed("instr.mut_borrow_global_generic.base"),
        Exists => fixed("instr.exists.base"),
        ExistsGeneric => fixed("instr.exists_generic.base"),
        MoveFrom => fixed("instr.move_from.base"),
        MoveFromGeneric => fixed("instr.move_from_generic.base"),
        MoveTo => fixed("instr.move_to.base"),
        MoveToGeneric => fixed("instr.move_to_generic.base"),
        VecLen => fixed("instr.vec_len.base"),
        VecImmBorrow => fixed("instr.vec_imm_borrow.base"),
        VecMutBorrow => fixed("instr.vec_mut_borrow.base"),
        VecPushBack => fixed("instr.vec_push_back.base"),
        VecPopBack => fixed("instr.vec_pop_back.base"),
        VecSwap => fixed("instr.vec_swap.base"),
        VecPack => Some(("instr.vec_pack.base", Some(PerUnit::Count("instr.vec_pack.per_elem")))),
        VecUnpack => {
            Some(("instr.vec_unpack.base", Some(PerUnit::ExpectedElement("instr.vec_unpack.per_expected_elem"))))
        }
        // Sui-only (returned above); an Aptos opcode missing an arm fails
        // `every_aptos_instruction_is_priced`.
        _ => None,
    }
}

/// A formula's per-unit cost, resolved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitCosts {
    /// Per abstract value unit, field, element, byte or argument.
    pub per_unit: u64,
    /// Calls only: per type argument and per local.
    pub per_ty_arg: u64,
    pub per_local: u64,
}

/// What every instruction costs under one schedule, indexed by
/// `Opcode as usize`: the base, and the per-unit part of formulas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionCosts {
    pub base: Box<[u64]>,
    pub per_unit: Box<[UnitCosts]>,
    /// Per node of a type built by instantiation (`instr.subst_ty_per_node`).
    pub subst_ty_per_node: u64,
}

impl InstructionCosts {
    /// Resolves every Aptos instruction's parameters in `schedule`
    /// (instructions Aptos does not have cost nothing).
    pub fn aptos(schedule: &Schedule) -> Result<Self, MissingParameter> {
        let mut base = vec![0; Opcode::ALL.len()];
        let mut per_unit = vec![UnitCosts::default(); Opcode::ALL.len()];
        for &op in Opcode::ALL {
            let Some((base_name, formula)) = aptos_parameters(op) else { continue };
            base[op as usize] = schedule.get(base_name)?;
            per_unit[op as usize] = match formula {
                None => UnitCosts::default(),
                Some(
                    PerUnit::AbstractValueUnit(name)
                    | PerUnit::Count(name)
                    | PerUnit::ExpectedElement(name)
                    | PerUnit::Byte(name),
                ) => UnitCosts { per_unit: schedule.get(name)?, ..UnitCosts::default() },
                Some(PerUnit::Call { per_ty_arg, per_arg, per_local }) => UnitCosts {
                    per_unit: schedule.get(per_arg)?,
                    per_ty_arg: per_ty_arg.map(|n| schedule.get(n)).transpose()?.unwrap_or(0),
                    per_local: schedule.get(per_local)?,
                },
            };
        }
        Ok(InstructionCosts {
            base: base.into(),
            per_unit: per_unit.into(),
            subst_ty_per_node: schedule.get("instr.subst_ty_per_node")?,
        })
    }
}
