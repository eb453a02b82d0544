//! Cases for given modules: every public (or entry) function with
//! generated arguments, generic ones instantiated with primitive types.

#![forbid(unsafe_code)]

use crate::case::Case;
use crate::gen::ty::{Int, IntGen, Sc};
use crate::rng::Rng;
use movejit_format::{CompiledModule, SignatureToken as T, StatusFlavour, Visibility};
use movejit_runtime::bcs::write_uleb;
use movejit_runtime::Type;

/// Primitive types generic functions are instantiated with.
const INSTANCES: [(Type, Option<Sc>); 4] = [
    (Type::U64, Some(Sc::Int(Int::U64))),
    (Type::U8, Some(Sc::Int(Int::U8))),
    (Type::Bool, Some(Sc::Bool)),
    (Type::Address, None),
];

/// A random BCS value of `tok` (type parameters replaced by `ty_args`);
/// `None` for types arguments cannot have (structs, functions).
pub fn value_bcs(tok: &T, ty_args: &[usize], flavour: StatusFlavour, rng: &mut Rng, out: &mut Vec<u8>) -> Option<()> {
    let int = |i: Int, rng: &mut Rng, out: &mut Vec<u8>| out.extend(i.bcs(i.edge_value(rng)));
    match tok {
        T::Bool => out.push(rng.below(2) as u8),
        t if Int::of_token(t).is_some_and(Int::is_integer) => int(Int::of_token(t)?, rng, out),
        T::Address => out.extend(address(rng)),
        T::Signer => {
            // Aptos passes a signer as its enum (variant 0, Master).
            if flavour == StatusFlavour::Aptos {
                out.push(0);
            }
            out.extend(address(rng));
        }
        T::Vector(e) => {
            let n = rng.below(5);
            write_uleb(out, n as u64);
            for _ in 0..n {
                value_bcs(e, ty_args, flavour, rng, out)?;
            }
        }
        T::Reference(e) | T::MutableReference(e) => value_bcs(e, ty_args, flavour, rng, out)?,
        T::TypeParameter(i) => {
            let (_, sc) = INSTANCES.get(*ty_args.get(*i as usize)?)?;
            match sc {
                Some(s) => out.extend(s.random_bcs(rng)),
                None => out.extend(address(rng)),
            }
        }
        _ => return None,
    }
    Some(())
}

fn address(rng: &mut Rng) -> Vec<u8> {
    match rng.below(3) {
        0 => {
            let mut a = vec![0u8; 32];
            a[31] = 1;
            a
        }
        1 => rng.bytes(32),
        _ => {
            let mut a = vec![0u8; 32];
            a[30] = 0xca;
            a[31] = 0xfe;
            a
        }
    }
}

/// One case per public or entry function of `module` (generic functions
/// once per primitive instantiation their constraints allow; those whose
/// parameters cannot be generated are counted in the second result).
pub fn cases_for(all: &[CompiledModule], module: usize, flavour: StatusFlavour, rng: &mut Rng) -> (Vec<Case>, u64) {
    let Some(m) = all.get(module) else { return (Vec::new(), 0) };
    let (mut cases, mut skipped) = (Vec::new(), 0);
    for f in &m.function_defs {
        if f.code.is_none() || (f.visibility != Visibility::Public && !f.is_entry) {
            continue;
        }
        let Some(h) = m.function_handles.get(f.function.idx()) else { continue };
        let Some(name) = m.identifiers.get(h.name.idx()) else { continue };
        let Some(params) = m.signatures.get(h.parameters.idx()) else { continue };
        // Instantiations: all type parameters to the same primitive, each of
        // the first two that satisfy every constraint.
        let mut insts: Vec<Vec<usize>> = Vec::new();
        if h.type_parameters.is_empty() {
            insts.push(Vec::new());
        } else {
            for k in 0..INSTANCES.len() {
                if h.type_parameters.iter().all(|c| c.0 & !movejit_format::AbilitySet::PRIMITIVES.0 == 0) {
                    insts.push(vec![k; h.type_parameters.len()]);
                }
                if insts.len() == 2 {
                    break;
                }
            }
        }
        if insts.is_empty() {
            skipped += 1;
        }
        for inst in insts {
            let mut args = Vec::new();
            let ok = params.0.iter().all(|p| {
                let mut out = Vec::new();
                let r = value_bcs(p, &inst, flavour, rng, &mut out);
                args.push(out);
                r.is_some()
            });
            if !ok {
                skipped += 1;
                continue;
            }
            cases.push(Case {
                name: format!("{}::{}::{name}", m.address().to_hex_short(), m.name()),
                flavour,
                modules: all.to_vec(),
                address: *m.address(),
                module: m.name().to_string(),
                function: name.clone(),
                type_args: inst.iter().map(|k| INSTANCES[*k].0.clone()).collect(),
                args,
            });
        }
    }
    (cases, skipped)
}

/// The modules of `given` that verify against each other, in dependency
/// order, and how many did not (bad dependencies included).
pub fn verified_in_order(given: Vec<CompiledModule>, flavour: StatusFlavour) -> (Vec<CompiledModule>, u64) {
    let config = match flavour {
        StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
        StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
    };
    // Linking looks past the immediate dependencies (friends, which depend
    // on the module, and a dependency's own dependencies), so every module
    // links against all the given ones, as a bundle publish would.
    let bundle = given.clone();
    let linked: Vec<&CompiledModule> = bundle.iter().collect();
    let mut done: Vec<CompiledModule> = Vec::new();
    let mut failed = 0u64;
    let mut pending = given;
    loop {
        let before = pending.len();
        let mut rest = Vec::new();
        for m in pending {
            let deps = m.immediate_dependencies();
            if !deps.iter().all(|(a, n)| done.iter().any(|d| d.address() == a && d.name() == n)) {
                rest.push(m);
                continue;
            }
            if movejit_verifier::verify_module(&m, &linked, &config).is_ok()
                && !done.iter().any(|d| d.address() == m.address() && d.name() == m.name())
            {
                done.push(m);
            } else {
                failed += 1;
            }
        }
        pending = rest;
        if pending.len() == before || pending.is_empty() {
            return (done, failed + pending.len() as u64);
        }
    }
}
