//! Every real module in the shared corpus decodes (with the bounds check)
//! and serializes back to exactly the bytes it came from.

mod common;

use movejit_format::{decode_module, decode_script, serialize_module, serialize_script, Flavour};

/// (folder under shared/, number of .mv files expected there)
const FOLDERS: &[(&str, usize)] = &[
    ("corpus/aptos", 186),
    ("corpus/aptos-workloads", 22),
    ("corpus/aptos-calibration", 67),
    ("corpus/sui", 401),
    ("corpus/versions", 103),
    ("bench/modules", 74),
    ("bench/modules_sui", 22),
    ("conformance/aptos/modules", 47),
    ("conformance/sui", 570),
];

#[derive(Default, Debug)]
struct Tally {
    modules: usize,
    scripts: usize,
    flavours: [usize; 3],
}

fn round_trip_folder(folder: &str) -> Result<Tally, Vec<String>> {
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for path in common::mv_files(&common::shared_dir().join(folder)) {
        let bytes = std::fs::read(&path).expect("read corpus file");
        let name = path.display();
        let (flavour, again) = if common::is_script(&path) {
            match decode_script(&bytes) {
                Ok(s) => {
                    tally.scripts += 1;
                    (s.flavour, serialize_script(&s))
                }
                Err(e) => {
                    failures.push(format!("{name}: decode_script: {e}"));
                    continue;
                }
            }
        } else {
            match decode_module(&bytes) {
                Ok(m) => {
                    tally.modules += 1;
                    (m.flavour, serialize_module(&m))
                }
                Err(e) => {
                    failures.push(format!("{name}: decode_module: {e}"));
                    continue;
                }
            }
        };
        tally.flavours[flavour as usize] += 1;
        if again != bytes {
            let first_diff = again.iter().zip(&bytes).position(|(a, b)| a != b).unwrap_or(again.len().min(bytes.len()));
            failures.push(format!(
                "{name}: re-serialized bytes differ at offset {first_diff} (len {} vs {})",
                again.len(),
                bytes.len()
            ));
        }
    }
    if failures.is_empty() {
        Ok(tally)
    } else {
        Err(failures)
    }
}

#[test]
fn every_corpus_module_decodes_and_round_trips_byte_for_byte() {
    let mut problems = Vec::new();
    for &(folder, expected) in FOLDERS {
        match round_trip_folder(folder) {
            Ok(t) => {
                println!(
                    "{folder}: {} modules + {} scripts round-tripped (common {}, aptos {}, sui {})",
                    t.modules,
                    t.scripts,
                    t.flavours[Flavour::Common as usize],
                    t.flavours[Flavour::Aptos as usize],
                    t.flavours[Flavour::Sui as usize]
                );
                if t.modules + t.scripts != expected {
                    problems.push(format!("{folder}: expected {expected} files, found {}", t.modules + t.scripts));
                }
            }
            Err(f) => problems.extend(f),
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn corpus_flavours_are_what_the_version_words_say() {
    // Aptos framework: v9/v10 Aptos words; Sui system packages: v6 common or v7 Sui.
    for path in common::mv_files(&common::shared_dir().join("corpus/aptos")) {
        let m = decode_module(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(m.flavour, Flavour::Aptos, "{}", path.display());
        assert!(m.version == 9 || m.version == 10, "{}", path.display());
    }
    let mut sui_v7 = 0;
    for path in common::mv_files(&common::shared_dir().join("corpus/sui")) {
        let m = decode_module(&std::fs::read(&path).unwrap()).unwrap();
        match m.flavour {
            Flavour::Sui => {
                assert_eq!(m.version, 7);
                sui_v7 += 1;
            }
            Flavour::Common => assert_eq!(m.version, 6, "{}", path.display()),
            Flavour::Aptos => panic!("{} decoded as Aptos", path.display()),
        }
    }
    // The spec notes 5 distinct v7 modules (coin_registry, derived_object).
    assert_eq!(sui_v7, 5);
    for v in 5..=10u32 {
        for path in common::mv_files(&common::shared_dir().join(format!("corpus/versions/v{v}"))) {
            let m = decode_module(&std::fs::read(&path).unwrap()).unwrap();
            assert_eq!(m.version, v, "{}", path.display());
            let want = if v <= 6 { Flavour::Common } else { Flavour::Aptos };
            assert_eq!(m.flavour, want, "{}", path.display());
        }
    }
}
