//! Transaction streams: what a node sees. A stream is a sequence of short
//! transactions, each a session of its own over one storage, each
//! successful one's change set applied before the next, one engine
//! (module cache, code cache) serving them all. Its first transaction meets
//! a cold engine: loading and verifying modules (and, on the JIT, compiling)
//! are part of the stream.
//!
//! A suite folder may hold `streams.jsonl`, one stream per line:
//!
//! ```json
//! {"name": "clob_orders", "what": "...", "sender": "0xb0",
//!  "modules": ["shared:bench/modules/framework/MoveStdlib/vector.mv", "..."],
//!  "genesis": [{"function": "0xb0::clob_bench::seed_and_index", "args": ["signer:0xb0", "u64:256", "u64:42"]}],
//!  "transaction": {"function": "0xb0::clob_market::place_market_order",
//!                  "args": ["signer:0xb0", "u64:0", "bool:i%2", "u64:3"]},
//!  "transactions": 1000,
//!  "checks": [{"function": "...", "args": ["..."], "returns": ["<bcs hex>"]}]}
//! ```
//!
//! - `modules`: published into storage before anything runs, in order; a
//!   path is relative to the suite folder, or to the shared reference folder
//!   with `shared:`; a folder stands for every `.mv` file below it.
//!   `packages`: the same, published after them; their `init_module` runs.
//! - `genesis`, then the packages' `init_module`, then `setup`: untimed
//!   transactions on an engine of their own (`repeat: N` runs one N times,
//!   `i` counting).
//! - `transaction`: the template of every timed transaction; an argument is
//!   `TYPE:EXPR` with `i` the transaction's number (from 0):
//!   `u8|u16|u32|u64|u128:EXPR`, `bool:EXPR` (non-zero is true),
//!   `address:0xHEX[+EXPR]`, `signer:0xHEX[+EXPR]`,
//!   `vector<u8>|vector<u64>:EXPR,EXPR,...`, `bcs:HEX` (fixed bytes); EXPR
//!   has `+ - * / %`, parentheses, decimal numbers and `i`.
//! - `expect` (on any transaction): `executed` (default), `aborted` or `any`.
//! - `checks`: read-only calls after the stream; their BCS returns must be
//!   as given (`returns`), and join the final state: the stream is
//!   `correct` when every transaction ended as expected and every check
//!   holds, and executors must reach the same state (resources and checks).
//! - `"flavour": "sui"` runs the stream on a Sui host
//!   ([`movejit_sui_host::SuiHost`]; default `aptos`): objects are inputs,
//!   named by the transaction that made them (`"save": "NAME"` keeps a
//!   call's first return value as the object NAME), passed as `object:NAME`
//!   (written back when the parameter is `&mut`); `ctx` is the
//!   transaction's `&mut TxContext`; the state executors must agree on is
//!   the objects and the dynamic-field children. Sui has no `init_module`:
//!   `packages` is Aptos only.

use crate::executor::Executor;
use movejit_aptos_host::Host;
use movejit_engine::{
    new_engine_with_cache, Engine, EngineConfig, FunctionRef, GasMeter, InMemoryStorage, ModuleId, StatusCode, Type,
    VmError,
};
use movejit_format::{decode_module, AccountAddress, CompiledModule};
use movejit_sui_host::{Input, SuiHost};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One line of `streams.jsonl`.
#[derive(Clone, Debug, Deserialize)]
pub struct StreamSpec {
    pub name: String,
    #[serde(default)]
    pub what: String,
    #[serde(default)]
    pub flavour: Flavour,
    /// The account that sends every transaction.
    pub sender: String,
    pub modules: Vec<String>,
    /// Modules published after `modules` whose `init_module` runs at
    /// genesis, after the `genesis` transactions.
    #[serde(default)]
    pub packages: Vec<String>,
    #[serde(default)]
    pub genesis: Vec<TxSpec>,
    /// Transactions after the packages' `init_module` (not timed either).
    #[serde(default)]
    pub setup: Vec<TxSpec>,
    pub transaction: TxSpec,
    pub transactions: u64,
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
}

