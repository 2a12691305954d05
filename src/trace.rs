//! What the library prints: one line for a failure that ends the job (always), and
//! with `PMI_DEBUG=1` every wire line, prefixed with the rank and a monotonic time.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use crate::error::PmiError;

static ENABLED: AtomicBool = AtomicBool::new(false);
static RANK: AtomicI64 = AtomicI64::new(-1);
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Which side wrote a wire line.
#[derive(Clone, Copy)]
pub enum Dir {
    Client,
    Server,
}

/// Turn tracing on or off (from `PMI_DEBUG` at `PMI_Init`).
pub fn set_enabled(on: bool) {
    if on {
        EPOCH.get_or_init(Instant::now);
    }
    ENABLED.store(on, Ordering::Relaxed);
}

/// Record this process's rank for the prefix.
pub fn set_rank(rank: i64) {
    RANK.store(rank, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn prefix() -> String {
    let rank = RANK.load(Ordering::Relaxed);
    let rank = if rank < 0 {
        "?".to_string()
    } else {
        rank.to_string()
    };
    let t = EPOCH.get_or_init(Instant::now).elapsed();
    format!("libpmi[{rank}] {}.{:06}", t.as_secs(), t.subsec_micros())
}

/// Write one whole line to stderr in a single `write`, so lines from several threads
/// or ranks never interleave and a process killed right after keeps its line whole.
fn emit(text: String) {
    let mut line = text.into_bytes();
    line.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&line);
}

/// Print one trace line when tracing is on.
pub fn line(args: fmt::Arguments<'_>) {
    if enabled() {
        emit(format!("{} {}", prefix(), args));
    }
}

/// Trace one wire line (`line` includes its newline).
pub fn wire(dir: Dir, line: &[u8]) {
    if enabled() {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let tag = match dir {
            Dir::Client => "C:",
            Dir::Server => "S:",
        };
        self::line(format_args!("{tag} {}", text.escape_ascii()));
    }
}

/// Print one warning line, traced or not.
pub fn warn(cause: fmt::Arguments<'_>) {
    let rank = RANK.load(Ordering::Relaxed);
    emit(format!("libpmi[{rank}]: warning: {cause}"));
}

/// Print one line naming a failure that ends the job, traced or not, and return
/// `PMI_FAIL` for the caller to pass on.
pub fn fatal(cause: fmt::Arguments<'_>) -> PmiError {
    let rank = RANK.load(Ordering::Relaxed);
    emit(if rank < 0 {
        format!("libpmi: {cause}")
    } else {
        format!("libpmi[{rank}]: {cause}")
    });
    PmiError::Fail
}
