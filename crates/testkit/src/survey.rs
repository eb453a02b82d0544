//! The corpus survey shared by the JIT's own survey
//! (`crates/jit/tests/corpus_survey.rs`) and the engine's
//! (`crates/engine/tests/corpus_engine.rs`): loading a
//! corpus set, the function instances to compile (non-generic functions,
//! the closed generic instantiations the set's own calls name, and the
//! generic instances those reach), tallies with a histogram of reasons.

use movejit_format::{decode_module, AccountAddress, Bytecode, CompiledModule, SignatureToken};
use movejit_runtime::resolve;
use movejit_runtime::Type;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `/work/shared/corpus` seen from a crate of the workspace.
pub fn corpus_dir() -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !p.join("Cargo.lock").exists() || !p.join("crates").exists() {
        if !p.pop() {
            break;
        }
    }
    p.join("../shared/corpus")
}

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

/// The sets surveyed: (set, the sets it depends on, Sui flavour).
pub const SETS: [(&str, &[&str], bool); 10] = [
    ("aptos", &[], false),
    ("aptos-workloads", &["aptos"], false),
    ("aptos-calibration", &["aptos"], false),
    ("sui", &[], true),
    // The same programs and stdlib at each bytecode version.
    ("versions/v5", &[], false),
    ("versions/v6", &[], false),
    ("versions/v7", &[], false),
    ("versions/v8", &[], false),
    ("versions/v9", &[], false),
    ("versions/v10", &[], false),
];

/// One function instance: module number (in [`Corpus::modules`]),
/// definition index, type arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    pub module: usize,
    pub fdef: u16,
    pub type_args: Vec<Type>,
}

/// A set's modules after those of its dependencies (a later module with the
/// same name shadows an earlier one).
pub struct Corpus {
    pub modules: Vec<CompiledModule>,
    by_name: HashMap<(AccountAddress, String), usize>,
    /// Where the set's own modules start.
    pub own_from: usize,
}

impl Corpus {
    pub fn load(set: &str, deps: &[&str]) -> Corpus {
        let dir = corpus_dir();
        let mut c = Corpus { modules: Vec::new(), by_name: HashMap::new(), own_from: 0 };
        for (i, s) in deps.iter().chain([&set]).enumerate() {
            if i == deps.len() {
                c.own_from = c.modules.len();
            }
            let mut files = Vec::new();
            mv_files(&dir.join(s), &mut files);
            for f in &files {
                let Ok(m) = decode_module(&std::fs::read(f).unwrap_or_default()) else { continue };
                c.by_name.insert((*m.address(), m.name().to_string()), c.modules.len());
                c.modules.push(m);
            }
        }
        c
    }

    pub fn own(&self) -> impl Iterator<Item = (usize, &CompiledModule)> {
        self.modules.iter().enumerate().skip(self.own_from)
    }

    pub fn natives(&self) -> usize {
        self.own().map(|(_, m)| m.function_defs.iter().filter(|d| d.code.is_none()).count()).sum()
    }

    /// `module::function<type args>`.
    pub fn name(&self, it: &Item) -> String {
        let m = &self.modules[it.module];
        let n = m
            .function_defs
            .get(it.fdef as usize)
            .and_then(|d| m.function_handles.get(d.function.idx()))
            .and_then(|h| m.identifiers.get(h.name.idx()))
            .cloned()
            .unwrap_or_default();
        if it.type_args.is_empty() {
            format!("{}::{n}", m.name())
        } else {
            let targs: Vec<String> = it.type_args.iter().map(|t| t.to_string()).collect();
            format!("{}::{n}<{}>", m.name(), targs.join(", "))
        }
    }

    /// Every non-generic function with code of the set's own modules.
    pub fn non_generic(&self) -> Vec<Item> {
        let mut out = Vec::new();
        for (mi, m) in self.own() {
            for (i, d) in m.function_defs.iter().enumerate() {
                let generic = m.function_handles.get(d.function.idx()).is_none_or(|h| !h.type_parameters.is_empty());
                if d.code.is_some() && !generic {
                    out.push(Item { module: mi, fdef: i as u16, type_args: Vec::new() });
                }
            }
        }
        out
    }

