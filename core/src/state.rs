//! The one piece of process-wide state: where the library is in its lifecycle, behind
//! one lock that serialises the wire; and what may be read without that lock.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::api::Maxes;
use crate::client::Client;
use crate::error::{PmiError, PmiResult};
use crate::trace;

pub enum Lifecycle {
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
pub fn lock() -> PmiResult<MutexGuard<'static, Lifecycle>> {
    not_forked()?;
    Ok(STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// The lock if it is free now, for `PMI_Abort`.
pub fn try_lock() -> Option<MutexGuard<'static, Lifecycle>> {
    match STATE.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Called in the child right after `fork()`: only an atomic store (async-signal-safe).
pub fn mark_forked() {
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
pub fn set_ready(rank: i32, size: i32, maxes: Maxes, fd: i32) {
    RANK.store(rank, Ordering::SeqCst);
    SIZE.store(size, Ordering::SeqCst);
    for (slot, n) in MAXES.iter().zip([maxes.kvsname, maxes.key, maxes.value]) {
        slot.store(n, Ordering::SeqCst);
    }
    ABORT_FD.store(fd, Ordering::SeqCst);
    READY.store(true, Ordering::SeqCst);
}

/// Between a client becoming `Ready` and the start of its finalize.
pub fn ready() -> bool {
    READY.load(Ordering::SeqCst)
}

/// The client is finalizing: rank and size are no longer answered. The abort fd stays
/// until the connection is closed, so that `PMI_Abort` during a finalize still reaches
/// the server.
pub fn clear_ready() {
    READY.store(false, Ordering::SeqCst);
}

/// The connection is closed.
pub fn clear_abort_fd() {
    ABORT_FD.store(-1, Ordering::SeqCst);
}

pub fn abort_fd() -> i32 {
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
