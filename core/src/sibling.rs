//! The other PMI library of this process. A program may load both `libpmi.so.0` and
//! `libpmi2.so.0` (an MPI using one, a tool the other); each would take the same
//! `PMI_FD`, or connect to `PMI_PORT` with the same `PMI_ID`, and Hydra's proxy then
//! asserts (5.0.2) or the first barrier never returns (4.0.2). So the second to
//! initialize asks the first, through the loader, whether it is initialized, and is
//! refused if so. The one home here of the loader calls; only a library already loaded
//! is looked at (`RTLD_NOLOAD`), never a new one.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void, CStr};

use crate::rules::Api;

/// The sibling library of `api` (its soname) when it is loaded in this process and says
/// it is initialized.
pub fn initialized_sibling(api: Api) -> Option<&'static str> {
    let (soname, query): (&CStr, &CStr) = match api {
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
    let sym = unsafe { libc::dlsym(handle, query.as_ptr()) };
    let yes = !sym.is_null()
        && match api {
            Api::Pmi1 => {
                // SAFETY: `PMI2_Initialized` is `int (void)` in every pmi2.h: 1 when
                // initialized.
                let f =
                    unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym) };
                f() == 1
            }
            Api::Pmi2 => {
                // SAFETY: `PMI_Initialized` is `int (int *)` in every pmi.h, writing
                // PMI_TRUE (1) when initialized.
                let f = unsafe {
                    std::mem::transmute::<*mut c_void, extern "C" fn(*mut c_int) -> c_int>(sym)
                };
                let mut ready: c_int = 0;
                f(&mut ready) == 0 && ready == 1
            }
        };
    // SAFETY: the reference taken by the dlopen above; the library stays loaded by its
    // first owner.
    unsafe { libc::dlclose(handle) };
    yes.then(|| soname.to_str().unwrap_or("the other PMI library"))
}
