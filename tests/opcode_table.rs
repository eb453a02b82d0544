//! The opcode table (`tests/opcodes/table.txt`): one row per
//! (function, arguments, expected result), the functions written in `.masm`
//! and assembled with movejit-masm into one module per section over that
//! section's prelude (`tests/opcodes/<section>.masm`: declarations and
//! helper functions).
//!
//! Row syntax (`|`-separated; `#` starts a comment line; `[aptos]` or
//! `[sui]` starts a section):
//!
//! ```text
//! name | (a: u8, b: u8): u8 | move_loc a; move_loc b; add; ret | u8:255 u8:1 | ARITHMETIC_ERROR at=2
//! name |                    |                                  | u8:1 u8:2   | EXECUTED u8:3
//! ```
//!
//! * signature and body define function `name` (instructions separated by
//!   `;`, a segment `label: instr` is a labelled instruction, `local x: T`
//!   declares a local); empty signature and body reuse the function of an
//!   earlier row;
//! * arguments and returns are typed literals: `u8:255` … `u256:…`,
//!   `i8:-128` … `i256:…`, `bool:true`, `addr:0xcafe`, `signer:0xcafe`,
//!   `bytes:0x0102` (a `vector<u8>`), `bytes*1025:0x61` (1,025 copies),
//!   `vu64:[1,2]`, `raw:0x…` (any BCS);
//! * expected: a status name, then `abort=N` (`ABORTED`), `sub=N`,
//!   `msg="text"`, `at=N` (offset in the row's function) or `at=f+N`
//!   (offset in function `f` of the module), `gas=N` (the budget of the
//!   run), `&K=value` (final value of the `&mut` parameter K), and for
//!   `EXECUTED` the return values in order.
//!
//! Expected values are Move's semantics, written by hand (and a few
//! checked against the real Aptos VM's results in
//! `shared/conformance/aptos/cases.jsonl`), not computed by either executor.

#![forbid(unsafe_code)]

use movejit_diff::Case;
use movejit_format::{AccountAddress, CompiledModule, StatusCode, StatusFlavour};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use movejit_runtime::bcs::write_uleb;
use movejit_runtime::ethnum::{I256, U256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The table's folder.
pub fn table_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("opcodes")
}

/// What a row expects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    pub status: String,
    pub abort_code: Option<u64>,
    pub sub_status: Option<u64>,
    pub message: Option<String>,
    /// (function name, code offset).
    pub at: Option<(String, u16)>,
    pub returns: Vec<Vec<u8>>,
    pub mutrefs: Vec<(usize, Vec<u8>)>,
}

/// One row: a call and its expected result.
#[derive(Clone, Debug)]
pub struct Row {
    /// `section:line name`.
    pub label: String,
    pub section: String,
    pub function: String,
    pub args: Vec<Vec<u8>>,
    pub gas: Option<u64>,
    pub expected: Expected,
}

/// A section: its flavour and its assembled module.
pub struct Section {
    pub flavour: StatusFlavour,
    pub module: CompiledModule,
}

/// The whole table, assembled.
pub struct Table {
    pub sections: BTreeMap<String, Section>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The diff case of a row.
    pub fn case(&self, row: &Row) -> Result<Case, String> {
        let s = self.sections.get(&row.section).ok_or_else(|| format!("no section {}", row.section))?;
        Ok(Case {
            name: row.label.clone(),
            flavour: s.flavour,
            modules: vec![s.module.clone()],
            address: *s.module.address(),
            module: s.module.name().to_string(),
            function: row.function.clone(),
            type_args: Vec::new(),
            args: row.args.clone(),
        })
    }
}

