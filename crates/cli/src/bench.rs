//! `movejit bench`: run benchmark suites on the interpreter and the JIT,
//! check every result, print a table per suite with the real Aptos VM's
//! reference figures, optionally write JSON (a stable contract, see
//! [`json_row`]). Exit 0 when every executed benchmark returned its expected
//! bytes, 1 when one did not (or could not be loaded), 2 on bad arguments.
//! A call is timed as a node pays for it: a new session over the warm
//! engine, the call, and finishing the session into a change set.
//!
//! Loading, executors and measuring live in movejit-benches (shared with the
//! criterion benches); this module is the command line and the report.

use crate::plot::{self, Speedup, StreamPlot, SuitePlot};
use indicatif::{ProgressBar, ProgressStyle};
use movejit_benches::executor::{prepare, Executor, Metering, PrepareError};
use movejit_benches::manifest::{Benchmark, Case, Suite};
use movejit_benches::measure::{measure, Stats};
use movejit_benches::stream::{load_streams, Stream, StreamRun};
use movejit_format::StatusCode;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineName {
    Interp,
    Jit,
    Auto,
}

impl EngineName {
    fn executor(self) -> Executor {
        match self {
            EngineName::Interp => Executor::Interp,
            EngineName::Jit => Executor::Jit,
            EngineName::Auto => Executor::Auto,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Size {
    /// The manifest's main arguments (the reference figures' size).
    Reference,
    /// The size with the smallest Aptos VM figure (quick runs).
    Smallest,
}

#[derive(clap::Args)]
pub struct Args {
    /// Suite folders, each holding a benchmarks.jsonl (calls) and/or a
    /// streams.jsonl (transaction streams) (default: the bundled example
    /// suite).
    suites: Vec<PathBuf>,
    /// Executors to measure, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "interp,jit")]
    engine: Vec<EngineName>,
    /// Timed calls per benchmark and executor, after one warm-up call.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    iters: u32,
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Only benchmarks whose name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,
    /// Which of a benchmark's sizes to run.
    #[arg(long, value_enum, default_value = "reference")]
    size: Size,
    /// Also time each executor metered by Aptos's schedule (unlimited
    /// balance, no execution limit), next to its unmetered time.
    #[arg(long)]
    metered: bool,
    /// Draw the results as SVG to FILE: each benchmark's speedup over its
    /// reference VM per engine, and each stream's latency per transaction.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Transactions per stream, in place of each stream's own count (a
    /// longer stream shows `auto` once its background compiles are done).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    transactions: Option<u64>,
}

/// One executor's outcome on one benchmark.
struct Row {
    executor: Executor,
    /// Metered by Aptos's schedule (`--metered`).
    metered: bool,
    correct: bool,
    stats: Option<Stats>,
    compile_ns: Option<u64>,
    failure: Option<String>,
    /// A metered call that ended at Aptos's memory quota (`txn.memory_quota`,
    /// which `--metered` keeps, unlike the execution limit): where and how,
    /// reported as the program's status, not as a failure.
    quota: Option<String>,
}

impl Row {
    /// Neither correct nor a status the program legitimately ends with.
    fn failed(&self) -> bool {
        !self.correct && self.quota.is_none()
    }
}

/// Everything measured for one benchmark.
struct BenchResult<'a> {
    bench: &'a Benchmark,
    case: &'a Case,
    rows: Vec<Row>,
    /// Executors that cannot run it yet, with the reason.
    not_yet: Vec<(Executor, String)>,
}

pub fn run(args: Args) -> ExitCode {
    let mut suites = Vec::new();
    let mut streams: Vec<(String, Stream)> = Vec::new();
    if args.suites.is_empty() {
        match Suite::bundled() {
            Ok(s) => suites.push(s),
            Err(e) => return usage_error(&e.to_string()),
        }
    }
    for dir in &args.suites {
        let has_calls = dir.join("benchmarks.jsonl").exists();
        if has_calls || !dir.join("streams.jsonl").exists() {
            match Suite::load(dir) {
                Ok(s) => suites.push(s),
                Err(e) => return usage_error(&e.to_string()),
            }
        }
        match load_streams(dir) {
            Ok(found) => streams.extend(found.into_iter().map(|s| (dir.display().to_string(), s))),
            Err(e) => return usage_error(&e),
        }
    }
    let mut executors: Vec<Executor> = Vec::new();
    for e in &args.engine {
        if !executors.contains(&e.executor()) {
            executors.push(e.executor());
        }
    }
    let iters = args.iters as usize;
    let selected = |b: &Benchmark| args.filter.is_empty() || args.filter.iter().any(|f| b.name.contains(f.as_str()));
    streams.retain(|(_, s)| args.filter.is_empty() || args.filter.iter().any(|f| s.spec.name.contains(f.as_str())));
    if let Some(n) = args.transactions {
        for (_, s) in &mut streams {
            s.spec.transactions = n;
        }
    }
    // Each benchmark with a Sui build also runs as `NAME@sui`.
    let chosen: Vec<Vec<Benchmark>> = suites
        .iter()
        .map(|s| s.benchmarks.iter().flat_map(|b| b.with_sui_variant()).filter(|b| selected(b)).collect())
        .collect();
    let total_calls: usize = chosen.iter().map(Vec::len).sum::<usize>() * executors.len() * (iters + 1);
    let total_transactions: u64 =
        streams.iter().map(|(_, s)| s.spec.transactions).sum::<u64>() * executors.len() as u64;
    if total_calls == 0 && streams.is_empty() {
        return usage_error("no benchmark selected (check the suites and --filter)");
    }
    let bar = ProgressBar::new(total_calls as u64 + total_transactions);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} calls and transactions  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );

