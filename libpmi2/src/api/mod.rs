//! The 22 PMI-2 exports (21 `PMI2_*` functions and Slurm's `PMIX_Ring`), grouped as
//! `libpmi`'s are; here the types and limits of `pmi2.h`, and the helpers they share.

pub mod info;
pub mod kvs;
pub mod lifecycle;
pub mod names;
pub mod spawn;

use libc::{c_char, c_int, c_void};

use pmi_core::client::Client;
use pmi_core::error::PmiResult;
use pmi_core::ffi;

/// The longest key, NUL included.
pub const PMI2_MAX_KEYLEN: c_int = 64;

/// The longest value, NUL included.
pub const PMI2_MAX_VALLEN: c_int = 1024;

/// The longest attribute value, NUL included.
pub const PMI2_MAX_ATTRVALUE: c_int = 1024;

/// "No hint" for `PMI2_KVS_Get`'s `src_pmi_id`.
pub const PMI2_ID_NULL: c_int = -1;

/// An info entry, as Slurm's `pmi2.h` lays it out (MPICH's leaves its `MPIR_Info`
/// opaque, and MPICH lays it out otherwise); spawn reads `key` and `value` of each.
#[repr(C)]
pub struct MPID_Info {
    pub handle: c_int,
    pub pobj_mutex: c_int,
    pub ref_count: c_int,
    pub next: *mut MPID_Info,
    pub key: *mut c_char,
    pub value: *mut c_char,
}

/// The connection structure of `PMI2_Job_Connect`: `struct PMI2_Connect_comm`, as in
/// Slurm's and MPICH's headers, with the type name `PMI2_Connect_comm_t` below.
#[repr(C)]
pub struct PMI2_Connect_comm {
    pub read:
        Option<unsafe extern "C" fn(buf: *mut c_void, maxlen: c_int, ctx: *mut c_void) -> c_int>,
    pub write:
        Option<unsafe extern "C" fn(buf: *const c_void, len: c_int, ctx: *mut c_void) -> c_int>,
    pub ctx: *mut c_void,
    pub isMaster: c_int,
}

/// The name the API uses for `struct PMI2_Connect_comm`.
pub type PMI2_Connect_comm_t = PMI2_Connect_comm;

/// Run `body` on the initialized client.
pub(crate) fn with_client<T>(f: impl FnOnce(&mut Client) -> PmiResult<T>) -> PmiResult<T> {
    pmi_core::lifecycle::with_client(f)
}

/// Copy `text` and its NUL into `(buf, len)`; `PMI2_ERR_INVALID_LENGTH` with nothing
/// written when it does not fit.
///
/// # Safety
/// `buf` is NULL or points to `len` writable bytes.
pub(crate) unsafe fn write_str(buf: *mut c_char, len: c_int, text: &[u8]) -> PmiResult<()> {
    // SAFETY: the caller's contract.
    let out = unsafe { ffi::out_str(buf, len) }?;
    out.write(text)
}