/// Reads, parses and assembles the table.
pub fn load() -> Result<Table, String> {
    let dir = table_dir();
    let text = std::fs::read_to_string(dir.join("table.txt")).map_err(|e| format!("table.txt: {e}"))?;
    let mut rows = Vec::new();
    let mut functions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let at = |e: String| format!("table.txt:{}: {e}", n + 1);
        if section.is_empty() {
            return Err(at("row before any [section]".into()));
        }
        let fields = fields(line);
        let [name, sig, body, args, expected] = fields[..] else {
            return Err(at(format!("{} fields, want 5", fields.len())));
        };
        let texts = functions.entry(section.clone()).or_default();
        if !sig.is_empty() || !body.is_empty() {
            texts.push(function_text(name, sig, body));
        }
        let (expected, gas) = parse_expected(expected, name).map_err(at)?;
        let args = args.split_whitespace().map(literal).collect::<Result<Vec<_>, _>>().map_err(at)?;
        rows.push(Row {
            label: format!("{section}:{} {name}", n + 1),
            section: section.clone(),
            function: name.to_string(),
            args,
            gas,
            expected,
        });
    }
    let mut sections = BTreeMap::new();
    for (name, texts) in functions {
        let prelude =
            std::fs::read_to_string(dir.join(format!("{name}.masm"))).map_err(|e| format!("{name}.masm: {e}"))?;
        let source = format!("{prelude}\n{}", texts.join("\n"));
        let module = match assemble_with(&source, AsmOptions { default_version: None, deps: &[] }) {
            Ok(Assembled::Module(m)) => m,
            Ok(Assembled::Script(_)) => return Err(format!("[{name}]: a script")),
            Err(e) => return Err(format!("[{name}] (prelude {} lines): {e}", prelude.lines().count() + 1)),
        };
        let flavour = match module.flavour {
            movejit_format::Flavour::Sui => StatusFlavour::Sui,
            _ => StatusFlavour::Aptos,
        };
        sections.insert(name, Section { flavour, module });
    }
    Ok(Table { sections, rows })
}

/// Splits a row on `|` outside `<...>` (closure types contain `|`).
fn fields(line: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in line.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '|' if depth == 0 => {
                out.push(line[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(line[start..].trim());
    out
}

fn function_text(name: &str, sig: &str, body: &str) -> String {
    let mut out = format!("public fun {name}{sig}\n");
    for seg in body.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let labelled = seg.split_once(':').is_some_and(|(l, rest)| {
            !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && rest.starts_with(' ')
        });
        if labelled && !seg.starts_with("local ") {
            out.push_str(seg);
        } else {
            out.push_str("    ");
            out.push_str(seg);
        }
        out.push('\n');
    }
    out
}

fn parse_expected(s: &str, row_fn: &str) -> Result<(Expected, Option<u64>), String> {
    let mut words = tokens(s).into_iter();
    let status = words.next().ok_or("no expected status")?;
    if StatusCode::from_name(&status).is_none() {
        return Err(format!("unknown status {status}"));
    }
    let mut e = Expected { status, ..Expected::default() };
    let mut gas = None;
    for w in words {
        let num = |v: &str| parse_u64(v).ok_or_else(|| format!("bad number in {w}"));
        if let Some(v) = w.strip_prefix("abort=") {
            e.abort_code = Some(num(v)?);
        } else if let Some(v) = w.strip_prefix("sub=") {
            e.sub_status = Some(num(v)?);
        } else if let Some(v) = w.strip_prefix("gas=") {
            gas = Some(num(v)?);
        } else if let Some(v) = w.strip_prefix("msg=") {
            e.message = Some(v.trim_matches('"').to_string());
        } else if let Some(v) = w.strip_prefix("at=") {
            let (f, off) = match v.split_once('+') {
                Some((f, off)) => (f.to_string(), off),
                None => (row_fn.to_string(), v),
            };
            e.at = Some((f, off.parse().map_err(|_| format!("bad offset in {w}"))?));
        } else if let Some(v) = w.strip_prefix('&') {
            let (k, lit) = v.split_once('=').ok_or_else(|| format!("bad {w}"))?;
            e.mutrefs.push((k.parse().map_err(|_| format!("bad parameter in {w}"))?, literal(lit)?));
        } else {
            e.returns.push(literal(&w)?);
        }
    }
    Ok((e, gas))
}

/// Splits on spaces outside double quotes and brackets.
fn tokens(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut depth) = (Vec::new(), String::new(), false, 0i32);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && !quoted && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn address(s: &str) -> Result<[u8; 32], String> {
    AccountAddress::parse(s).map(|a| a.0).ok_or_else(|| format!("bad address {s}"))
}

fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s.strip_prefix("0x").unwrap_or(s)).map_err(|e| format!("bad hex {s}: {e}"))
}

