//! Acceptance data for flat values: every argument, return value and
//! mutated `&mut` argument of the Aptos conformance cases
//! (`../shared/conformance/aptos/cases.jsonl`), typed by the called
//! function's parameter and return types, must round-trip BCS → flat → BCS
//! to the same bytes as the tree representation (`runtime::Value`), and flat
//! equality and copy must agree with the tree's; dropping everything must
//! free every allocation.

use movejit_format::{decode_module, CompiledModule, SignatureToken, StructFieldInformation};
use movejit_runtime::flat::{self, FlatLayouts, FlatValue};
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::{bcs, DatatypeId, Layout, StatusCode, Type, Value, VmError, VmResult};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

fn shared_dir() -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !p.join("Cargo.lock").exists() || !p.join("crates").exists() {
        if !p.pop() {
            break;
        }
    }
    p.join("../shared")
}

/// The struct and enum definitions of a set of modules, as a [`TypeInfo`].
#[derive(Default)]
struct Modules {
    by_id: HashMap<(movejit_format::AccountAddress, String), Arc<CompiledModule>>,
}

fn handle_id(m: &CompiledModule, sh: movejit_format::StructHandleIndex) -> Option<DatatypeId> {
    let h = m.struct_handles.get(sh.idx())?;
    let mh = m.module_handles.get(h.module.idx())?;
    Some(DatatypeId {
        address: *m.address_identifier_at(mh.address),
        module: m.identifier_at(mh.name).into(),
        name: m.identifier_at(h.name).into(),
    })
}

/// A signature token of `m` as a runtime type, type parameters replaced by `args`.
fn to_type(m: &CompiledModule, t: &SignatureToken, args: &[Type]) -> Option<Type> {
    use SignatureToken as S;
    if let Some(p) = Type::primitive(t) {
        return Some(p);
    }
    Some(match t {
        S::Vector(e) => Type::Vector(Box::new(to_type(m, e, args)?)),
        S::Function(p, r, ab) => Type::Function(
            p.iter().map(|t| to_type(m, t, args)).collect::<Option<_>>()?,
            r.iter().map(|t| to_type(m, t, args)).collect::<Option<_>>()?,
            *ab,
        ),
        S::Struct(sh) => Type::Datatype(Arc::new(handle_id(m, *sh)?), vec![]),
        S::StructInstantiation(sh, ts) => {
            Type::Datatype(Arc::new(handle_id(m, *sh)?), ts.iter().map(|t| to_type(m, t, args)).collect::<Option<_>>()?)
        }
        S::Reference(t) => Type::Reference(Box::new(to_type(m, t, args)?)),
        S::MutableReference(t) => Type::MutableReference(Box::new(to_type(m, t, args)?)),
        S::TypeParameter(i) => args.get(*i as usize)?.clone(),
        _ => return None,
    })
}

impl Modules {
    fn layout_rec(&self, t: &Type, depth: usize) -> VmResult<Layout> {
        if depth > 256 {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
        }
        let bad = || VmError::invariant(format!("no layout for {t}"));
        if let Some(p) = Layout::primitive(t) {
            return Ok(p);
        }
        Ok(match t {
            Type::Vector(e) => Layout::Vector(Box::new(self.layout_rec(e, depth + 1)?)),
            Type::Function(..) => Layout::Function,
            Type::Datatype(id, args) => {
                let m = self.by_id.get(&(id.address, id.module.to_string())).ok_or_else(bad)?;
                let sd = m
                    .struct_defs
                    .iter()
                    .find(|d| {
                        m.struct_handles.get(d.struct_handle.idx()).map(|h| m.identifier_at(h.name)) == Some(&*id.name)
                    })
                    .ok_or_else(bad)?;
                let fields = |fs: &[movejit_format::FieldDefinition]| -> VmResult<Vec<Layout>> {
                    fs.iter()
                        .map(|f| self.layout_rec(&to_type(m, &f.signature, args).ok_or_else(bad)?, depth + 1))
                        .collect()
                };
                match &sd.field_information {
                    StructFieldInformation::Native => return Err(bad()),
                    StructFieldInformation::Declared(fs) => Layout::Struct(fields(fs)?),
                    StructFieldInformation::DeclaredVariants(vs) => {
                        Layout::Enum(vs.iter().map(|v| fields(&v.fields)).collect::<VmResult<_>>()?)
                    }
                }
            }
            _ => return Err(bad()),
        })
    }
}

