//! The other PMI library of this process. A program may load both `libpmi.so.0` and
//! `libpmi2.so.0` (an MPI using one, a tool the other); each would take the same
//! `PMI_FD`, or connect to `PMI_PORT` with the same `PMI_ID`, and Hydra's proxy then
//! asserts (5.0.2) or the first barrier never returns (4.0.2); under PMIx both would
//! share one PMIx client and put their key directories under the same keys. So the second to
//! initialize asks the first whether it is initialized, and is refused if so: linked
//! into the same program from the static archives, through a weak reference
//! (`sibling.c`); else through the loader (`loader`), which looks only at a library
//! already loaded, never a new one.

use std::ffi::{c_int, c_void};

use crate::api::Api;
use crate::loader;

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
    let same_file = loader::statically_linked()
        || loader::object_of(linked_query as *const c_void)
            .is_some_and(|here| loader::object_of(query.addr()) == Some(here));
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
    let (soname, name) = match api {
        Api::Pmi1 => (c"libpmi2.so.0", "PMI2_Initialized\0"),
        Api::Pmi2 => (c"libpmi.so.0", "PMI_Initialized\0"),
    };
    // (Asked of the loader alone, RTLD_NOLOAD would search the library path and open a
    // file of that name: 3 to 16 µs in each process, measured, for the usual answer no.)
    if !loader::soname_loaded(soname) {
        return None;
    }
    let handle = loader::open_loaded(soname)?;
    let yes = handle.symbol(name).is_some_and(|sym| {
        match api {
            // SAFETY: the library's `PMI2_Initialized`, whose prototype Query::Pmi2 spells.
            Api::Pmi1 => Query::Pmi2(unsafe {
                std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(sym)
            }),
            // SAFETY: the library's `PMI_Initialized`, whose prototype Query::Pmi1 spells.
            Api::Pmi2 => Query::Pmi1(unsafe {
                std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_int) -> c_int>(sym)
            }),
        }
        .ready()
    });
    // (The reference open_loaded took; the library stays loaded by its first owner.)
    handle.close();
    yes.then(|| soname.to_str().unwrap_or("the other PMI library"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_library_is_found_by_its_soname_and_no_other() {
        // libc is loaded in every test process (its soname libc.so.6); no libpmi2.so.0 in
        // this one.
        assert!(loader::soname_loaded(c"libc.so.6"));
        assert!(!loader::soname_loaded(c"libpmi2.so.0"));
        assert!(!loader::soname_loaded(c"libc.so"));
        assert!(initialized_sibling(Api::Pmi1).is_none());
    }
}
