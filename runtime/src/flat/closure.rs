//! Function values over flat memory (jit-abi.md 1.3): a function-value slot
//! holds a pointer to a [`FlatClosure`] box, null when it holds no value.
//! The box names the function (by [`FunctionIndex`]), its type arguments,
//! the capture mask and the captured values (owned flat values, in
//! parameter order). A closure is immutable, so copies share one box
//! (reference-counted: copying a closure allocates nothing); a call that
//! consumes the last copy moves the captured values out.

use super::layout::{FlatLayout, Shape};
use super::value::FlatValue;
use crate::functions::FunctionIndex;
use crate::layout::Layout;
use crate::types::Type;
use crate::values::FunctionId;

/// A closure: `function<type_args>` with the parameters whose bit is set in
/// `mask` already supplied by `captured`.
#[derive(Debug)]
pub struct FlatClosure {
    pub function: FunctionIndex,
    pub type_args: Vec<Type>,
    pub mask: u64,
    pub captured: Vec<FlatValue>,
    /// Whether the function may be stored (public or `#[persistent]`).
    pub serializable: bool,
}

impl FlatClosure {
    /// The function's name (for the API boundary and messages).
    pub fn name(&self) -> crate::error::VmResult<&'static FunctionId> {
        crate::functions::name(self.function)
            .ok_or_else(|| crate::error::VmError::invariant("closure of an unknown function index"))
    }

    /// Move's `==`: same function, type arguments, mask and captured values.
    pub fn equals(&self, o: &FlatClosure) -> bool {
        self.function == o.function
            && self.type_args == o.type_args
            && self.mask == o.mask
            && self.captured.len() == o.captured.len()
            && self.captured.iter().zip(&o.captured).all(|(a, b)| a.equals(b))
    }
}

/// The (tree) layout a flat layout was built from.
pub fn to_layout(l: &FlatLayout) -> Layout {
    match &l.shape {
        Shape::Bool => Layout::Bool,
        Shape::U8 => Layout::U8,
        Shape::U16 => Layout::U16,
        Shape::U32 => Layout::U32,
        Shape::U64 => Layout::U64,
        Shape::U128 => Layout::U128,
        Shape::U256 => Layout::U256,
        Shape::I8 => Layout::I8,
        Shape::I16 => Layout::I16,
        Shape::I32 => Layout::I32,
        Shape::I64 => Layout::I64,
        Shape::I128 => Layout::I128,
        Shape::I256 => Layout::I256,
        Shape::Address => Layout::Address,
        Shape::Signer => Layout::Signer,
        Shape::Vector(e) => Layout::Vector(Box::new(to_layout(e))),
        Shape::Struct(fs) => Layout::Struct(fs.iter().map(|f| to_layout(&f.layout)).collect()),
        Shape::Enum(vs) => {
            Layout::Enum(vs.iter().map(|fs| fs.iter().map(|f| to_layout(&f.layout)).collect()).collect())
        }
        Shape::Closure => Layout::Function,
        // Not a value layout; only references to it exist.
        Shape::Reference(t) => to_layout(t),
    }
}
