//! The build script of both C fronts (`libpmi`, `libpmi2`): the shared library's soname is
//! the package name with `.so.0` (`libpmi.so.0`, `libpmi2.so.0`), as every libpmi and
//! libpmi2 has. The unwinder is linked statically by `pmi-core`'s build script, whose
//! search path reaches every crate that links the core.

fn main() {
    println!("cargo:rerun-if-changed=../front-build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let name = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    if os == "linux" && !name.is_empty() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{name}.so.0");
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rerun-if-changed=../hot-text.ld");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-T,{dir}/../hot-text.ld");
        // The linker's map, beside the library (OUT_DIR is <target>/<profile>/build/
        // <crate>-<hash>/out): `make check-symbols` checks every pattern of hot-text.ld
        // against the input sections it lists.
        let out = std::env::var("OUT_DIR").unwrap_or_default();
        if let Some(profile) = std::path::Path::new(&out).ancestors().nth(3) {
            let map = profile.join(format!("{name}.so.map"));
            println!("cargo:rustc-cdylib-link-arg=-Wl,-Map={}", map.display());
        }
        // Each segment starts a page: the data the loader relocates then fills 3 pages,
        // not 4, and the writable data 1, not 2. Each is a page every process writes (a
        // copy on write) and keeps: 8 KiB less private memory per rank. GNU ld lays out
        // its segments so by itself and takes the option without a word.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,separate-loadable-segments");
    }
}
