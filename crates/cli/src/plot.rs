//! `movejit bench --plot FILE.svg`: one SVG picture of a bench run.
//!
//! - Per call suite, each benchmark's speedup over its reference VM (the
//!   Aptos VM, or the Sui VM for a `NAME@sui` build), one bar per engine, on
//!   a log scale. A suite too large for bars (the conformance suite's 1,784
//!   calls) is drawn as a distribution instead: every engine's speedups
//!   sorted, rank against speedup.
//! - Per transaction stream, each transaction's latency over the stream, one
//!   line per engine: the warm-up curve from interpreted to compiled code.

use plotters::prelude::*;
use std::path::Path;

/// One engine's speedup on one benchmark.
pub struct Speedup {
    pub bench: String,
    pub engine: &'static str,
    /// Reference VM time over the engine's median time.
    pub speedup: f64,
}

/// The speedups of one call suite.
pub struct SuitePlot {
    pub label: String,
    pub speedups: Vec<Speedup>,
}

/// One engine's per-transaction latencies on one stream.
pub struct StreamPlot {
    pub name: String,
    pub engine: &'static str,
    pub tx_ns: Vec<u64>,
}

/// Above this many benchmarks a suite is drawn as a distribution.
const MAX_BARS: usize = 80;
const WIDTH: u32 = 1200;
const BAR_ROW: u32 = 12;
const STREAM_ROW: u32 = 320;
const FONT: &str = "sans-serif";

fn engine_color(engine: &str) -> RGBColor {
    match engine {
        "interp" => RGBColor(0xd6, 0x5f, 0x00),
        "jit" => RGBColor(0x1f, 0x5f, 0xbf),
        _ => RGBColor(0x2a, 0x9d, 0x3f),
    }
}

/// The engines in first-seen order.
fn engines<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A log-scale axis range around `values`, always including 1, with room
/// on the right for the legend.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.filter(|v| *v > 0.0).fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo / 1.5, hi * 3.0)
}

