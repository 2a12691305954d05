//! What the library prints: one line for a failure that ends the job (always), and
//! with `PMI_DEBUG=1` every wire line, prefixed with the rank and a monotonic time.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::error::PmiError;

static ENABLED: AtomicBool = AtomicBool::new(false);
static RANK: AtomicI64 = AtomicI64::new(-1);
static EPOCH: OnceLock<Instant> = OnceLock::new();
/// Whether `fatal` keeps its lines for `take_fatal` instead of printing them (a program
/// such as `pmi-probe` that reports them itself; never on in the C libraries, whose
/// `fatal` may run where allocating is not safe).
static KEEP: AtomicBool = AtomicBool::new(false);
static KEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());

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

/// `libpmi[RANK] SECONDS.MICROS`, written without allocating.
struct Prefix;

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = EPOCH.get_or_init(Instant::now).elapsed();
        match RANK.load(Ordering::Relaxed) {
            rank if rank < 0 => f.write_str("libpmi[?] ")?,
            rank => write!(f, "libpmi[{rank}] ")?,
        }
        write!(f, "{}.{:06}", t.as_secs(), t.subsec_micros())
    }
}

/// One line built on the stack, so that printing needs no allocation and no lock and
/// works inside a signal handler (a PMI call from one, `PMI_Abort` in a `SIGTERM`
/// handler). A line longer than the buffer is written out in pieces as it fills.
struct Line {
    stack: [u8; 1024],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            stack: [0; 1024],
            len: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.len == self.stack.len() {
                write_stderr(&self.stack);
                self.len = 0;
            }
            let n = bytes.len().min(self.stack.len() - self.len);
            self.stack[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
    }

    /// Write the line and its newline to stderr: one `write(2)` unless it is longer
    /// than the buffer.
    fn emit(mut self) {
        self.push(b"\n");
        write_stderr(&self.stack[..self.len]);
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// Write one whole line to stderr in a single `write`, so lines from several threads
/// or ranks never interleave and a process killed right after keeps its line whole.
fn emit(args: fmt::Arguments<'_>) {
    let mut line = Line::new();
    let _ = fmt::write(&mut line, args);
    line.emit();
}

/// Write `bytes` as one line on stderr (a newline is added unless it ends in one),
/// traced or not: `PMI_Abort`'s message.
pub fn raw_line(bytes: &[u8]) {
    let mut line = Line::new();
    line.push(bytes.strip_suffix(b"\n").unwrap_or(bytes));
    line.emit();
}

/// Print one trace line when tracing is on.
pub fn line(args: fmt::Arguments<'_>) {
    if enabled() {
        emit(format_args!("{Prefix} {args}"));
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

/// Print one warning line, traced or not: `libpmi[RANK]: warning: ...`, or
/// `libpmi: warning: ...` before the rank is known (as [`fatal`]).
pub fn warn(cause: fmt::Arguments<'_>) {
    let rank = RANK.load(Ordering::Relaxed);
    if rank < 0 {
        emit(format_args!("libpmi: warning: {cause}"));
    } else {
        emit(format_args!("libpmi[{rank}]: warning: {cause}"));
    }
}

/// Print one line naming a failure that ends the job, traced or not, and return
/// `PMI_FAIL` for the caller to pass on.
pub fn fatal(cause: fmt::Arguments<'_>) -> PmiError {
    let rank = RANK.load(Ordering::Relaxed);
    if KEEP.load(Ordering::Relaxed) {
        // (Never waits: a line that meets the lock taken is printed instead.)
        if let Ok(mut kept) = KEPT.try_lock() {
            kept.push(cause.to_string());
            return PmiError::Fail;
        }
    }
    if rank < 0 {
        emit(format_args!("libpmi: {cause}"));
    } else {
        emit(format_args!("libpmi[{rank}]: {cause}"));
    }
    PmiError::Fail
}

/// Keep the lines `fatal` would print from now on, for [`take_fatal`], instead of
/// printing them.
pub fn keep_fatal() {
    KEEP.store(true, Ordering::Relaxed);
}

/// The lines `fatal` kept since the last call, without their `libpmi[R]: ` prefix
/// (empty unless [`keep_fatal`] was called).
pub fn take_fatal() -> Vec<String> {
    match KEPT.lock() {
        Ok(mut kept) => std::mem::take(&mut *kept),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    }
}

/// Write `bytes` to stderr, all of them, with no lock and no allocation (callable from a
/// signal handler) and never raising `SIGPIPE`: when the launcher's stderr reader is gone
/// the write fails with `EPIPE`, and the process goes on. `SIGPIPE` is blocked in this
/// thread for the write and a `SIGPIPE` it raised is taken back (one already pending is
/// left alone).
pub fn write_stderr(bytes: &[u8]) {
    // SAFETY: sigset_t is a plain C struct that sigemptyset initialises.
    let mut pipe: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut pending: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: all three sets are valid and writable; the calls are async-signal-safe.
    let pending_before = unsafe {
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        libc::sigpending(&mut pending);
        libc::sigismember(&pending, libc::SIGPIPE) == 1
    };
    let mut raised = false;
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: `rest` is a live slice of `rest.len()` bytes.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            rest = &rest[n as usize..];
            continue;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EPIPE) => raised = true,
            _ => {}
        }
        break;
    }
    // SAFETY: `pipe` and `old` are the sets filled above; a zero timeout only polls.
    unsafe {
        if raised && !pending_before {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
}