/// A call: `ADDRESS::module::function`, its type arguments and templated
/// arguments (the fields of transactions and checks alike).
#[derive(Clone, Debug, Deserialize)]
pub struct CallSpec {
    pub function: String,
    #[serde(default)]
    pub type_args: Vec<String>,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TxSpec {
    #[serde(flatten)]
    pub call: CallSpec,
    #[serde(default)]
    pub expect: Expect,
    /// Genesis and setup only: run this many times (`i` counts them).
    #[serde(default = "once")]
    pub repeat: u64,
    /// Sui: keep the first return value as the object of this name.
    #[serde(default)]
    pub save: Option<String>,
}

fn once() -> u64 {
    1
}

/// Which chain's host runs a stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    #[default]
    Aptos,
    Sui,
}

/// How a transaction must end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    #[default]
    Executed,
    Aborted,
    Any,
}

#[derive(Clone, Debug, Deserialize)]
pub struct CheckSpec {
    #[serde(flatten)]
    pub call: CallSpec,
    /// BCS hex of each return value; without it, the returns only join
    /// the state the executors must agree on.
    #[serde(default)]
    pub returns: Option<Vec<String>>,
}

/// A stream ready to run: modules decoded, templates parsed.
pub struct Stream {
    pub spec: StreamSpec,
    sender: AccountAddress,
    modules: Vec<(CompiledModule, Vec<u8>)>,
    /// How many of `modules` are packages (at its end).
    packages: usize,
    genesis: Vec<Tx>,
    setup: Vec<Tx>,
    transaction: Tx,
    checks: Vec<Check>,
}

/// A call, parsed.
struct Call {
    function: FunctionRef,
    type_args: Vec<Type>,
    args: Vec<Arg>,
}

impl Call {
    fn parse(spec: &CallSpec) -> Result<Call, String> {
        Ok(Call {
            function: function(&spec.function)?,
            type_args: parse_types(&spec.type_args)?,
            args: parse_args(&spec.args)?,
        })
    }
}

/// A read-only call after the stream and the BCS returns it must give.
struct Check {
    call: Call,
    returns: Option<Vec<Vec<u8>>>,
}

struct Tx {
    call: Call,
    expect: Expect,
    repeat: u64,
    save: Option<String>,
}

/// The chain a stream runs on.
enum Chain {
    Aptos(Host),
    Sui {
        host: SuiHost,
        /// Objects by the name a transaction saved them under.
        names: BTreeMap<String, AccountAddress>,
    },
}

impl Chain {
    fn with_engine(self, engine: Engine) -> Chain {
        match self {
            Chain::Aptos(h) => Chain::Aptos(h.with_engine(engine)),
            Chain::Sui { host, names } => Chain::Sui { host: host.with_engine(engine), names },
        }
    }

