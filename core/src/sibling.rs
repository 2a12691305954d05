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

use crate::rules::Api;

type Pmi1Initialized = extern "C" fn(*mut c_int) -> c_int;
type Pmi2Initialized = extern "C" fn() -> c_int;

extern "C" {
    // core/src/sibling.c: NULL, or the function linked into the program.
    fn pmi_core_weak_pmi_initialized() -> Option<Pmi1Initialized>;
    fn pmi_core_weak_pmi2_initialized() -> Option<Pmi2Initialized>;
}

/// The file (program or shared object) that holds `addr`.
fn object_of(addr: *const c_void) -> Option<*const c_void> {
    // SAFETY: an all-zero Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable; dladdr only reads the address.
    (unsafe { libc::dladdr(addr, &mut info) } != 0).then_some(info.dli_fbase.cast_const())
}

/// The other API's library, linked into the same file as this copy of the core (both
/// static archives in one program): initialized or not. `None` when it is not there
/// (then a shared library may be: `initialized_sibling` asks the loader).
fn linked_sibling(api: Api) -> Option<bool> {
    let here = object_of(linked_sibling as *const c_void)?;
    match api {
        Api::Pmi1 => {
            // SAFETY: a function of sibling.c without arguments.
            let f = unsafe { pmi_core_weak_pmi2_initialized() }?;
            (object_of(f as *const c_void)? == here).then(|| f() == 1)
        }
        Api::Pmi2 => {
            // SAFETY: as above.
            let f = unsafe { pmi_core_weak_pmi_initialized() }?;
            let mut ready: c_int = 0;
            (object_of(f as *const c_void)? == here).then(|| f(&mut ready) == 0 && ready == 1)
        }
    }
}

/// The sibling library of `api` (its soname) when it is in this process and says it is
/// initialized.
pub fn initialized_sibling(api: Api) -> Option<&'static str> {
    if let Some(ready) = linked_sibling(api) {
        let archive = match api {
            Api::Pmi1 => "libpmi2.a",
            Api::Pmi2 => "libpmi.a",
        };
        return ready.then_some(archive);
    }
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
