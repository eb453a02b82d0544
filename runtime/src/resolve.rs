//! Type resolution both executors share: signature tokens to runtime types
//! (struct handles to datatype ids, type parameters substituted), a
//! datatype's instantiated field types, and over those the layout of a type
//! (with the depth and node limits) and its value depth.
//!
//! Where modules come from is the caller's business: it answers
//! [`DatatypeSource::datatype_fields`], usually with [`field_types`] over
//! the defining module.

use crate::layout::Layout;
use crate::storage::ModuleId;
use crate::types::{DatatypeId, Type};
use crate::{VmError, VmResult};
use movejit_format::{
    CompiledModule, FieldDefinition, FunctionHandleIndex, ModuleHandleIndex, SignatureIndex, SignatureToken,
    StatusCode, StructFieldInformation, StructHandleIndex,
};
use std::sync::Arc;

/// Where a datatype is defined inside its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatatypeDef {
    /// Index into `struct_defs` (Aptos enums included).
    Struct(u16),
    /// Index into `enum_defs` (Sui).
    SuiEnum(u16),
}

/// The instantiated field types of a datatype: one list per variant, a
/// single list for a struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatatypeFields {
    pub is_enum: bool,
    pub variants: Vec<Vec<Type>>,
}

/// The datatype a struct handle of `m` names.
pub fn datatype_id(m: &CompiledModule, h: StructHandleIndex) -> VmResult<Arc<DatatypeId>> {
    let bad = || VmError::invariant("struct handle out of bounds");
    let sh = m.struct_handles.get(h.idx()).ok_or_else(bad)?;
    let mh = m.module_handles.get(sh.module.idx()).ok_or_else(bad)?;
    Ok(Arc::new(DatatypeId {
        address: *m.address_identifiers.get(mh.address.idx()).ok_or_else(bad)?,
        module: m.identifiers.get(mh.name.idx()).ok_or_else(bad)?.as_str().into(),
        name: m.identifiers.get(sh.name.idx()).ok_or_else(bad)?.as_str().into(),
    }))
}

/// The module a module handle of `m` names.
pub fn module_id(m: &CompiledModule, h: ModuleHandleIndex) -> VmResult<ModuleId> {
    let mh = m.module_handles.get(h.idx()).ok_or_else(|| VmError::invariant("module handle"))?;
    let address = *m.address_identifiers.get(mh.address.idx()).ok_or_else(|| VmError::invariant("address"))?;
    let name = m.identifiers.get(mh.name.idx()).ok_or_else(|| VmError::invariant("identifier"))?;
    Ok(ModuleId::new(address, name))
}

/// The module and the name of the function a function handle of `m` calls.
pub fn function_target(m: &CompiledModule, h: FunctionHandleIndex) -> VmResult<(ModuleId, &str)> {
    let fh = m.function_handles.get(h.idx()).ok_or_else(|| VmError::invariant("function handle"))?;
    let module = module_id(m, fh.module)?;
    let name = m.identifiers.get(fh.name.idx()).ok_or_else(|| VmError::invariant("identifier"))?;
    Ok((module, name))
}

/// The datatype of every struct handle of `m`, by handle index.
pub fn handle_datatype_ids(m: &CompiledModule) -> VmResult<Vec<Arc<DatatypeId>>> {
    (0..m.struct_handles.len()).map(|h| datatype_id(m, StructHandleIndex(h as u16))).collect()
}

/// Where the datatype called `name` is defined in `m` (a linear search;
/// loaders that look up often keep a map).
pub fn find_datatype(m: &CompiledModule, name: &str) -> Option<DatatypeDef> {
    let named = |h: StructHandleIndex| {
        m.struct_handles.get(h.idx()).and_then(|sh| m.identifiers.get(sh.name.idx())).is_some_and(|n| n == name)
    };
    if let Some(i) = m.struct_defs.iter().position(|d| named(d.struct_handle)) {
        return Some(DatatypeDef::Struct(i as u16));
    }
    m.enum_defs.iter().position(|d| named(d.enum_handle)).map(|i| DatatypeDef::SuiEnum(i as u16))
}

/// The runtime type of `tok`: struct handles resolved by `handle`, type
/// parameters taken from `ty_args`.
pub fn token_type<H>(tok: &SignatureToken, ty_args: &[Type], handle: &H) -> VmResult<Type>
where
    H: Fn(StructHandleIndex) -> VmResult<Arc<DatatypeId>>,
{
    use SignatureToken as S;
    let all = |ts: &[SignatureToken]| ts.iter().map(|t| token_type(t, ty_args, handle)).collect::<VmResult<Vec<_>>>();
    Ok(match tok {
        S::Vector(t) => Type::Vector(Box::new(token_type(t, ty_args, handle)?)),
        S::Reference(t) => Type::Reference(Box::new(token_type(t, ty_args, handle)?)),
        S::MutableReference(t) => Type::MutableReference(Box::new(token_type(t, ty_args, handle)?)),
        S::Struct(h) => Type::Datatype(handle(*h)?, Vec::new()),
        S::StructInstantiation(h, args) => Type::Datatype(handle(*h)?, all(args)?),
        S::Function(p, r, ab) => Type::Function(all(p)?, all(r)?, *ab),
        S::TypeParameter(i) => {
            ty_args.get(*i as usize).cloned().ok_or_else(|| VmError::invariant("type parameter out of range"))?
        }
        primitive => Type::primitive(primitive).ok_or_else(|| VmError::invariant("no primitive form"))?,
    })
}