    /// The instance a `FunctionInstantiation` of module `mi` names, its type
    /// arguments instantiated by `outer`; `None` for natives and anything
    /// unresolvable (the compiler reports those at the call site).
    fn callee(&self, mi: usize, fi: usize, outer: &[Type]) -> Option<Item> {
        let m = &self.modules[mi];
        let inst = m.function_instantiations.get(fi)?;
        let toks = &m.signatures.get(inst.type_parameters.idx())?.0;
        let type_args: Vec<Type> = toks
            .iter()
            .map(|t| resolve::token_type(t, outer, &|h| resolve::datatype_id(m, h)))
            .collect::<Result<_, _>>()
            .ok()?;
        let fh = m.function_handles.get(inst.handle.idx())?;
        let target = if fh.module == m.self_module_handle_idx {
            mi
        } else {
            let mh = m.module_handles.get(fh.module.idx())?;
            let key = (*m.address_identifiers.get(mh.address.idx())?, m.identifiers.get(mh.name.idx())?.clone());
            *self.by_name.get(&key)?
        };
        let name = m.identifiers.get(fh.name.idx())?;
        let tm = &self.modules[target];
        let fdef = tm.function_defs.iter().position(|d| {
            tm.function_handles.get(d.function.idx()).and_then(|h| tm.identifiers.get(h.name.idx())) == Some(name)
        })?;
        tm.function_defs[fdef].code.as_ref()?;
        Some(Item { module: target, fdef: u16::try_from(fdef).ok()?, type_args })
    }

