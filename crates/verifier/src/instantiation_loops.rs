//! Instantiation loops: generic calls within the module must not feed a
//! type parameter back into itself wrapped in a bigger type (which would
//! make the set of instantiations infinite).
//!
//! Nodes are (function, type parameter); a call `g<T1..Tn>` from `f` adds an
//! edge from each type parameter of `f` mentioned in `Ti` to `(g, i)`,
//! weighted if `Ti` is more than the bare parameter. A strongly connected
//! component holding a weighted edge is a loop.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{Bytecode, CompiledModule, SignatureToken as ST, StatusCode};
use std::collections::HashMap;

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let mut handle_to_def = HashMap::new();
    for (i, d) in m.function_defs.iter().enumerate() {
        handle_to_def.insert(d.function, i);
    }
    let mut node_ids: HashMap<(usize, u16), usize> = HashMap::new();
    let mut edges: Vec<(usize, usize, bool)> = Vec::new();
    let mut node = |k: (usize, u16)| {
        let n = node_ids.len();
        *node_ids.entry(k).or_insert(n)
    };
    for (caller, d) in m.function_defs.iter().enumerate() {
        let Some(code) = &d.code else { continue };
        for instr in &code.code {
            let (Bytecode::CallGeneric(i) | Bytecode::PackClosureGeneric(i, _)) = instr else { continue };
            let inst = &m.function_instantiations[i.idx()];
            let Some(&callee) = handle_to_def.get(&inst.handle) else { continue };
            for (arg_idx, arg) in m.signatures[inst.type_parameters.idx()].0.iter().enumerate() {
                match arg {
                    ST::TypeParameter(p) => {
                        let (a, b) = (node((caller, *p)), node((callee, arg_idx as u16)));
                        edges.push((a, b, false));
                    }
                    _ => {
                        for t in arg.preorder() {
                            if let ST::TypeParameter(p) = t {
                                let (a, b) = (node((caller, *p)), node((callee, arg_idx as u16)));
                                edges.push((a, b, true));
                            }
                        }
                    }
                }
            }
        }
    }
    let n = node_ids.len();
    let mut adj = vec![Vec::new(); n];
    for (a, b, _) in &edges {
        adj[*a].push(*b);
    }
    let comp = tarjan_scc(&adj);
    for (a, b, weighted) in &edges {
        if *weighted && comp[*a] == comp[*b] {
            let f = node_ids.iter().find(|(_, v)| **v == *a).map(|(k, _)| k.0).unwrap_or(0);
            return Err(VerifyError::at_function(StatusCode::LOOP_IN_INSTANTIATION_GRAPH, f as u16));
        }
    }
    Ok(())
}

/// Component id per node (iterative Tarjan).
pub(crate) fn tarjan_scc(adj: &[Vec<usize>]) -> Vec<usize> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![usize::MAX; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut next_comp = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 && index[v] == usize::MAX {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if *i < adj[v].len() {
                let w = adj[v][*i];
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = next_comp;
                        if w == v {
                            break;
                        }
                    }
                    next_comp += 1;
                }
            }
        }
    }
    comp
}
