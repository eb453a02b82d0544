//! How a value of some flat layout lives in compiled code.
//!
//! * [`Ty::S`]: booleans, integers and addresses are SSA values ([`Kind`]
//!   lanes) unless a local of that type is borrowed, then it lives in memory.
//! * [`Ty::M`]: structs, enums, vectors and signers live in memory of their
//!   flat layout (frame slots, the callee's parameters in the caller's
//!   operand slots); SSA holds their address.
//! * [`Ty::R`]: a reference is the address of its target (an SSA pointer).

#![forbid(unsafe_code)]

use crate::kind::{Kind, KindIr};
use cranelift_codegen::ir::Type;
use movejit_runtime::flat::{FlatLayout, Shape};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Ty {
    S(Kind),
    M(Arc<FlatLayout>),
    R(Arc<FlatLayout>),
}

/// The scalar kind of a flat layout, if it is one (the runtime's table,
/// `Shape::scalar`).
pub fn kind_of_layout(l: &FlatLayout) -> Option<Kind> {
    l.shape.scalar()
}

impl Ty {
    pub fn of(l: &Arc<FlatLayout>) -> Ty {
        if let Some(k) = kind_of_layout(l) {
            return Ty::S(k);
        }
        match &l.shape {
            Shape::Reference(t) => Ty::R(t.clone()),
            _ => Ty::M(l.clone()),
        }
    }

    /// The Cranelift types of the value as an argument or SSA value.
    pub fn lanes(&self, ptr: Type) -> Vec<Type> {
        match self {
            Ty::S(k) => k.lanes().to_vec(),
            Ty::M(_) | Ty::R(_) => vec![ptr],
        }
    }

    pub fn kind(&self) -> Option<Kind> {
        match self {
            Ty::S(k) => Some(*k),
            _ => None,
        }
    }

    /// Same representation (scalar kinds equal; memory and references of
    /// layouts of the same size and shape class).
    pub fn compatible(&self, other: &Ty) -> bool {
        match (self, other) {
            (Ty::S(a), Ty::S(b)) => a == b,
            (Ty::M(a), Ty::M(b)) | (Ty::R(a), Ty::R(b)) => {
                Arc::ptr_eq(a, b) || (a.size == b.size && a.align == b.align)
            }
            _ => false,
        }
    }
}
