//! `PMI_Init`, `PMI_Initialized`, `PMI_Finalize`, `PMI_Abort`.

use libc::{c_char, c_int};

use crate::api::PMI_BOOL;
use crate::codes::{guard, PMI_FALSE, PMI_TRUE};
use pmi_core::api::Api;
use pmi_core::{ffi, lifecycle};

/// Initialize the PMI library for this process. With `PMI_FD` (and `PMI_RANK`,
/// `PMI_SIZE`, `PMI_SPAWNED`): talk to the process manager on that socket (`init`, then
/// `get_maxes`: two round trips). Else with `PMI_PORT=host:port` and `PMI_ID`: connect
/// by TCP, `initack` (rank and size come from the server), then the same. Else, when a
/// PMIx server is named (`PMIX_NAMESPACE`, `PMIX_RANK`, `PMIX_SERVER_URI*`): load the
/// PMIx client library (`PMI_PMIX_LIBRARY`, else `libpmix.so.2` and its usual places)
/// and `PMIx_Init`. Else singleton mode: rank 0 of 1 with a process-local KVS — refused
/// when a launcher's variables say the job is larger. On success `*spawned` is `PMI_TRUE` if this process was created by
/// `PMI_Spawn_multiple`, else `PMI_FALSE`. Calling it again after success succeeds at
/// once without any traffic.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `spawned` is NULL; `PMI_FAIL` if the
/// environment is nonsensical or asks for a refused singleton, the server refuses or does
/// not speak PMI 1.1 or a later 1.x, no PMIx client library loads or `PMIx_Init` fails,
/// or after `PMI_Finalize` (one line on stderr says why).
///
/// # Safety
/// `spawned` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Init(spawned: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Init({spawned:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(spawned) }?;
            let id = lifecycle::init(Api::Pmi1, "PMI_Init")?;
            out.set(if id.spawned { PMI_TRUE } else { PMI_FALSE });
            Ok(())
        },
    )
}

/// Set `*initialized` to `PMI_TRUE` between a successful `PMI_Init` and `PMI_Finalize`,
/// else to `PMI_FALSE`. No traffic.
///
/// Returns `PMI_SUCCESS`, or `PMI_ERR_INVALID_ARG` if `initialized` is NULL.
///
/// # Safety
/// `initialized` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Initialized(initialized: *mut PMI_BOOL) -> c_int {
    guard(
        |f| write!(f, "PMI_Initialized({initialized:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(initialized) }?;
            // A forked child is not initialized: the connection is its parent's.
            let ready = lifecycle::initialized()?;
            out.set(if ready { PMI_TRUE } else { PMI_FALSE });
            Ok(())
        },
    )
}

/// Finalize the PMI library for this process: `finalize`, wait for `finalize_ack`, close
/// the connection. Afterwards every call but the length queries returns `PMI_ERR_INIT`.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server
/// did not acknowledge (the library is finalized all the same).
#[unsafe(no_mangle)]
pub extern "C" fn PMI_Finalize() -> c_int {
    guard(|f| f.write_str("PMI_Finalize()"), lifecycle::finalize)
}

/// Abort the whole job: print `error_msg` (NULL allowed) on stderr, send
/// `cmd=abort exitcode=<exit_code>` without waiting for a reply (under PMIx:
/// `PMIx_Abort`, which waits for the server to take it), and exit this process with
/// `exit_code`. Never returns. Works before `PMI_Init` (then nothing is sent) and
/// while another thread is blocked in a PMI call.
///
/// # Safety
/// `error_msg` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Abort(exit_code: c_int, error_msg: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    let message = unsafe { ffi::bytes_in(error_msg) }.unwrap_or_default();
    lifecycle::abort(Api::Pmi1, exit_code, message, error_msg, true, exit_code)
}
