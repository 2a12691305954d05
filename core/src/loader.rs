//! The dynamic loader and the ELF headers of what it loaded: the one home of `dlopen`,
//! `dlsym` and `dl_iterate_phdr`. The PMIx backend opens its client library here
//! (`backends::pmix::calls`), and `sibling` asks whether the other PMI library is loaded
//! (never loading one). Everything here reads what the loader holds; nothing is unloaded
//! that another part of the process uses.

use std::ffi::{c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;

/// A library this process opened (or found loaded), until [`Handle::close`].
pub struct Handle(*mut c_void);

/// Open the library at `path` (or of that soname, on the loader's path), resolving every
/// symbol now and keeping them out of the program's namespace (`RTLD_NOW | RTLD_LOCAL`):
/// its initializers run, which is what loading a client library means.
pub fn open(path: &OsStr) -> Result<Handle, String> {
    let mut name = path.as_bytes().to_vec();
    if name.contains(&0) {
        return Err("a NUL in the name".into());
    }
    name.push(0);
    // SAFETY: `name` is NUL-terminated. dlopen runs the library's initializers, which the
    // caller asked for; RTLD_LOCAL keeps its symbols out of the program's.
    let handle = unsafe { libc::dlopen(name.as_ptr().cast(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(dlerror());
    }
    Ok(Handle(handle))
}

/// The library of `soname` if it is already loaded in this process, never loading one
/// (`RTLD_NOLOAD`): its reference count is raised until [`Handle::close`], and no
/// initializer runs.
pub fn open_loaded(soname: &CStr) -> Option<Handle> {
    // SAFETY: a NUL-terminated name; RTLD_NOLOAD only returns a library already loaded.
    let handle = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    (!handle.is_null()).then_some(Handle(handle))
}

impl Handle {
    /// The address of `name` (NUL-terminated) in the library, if it has it.
    pub fn symbol(&self, name: &str) -> Option<*mut c_void> {
        if !name.ends_with('\0') {
            return None;
        }
        // SAFETY: a live handle and a NUL-terminated name.
        let sym = unsafe { libc::dlsym(self.0, name.as_ptr().cast()) };
        (!sym.is_null()).then_some(sym)
    }

    /// Drop this reference to the library; nothing taken from it may be used after,
    /// unless another reference keeps it loaded.
    pub fn close(self) {
        // SAFETY: the handle's own reference, taken by dlopen.
        unsafe { libc::dlclose(self.0) };
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        "dlopen failed".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Whether this program is statically linked, with no dynamic loader of its own: then
/// `dlopen` would bring a second C library into the process, and loading PMIx so
/// crashed (a program linked with `-static` and `libpmi.a`, under `srun --mpi=pmix`:
/// SIGSEGV, seen). Known by the program's own headers: a dynamically linked program
/// names its loader (`PT_INTERP`), a static one (`-static`, `-static-pie`) does not.
pub fn statically_linked() -> bool {
    unsafe extern "C" fn names_a_loader(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        found: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info, valid during the call.
        let interp = program_headers(unsafe { &*info })
            .iter()
            .any(|h| h.p_type == libc::PT_INTERP);
        // SAFETY: `found` is the bool statically_linked passes, alive during the call.
        unsafe { *found.cast::<bool>() = interp };
        // The first object is the program itself: stop there.
        1
    }
    let mut interp = false;
    // SAFETY: the callback writes only the bool it is given and reads only its info.
    unsafe { libc::dl_iterate_phdr(Some(names_a_loader), (&raw mut interp).cast()) };
    !interp
}

/// The program headers of a loaded object, as `dl_iterate_phdr` describes it.
fn program_headers(info: &libc::dl_phdr_info) -> &[libc::Elf64_Phdr] {
    if info.dlpi_phdr.is_null() {
        return &[];
    }
    // SAFETY: dlpi_phdr points to the object's dlpi_phnum program headers, valid while
    // `info` is.
    unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
}

/// The file (program or shared object) that holds `addr`.
pub fn object_of(addr: *const c_void) -> Option<*const c_void> {
    // SAFETY: an all-zero Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable; dladdr only reads the address.
    (unsafe { libc::dladdr(addr, &mut info) } != 0).then_some(info.dli_fbase.cast_const())
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
pub fn soname_loaded(soname: &CStr) -> bool {
    unsafe extern "C" fn names(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        wanted: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info, valid during the call; `wanted` is
        // the &CStr soname_loaded passes, alive during the call.
        let (info, wanted) = unsafe { (&*info, *wanted.cast::<&CStr>()) };
        let headers = program_headers(info);
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
