//! The lifecycle both APIs share: init (start the backend the launch names, once),
//! whether initialized, finalize, and abort; and the one piece of process-wide state
//! beneath them: where the library is in its lifecycle, behind one lock that serialises
//! the wire, and what may be read without that lock (rank, size, the maxima, the fd an
//! abort writes to). Each front's `api/lifecycle.rs` (`libpmi`, `libpmi2`) only converts
//! arguments around these.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use libc::c_char;

use crate::api::{Api, Maxes, Op};
use crate::backend::{BarrierStep, Identity};
use crate::backends::{self, pmix};
use crate::client::{BarrierGroup, Client};
use crate::conn::Conn;
use crate::error::{PmiError, PmiResult};
use crate::ffi;
use crate::launch::{self, Launch};
use crate::sibling;
use crate::trace;
use crate::wire::{pmi1, pmi2};

/// Initialize once: later calls return the same identity without traffic; a call after
/// finalize fails. `call` names the export, for messages.
pub fn init(api: Api, call: &str) -> PmiResult<Identity> {
    // Before the lock: a fork by another thread while init holds it must be seen.
    watch_forks();
    let mut state = lock()?;
    match &*state {
        Lifecycle::Ready(client) => return Ok(client.identity()),
        Lifecycle::Finalized => {
            return Err(trace::fatal(format_args!(
                "{call}: called again after the library was finalized"
            )))
        }
        Lifecycle::Uninit => {}
    }
    let lookup = |name: &str| std::env::var_os(name);
    trace::set_enabled(launch::debug_requested(&lookup));
    let refuse = |why: String| trace::fatal(format_args!("{call}: {why}"));
    let timeout = launch::timeout(&lookup).map_err(refuse)?;
    let launch::Decision {
        launch,
        set_aside,
        fd_fault,
    } = launch::decide(&lookup);
    if let Some(why) = set_aside {
        trace::warn(format_args!(
            "{call}: {why} (an outer job's, left in the environment): using the launch \
             PMI_PORT or the PMIx server names"
        ));
    }
    let launch = launch.map_err(refuse)?;
    // One connection, one library: the other PMI library of this process, initialized,
    // owns PMI_FD (or PMI_PORT's PMI_ID); under PMIx the two would share one PMIx client
    // and each put its own key directory under the same keys (libpmi:dir:F).
    if !matches!(launch, Launch::Singleton) {
        if let Some(sibling) = sibling::initialized_sibling(api) {
            return Err(refuse(format!(
                "{sibling} is initialized in this process and owns its connection to the \
                 process manager; one process can use one PMI library"
            )));
        }
    }
    if let Some(why) = fd_fault {
        return Err(refuse(why));
    }
    let mut client = Client::new(backends::start(api, launch, timeout)?, api);
    client.adopt_connection().map_err(refuse)?;
    let id = client.identity();
    set_ready(id.rank, id.size, client.maxes(), client.raw_fd());
    *state = Lifecycle::Ready(Box::new(client));
    Ok(id)
}

/// Have `state` told when this process forks: a child's PMI calls must not touch the
/// parent's connection or wait for a lock the parent held at the fork. Once per process;
/// a second caller waits until the handler is registered. (Three states in an atomic
/// rather than `std::sync::Once`: one code page fewer to fault in during a cold
/// `PMI_Init`.)
fn watch_forks() {
    use std::sync::atomic::{AtomicU8, Ordering};
    const NOT_YET: u8 = 0;
    const REGISTERING: u8 = 1;
    const DONE: u8 = 2;
    static WATCH: AtomicU8 = AtomicU8::new(NOT_YET);
    extern "C" fn in_child() {
        mark_forked();
    }
    match WATCH.compare_exchange(NOT_YET, REGISTERING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            // SAFETY: registers a child handler that only does an atomic store
            // (async-signal-safe, as a handler run after fork in a threaded program must
            // be).
            unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
            WATCH.store(DONE, Ordering::Release);
        }
        Err(_) => {
            while WATCH.load(Ordering::Acquire) != DONE {
                std::thread::yield_now();
            }
        }
    }
}

/// Between a successful init and finalize (never in a forked child).
///
/// Without the lock: a thread asking never waits behind another thread's barrier, and
/// the other PMI library of this process may ask while this one initializes (`sibling`)
/// without the two waiting for each other.
pub fn initialized() -> PmiResult<bool> {
    Ok(!forked() && ready())
}

