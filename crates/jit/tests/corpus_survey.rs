//! Every function of the real module corpus goes through the compiler:
//! every non-generic function, every closed generic instantiation the
//! corpus' own calls name (`FunctionInstantiation` entries whose type
//! arguments contain no type parameter), and the generic instantiations
//! those reach in turn. Each must compile or be reported as not supported
//! yet; real code must never be called malformed or break code generation.
//!
//! Prints, per corpus set, compiled / total for each of the three groups,
//! the compile time, and a histogram of why the rest do not compile (a
//! failure anywhere in an instance's call graph counts against it). Floors
//! on the compiled counts keep coverage from silently going down. Per-call
//! p50 / p99 compile times of the Aptos framework: the `compile_cost`
//! bench of movejit-benches.

use movejit_format::{decode_module, Bytecode, CompiledModule, SignatureToken};
use movejit_interp::EngineConfig;
use movejit_jit::types::to_type;
use movejit_jit::{CompileError, InstanceKey, JitConfig, JitEngine};
use movejit_runtime::Type;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn mv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Older versions of the same modules (history/) would shadow the
        // current ones and mix incompatible signatures.
        if p.is_dir() && p.file_name().is_some_and(|n| n != "history") {
            mv_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mv") {
            out.push(p);
        }
    }
}

/// A short, stable name for why an instance does not compile.
fn reason(msg: &str) -> String {
    let head = |s: &str| s.split(['(', '{', ':']).next().unwrap_or("").trim().to_string();
    if let Some(rest) = msg.strip_prefix("native function ") {
        // "native function table::add_box": grouped by native module.
        let module = rest.split("::").next().unwrap_or(rest);
        return format!("native {module}");
    }
    if msg.starts_with("function of ") {
        return "size limit (instructions)".to_string();
    }
    if msg.starts_with("global storage") {
        return "global storage".to_string();
    }
    if let Some(rest) = msg.strip_prefix("layout of ") {
        // "layout of <type>: <why>"
        return format!("layout: {}", head(rest.split_once(": ").map(|x| x.1).unwrap_or(rest)));
    }
    head(msg)
}

/// Compiled / total and the reasons of the rest, for one group of instances.
#[derive(Default)]
struct Tally {
    compiled: usize,
    total: usize,
    time: Duration,
    /// reason → (count, an example: function and full message)
    reasons: BTreeMap<String, (usize, String)>,
}

impl Tally {
    fn record(&mut self, what: &str, r: &Result<(), CompileError>, dt: Duration, problems: &mut Vec<String>) {
        self.total += 1;
        self.time += dt;
        match r {
            Ok(()) => self.compiled += 1,
            Err(CompileError::Unsupported(m)) => {
                let e = self.reasons.entry(reason(m)).or_insert_with(|| (0, format!("{what}: {m}")));
                e.0 += 1;
            }
            Err(err) => problems.push(format!("{what}: {err}")),
        }
    }