    /// Makes `call` for transaction `i`: as a transaction, or read-only
    /// (`view`).
    fn call(&mut self, call: &Call, i: u64, view: bool) -> Result<Result<Vec<Vec<u8>>, VmError>, String> {
        let (f, ty_args, args) = (&call.function, &call.type_args[..], &call.args[..]);
        Ok(match self {
            Chain::Aptos(host) => {
                let args = args.iter().map(|a| a.bcs(i)).collect::<Result<Vec<_>, _>>()?;
                if view {
                    host.view(f, ty_args, &args)
                } else {
                    host.execute(f, ty_args, &args, &mut GasMeter::unmetered())
                }
            }
            Chain::Sui { host, names } => {
                let inputs = args
                    .iter()
                    .map(|a| match a {
                        Arg::Object(n) => {
                            names.get(n).map(|id| Input::Object(*id)).ok_or_else(|| format!("no object `{n}` saved"))
                        }
                        Arg::TxContext => Ok(Input::TxContext),
                        a => a.bcs(i).map(Input::Pure),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if view {
                    host.view(f, ty_args, &inputs)
                } else {
                    host.execute(f, ty_args, &inputs, &mut GasMeter::unmetered())
                }
            }
        })
    }

    /// Keeps `returns[0]` as the object `name` (Sui only).
    fn save(&mut self, name: &str, returns: Vec<Vec<u8>>) -> Result<(), String> {
        let Chain::Sui { host, names } = self else { return Err("`save` is Sui only".to_string()) };
        let first = returns.into_iter().next().ok_or("`save`: the call returned nothing")?;
        let id = host.keep_object(first).map_err(|e| describe(&e))?;
        names.insert(name.to_string(), id);
        Ok(())
    }

    /// FxHash of the chain's state and of the checks' returns: every
    /// resource (Aptos), or every object and dynamic-field child (Sui).
    fn digest(&mut self, checks: &[Vec<Vec<u8>>]) -> Result<u64, String> {
        use std::hash::{Hash, Hasher};
        let mut h = movejit_runtime::fxhash::FxHasher::default();
        checks.hash(&mut h);
        match self {
            Chain::Aptos(host) => {
                for ((address, ty), bytes) in &host.storage().resources {
                    address.0.hash(&mut h);
                    ty.to_string().hash(&mut h);
                    bytes.hash(&mut h);
                }
            }
            Chain::Sui { host, .. } => {
                host.objects().iter().for_each(|(id, bytes)| (id.0, bytes).hash(&mut h));
                let children = host.children().ok_or("a dynamic-field child is still parked")?;
                children.iter().for_each(|(id, parent, v)| (id.0, parent.0, v).hash(&mut h));
            }
        }
        Ok(h.finish())
    }
}

/// What one stream did on one executor.
#[derive(Clone, Debug)]
pub struct StreamRun {
    pub executor: Executor,
    pub correct: bool,
    /// Why it is not correct (the first problem).
    pub failure: Option<String>,
    /// Nanoseconds of each timed transaction, in order.
    pub tx_ns: Vec<u64>,
    pub compile_ns: Option<u64>,
    /// A digest of the resources in storage after the stream (executors
    /// must agree on it).
    pub state_digest: u64,
}

impl StreamRun {
    pub fn tx_per_s(&self) -> f64 {
        let total: u64 = self.tx_ns.iter().sum();
        self.tx_ns.len() as f64 / (total.max(1) as f64 / 1e9)
    }
    /// The `q`-quantile of the transaction times (0.5: the median).
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        crate::compile_cost::quantile(&self.tx_ns, q)
    }
    /// The `q`-quantile of the last quarter of the transactions: the
    /// steady state, once `auto`'s background compiles had time to finish
    /// (if the stream is long enough for them).
    pub fn warm_quantile_ns(&self, q: f64) -> Option<u64> {
        let from = self.tx_ns.len() - self.tx_ns.len().div_ceil(4);
        crate::compile_cost::quantile(&self.tx_ns[from..], q)
    }
}

/// The streams of suite folder `dir` (empty when it has no `streams.jsonl`).
pub fn load_streams(dir: &Path) -> Result<Vec<Stream>, String> {
    let path = dir.join("streams.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let spec: StreamSpec =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: bad stream: {e}", path.display(), i + 1))?;
        let name = spec.name.clone();
        out.push(Stream::new(dir, spec).map_err(|e| format!("{name}: {e}"))?);
    }
    Ok(out)
}

