//! What is answered without the server (rank, size, the length maxima) is answered while
//! another thread waits in `PMI_Barrier`: those calls do not take the lock the barrier
//! holds. The server is a forked child (a socket's peer must be another process: the
//! library refuses a PMI_FD connected to itself); it holds the barrier until this
//! process has its answers (or has waited 5 s for them), told over a pipe. Its own test
//! binary: the library's state is the process's, and it forks.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc;
use std::time::Duration;

use pmi::api::info::{PMI_Get_rank, PMI_Get_size};
use pmi::api::kvs::{
    PMI_Barrier, PMI_KVS_Get_key_length_max, PMI_KVS_Get_name_length_max,
    PMI_KVS_Get_value_length_max,
};
use pmi::api::lifecycle::{PMI_Finalize, PMI_Init};

#[test]
fn rank_size_and_maxima_are_answered_during_a_barrier() {
    let path = std::env::temp_dir().join(format!("pmi-queries-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).expect("bind");
    let (mut seen, mut release) = ([-1; 2], [-1; 2]);
    // SAFETY: valid arrays of two ints for the pipes' ends.
    assert_eq!(unsafe { libc::pipe(seen.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::pipe(release.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: the child only serves the script below on its own connection and ends in
    // _exit; it never returns into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        serve(&path, seen[1], release[0]);
    }
    let (stream, _) = listener.accept().expect("accept");
    let _ = std::fs::remove_file(&path);
    // SAFETY: F_SETFD on an fd this process owns: a launcher's PMI_FD is inherited, so
    // it is not close-on-exec.
    unsafe { libc::fcntl(stream.as_raw_fd(), libc::F_SETFD, 0) };
    std::env::set_var("PMI_FD", stream.into_raw_fd().to_string());
    std::env::set_var("PMI_RANK", "3");
    std::env::set_var("PMI_SIZE", "8");
    let mut spawned = -1;
    // SAFETY: a valid pointer to an int.
    assert_eq!(unsafe { PMI_Init(&mut spawned) }, 0);
    let barrier = std::thread::spawn(|| PMI_Barrier());
    assert!(byte(seen[0]), "the server read the barrier");
    let (answer, answered) = mpsc::channel();
    std::thread::spawn(move || {
        let mut n = [-1; 5];
        // SAFETY: valid pointers to ints.
        let rcs = unsafe {
            [
                PMI_Get_rank(&mut n[0]),
                PMI_Get_size(&mut n[1]),
                PMI_KVS_Get_name_length_max(&mut n[2]),
                PMI_KVS_Get_key_length_max(&mut n[3]),
                PMI_KVS_Get_value_length_max(&mut n[4]),
            ]
        };
        let _ = answer.send((rcs, n));
    });
    let got = answered.recv_timeout(Duration::from_secs(5));
    // SAFETY: writes one byte from a valid buffer to the pipe's write end.
    assert_eq!(
        unsafe { libc::write(release[1], b"r".as_ptr().cast(), 1) },
        1
    );
    assert_eq!(barrier.join().unwrap(), 0);
    assert_eq!(
        got.expect("answered while the barrier waits"),
        ([0; 5], [3, 8, 200, 48, 777])
    );
    assert_eq!(PMI_Finalize(), 0);
    let mut status = 0;
    // SAFETY: reaps the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "server status {status}"
    );
}

/// One byte from `fd`; false at its end.
fn byte(fd: RawFd) -> bool {
    let mut b = 0u8;
    // SAFETY: reads one byte into a valid buffer.
    unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) == 1 }
}

/// The forked server: the handshake with maxima that are not the defaults, then the
/// barrier held until a byte on `release` (after one on `seen`), then the finalize.
fn serve(path: &std::path::Path, seen: RawFd, release: RawFd) -> ! {
    let ok = (|| -> Option<()> {
        let stream = UnixStream::connect(path).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .ok()?;
        let mut out = stream.try_clone().ok()?;
        let mut lines = BufReader::new(stream).lines();
        let mut expect = |want: &str| (lines.next()?.ok()? == want).then_some(());
        expect("cmd=init pmi_version=1 pmi_subversion=1")?;
        out.write_all(b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
            .ok()?;
        expect("cmd=get_maxes")?;
        out.write_all(b"cmd=maxes kvsname_max=200 keylen_max=48 vallen_max=777\n")
            .ok()?;
        expect("cmd=barrier_in")?;
        // SAFETY: writes one byte from a valid buffer to the pipe's write end.
        (unsafe { libc::write(seen, b"s".as_ptr().cast(), 1) } == 1).then_some(())?;
        byte(release).then_some(())?;
        out.write_all(b"cmd=barrier_out\n").ok()?;
        expect("cmd=finalize")?;
        out.write_all(b"cmd=finalize_ack\n").ok()
    })();
    // SAFETY: ends the forked child at once.
    unsafe { libc::_exit(if ok.is_some() { 0 } else { 1 }) }
}