    /// The closed instantiations (no type parameter in the type arguments)
    /// the set's own calls name, each once.
    pub fn closed_instantiations(&self) -> Vec<Item> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (mi, m) in self.own() {
            for (fi, inst) in m.function_instantiations.iter().enumerate() {
                let closed =
                    m.signatures.get(inst.type_parameters.idx()).is_some_and(|s| !s.0.iter().any(has_type_param));
                if let Some(it) = closed.then(|| self.callee(mi, fi, &[])).flatten() {
                    if seen.insert(it.clone()) {
                        out.push(it);
                    }
                }
            }
        }
        out
    }

    /// The generic instances `it`'s code calls with type arguments that
    /// depend on its own.
    pub fn generic_callees(&self, it: &Item) -> Vec<Item> {
        let m = &self.modules[it.module];
        let Some(code) = m.function_defs.get(it.fdef as usize).and_then(|d| d.code.as_ref()) else { return Vec::new() };
        let mut out = Vec::new();
        for ins in &code.code {
            if let Bytecode::CallGeneric(fi) = ins {
                let open = m
                    .function_instantiations
                    .get(fi.idx())
                    .and_then(|i| m.signatures.get(i.type_parameters.idx()))
                    .is_some_and(|s| s.0.iter().any(has_type_param));
                if open {
                    out.extend(self.callee(it.module, fi.idx(), &it.type_args));
                }
            }
        }
        out
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

/// Why an instance did not compile.
pub enum Failure {
    /// A feature the JIT does not compile yet (its message).
    Unsupported(String),
    /// Anything else: real code called malformed, a code-generator error...
    Problem(String),
}

/// A short, stable name for why an instance does not compile.
pub fn reason(msg: &str) -> String {
    let head = |s: &str| s.split(['(', '{', ':']).next().unwrap_or("").trim().to_string();
    if let Some(rest) = msg.strip_prefix("native function ") {
        // "native function table::add_box": grouped by native module.
        return format!("native {}", rest.split("::").next().unwrap_or(rest));
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
pub struct Tally {
    pub compiled: usize,
    pub total: usize,
    pub time: Duration,
    /// reason → (count, an example: instance and full message)
    pub reasons: BTreeMap<String, (usize, String)>,
    /// The slowest call and its instance.
    pub slowest: (Duration, String),
    /// Time of each successful call (it includes callees compiled with it).
    pub ok_times: Vec<Duration>,
}

impl Tally {
    fn record(&mut self, what: &str, r: Result<(), Failure>, dt: Duration, problems: &mut Vec<String>) {
        self.total += 1;
        self.time += dt;
        if dt > self.slowest.0 {
            self.slowest = (dt, what.to_string());
        }
        match r {
            Ok(()) => {
                self.compiled += 1;
                self.ok_times.push(dt);
            }
            Err(Failure::Unsupported(m)) => {
                self.reasons.entry(reason(&m)).or_insert_with(|| (0, format!("{what}: {m}"))).0 += 1;
            }
            Err(Failure::Problem(m)) => problems.push(format!("{what}: {m}")),
        }
    }

    fn print(&self, title: &str) {
        let mut t = self.ok_times.clone();
        t.sort_unstable();
        // Nearest rank.
        let q = |p: f64| {
            t.get(((p * t.len() as f64).ceil() as usize).saturating_sub(1)).map_or(0.0, |d| d.as_secs_f64() * 1e3)
        };
        println!(
            "  {title:<28} {:>5} / {:<5} compiled ({:.1}%), {:.0} ms (slowest {:.0} ms: {})",
            self.compiled,
            self.total,
            100.0 * self.compiled as f64 / self.total.max(1) as f64,
            self.time.as_secs_f64() * 1e3,
            self.slowest.0.as_secs_f64() * 1e3,
            truncate(&self.slowest.1, 70)
        );
        println!(
            "      per compiled instance (incl. callees compiled with it): p50 {:.2} ms, p99 {:.2} ms",
            q(0.5),
            q(0.99)
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

/// A set's survey: non-generic functions, closed instantiations, and the
/// instances reached from those.
pub struct SetReport {
    pub non_generic: Tally,
    pub direct: Tally,
    pub transitive: Tally,
}

impl SetReport {
    pub fn compiled(&self) -> [usize; 3] {
        [self.non_generic.compiled, self.direct.compiled, self.transitive.compiled]
    }
}

/// Compiles every instance of the set with `compile` (timing each call)
/// and prints the tallies; failures that are not `Unsupported` go to
/// `problems`.
pub fn survey(
    set: &str,
    c: &Corpus,
    mut compile: impl FnMut(&Item) -> Result<(), Failure>,
    problems: &mut Vec<String>,
) -> SetReport {
    let mut rep = SetReport { non_generic: Tally::default(), direct: Tally::default(), transitive: Tally::default() };
    let start = Instant::now();
    let mut run = |it: &Item, t: &mut Tally, problems: &mut Vec<String>| {
        let at = Instant::now();
        let r = compile(it);
        t.record(&format!("{set} {}", c.name(it)), r, at.elapsed(), problems);
    };
    for it in c.non_generic() {
        run(&it, &mut rep.non_generic, problems);
    }
    let direct = c.closed_instantiations();
    let mut seen: HashSet<Item> = direct.iter().cloned().collect();
    for it in &direct {
        run(it, &mut rep.direct, problems);
    }
    let mut work = direct;
    while let Some(it) = work.pop() {
        for callee in c.generic_callees(&it) {
            if seen.len() >= MAX_TRANSITIVE || callee.type_args.iter().any(|t| type_depth(t) > MAX_TRANSITIVE_DEPTH) {
                continue;
            }
            if seen.insert(callee.clone()) {
                run(&callee, &mut rep.transitive, problems);
                work.push(callee);
            }
        }
    }
    println!(
        "{set}: {} modules, {} natives, all compiles {:.0} ms",
        c.modules.len() - c.own_from,
        c.natives(),
        start.elapsed().as_secs_f64() * 1e3
    );
    rep.non_generic.print("non-generic functions");
    rep.direct.print("closed instantiations");
    rep.transitive.print("reached from those");
    rep
}
