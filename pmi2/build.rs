//! Set the soname of the shared library to `libpmi2.so.0`, as Slurm's and MPICH's have.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpmi2.so.0");
    }
}