/// Leave the job and close the connection; afterwards calls get `PMI_ERR_INIT`.
pub fn finalize() -> PmiResult<()> {
    let mut state = lock()?;
    match std::mem::replace(&mut *state, Lifecycle::Finalized) {
        Lifecycle::Ready(mut client) => {
            clear_ready();
            // The abort fd stays until the server acknowledged: an abort from another
            // thread meanwhile still reaches the server. It is cleared before the
            // connection is closed, so the number is never stale.
            let result = client.finalize();
            clear_abort_fd();
            drop(client);
            result
        }
        other => {
            *state = other;
            Err(PmiError::Init)
        }
    }
}

/// `PMI_Barrier` (`group` None), or PMI 1.2's `PMI_Barrier_group`: begun under the
/// lock, and, from a PMI 1.2 server, its end awaited without it, so that this process's
/// other threads may put, commit and get meanwhile (their replies and this barrier's end
/// are told apart on the one connection: `backends::pmi1`). Elsewhere the barrier holds
/// the lock until it ends, and other threads' calls wait for it. `PMI_TIMEOUT` bounds the
/// wait as any reply's.
pub fn barrier(group: Option<BarrierGroup<'_>>, tag: Option<&[u8]>) -> PmiResult<()> {
    let step = with_client(|c| c.barrier_begin(group, tag))?;
    let BarrierStep::Pending { id, fds, limit } = step else {
        return Ok(());
    };
    let start = Instant::now();
    loop {
        Conn::wait_readable(fds, limit.map(|l| l.saturating_sub(start.elapsed())));
        let late = limit.is_some_and(|l| start.elapsed() >= l);
        if with_client(|c| c.barrier_ended(id, late))? {
            return Ok(());
        }
    }
}

/// Abort: print `message` on stderr, tell the process manager to abort the whole job
/// (`whole_job`) or this process ([`send_abort`]), and exit with `status`, running the
/// program's `atexit` handlers as MPICH's abort does. `arg` is what the caller passed
/// (PMI-1's exit code, PMI-2's flag), for the trace. Never returns; works before init and
/// while another thread is in a call.
pub fn abort(
    api: Api,
    arg: i32,
    message: &[u8],
    raw_message: *const c_char,
    whole_job: bool,
    status: i32,
) -> ! {
    let shown = &message[..message.len().min(256)];
    let more = if message.len() > shown.len() {
        "..."
    } else {
        ""
    };
    trace::line(format_args!(
        "{}({arg}, \"{}\"{more})",
        api.call(Op::Abort),
        shown.escape_ascii()
    ));
    ffi::boundary((), || {
        send_abort(api, status, message, raw_message, whole_job)
    });
    std::process::exit(status)
}

/// Print `message` on stderr and send the abort request: encoded here for the API's
/// wire (PMI-1: `cmd=abort exitcode=<status>`; PMI-2: the `abort` frame with the
/// message) and written to the wire's socket without allocating or waiting for a lock
/// (abort is called from signal handlers, and while another thread holds the lock in a
/// barrier); or `PMIx_Abort(status, raw_message)` under PMIx. Nothing is sent from a
/// forked child.
pub(crate) fn send_abort(
    api: Api,
    status: i32,
    message: &[u8],
    raw_message: *const c_char,
    whole_job: bool,
) {
    if !message.is_empty() {
        trace::raw_line(message);
    }
    if forked() {
        return;
    }
    let (mut line, mut frame) = ([0u8; 64], [0u8; 1024]);
    let request = match api {
        Api::Pmi1 => pmi1::abort_line(&mut line, status),
        Api::Pmi2 => pmi2::abort_frame(&mut frame, whole_job, message),
    };
    // The lock may be held by a thread blocked in a barrier: then use the fd directly.
    let fd = match try_lock() {
        Some(state) => match &*state {
            Lifecycle::Ready(client) => client.raw_fd(),
            _ => -1,
        },
        None => abort_fd(),
    };
    if fd >= 0 {
        Conn::send_abort(fd, request);
    } else {
        pmix::calls::abort(status, raw_message, whole_job);
    }
}

/// The PMIx client library this process loaded, and its version, if it did.
pub fn pmix_library() -> Option<(&'static str, String)> {
    pmix::calls::loaded()
}

enum Lifecycle {
    Uninit,
    Ready(Box<Client>),
    Finalized,
}

static STATE: Mutex<Lifecycle> = Mutex::new(Lifecycle::Uninit);