impl TypeInfo for Modules {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        self.layout_rec(ty, 1)
    }
}

fn contains_function(t: &Type) -> bool {
    match t {
        Type::Function(..) => true,
        Type::Vector(e) | Type::Reference(e) | Type::MutableReference(e) => contains_function(e),
        Type::Datatype(_, a) => a.iter().any(contains_function),
        _ => false,
    }
}

fn strip_ref(t: &Type) -> &Type {
    match t {
        Type::Reference(t) | Type::MutableReference(t) => t,
        t => t,
    }
}

#[derive(Default)]
struct Tally {
    values: usize,
    malformed_args: usize,
    closure_values: usize,
    unresolved: usize,
}

#[test]
fn conformance_values_round_trip_and_agree_with_tree() {
    let dir = shared_dir().join("conformance/aptos");
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl");
    let mut module_cache: HashMap<PathBuf, Arc<CompiledModule>> = HashMap::new();
    let flat_layouts = FlatLayouts::new(256);
    let live_before = flat::live_allocations();
    let mut tally = Tally::default();
    // Every value seen, grouped by type (text), for the pairwise equality check.
    let mut by_type: BTreeMap<String, Vec<(Value, FlatValue)>> = BTreeMap::new();
    let mut closure_types: Vec<String> = Vec::new();

    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let j: Json = serde_json::from_str(line).expect("case json");
        let id = j["id"].as_str().unwrap_or_default();
        let mut mods = Modules::default();
        for p in j["modules"].as_array().into_iter().flatten().filter_map(|m| m.as_str()) {
            let path = dir.join(p);
            let m = module_cache
                .entry(path.clone())
                .or_insert_with(|| Arc::new(decode_module(&std::fs::read(&path).expect("module")).expect("decodes")))
                .clone();
            let mh = &m.module_handles[m.self_module_handle_idx.idx()];
            mods.by_id.insert((*m.address_identifier_at(mh.address), m.identifier_at(mh.name).to_string()), m);
        }
        let func = j["function"].as_str().unwrap_or_default();
        let mut parts = func.split("::");
        let (addr, mname, fname) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let addr = movejit_format::AccountAddress::parse(addr).expect("address");
        let Some(m) = mods.by_id.get(&(addr, mname.to_string())).cloned() else {
            tally.unresolved += 1;
            continue;
        };
        let ty_args: Option<Vec<Type>> =
            j["type_args"].as_array().into_iter().flatten().map(|t| t.as_str().and_then(Type::parse_tag)).collect();
        let Some(ty_args) = ty_args else {
            tally.unresolved += 1;
            continue;
        };
        let Some(fh) = m
            .function_handles
            .iter()
            .find(|h| h.module == m.self_module_handle_idx && m.identifier_at(h.name) == fname)
        else {
            tally.unresolved += 1;
            continue;
        };
        let sig = |i: movejit_format::SignatureIndex| -> Option<Vec<Type>> {
            m.signatures.get(i.idx())?.0.iter().map(|t| to_type(&m, t, &ty_args)).collect()
        };
        let (Some(params), Some(returns)) = (sig(fh.parameters), sig(fh.return_)) else {
            tally.unresolved += 1;
            continue;
        };

        // (type, bytes, argument form?)
        let mut items: Vec<(Type, Vec<u8>, bool)> = Vec::new();
        let args: Vec<&str> = j["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str()).collect();
        if args.len() == params.len() {
            for (t, a) in params.iter().zip(&args) {
                items.push((strip_ref(t).clone(), hex::decode(a).expect("hex"), true));
            }
        }
        let exp = &j["expect"];
        for (t, r) in returns.iter().zip(exp["returns"].as_array().into_iter().flatten()) {
            items.push((strip_ref(t).clone(), hex::decode(r.as_str().unwrap_or("")).expect("hex"), false));
        }
        let mutref_params: Vec<usize> = exp["mutref_params"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_u64())
            .map(|p| p as usize)
            .collect();
        for (p, r) in mutref_params.iter().zip(exp["mutrefs"].as_array().into_iter().flatten()) {
            if let Some(t) = params.get(*p) {
                items.push((strip_ref(t).clone(), hex::decode(r.as_str().unwrap_or("")).expect("hex"), false));
            }
        }

        for (t, bytes, is_arg) in items {
            if contains_function(&t) {
                tally.closure_values += 1;
                closure_types.push(t.to_string());
                continue;
            }
            let tree_layout = mods.layout_of(&t).unwrap_or_else(|e| panic!("{id}: layout of {t}: {e}"));
            let fl = flat_layouts.layout_of(&mods, &t).unwrap_or_else(|e| panic!("{id}: flat layout of {t}: {e}"));
            let (tree, flat) = if is_arg {
                (bcs::deserialize_arg(&bytes, &tree_layout), flat::bcs::deserialize_arg(&bytes, fl.clone()))
            } else {
                (bcs::deserialize(&bytes, &tree_layout), flat::bcs::deserialize(&bytes, fl.clone()))
            };
            let (tree, flat) = match (tree, flat) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(_), Err(e)) => {
                    assert!(is_arg, "{id}: expected bytes of {t} do not deserialize");
                    assert_eq!(e.status, StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT, "{id}");
                    tally.malformed_args += 1;
                    continue;
                }
                (a, b) => panic!("{id}: {t}: tree {:?} vs flat {:?}", a.map(|_| ()), b.map(|_| ())),
            };
            let tree_bytes = bcs::serialize(&tree, &tree_layout).expect("tree serializes");
            let flat_bytes = flat::bcs::serialize(&flat).unwrap_or_else(|e| panic!("{id}: {t}: {e}"));
            assert_eq!(hex::encode(&flat_bytes), hex::encode(&tree_bytes), "{id}: {t}");
            if !is_arg || !matches!(t, Type::Signer) {
                assert_eq!(flat_bytes, bytes, "{id}: {t}: round trip");
            }
            let copy = flat.copy();
            assert!(copy.equals(&flat) && flat.equals(&copy), "{id}: {t}: copy differs");
            assert_eq!(flat::bcs::serialize(&copy).expect("copy serializes"), flat_bytes);
            drop(copy);
            tally.values += 1;
            by_type.entry(t.to_string()).or_default().push((tree, flat));
        }
    }

    // Pairwise equality of values of one type: flat agrees with the tree.
    let (mut pairs, mut equal_pairs) = (0usize, 0usize);
    for (t, vs) in &by_type {
        let vs = &vs[..vs.len().min(60)];
        for (a, fa) in vs {
            for (b, fb) in vs {
                let tree_eq = a == b;
                assert_eq!(fa.equals(fb), tree_eq, "{t}: {a:?} vs {b:?}");
                pairs += 1;
                equal_pairs += tree_eq as usize;
            }
        }
    }
    let types = by_type.len();
    drop(by_type);
    assert_eq!(flat::live_allocations(), live_before, "flat values leaked heap blocks");
    closure_types.sort();
    closure_types.dedup();
    eprintln!(
        "flat conformance: {} values of {} types round-tripped; {} malformed arguments rejected as the tree does; \
         {} equality pairs ({} equal) agree; skipped: {} closure values ({:?}), {} unresolved cases",
        tally.values,
        types,
        tally.malformed_args,
        pairs,
        equal_pairs,
        tally.closure_values,
        closure_types,
        tally.unresolved
    );
    assert!(tally.values > 2000, "too few values checked: {}", tally.values);
    assert_eq!(tally.unresolved, 0);
}