/// The BCS bytes of a typed literal (see the module documentation).
pub fn literal(s: &str) -> Result<Vec<u8>, String> {
    let (ty, v) = s.split_once(':').ok_or_else(|| format!("literal {s} has no type"))?;
    let bad = || format!("bad literal {s}");
    Ok(match ty {
        "u8" => v.parse::<u8>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "u16" => v.parse::<u16>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "u32" => v.parse::<u32>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "u64" => parse_u64(v).ok_or_else(bad)?.to_le_bytes().to_vec(),
        "u128" => v.parse::<u128>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "u256" => U256::from_str_radix(v, 10).map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i8" => v.parse::<i8>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i16" => v.parse::<i16>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i32" => v.parse::<i32>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i64" => v.parse::<i64>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i128" => v.parse::<i128>().map_err(|_| bad())?.to_le_bytes().to_vec(),
        "i256" => I256::from_str_radix(v, 10).map_err(|_| bad())?.to_le_bytes().to_vec(),
        "bool" => match v {
            "true" => vec![1],
            "false" => vec![0],
            _ => return Err(bad()),
        },
        "addr" => address(v)?.to_vec(),
        // Aptos's signer argument: variant 0 (Master) and the address.
        "signer" => std::iter::once(0u8).chain(address(v)?).collect(),
        "raw" => hex_bytes(v)?,
        "vu64" => {
            let items: Vec<&str> = v
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .collect();
            let mut out = Vec::new();
            write_uleb(&mut out, items.len() as u64);
            for i in items {
                out.extend(parse_u64(i).ok_or_else(bad)?.to_le_bytes());
            }
            out
        }
        _ => {
            let (base, times) = match ty.split_once('*') {
                Some((b, n)) => (b, n.parse::<usize>().map_err(|_| bad())?),
                None => (ty, 1),
            };
            if base != "bytes" || times > 1 << 16 {
                return Err(format!("unknown literal type in {s}"));
            }
            let unit = hex_bytes(v)?;
            let bytes: Vec<u8> = std::iter::repeat_n(unit.iter().copied(), times).flatten().collect();
            let mut out = Vec::new();
            write_uleb(&mut out, bytes.len() as u64);
            out.extend(bytes);
            out
        }
    })
}

/// The index of function `name` in `m`.
pub fn function_index(m: &CompiledModule, name: &str) -> Option<u16> {
    m.function_defs
        .iter()
        .position(|d| {
            m.function_handles
                .get(d.function.idx())
                .and_then(|h| m.identifiers.get(h.name.idx()))
                .is_some_and(|n| n == name)
        })
        .map(|i| i as u16)
}

/// The differences between the interpreter's outcome and what `row`
/// expects (empty when it is exactly that).
pub fn check(table: &Table, row: &Row, got: &movejit_diff::Outcome) -> Vec<String> {
    let e = &row.expected;
    let mut bad = Vec::new();
    if got.status.name() != e.status {
        bad.push(format!("status {} (expected {})", got.status.name(), e.status));
    }
    if got.abort_code != e.abort_code {
        bad.push(format!("abort code {:?} (expected {:?})", got.abort_code, e.abort_code));
    }
    if got.sub_status != e.sub_status {
        bad.push(format!("sub-status {:?} (expected {:?})", got.sub_status, e.sub_status));
    }
    if e.message.is_some() && got.message != e.message {
        bad.push(format!("message {:?} (expected {:?})", got.message, e.message));
    }
    if let Some((f, off)) = &e.at {
        let module = &table.sections[&row.section].module;
        let want = function_index(module, f).map(|i| (i, *off));
        let have = got.location.as_ref().map(|l| (l.function, l.code_offset));
        if want.is_none() || have != want {
            bad.push(format!("location {:?} (expected {f}+{off} = {want:?})", got.location));
        }
    }
    if e.status == "EXECUTED" && got.returns != e.returns {
        let h = |v: &[Vec<u8>]| v.iter().map(hex::encode).collect::<Vec<_>>().join(", ");
        bad.push(format!("returns [{}] (expected [{}])", h(&got.returns), h(&e.returns)));
    }
    for (k, v) in &e.mutrefs {
        if !got.mutrefs.iter().any(|(i, b)| i == k && b == v) {
            bad.push(format!("&mut parameter {k}: {:?} (expected {})", got.mutrefs, hex::encode(v)));
        }
    }
    bad
}
