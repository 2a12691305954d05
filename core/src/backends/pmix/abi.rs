//! What the PMIx backend knows of `pmix.h`: the layouts of the five structures it
//! passes, the constants it uses and the prototypes of the seventeen functions it calls
//! (`calls` loads and calls them). Checked against the real header by
//! `core/tests/pmix_abi.rs` ([`abi_layout`]).

use std::ffi::{c_char, c_int, c_void};

/// `PMIX_MAX_NSLEN` + 1 and `PMIX_MAX_KEYLEN` + 1 (`pmix_common.h`).
pub const NSPACE_LEN: usize = 256;
pub const KEY_LEN: usize = 512;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Proc {
    pub(super) nspace: [c_char; NSPACE_LEN],
    pub(super) rank: u32,
}

/// `pmix_value_t`: the type, then a union of at most three words.
#[repr(C)]
pub(super) struct Value {
    pub(super) kind: u16,
    pub(super) data: [u64; 3],
}

/// `pmix_info_t`.
#[repr(C)]
pub(super) struct Info {
    pub(super) key: [c_char; KEY_LEN],
    pub(super) flags: u32,
    pub(super) value: Value,
}

/// `pmix_pdata_t`.
#[repr(C)]
pub(super) struct Pdata {
    pub(super) proc_: Proc,
    pub(super) key: [c_char; KEY_LEN],
    pub(super) value: Value,
}

/// `pmix_app_t`.
#[repr(C)]
pub(super) struct App {
    pub(super) cmd: *mut c_char,
    pub(super) argv: *mut *mut c_char,
    pub(super) env: *mut *mut c_char,
    pub(super) cwd: *mut c_char,
    pub(super) maxprocs: c_int,
    pub(super) info: *mut Info,
    pub(super) ninfo: usize,
}

/// The layouts this module assumes, by the names `pmix.h` uses, for the ABI test.
#[cfg(feature = "test-kit")]
pub fn abi_layout() -> Vec<(&'static str, usize)> {
    use std::mem::{offset_of, size_of};
    vec![
        ("sizeof(pmix_proc_t)", size_of::<Proc>()),
        ("offsetof(pmix_proc_t, rank)", offset_of!(Proc, rank)),
        ("sizeof(pmix_value_t)", size_of::<Value>()),
        ("offsetof(pmix_value_t, type)", offset_of!(Value, kind)),
        ("sizeof(pmix_info_t)", size_of::<Info>()),
        ("offsetof(pmix_info_t, flags)", offset_of!(Info, flags)),
        ("offsetof(pmix_info_t, value)", offset_of!(Info, value)),
        ("sizeof(pmix_pdata_t)", size_of::<Pdata>()),
        ("offsetof(pmix_pdata_t, key)", offset_of!(Pdata, key)),
        ("offsetof(pmix_pdata_t, value)", offset_of!(Pdata, value)),
        ("sizeof(pmix_app_t)", size_of::<App>()),
        ("offsetof(pmix_app_t, argv)", offset_of!(App, argv)),
        ("offsetof(pmix_app_t, env)", offset_of!(App, env)),
        ("offsetof(pmix_app_t, cwd)", offset_of!(App, cwd)),
        ("offsetof(pmix_app_t, maxprocs)", offset_of!(App, maxprocs)),
        ("offsetof(pmix_app_t, info)", offset_of!(App, info)),
        ("offsetof(pmix_app_t, ninfo)", offset_of!(App, ninfo)),
        ("PMIX_MAX_NSLEN", NSPACE_LEN - 1),
        ("PMIX_MAX_KEYLEN", KEY_LEN - 1),
        ("PMIX_RANK_UNDEF", RANK_UNDEF as usize),
        ("PMIX_RANK_WILDCARD", RANK_WILDCARD as usize),
        ("PMIX_GLOBAL", usize::from(SCOPE_GLOBAL)),
        ("PMIX_LOCAL", usize::from(SCOPE_LOCAL)),
        ("PMIX_BOOL", usize::from(BOOL)),
        ("PMIX_STRING", usize::from(STRING)),
        ("PMIX_INT", usize::from(INT)),
        ("PMIX_UINT32", usize::from(UINT32)),
        ("PMIX_PROC_RANK", usize::from(PROC_RANK)),
        ("PMIX_PROC", usize::from(PROC)),
        ("PMIX_SIZE", usize::from(SIZE)),
        ("PMIX_PID", usize::from(PID)),
        ("PMIX_INT8", usize::from(INT8)),
        ("PMIX_INT16", usize::from(INT16)),
        ("PMIX_INT32", usize::from(INT32)),
        ("PMIX_INT64", usize::from(INT64)),
        ("PMIX_UINT", usize::from(UINT)),
        ("PMIX_UINT8", usize::from(UINT8)),
        ("PMIX_UINT16", usize::from(UINT16)),
        ("PMIX_UINT64", usize::from(UINT64)),
        ("-PMIX_ERR_BAD_PARAM", (-ERR_BAD_PARAM) as usize),
        ("PMIX_SUCCESS", SUCCESS as usize),
        ("-PMIX_ERR_NOT_FOUND", (-ERR_NOT_FOUND) as usize),
        ("-PMIX_ERR_TIMEOUT", (-ERR_TIMEOUT) as usize),
    ]
}