impl Stream {
    fn new(dir: &Path, spec: StreamSpec) -> Result<Stream, String> {
        let sender = AccountAddress::parse(&spec.sender).ok_or_else(|| format!("bad sender `{}`", spec.sender))?;
        let mut modules = Vec::new();
        for rel in spec.modules.iter().chain(&spec.packages) {
            for file in module_files(&resolve(dir, rel)?)? {
                let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                let m = decode_module(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
                modules.push((m, bytes));
            }
        }
        let mut packages = 0;
        for rel in &spec.packages {
            packages += module_files(&resolve(dir, rel)?)?.len();
        }
        let checks = spec
            .checks
            .iter()
            .map(|c| {
                let returns = c.returns.as_ref().map(|r| {
                    r.iter().map(|h| hex::decode(h).map_err(|e| format!("`{h}`: {e}"))).collect::<Result<_, String>>()
                });
                Ok(Check { call: Call::parse(&c.call)?, returns: returns.transpose()? })
            })
            .collect::<Result<_, String>>()?;
        Ok(Stream {
            sender,
            modules,
            packages,
            genesis: spec.genesis.iter().map(Tx::parse).collect::<Result<_, _>>()?,
            setup: spec.setup.iter().map(Tx::parse).collect::<Result<_, _>>()?,
            transaction: Tx::parse(&spec.transaction)?,
            checks,
            spec,
        })
    }

    /// The engine configuration of the stream's chain, with its natives
    /// registered as a node registers them, and `auto` compiling on one
    /// background thread as a node would (transactions never wait for a
    /// compile).
    pub fn config(&self) -> EngineConfig {
        let jit = movejit_engine::JitOptions { compile_threads: 1, ..Default::default() };
        match self.spec.flavour {
            Flavour::Aptos => {
                EngineConfig { natives: movejit_aptos_natives::aptos_registry(), jit, ..EngineConfig::aptos() }
            }
            Flavour::Sui => EngineConfig { natives: movejit_sui_natives::sui_registry(), jit, ..EngineConfig::sui() },
        }
    }

    /// The chain over the stream's storage after genesis and setup.
    fn chain(&self, config: &EngineConfig) -> Result<Chain, String> {
        let mut storage = InMemoryStorage::default();
        for (m, bytes) in &self.modules {
            storage.publish(ModuleId::new(*m.address(), m.name()), bytes.clone());
        }
        let genesis_engine = movejit_engine::new_engine(config.clone());
        let mut chain = match self.spec.flavour {
            Flavour::Aptos => Chain::Aptos(Host::new(genesis_engine, storage, self.sender)),
            Flavour::Sui if self.packages > 0 => return Err("`packages`: Sui has no init_module".to_string()),
            Flavour::Sui => {
                Chain::Sui { host: SuiHost::new(genesis_engine, storage, self.sender), names: BTreeMap::new() }
            }
        };
        let run_all = |chain: &mut Chain, txs: &[Tx], what: &str| -> Result<(), String> {
            for (k, tx) in txs.iter().enumerate() {
                for i in 0..tx.repeat {
                    tx.run(chain, i).map_err(|e| format!("{what} transaction {k} (#{i}): {e}"))?;
                }
            }
            Ok(())
        };
        run_all(&mut chain, &self.genesis, "genesis")?;
        if let Chain::Aptos(host) = &mut chain {
            let packages: Vec<CompiledModule> =
                self.modules[self.modules.len() - self.packages..].iter().map(|(m, _)| m.clone()).collect();
            host.init_modules(&packages).map_err(|e| format!("init_module: {}", describe(&e)))?;
        }
        run_all(&mut chain, &self.setup, "setup")?;
        Ok(chain)
    }

    /// Runs the stream on `executor` (`config` gives flavour and natives:
    /// [`Stream::config`]): genesis untimed on an engine of its own, then
    /// every transaction on a fresh engine, each timed from its session's
    /// start to its effects applied.
    pub fn run(&self, executor: Executor, config: &EngineConfig, mut progress: impl FnMut()) -> StreamRun {
        let mut run =
            StreamRun { executor, correct: false, failure: None, tx_ns: vec![], compile_ns: None, state_digest: 0 };
        let chain = match self.chain(config) {
            Ok(c) => c,
            Err(e) => {
                run.failure = Some(e);
                return run;
            }
        };
        let (engine, factory) = new_engine_with_cache(EngineConfig { executor: executor.kind(), ..config.clone() });
        let mut chain = chain.with_engine(engine);
        for i in 0..self.spec.transactions {
            let t = Instant::now();
            let r = self.transaction.run(&mut chain, i);
            run.tx_ns.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
            progress();
            if let Err(e) = r {
                run.failure.get_or_insert(format!("transaction {i}: {e}"));
            }
        }
        run.compile_ns = factory.map(|f| u64::try_from(f.stats().compile_time.as_nanos()).unwrap_or(u64::MAX));
        let mut seen = Vec::new();
        for c in &self.checks {
            let f = &c.call.function;
            match chain.call(&c.call, 0, true) {
                Ok(Ok(got)) if c.returns.as_ref().is_none_or(|e| *e == got) => seen.push(got),
                Ok(Ok(got)) => {
                    run.failure.get_or_insert(format!(
                        "check {}::{}: returned {:?}, expected {:?}",
                        f.module.long_string(),
                        f.name,
                        got.iter().map(hex::encode).collect::<Vec<_>>(),
                        c.returns.iter().flatten().map(hex::encode).collect::<Vec<_>>()
                    ));
                }
                Ok(Err(e)) => {
                    run.failure.get_or_insert(format!("check {}: {}", f.name, describe(&e)));
                }
                Err(e) => {
                    run.failure.get_or_insert(format!("check {}: {e}", f.name));
                }
            }
        }
        match chain.digest(&seen) {
            Ok(d) => run.state_digest = d,
            Err(e) => {
                run.failure.get_or_insert(e);
            }
        }
        run.correct = run.failure.is_none();
        run
    }
}

impl Tx {
    fn parse(spec: &TxSpec) -> Result<Tx, String> {
        Ok(Tx { call: Call::parse(&spec.call)?, expect: spec.expect, repeat: spec.repeat, save: spec.save.clone() })
    }

