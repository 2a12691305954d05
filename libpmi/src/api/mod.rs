//! The 34 PMI-1 exports, grouped: the 33 of RFC 13 and MPICH 5's `PMI_Barrier_group` (PMI
//! 1.2). Each is a few lines: check and convert the C arguments through `ffi`, call the
//! safe client, map the result to a code.

pub mod info;
pub mod kvs;
pub mod lifecycle;
pub mod names;
pub mod options;
pub mod spawn;

use libc::{c_char, c_int};

use pmi_core::error::PmiError;
use pmi_core::trace;

/// The version of the PMI-1 API this header describes, as MPICH 5's `pmi.h` says it:
/// 1.2, RFC 13's calls and `PMI_Barrier_group`.
pub const PMI_VERSION: c_int = 1;
/// See `PMI_VERSION`.
pub const PMI_SUBVERSION: c_int = 2;

/// A boolean as PMI passes it: `PMI_TRUE` or `PMI_FALSE`.
#[allow(non_camel_case_types)]
pub type PMI_BOOL = libc::c_int;

/// A key/value pair, as used by `PMI_Spawn_multiple` (info and preput pairs) and the
/// option helpers.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct PMI_keyval_t {
    pub key: *const c_char,
    pub val: *mut c_char,
}

/// A call this library does not carry out: traced with its reason, `PMI_FAIL`.
fn unsupported(call: &str, reason: &str) -> PmiError {
    trace::line(format_args!("{call}: not supported: {reason}"));
    PmiError::Fail
}
