//! Which opcodes generated modules contain, grouped by family.

#![forbid(unsafe_code)]

use movejit_format::{CompiledModule, Opcode};
use std::collections::{BTreeMap, BTreeSet};

/// The family an opcode belongs to (for summary tables).
pub fn family(op: Opcode) -> &'static str {
    use Opcode::*;
    match op {
        Pop | Ret | Nop | CopyLoc | MoveLoc | StLoc => "locals/stack",
        BrTrue | BrFalse | Branch => "control flow",
        LdU8 | LdU16 | LdU32 | LdU64 | LdU128 | LdU256 | LdI8 | LdI16 | LdI32 | LdI64 | LdI128 | LdI256 | LdConst
        | LdTrue | LdFalse => "constants",
        Add | Sub | Mul | Div | Mod | Negate => "arithmetic",
        BitOr | BitAnd | Xor | Shl | Shr => "bitwise",
        Or | And | Not => "boolean",
        Eq | Neq | Lt | Gt | Le | Ge => "comparison",
        CastU8 | CastU16 | CastU32 | CastU64 | CastU128 | CastU256 | CastI8 | CastI16 | CastI32 | CastI64
        | CastI128 | CastI256 => "casts",
        Call | CallGeneric => "calls",
        Abort | AbortMsg => "aborts",
        Pack
        | PackGeneric
        | Unpack
        | UnpackGeneric
        | ImmBorrowField
        | ImmBorrowFieldGeneric
        | MutBorrowField
        | MutBorrowFieldGeneric => "structs",
        MutBorrowLoc | ImmBorrowLoc | ReadRef | WriteRef | FreezeRef => "references",
        Exists
        | ExistsGeneric
        | MutBorrowGlobal
        | MutBorrowGlobalGeneric
        | ImmBorrowGlobal
        | ImmBorrowGlobalGeneric
        | MoveFrom
        | MoveFromGeneric
        | MoveTo
        | MoveToGeneric => "globals",
        VecPack | VecLen | VecImmBorrow | VecMutBorrow | VecPushBack | VecPopBack | VecUnpack | VecSwap => "vectors",
        ImmBorrowVariantField
        | MutBorrowVariantField
        | ImmBorrowVariantFieldGeneric
        | MutBorrowVariantFieldGeneric
        | PackVariant
        | PackVariantGeneric
        | UnpackVariant
        | UnpackVariantGeneric
        | TestVariant
        | TestVariantGeneric => "enums (aptos)",
        SuiPackVariant
        | SuiPackVariantGeneric
        | SuiUnpackVariant
        | SuiUnpackVariantImmRef
        | SuiUnpackVariantMutRef
        | SuiUnpackVariantGeneric
        | SuiUnpackVariantGenericImmRef
        | SuiUnpackVariantGenericMutRef
        | VariantSwitch => "enums (sui)",
        PackClosure | PackClosureGeneric | CallClosure => "closures",
    }
}

/// Per-opcode counts over modules.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub counts: BTreeMap<Opcode, u64>,
}

impl Coverage {
    pub fn add_module(&mut self, m: &CompiledModule) {
        for f in &m.function_defs {
            if let Some(code) = &f.code {
                for i in &code.code {
                    *self.counts.entry(i.opcode()).or_default() += 1;
                }
            }
        }
    }
    /// The opcodes of both flavours never seen.
    pub fn missing(&self) -> Vec<Opcode> {
        Opcode::ALL.iter().copied().filter(|o| !self.counts.contains_key(o)).collect()
    }
    pub fn merge(&mut self, other: &Coverage) {
        for (k, v) in &other.counts {
            *self.counts.entry(*k).or_default() += v;
        }
    }
    /// A table: one row per opcode (name, count), grouped by family.
    pub fn table(&self) -> String {
        let mut by_family: BTreeMap<&str, Vec<Opcode>> = BTreeMap::new();
        for op in Opcode::ALL {
            by_family.entry(family(*op)).or_default().push(*op);
        }
        let mut out = String::new();
        for (fam, ops) in by_family {
            let seen = ops.iter().filter(|o| self.counts.contains_key(o)).count();
            out.push_str(&format!("{fam:<16} {seen:>2}/{:<2}", ops.len()));
            for o in ops {
                out.push_str(&format!(" {}={}", o.name(), self.counts.get(&o).copied().unwrap_or(0)));
            }
            out.push('\n');
        }
        out
    }
}

/// The function definitions of `m` that a call of `entry` can reach inside
/// `m` (calls, generic calls and closures packed from local functions).
pub fn reachable(m: &CompiledModule, entry: &str) -> BTreeSet<usize> {
    use movejit_format::Bytecode as B;
    let def_of_handle = |h: usize| -> Option<usize> { m.function_defs.iter().position(|d| d.function.idx() == h) };
    let by_name = m.function_defs.iter().position(|d| {
        m.function_handles
            .get(d.function.idx())
            .and_then(|h| m.identifiers.get(h.name.idx()))
            .is_some_and(|n| n == entry)
    });
    let mut seen = BTreeSet::new();
    let mut todo: Vec<usize> = by_name.into_iter().collect();
    while let Some(d) = todo.pop() {
        if !seen.insert(d) {
            continue;
        }
        let Some(code) = m.function_defs.get(d).and_then(|f| f.code.as_ref()) else { continue };
        for i in &code.code {
            let handle = match i {
                B::Call(h) | B::PackClosure(h, _) => Some(h.idx()),
                B::CallGeneric(fi) | B::PackClosureGeneric(fi, _) => {
                    m.function_instantiations.get(fi.idx()).map(|x| x.handle.idx())
                }
                _ => None,
            };
            if let Some(callee) = handle.and_then(def_of_handle) {
                todo.push(callee);
            }
        }
    }
    seen
}

impl Coverage {
    /// Adds the opcodes of the given function definitions of `m`.
    pub fn add_functions(&mut self, m: &CompiledModule, defs: &BTreeSet<usize>) {
        for d in defs {
            if let Some(code) = m.function_defs.get(*d).and_then(|f| f.code.as_ref()) {
                for i in &code.code {
                    *self.counts.entry(i.opcode()).or_default() += 1;
                }
            }
        }
    }
}
