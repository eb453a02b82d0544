//! `movejit diff`: differential testing of the JIT against the interpreter
//! on generated programs and on the public functions of given modules (see
//! movejit-diff). Exit 0 when nothing diverged, 1 on any divergence, 2 when
//! the run could not be set up.

use indicatif::{ProgressBar, ProgressStyle};
use movejit_diff::args::{cases_for, flavour_of, load_given, module_files, Given};
use movejit_diff::driver::Stats;
use movejit_diff::minimize::minimize;
use movejit_diff::rng::Rng;
use movejit_diff::{run_both_with, Case, Divergence, JitVerdict, Options, Schedule};
use movejit_format::StatusFlavour;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Module files (.mv) and folders of them: every public or entry
    /// function runs with generated arguments.
    paths: Vec<PathBuf>,
    /// Seed of the generated programs and arguments.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Generated programs to run (default 1000 without PATHs, 0 with).
    #[arg(long, conflicts_with = "time")]
    count: Option<u64>,
    /// Run generated programs for this many seconds instead of --count.
    #[arg(long)]
    time: Option<u64>,
    /// Argument sets per function of the given modules.
    #[arg(long, default_value_t = 3)]
    rounds: u64,
    /// Tiny-gas reruns per case (budgets spread over the gas used).
    #[arg(long, default_value_t = 12)]
    gas_points: u64,
    /// Gas budget of the first run of each case, in the schedule's internal
    /// units (default: 5,000,000 under `unit`; 2,000,000 external units
    /// under `aptos`).
    #[arg(long)]
    budget: Option<u64>,
    /// Gas schedule of Aptos-flavoured cases, charged identically by every
    /// executor (Sui cases use `unit`): tiny-gas reruns then run out at
    /// Aptos's charges, memory quota and module loads too.
    #[arg(long, value_enum, default_value = "unit")]
    gas_schedule: crate::run::GasScheduleChoice,
    /// Print divergences without minimizing them.
    #[arg(long)]
    no_minimize: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Print the opcode-by-opcode coverage table too.
    #[arg(long)]
    coverage: bool,
    /// Benchmark suites (folders holding a benchmarks.jsonl, e.g.
    /// ../shared/bench): every benchmark and its Sui build, with tiny-gas
    /// reruns; results must also be the manifest's.
    #[arg(long, value_name = "DIR")]
    suite: Vec<PathBuf>,
    /// Threads running generated programs (each program is the same
    /// whatever thread runs it, so results do not depend on this).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: u64,
    /// The flavour the given modules run as (default: Sui when any of them
    /// carries Sui's flavour, else Aptos; unflavoured v5/v6 modules run as
    /// either); with it, generated programs are all of that flavour (Sui:
    /// generated modules only, no single-instruction programs).
    #[arg(long, value_enum)]
    flavour: Option<crate::run::FlavourChoice>,
    /// Which size of each benchmark --suite runs.
    #[arg(long, value_enum, default_value = "smallest")]
    size: crate::bench::Size,
}

fn bar(len: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let b = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    b.set_style(style);
    b
}

/// Loads the given modules into link sets (`movejit_diff::args::load_given`,
/// each path's files in `module_files`'s order).
fn load(paths: &[PathBuf], forced: Option<StatusFlavour>) -> Result<(StatusFlavour, Given), String> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(module_files(p).map_err(|e| format!("{}: {e}", p.display()))?);
    }
    let flavour = flavour_of(files.iter().map(|(_, b)| b.as_slice()), forced);
    Ok((flavour, load_given(&files, flavour)))
}

fn print_path_divergence(case: &Case, d: &Divergence) {
    movejit_cli::outln!("\n=== divergence: {} — {}", case.name, case.describe());
    movejit_cli::outln!("{d}");
    if let Some(m) = case.modules.iter().find(|m| m.name() == case.module && *m.address() == case.address) {
        match movejit_masm::disassemble_module(m) {
            Ok(t) => movejit_cli::outln!("--- module (not minimized):\n{t}"),
            Err(e) => movejit_cli::outln!("--- module could not be disassembled: {e}"),
        }
    }
}