/// The types of signature `idx` of `m`.
pub fn signature_types<H>(m: &CompiledModule, idx: SignatureIndex, ty_args: &[Type], handle: &H) -> VmResult<Vec<Type>>
where
    H: Fn(StructHandleIndex) -> VmResult<Arc<DatatypeId>>,
{
    let sig = m.signatures.get(idx.idx()).ok_or_else(|| VmError::invariant("signature out of bounds"))?;
    sig.0.iter().map(|t| token_type(t, ty_args, handle)).collect()
}

/// The field types of datatype `def` of `m` instantiated with `args`;
/// `None` for a native struct.
pub fn field_types<H>(
    m: &CompiledModule,
    def: DatatypeDef,
    args: &[Type],
    handle: &H,
) -> VmResult<Option<DatatypeFields>>
where
    H: Fn(StructHandleIndex) -> VmResult<Arc<DatatypeId>>,
{
    let list = |fs: &[FieldDefinition]| fs.iter().map(|f| token_type(&f.signature, args, handle)).collect();
    let variants = |vs: &mut dyn Iterator<Item = &[FieldDefinition]>| vs.map(list).collect::<VmResult<Vec<_>>>();
    Ok(Some(match def {
        DatatypeDef::Struct(i) => {
            let sd = m.struct_defs.get(i as usize).ok_or_else(|| VmError::invariant("struct def"))?;
            match &sd.field_information {
                StructFieldInformation::Native => return Ok(None),
                StructFieldInformation::Declared(fs) => DatatypeFields { is_enum: false, variants: vec![list(fs)?] },
                StructFieldInformation::DeclaredVariants(vs) => {
                    DatatypeFields { is_enum: true, variants: variants(&mut vs.iter().map(|v| v.fields.as_slice()))? }
                }
            }
        }
        DatatypeDef::SuiEnum(i) => {
            let ed = m.enum_defs.get(i as usize).ok_or_else(|| VmError::invariant("enum def"))?;
            DatatypeFields { is_enum: true, variants: variants(&mut ed.variants.iter().map(|v| v.fields.as_slice()))? }
        }
    }))
}

/// Answers what a datatype is made of, from whatever modules the caller has
/// loaded.
pub trait DatatypeSource {
    /// The field types of `id` instantiated with `args` (`None`: a native
    /// struct). `LINKER_ERROR` when its module is not loaded,
    /// `TYPE_RESOLUTION_FAILURE` when the module does not define it.
    fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>>;
}