    /// Transaction number `i`: whether it ended as expected.
    fn run(&self, chain: &mut Chain, i: u64) -> Result<(), String> {
        let r = chain.call(&self.call, i, false)?;
        match (self.expect, r) {
            (Expect::Executed, Ok(returns)) => match &self.save {
                Some(name) => chain.save(name, returns),
                None => Ok(()),
            },
            (Expect::Any, _) => Ok(()),
            (Expect::Aborted, Err(e)) if e.status == StatusCode::ABORTED => Ok(()),
            (Expect::Aborted, Ok(_)) => Err("executed, expected an abort".to_string()),
            (_, Err(e)) => Err(describe(&e)),
        }
    }
}

fn parse_types(types: &[String]) -> Result<Vec<Type>, String> {
    types.iter().map(|t| Type::parse_tag(t).ok_or_else(|| format!("bad type argument `{t}`"))).collect()
}

fn function(s: &str) -> Result<FunctionRef, String> {
    FunctionRef::parse(s).ok_or_else(|| format!("`{s}` is not ADDRESS::module::function"))
}

fn describe(e: &movejit_engine::VmError) -> String {
    let mut s = e.status.name().to_string();
    if let Some(code) = e.sub_status {
        s.push_str(&format!(" ({code})"));
    }
    if let Some(m) = &e.message {
        s.push_str(&format!(": {m}"));
    }
    if let Some(l) = &e.location {
        s.push_str(&format!(" at {}::{} #{}", l.module, l.function_name, l.code_offset));
    }
    s
}

/// `shared:PATH` against the shared reference folder, anything else
/// against the suite folder (no `..` either way).
fn resolve(dir: &Path, rel: &str) -> Result<PathBuf, String> {
    let (base, path) = match rel.strip_prefix("shared:") {
        Some(p) => (crate::shared_dir(), p),
        None => (dir.to_path_buf(), rel),
    };
    let p = Path::new(path);
    if p.components().any(|c| !matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir)) {
        return Err(format!("`{rel}`: paths are relative, without `..`"));
    }
    Ok(base.join(p))
}

/// A `.mv` file, or every `.mv` file below a folder (sorted).
fn module_files(p: &Path) -> Result<Vec<PathBuf>, String> {
    if !p.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut out = Vec::new();
    let entries = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for q in paths {
        if q.is_dir() {
            out.extend(module_files(&q)?);
        } else if q.extension().is_some_and(|x| x == "mv") {
            out.push(q);
        }
    }
    Ok(out)
}

