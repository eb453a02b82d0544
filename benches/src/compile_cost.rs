//! Compile cost: JIT-compile every non-generic function of a corpus of
//! modules (e.g. the Aptos framework) in one engine and time each
//! `compile` call. A call compiles the function and whatever it calls that
//! is not compiled yet, so the per-call times add up to the whole corpus.
//!
//! Functions the JIT cannot compile are counted by error kind; generic and
//! native functions are counted apart (nothing to compile without an
//! instantiation / no bytecode).

use movejit_format::{decode_module, CompiledModule};
use movejit_jit::{CompileError, JitConfig, JitEngine};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One timed `compile` call.
#[derive(Clone, Debug)]
pub struct FunctionCompile {
    /// `module::function`.
    pub name: String,
    pub ns: u64,
    /// Machine code bytes the call defined (the function, its entry
    /// trampoline and whatever it compiled with it).
    pub code_bytes: u64,
    /// Bytecode instructions of the functions the call compiled.
    pub instructions: u64,
    /// `Err(kind)`: why it (or a function it calls) was not compiled.
    pub result: Result<(), String>,
}

/// The compile cost of a corpus.
#[derive(Clone, Debug, Default)]
pub struct CorpusCompile {
    /// Modules decoded and verified (the ones compiled from).
    pub modules: usize,
    /// Module files left out, with the reason (decode or verify failure).
    pub rejected_modules: Vec<(String, String)>,
    pub functions: Vec<FunctionCompile>,
    pub generic: usize,
    pub native: usize,
}

impl CorpusCompile {
    pub fn compiled(&self) -> impl Iterator<Item = &FunctionCompile> {
        self.functions.iter().filter(|f| f.result.is_ok())
    }

    /// Machine code bytes defined by all `compile` calls.
    pub fn code_bytes(&self) -> u64 {
        self.functions.iter().map(|f| f.code_bytes).sum()
    }

    /// Bytecode instructions compiled by all `compile` calls.
    pub fn instructions(&self) -> u64 {
        self.functions.iter().map(|f| f.instructions).sum()
    }

    /// Total time of all `compile` calls, successful or not.
    pub fn total_ns(&self) -> u64 {
        self.functions.iter().map(|f| f.ns).sum()
    }

