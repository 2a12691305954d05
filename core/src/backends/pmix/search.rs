//! Where the PMIx client library is looked for: `PMI_PMIX_LIBRARY` alone when set, else
//! the soname, Debian's directory, and the copies under the launcher's install prefixes.

use std::ffi::OsString;

use super::calls::{self, Lib};
use crate::launch::PmixEnv;

/// Load the PMIx client library; the error lists every file tried and why.
pub fn load(found: &PmixEnv) -> Result<&'static Lib, String> {
    calls::load(&candidates(found))
}

/// Debian's multiarch directory name for this build's target (`x86_64-linux-gnu`): the
/// CPU's name, but where Debian names it otherwise.
fn multiarch() -> String {
    let arch = std::env::consts::ARCH;
    let little = cfg!(target_endian = "little");
    match arch {
        "x86" => "i386-linux-gnu".into(),
        "arm" if cfg!(target_abi = "eabihf") => "arm-linux-gnueabihf".into(),
        "arm" => "arm-linux-gnueabi".into(),
        "powerpc64" if little => "powerpc64le-linux-gnu".into(),
        "mips64" if little => "mips64el-linux-gnuabi64".into(),
        _ => format!("{arch}-linux-gnu"),
    }
}

/// Where to look for the PMIx client library, in order: `PMI_PMIX_LIBRARY` alone when
/// set; else the soname (the loader's path, or a copy an MPI already loaded), the
/// Debian/Ubuntu location, then the copies under the launcher's install prefixes.
pub fn candidates(found: &PmixEnv) -> Vec<OsString> {
    if let Some(path) = &found.library {
        return vec![path.clone()];
    }
    let mut list = vec![OsString::from("libpmix.so.2")];
    list.push(OsString::from(format!(
        "/usr/lib/{}/pmix2/lib/libpmix.so.2",
        multiarch()
    )));
    for prefix in &found.prefixes {
        for lib in ["/lib/libpmix.so.2", "/lib/openmpi/libpmix.so.2"] {
            let mut path = prefix.clone();
            path.push(lib);
            list.push(path);
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debian_directory_is_this_systems() {
        // On Debian (and Ubuntu) the loader's own directory has this name.
        if std::path::Path::new("/etc/debian_version").exists() {
            let dir = format!("/usr/lib/{}", multiarch());
            assert!(std::path::Path::new(&dir).is_dir(), "no {dir}");
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(multiarch(), "x86_64-linux-gnu");
    }
}
