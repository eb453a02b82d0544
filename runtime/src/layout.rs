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