/// A templated argument.
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    Int {
        bytes: usize,
        expr: Expr,
    },
    Bool(Expr),
    Address {
        base: AccountAddress,
        offset: Option<Expr>,
        signer: bool,
    },
    /// A vector of `bytes`-wide integers.
    Vector {
        bytes: usize,
        elems: Vec<Expr>,
    },
    /// Fixed BCS bytes.
    Raw(Vec<u8>),
    /// Sui: the object saved under this name.
    Object(String),
    /// Sui: the transaction's `&mut TxContext`.
    TxContext,
}

impl Arg {
    /// The argument's BCS for transaction `i` (`Err` for the Sui inputs
    /// only a Sui host gives).
    fn bcs(&self, i: u64) -> Result<Vec<u8>, String> {
        Ok(match self {
            Arg::Int { bytes, expr } => expr.eval(i).to_le_bytes()[..*bytes].to_vec(),
            Arg::Bool(e) => vec![(e.eval(i) != 0) as u8],
            Arg::Address { base, offset, signer } => {
                let mut a = base.0;
                let add = offset.as_ref().map_or(0, |e| e.eval(i));
                // Big-endian addition into the address's low bytes.
                let low = u128::from_be_bytes(a[16..].try_into().unwrap_or_default()).wrapping_add(add);
                a[16..].copy_from_slice(&low.to_be_bytes());
                let mut out = if *signer { vec![0u8] } else { vec![] };
                out.extend_from_slice(&a);
                out
            }
            Arg::Vector { bytes, elems } => {
                let mut out = Vec::new();
                movejit_runtime::bcs::write_uleb(&mut out, elems.len() as u64);
                for e in elems {
                    out.extend_from_slice(&e.eval(i).to_le_bytes()[..*bytes]);
                }
                out
            }
            Arg::Raw(b) => b.clone(),
            Arg::Object(_) | Arg::TxContext => return Err("objects and `ctx` are Sui inputs".to_string()),
        })
    }
}

fn parse_args(args: &[String]) -> Result<Vec<Arg>, String> {
    args.iter().map(|a| parse_arg(a).map_err(|e| format!("argument `{a}`: {e}"))).collect()
}

fn parse_arg(s: &str) -> Result<Arg, String> {
    if s == "ctx" {
        return Ok(Arg::TxContext);
    }
    let (ty, value) = s.split_once(':').ok_or("not TYPE:VALUE")?;
    let int = |bytes| Ok(Arg::Int { bytes, expr: Expr::parse(value)? });
    let vector = |bytes| {
        let elems = if value.trim().is_empty() {
            vec![]
        } else {
            value.split(',').map(Expr::parse).collect::<Result<_, _>>()?
        };
        Ok(Arg::Vector { bytes, elems })
    };
    match ty {
        "vector<u8>" => vector(1),
        "vector<u64>" => vector(8),
        "bcs" => hex::decode(value.trim()).map(Arg::Raw).map_err(|e| e.to_string()),
        "object" => Ok(Arg::Object(value.trim().to_string())),
        "u8" => int(1),
        "u16" => int(2),
        "u32" => int(4),
        "u64" => int(8),
        "u128" => int(16),
        "bool" => Ok(Arg::Bool(Expr::parse(value)?)),
        "address" | "signer" => {
            let (base, offset) = match value.split_once('+') {
                Some((b, o)) => (b, Some(Expr::parse(o)?)),
                None => (value, None),
            };
            let base = AccountAddress::parse(base.trim()).ok_or("bad address")?;
            Ok(Arg::Address { base, offset, signer: ty == "signer" })
        }
        _ => Err(format!("unknown type `{ty}`")),
    }
}

/// An integer expression of the transaction number `i`.
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    I,
    Num(u128),
    Bin(Box<Expr>, char, Box<Expr>),
}