    fn print(&self, title: &str) {
        println!(
            "  {title:<28} {:>5} / {:<5} compiled ({:.1}%), {:.0} ms",
            self.compiled,
            self.total,
            100.0 * self.compiled as f64 / self.total.max(1) as f64,
            self.time.as_secs_f64() * 1e3
        );
        let mut v: Vec<_> = self.reasons.iter().collect();
        v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        for (r, (n, example)) in v {
            println!("      {n:>5}  {r:<40} e.g. {}", truncate(example, 110));
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn has_type_param(t: &SignatureToken) -> bool {
    use SignatureToken as S;
    match t {
        S::TypeParameter(_) => true,
        S::Vector(t) | S::Reference(t) | S::MutableReference(t) => has_type_param(t),
        S::StructInstantiation(_, a) => a.iter().any(has_type_param),
        S::Function(p, r, _) => p.iter().chain(r).any(has_type_param),
        _ => false,
    }
}

fn type_depth(t: &Type) -> usize {
    match t {
        Type::Vector(t) | Type::Reference(t) | Type::MutableReference(t) => 1 + type_depth(t),
        Type::Datatype(_, a) => 1 + a.iter().map(type_depth).max().unwrap_or(0),
        Type::Function(p, r, _) => 1 + p.iter().chain(r).map(type_depth).max().unwrap_or(0),
        _ => 1,
    }
}

/// Instances reached transitively stay within this type depth and count,
/// so recursive generics cannot blow the survey up.
const MAX_TRANSITIVE_DEPTH: usize = 8;
const MAX_TRANSITIVE: usize = 20_000;

/// The instance a `FunctionInstantiation` of module `mi` names, with type
/// arguments instantiated by `outer` (the caller's); `None` for natives and
/// anything unresolvable (the compiler reports those at the call site).
fn callee_key(e: &JitEngine, mi: u32, m: &CompiledModule, fi: usize, outer: &[Type]) -> Option<InstanceKey> {
    let inst = m.function_instantiations.get(fi)?;
    let toks = &m.signatures.get(inst.type_parameters.idx())?.0;
    let targs: Vec<Type> = toks.iter().map(|t| to_type(m, t, outer)).collect::<Result<_, _>>().ok()?;
    let fh = m.function_handles.get(inst.handle.idx())?;
    let target = if fh.module == m.self_module_handle_idx {
        mi
    } else {
        let mh = m.module_handles.get(fh.module.idx())?;
        e.module_index(m.address_identifiers.get(mh.address.idx())?, m.identifiers.get(mh.name.idx())?)?
    };
    let name = m.identifiers.get(fh.name.idx())?;
    let key = e.instance_key(target, name, &targs).ok()?;
    let tm = e.module(target)?;
    tm.function_defs.get(key.fdef as usize)?.code.as_ref()?;
    Some(key)
}

/// The generic instances `key`'s code calls with type arguments that
/// depend on its own.
fn generic_callees(e: &JitEngine, key: &InstanceKey) -> Vec<InstanceKey> {
    let Some(m) = e.module(key.module) else { return Vec::new() };
    let Some(code) = m.function_defs.get(key.fdef as usize).and_then(|d| d.code.as_ref()) else { return Vec::new() };
    let mut out = Vec::new();
    for ins in &code.code {
        if let Bytecode::CallGeneric(fi) = ins {
            let open = m
                .function_instantiations
                .get(fi.idx())
                .and_then(|i| m.signatures.get(i.type_parameters.idx()))
                .is_some_and(|s| s.0.iter().any(has_type_param));
            if open {
                out.extend(callee_key(e, key.module, m, fi.idx(), &key.type_args));
            }
        }
    }
    out
}

struct SetReport {
    non_generic: Tally,
    direct: Tally,
    transitive: Tally,
    natives: usize,
    wall: Duration,
}

fn survey_set(corpus: &Path, set: &str, deps: &[&str], natives: movejit_runtime::NativeRegistry, problems: &mut Vec<String>) -> SetReport {
    let mut e = JitEngine::new(JitConfig { natives, ..JitConfig::default() }).unwrap();
    for dep in deps {
        let mut files = Vec::new();
        mv_files(&corpus.join(dep), &mut files);
        for f in &files {
            if let Ok(m) = decode_module(&std::fs::read(f).unwrap()) {
                e.add_module(m).unwrap();
            }
        }
    }
    let mut files = Vec::new();
    mv_files(&corpus.join(set), &mut files);
    let mut modules = Vec::new();
    for f in &files {
        let Ok(m) = decode_module(&std::fs::read(f).unwrap()) else { continue };
        let idx = e.add_module(m.clone()).unwrap();
        modules.push((idx, m));
    }
    let mut rep =
        SetReport { non_generic: Tally::default(), direct: Tally::default(), transitive: Tally::default(), natives: 0, wall: Duration::ZERO };
    let start = Instant::now();
    let name_of = |e: &JitEngine, k: &InstanceKey| {
        let m = e.module(k.module).unwrap();
        let f = m.function_defs[k.fdef as usize].function;
        let n = &m.identifiers[m.function_handles[f.idx()].name.idx()];
        let targs: Vec<String> = k.type_args.iter().map(|t| t.to_string()).collect();
        if targs.is_empty() {
            format!("{}::{n}", m.name())
        } else {
            format!("{}::{n}<{}>", m.name(), targs.join(", "))
        }
    };
    // Non-generic functions.
    for (idx, m) in &modules {
        for (i, fd) in m.function_defs.iter().enumerate() {
            let handle = &m.function_handles[fd.function.idx()];
            if fd.code.is_none() {
                rep.natives += 1;
                continue;
            }
            if !handle.type_parameters.is_empty() {
                continue;
            }
            let key = InstanceKey { module: *idx, fdef: i as u16, type_args: Vec::new() };
            let t = Instant::now();
            let r = e.compile(&key);
            rep.non_generic.record(&format!("{set} {}", name_of(&e, &key)), &r, t.elapsed(), problems);
        }
    }
    // Closed instantiations the set's own calls name.
    let mut seen: HashSet<InstanceKey> = HashSet::new();
    let mut work = Vec::new();
    for (idx, m) in &modules {
        for (fi, inst) in m.function_instantiations.iter().enumerate() {
            let closed = m.signatures.get(inst.type_parameters.idx()).is_some_and(|s| !s.0.iter().any(has_type_param));
            if !closed {
                continue;
            }
            let Some(key) = callee_key(&e, *idx, m, fi, &[]) else { continue };
            if seen.insert(key.clone()) {
                let t = Instant::now();
                let r = e.compile(&key);
                rep.direct.record(&format!("{set} {}", name_of(&e, &key)), &r, t.elapsed(), problems);
                work.push(key);
            }
        }
    }
    // Generic instances those reach (type arguments substituted).
    while let Some(k) = work.pop() {
        for c in generic_callees(&e, &k) {
            if seen.len() >= MAX_TRANSITIVE || c.type_args.iter().any(|t| type_depth(t) > MAX_TRANSITIVE_DEPTH) {
                continue;
            }
            if seen.insert(c.clone()) {
                let t = Instant::now();
                let r = e.compile(&c);
                rep.transitive.record(&format!("{set} {}", name_of(&e, &c)), &r, t.elapsed(), problems);
                work.push(c);
            }
        }
    }
    rep.wall = start.elapsed();
    println!("{set}: {} modules, {} natives, all compiles {:.0} ms", modules.len(), rep.natives, rep.wall.as_secs_f64() * 1e3);
    rep.non_generic.print("non-generic functions");
    rep.direct.print("closed instantiations");
    rep.transitive.print("reached from those");
    rep
}

#[test]
fn corpus_functions_and_instantiations_compile_or_are_reported_unsupported() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let mut problems = Vec::new();
    let aptos = || EngineConfig::aptos().natives;
    let sui = || EngineConfig::sui().natives;
    // (set, the sets it depends on, natives, floors: non-generic, closed
    // instantiations, reached from those)
    type Natives = fn() -> movejit_runtime::NativeRegistry;
    let sets: [(&str, &[&str], Natives, [usize; 3]); 10] = [
        ("aptos", &[], aptos, [686, 380, 613]),
        ("aptos-workloads", &["aptos"], aptos, [37, 38, 149]),
        ("aptos-calibration", &["aptos"], aptos, [562, 13, 2]),
        ("sui", &[], sui, [530, 207, 107]),
        // The same programs and stdlib at each bytecode version.
        ("versions/v5", &[], aptos, [76, 9, 4]),
        ("versions/v6", &[], aptos, [79, 9, 4]),
        ("versions/v7", &[], aptos, [79, 9, 4]),
        ("versions/v8", &[], aptos, [79, 9, 4]),
        ("versions/v9", &[], aptos, [81, 9, 4]),
        ("versions/v10", &[], aptos, [81, 9, 4]),
    ];
    let mut low = Vec::new();
    for (set, deps, natives, floors) in sets {
        let r = survey_set(&corpus, set, deps, natives(), &mut problems);
        let got = [r.non_generic.compiled, r.direct.compiled, r.transitive.compiled];
        if got.iter().zip(&floors).any(|(g, f)| g < f) {
            low.push(format!("{set}: compiled {got:?} below the floors {floors:?}"));
        }
    }
    for p in problems.iter().take(30) {
        println!("  PROBLEM {p}");
    }
    assert!(problems.is_empty(), "{} instances failed for reasons other than unsupported features", problems.len());
    assert!(low.is_empty(), "{low:?}");
}
