//! Function bodies: instructions with their operands resolved to table
//! entries, labels to code offsets, and `variant_switch` targets to the
//! function's jump tables.

use super::{err, intern, Builder, DefRef};
use crate::ast::*;
use crate::error::{AsmErrorKind, AsmResult, Pos};
use crate::parser::arg_to_value;
use ethnum::U256;
use movejit_format::*;
use std::collections::HashMap;

impl Builder<'_> {
    pub(super) fn define_fun(&mut self, def_index: usize, f: &FunDecl) -> AsmResult<()> {
        if f.is_native {
            return Ok(());
        }
        self.set_type_params(&f.type_params, f.pos)?;
        let decls: Vec<&Decl> = f.params.iter().chain(f.locals.iter()).collect();
        let tys = self.set_locals(&decls)?;
        let locals = self.signature(tys[f.params.len()..].to_vec(), f.pos)?;
        let mut labels: HashMap<&str, CodeOffset> = HashMap::new();
        for (off, ins) in f.code.iter().enumerate() {
            if let Some(l) = &ins.label {
                let off = u16::try_from(off).map_err(|_| err(AsmErrorKind::Limit, ins.pos, "function too long"))?;
                if labels.insert(l.as_str(), off).is_some() {
                    return Err(err(AsmErrorKind::Duplicate, ins.pos, format!("duplicate label `{l}`")));
                }
            }
        }
        let mut unit = CodeUnit { locals, code: Vec::with_capacity(f.code.len()), jump_tables: vec![] };
        let mut tables: HashMap<(u16, Vec<CodeOffset>), u16> = HashMap::new();
        for ins in &f.code {
            let bc = self.instr(ins, &labels, &mut unit.jump_tables, &mut tables)?;
            let op = bc.opcode();
            if op.byte(self.m.flavour).is_none() || op.since_version() > self.m.version {
                let flavour = if self.is_sui() { "Sui" } else { "Aptos" };
                return Err(err(
                    AsmErrorKind::Unsupported,
                    ins.pos,
                    format!("`{}` is not in {flavour} bytecode v{}", ins.op, self.m.version),
                ));
            }
            unit.code.push(bc);
        }
        self.m.function_defs[def_index].code = Some(unit);
        Ok(())
    }

    fn instr(
        &mut self,
        ins: &Instr,
        labels: &HashMap<&str, CodeOffset>,
        jump_tables: &mut Vec<VariantJumpTable>,
        tables: &mut HashMap<(u16, Vec<CodeOffset>), u16>,
    ) -> AsmResult<Bytecode> {
        use Bytecode as B;
        let pos = ins.pos;
        let args = ins.args.as_slice();
        let arity = |n: usize| -> AsmResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(AsmErrorKind::Operand, pos, format!("`{}` takes {n} operand(s), found {}", ins.op, args.len())))
            }
        };
        let simple = |a: &Arg, what: &str| -> AsmResult<String> {
            match a {
                Arg::Name(p, None) if p.address.is_none() && p.parts.len() == 1 => Ok(p.parts[0].clone()),
                _ => Err(err(AsmErrorKind::Operand, pos, format!("expected a {what} name"))),
            }
        };
        let label = |a: &Arg| -> AsmResult<CodeOffset> {
            let name = simple(a, "label")?;
            labels
                .get(name.as_str())
                .copied()
                .ok_or_else(|| err(AsmErrorKind::Unresolved, pos, format!("unknown label `{name}`")))
        };
        let number = |a: &Arg, max: U256| -> AsmResult<U256> {
            match a {
                Arg::Number(true, n) if *n <= max => Ok(*n),
                Arg::Number(..) => Err(err(AsmErrorKind::Operand, pos, format!("number out of range (0..={max})"))),
                _ => Err(err(AsmErrorKind::Operand, pos, "expected a number")),
            }
        };
        let signed = |a: &Arg, bits: u32| -> AsmResult<ethnum::I256> {
            let v = arg_to_value(pos, a)?;
            let ty = match bits {
                8 => SignatureToken::I8,
                16 => SignatureToken::I16,
                32 => SignatureToken::I32,
                64 => SignatureToken::I64,
                128 => SignatureToken::I128,
                _ => SignatureToken::I256,
            };
            let bytes = v.to_bcs(&ty).map_err(|m| err(AsmErrorKind::Operand, pos, m))?;
            let fill = if bytes.last().is_some_and(|b| b & 0x80 != 0) { 0xff } else { 0 };
            let mut buf = [fill; 32];
            buf[..bytes.len()].copy_from_slice(&bytes);
            Ok(ethnum::I256::from_le_bytes(buf))
        };
        let op = ins.op.as_str();
        // Mnemonics of operand-less opcodes are unique, so the opcode table
        // resolves them.
        let nullary = Opcode::ALL.iter().filter(|o| o.mnemonic() == op).find_map(|o| o.nullary());
        if let Some(bc) = nullary {
            arity(0)?;
            return Ok(bc);
        }
        Ok(match op {
            "br_true" | "br_false" | "branch" => {
                arity(1)?;
                let t = label(&args[0])?;
                match op {
                    "br_true" => B::BrTrue(t),
                    "br_false" => B::BrFalse(t),
                    _ => B::Branch(t),
                }
            }
            "ld_u8" => {
                arity(1)?;
                B::LdU8(number(&args[0], U256::from(u8::MAX))?.as_u8())
            }
            "ld_u16" => {
                arity(1)?;
                B::LdU16(number(&args[0], U256::from(u16::MAX))?.as_u16())
            }
            "ld_u32" => {
                arity(1)?;
                B::LdU32(number(&args[0], U256::from(u32::MAX))?.as_u32())
            }
            "ld_u64" => {
                arity(1)?;
                B::LdU64(number(&args[0], U256::from(u64::MAX))?.as_u64())
            }
            "ld_u128" => {
                arity(1)?;
                B::LdU128(number(&args[0], U256::from(u128::MAX))?.as_u128())
            }
            "ld_u256" => {
                arity(1)?;
                B::LdU256(number(&args[0], U256::MAX)?)
            }
            "ld_i8" => {
                arity(1)?;
                B::LdI8(signed(&args[0], 8)?.as_i8())
            }
            "ld_i16" => {
                arity(1)?;
                B::LdI16(signed(&args[0], 16)?.as_i16())
            }
            "ld_i32" => {
                arity(1)?;
                B::LdI32(signed(&args[0], 32)?.as_i32())
            }
            "ld_i64" => {
                arity(1)?;
                B::LdI64(signed(&args[0], 64)?.as_i64())
            }
            "ld_i128" => {
                arity(1)?;
                B::LdI128(signed(&args[0], 128)?.as_i128())
            }
            "ld_i256" => {
                arity(1)?;
                B::LdI256(signed(&args[0], 256)?)
            }
            "ld_const" => {
                arity(2)?;
                let Arg::Types(ts) = &args[0] else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected `ld_const <type> value`"));
                };
                let [t] = ts.as_slice() else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected `ld_const <type> value`"));
                };
                let ty = self.build_type(t)?;
                let value = match &args[1] {
                    Arg::Bytes(b) => ConstValue::Raw(b.clone()),
                    a => ConstValue::Value(arg_to_value(pos, a)?),
                };
                B::LdConst(self.constant(ty, &value, pos)?)
            }
            "copy_loc" | "move_loc" | "st_loc" | "mut_borrow_loc" | "borrow_loc" => {
                arity(1)?;
                let l = self.local(&simple(&args[0], "local")?, pos)?;
                match op {
                    "copy_loc" => B::CopyLoc(l),
                    "move_loc" => B::MoveLoc(l),
                    "st_loc" => B::StLoc(l),
                    "mut_borrow_loc" => B::MutBorrowLoc(l),
                    _ => B::ImmBorrowLoc(l),
                }
            }
            "call" | "pack_closure" => {
                arity(if op == "call" { 1 } else { 2 })?;
                let Arg::Name(p, targs) = &args[0] else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected a function name"));
                };
                let fh = self.resolve_fun(p)?;
                let targs = self.type_args(targs)?;
                if op == "call" {
                    match targs {
                        None => B::Call(fh),
                        Some(ts) => B::CallGeneric(self.fun_inst(fh, ts, pos)?),
                    }
                } else {
                    let mask = ClosureMask(number(&args[1], U256::from(u64::MAX))?.as_u64());
                    match targs {
                        None => B::PackClosure(fh, mask),
                        Some(ts) => B::PackClosureGeneric(self.fun_inst(fh, ts, pos)?, mask),
                    }
                }
            }
            "call_closure" | "vec_len" | "vec_borrow" | "vec_mut_borrow" | "vec_push_back" | "vec_pop_back"
            | "vec_swap" | "vec_pack" | "vec_unpack" => {
                let with_count = matches!(op, "vec_pack" | "vec_unpack");
                arity(if with_count { 2 } else { 1 })?;
                let Arg::Types(ts) = &args[0] else {
                    return Err(err(AsmErrorKind::Operand, pos, format!("expected `{op} <type>`")));
                };
                let tys = ts.iter().map(|t| self.build_type(t)).collect::<AsmResult<Vec<_>>>()?;
                let si = self.signature(tys, pos)?;
                match op {
                    "call_closure" => B::CallClosure(si),
                    "vec_len" => B::VecLen(si),
                    "vec_borrow" => B::VecImmBorrow(si),
                    "vec_mut_borrow" => B::VecMutBorrow(si),
                    "vec_push_back" => B::VecPushBack(si),
                    "vec_pop_back" => B::VecPopBack(si),
                    "vec_swap" => B::VecSwap(si),
                    _ => {
                        let n = number(&args[1], U256::from(u64::MAX))?.as_u64();
                        if op == "vec_pack" {
                            B::VecPack(si, n)
                        } else {
                            B::VecUnpack(si, n)
                        }
                    }
                }
            }
            "pack" | "unpack" | "exists" | "borrow_global" | "mut_borrow_global" | "move_from" | "move_to" => {
                arity(1)?;
                let (sd, targs) = self.struct_operand(&args[0], pos)?;
                match targs {
                    None => match op {
                        "pack" => B::Pack(sd),
                        "unpack" => B::Unpack(sd),
                        "exists" => B::Exists(sd),
                        "borrow_global" => B::ImmBorrowGlobal(sd),
                        "mut_borrow_global" => B::MutBorrowGlobal(sd),
                        "move_from" => B::MoveFrom(sd),
                        _ => B::MoveTo(sd),
                    },
                    Some(ts) => {
                        let si = self.struct_inst(sd, ts, pos)?;
                        match op {
                            "pack" => B::PackGeneric(si),
                            "unpack" => B::UnpackGeneric(si),
                            "exists" => B::ExistsGeneric(si),
                            "borrow_global" => B::ImmBorrowGlobalGeneric(si),
                            "mut_borrow_global" => B::MutBorrowGlobalGeneric(si),
                            "move_from" => B::MoveFromGeneric(si),
                            _ => B::MoveToGeneric(si),
                        }
                    }
                }
            }
            "borrow_field" | "mut_borrow_field" => {
                arity(2)?;
                let (sd, targs) = self.struct_operand(&args[0], pos)?;
                let fname = simple(&args[1], "field")?;
                let field = self
                    .struct_fields(sd, pos)?
                    .iter()
                    .position(|f| *f == fname)
                    .ok_or_else(|| err(AsmErrorKind::Unresolved, pos, format!("unknown field `{fname}`")))?
                    as MemberCount;
                let fh = intern(
                    &mut self.maps.field_handles,
                    &mut self.m.field_handles,
                    (sd.0, field),
                    pos,
                    "field handle",
                    || FieldHandle { owner: sd, field },
                )?;
                let fh = FieldHandleIndex(fh);
                match targs {
                    None => {
                        if op == "borrow_field" {
                            B::ImmBorrowField(fh)
                        } else {
                            B::MutBorrowField(fh)
                        }
                    }
                    Some(ts) => {
                        let sig = self.signature(ts, pos)?;
                        let fi = intern(
                            &mut self.maps.field_insts,
                            &mut self.m.field_instantiations,
                            (fh.0, sig.0),
                            pos,
                            "field instantiation",
                            || FieldInstantiation { handle: fh, type_parameters: sig },
                        )?;
                        let fi = FieldInstantiationIndex(fi);
                        if op == "borrow_field" {
                            B::ImmBorrowFieldGeneric(fi)
                        } else {
                            B::MutBorrowFieldGeneric(fi)
                        }
                    }
                }
            }
            "pack_variant" | "unpack_variant" | "test_variant" | "unpack_variant_ref" | "unpack_variant_mut_ref" => {
                arity(2)?;
                let Arg::Name(p, targs) = &args[0] else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected an enum name"));
                };
                let def = self.resolve_def(p)?;
                let targs = self.type_args(targs)?;
                let variant = self.variant_index(def, &simple(&args[1], "variant")?, pos)?;
                match def {
                    DefRef::Struct(sd) => self.aptos_variant_instr(op, sd, variant, targs, pos)?,
                    DefRef::Enum(ed) => self.sui_variant_instr(op, ed, variant, targs, pos)?,
                }
            }
            "borrow_variant_field" | "mut_borrow_variant_field" => {
                if args.len() < 2 {
                    return Err(err(
                        AsmErrorKind::Operand,
                        pos,
                        format!("`{op}` takes an enum and one or more `Variant::field`"),
                    ));
                }
                let (sd, targs) = self.struct_operand(&args[0], pos)?;
                let mut variants = vec![];
                let mut field = None;
                for a in &args[1..] {
                    let Arg::Name(Path { address: None, parts, .. }, None) = a else {
                        return Err(err(AsmErrorKind::Operand, pos, "expected `Variant::field`"));
                    };
                    let [vname, fname] = parts.as_slice() else {
                        return Err(err(AsmErrorKind::Operand, pos, "expected `Variant::field`"));
                    };
                    let v = self.variant_index(DefRef::Struct(sd), vname, pos)?;
                    let fields = self
                        .variant_defs(DefRef::Struct(sd))
                        .map(|vs| self.field_names(&vs[v as usize].fields))
                        .unwrap_or_default();
                    let f = fields.iter().position(|f| f == fname).ok_or_else(|| {
                        err(AsmErrorKind::Unresolved, pos, format!("unknown field `{vname}::{fname}`"))
                    })? as MemberCount;
                    if field.is_some_and(|prev| prev != f) {
                        return Err(err(
                            AsmErrorKind::Operand,
                            pos,
                            "the variants' fields must be at the same position",
                        ));
                    }
                    field = Some(f);
                    variants.push(v);
                }
                let field = field.unwrap_or(0);
                let vf = intern(
                    &mut self.maps.variant_fields,
                    &mut self.m.variant_field_handles,
                    (sd.0, variants.clone(), field),
                    pos,
                    "variant field handle",
                    || VariantFieldHandle { struct_index: sd, variants, field },
                )?;
                let vf = VariantFieldHandleIndex(vf);
                let imm = op == "borrow_variant_field";
                match targs {
                    None => {
                        if imm {
                            B::ImmBorrowVariantField(vf)
                        } else {
                            B::MutBorrowVariantField(vf)
                        }
                    }
                    Some(ts) => {
                        let sig = self.signature(ts, pos)?;
                        let vi = intern(
                            &mut self.maps.variant_field_insts,
                            &mut self.m.variant_field_instantiations,
                            (vf.0, sig.0),
                            pos,
                            "variant field instantiation",
                            || VariantFieldInstantiation { handle: vf, type_parameters: sig },
                        )?;
                        let vi = VariantFieldInstantiationIndex(vi);
                        if imm {
                            B::ImmBorrowVariantFieldGeneric(vi)
                        } else {
                            B::MutBorrowVariantFieldGeneric(vi)
                        }
                    }
                }
            }
            "variant_switch" => {
                arity(2)?;
                let Arg::Name(p, None) = &args[0] else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected `variant_switch Enum, [labels]`"));
                };
                let DefRef::Enum(ed) = self.resolve_def(p)? else {
                    return Err(err(AsmErrorKind::Operand, pos, "variant_switch needs a Sui enum"));
                };
                let Arg::Vector(targets) = &args[1] else {
                    return Err(err(AsmErrorKind::Operand, pos, "expected a jump table `[L0, L1, ...]`"));
                };
                let offsets = targets.iter().map(label).collect::<AsmResult<Vec<_>>>()?;
                let key = (ed.0, offsets.clone());
                let ji = intern(tables, jump_tables, key, pos, "jump table", || VariantJumpTable {
                    head_enum: ed,
                    jump_table: offsets,
                })?;
                B::VariantSwitch(VariantJumpTableIndex(ji))
            }
            _ => return Err(err(AsmErrorKind::Unresolved, pos, format!("unknown instruction `{op}`"))),
        })
    }

    /// A struct definition operand with optional type arguments.
    fn struct_operand(&mut self, a: &Arg, pos: Pos) -> AsmResult<(StructDefinitionIndex, Option<Vec<SignatureToken>>)> {
        let Arg::Name(p, targs) = a else {
            return Err(err(AsmErrorKind::Operand, pos, "expected a struct name"));
        };
        let DefRef::Struct(sd) = self.resolve_def(p)? else {
            return Err(err(AsmErrorKind::Operand, pos, "expected a struct, found a Sui enum"));
        };
        Ok((sd, self.type_args(targs)?))
    }

    fn aptos_variant_instr(
        &mut self,
        op: &str,
        sd: StructDefinitionIndex,
        variant: VariantIndex,
        targs: Option<Vec<SignatureToken>>,
        pos: Pos,
    ) -> AsmResult<Bytecode> {
        use Bytecode as B;
        let vh = intern(
            &mut self.maps.variant_handles,
            &mut self.m.struct_variant_handles,
            (sd.0, variant),
            pos,
            "variant handle",
            || StructVariantHandle { struct_index: sd, variant },
        )?;
        let vh = StructVariantHandleIndex(vh);
        Ok(match targs {
            None => match op {
                "pack_variant" => B::PackVariant(vh),
                "unpack_variant" => B::UnpackVariant(vh),
                "test_variant" => B::TestVariant(vh),
                _ => return Err(err(AsmErrorKind::Unsupported, pos, format!("`{op}` is a Sui instruction"))),
            },
            Some(ts) => {
                let sig = self.signature(ts, pos)?;
                let vi = intern(
                    &mut self.maps.variant_insts,
                    &mut self.m.struct_variant_instantiations,
                    (vh.0, sig.0),
                    pos,
                    "variant instantiation",
                    || StructVariantInstantiation { handle: vh, type_parameters: sig },
                )?;
                let vi = StructVariantInstantiationIndex(vi);
                match op {
                    "pack_variant" => B::PackVariantGeneric(vi),
                    "unpack_variant" => B::UnpackVariantGeneric(vi),
                    "test_variant" => B::TestVariantGeneric(vi),
                    _ => return Err(err(AsmErrorKind::Unsupported, pos, format!("`{op}` is a Sui instruction"))),
                }
            }
        })
    }

    fn sui_variant_instr(
        &mut self,
        op: &str,
        ed: EnumDefinitionIndex,
        variant: VariantIndex,
        targs: Option<Vec<SignatureToken>>,
        pos: Pos,
    ) -> AsmResult<Bytecode> {
        use Bytecode as B;
        Ok(match targs {
            None => {
                let vh = intern(
                    &mut self.maps.sui_variant_handles,
                    &mut self.m.variant_handles,
                    (ed.0, variant),
                    pos,
                    "variant handle",
                    || VariantHandle { enum_def: ed, variant },
                )?;
                let vh = VariantHandleIndex(vh);
                match op {
                    "pack_variant" => B::SuiPackVariant(vh),
                    "unpack_variant" => B::SuiUnpackVariant(vh),
                    "unpack_variant_ref" => B::SuiUnpackVariantImmRef(vh),
                    "unpack_variant_mut_ref" => B::SuiUnpackVariantMutRef(vh),
                    _ => return Err(err(AsmErrorKind::Unsupported, pos, format!("`{op}` is an Aptos instruction"))),
                }
            }
            Some(ts) => {
                let sig = self.signature(ts, pos)?;
                let ei = intern(
                    &mut self.maps.enum_insts,
                    &mut self.m.enum_def_instantiations,
                    (ed.0, sig.0),
                    pos,
                    "enum instantiation",
                    || EnumDefInstantiation { def: ed, type_parameters: sig },
                )?;
                let ei = EnumDefInstantiationIndex(ei);
                let vi = intern(
                    &mut self.maps.sui_variant_insts,
                    &mut self.m.variant_instantiation_handles,
                    (ei.0, variant),
                    pos,
                    "variant instantiation handle",
                    || VariantInstantiationHandle { enum_def: ei, variant },
                )?;
                let vi = VariantInstantiationHandleIndex(vi);
                match op {
                    "pack_variant" => B::SuiPackVariantGeneric(vi),
                    "unpack_variant" => B::SuiUnpackVariantGeneric(vi),
                    "unpack_variant_ref" => B::SuiUnpackVariantGenericImmRef(vi),
                    "unpack_variant_mut_ref" => B::SuiUnpackVariantGenericMutRef(vi),
                    _ => return Err(err(AsmErrorKind::Unsupported, pos, format!("`{op}` is an Aptos instruction"))),
                }
            }
        })
    }
}