impl Expr {
    fn parse(s: &str) -> Result<Expr, String> {
        let tokens: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut pos = 0;
        let e = Self::sum(&tokens, &mut pos)?;
        if pos != tokens.len() {
            return Err(format!("unexpected `{}`", tokens[pos..].iter().collect::<String>()));
        }
        Ok(e)
    }

    fn sum(t: &[char], pos: &mut usize) -> Result<Expr, String> {
        let mut e = Self::product(t, pos)?;
        while let Some(&op @ ('+' | '-')) = t.get(*pos) {
            *pos += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(Self::product(t, pos)?));
        }
        Ok(e)
    }

    fn product(t: &[char], pos: &mut usize) -> Result<Expr, String> {
        let mut e = Self::atom(t, pos)?;
        while let Some(&op @ ('*' | '/' | '%')) = t.get(*pos) {
            *pos += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(Self::atom(t, pos)?));
        }
        Ok(e)
    }

    fn atom(t: &[char], pos: &mut usize) -> Result<Expr, String> {
        match t.get(*pos) {
            Some('i') => {
                *pos += 1;
                Ok(Expr::I)
            }
            Some('(') => {
                *pos += 1;
                let e = Self::sum(t, pos)?;
                if t.get(*pos) != Some(&')') {
                    return Err("missing `)`".to_string());
                }
                *pos += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = *pos;
                while t.get(*pos).is_some_and(|c| c.is_ascii_digit()) {
                    *pos += 1;
                }
                let digits: String = t[start..*pos].iter().collect();
                digits.parse().map(Expr::Num).map_err(|e| e.to_string())
            }
            other => Err(format!("expected a number, `i` or `(`, found {other:?}")),
        }
    }

    /// Wrapping arithmetic; division or remainder by zero gives 0.
    fn eval(&self, i: u64) -> u128 {
        match self {
            Expr::I => i as u128,
            Expr::Num(n) => *n,
            Expr::Bin(a, op, b) => {
                let (x, y) = (a.eval(i), b.eval(i));
                match op {
                    '+' => x.wrapping_add(y),
                    '-' => x.wrapping_sub(y),
                    '*' => x.wrapping_mul(y),
                    '/' => x.checked_div(y).unwrap_or(0),
                    _ => x.checked_rem(y).unwrap_or(0),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (argument, transaction number, expected BCS)
    #[test]
    fn templated_arguments() {
        let addr = |low: u8| {
            let mut a = [0u8; 32];
            a[31] = low;
            a.to_vec()
        };
        let cases: Vec<(&str, u64, Vec<u8>)> = vec![
            ("u64:7", 3, 7u64.to_le_bytes().to_vec()),
            ("u64:i", 3, 3u64.to_le_bytes().to_vec()),
            ("u64:1 + 2 * i % 5", 4, 4u64.to_le_bytes().to_vec()),
            ("u64:(1 + 2) * i", 4, 12u64.to_le_bytes().to_vec()),
            ("u8:i % 256", 300, vec![44]),
            ("u128:i - 1", 0, u128::MAX.to_le_bytes().to_vec()),
            ("bool:i % 2", 3, vec![1]),
            ("bool:i % 2", 4, vec![0]),
            ("u64:i / 0", 4, 0u64.to_le_bytes().to_vec()),
            ("address:0x10 + i % 4", 6, addr(0x12)),
            ("signer:0xb0", 9, [vec![0], addr(0xb0)].concat()),
            ("vector<u64>:i, 7", 2, [vec![2], 2u64.to_le_bytes().to_vec(), 7u64.to_le_bytes().to_vec()].concat()),
            ("vector<u8>:", 2, vec![0]),
            ("bcs:0a0b", 5, vec![10, 11]),
        ];
        for (text, i, expected) in cases {
            let arg = parse_arg(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(arg.bcs(i), Ok(expected), "{text} at {i}");
        }
        for bad in
            ["u64", "u64:", "u64:i +", "u64:(i", "u64:j", "u7:1", "address:zz", "u64:1)", "bcs:0g", "vector<u8>:1,"]
        {
            assert!(parse_arg(bad).is_err(), "{bad} should not parse");
        }
    }
}
