//! What the `movejit` command tests share.

use std::process::Command;

/// Runs the `movejit` binary: its exit code (`None`: killed by a signal),
/// stdout and stderr.
pub fn movejit(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_movejit")).args(args).output().expect("runs movejit");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
