//! The check of `PMI_FD`, made once, by `launch::decide`: whether the fd can be the
//! launcher's connection. Its system calls are the only `unsafe` of `launch`.

use std::io;
use std::os::fd::RawFd;

/// Whether `fd` is an open descriptor of this process.
pub fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only reads the descriptor flags of `fd`; a closed fd gives EBADF.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// The pid of the process that made the other end of the Unix socket `fd` (for a
/// socketpair, the one that made the pair), from `SO_PEERCRED`; `None` for another kind
/// of socket or when the kernel has none.
pub fn peer_pid(fd: RawFd) -> Option<libc::pid_t> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is a live ucred on the stack and `len` its size; the kernel writes
    // at most `len` bytes. An fd that is not a Unix socket only makes the call fail.
    let got = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    (got == 0 && cred.pid > 0).then_some(cred.pid)
}

/// Refuse a `PMI_FD` that cannot be the launcher's connection, with a message naming
/// why, before anything is written to it: not open, not a socket, not a stream socket, a
/// listening socket, one opened by this process (close-on-exec is set: it was not
/// inherited across `exec`), not connected, or one whose peer is this very process. A
/// stale `PMI_FD` inherited by a program that then opened its own sockets names one of
/// those. Five system calls when the fd is good (every rank of a job makes them); the
/// listening check is made only to name a refusal.
pub fn check_pmi_fd(fd: RawFd) -> Result<(), String> {
    // SAFETY: F_GETFD only reads the descriptor flags of `fd`; a closed fd gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        let err = io::Error::last_os_error();
        return Err(format!(
            "PMI_FD={fd} is not an open file descriptor ({err})"
        ));
    }
    let option = |level, name| -> Result<libc::c_int, io::Error> {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `value` and `len` are valid for writing an int option of `len` bytes.
        let rc = unsafe { libc::getsockopt(fd, level, name, (&raw mut value).cast(), &mut len) };
        if rc == 0 {
            Ok(value)
        } else {
            Err(io::Error::last_os_error())
        }
    };
    match option(libc::SOL_SOCKET, libc::SO_TYPE) {
        Ok(libc::SOCK_STREAM) => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOTSOCK) => {
            return Err(format!("PMI_FD={fd} is not a socket"))
        }
        _ => return Err(format!("PMI_FD={fd} is not a stream socket")),
    }
    // SAFETY: an all-zero sockaddr_storage is a valid value for this plain C struct.
    let mut peer: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `peer` and `len` describe a writable buffer of `len` bytes.
    let connected = unsafe { libc::getpeername(fd, (&raw mut peer).cast(), &mut len) } == 0;
    let cloexec = flags & libc::FD_CLOEXEC != 0;
    if cloexec || !connected {
        if option(libc::SOL_SOCKET, libc::SO_ACCEPTCONN).ok() != Some(0) {
            return Err(format!("PMI_FD={fd} is a listening socket"));
        }
        if cloexec {
            return Err(format!(
                "PMI_FD={fd} is close-on-exec, so it was opened by this process, not \
                 inherited from the launcher (a stale PMI_FD?)"
            ));
        }
        return Err(format!("PMI_FD={fd} is not connected"));
    }
    if libc::c_int::from(peer.ss_family) == libc::AF_UNIX
        && peer_pid(fd) == Some(std::process::id() as libc::pid_t)
    {
        return Err(format!(
            "PMI_FD={fd} is connected to this process itself, not to a launcher (a \
             stale PMI_FD?)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A socket of this process without close-on-exec, as a launcher's would be.
    fn socket(domain: libc::c_int, kind: libc::c_int) -> OwnedFd {
        // SAFETY: socket() takes no pointers; a valid fd is owned from here on.
        let fd = unsafe { libc::socket(domain, kind, 0) };
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        // SAFETY: `fd` was just opened and is owned by nobody else.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    fn refusal(fd: RawFd) -> String {
        check_pmi_fd(fd).expect_err("the fd was taken")
    }

    #[test]
    fn each_refusal_is_named() {
        // (Not a number just closed: another test's thread could open it again.)
        assert!(refusal(RawFd::MAX).contains("is not an open file descriptor"));

        let mut ends = [0; 2];
        // SAFETY: `ends` has room for the two fds pipe() writes.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        // SAFETY: both ends were just opened and are owned by nobody else.
        let pipe = unsafe { [OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])] };
        assert!(refusal(pipe[0].as_raw_fd()).contains("is not a socket"));

        let udp = socket(libc::AF_INET, libc::SOCK_DGRAM);
        assert!(refusal(udp.as_raw_fd()).contains("is not a stream socket"));

        let lone = socket(libc::AF_UNIX, libc::SOCK_STREAM);
        assert!(refusal(lone.as_raw_fd()).contains("is not connected"));

        let listening = socket(libc::AF_UNIX, libc::SOCK_STREAM);
        // SAFETY: an all-zero sockaddr_un is a valid value for this plain C struct.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let family = std::mem::size_of::<libc::sa_family_t>() as libc::socklen_t;
        // SAFETY: `addr` is valid for `family` bytes; a bare family autobinds an abstract
        // name, so nothing is left in the file system.
        let rc = unsafe { libc::bind(listening.as_raw_fd(), (&raw const addr).cast(), family) };
        assert_eq!(rc, 0, "bind: {}", io::Error::last_os_error());
        // SAFETY: listen() takes no pointers.
        assert_eq!(unsafe { libc::listen(listening.as_raw_fd(), 1) }, 0);
        assert!(refusal(listening.as_raw_fd()).contains("is a listening socket"));

        // SAFETY: `ends` has room for the two fds socketpair() writes.
        let rc =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, ends.as_mut_ptr()) };
        assert_eq!(rc, 0);
        // SAFETY: both ends were just opened and are owned by nobody else.
        let pair = unsafe { [OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])] };
        assert!(refusal(pair[0].as_raw_fd()).contains("is connected to this process itself"));

        let (ours, _peer) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        assert!(refusal(ours.as_raw_fd()).contains("is close-on-exec"));
    }
}
