//! The measuring method of the reference figures: one warm-up call, then N
//! timed calls; every call's returns are checked against the expected
//! bytes; median with the min–max spread.

use crate::executor::Prepared;
use movejit_format::StatusCode;

/// Median, minimum and maximum of some durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Stats {
    /// `None` for no samples. The median of an even count is the mean of
    /// the two middle samples.
    pub fn of(samples: &[u64]) -> Option<Stats> {
        let mut s = samples.to_vec();
        s.sort_unstable();
        let n = s.len();
        let (min_ns, max_ns) = (*s.first()?, *s.last()?);
        let median_ns =
            if n % 2 == 1 { s[n / 2] } else { s[n / 2 - 1] / 2 + s[n / 2] / 2 + (s[n / 2 - 1] % 2 + s[n / 2] % 2) / 2 };
        Some(Stats { median_ns, min_ns, max_ns })
    }
}

/// The outcome of measuring one prepared program.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Durations of the timed calls (fewer than asked when a call failed:
    /// measuring stops at the first wrong or failed call, whose time is kept).
    pub samples: Vec<u64>,
    /// Every call returned the expected bytes.
    pub correct: bool,
    /// What the first wrong call returned, or why it failed.
    pub failure: Option<String>,
    /// The status of the failed call, if one failed.
    pub status: Option<StatusCode>,
}

impl Measurement {
    pub fn stats(&self) -> Option<Stats> {
        Stats::of(&self.samples)
    }
}

/// Warm-up plus `iters` timed calls of `p`, checking each against `expect`;
/// `progress` is told after every call (warm-up included).
pub fn measure(p: &mut dyn Prepared, expect: &[Vec<u8>], iters: usize, mut progress: impl FnMut()) -> Measurement {
    let mut samples = Vec::with_capacity(iters);
    for i in 0..=iters {
        let call = p.call();
        progress();
        let failure = match &call.returns {
            Ok(r) if r.as_slice() == expect => None,
            Ok(r) => Some(format!(
                "wrong result: got [{}], expected [{}]",
                r.iter().map(hex::encode).collect::<Vec<_>>().join(", "),
                expect.iter().map(hex::encode).collect::<Vec<_>>().join(", ")
            )),
            Err(e) => Some(e.clone()),
        };
        if i > 0 || failure.is_some() {
            samples.push(call.ns);
        }
        if failure.is_some() {
            return Measurement { samples, correct: false, failure, status: call.status };
        }
    }
    Measurement { samples, correct: true, failure: None, status: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        type Row<'a> = (&'a [u64], Option<(u64, u64, u64)>);
        let table: &[Row] = &[
            (&[], None),
            (&[7], Some((7, 7, 7))),
            (&[5, 1, 3], Some((3, 1, 5))),
            (&[4, 1, 3, 10], Some((3, 1, 10))),
            (&[u64::MAX, u64::MAX - 2], Some((u64::MAX - 1, u64::MAX - 2, u64::MAX))),
        ];
        for (samples, want) in table {
            let got = Stats::of(samples).map(|s| (s.median_ns, s.min_ns, s.max_ns));
            assert_eq!(got, *want, "{samples:?}");
        }
    }
}
