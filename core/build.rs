//! Compile `src/sibling.c` (two weak references; `sibling.rs`). Link the unwinder
//! statically, as `gcc -static-libgcc` does: on Linux with glibc,
//! Rust's standard library asks for `-lgcc_s`, and loading `libgcc_s.so.1` costs every
//! process of a job about as much CPU time as the rest of the library's loading (measured
//! with 32 processes started at once on 2 cores; `bench/missed.md`). A linker script named
//! `libgcc_s.so`, found first on the search path, stands for gcc's `libgcc_eh.a`. The
//! unwinder's symbols stay local (the version script exports the API only), so a program
//! that loads `libgcc_s.so.1` itself keeps its own. The search path reaches the crates that
//! link this one (`libpmi.so.0`, `libpmi2.so.0`, the tests). Where `libgcc_eh.a` is not
//! found, the build says so and links `libgcc_s` as before.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/sibling.c");
    println!("cargo:rerun-if-env-changed=CC");
    cc::Build::new()
        .file("src/sibling.c")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("pmi_core_sibling");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        match static_unwinder() {
            Ok(dir) => println!("cargo:rustc-link-search=native={}", dir.display()),
            Err(why) => println!("cargo:warning=linking libgcc_s.so.1 dynamically: {why}"),
        }
    }
}

/// A directory holding `libgcc_s.so`, a linker script naming gcc's `libgcc_eh.a`.
fn static_unwinder() -> Result<PathBuf, String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    let archive = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // gcc prints the bare name back when it has no such file.
    if !out.status.success() || !Path::new(&archive).is_absolute() {
        return Err(format!("{cc} does not know libgcc_eh.a"));
    }
    if archive.contains('"') || !Path::new(&archive).is_file() {
        return Err(format!("unusable libgcc_eh.a path {archive:?}"));
    }
    let dir =
        PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?).join("static-libgcc");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("libgcc_s.so"), format!("INPUT(\"{archive}\")\n"))
        .map_err(|e| e.to_string())?;
    Ok(dir)
}
