//! `0x1::consensus_config::validator_txn_enabled_internal(config_bytes)`:
//! whether the on-chain consensus config (BCS of Aptos's
//! `OnChainConsensusConfig`) enables validator transactions. As Aptos,
//! bytes that are not exactly one such value count as the default config
//! (`V4` with validator transactions off), so the answer is `true` only for
//! a well-formed `V3` / `V4` / `V5` whose `vtxn` is `ValidatorTxnConfig::V1`.
//!
//! The reader follows BCS as the `bcs` crate decodes it: canonical ULEB128
//! lengths and variant indices (at most `u32::MAX`), `bool` and `Option`
//! tags 0 or 1, `usize` as `u64`, maps with strictly increasing keys, and
//! no bytes left over.

use crate::args::{pop, Args, Registrar};
use movejit_runtime::Value;

/// A BCS reader; `None` is any decoding error.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<()> {
        self.take(4).map(|_| ())
    }
    fn u64(&mut self) -> Option<()> {
        self.take(8).map(|_| ())
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    /// A canonical ULEB128 of at most `u32::MAX` (lengths, variant indices).
    fn uleb(&mut self) -> Option<u32> {
        let mut value: u64 = 0;
        for shift in (0..32).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                // Canonical: no trailing zero group (except the value 0 itself).
                if shift > 0 && byte == 0 {
                    return None;
                }
                return u32::try_from(value).ok();
            }
        }
        None
    }
    fn option(&mut self, inner: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        if self.bool()? {
            inner(self)?;
        }
        Some(())
    }
}

/// `ProposerAndVoterConfig`: 3 u64, u32, 2 usize, bool, u32.
fn proposer_and_voter(r: &mut Reader<'_>) -> Option<()> {
    r.u64()?;
    r.u64()?;
    r.u64()?;
    r.u32()?;
    r.u64()?;
    r.u64()?;
    r.bool()?;
    r.u32()
}

/// `LeaderReputationType`: ProposerAndVoter | ProposerAndVoterV2, each a config.
fn leader_reputation(r: &mut Reader<'_>) -> Option<()> {
    match r.uleb()? {
        0 | 1 => proposer_and_voter(r),
        _ => None,
    }
}

/// `ProposerElectionType`: FixedProposer(u32) | RotatingProposer(u32) |
/// LeaderReputation(..) | RoundProposer(map u64 -> address).
fn proposer_election(r: &mut Reader<'_>) -> Option<()> {
    match r.uleb()? {
        0 | 1 => r.u32(),
        2 => leader_reputation(r),
        3 => {
            let n = r.uleb()?;
            let mut last: Option<&[u8]> = None;
            for _ in 0..n {
                let key = r.take(8)?;
                if last.is_some_and(|l| l >= key) {
                    return None;
                }
                last = Some(key);
                r.take(32)?;
            }
            Some(())
        }
        _ => None,
    }
}

/// `ConsensusConfigV1`: bool, u64, u64, ProposerElectionType, usize.
fn config_v1(r: &mut Reader<'_>) -> Option<()> {
    r.bool()?;
    r.u64()?;
    r.u64()?;
    proposer_election(r)?;
    r.u64()
}

/// `ConsensusAlgorithmConfig`: Jolteon { main, bool } | DAG(DagConsensusConfigV1) |
/// JolteonV2 { main, bool, bool }.
fn algorithm(r: &mut Reader<'_>) -> Option<()> {
    match r.uleb()? {
        0 => {
            config_v1(r)?;
            r.bool().map(|_| ())
        }
        1 => {
            // DagConsensusConfigV1: usize, AnchorElectionMode (RoundRobin | LeaderReputation(..)).
            r.u64()?;
            match r.uleb()? {
                0 => Some(()),
                1 => leader_reputation(r),
                _ => None,
            }
        }
        2 => {
            config_v1(r)?;
            r.bool()?;
            r.bool().map(|_| ())
        }
        _ => None,
    }
}

/// `ValidatorTxnConfig`: V0 | V1 { u64, u64 }; whether it is enabled (V1).
fn vtxn(r: &mut Reader<'_>) -> Option<bool> {
    match r.uleb()? {
        0 => Some(false),
        1 => {
            r.u64()?;
            r.u64()?;
            Some(true)
        }
        _ => None,
    }
}

/// `OnChainConsensusConfig` decoded far enough to answer; `None` if malformed.
fn decode(bytes: &[u8]) -> Option<bool> {
    let r = &mut Reader { bytes };
    let enabled = match r.uleb()? {
        0 | 1 => {
            config_v1(r)?;
            false
        }
        v @ 2..=4 => {
            algorithm(r)?;
            let enabled = vtxn(r)?;
            if v >= 3 {
                r.option(|r| r.u64())?;
            }
            if v == 4 {
                r.bool()?;
            }
            enabled
        }
        _ => return None,
    };
    r.bytes.is_empty().then_some(enabled)
}