    let mut json_rows: Vec<Value> = Vec::new();
    let mut suite_plots: Vec<SuitePlot> = Vec::new();
    let mut stream_plots: Vec<StreamPlot> = Vec::new();
    let mut failed = 0usize;
    for (suite, chosen) in suites.iter().zip(&chosen) {
        say(&bar, format!("suite {} ({} benchmarks)", suite.label(), suite.benchmarks.len()));
        say(&bar, header());
        let mut results = Vec::new();
        for bench in chosen {
            let case = match args.size {
                Size::Reference => &bench.case,
                Size::Smallest => bench.smallest_case(),
            };
            let r = run_benchmark(suite, bench, case, &executors, iters, args.metered, &bar);
            for line in table_lines(&r) {
                say(&bar, line);
            }
            failed += r.rows.iter().filter(|row| row.failed()).count();
            json_rows.extend(r.rows.iter().map(|row| json_row(&r, row)));
            results.push(r);
        }
        for line in summary_lines(&results) {
            say(&bar, line);
        }
        suite_plots.push(SuitePlot { label: suite.label(), speedups: results.iter().flat_map(speedups).collect() });
    }
    let mut last_folder = None;
    for (folder, stream) in &streams {
        if last_folder != Some(folder) {
            say(&bar, format!("streams of {folder}"));
            say(&bar, stream_header());
            last_folder = Some(folder);
        }
        // The first executor's final state is the one the others must reach.
        let mut reference: Option<(Executor, u64)> = None;
        for &ex in &executors {
            bar.set_message(format!("stream {} on {}", stream.spec.name, ex.name()));
            let mut run = stream.run(ex, &stream.config(), || bar.inc(1));
            match reference {
                Some((first, digest)) if run.correct && run.state_digest != digest => {
                    run.correct = false;
                    run.failure = Some(format!("ends in another state than on {}", first.name()));
                }
                None if run.correct => reference = Some((ex, run.state_digest)),
                _ => {}
            }
            bar.inc(stream.spec.transactions.saturating_sub(run.tx_ns.len() as u64));
            say(&bar, stream_line(stream, &run));
            if !run.correct {
                failed += 1;
                say(&bar, format!("    {}: FAILED: {}", ex.name(), run.failure.as_deref().unwrap_or("?")));
            }
            json_rows.push(stream_json(stream, &run));
            if run.correct {
                let name = stream.spec.name.clone();
                stream_plots.push(StreamPlot { name, engine: ex.name(), tx_ns: run.tx_ns });
            }
        }
    }
    bar.finish_and_clear();

