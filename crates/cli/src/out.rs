//! Standard output that a closed pipe does not turn into a panic.
//!
//! `println!` panics when stdout is gone (`movejit bench | head`). The
//! command's output goes through [`outln!`](crate::outln) and
//! [`out!`](crate::out) instead: a closed pipe ends the process quietly with
//! the status a process killed by SIGPIPE reports (128 + 13), any other
//! write error with a message and status 1.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Status of a process that SIGPIPE ended (what shells report for it).
const BROKEN_PIPE_STATUS: i32 = 128 + 13;

/// Writes `args` (and a newline if `newline`) to stdout; see the module doc.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| if newline { out.write_all(b"\n") } else { Ok(()) });
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(BROKEN_PIPE_STATUS);
        }
        eprintln!("movejit: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// `println!` for the command's output (see the module doc).
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*), true) };
}

/// `print!` for the command's output (see the module doc).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*), false) };
}
