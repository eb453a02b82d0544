//! Benchmark suites: a `benchmarks.jsonl` manifest (one benchmark per line,
//! the format of `shared/bench/benchmarks.jsonl`) and the module files it
//! names, relative to the suite's folder.
//!
//! A module path ending in `.masm` is Move assembly, assembled when the
//! suite is loaded against the modules listed before it (an extension of
//! the shared format, used by the bundled suite).

use crate::bundled;
use movejit_format::{
    decode_module, serialize_module, version_and_flavour, AccountAddress, CompiledModule, Flavour, StatusFlavour,
};
use movejit_runtime::Type;
use serde::Deserialize;
use std::path::{Component, Path, PathBuf};

/// Why a suite or one of its benchmarks could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{path}:{line}: bad manifest line: {message}")]
    Manifest { path: String, line: usize, message: String },
    #[error("{bench}: {message}")]
    Benchmark { bench: String, message: String },
}

/// One size of a benchmark: arguments, expected returns, reference figures
/// (ns per call, median).
#[derive(Clone, Debug, Deserialize)]
pub struct Case {
    /// BCS hex of each argument.
    pub args: Vec<String>,
    /// Decimal text of each argument (informational).
    #[serde(default)]
    pub arg_values: Vec<String>,
    /// BCS hex of each return value.
    pub expect_returns: Vec<String>,
    #[serde(default)]
    pub aptos_vm_exec_ns_median: Option<f64>,
    #[serde(default)]
    pub sui_vm_ns_median: Option<f64>,
    #[serde(default)]
    pub native_rust_ns_median: Option<f64>,
}

/// One manifest line.
#[derive(Clone, Debug, Deserialize)]
pub struct Benchmark {
    pub name: String,
    /// Module files in publish order (dependencies first).
    pub modules: Vec<String>,
    /// `ADDRESS::module::function`.
    pub function: String,
    #[serde(default)]
    pub type_args: Vec<String>,
    /// The reference size.
    #[serde(flatten)]
    pub case: Case,
    /// The native Rust control of this benchmark, if any (see [`crate::native`]).
    #[serde(default)]
    pub native_rust_kernel: Option<String>,
    /// The same program at other sizes.
    #[serde(default)]
    pub scaling: Vec<Case>,
    #[serde(default)]
    pub what: Option<String>,
    /// The Sui build of the same program (modules in publish order and the
    /// function to call), if the manifest has one.
    #[serde(default)]
    pub sui_modules: Option<Vec<String>>,
    #[serde(default)]
    pub sui_function: Option<String>,
    /// This is the Sui build of a benchmark ([`Benchmark::sui_variant`]):
    /// the Sui VM's figure is its reference, not the Aptos VM's.
    #[serde(skip)]
    pub sui_build: bool,
}

impl Benchmark {
    /// The Sui build of this benchmark as a benchmark of its own (named
    /// `NAME@sui`, same sizes and expected results), if it has one.
    pub fn sui_variant(&self) -> Option<Benchmark> {
        let function = self.sui_function.clone()?;
        let modules = self.sui_modules.clone().filter(|m| !m.is_empty())?;
        Some(Benchmark {
            name: format!("{}@sui", self.name),
            modules,
            function,
            sui_modules: None,
            sui_function: None,
            sui_build: true,
            ..self.clone()
        })
    }

    /// The native Rust control of this benchmark: the manifest's, else a
    /// control of [`crate::native::UNLISTED`].
    pub fn native_control(&self) -> Option<String> {
        self.native_rust_kernel.clone().or_else(|| {
            let unlisted = crate::native::UNLISTED.iter().find(|(b, _)| *b == self.name);
            unlisted.map(|(_, k)| k.to_string())
        })
    }

    /// This benchmark followed by its Sui build, if it has one.
    pub fn with_sui_variant(&self) -> impl Iterator<Item = Benchmark> {
        std::iter::once(self.clone()).chain(self.sui_variant())
    }

    /// The reference figure of `case` on the VM this build is compared with
    /// (the Aptos VM, or the Sui VM for a Sui build), in ns.
    pub fn reference_ns(&self, case: &Case) -> Option<f64> {
        if self.sui_build {
            case.sui_vm_ns_median
        } else {
            case.aptos_vm_exec_ns_median
        }
    }

    /// The reference size followed by the scaling sizes.
    pub fn cases(&self) -> impl Iterator<Item = &Case> {
        std::iter::once(&self.case).chain(&self.scaling)
    }

    /// The size with the smallest Aptos VM figure (the reference size when
    /// none has one): what quick runs use.
    pub fn smallest_case(&self) -> &Case {
        self.cases()
            .filter(|c| c.aptos_vm_exec_ns_median.is_some())
            .min_by(|a, b| {
                a.aptos_vm_exec_ns_median.partial_cmp(&b.aptos_vm_exec_ns_median).unwrap_or(std::cmp::Ordering::Equal)
            })
            .unwrap_or(&self.case)
    }
}

/// Where a suite's files come from.
#[derive(Clone, Debug)]
enum Root {
    Dir(PathBuf),
    Bundled,
}

/// A loaded manifest.
#[derive(Clone, Debug)]
pub struct Suite {
    root: Root,
    pub benchmarks: Vec<Benchmark>,
}

/// A module of a program: decoded, and its bytes (serialized when it was
/// assembled from text).
#[derive(Clone, Debug)]
pub struct ModuleFile {
    pub path: String,
    pub bytes: Vec<u8>,
    pub module: CompiledModule,
}