    /// Failed functions per error kind, most frequent first.
    pub fn failures_by_kind(&self) -> Vec<(String, usize)> {
        let mut m: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &self.functions {
            if let Err(k) = &f.result {
                *m.entry(k.as_str()).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = m.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// The `q`-quantile (0..=1, nearest rank) of `samples`.
pub fn quantile(samples: &[u64], q: f64) -> Option<u64> {
    let mut s = samples.to_vec();
    s.sort_unstable();
    let n = s.len();
    if n == 0 {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
    s.get(rank.saturating_sub(1).min(n - 1)).copied()
}

/// A short, stable name for a compile error (message details such as types
/// and counts cut off), to group failures.
pub fn error_kind(e: &CompileError) -> String {
    match e {
        CompileError::Unsupported(m) => {
            let m = m.split(['(', '{']).next().unwrap_or("").trim();
            if m.starts_with("function of ") {
                "unsupported: function over the instruction limit".to_string()
            } else {
                format!("unsupported: {m}")
            }
        }
        CompileError::Malformed(_) => "malformed".to_string(),
        CompileError::UnknownFunction(_) => "unknown function".to_string(),
        CompileError::Codegen(_) => "codegen".to_string(),
    }
}

/// Every `.mv` file under `dir`, sorted.
pub fn module_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut work = vec![dir.to_path_buf()];
    while let Some(d) = work.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                work.push(p);
            } else if p.extension().is_some_and(|x| x == "mv") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Decodes and verifies (Aptos rules, the corpus as dependencies) the
/// modules of `files`; the ones that fail are returned with the reason.
pub fn load_verified(files: &[PathBuf]) -> (Vec<CompiledModule>, Vec<(String, String)>) {
    let mut decoded = Vec::new();
    let mut rejected = Vec::new();
    for f in files {
        match std::fs::read(f).map_err(|e| e.to_string()).and_then(|b| decode_module(&b).map_err(|e| e.to_string())) {
            Ok(m) => decoded.push((f.display().to_string(), m)),
            Err(e) => rejected.push((f.display().to_string(), format!("decode: {e}"))),
        }
    }
    let all: Vec<&CompiledModule> = decoded.iter().map(|(_, m)| m).collect();
    let config = movejit_verifier::VerifierConfig::aptos();
    let mut ok_idx = Vec::new();
    for (i, (path, m)) in decoded.iter().enumerate() {
        match movejit_verifier::verify_module(m, &all, &config) {
            Ok(()) => ok_idx.push(i),
            Err(e) => rejected.push((path.clone(), format!("verify: {}", e.status.name()))),
        }
    }
    drop(all);
    let mut modules = Vec::new();
    for (i, (_, m)) in decoded.into_iter().enumerate() {
        if ok_idx.contains(&i) {
            modules.push(m);
        }
    }
    (modules, rejected)
}

/// How the corpus is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileMode {
    /// A standalone engine (no interpreter session): global storage and
    /// natives other than the stateless stdlib ones are refused.
    Standalone,
    /// What an engine session compiles: global storage and every Aptos
    /// native (the `movejit-aptos-natives` registry), unmetered code.
    Session,
    /// The same with gas metering compiled in (the default cost table).
    SessionMetered,
}

impl CompileMode {
    pub const ALL: [CompileMode; 3] = [CompileMode::Standalone, CompileMode::Session, CompileMode::SessionMetered];

    pub fn name(self) -> &'static str {
        match self {
            CompileMode::Standalone => "standalone",
            CompileMode::Session => "session, unmetered",
            CompileMode::SessionMetered => "session, metered",
        }
    }

    pub fn config(self) -> JitConfig {
        let session =
            JitConfig { natives: movejit_aptos_natives::aptos_registry(), session_host: true, ..JitConfig::default() };
        match self {
            CompileMode::Standalone => JitConfig::default(),
            CompileMode::Session => session,
            CompileMode::SessionMetered => JitConfig { cost: Some(movejit_runtime::CostTable::default()), ..session },
        }
    }
}

/// Compiles every non-generic, non-native function of `modules` in one
/// engine configured by `mode`, timing each call.
pub fn compile_all(modules: Vec<CompiledModule>, mode: CompileMode) -> Result<CorpusCompile, CompileError> {
    compile_all_with(modules, mode.config())
}

/// [`compile_all`] with an engine of `config`.
pub fn compile_all_with(modules: Vec<CompiledModule>, config: JitConfig) -> Result<CorpusCompile, CompileError> {
    let mut report = CorpusCompile { modules: modules.len(), ..CorpusCompile::default() };
    let mut engine = JitEngine::new(config)?;
    let mut targets = Vec::new();
    for m in modules {
        let mut fns = Vec::new();
        for def in &m.function_defs {
            let Some(h) = m.function_handles.get(def.function.idx()) else { continue };
            let name = m.identifiers.get(h.name.idx()).cloned().unwrap_or_default();
            if def.code.is_none() {
                report.native += 1;
            } else if !h.type_parameters.is_empty() {
                report.generic += 1;
            } else {
                fns.push(name);
            }
        }
        let module_name = m.name().to_string();
        let idx = engine.add_module(m)?;
        targets.extend(fns.into_iter().map(|f| (idx, module_name.clone(), f)));
    }
    for (idx, module_name, f) in targets {
        let (before, instrs_before) = (engine.code_size(), engine.code_instructions());
        let t = Instant::now();
        let result = engine.instance_key(idx, &f, &[]).and_then(|k| engine.compile(&k));
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        report.functions.push(FunctionCompile {
            name: format!("{module_name}::{f}"),
            ns,
            code_bytes: engine.code_size() - before,
            instructions: engine.code_instructions() - instrs_before,
            result: result.map_err(|e| error_kind(&e)),
        });
    }
    Ok(report)
}

/// [`load_verified`] + [`compile_all`] over every module under `dir`.
pub fn compile_corpus(dir: &Path) -> Result<CorpusCompile, String> {
    let files = module_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (modules, rejected) = load_verified(&files);
    let mut report = compile_all(modules, CompileMode::Standalone).map_err(|e| e.to_string())?;
    report.rejected_modules = rejected;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let s: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&s, 0.5), Some(50));
        assert_eq!(quantile(&s, 0.99), Some(99));
        assert_eq!(quantile(&s, 1.0), Some(100));
        assert_eq!(quantile(&s, 0.0), Some(1));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn error_kinds_drop_details() {
        let table = [
            (
                CompileError::Unsupported("local of type Struct(StructHandleIndex(3))".into()),
                "unsupported: local of type Struct",
            ),
            (CompileError::Unsupported("instruction VecLen".into()), "unsupported: instruction VecLen"),
            (
                CompileError::Unsupported("function of 70000 instructions (limit 65536)".into()),
                "unsupported: function over the instruction limit",
            ),
            (CompileError::Codegen("x".into()), "codegen"),
        ];
        for (e, want) in table {
            assert_eq!(error_kind(&e), want);
        }
    }
}

/// A module `0xcafe::long` whose function `f(): u64` is `ld_u64 0`, then
/// `pairs` × (`ld_u64 1; add`), then `ret` (issue 16's compile-cost
/// reproducer: `2 * pairs + 2` straight-line instructions, one overflow
/// check per `add`).
pub fn straight_line_module(pairs: usize) -> CompiledModule {
    let mut src = String::from("module 0xcafe::long\npublic fun f(): u64\n    ld_u64 0\n");
    for _ in 0..pairs {
        src.push_str("    ld_u64 1\n    add\n");
    }
    src.push_str("    ret\n");
    match movejit_masm::assemble(&src) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        Ok(_) => panic!("expected a module"),
        Err(e) => panic!("assemble: {e}"),
    }
}

/// One compile of a generated function.
#[derive(Clone, Debug)]
pub struct LongCompile {
    pub instructions: usize,
    pub ns: u64,
    pub code_bytes: u64,
    pub result: Result<(), String>,
}

/// Compiles `straight_line_module(pairs)`'s function in a fresh engine of
/// `config`.
pub fn compile_straight_line(pairs: usize, config: JitConfig) -> Result<LongCompile, CompileError> {
    let m = straight_line_module(pairs);
    let instructions = m.function_defs[0].code.as_ref().map_or(0, |c| c.code.len());
    let mut engine = JitEngine::new(config)?;
    let module = engine.add_module(m)?;
    let key = engine.instance_key(module, "f", &[])?;
    let before = engine.code_size();
    let t = Instant::now();
    let result = engine.compile(&key).map_err(|e| e.to_string());
    let ns = t.elapsed().as_nanos() as u64;
    Ok(LongCompile { instructions, ns, code_bytes: engine.code_size() - before, result })
}