/// `validator_txn_enabled_internal`: malformed bytes are the default config (disabled).
pub fn validator_txn_enabled(config: &[u8]) -> bool {
    decode(config).unwrap_or(false)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("consensus_config", "validator_txn_enabled_internal", |cx, _, mut args: Args| {
        let bytes = pop(&mut args)?.to_bytes()?;
        cx.gas.charge_native(bytes.len())?;
        Ok(vec![Value::Bool(validator_txn_enabled(&bytes))])
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BCS of `ProposerAndVoterConfig` as in Aptos's `ConsensusConfigV1::default()`.
    fn default_proposer_and_voter() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(1000u64.to_le_bytes());
        b.extend(10u64.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        b.extend(10u32.to_le_bytes());
        b.extend(10u64.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        b.push(1);
        b.extend(5u32.to_le_bytes());
        b
    }

    /// BCS of `ConsensusConfigV1::default()` (leader reputation, ProposerAndVoterV2).
    fn default_v1() -> Vec<u8> {
        let mut b = vec![1];
        b.extend(10u64.to_le_bytes());
        b.extend(40u64.to_le_bytes());
        b.extend([2, 1]);
        b.extend(default_proposer_and_voter());
        b.extend(10u64.to_le_bytes());
        b
    }

    /// `OnChainConsensusConfig::V5` of `default_for_genesis` with `vtxn` and `window_size`.
    fn v5(vtxn: &[u8], window: Option<u64>) -> Vec<u8> {
        let mut b = vec![4, 2];
        b.extend(default_v1());
        b.extend([1, 1]);
        b.extend(vtxn);
        match window {
            None => b.push(0),
            Some(w) => {
                b.push(1);
                b.extend(w.to_le_bytes());
            }
        }
        b.push(1);
        b
    }

    fn vtxn_v1() -> Vec<u8> {
        let mut b = vec![1];
        b.extend(2u64.to_le_bytes());
        b.extend(2_097_152u64.to_le_bytes());
        b
    }

    #[test]
    fn enabled_only_for_well_formed_v3_to_v5_with_vtxn_v1() {
        // V1 { decoupled, back_pressure, exclude_round, RoundProposer({1: .., 2: ..}), max_failed }.
        let mut round_proposer_v1 = vec![0, 1];
        round_proposer_v1.extend(10u64.to_le_bytes());
        round_proposer_v1.extend(40u64.to_le_bytes());
        round_proposer_v1.extend([3, 2]);
        for k in [1u64, 2] {
            round_proposer_v1.extend(k.to_le_bytes());
            round_proposer_v1.extend([7u8; 32]);
        }
        round_proposer_v1.extend(4u64.to_le_bytes());
        let unsorted_map = {
            let mut b = round_proposer_v1.clone();
            // Swap the keys 1 and 2: not canonical.
            b[20] = 2;
            b[60] = 1;
            b
        };
        let mut v3 = vec![2, 0];
        v3.extend(default_v1());
        v3.push(1);
        v3.extend(vtxn_v1());
        let mut v4 = vec![3, 1];
        v4.extend(10u64.to_le_bytes());
        v4.push(0);
        v4.extend(vtxn_v1());
        v4.push(0);
        let rows: Vec<(&str, Vec<u8>, bool)> = vec![
            ("genesis default (V5, vtxn V1)", v5(&vtxn_v1(), None), true),
            ("V5 with a window", v5(&vtxn_v1(), Some(3)), true),
            ("V5, vtxn V0", v5(&[0], None), false),
            ("V1 default", [vec![0], default_v1()].concat(), false),
            ("V3 Jolteon, vtxn V1", v3, true),
            ("V4 DAG round-robin, vtxn V1", v4, true),
            ("V1 round proposer map", round_proposer_v1, false),
            ("trailing byte", [v5(&vtxn_v1(), None), vec![0]].concat(), false),
            ("truncated", v5(&vtxn_v1(), None)[..40].to_vec(), false),
            (
                "bool 2",
                {
                    let mut b = v5(&vtxn_v1(), None);
                    let n = b.len();
                    b[n - 1] = 2;
                    b
                },
                false,
            ),
            ("variant 5", vec![5], false),
            ("empty", vec![], false),
        ];
        for (what, bytes, want) in rows {
            assert_eq!(validator_txn_enabled(&bytes), want, "{what}");
        }
        assert_eq!(decode(&unsorted_map), None, "unsorted map keys");
        // A V1 round-proposer config with an empty map decodes (to disabled).
        assert_eq!(decode(&round_proposer_v1_empty()), Some(false));
    }

    fn round_proposer_v1_empty() -> Vec<u8> {
        [
            vec![0u8, 1],
            10u64.to_le_bytes().to_vec(),
            40u64.to_le_bytes().to_vec(),
            vec![3, 0],
            4u64.to_le_bytes().to_vec(),
        ]
        .concat()
    }

    #[test]
    fn uleb_is_canonical_and_bounded() {
        let read = |b: &[u8]| Reader { bytes: b }.uleb();
        assert_eq!(read(&[0]), Some(0));
        assert_eq!(read(&[0x7f]), Some(127));
        assert_eq!(read(&[0x80, 0x01]), Some(128));
        assert_eq!(read(&[0x80, 0x00]), None);
        assert_eq!(read(&[0xff, 0xff, 0xff, 0xff, 0x0f]), Some(u32::MAX));
        assert_eq!(read(&[0xff, 0xff, 0xff, 0xff, 0x1f]), None);
        assert_eq!(read(&[0x80]), None);
    }
}
