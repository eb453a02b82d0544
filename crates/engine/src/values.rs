//! Values across the boundary: the interpreter's tree values to the JIT's
//! flat values and back, through BCS (the one encoding both sides read and
//! write byte-exactly).

use movejit_jit::{FlatArgs, JitEngine};
use movejit_runtime::flat::{bcs as flat_bcs, FlatValue};
use movejit_runtime::{bcs, Type, Value};

/// Flat copies of `args` (of types `tys`); `None` if any does not convert
/// (the call is then interpreted).
pub fn to_flat(jit: &JitEngine, args: &[Value], tys: &[Type]) -> Option<FlatArgs> {
    if args.len() != tys.len() {
        return None;
    }
    let mut out = Vec::with_capacity(args.len());
    for (v, t) in args.iter().zip(tys) {
        let tree = jit.value_layout_of(t).ok()?;
        let flat = jit.layout_of(t).ok()?;
        let bytes = bcs::serialize(v, &tree).ok()?;
        out.push(flat_bcs::deserialize(&bytes, flat).ok()?);
    }
    Some(out)
}

/// Tree values of flat results of types `tys`.
pub fn from_flat(jit: &JitEngine, vals: &[FlatValue], tys: &[Type]) -> Option<Vec<Value>> {
    if vals.len() != tys.len() {
        return None;
    }
    vals.iter()
        .zip(tys)
        .map(|(v, t)| {
            let tree = jit.value_layout_of(t).ok()?;
            let bytes = flat_bcs::serialize(v).ok()?;
            bcs::deserialize(&bytes, &tree).ok()
        })
        .collect()
}
