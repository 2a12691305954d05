//! The name service: `PMI2_Nameserv_publish`, `_lookup`, `_unpublish`.

use libc::{c_char, c_int};

use pmi_core::ffi;

use crate::api::*;
use crate::codes::guard;

/// Publish `port` under `service_name` (`info_ptr` is ignored).
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL, or for a service name or port
/// that is empty, holds a `;` or is too long (the name: 1023 bytes at most, the port:
/// 255); nothing is sent then; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the
/// server refuses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_publish(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
    port: *const c_char,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (s_service_name, s_port) = unsafe { (ffi::show(service_name), ffi::show(port)) };
            write!(
                f,
                "PMI2_Nameserv_publish({}, {info_ptr:p}, {})",
                s_service_name, s_port
            )
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (service, port) = unsafe { (ffi::bytes_in(service_name)?, ffi::bytes_in(port)?) };
            with_client(|c| c.publish_name(service, port))
        },
    )
}

/// The port published under `service_name`, with its NUL, into `port` (`portLen`
/// bytes); `PMI2_FAIL` when nothing is published under it.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL or a service name
/// `PMI2_Nameserv_publish` would refuse; `PMI2_ERR_INVALID_LENGTH` if `portLen` < 1 or
/// the port and its NUL do not fit (nothing written); `PMI2_ERR_INIT` if not initialized;
/// `PMI2_FAIL` if nothing is published under it or the server fails.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_lookup(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
    port: *mut c_char,
    portLen: c_int,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let s_service_name = unsafe { ffi::show(service_name) };
            write!(
                f,
                "PMI2_Nameserv_lookup({}, {info_ptr:p}, {port:p}, {portLen})",
                s_service_name
            )
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated name, and NULL or `portLen`
            // writable bytes.
            let (service, out) =
                unsafe { (ffi::bytes_in(service_name)?, ffi::out_str(port, portLen)?) };
            with_client(|c| out.write(c.lookup_name(service)?))
        },
    )
}

/// Withdraw what was published under `service_name`.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL or a service name
/// `PMI2_Nameserv_publish` would refuse; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL`
/// if the server refuses (nothing was published under it, where the server says so).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_unpublish(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let s_service_name = unsafe { ffi::show(service_name) };
            write!(
                f,
                "PMI2_Nameserv_unpublish({}, {info_ptr:p})",
                s_service_name
            )
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let service = unsafe { ffi::bytes_in(service_name) }?;
            with_client(|c| c.unpublish_name(service))
        },
    )
}
