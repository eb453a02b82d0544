//! Runtime types and flat layouts for the code generator: signature tokens
//! instantiated to [`Type`]s, datatypes resolved through the engine's
//! modules, and the value-depth measure the interpreter checks at `Pack`.
//!
//! Any failure here (an unknown module, a native struct, a layout over the
//! limits) makes the function not compiled: the interpreter then runs it
//! and reports whatever error the program really has.

#![forbid(unsafe_code)]

use crate::error::{CompileError, CompileResult};
use movejit_format::{
    AccountAddress, CompiledModule, SignatureToken, StatusCode, StructFieldInformation, StructHandleIndex,
};
use movejit_runtime::layout::Layout;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::{DatatypeId, Type, VmError, VmResult};
use std::collections::HashMap;
use std::sync::Arc;

fn malformed(m: &str) -> CompileError {
    CompileError::Malformed(m.to_string())
}

/// The type limits the interpreter applies (`runtime::Limits`).
#[derive(Clone, Copy, Debug)]
pub struct TypeLimits {
    pub max_type_depth: usize,
    pub max_value_depth: usize,
    pub max_layout_nodes: Option<usize>,
}

/// The datatype a struct handle of `m` names.
pub fn datatype_id(m: &CompiledModule, h: StructHandleIndex) -> CompileResult<Arc<DatatypeId>> {
    let sh = m.struct_handles.get(h.idx()).ok_or_else(|| malformed("struct handle"))?;
    let mh = m.module_handles.get(sh.module.idx()).ok_or_else(|| malformed("module handle"))?;
    let address = *m.address_identifiers.get(mh.address.idx()).ok_or_else(|| malformed("address"))?;
    let module = m.identifiers.get(mh.name.idx()).ok_or_else(|| malformed("identifier"))?;
    let name = m.identifiers.get(sh.name.idx()).ok_or_else(|| malformed("identifier"))?;
    Ok(Arc::new(DatatypeId { address, module: module.as_str().into(), name: name.as_str().into() }))
}

/// The runtime type of `tok` in `m`, type parameters taken from `args`.
pub fn to_type(m: &CompiledModule, tok: &SignatureToken, args: &[Type]) -> CompileResult<Type> {
    use SignatureToken as S;
    Ok(match tok {
        S::Vector(t) => Type::Vector(Box::new(to_type(m, t, args)?)),
        S::Reference(t) => Type::Reference(Box::new(to_type(m, t, args)?)),
        S::MutableReference(t) => Type::MutableReference(Box::new(to_type(m, t, args)?)),
        S::Struct(h) => Type::Datatype(datatype_id(m, *h)?, Vec::new()),
        S::StructInstantiation(h, a) => {
            Type::Datatype(datatype_id(m, *h)?, a.iter().map(|t| to_type(m, t, args)).collect::<CompileResult<_>>()?)
        }
        S::Function(p, r, ab) => Type::Function(
            p.iter().map(|t| to_type(m, t, args)).collect::<CompileResult<_>>()?,
            r.iter().map(|t| to_type(m, t, args)).collect::<CompileResult<_>>()?,
            *ab,
        ),
        S::TypeParameter(i) => {
            args.get(*i as usize).cloned().ok_or_else(|| malformed("type parameter out of range"))?
        }
        primitive => Type::primitive(primitive).ok_or_else(|| malformed("signature token"))?,
    })
}

/// The types of signature `idx` of `m`.
pub fn sig_types(m: &CompiledModule, idx: movejit_format::SignatureIndex, args: &[Type]) -> CompileResult<Vec<Type>> {
    let s = m.signatures.get(idx.idx()).ok_or_else(|| malformed("signature index"))?;
    s.0.iter().map(|t| to_type(m, t, args)).collect()
}

/// Resolves datatypes through the engine's modules.
pub struct Types<'a> {
    pub modules: &'a [Arc<CompiledModule>],
    pub by_name: &'a HashMap<(AccountAddress, String), u32>,
    pub limits: TypeLimits,
}