/// Tiny-gas reruns of every benchmark of the suite in `dir` (and of its Sui
/// build): the number of divergences and wrong results.
fn run_suite(dir: &std::path::Path, size: crate::bench::Size, opts: &Options, quiet: bool) -> Result<usize, String> {
    use movejit_benches::manifest::Suite;
    let suite = Suite::load(dir).map_err(|e| e.to_string())?;
    let benches: Vec<_> = suite.benchmarks.iter().flat_map(|b| b.with_sui_variant()).collect();
    // Benchmarks use far more gas than generated programs.
    let opts = Options { full_budget: opts.full_budget.max(1 << 40), ..opts.clone() };
    let pb = bar(Some(benches.len() as u64), quiet);
    let start = Instant::now();
    let (mut bad, mut runs, mut oog) = (0usize, 0u64, 0u64);
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    movejit_cli::outln!(
        "suite {} ({} size), tiny-gas points {}:",
        suite.label(),
        crate::bench::size_name(size),
        opts.gas_points
    );
    for b in &benches {
        pb.set_message(b.name.clone());
        let case = match size {
            crate::bench::Size::Reference => &b.case,
            crate::bench::Size::Smallest => b.smallest_case(),
        };
        let t = Instant::now();
        let line = match suite.program(b, case).map_err(|e| e.to_string()).and_then(|p| Ok((p.diff_case(&b.name)?, p)))
        {
            Err(e) => {
                bad += 1;
                format!("{:<22} FAILED to load: {e}", b.name)
            }
            Ok((case, program)) => match run_both_with(&case, &opts) {
                Err(d) => {
                    bad += 1;
                    format!("{:<22} DIVERGENCE {d}", b.name)
                }
                Ok(c) => {
                    runs += c.runs;
                    oog += c.out_of_gas;
                    let (key, how) = match &c.jit {
                        JitVerdict::Agreed => ("jit", "jit".to_string()),
                        JitVerdict::Mixed(r) => ("auto", format!("auto (jit: {r})")),
                        JitVerdict::Unsupported(r) => ("interp only", format!("interp only ({r})")),
                        JitVerdict::Rejected(r) => ("module rejected", format!("module rejected ({r})")),
                    };
                    *counts.entry(key).or_default() += 1;
                    let ok =
                        c.outcome.status == movejit_format::StatusCode::EXECUTED && c.outcome.returns == program.expect;
                    let verdict = if ok {
                        String::new()
                    } else if c.outcome.status == movejit_format::StatusCode::MISSING_DEPENDENCY {
                        "  (not runnable: natives the harness does not register)".to_string()
                    } else {
                        bad += 1;
                        format!("  WRONG RESULT {}", c.outcome)
                    };
                    format!(
                        "{:<22} gas {:>12} {:>4} runs {:>4} out of gas {:>7.2}s  {how}{verdict}",
                        b.name,
                        c.outcome.gas_used,
                        c.runs,
                        c.out_of_gas,
                        t.elapsed().as_secs_f64()
                    )
                }
            },
        };
        pb.suspend(|| movejit_cli::outln!("  {line}"));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let how: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    movejit_cli::outln!(
        "suite: {} benchmarks in {:.1}s; compared on: {}; {runs} executions ({oog} out of gas); divergences or wrong results {bad}",
        benches.len(),
        start.elapsed().as_secs_f64(),
        how.join(", ")
    );
    Ok(bad)
}

pub fn run(a: Args) -> ExitCode {
    let (schedule, default_budget) = match a.gas_schedule {
        crate::run::GasScheduleChoice::Unit => (Schedule::Unit, 5_000_000),
        crate::run::GasScheduleChoice::Aptos => {
            (Schedule::Aptos, movejit_engine::runtime::gas::aptos::AptosPricing::v50().limits.to_internal(2_000_000))
        }
    };
    let opts = Options {
        full_budget: a.budget.unwrap_or(default_budget),
        gas_points: a.gas_points,
        schedule,
        ..Options::default()
    };
    let flavour = a.flavour.map(|f| match f {
        crate::run::FlavourChoice::Aptos => StatusFlavour::Aptos,
        crate::run::FlavourChoice::Sui => StatusFlavour::Sui,
    });
    let start = Instant::now();
    let mut diverged = 0usize;

    // Given modules.
    if !a.paths.is_empty() {
        let (flavour, given) = match load(&a.paths, flavour) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let mut rng = Rng::new(a.seed);
        let (mut cases, mut skipped) = (0u64, 0u64);
        // Cases are made module by module (each holds its link set): all of
        // them at once would hold the set once per case.
        let tested: u64 = given.sets.iter().map(|s| s.tested.len() as u64).sum();
        let pb = bar(Some(a.rounds * tested), a.quiet);
        let (mut compared, mut runs, mut oog) = (0u64, 0u64, 0u64);
        let mut mixed: std::collections::BTreeMap<String, u64> = Default::default();
        let mut unsupported: std::collections::BTreeMap<String, u64> = Default::default();
        let mut statuses: std::collections::BTreeMap<&str, u64> = Default::default();
        for _ in 0..a.rounds {
            for set in &given.sets {
                for &i in &set.tested {
                    let (module_cases, s) = cases_for(&set.modules, i, flavour, &mut rng);
                    skipped += s;
                    cases += module_cases.len() as u64;
                    for case in &module_cases {
                        match run_both_with(case, &opts) {
                            Ok(c) => {
                                *statuses.entry(c.outcome.status.name()).or_default() += 1;
                                runs += c.runs;
                                oog += c.out_of_gas;
                                match c.jit {
                                    JitVerdict::Agreed => compared += 1,
                                    JitVerdict::Mixed(r) => *mixed.entry(r).or_default() += 1,
                                    JitVerdict::Unsupported(r) => *unsupported.entry(r).or_default() += 1,
                                    JitVerdict::Rejected(r) => {
                                        *unsupported.entry(format!("module rejected: {r}")).or_default() += 1
                                    }
                                }
                            }
                            Err(d) => {
                                diverged += 1;
                                pb.suspend(|| print_path_divergence(case, &d));
                            }
                        }
                    }
                    pb.inc(1);
                }
            }
        }
        pb.finish_and_clear();
        movejit_cli::outln!(
            "modules: {} verified ({} link sets), {} rejected or unreadable; cases: {cases} ({skipped} functions skipped: argument types not generated)",
            given.verified(),
            given.sets.len(),
            given.rejected.len(),
        );
        movejit_cli::outln!(
            "compared on JIT {compared}, mixed (jit refused, auto partly compiled) {}, interpreter only {}; {runs} executions compared ({oog} out of gas); divergences {diverged}",
            mixed.values().sum::<u64>(),
            unsupported.values().sum::<u64>()
        );
        let statuses: Vec<String> = statuses.iter().map(|(s, n)| format!("{s} {n}")).collect();
        movejit_cli::outln!("  full-budget outcomes: {}", statuses.join(", "));
        let mut why: std::collections::BTreeMap<&str, (u64, &str)> = Default::default();
        for (label, reason) in &given.rejected {
            why.entry(reason).or_insert((0, label)).0 += 1;
        }
        for (reason, (n, label)) in &why {
            movejit_cli::outln!("  rejected    {n:>7}  {reason} (e.g. {label})");
        }
        for (r, n) in &mixed {
            movejit_cli::outln!("  mixed       {n:>7}  jit: {r}");
        }
        for (r, n) in &unsupported {
            movejit_cli::outln!("  interp only {n:>7}  {r}");
        }
    }

    // Benchmark suites.
    for dir in &a.suite {
        match run_suite(dir, a.size, &opts, a.quiet) {
            Ok(bad) => diverged += bad,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }

    // Generated programs.
    let given = !a.paths.is_empty() || !a.suite.is_empty();
    let count = a.count.unwrap_or(if !given && a.time.is_none() { 1000 } else { 0 });
    let deadline = a.time.map(|s| start + Duration::from_secs(s));
    if count > 0 || deadline.is_some() {
        let pb = bar(if deadline.is_some() { None } else { Some(count) }, a.quiet);
        let gen_start = Instant::now();
        let next = std::sync::atomic::AtomicU64::new(0);
        let found = std::sync::atomic::AtomicUsize::new(0);
        let worker = || {
            let mut stats = Stats::default();
            loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if deadline.is_none() && i >= count {
                    break;
                }
                let before = stats.divergences.len();
                stats.run_generated_of(a.seed, i, &opts, flavour);
                if stats.divergences.len() > before {
                    let n = found.fetch_add(stats.divergences.len() - before, std::sync::atomic::Ordering::Relaxed);
                    pb.set_message(format!("{} divergences", n + stats.divergences.len() - before));
                }
                pb.inc(1);
            }
            stats
        };
        let mut stats = Stats::default();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..a.jobs).map(|_| scope.spawn(worker)).collect();
            for h in handles {
                match h.join() {
                    Ok(s) => stats.merge(s),
                    Err(_) => {
                        eprintln!("error: a worker thread panicked");
                        diverged += 1;
                    }
                }
            }
        });
        stats.divergences.sort_by_key(|f| f.name.clone());
        pb.finish_and_clear();
        let i = stats.programs + stats.single_instruction;
        movejit_cli::outln!("seed {}: {} programs in {:.1}s", a.seed, i, gen_start.elapsed().as_secs_f64());
        movejit_cli::out!("{}", stats.summary());
        if a.coverage {
            movejit_cli::out!("{}", stats.generated.table());
        }
        for f in stats.divergences.iter().take(5) {
            movejit_cli::outln!("\n=== divergence: {} — {}", f.name, f.case.describe());
            movejit_cli::outln!("{}", f.divergence);
            let shown = if a.no_minimize { None } else { minimize(&f.program, f.call, &opts) };
            match shown {
                Some((text, d)) => movejit_cli::outln!("--- minimized module:\n{text}--- minimized result:\n{d}"),
                None => movejit_cli::outln!("--- module:\n{}", f.program.units.join("\n")),
            }
        }
        diverged += stats.divergences.len();
    }
    movejit_cli::outln!("total time {:.1}s", start.elapsed().as_secs_f64());
    if diverged > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