/// The modules whose datatypes building `t`'s layout reads, first reach
/// first: every datatype reached through fields (all variants) and vector
/// elements. Aptos's lazy loader loads, and charges, each of them when it
/// builds a layout (type arguments no field uses are not reached).
pub fn layout_modules<S: DatatypeSource + ?Sized>(src: &S, t: &Type) -> VmResult<Vec<ModuleId>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![t.clone()];
    while let Some(t) = todo.pop() {
        match t {
            Type::Vector(e) => todo.push(*e),
            Type::Datatype(ref id, ref args) => {
                if !seen.insert(t.clone()) {
                    continue;
                }
                let mid = ModuleId { address: id.address, name: id.module.clone() };
                if !out.contains(&mid) {
                    out.push(mid);
                }
                if let Some(fields) = src.datatype_fields(id, args)? {
                    // Reversed: the first field is looked at first.
                    todo.extend(fields.variants.into_iter().flatten().rev());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The limits a layout is built under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutLimits {
    /// Deepest nesting (the type itself is at depth 1).
    pub max_depth: usize,
    /// Most nodes in the whole layout, if bounded.
    pub max_nodes: Option<usize>,
}

/// The layout of `t` under `limits` (`VM_MAX_TYPE_NODES_REACHED`,
/// `VM_MAX_TYPE_DEPTH_REACHED` past them).
pub fn layout<S: DatatypeSource + ?Sized>(src: &S, t: &Type, limits: LayoutLimits) -> VmResult<Layout> {
    layout_rec(src, t, limits, 1, &mut 0)
}

fn layout_rec<S: DatatypeSource + ?Sized>(
    src: &S,
    t: &Type,
    limits: LayoutLimits,
    depth: usize,
    nodes: &mut usize,
) -> VmResult<Layout> {
    *nodes = nodes.saturating_add(1);
    if limits.max_nodes.is_some_and(|max| *nodes > max) {
        return Err(VmError::new(StatusCode::VM_MAX_TYPE_NODES_REACHED));
    }
    if depth > limits.max_depth {
        return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
    }
    Ok(match t {
        Type::Vector(e) => Layout::Vector(Box::new(layout_rec(src, e, limits, depth + 1, nodes)?)),
        Type::Function(..) => Layout::Function,
        Type::Datatype(id, args) => {
            let fields = src
                .datatype_fields(id, args)
                .map_err(|e| match e.status {
                    _ if e.message.is_some() => e,
                    StatusCode::LINKER_ERROR => {
                        let mid = ModuleId { address: id.address, name: id.module.clone() };
                        e.with_message(format!("{mid} not loaded"))
                    }
                    StatusCode::TYPE_RESOLUTION_FAILURE => e.with_message(format!("{t}")),
                    _ => e,
                })?
                .ok_or_else(|| VmError::invariant("native struct"))?;
            let mut out = Vec::with_capacity(fields.variants.len());
            for fs in &fields.variants {
                out.push(
                    fs.iter().map(|f| layout_rec(src, f, limits, depth + 1, nodes)).collect::<VmResult<Vec<_>>>()?,
                );
            }
            if fields.is_enum {
                Layout::Enum(out)
            } else {
                Layout::Struct(out.pop().unwrap_or_default())
            }
        }
        Type::Reference(_) | Type::MutableReference(_) | Type::TyParam(_) => {
            return Err(VmError::invariant(format!("no layout for {t}")))
        }
        primitive => Layout::primitive(primitive).ok_or_else(|| VmError::invariant("no primitive form"))?,
    })
}

/// The value depth of `t` (a primitive is 1; a vector, reference or
/// datatype 1 + its deepest part; a native struct 1). Types deeper than
/// `max_value_depth` are not measured exactly: the result is capped just
/// above it.
pub fn value_depth<S: DatatypeSource + ?Sized>(src: &S, t: &Type, max_value_depth: usize) -> VmResult<usize> {
    depth_rec(src, t, max_value_depth + 1, 1)
}

fn depth_rec<S: DatatypeSource + ?Sized>(src: &S, t: &Type, cap: usize, level: usize) -> VmResult<usize> {
    if level > cap {
        return Ok(cap);
    }
    Ok(match t {
        Type::Vector(e) | Type::Reference(e) | Type::MutableReference(e) => 1 + depth_rec(src, e, cap, level + 1)?,
        Type::Datatype(id, args) => {
            let mut max = 0;
            if let Some(fields) = src.datatype_fields(id, args)? {
                for f in fields.variants.iter().flatten() {
                    max = max.max(depth_rec(src, f, cap, level + 1)?);
                }
            }
            1 + max
        }
        _ => 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::AccountAddress;

    /// `S { a: u8, v: vector<T> }` for any `S`, `T` its one argument.
    struct OneStruct;

    impl DatatypeSource for OneStruct {
        fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>> {
            match &*id.name {
                "S" => Ok(Some(DatatypeFields {
                    is_enum: false,
                    variants: vec![vec![Type::U8, Type::Vector(Box::new(args[0].clone()))]],
                })),
                "N" => Ok(None),
                _ => Err(VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE)),
            }
        }
    }

    fn s(name: &str, arg: Type) -> Type {
        Type::Datatype(
            Arc::new(DatatypeId { address: AccountAddress::ZERO, module: "m".into(), name: name.into() }),
            vec![arg],
        )
    }

    #[test]
    fn layouts_and_depths() {
        let wide = LayoutLimits { max_depth: 10, max_nodes: None };
        let nested = s("S", s("S", Type::U64));
        let inner = Layout::Struct(vec![Layout::U8, Layout::Vector(Box::new(Layout::U64))]);
        let want = Layout::Struct(vec![Layout::U8, Layout::Vector(Box::new(inner))]);
        assert_eq!(layout(&OneStruct, &nested, wide).unwrap(), want);
        let cases: &[(LayoutLimits, StatusCode)] = &[
            (LayoutLimits { max_depth: 3, max_nodes: None }, StatusCode::VM_MAX_TYPE_DEPTH_REACHED),
            (LayoutLimits { max_depth: 10, max_nodes: Some(5) }, StatusCode::VM_MAX_TYPE_NODES_REACHED),
        ];
        for &(limits, status) in cases {
            assert_eq!(layout(&OneStruct, &nested, limits).unwrap_err().status, status);
        }
        let missing = layout(&OneStruct, &s("X", Type::U8), wide).unwrap_err();
        assert_eq!(missing.status, StatusCode::TYPE_RESOLUTION_FAILURE);
        assert!(missing.message.is_some());
        assert!(layout(&OneStruct, &s("N", Type::U8), wide).is_err());

        // S<S<u64>>: S, vector, S, vector, u64.
        assert_eq!(value_depth(&OneStruct, &nested, 100).unwrap(), 5);
        // Past the limit the measure stops being exact but stays past it.
        assert!(value_depth(&OneStruct, &nested, 2).unwrap() > 2);
        assert_eq!(value_depth(&OneStruct, &s("N", Type::U8), 100).unwrap(), 1);
    }
}
