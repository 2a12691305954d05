//! A server that sends 32 MiB without a newline: the client gives up with PMI_FAIL once
//! a line passes the 64 KiB cap, and its peak memory grows by far less than what was
//! sent. Its own test binary, so that the peak RSS measured is this scenario's.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::thread;

use pmi_core::error::PmiError;
use pmi_core::Identity;
use pmi_testkit::core::pmi1_client;
use pmi_testkit::core::wire::pmi1::MAX_LINE;
use pmi_testkit::core::Connection as Conn;

const SENT: usize = 32 << 20;

/// Peak resident set size of this process, in KiB.
fn peak_rss_kib() -> i64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage.ru_maxrss
    }
}

#[test]
fn endless_line_fails_with_bounded_memory() {
    let (client, server) = UnixStream::pair().unwrap();
    let before = peak_rss_kib();
    let writer = thread::spawn(move || {
        let mut request = String::new();
        BufReader::new(server.try_clone().unwrap())
            .read_line(&mut request)
            .unwrap();
        assert_eq!(request, "cmd=init pmi_version=1 pmi_subversion=1\n");
        let chunk = [b'x'; 64 * 1024];
        let mut sent = 0;
        // The client stops reading and closes: then the writes fail and we stop.
        while sent < SENT && (&server).write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    let id = Identity {
        rank: 0,
        size: 1,
        spawned: false,
    };
    let result = pmi1_client(Conn::new(OwnedFd::from(client)), id, MAX_LINE);
    assert_eq!(result.err(), Some(PmiError::Fail));
    let sent = writer.join().unwrap();
    let grown = peak_rss_kib() - before;
    println!(
        "server wrote {} KiB before the client gave up; peak RSS grew {grown} KiB",
        sent / 1024
    );
    assert!(sent < SENT, "the client kept reading the endless line");
    assert!(grown < 4 * 1024, "peak RSS grew {grown} KiB");
}
