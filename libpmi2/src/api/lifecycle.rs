//! `PMI2_Init`, `PMI2_Initialized`, `PMI2_Finalize`, `PMI2_Abort`.

use libc::{c_char, c_int};

use pmi_core::api::Api;
use pmi_core::{ffi, lifecycle};

use crate::api::*;
use crate::codes::guard;

/// Initialize: connect to the process manager (or PMIx, or a singleton) and report this
/// process's place in the job. Calling it again after success answers the same without
/// traffic.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if a pointer is NULL; `PMI2_FAIL` if no
/// process manager accepts this process (one line on stderr says why).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Init(
    spawned: *mut c_int,
    size: *mut c_int,
    rank: *mut c_int,
    appnum: *mut c_int,
) -> c_int {
    guard(
        |f| write!(f, "PMI2_Init({spawned:p}, {size:p}, {rank:p}, {appnum:p})"),
        || {
            // SAFETY: the caller passes NULL or writable ints.
            let (s, z, r, a) = unsafe {
                (
                    ffi::out(spawned)?,
                    ffi::out(size)?,
                    ffi::out(rank)?,
                    ffi::out(appnum)?,
                )
            };
            let id = lifecycle::init(Api::Pmi2, "PMI2_Init")?;
            let app = with_client(|c| c.appnum())?;
            s.set(c_int::from(id.spawned));
            z.set(id.size);
            r.set(id.rank);
            a.set(app);
            Ok(())
        },
    )
}

/// Leave the job (`finalize`, wait for the answer) and close the connection.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the server
/// did not acknowledge (the library is finalized all the same).
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_Finalize() -> c_int {
    guard(|f| f.write_str("PMI2_Finalize()"), lifecycle::finalize)
}

/// 1 between a successful `PMI2_Init` and `PMI2_Finalize`, else 0. No traffic.
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_Initialized() -> c_int {
    ffi::boundary(0, || c_int::from(lifecycle::initialized().unwrap_or(false)))
}

/// Abort: print `msg` (NULL allowed) on stderr, tell the process manager to abort the
/// whole job (`flag` nonzero) or this process (`isworld=FALSE`), and exit with status 1.
/// Never returns; works before `PMI2_Init` and while another thread is in a call. An
/// empty message is sent without the message field.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Abort(flag: c_int, msg: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    let message = unsafe { ffi::bytes_in(msg) }.unwrap_or_default();
    lifecycle::abort(Api::Pmi2, flag, message, msg, flag != 0, 1)
}
