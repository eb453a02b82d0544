//! The stream suite of `benches/streams` runs correctly on every executor
//! (shortened to a few dozen transactions) and every executor ends the
//! stream in the same storage state.

use movejit_benches::executor::Executor;
use movejit_benches::stream::load_streams;
use std::path::Path;

#[test]
fn streams_agree_on_every_executor() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("streams");
    let streams = load_streams(&dir).expect("benches/streams loads");
    assert!(!streams.is_empty(), "benches/streams has streams");
    for mut stream in streams {
        stream.spec.transactions = stream.spec.transactions.min(40);
        let runs: Vec<_> = Executor::WITH_AUTO.iter().map(|&ex| stream.run(ex, &stream.config(), || {})).collect();
        for run in &runs {
            assert!(run.correct, "{} on {}: {:?}", stream.spec.name, run.executor.name(), run.failure);
            assert_eq!(run.tx_ns.len() as u64, stream.spec.transactions);
            assert_eq!(run.state_digest, runs[0].state_digest, "{} on {}", stream.spec.name, run.executor.name());
        }
    }
}
