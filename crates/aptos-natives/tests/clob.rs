//! The `clob` benchmark of `../shared/bench` (an order book over tables,
//! objects, fungible assets and events of the real Aptos framework) on the
//! executors with these natives: every size in the manifest must return
//! the checksum the real Aptos VM returned.

mod common;

use common::{run, shared, EXECUTORS};

#[test]
fn clob_returns_the_aptos_vm_checksum_at_every_size() {
    let manifest = std::fs::read_to_string(shared().join("bench/benchmarks.jsonl")).expect("bench manifest");
    let entry: serde_json::Value = manifest
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["name"] == "clob")
        .expect("clob entry");
    let modules: Vec<_> = entry["modules"]
        .as_array()
        .expect("modules")
        .iter()
        .map(|m| shared().join("bench").join(m.as_str().expect("module path")))
        .collect();
    let function = entry["function"].as_str().expect("function");
    // (args, expected returns): the reference size, then every scaling size.
    let mut cases = vec![(entry["args"].clone(), entry["expect_returns"].clone())];
    for s in entry["scaling"].as_array().into_iter().flatten() {
        cases.push((s["args"].clone(), s["expect_returns"].clone()));
    }
    assert!(cases.len() >= 3, "clob sizes in the manifest");
    for (args, expected) in cases {
        let hex_list = |v: &serde_json::Value| -> Vec<Vec<u8>> {
            v.as_array()
                .expect("hex list")
                .iter()
                .map(|h| hex::decode(h.as_str().expect("hex")).expect("hex"))
                .collect()
        };
        for (_, kind) in EXECUTORS {
            match run(kind, &modules, function, &hex_list(&args)) {
                Ok(returns) => assert_eq!(returns, hex_list(&expected), "clob {args} ({kind:?})"),
                Err(e) => panic!("clob {args} failed ({kind:?}): {e:?}"),
            }
        }
    }
}