impl Types<'_> {
    /// The field-type lists (one per variant; one for a struct) of `id`
    /// instantiated with `args`, and whether it is an enum.
    pub fn fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<(bool, Vec<Vec<Type>>)> {
        let idx = self
            .by_name
            .get(&(id.address, id.module.to_string()))
            .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        let m = self.modules.get(*idx as usize).ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        let named = |h: StructHandleIndex| {
            m.struct_handles
                .get(h.idx())
                .and_then(|sh| m.identifiers.get(sh.name.idx()))
                .is_some_and(|n| **n == *id.name)
        };
        let conv = |fs: &[movejit_format::FieldDefinition]| -> VmResult<Vec<Type>> {
            fs.iter().map(|f| to_type(m, &f.signature, args).map_err(|e| VmError::invariant(e.to_string()))).collect()
        };
        if let Some(sd) = m.struct_defs.iter().find(|d| named(d.struct_handle)) {
            return match &sd.field_information {
                StructFieldInformation::Native => Err(VmError::invariant("native struct")),
                StructFieldInformation::Declared(fs) => Ok((false, vec![conv(fs)?])),
                StructFieldInformation::DeclaredVariants(vs) => {
                    Ok((true, vs.iter().map(|v| conv(&v.fields)).collect::<VmResult<_>>()?))
                }
            };
        }
        if let Some(ed) = m.enum_defs.iter().find(|d| named(d.enum_handle)) {
            return Ok((true, ed.variants.iter().map(|v| conv(&v.fields)).collect::<VmResult<_>>()?));
        }
        Err(VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE))
    }

    fn layout_rec(&self, t: &Type, depth: usize, nodes: &mut usize) -> VmResult<Layout> {
        *nodes += 1;
        if self.limits.max_layout_nodes.is_some_and(|max| *nodes > max) {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_NODES_REACHED));
        }
        if depth > self.limits.max_type_depth {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
        }
        Ok(match t {
            Type::Vector(e) => Layout::Vector(Box::new(self.layout_rec(e, depth + 1, nodes)?)),
            Type::Function(..) => Layout::Function,
            Type::Datatype(id, args) => {
                let (is_enum, vs) = self.fields(id, args)?;
                let mut out = Vec::with_capacity(vs.len());
                for fs in vs {
                    out.push(fs.iter().map(|f| self.layout_rec(f, depth + 1, nodes)).collect::<VmResult<Vec<_>>>()?);
                }
                if is_enum {
                    Layout::Enum(out)
                } else {
                    Layout::Struct(out.pop().unwrap_or_default())
                }
            }
            Type::Reference(_) | Type::MutableReference(_) | Type::TyParam(_) => {
                return Err(VmError::invariant("no layout for a reference or type parameter"))
            }
            primitive => Layout::primitive(primitive).ok_or_else(|| VmError::invariant("no primitive form"))?,
        })
    }

    /// The interpreter's value depth of `t` (capped just above the limit).
    pub fn value_depth(&self, t: &Type) -> CompileResult<usize> {
        self.depth_rec(t, 1).map_err(|e| CompileError::Unsupported(format!("value depth: {e}")))
    }

    fn depth_rec(&self, t: &Type, level: usize) -> VmResult<usize> {
        let cap = self.limits.max_value_depth + 1;
        if level > cap {
            return Ok(cap);
        }
        Ok(match t {
            Type::Vector(e) | Type::Reference(e) | Type::MutableReference(e) => 1 + self.depth_rec(e, level + 1)?,
            Type::Datatype(id, args) => {
                let (_, vs) = self.fields(id, args)?;
                let mut max = 0;
                for f in vs.iter().flatten() {
                    max = max.max(self.depth_rec(f, level + 1)?);
                }
                1 + max
            }
            _ => 1,
        })
    }
}

impl TypeInfo for Types<'_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        self.layout_rec(ty, 1, &mut 0)
    }
}
