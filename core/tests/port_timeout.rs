//! `PMI_TIMEOUT` bounds connecting to `PMI_PORT`: a listening port whose backlog is full
//! drops the SYNs, and without a bound the connect retries for about two minutes.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use pmi_testkit::core::Connection as Conn;

/// A TCP port on 127.0.0.1 that listens with a backlog of 0 and never accepts, its
/// queue filled; the socket (keep it open) and the port.
fn full_port() -> (libc::c_int, u16) {
    // SAFETY: plain socket calls on a socket this function owns; `addr` is a valid
    // sockaddr_in and `len` its size.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let sa = std::ptr::from_mut(&mut addr).cast::<libc::sockaddr>();
        assert_eq!(libc::bind(fd, sa, len), 0);
        assert_eq!(libc::listen(fd, 0), 0);
        assert_eq!(libc::getsockname(fd, sa, &mut len), 0);
        (fd, u16::from_be(addr.sin_port))
    }
}

#[test]
fn a_full_backlog_fails_within_pmi_timeout() {
    let (listener, port) = full_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    // Fill the queue: connections complete until it is full, then SYNs are dropped.
    let mut held = Vec::new();
    for _ in 0..8 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(stream) => held.push(stream),
            Err(_) => break,
        }
    }
    let start = Instant::now();
    let result = Conn::connect("127.0.0.1", port, Some(1));
    let took = start.elapsed();
    let why = result.err().expect("a full backlog refuses the connect");
    assert!(why.contains("no answer in 1 s (PMI_TIMEOUT)"), "{why}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(held);
    // SAFETY: the listener this test opened.
    unsafe { libc::close(listener) };
}
