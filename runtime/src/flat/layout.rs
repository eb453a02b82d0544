//! Flat layouts: size, alignment and field offsets of every fully
//! instantiated type (jit-abi.md 1.3), computed once per type and cached.

use crate::error::{VmError, VmResult};
use crate::layout::Layout;
use crate::natives::TypeInfo;
use crate::types::Type;
use movejit_format::StatusCode;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Byte size of a pointer slot (vector header, reference, closure box).
pub const PTR_SIZE: u32 = 8;

/// Largest flat size of one value; bigger layouts are refused rather than
/// risking offset overflow.
pub const MAX_FLAT_SIZE: u32 = 1 << 30;

/// A field (of a struct, or of one enum variant) at its byte offset from the
/// start of the enclosing value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: u32,
    pub layout: Arc<FlatLayout>,
}

/// What a flat value is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
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
    /// Its address (32 bytes).
    Signer,
    /// A pointer to a [`VecHeader`](super::raw::VecHeader), null for an
    /// empty vector that never allocated. The element layout.
    Vector(Arc<FlatLayout>),
    Struct(Vec<Field>),
    /// `u16` tag at offset 0; each variant's fields at their own offsets
    /// inside the payload, which starts at [`FlatLayout::ENUM_PAYLOAD`]
    /// rounded up to the payload's alignment.
    Enum(Vec<Vec<Field>>),
    /// A pointer to the referenced slot; the referenced type's layout.
    Reference(Arc<FlatLayout>),
    /// A pointer to a boxed [`FlatClosure`](super::FlatClosure) (0 in a
    /// slot holding no value).
    Closure,
}

impl Shape {
    /// The scalar kind of a scalar shape (booleans, integers, addresses).
    pub fn scalar(&self) -> Option<crate::scalar::ScalarKind> {
        use crate::scalar::ScalarKind as K;
        Some(match self {
            Shape::Bool => K::Bool,
            Shape::U8 => K::U8,
            Shape::U16 => K::U16,
            Shape::U32 => K::U32,
            Shape::U64 => K::U64,
            Shape::U128 => K::U128,
            Shape::U256 => K::U256,
            Shape::I8 => K::I8,
            Shape::I16 => K::I16,
            Shape::I32 => K::I32,
            Shape::I64 => K::I64,
            Shape::I128 => K::I128,
            Shape::I256 => K::I256,
            Shape::Address => K::Address,
            _ => return None,
        })
    }
}

/// Nesting bound of the flat layouts both executors build (far above any
/// type a value can have: values are bounded by the value-depth checks;
/// this only stops runaway nesting).
pub const MAX_FLAT_DEPTH: usize = 4096;

/// The flat layout of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatLayout {
    /// Bytes, a multiple of `align` (so it is also the vector stride).
    pub size: u32,
    pub align: u32,
    /// Whether the value owns heap memory (vectors, closures) anywhere.
    pub owns_heap: bool,
    /// Whether two values are equal exactly when their bytes are: no
    /// pointers, no padding, no enum payload whose unused bytes may differ.
    pub bytewise_eq: bool,
    pub shape: Shape,
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

fn too_large() -> VmError {
    VmError::new(StatusCode::VM_MAX_TYPE_NODES_REACHED).with_message("flat layout too large")
}

/// Lays `fields` out in declaration order from `start`, each at its natural
/// alignment: (fields, end offset, max alignment).
fn place(start: u32, layouts: Vec<Arc<FlatLayout>>) -> VmResult<(Vec<Field>, u32, u32)> {
    let mut off = start;
    let mut align = 1;
    let mut out = Vec::with_capacity(layouts.len());
    for l in layouts {
        off = round_up(off, l.align);
        align = align.max(l.align);
        out.push(Field { offset: off, layout: l.clone() });
        off = off.checked_add(l.size).filter(|s| *s <= MAX_FLAT_SIZE).ok_or_else(too_large)?;
    }
    Ok((out, off, align))
}

impl FlatLayout {
    /// Where an enum's payload starts before rounding to its alignment
    /// (just after the `u16` tag).
    pub const ENUM_PAYLOAD: u32 = 2;

    fn scalar(size: u32, align: u32, shape: Shape) -> FlatLayout {
        FlatLayout { size, align, owns_heap: false, bytewise_eq: true, shape }
    }

    /// The flat layout of a (value) layout; `max_depth` bounds nesting
    /// (`VM_MAX_TYPE_DEPTH_REACHED`, as the session's layouts).
    pub fn from_layout(l: &Layout, max_depth: usize) -> VmResult<FlatLayout> {
        Self::build(l, 1, max_depth)
    }

