//! Name publishing: `PMI_Publish_name`, `PMI_Unpublish_name`, `PMI_Lookup_name`.

use libc::{c_char, c_int};

use crate::codes::guard;
use pmi_core::api::PORT_MAX;
use pmi_core::{ffi, lifecycle};

/// Publish `port` under the name `service_name` (`publish_name`, one round trip).
/// Both are RFC 13 words: no spaces, no `=`, no control characters; `port` is at most
/// 255 bytes (MPICH's `MPI_MAX_PORT_NAME` less the NUL, the most `PMI_Lookup_name`
/// hands back).
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if an argument is NULL, empty or not a
/// word, or `port` is longer than 255 bytes (nothing is sent); `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server
/// refuses (Hydra: the name is already published).
///
/// # Safety
/// Each argument is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Publish_name(
    service_name: *const c_char,
    port: *const c_char,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (service_name, port) = unsafe { (ffi::show(service_name), ffi::show(port)) };
            write!(f, "PMI_Publish_name({service_name}, {port})")
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (service, port) = unsafe { (ffi::bytes_in(service_name)?, ffi::bytes_in(port)?) };
            lifecycle::with_client(|c| c.publish_name(service, port))
        },
    )
}

/// Withdraw the name `service_name` (`unpublish_name`, one round trip).
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `service_name` is NULL, empty or not a
/// word; `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server refuses (the name
/// is not published).
///
/// # Safety
/// `service_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Unpublish_name(service_name: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let service_name = unsafe { ffi::show(service_name) };
            write!(f, "PMI_Unpublish_name({service_name})")
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            let service = unsafe { ffi::bytes_in(service_name) }?;
            lifecycle::with_client(|c| c.unpublish_name(service))
        },
    )
}

/// Copy the port published under `service_name`, and its NUL, into `port`
/// (`lookup_name`, one round trip). `port` has no length argument: the library writes
/// at most 256 bytes, NUL included (MPICH's `MPI_MAX_PORT_NAME`, the size of the buffer
/// MPICH passes), so the buffer must hold that many.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if an argument is NULL or `service_name`
/// is not a word; `PMI_ERR_INVALID_LENGTH` if the published port (from another client)
/// is longer than 255 bytes (nothing is written); `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the
/// name is not published.
///
/// # Safety
/// `service_name` is NULL or a NUL-terminated string; `port` is NULL or points to 256
/// writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Lookup_name(service_name: *const c_char, port: *mut c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let service_name = unsafe { ffi::show(service_name) };
            write!(f, "PMI_Lookup_name({service_name}, {port:p})")
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            let service = unsafe { ffi::bytes_in(service_name) }?;
            // SAFETY: the caller passes NULL or a buffer of PORT_MAX bytes.
            let out = unsafe { ffi::out_str(port, PORT_MAX as c_int) }?;
            lifecycle::with_client(|c| out.write(c.lookup_name(service)?))
        },
    )
}
