//! The other PMI library of this process. A program may load both `libpmi.so.0` and
//! `libpmi2.so.0` (an MPI using one, a tool the other); each would take the same
//! `PMI_FD`, or connect to `PMI_PORT` with the same `PMI_ID`, and Hydra's proxy then
//! asserts (5.0.2) or the first barrier never returns (4.0.2). So the second to
//! initialize asks the first whether it is initialized, and is refused if so: linked
//! into the same program from the static archives, through a weak reference
//! (`sibling.c`); else through the loader. The one home here of the loader calls; only
//! a library already loaded is looked at (`RTLD_NOLOAD`), never a new one.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void, CStr};

use crate::backends::pmix_lib;
use crate::rules::Api;

/// `PMI2_Initialized` (`int (void)` in every pmi2.h) or `PMI_Initialized` (`int (int *)`
/// in every pmi.h), as found.
#[derive(Clone, Copy)]
enum Query {
    Pmi2(unsafe extern "C" fn() -> c_int),
    Pmi1(unsafe extern "C" fn(*mut c_int) -> c_int),
}

extern "C" {
    // core/src/sibling.c: NULL, or the function linked into the program.
    fn pmi_core_weak_pmi_initialized() -> Option<unsafe extern "C" fn(*mut c_int) -> c_int>;
    fn pmi_core_weak_pmi2_initialized() -> Option<unsafe extern "C" fn() -> c_int>;
}

impl Query {
    fn addr(self) -> *const c_void {
        match self {
            Query::Pmi2(f) => f as *const c_void,
            Query::Pmi1(f) => f as *const c_void,
        }
    }

    /// Whether the library it belongs to says it is initialized.
    fn ready(self) -> bool {
        match self {
            // SAFETY: the function of that name and prototype (pmi2.h), no arguments;
            // 1 when initialized.
            Query::Pmi2(f) => (unsafe { f() }) == 1,
            Query::Pmi1(f) => {
                let mut ready: c_int = 0;
                // SAFETY: the function of that name and prototype (pmi.h): it writes
                // PMI_TRUE (1) or PMI_FALSE to the int it is given, which is ours.
                (unsafe { f(&mut ready) }) == 0 && ready == 1
            }
        }
    }
}

/// The file (program or shared object) that holds `addr`.
fn object_of(addr: *const c_void) -> Option<*const c_void> {
    // SAFETY: an all-zero Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable; dladdr only reads the address.
    (unsafe { libc::dladdr(addr, &mut info) } != 0).then_some(info.dli_fbase.cast_const())
}

/// The other API's query linked into the same file as this copy of the core (both
/// static archives in one program); `None` when it is not there (then a shared library
/// may be). In a statically linked program every function is in the one file.
fn linked_query(api: Api) -> Option<Query> {
    let query = match api {
        // SAFETY: functions of sibling.c without arguments.
        Api::Pmi1 => Query::Pmi2(unsafe { pmi_core_weak_pmi2_initialized() }?),
        // SAFETY: as above.
        Api::Pmi2 => Query::Pmi1(unsafe { pmi_core_weak_pmi_initialized() }?),
    };
    let same_file = pmix_lib::statically_linked()
        || object_of(linked_query as *const c_void)
            .is_some_and(|here| object_of(query.addr()) == Some(here));
    same_file.then_some(query)
}

/// The sibling library of `api` (the archive's or the soname's name) when it is in this
/// process and says it is initialized.
pub fn initialized_sibling(api: Api) -> Option<&'static str> {
    if let Some(query) = linked_query(api) {
        let archive = match api {
            Api::Pmi1 => "libpmi2.a",
            Api::Pmi2 => "libpmi.a",
        };
        return query.ready().then_some(archive);
    }
    let (soname, name): (&CStr, &CStr) = match api {
        Api::Pmi1 => (c"libpmi2.so.0", c"PMI2_Initialized"),
        Api::Pmi2 => (c"libpmi.so.0", c"PMI_Initialized"),
    };
    // SAFETY: a NUL-terminated name; RTLD_NOLOAD only returns a library already loaded
    // (its reference count raised, dropped again below), so no initializer runs.
    let handle = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: a live handle and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(handle, name.as_ptr()) };
    let yes = !sym.is_null()
        && match api {
            // SAFETY: the library's `PMI2_Initialized`, whose prototype Query::Pmi2 spells.
            Api::Pmi1 => Query::Pmi2(unsafe {
                std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(sym)
            }),
            // SAFETY: the library's `PMI_Initialized`, whose prototype Query::Pmi1 spells.
            Api::Pmi2 => Query::Pmi1(unsafe {
                std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_int) -> c_int>(sym)
            }),
        }
        .ready();
    // SAFETY: the reference taken by the dlopen above; the library stays loaded by its
    // first owner.
    unsafe { libc::dlclose(handle) };
    yes.then(|| soname.to_str().unwrap_or("the other PMI library"))
}
