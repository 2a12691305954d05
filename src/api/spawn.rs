//! Dynamic processes: `PMI_Spawn_multiple`.

use libc::{c_char, c_int};

use crate::api::{unsupported, PMI_keyval_t};
use crate::{ffi, state};

/// Spawn processes into a new process group. Not implemented in this release: after
/// the initialization check it returns `PMI_FAIL` and sends nothing.
///
/// Returns `PMI_ERR_INIT` if not initialized; otherwise `PMI_FAIL`.
///
/// # Safety
/// The arrays are NULL or hold `count` (respectively `preput_keyval_size`) elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Spawn_multiple(
    count: c_int,
    cmds: *mut *const c_char,
    argvs: *mut *mut *const c_char,
    maxprocs: *const c_int,
    info_keyval_sizesp: *const c_int,
    info_keyval_vectors: *mut *const PMI_keyval_t,
    preput_keyval_size: c_int,
    preput_keyval_vector: *const PMI_keyval_t,
    errors: *mut c_int,
) -> c_int {
    let _ = (
        count,
        cmds,
        argvs,
        maxprocs,
        info_keyval_sizesp,
        info_keyval_vectors,
    );
    let _ = (preput_keyval_size, preput_keyval_vector, errors);
    ffi::guard(|| {
        state::with_client(|_| Err(unsupported("PMI_Spawn_multiple", "not implemented yet")))
    })
}
