//! `PMI_Abort` while another thread waits for the server still reaches it: in
//! `PMI_Finalize` for `finalize_ack`, and in `PMI_Barrier` for `barrier_out` (the thread
//! holds the library's lock; the abort takes the fd directly). The client is a forked
//! child (PMI_Abort ends its process); this test process is the server, which never
//! answers the blocked request and must then read `cmd=abort exitcode=N`. Its own test
//! binary: it forks. The server tells the child, over a pipe, when it has read the
//! request: only then does the child abort (a sleep does not order two threads on a busy
//! machine).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use pmi::api::kvs::PMI_Barrier;
use pmi::api::lifecycle::{PMI_Abort, PMI_Finalize, PMI_Init};

/// One test, the two cases one after the other: a fork while another test's thread held
/// one of std's locks (the environment's) would leave the child waiting for it.
#[test]
fn abort_while_another_thread_waits_reaches_the_server() {
    abort_while("finalize", "cmd=finalize", 5);
    abort_while("barrier", "cmd=barrier_in", 6);
}

/// A forked client blocks a thread in `call` (its request `request`), then aborts with
/// `code`: the server must read the abort, and the client exit with `code`.
fn abort_while(call: &str, request: &str, code: i32) {
    let path = std::env::temp_dir().join(format!("pmi-abort-{call}-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).expect("bind");
    let mut pipe = [-1; 2];
    // SAFETY: a valid array of two ints for the pipe's ends.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: the child only connects, drives the library through its C exports and
    // ends in PMI_Abort (or _exit); it never returns into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        client(&path, pipe[0], call, code);
    }
    let (stream, _) = listener.accept().expect("accept");
    let _ = std::fs::remove_file(&path);
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut out = stream.try_clone().expect("clone");
    let mut lines = BufReader::new(stream).lines();
    let mut next = || lines.next().expect("a line").expect("read");
    assert_eq!(next(), "cmd=init pmi_version=1 pmi_subversion=1");
    out.write_all(b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
        .unwrap();
    assert_eq!(next(), "cmd=get_maxes");
    out.write_all(b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n")
        .unwrap();
    assert_eq!(next(), request);
    // No answer: the child's other thread aborts meanwhile, told to now.
    // SAFETY: writes one byte from a valid buffer to the pipe's write end.
    assert_eq!(unsafe { libc::write(pipe[1], b"f".as_ptr().cast(), 1) }, 1);
    assert_eq!(next(), format!("cmd=abort exitcode={code}"));
    let mut status = 0;
    // SAFETY: reaps the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == code,
        "status {status}"
    );
}

/// The forked client: PMI_Init on a connection to the test, `call` in a thread,
/// PMI_Abort(`code`) from this one once the server has read its request (a byte on
/// `told`).
fn client(path: &std::path::Path, told: libc::c_int, call: &str, code: i32) -> ! {
    let stream = UnixStream::connect(path).expect("connect");
    // SAFETY: F_SETFD on an fd this process owns: a launcher's PMI_FD is inherited, so
    // it is not close-on-exec.
    unsafe { libc::fcntl(stream.as_raw_fd(), libc::F_SETFD, 0) };
    std::env::set_var("PMI_FD", stream.into_raw_fd().to_string());
    std::env::set_var("PMI_RANK", "0");
    std::env::set_var("PMI_SIZE", "1");
    let mut spawned = -1;
    // SAFETY: a valid pointer to an int.
    if unsafe { PMI_Init(&mut spawned) } != 0 {
        // SAFETY: ends the forked child at once.
        unsafe { libc::_exit(90) };
    }
    if call == "finalize" {
        std::thread::spawn(|| PMI_Finalize());
    } else {
        std::thread::spawn(|| PMI_Barrier());
    }
    let mut byte = 0u8;
    // SAFETY: reads one byte into a valid buffer; blocks until the server writes it.
    if unsafe { libc::read(told, (&mut byte as *mut u8).cast(), 1) } != 1 {
        // SAFETY: ends the forked child at once.
        unsafe { libc::_exit(92) };
    }
    // SAFETY: a NUL-terminated message.
    unsafe { PMI_Abort(code, c"aborting while another thread waits".as_ptr()) };
    // SAFETY: PMI_Abort does not return; this is unreachable.
    unsafe { libc::_exit(91) }
}