pub const RANK_UNDEF: u32 = u32::MAX;
pub const RANK_WILDCARD: u32 = u32::MAX - 1;
pub(super) const SCOPE_GLOBAL: u8 = 3;
pub(super) const SCOPE_LOCAL: u8 = 1;
pub(super) const SUCCESS: c_int = 0;
pub const ERR_NOT_FOUND: c_int = -46;
/// What a call that `PMI_TIMEOUT` cut off returns (`pmix_watch`).
pub const ERR_TIMEOUT: c_int = -24;

// `pmix_data_type_t` codes (`pmix_common.h`).
pub(super) const BOOL: u16 = 1;
pub(super) const STRING: u16 = 3;
pub(super) const SIZE: u16 = 4;
pub(super) const PID: u16 = 5;
pub(super) const INT: u16 = 6;
pub(super) const INT8: u16 = 7;
pub(super) const INT16: u16 = 8;
pub(super) const INT32: u16 = 9;
pub(super) const INT64: u16 = 10;
pub(super) const UINT: u16 = 11;
pub(super) const UINT8: u16 = 12;
pub(super) const UINT16: u16 = 13;
pub(super) const UINT32: u16 = 14;
pub(super) const UINT64: u16 = 15;
pub(super) const PROC: u16 = 22;
pub(super) const PROC_RANK: u16 = 40;

/// The width in bytes and signedness of an integer (or boolean) type; `None` for the
/// rest, which are never unloaded into a number.
pub(super) fn scalar(kind: u16) -> Option<(usize, bool)> {
    Some(match kind {
        BOOL | INT8 => (1, kind == INT8),
        UINT8 => (1, false),
        INT16 => (2, true),
        UINT16 => (2, false),
        INT | INT32 | PID => (4, true),
        UINT | UINT32 | PROC_RANK => (4, false),
        INT64 => (8, true),
        SIZE | UINT64 => (8, false),
        _ => return None,
    })
}

pub(super) type Status = c_int;

// The C prototypes, from pmix.h.
pub(super) type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> Status;
pub(super) type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> Status;
pub(super) type AbortFn = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> Status;
pub(super) type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> Status;
pub(super) type CommitFn = unsafe extern "C" fn() -> Status;
pub(super) type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> Status;
pub(super) type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> Status;
pub(super) type PublishFn = unsafe extern "C" fn(*const Info, usize) -> Status;
pub(super) type LookupFn = unsafe extern "C" fn(*mut Pdata, usize, *const Info, usize) -> Status;
pub(super) type UnpublishFn = unsafe extern "C" fn(*mut *mut c_char, *const Info, usize) -> Status;
pub(super) type SpawnFn =
    unsafe extern "C" fn(*const Info, usize, *const App, usize, *mut c_char) -> Status;
pub(super) type ValueLoadFn = unsafe extern "C" fn(*mut Value, *const c_void, u16) -> Status;
pub(super) type ValueUnloadFn =
    unsafe extern "C" fn(*mut Value, *mut *mut c_void, *mut usize) -> Status;
pub(super) type ValueDestructFn = unsafe extern "C" fn(*mut Value);
pub(super) type InfoLoadFn =
    unsafe extern "C" fn(*mut Info, *const c_char, *const c_void, u16) -> Status;
pub(super) type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
pub(super) type GetVersionFn = unsafe extern "C" fn() -> *const c_char;

/// The functions used, resolved once.
pub(super) struct Fns {
    pub(super) init: InitFn,
    pub(super) finalize: FinalizeFn,
    pub(super) abort: AbortFn,
    pub(super) put: PutFn,
    pub(super) commit: CommitFn,
    pub(super) fence: FenceFn,
    pub(super) get: GetFn,
    pub(super) publish: PublishFn,
    pub(super) lookup: LookupFn,
    pub(super) unpublish: UnpublishFn,
    pub(super) spawn: SpawnFn,
    pub(super) value_load: ValueLoadFn,
    pub(super) value_unload: ValueUnloadFn,
    pub(super) value_destruct: ValueDestructFn,
    pub(super) info_load: InfoLoadFn,
    pub(super) error_string: ErrorStringFn,
    pub(super) get_version: GetVersionFn,
}

pub(super) const ERR_BAD_PARAM: c_int = -27;