/// The PMI fd once initialized (-1 otherwise), so `PMI_Abort` can reach the server
/// even while another thread blocks in a barrier holding the lock.
static ABORT_FD: AtomicI32 = AtomicI32::new(-1);

/// Rank and size, valid while `READY`: a thread asking its rank never waits behind
/// another thread's barrier.
static READY: AtomicBool = AtomicBool::new(false);
static RANK: AtomicI32 = AtomicI32::new(-1);
static SIZE: AtomicI32 = AtomicI32::new(-1);
/// The length maxima, valid while `READY` (the same for the length queries: no traffic,
/// so no wait either).
static MAXES: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];

/// Set in a child of `fork()` (by the handler `PMI_Init` registers): the connection and
/// the lock belong to the parent, which may even have held the lock at the fork.
static FORKED: AtomicBool = AtomicBool::new(false);
static FORK_SAID: AtomicBool = AtomicBool::new(false);

/// The lock; a panic while it was held does not make it unusable. In a forked child,
/// `PMI_FAIL` without touching the lock (one line on stderr, the first time).
#[inline]
fn lock() -> PmiResult<MutexGuard<'static, Lifecycle>> {
    not_forked()?;
    Ok(STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// The lock if it is free now, for `PMI_Abort`.
fn try_lock() -> Option<MutexGuard<'static, Lifecycle>> {
    match STATE.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Called in the child right after `fork()`: only an atomic store (async-signal-safe).
fn mark_forked() {
    FORKED.store(true, Ordering::SeqCst);
}

/// Whether this process is a child forked from the one that initialized.
pub fn forked() -> bool {
    FORKED.load(Ordering::SeqCst)
}

#[inline]
fn not_forked() -> PmiResult<()> {
    if !forked() {
        return Ok(());
    }
    if FORK_SAID.swap(true, Ordering::SeqCst) {
        Err(PmiError::Fail)
    } else {
        Err(trace::fatal(format_args!(
            "a PMI call in a process forked from the initialized one: refused, the \
             connection to the process manager belongs to the parent"
        )))
    }
}

/// Publish the identity and maxima of a client that just became `Ready`, and its fd for
/// aborts.
fn set_ready(rank: i32, size: i32, maxes: Maxes, fd: i32) {
    RANK.store(rank, Ordering::SeqCst);
    SIZE.store(size, Ordering::SeqCst);
    for (slot, n) in MAXES.iter().zip([maxes.kvsname, maxes.key, maxes.value]) {
        slot.store(n, Ordering::SeqCst);
    }
    ABORT_FD.store(fd, Ordering::SeqCst);
    READY.store(true, Ordering::SeqCst);
}

/// Between a client becoming `Ready` and the start of its finalize.
fn ready() -> bool {
    READY.load(Ordering::SeqCst)
}

/// The client is finalizing: rank and size are no longer answered. The abort fd stays
/// until the connection is closed, so that `PMI_Abort` during a finalize still reaches
/// the server.
fn clear_ready() {
    READY.store(false, Ordering::SeqCst);
}

/// The connection is closed.
fn clear_abort_fd() {
    ABORT_FD.store(-1, Ordering::SeqCst);
}

fn abort_fd() -> i32 {
    ABORT_FD.load(Ordering::SeqCst)
}

/// Rank and size without the lock; `PMI_ERR_INIT` before `PMI_Init` and after
/// `PMI_Finalize`.
pub fn rank_and_size() -> PmiResult<(i32, i32)> {
    not_forked()?;
    if READY.load(Ordering::SeqCst) {
        Ok((RANK.load(Ordering::SeqCst), SIZE.load(Ordering::SeqCst)))
    } else {
        Err(PmiError::Init)
    }
}

/// The client's length maxima without the lock; `None` before `PMI_Init` and after
/// `PMI_Finalize`.
pub fn maxes() -> Option<Maxes> {
    ready().then(|| {
        let [kvsname, key, value] = [0, 1, 2].map(|i| MAXES[i].load(Ordering::SeqCst));
        Maxes {
            kvsname,
            key,
            value,
        }
    })
}

/// Run `f` on the initialized client; `PMI_ERR_INIT` before `PMI_Init` and after
/// `PMI_Finalize`.
pub fn with_client<T>(f: impl FnOnce(&mut Client) -> PmiResult<T>) -> PmiResult<T> {
    match &mut *lock()? {
        Lifecycle::Ready(client) => f(client),
        Lifecycle::Uninit | Lifecycle::Finalized => Err(PmiError::Init),
    }
}