    fn build(l: &Layout, depth: usize, max_depth: usize) -> VmResult<FlatLayout> {
        if depth > max_depth {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
        }
        let sub = |l: &Layout| Self::build(l, depth + 1, max_depth).map(Arc::new);
        Ok(match l {
            Layout::Bool => Self::scalar(1, 1, Shape::Bool),
            Layout::U8 => Self::scalar(1, 1, Shape::U8),
            Layout::U16 => Self::scalar(2, 2, Shape::U16),
            Layout::U32 => Self::scalar(4, 4, Shape::U32),
            Layout::U64 => Self::scalar(8, 8, Shape::U64),
            Layout::U128 => Self::scalar(16, 8, Shape::U128),
            Layout::U256 => Self::scalar(32, 8, Shape::U256),
            Layout::I8 => Self::scalar(1, 1, Shape::I8),
            Layout::I16 => Self::scalar(2, 2, Shape::I16),
            Layout::I32 => Self::scalar(4, 4, Shape::I32),
            Layout::I64 => Self::scalar(8, 8, Shape::I64),
            Layout::I128 => Self::scalar(16, 8, Shape::I128),
            Layout::I256 => Self::scalar(32, 8, Shape::I256),
            Layout::Address => Self::scalar(32, 1, Shape::Address),
            Layout::Signer => Self::scalar(32, 1, Shape::Signer),
            Layout::Vector(e) => FlatLayout {
                size: PTR_SIZE,
                align: PTR_SIZE,
                owns_heap: true,
                bytewise_eq: false,
                shape: Shape::Vector(sub(e)?),
            },
            Layout::Function => FlatLayout {
                size: PTR_SIZE,
                align: PTR_SIZE,
                owns_heap: true,
                bytewise_eq: false,
                shape: Shape::Closure,
            },
            Layout::Struct(fs) => {
                let layouts = fs.iter().map(sub).collect::<VmResult<Vec<_>>>()?;
                let (fields, end, align) = place(0, layouts)?;
                let size = round_up(end.max(1), align);
                let owns_heap = fields.iter().any(|f| f.layout.owns_heap);
                let packed = fields.iter().map(|f| f.layout.size).sum::<u32>() == size;
                let bytewise_eq = packed && fields.iter().all(|f| f.layout.bytewise_eq);
                FlatLayout { size, align, owns_heap, bytewise_eq, shape: Shape::Struct(fields) }
            }
            Layout::Enum(vs) => {
                let variants = vs
                    .iter()
                    .map(|fs| fs.iter().map(sub).collect::<VmResult<Vec<_>>>())
                    .collect::<VmResult<Vec<_>>>()?;
                let payload_align = variants.iter().flatten().map(|l| l.align).max().unwrap_or(1).max(2);
                let start = round_up(Self::ENUM_PAYLOAD, payload_align);
                let mut end = start;
                let mut placed = Vec::with_capacity(variants.len());
                for v in variants {
                    let (fields, e, _) = place(start, v)?;
                    end = end.max(e);
                    placed.push(fields);
                }
                let size = round_up(end, payload_align);
                let owns_heap = placed.iter().flatten().any(|f| f.layout.owns_heap);
                FlatLayout { size, align: payload_align, owns_heap, bytewise_eq: false, shape: Shape::Enum(placed) }
            }
        })
    }

    /// A reference to a value of `target`.
    pub fn reference(target: Arc<FlatLayout>) -> FlatLayout {
        FlatLayout {
            size: PTR_SIZE,
            align: PTR_SIZE,
            owns_heap: false,
            bytewise_eq: false,
            shape: Shape::Reference(target),
        }
    }

    /// The element layout of a vector layout.
    pub fn elem(&self) -> Option<&Arc<FlatLayout>> {
        match &self.shape {
            Shape::Vector(e) => Some(e),
            _ => None,
        }
    }
}

/// The flat layouts of instantiated types, computed on first use and
/// shared by every session and thread of an engine.
#[derive(Debug, Default)]
pub struct FlatLayouts {
    max_depth: usize,
    cache: RwLock<HashMap<Type, Arc<FlatLayout>>>,
}

impl FlatLayouts {
    pub fn new(max_type_depth: usize) -> Self {
        FlatLayouts { max_depth: max_type_depth, cache: RwLock::default() }
    }

    /// The flat layout of `ty`, computing it through `types` (the session's
    /// struct and enum definitions) the first time. References are a
    /// pointer to their target's layout.
    pub fn layout_of(&self, types: &dyn TypeInfo, ty: &Type) -> VmResult<Arc<FlatLayout>> {
        if let Some(l) = self.cache.read().ok().and_then(|c| c.get(ty).cloned()) {
            return Ok(l);
        }
        let l = Arc::new(match ty {
            Type::Reference(t) | Type::MutableReference(t) => FlatLayout::reference(self.layout_of(types, t)?),
            t => FlatLayout::from_layout(&types.layout_of(t)?, self.max_depth)?,
        });
        if let Ok(mut c) = self.cache.write() {
            // Another thread may have raced us: keep the first so pointers
            // handed to compiled code stay valid.
            return Ok(c.entry(ty.clone()).or_insert(l).clone());
        }
        Ok(l)
    }

    /// Types cached so far.
    pub fn len(&self) -> usize {
        self.cache.read().map(|c| c.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
