//! Set the soname of the shared library to `libpmi.so.0`, as every libpmi has; only
//! when building it (feature `pmi1`), not when `libpmi2.so.0` uses this crate as its core.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" && std::env::var_os("CARGO_FEATURE_PMI1").is_some() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpmi.so.0");
    }
}