    if let Some(path) = &args.json {
        let doc = json!({ "results": json_rows });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &args.plot {
        if let Err(e) = plot::write_svg(path, &suite_plots, &stream_plots) {
            eprintln!("error: --plot {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if failed > 0 {
        eprintln!("{failed} benchmark run(s) failed or returned a wrong result");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Prints a table line on stdout, above the progress bar (which is on
/// stderr, and hidden when stderr is not a terminal).
fn say(bar: &ProgressBar, line: impl AsRef<str>) {
    bar.suspend(|| movejit_cli::outln!("{}", line.as_ref()));
}

/// The command-line name of a size.
pub fn size_name(size: Size) -> &'static str {
    match size {
        Size::Reference => "reference",
        Size::Smallest => "smallest",
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn run_benchmark<'a>(
    suite: &Suite,
    bench: &'a Benchmark,
    case: &'a Case,
    executors: &[Executor],
    iters: usize,
    metered: bool,
    bar: &ProgressBar,
) -> BenchResult<'a> {
    let mut out = BenchResult { bench, case, rows: Vec::new(), not_yet: Vec::new() };
    let calls = (iters + 1) as u64;
    let program = match suite.program(bench, case) {
        Ok(p) => p,
        Err(e) => {
            for &ex in executors {
                out.rows.push(Row {
                    executor: ex,
                    metered: false,
                    correct: false,
                    stats: None,
                    compile_ns: None,
                    failure: Some(e.to_string()),
                    quota: None,
                });
                bar.inc(calls);
            }
            return out;
        }
    };
    let variants =
        executors.iter().map(|&ex| (ex, false)).chain(executors.iter().filter(|_| metered).map(|&ex| (ex, true)));
    for (ex, metered) in variants {
        let (metering, what) = if metered { (Metering::Aptos, " metered") } else { (Metering::Off, "") };
        bar.set_message(format!("{} on {}{what}", bench.name, ex.name()));
        match prepare(ex, &program, metering) {
            Err(PrepareError::NotSupported(why)) => {
                if !metered {
                    out.not_yet.push((ex, why));
                }
                bar.inc(calls);
            }
            Err(PrepareError::Failed(why)) => {
                let failure = Some(why);
                let quota = None;
                out.rows.push(Row {
                    executor: ex,
                    metered,
                    correct: false,
                    stats: None,
                    compile_ns: None,
                    failure,
                    quota,
                });
                bar.inc(calls);
            }
            Ok(mut p) => {
                let mut done = 0u64;
                let m = measure(p.as_mut(), &program.expect, iters, || {
                    done += 1;
                    bar.inc(1);
                });
                bar.inc(calls.saturating_sub(done));
                let at_quota = metered && m.status == Some(StatusCode::MEMORY_LIMIT_EXCEEDED);
                let stats = m.stats();
                let (failure, quota) = if at_quota { (None, m.failure) } else { (m.failure, None) };
                out.rows.push(Row {
                    executor: ex,
                    metered,
                    correct: m.correct,
                    stats,
                    compile_ns: p.compile_ns(),
                    failure,
                    quota,
                });
            }
        }
    }
    agree_on_quota(&mut out.rows);
    out
}

/// Metered executors must all end at the memory quota at the same place, or
/// none of them: one that differs from the first metered row has failed.
fn agree_on_quota(rows: &mut [Row]) {
    let mut metered = rows.iter_mut().filter(|row| row.metered && (row.correct || row.quota.is_some()));
    let Some(first) = metered.next() else { return };
    let (name, want) = (first.executor.name(), first.quota.clone());
    for row in metered.filter(|row| row.quota != want) {
        let ends = |q: &Option<String>| q.clone().unwrap_or_else(|| "with the expected result".into());
        row.failure = Some(format!("ends {} but {name} ends {}", ends(&row.quota), ends(&want)));
        row.correct = false;
        row.quota = None;
    }
}

/// One object of the `--json` contract for a call benchmark:
/// `{"name", "kind": "call", "engine": "interp"|"jit"|"auto", "metered": bool (Aptos's
/// schedule, `--metered`), "correct", "median_ns", "min_ns",
/// "max_ns", "compile_ns": n|null, "reference": {"aptos_vm_ns",
/// "sui_vm_ns", "native_ns"} (n|null each)}`. The times are null only for a
/// benchmark that could not be run at all (then `correct` is false). A Sui
/// build (`NAME@sui`) has the Sui VM as its reference: its `aptos_vm_ns` is
/// null. `"memory_quota"`: for a metered call that ended at Aptos's memory
/// quota (then `correct` is false, and it is not a failure), the status and
/// where; null otherwise.
fn json_row(r: &BenchResult<'_>, row: &Row) -> Value {
    let n = |x: Option<f64>| x.map(|v| v.round() as u64);
    json!({
        "name": r.bench.name,
        "kind": "call",
        "engine": row.executor.name(),
        "metered": row.metered,
        "correct": row.correct,
        "median_ns": row.stats.map(|s| s.median_ns),
        "min_ns": row.stats.map(|s| s.min_ns),
        "max_ns": row.stats.map(|s| s.max_ns),
        "compile_ns": row.compile_ns,
        "memory_quota": row.quota,
        "reference": {
            "aptos_vm_ns": n(aptos_reference(r)),
            "sui_vm_ns": n(r.case.sui_vm_ns_median),
            "native_ns": n(r.case.native_rust_ns_median),
        },
    })
}

// ---- the table ----

const COLS: [(&str, usize); 11] = [
    ("benchmark", 22),
    ("interp ms [min-max]", 26),
    ("jit ms [min-max]", 26),
    ("jit compile", 11),
    ("jit/interp", 10),
    ("Aptos VM ms", 11),
    ("interp/Aptos", 12),
    ("jit/Aptos", 10),
    ("Sui VM ms", 10),
    ("interp/Sui", 10),
    ("jit/Sui", 8),
];

/// One table line: the first cell left-aligned, the others right-aligned,
/// each in its column's width.
fn columns<S: AsRef<str>>(cells: &[S], widths: &[(&str, usize)]) -> String {
    let mut line = String::new();
    for (i, (c, (_, w))) in cells.iter().zip(widths).enumerate() {
        let (c, w) = (c.as_ref(), *w);
        if i == 0 {
            line.push_str(&format!("{c:<w$}"));
        } else {
            line.push_str(&format!(" {c:>w$}"));
        }
    }
    line
}

fn header() -> String {
    let names: Vec<&str> = COLS.iter().map(|(n, _)| *n).collect();
    columns(&names, &COLS) + "\n  (x/y columns: speedup of x over y; >1 means x is faster)"
}

fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

fn spread(s: &Stats) -> String {
    format!("{} [{}-{}]", ms(s.median_ns), ms(s.min_ns), ms(s.max_ns))
}

fn speedup(slow_ns: f64, fast_ns: f64) -> String {
    if fast_ns > 0.0 {
        format!("{:.2}x", slow_ns / fast_ns)
    } else {
        "-".into()
    }
}

/// The Aptos VM's figure, the reference of an Aptos build.
fn aptos_reference(r: &BenchResult<'_>) -> Option<f64> {
    r.case.aptos_vm_exec_ns_median.filter(|_| !r.bench.sui_build)
}

/// The Sui VM's figure, the reference of a Sui build (`NAME@sui`).
fn sui_reference(r: &BenchResult<'_>) -> Option<f64> {
    r.case.sui_vm_ns_median.filter(|_| r.bench.sui_build)
}

/// `ex`'s unmetered row.
fn row_of<'r>(r: &'r BenchResult<'_>, ex: Executor) -> Option<&'r Row> {
    r.rows.iter().find(|row| row.executor == ex && !row.metered)
}

/// The good median of `ex`, if it ran correctly.
fn good_median(r: &BenchResult<'_>, ex: Executor) -> Option<f64> {
    row_of(r, ex).filter(|row| row.correct).and_then(|row| row.stats).map(|s| s.median_ns as f64)
}

fn table_lines(r: &BenchResult<'_>) -> Vec<String> {
    let cell = |ex: Executor| -> String {
        match row_of(r, ex) {
            Some(row) if row.correct => row.stats.as_ref().map(spread).unwrap_or_else(|| "-".into()),
            Some(_) => "FAILED".into(),
            None if r.not_yet.iter().any(|(e, _)| *e == ex) => "not yet".into(),
            None => "-".into(),
        }
    };
    let interp = good_median(r, Executor::Interp);
    let jit = good_median(r, Executor::Jit);
    let aptos = aptos_reference(r);
    let sui = sui_reference(r);
    let compile = row_of(r, Executor::Jit).and_then(|row| row.compile_ns).map(ms).unwrap_or_else(|| "-".into());
    let ratio = |slow: Option<f64>, fast: Option<f64>| match (slow, fast) {
        (Some(s), Some(f)) => speedup(s, f),
        _ => "-".into(),
    };
    let cells = [
        r.bench.name.clone(),
        cell(Executor::Interp),
        cell(Executor::Jit),
        compile,
        ratio(interp, jit),
        aptos.map(|a| ms(a as u64)).unwrap_or_else(|| "-".into()),
        ratio(aptos, interp),
        ratio(aptos, jit),
        sui.map(|a| ms(a as u64)).unwrap_or_else(|| "-".into()),
        ratio(sui, interp),
        ratio(sui, jit),
    ];
    let mut out = vec![columns(&cells, &COLS)];
    if let Some(row) = row_of(r, Executor::Auto).filter(|row| row.correct) {
        let vs = |reference: Option<f64>, what: &str| match (reference, good_median(r, Executor::Auto)) {
            (Some(x), Some(a)) => format!(", {} over {what}", speedup(x, a)),
            _ => String::new(),
        };
        let stats = row.stats.as_ref().map(spread).unwrap_or_else(|| "-".into());
        let vm = vs(aptos, "the Aptos VM") + &vs(sui, "the Sui VM");
        out.push(format!("    auto: {stats} ms{}{vm}", vs(interp, "interp")));
    }
    for row in r.rows.iter().filter(|row| row.metered && row.correct) {
        let stats = row.stats.as_ref().map(spread).unwrap_or_else(|| "-".into());
        let plain = good_median(r, row.executor);
        let ratio = match (plain, row.stats) {
            (Some(u), Some(m)) if u > 0.0 => format!(", {:.2}x its unmetered time", m.median_ns as f64 / u),
            _ => String::new(),
        };
        out.push(format!("    {} metered (Aptos): {stats} ms{ratio}", row.executor.name()));
    }
    for row in r.rows.iter().filter(|row| row.metered) {
        if let (Some(q), Some(s)) = (&row.quota, row.stats) {
            out.push(format!(
                "    {} metered (Aptos): {q} after {} ms (Aptos's memory quota, which --metered keeps: a status, not a failure)",
                row.executor.name(),
                ms(s.median_ns)
            ));
        }
    }
    for (ex, why) in &r.not_yet {
        out.push(format!("    {}: not yet ({why})", ex.name()));
    }
    for row in r.rows.iter().filter(|row| row.failed()) {
        let what = if row.metered { " metered" } else { "" };
        out.push(format!("    {}{what}: FAILED: {}", row.executor.name(), row.failure.as_deref().unwrap_or("?")));
    }
    out
}

/// Every unmetered engine's speedup over the benchmark's reference VM.
fn speedups(r: &BenchResult<'_>) -> Vec<Speedup> {
    let reference = aptos_reference(r).or(sui_reference(r));
    Executor::WITH_AUTO
        .into_iter()
        .filter_map(|ex| {
            let speedup = reference? / good_median(r, ex)?;
            Some(Speedup { bench: r.bench.name.clone(), engine: ex.name(), speedup })
        })
        .collect()
}

fn geomean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

fn summary_lines(results: &[BenchResult<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    let speedups = |ex: Executor, vm: fn(&BenchResult<'_>) -> Option<f64>| -> Vec<f64> {
        results.iter().filter_map(|r| Some(vm(r)? / good_median(r, ex)?)).collect()
    };
    for ex in Executor::WITH_AUTO {
        let ran = results.iter().filter(|r| row_of(r, ex).is_some()).count();
        let ok = results.iter().filter(|r| row_of(r, ex).is_some_and(|row| row.correct)).count();
        let not_yet = results.iter().filter(|r| r.not_yet.iter().any(|(e, _)| *e == ex)).count();
        if ran + not_yet == 0 {
            continue;
        }
        let over = |vm: fn(&BenchResult<'_>) -> Option<f64>, what: &str| {
            let s = speedups(ex, vm);
            geomean(&s).map(|g| format!("; geometric-mean speedup over the {what} {g:.2}x on {} benchmarks", s.len()))
        };
        let aptos = over(aptos_reference, "Aptos VM").unwrap_or_default();
        let sui = over(sui_reference, "Sui VM").map(|s| s + " (Sui builds)").unwrap_or_default();
        out.push(format!("{}: {ok}/{ran} correct, {not_yet} not yet supported{aptos}{sui}", ex.name()));
    }
    let both: Vec<f64> = results
        .iter()
        .filter_map(|r| Some(good_median(r, Executor::Interp)? / good_median(r, Executor::Jit)?))
        .collect();
    if let Some(g) = geomean(&both) {
        out.push(format!("jit over interp: geometric-mean speedup {g:.2}x on {} benchmarks", both.len()));
    }
    for ex in Executor::WITH_AUTO {
        let ratios: Vec<f64> = results
            .iter()
            .filter_map(|r| {
                let m = r.rows.iter().find(|row| row.executor == ex && row.metered && row.correct)?.stats?;
                Some(m.median_ns as f64 / good_median(r, ex)?)
            })
            .collect();
        if let Some(g) = geomean(&ratios) {
            let max = ratios.iter().copied().fold(0.0, f64::max);
            out.push(format!(
                "{} metered (Aptos) / unmetered: geometric mean {g:.2}x, at most {max:.2}x, on {} benchmarks",
                ex.name(),
                ratios.len()
            ));
        }
    }
    out.push(String::new());
    out
}

// ---- streams ----

const STREAM_COLS: [(&str, usize); 9] = [
    ("stream", 20),
    ("engine", 6),
    ("transactions", 12),
    ("tx/s", 10),
    ("first tx ms", 11),
    ("p50 tx us", 10),
    ("p99 tx us", 10),
    ("warm p50 us", 11),
    ("compile ms", 10),
];

fn stream_header() -> String {
    let names: Vec<&str> = STREAM_COLS.iter().map(|(n, _)| *n).collect();
    columns(&names, &STREAM_COLS)
}

fn stream_line(stream: &Stream, run: &StreamRun) -> String {
    let us = |ns: Option<u64>| ns.map_or("-".to_string(), |n| format!("{:.1}", n as f64 / 1e3));
    let cells = [
        stream.spec.name.clone(),
        run.executor.name().to_string(),
        run.tx_ns.len().to_string(),
        if run.correct { format!("{:.0}", run.tx_per_s()) } else { "FAILED".to_string() },
        run.tx_ns.first().map_or("-".to_string(), |&n| ms(n)),
        us(run.quantile_ns(0.5)),
        us(run.quantile_ns(0.99)),
        us(run.warm_quantile_ns(0.5)),
        run.compile_ns.map_or("-".to_string(), ms),
    ];
    columns(&cells, &STREAM_COLS)
}

/// One object of the `--json` contract for a stream:
/// `{"name", "kind": "stream", "engine", "correct", "transactions",
/// "tx_per_s", "first_tx_ns", "p50_tx_ns", "p99_tx_ns", "compile_ns"}`,
/// plus `"warm_p50_tx_ns"`: the median of the stream's last quarter.
fn stream_json(stream: &Stream, run: &StreamRun) -> Value {
    json!({
        "name": stream.spec.name,
        "kind": "stream",
        "engine": run.executor.name(),
        "correct": run.correct,
        "transactions": run.tx_ns.len(),
        "tx_per_s": run.tx_per_s(),
        "first_tx_ns": run.tx_ns.first(),
        "p50_tx_ns": run.quantile_ns(0.5),
        "p99_tx_ns": run.quantile_ns(0.99),
        "warm_p50_tx_ns": run.warm_quantile_ns(0.5),
        "compile_ns": run.compile_ns,
    })
}
