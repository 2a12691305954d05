//! The one piece of process-wide state: where the library is in its lifecycle, behind
//! one lock that serialises the wire.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::client::Client;
use crate::error::{PmiError, PmiResult};

pub enum Lifecycle {
    Uninit,
    Ready(Box<Client>),
    Finalized,
}

static STATE: Mutex<Lifecycle> = Mutex::new(Lifecycle::Uninit);

/// The PMI fd once initialized (-1 otherwise), so `PMI_Abort` can reach the server
/// even while another thread blocks in a barrier holding the lock.
static ABORT_FD: AtomicI32 = AtomicI32::new(-1);

/// The lock; a panic while it was held does not make it unusable.
pub fn lock() -> MutexGuard<'static, Lifecycle> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The lock if it is free now, for `PMI_Abort`.
pub fn try_lock() -> Option<MutexGuard<'static, Lifecycle>> {
    match STATE.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

pub fn set_abort_fd(fd: i32) {
    ABORT_FD.store(fd, Ordering::SeqCst);
}

pub fn abort_fd() -> i32 {
    ABORT_FD.load(Ordering::SeqCst)
}

/// Run `f` on the initialized client; `PMI_ERR_INIT` before `PMI_Init` and after
/// `PMI_Finalize`.
pub fn with_client<T>(f: impl FnOnce(&mut Client) -> PmiResult<T>) -> PmiResult<T> {
    match &mut *lock() {
        Lifecycle::Ready(client) => f(client),
        Lifecycle::Uninit | Lifecycle::Finalized => Err(PmiError::Init),
    }
}