/// An axis value as a short number: `0.5`, `10`, `1000`.
fn short(v: &f64) -> String {
    if *v >= 1.0 || *v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A speedup axis value: `0.5x`, `10x`.
fn times(v: &f64) -> String {
    short(v) + "x"
}

fn suite_height(s: &SuitePlot) -> u32 {
    let benches = engines(s.speedups.iter().map(|p| p.bench.as_str())).len();
    if benches > MAX_BARS {
        420
    } else {
        let lanes = engines(s.speedups.iter().map(|p| p.engine)).len().max(1) as u32;
        110 + benches as u32 * (BAR_ROW * lanes + 4)
    }
}

/// Writes the picture; `Err` carries a printable reason.
pub fn write_svg(path: &Path, suites: &[SuitePlot], streams: &[StreamPlot]) -> Result<(), String> {
    let suites: Vec<&SuitePlot> = suites.iter().filter(|s| !s.speedups.is_empty()).collect();
    let stream_names = engines(streams.iter().map(|s| s.name.as_str()));
    let stream_rows = stream_names.len().div_ceil(2) as u32;
    let height = suites.iter().map(|s| suite_height(s)).sum::<u32>() + stream_rows * STREAM_ROW;
    if height == 0 {
        return Err("nothing to plot (no correct result with a reference figure)".into());
    }
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut rest = root.clone();
    for s in suites {
        let (area, below) = rest.split_vertically(suite_height(s));
        rest = below;
        if engines(s.speedups.iter().map(|p| p.bench.as_str())).len() > MAX_BARS {
            draw_distribution(&area, s)?;
        } else {
            draw_bars(&area, s)?;
        }
    }
    if !stream_names.is_empty() {
        let cells = rest.split_evenly((stream_rows as usize, 2));
        for (name, cell) in stream_names.iter().zip(&cells) {
            let lines: Vec<&StreamPlot> = streams.iter().filter(|s| s.name == *name).collect();
            draw_stream(cell, name, &lines)?;
        }
    }
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn draw_bars(area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>, s: &SuitePlot) -> Result<(), String> {
    let benches = engines(s.speedups.iter().map(|p| p.bench.as_str()));
    let lanes = engines(s.speedups.iter().map(|p| p.engine));
    let n = benches.len();
    let (lo, hi) = log_range(s.speedups.iter().map(|p| p.speedup));
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: speedup over the reference VM (log scale)", s.label), (FONT, 18))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(170)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5f64..(n as f64 - 0.5))
        .map_err(|e| e.to_string())?;
    // Row i from the top is at y = n - 1 - i; labels only at whole rows.
    let label = |y: &f64| {
        let row = y.round();
        let i = n as f64 - 1.0 - row;
        if (y - row).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            benches[i as usize].to_string()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .y_labels(n + 1)
        .y_label_formatter(&label)
        .disable_y_mesh()
        .x_label_formatter(&times)
        .x_desc("speedup over the reference VM")
        .draw()
        .map_err(|e| e.to_string())?;
    let lane_height = 0.8 / lanes.len().max(1) as f64;
    for (k, engine) in lanes.iter().enumerate() {
        let color = engine_color(engine);
        let bars = s.speedups.iter().filter(|p| p.engine == *engine).filter_map(|p| {
            let i = benches.iter().position(|b| *b == p.bench)?;
            let top = (n - 1 - i) as f64 + 0.4 - k as f64 * lane_height;
            Some(Rectangle::new([(lo, top), (p.speedup.max(lo), top - lane_height)], color.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(*engine)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(1.0, -0.5), (1.0, n as f64 - 0.5)], BLACK)))
        .map_err(|e| e.to_string())?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

fn draw_distribution(area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>, s: &SuitePlot) -> Result<(), String> {
    let lanes = engines(s.speedups.iter().map(|p| p.engine));
    let most = lanes.iter().map(|e| s.speedups.iter().filter(|p| p.engine == *e).count()).max().unwrap_or(1);
    let (lo, hi) = log_range(s.speedups.iter().map(|p| p.speedup));
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}: speedup over the reference VM, each engine's calls sorted (log scale)", s.label),
            (FONT, 18),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..most as f64, (lo..hi).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_label_formatter(&short)
        .y_label_formatter(&times)
        .x_desc("calls, least speedup first")
        .y_desc("speedup")
        .draw()
        .map_err(|e| e.to_string())?;
    for engine in lanes {
        let color = engine_color(engine);
        let mut v: Vec<f64> = s.speedups.iter().filter(|p| p.engine == engine).map(|p| p.speedup).collect();
        v.sort_by(f64::total_cmp);
        chart
            .draw_series(LineSeries::new(v.into_iter().enumerate().map(|(i, x)| (i as f64, x)), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(engine)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

fn draw_stream(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    name: &str,
    lines: &[&StreamPlot],
) -> Result<(), String> {
    let us = |ns: u64| ns as f64 / 1e3;
    let most = lines.iter().map(|l| l.tx_ns.len()).max().unwrap_or(1).max(2);
    let (lo, hi) = lines
        .iter()
        .flat_map(|l| l.tx_ns.iter().map(|&n| us(n)))
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo <= hi { (lo / 1.3, hi * 1.3) } else { (1.0, 10.0) };
    let mut chart = ChartBuilder::on(area)
        .caption(format!("stream {name}: latency per transaction (µs, log scale)"), (FONT, 16))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..(most - 1) as f64, (lo..hi).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_label_formatter(&short)
        .y_label_formatter(&short)
        .x_desc("transaction")
        .y_desc("µs")
        .draw()
        .map_err(|e| e.to_string())?;
    for line in lines {
        let color = engine_color(line.engine);
        let points = line.tx_ns.iter().enumerate().map(|(i, &n)| (i as f64, us(n).max(lo)));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(1)))
            .map_err(|e| e.to_string())?
            .label(line.engine)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_bars_distribution_and_streams() {
        let dir = std::env::temp_dir().join(format!("movejit-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.svg");
        let small = SuitePlot {
            label: "small".into(),
            speedups: ["a", "b@sui"]
                .iter()
                .flat_map(|b| {
                    [("interp", 2.0), ("jit", 50.0)].map(|(e, x)| Speedup {
                        bench: b.to_string(),
                        engine: e,
                        speedup: x,
                    })
                })
                .collect(),
        };
        let big = SuitePlot {
            label: "big".into(),
            speedups: (0..200)
                .map(|i| Speedup { bench: format!("c{i}"), engine: "jit", speedup: 1.0 + i as f64 })
                .collect(),
        };
        let streams = [("s", "interp"), ("s", "jit"), ("t", "auto")].map(|(n, e)| StreamPlot {
            name: n.into(),
            engine: e,
            tx_ns: vec![90_000, 5_000, 4_000],
        });
        write_svg(&path, &[small, big], &streams).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for text in ["b@sui", "stream s", "stream t", "big: speedup", "interp", "jit", "auto"] {
            assert!(svg.contains(text), "{text} missing from the picture");
        }
        // Nothing to draw is an error, not an empty file.
        assert!(write_svg(&dir.join("q.svg"), &[], &[]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
