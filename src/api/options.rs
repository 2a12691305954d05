//! The option-parsing helpers RFC 13 lists as OPTIONAL.

use libc::{c_char, c_int};

use crate::api::{unsupported, PMI_keyval_t};
use crate::ffi;

/// Parse PMI options from a command line. Not implemented in this release: returns
/// `PMI_FAIL` and writes nothing.
///
/// # Safety
/// Pointers are NULL or valid for the accesses the reference prototype implies.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Parse_option(
    num_args: c_int,
    args: *mut *mut c_char,
    num_parsed: *mut c_int,
    keyvalp: *mut *mut PMI_keyval_t,
    size: *mut c_int,
) -> c_int {
    let _ = (num_args, args, num_parsed, keyvalp, size);
    ffi::guard(|| Err(unsupported("PMI_Parse_option", "not implemented yet")))
}

/// Turn command-line arguments into keyvals. Not implemented in this release: returns
/// `PMI_FAIL` and writes nothing.
///
/// # Safety
/// Pointers are NULL or valid for the accesses the reference prototype implies.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Args_to_keyval(
    argcp: *mut c_int,
    argvp: *mut *mut *mut c_char,
    keyvalp: *mut *mut PMI_keyval_t,
    size: *mut c_int,
) -> c_int {
    let _ = (argcp, argvp, keyvalp, size);
    ffi::guard(|| Err(unsupported("PMI_Args_to_keyval", "not implemented yet")))
}

/// Free keyvals made by `PMI_Args_to_keyval`. Not implemented in this release: returns
/// `PMI_FAIL` and frees nothing.
///
/// # Safety
/// `keyvalp` is NULL or an array of `size` keyvals.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Free_keyvals(keyvalp: *mut PMI_keyval_t, size: c_int) -> c_int {
    let _ = (keyvalp, size);
    ffi::guard(|| Err(unsupported("PMI_Free_keyvals", "not implemented yet")))
}

/// Describe the PMI command-line options. Not implemented in this release: returns
/// `PMI_FAIL` and writes nothing.
///
/// # Safety
/// `str` is NULL or points to `*length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_options(str: *mut c_char, length: *mut c_int) -> c_int {
    let _ = (str, length);
    ffi::guard(|| Err(unsupported("PMI_Get_options", "not implemented yet")))
}
