//! The PMIx layouts the backend declares (src/backends/pmix/abi.rs) against the real
//! `pmix.h`: a C program built with Debian's libpmix-dev prints each `sizeof`,
//! `offsetof` and constant, and every one must equal ours. Also: the attribute names the
//! backend passes are the ones the header defines.

use std::collections::BTreeMap;
use std::process::Command;

fn pkg_config_cflags() -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(["--cflags", "pmix"])
        .output()
        .expect("pkg-config runs (make deps installs it)");
    assert!(
        out.status.success(),
        "pkg-config --cflags pmix failed: install libpmix-dev (make deps)"
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn c_layout() -> BTreeMap<String, usize> {
    let dir = std::env::temp_dir().join(format!("pmix-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("pmix_abi");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pmix_abi.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        // pmix.h itself needs POSIX (strdup) and gnu extensions.
        .args(["-std=gnu99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(src)
        .args(pkg_config_cflags())
        .status()
        .expect("cc runs");
    assert!(status.success(), "tests/pmix_abi.c does not build");
    let out = Command::new(&exe).output().expect("pmix_abi runs");
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (name, value) = line.rsplit_once(' ').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn layouts_match_the_real_pmix_h() {
    let c = c_layout();
    let ours = pmi_testkit::core::pmix_abi_layout();
    assert_eq!(ours.len(), c.len(), "the same entries on both sides");
    for (name, value) in ours {
        assert_eq!(c.get(name), Some(&value), "{name}");
    }
}

#[test]
fn attribute_names_are_the_headers() {
    let include = pkg_config_cflags()
        .iter()
        .find_map(|f| f.strip_prefix("-I").map(str::to_string))
        .expect("an -I from pkg-config");
    let header = std::fs::read_to_string(format!("{include}/pmix_common.h")).unwrap();
    let sources = [
        include_str!("../src/backends/pmix/mod.rs"),
        include_str!("../src/backends/pmix/calls.rs"),
        include_str!("../src/backends/pmix/layout.rs"),
    ]
    .concat();
    for (macro_name, value) in [
        ("PMIX_JOB_SIZE", "pmix.job.size"),
        ("PMIX_UNIV_SIZE", "pmix.univ.size"),
        ("PMIX_APPNUM", "pmix.appnum"),
        ("PMIX_SPAWNED", "pmix.spawned"),
        ("PMIX_PARENT_ID", "pmix.parent"),
        ("PMIX_ANL_MAP", "pmix.anlmap"),
        ("PMIX_NODEID", "pmix.nodeid"),
        ("PMIX_LOCAL_PEERS", "pmix.lpeers"),
        ("PMIX_COLLECT_DATA", "pmix.collect"),
        ("PMIX_IMMEDIATE", "pmix.immediate"),
        ("PMIX_TIMEOUT", "pmix.timeout"),
        ("PMIX_HOST", "pmix.host"),
        ("PMIX_HOSTFILE", "pmix.hostfile"),
    ] {
        let define = header
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(macro_name))
            .unwrap_or_else(|| panic!("{macro_name} in pmix_common.h"));
        assert!(
            define.contains(&format!("\"{value}\"")),
            "{macro_name} is not \"{value}\": {define}"
        );
        assert!(
            sources.contains(&format!("\"{value}\"")),
            "\"{value}\" ({macro_name}) is not used"
        );
    }
}
