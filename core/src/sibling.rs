//! The other PMI library of this process. A program may load both `libpmi.so.0` and
//! `libpmi2.so.0` (an MPI using one, a tool the other); each would take the same
//! `PMI_FD`, or connect to `PMI_PORT` with the same `PMI_ID`, and Hydra's proxy then
//! asserts (5.0.2) or the first barrier never returns (4.0.2); under PMIx both would
//! share one PMIx client and put their key directories under the same keys. So the second to
//! initialize asks the first whether it is initialized, and is refused if so: linked
//! into the same program from the static archives, through a weak reference
//! (`sibling.c`); else through the loader. The one home here of the loader calls; only
//! a library already loaded is looked at (`RTLD_NOLOAD`), never a new one.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void, CStr};

use crate::api::Api;
use crate::backends::pmix_lib;

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
    // (Asked of the loader alone, RTLD_NOLOAD would search the library path and open a
    // file of that name: 3 to 16 µs in each process, measured, for the usual answer no.)
    if !soname_loaded(soname) {
        return None;
    }
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

/// An entry of an object's dynamic section (`ElfN_Dyn`).
#[repr(C)]
struct Dyn {
    tag: isize,
    val: usize,
}
const DT_NULL: isize = 0;
const DT_STRTAB: isize = 5;
const DT_SONAME: isize = 14;

/// Whether an object loaded in this process names itself `soname` (its `DT_SONAME`),
/// read from the loaded objects' dynamic sections in memory: no system call.
fn soname_loaded(soname: &CStr) -> bool {
    unsafe extern "C" fn names(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        wanted: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info, valid during the call; `wanted` is
        // the &CStr soname_loaded passes, alive during the call.
        let (info, wanted) = unsafe { (&*info, *wanted.cast::<&CStr>()) };
        let headers = pmix_lib::program_headers(info);
        let Some(dynamic) = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC) else {
            return 0;
        };
        let base = info.dlpi_addr as usize;
        let mut entry = (base + dynamic.p_vaddr as usize) as *const Dyn;
        let (mut strtab, mut name) = (None, None);
        loop {
            // SAFETY: PT_DYNAMIC of a loaded object: entries mapped up to DT_NULL.
            let Dyn { tag, val } = unsafe { entry.read() };
            match tag {
                DT_NULL => break,
                // The loader rewrites it to an address where the section is writable;
                // else (the vDSO) it is still an offset from the base.
                DT_STRTAB => strtab = Some(if val < base { base + val } else { val }),
                DT_SONAME => name = Some(val),
                _ => {}
            }
            // SAFETY: still inside the section: DT_NULL was not reached.
            entry = unsafe { entry.add(1) };
        }
        let (Some(strtab), Some(name)) = (strtab, name) else {
            return 0;
        };
        // SAFETY: DT_SONAME is an offset into the object's string table, which is mapped
        // and holds NUL-terminated strings.
        let found = unsafe { CStr::from_ptr((strtab + name) as *const libc::c_char) };
        c_int::from(found == wanted)
    }
    let mut wanted = soname;
    // SAFETY: the callback reads only its info and the loaded objects' dynamic sections
    // and string tables, and the &CStr it is given.
    unsafe { libc::dl_iterate_phdr(Some(names), (&raw mut wanted).cast()) != 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_library_is_found_by_its_soname_and_no_other() {
        // libc is loaded in every test process (its soname libc.so.6); no libpmi2.so.0 in
        // this one.
        assert!(soname_loaded(c"libc.so.6"));
        assert!(!soname_loaded(c"libpmi2.so.0"));
        assert!(!soname_loaded(c"libc.so"));
        assert!(initialized_sibling(Api::Pmi1).is_none());
    }
}