/// Everything needed to call a benchmark at one size.
#[derive(Clone, Debug)]
pub struct Program {
    /// In publish order.
    pub modules: Vec<ModuleFile>,
    pub address: AccountAddress,
    pub module: String,
    pub function: String,
    pub type_args: Vec<String>,
    /// BCS of each argument.
    pub args: Vec<Vec<u8>>,
    /// BCS of each expected return value.
    pub expect: Vec<Vec<u8>>,
}

impl Program {
    /// The flavour of the program's modules (from the first module's
    /// version word; v5/v6 words carry none: Aptos).
    pub fn flavour(&self) -> StatusFlavour {
        let sui = self
            .modules
            .first()
            .and_then(|m| version_and_flavour(&m.bytes).ok())
            .is_some_and(|(_, f)| f == Flavour::Sui);
        if sui {
            StatusFlavour::Sui
        } else {
            StatusFlavour::Aptos
        }
    }

    /// The program as a differential-testing case named `name`.
    pub fn diff_case(&self, name: &str) -> Result<movejit_diff::Case, String> {
        let type_args = self
            .type_args
            .iter()
            .map(|t| Type::parse_tag(t).ok_or_else(|| format!("bad type argument `{t}`")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(movejit_diff::Case {
            name: name.to_string(),
            flavour: self.flavour(),
            modules: self.modules.iter().map(|m| m.module.clone()).collect(),
            address: self.address,
            module: self.module.clone(),
            function: self.function.clone(),
            type_args,
            args: self.args.clone(),
        })
    }
}

impl Suite {
    /// The suite in folder `dir` (its `benchmarks.jsonl`).
    pub fn load(dir: &Path) -> Result<Suite, LoadError> {
        let path = dir.join("benchmarks.jsonl");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| LoadError::File { path: path.display().to_string(), message: e.to_string() })?;
        Suite::parse(Root::Dir(dir.to_path_buf()), &path.display().to_string(), &text)
    }

    /// The example suite compiled into the binary.
    pub fn bundled() -> Result<Suite, LoadError> {
        let text = bundled::file("benchmarks.jsonl").unwrap_or_default();
        Suite::parse(Root::Bundled, "<bundled>/benchmarks.jsonl", text)
    }

    fn parse(root: Root, path: &str, text: &str) -> Result<Suite, LoadError> {
        let mut benchmarks = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let b: Benchmark = serde_json::from_str(line).map_err(|e| LoadError::Manifest {
                path: path.to_string(),
                line: i + 1,
                message: e.to_string(),
            })?;
            benchmarks.push(b);
        }
        Ok(Suite { root, benchmarks })
    }

    /// A name for reports: the folder, or `bundled`.
    pub fn label(&self) -> String {
        match &self.root {
            Root::Dir(d) => d.display().to_string(),
            Root::Bundled => "bundled".to_string(),
        }
    }

    fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        let p = Path::new(rel);
        if p.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
            return Err("module paths must be relative to the suite folder, without `..`".to_string());
        }
        match &self.root {
            Root::Dir(d) => std::fs::read(d.join(p)).map_err(|e| e.to_string()),
            Root::Bundled => {
                bundled::file(rel).map(|s| s.as_bytes().to_vec()).ok_or_else(|| "no such bundled file".to_string())
            }
        }
    }

    /// Loads the modules of `bench` and decodes the arguments and expected
    /// returns of `case` (one of its sizes).
    pub fn program(&self, bench: &Benchmark, case: &Case) -> Result<Program, LoadError> {
        let fail = |message: String| LoadError::Benchmark { bench: bench.name.clone(), message };
        let mut modules: Vec<ModuleFile> = Vec::with_capacity(bench.modules.len());
        for rel in &bench.modules {
            let raw = self.read(rel).map_err(|e| fail(format!("{rel}: {e}")))?;
            let file = if rel.ends_with(".masm") {
                let text = String::from_utf8(raw).map_err(|_| fail(format!("{rel}: not UTF-8")))?;
                let deps: Vec<CompiledModule> = modules.iter().map(|m| m.module.clone()).collect();
                let options = movejit_masm::AsmOptions { default_version: None, deps: &deps };
                let module = match movejit_masm::assemble_with(&text, options) {
                    Ok(movejit_masm::Assembled::Module(m)) => m,
                    Ok(movejit_masm::Assembled::Script(_)) => {
                        return Err(fail(format!("{rel}: a script, not a module")))
                    }
                    Err(e) => return Err(fail(format!("{rel}: {e}"))),
                };
                ModuleFile { path: rel.clone(), bytes: serialize_module(&module), module }
            } else {
                let module = decode_module(&raw).map_err(|e| fail(format!("{rel}: {e}")))?;
                ModuleFile { path: rel.clone(), bytes: raw, module }
            };
            modules.push(file);
        }
        let mut parts = bench.function.rsplitn(3, "::");
        let (function, module, address) = match (parts.next(), parts.next(), parts.next()) {
            (Some(f), Some(m), Some(a)) => (f, m, a),
            _ => return Err(fail(format!("function `{}` is not ADDRESS::module::function", bench.function))),
        };
        let address =
            AccountAddress::parse(address).ok_or_else(|| fail(format!("bad address in `{}`", bench.function)))?;
        let hex_list = |what: &str, list: &[String]| -> Result<Vec<Vec<u8>>, LoadError> {
            list.iter().map(|h| hex::decode(h).map_err(|e| fail(format!("{what} `{h}`: {e}")))).collect()
        };
        Ok(Program {
            modules,
            address,
            module: module.to_string(),
            function: function.to_string(),
            type_args: bench.type_args.clone(),
            args: hex_list("argument", &case.args)?,
            expect: hex_list("expected return", &case.expect_returns)?,
        })
    }
}
