//! What an execution shows to the outside, in executor-neutral terms, and
//! how two of them differ.

#![forbid(unsafe_code)]

use movejit_format::StatusCode;
use std::fmt;

/// Where an error was raised: module (`0xcafe::m`), function definition
/// index, bytecode offset.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loc {
    pub module: String,
    pub function: u16,
    pub code_offset: u16,
}

/// Everything observable about one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: StatusCode,
    pub sub_status: Option<u64>,
    pub abort_code: Option<u64>,
    /// The error's message (an `abort_msg` text, "Addition overflow", ...):
    /// the same on every executor.
    pub message: Option<String>,
    pub location: Option<Loc>,
    /// BCS of each return value.
    pub returns: Vec<Vec<u8>>,
    /// (parameter index, BCS of the final value) of each `&mut` parameter.
    pub mutrefs: Vec<(usize, Vec<u8>)>,
    /// Resource writes: (`address/type`, new BCS or `None` for a delete), sorted.
    pub changes: Vec<(String, Option<Vec<u8>>)>,
    pub gas_used: u64,
    /// Peak memory in Aptos's abstract units (`None` under the unit
    /// schedule, which does not track it).
    pub memory_used: Option<u64>,
}

impl Outcome {
    /// The first field where `self` and `other` differ, if any.
    pub fn first_difference(&self, other: &Outcome) -> Option<&'static str> {
        let fields: [(&'static str, bool); 10] = [
            ("status", self.status == other.status),
            ("sub_status", self.sub_status == other.sub_status),
            ("abort_code", self.abort_code == other.abort_code),
            ("message", self.message == other.message),
            ("location", self.location == other.location),
            ("returns", self.returns == other.returns),
            ("mutrefs", self.mutrefs == other.mutrefs),
            ("changes", self.changes == other.changes),
            ("gas_used", self.gas_used == other.gas_used),
            ("memory_used", self.memory_used == other.memory_used),
        ];
        fields.iter().find(|(_, same)| !same).map(|(name, _)| *name)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status.name())?;
        if let Some(s) = self.sub_status {
            write!(f, " sub_status={s}")?;
        }
        if let Some(c) = self.abort_code {
            write!(f, " abort_code={c}")?;
        }
        if let Some(m) = &self.message {
            write!(f, " message={m:?}")?;
        }
        if let Some(l) = &self.location {
            write!(f, " at {}[fn {}]@{}", l.module, l.function, l.code_offset)?;
        }
        if !self.returns.is_empty() {
            let r: Vec<String> = self.returns.iter().map(hex::encode).collect();
            write!(f, " returns=[{}]", r.join(", "))?;
        }
        for (i, b) in &self.mutrefs {
            write!(f, " &mut#{i}={}", hex::encode(b))?;
        }
        for (k, v) in &self.changes {
            match v {
                Some(b) => write!(f, " write {k}={}", hex::encode(b))?,
                None => write!(f, " delete {k}")?,
            }
        }
        write!(f, " gas={}", self.gas_used)?;
        if let Some(m) = self.memory_used {
            write!(f, " memory={m}")?;
        }
        Ok(())
    }
}

/// The two executors disagreed.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The gas budget of the run that diverged.
    pub budget: u64,
    /// The first differing field of [`Outcome`].
    pub field: &'static str,
    /// The executor compared with the interpreter (`jit` or `auto`).
    pub executor: &'static str,
    pub interp: Outcome,
    /// The JIT's outcome, or why it failed where it never may.
    pub jit: Result<Outcome, String>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} differs (gas budget {})", self.field, self.budget)?;
        writeln!(f, "  interp: {}", self.interp)?;
        match &self.jit {
            Ok(o) => write!(f, "  {:<7} {o}", format!("{}:", self.executor)),
            Err(e) => write!(f, "  {:<7} failed: {e}", format!("{}:", self.executor)),
        }
    }
}
