//! Value layouts: the shape of a fully instantiated type, as BCS and storage
//! need it (structs as their field layouts, enums as per-variant field
//! layouts).

/// The layout of a value of some runtime type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    U256,
    I8,
    I16,
    I32,
    I64,
    I128,
    I256,
    Address,
    Signer,
    Vector(Box<Layout>),
    Struct(Vec<Layout>),
    Enum(Vec<Vec<Layout>>),
    Function,
}

impl Layout {
    /// The layout of a primitive type; `None` for types with parts
    /// (vectors, datatypes, functions, references, type parameters).
    pub fn primitive(t: &crate::types::Type) -> Option<Layout> {
        use crate::types::Type as T;
        Some(match t {
            T::Bool => Layout::Bool,
            T::U8 => Layout::U8,
            T::U16 => Layout::U16,
            T::U32 => Layout::U32,
            T::U64 => Layout::U64,
            T::U128 => Layout::U128,
            T::U256 => Layout::U256,
            T::I8 => Layout::I8,
            T::I16 => Layout::I16,
            T::I32 => Layout::I32,
            T::I64 => Layout::I64,
            T::I128 => Layout::I128,
            T::I256 => Layout::I256,
            T::Address => Layout::Address,
            T::Signer => Layout::Signer,
            _ => return None,
        })
    }

    /// The tag the Move VM gives this layout in BCS (`MoveTypeLayout`).
    pub fn serde_tag(&self) -> u8 {
        match self {
            Layout::Bool => 0,
            Layout::U8 => 1,
            Layout::U64 => 2,
            Layout::U128 => 3,
            Layout::Address => 4,
            Layout::Vector(_) => 5,
            Layout::Struct(_) | Layout::Enum(_) => 6,
            Layout::Signer => 7,
            Layout::U16 => 8,
            Layout::U32 => 9,
            Layout::U256 => 10,
            Layout::Function => 12,
            Layout::I8 => 13,
            Layout::I16 => 14,
            Layout::I32 => 15,
            Layout::I64 => 16,
            Layout::I128 => 17,
            Layout::I256 => 18,
        }
    }
}
