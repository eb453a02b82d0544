//! Recursive datatypes: no struct (or Sui enum) of this module contains
//! itself, directly or through other datatypes of this module.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{CompiledModule, SignatureToken as ST, StatusCode, StructFieldInformation};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn verify_module(m: &CompiledModule, config: &crate::VerifierConfig) -> VerifyResult {
    // Node per datatype definition: struct defs first, then Sui enum defs.
    let mut handle_to_node = BTreeMap::new();
    for (i, d) in m.struct_defs.iter().enumerate() {
        handle_to_node.insert(d.struct_handle, i);
    }
    for (i, d) in m.enum_defs.iter().enumerate() {
        handle_to_node.insert(d.enum_handle, m.struct_defs.len() + i);
    }
    let n = m.struct_defs.len() + m.enum_defs.len();
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut add = |from: usize, ty: &ST| {
        for t in ty.preorder() {
            if let ST::Struct(h) | ST::StructInstantiation(h, _) = t {
                if let Some(to) = handle_to_node.get(h) {
                    edges[from].insert(*to);
                }
            }
        }
    };
    for (i, d) in m.struct_defs.iter().enumerate() {
        match &d.field_information {
            StructFieldInformation::Native => {}
            StructFieldInformation::Declared(f) => f.iter().for_each(|f| add(i, &f.signature)),
            StructFieldInformation::DeclaredVariants(v) => {
                v.iter().flat_map(|v| &v.fields).for_each(|f| add(i, &f.signature))
            }
        }
    }
    for (i, d) in m.enum_defs.iter().enumerate() {
        d.variants.iter().flat_map(|v| &v.fields).for_each(|f| add(m.struct_defs.len() + i, &f.signature));
    }
    if let Some(node) = find_cycle(&edges) {
        let status = if config.is_sui() {
            StatusCode::RECURSIVE_DATATYPE_DEFINITION
        } else {
            StatusCode::RECURSIVE_STRUCT_DEFINITION
        };
        return Err(VerifyError::at_struct(status, node as u16));
    }
    Ok(())
}

/// A node on some cycle, by iterative depth-first search.
pub(crate) fn find_cycle(edges: &[BTreeSet<usize>]) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum C {
        White,
        Grey,
        Black,
    }
    let mut color = vec![C::White; edges.len()];
    for root in 0..edges.len() {
        if color[root] != C::White {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(root, edges[root].iter().copied().collect())];
        color[root] = C::Grey;
        while let Some((node, succ)) = stack.last_mut() {
            match succ.pop() {
                Some(s) => match color[s] {
                    C::Grey => return Some(s),
                    C::White => {
                        color[s] = C::Grey;
                        let next = edges[s].iter().copied().collect();
                        stack.push((s, next));
                    }
                    C::Black => {}
                },
                None => {
                    color[*node] = C::Black;
                    stack.pop();
                }
            }
        }
    }
    None
}
