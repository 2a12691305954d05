//! The connection to the process manager (`PMI_FD`, or a TCP socket to `PMI_PORT`): a
//! request out, one bounded message in, in lock-step, within `PMI_TIMEOUT`. Bytes only:
//! each wire's backend says how its messages are framed ([`Framing`]). Its system calls
//! are `unsafe`: `lib.rs` lists every module allowed that.

use std::cell::Cell;
use std::fmt;
use std::io;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::error::{PmiError, PmiResult};
use crate::launch::peer_pid;
use crate::trace;
use crate::wire::Framing;

/// The read buffer's first size, as MPICH's client reads: every reply but a get of a
/// value near the 1024-byte maximum fits (that one doubles it once). A larger first
/// buffer made `PMI_Init` grow the heap and fault in its pages: 11 page faults in a
/// cold `PMI_Init` with 4096 bytes, 7 with 1024 (medians of 25 runs).
const INITIAL_BUFFER: usize = 1024;

/// What one read did.
enum Read {
    Got,
    Interrupted,
    WouldBlock,
}

/// A lock-step connection. After any I/O or framing failure it is *broken*: every
/// later call fails at once with `PMI_FAIL` without touching the fd (only
/// [`Conn::send_abort`] still tries to reach the server).
pub struct Conn {
    /// `None` only while being dropped without closing (see `adopted`).
    fd: Option<OwnedFd>,
    /// Whether the fd is the library's to close. An inherited `PMI_FD` is adopted only
    /// once `PMI_Init` succeeded on it: a failed `PMI_Init` leaves it open, as found.
    adopted: bool,
    /// Received bytes not consumed yet are `buf[start..end]`. It starts small and grows
    /// (by doubling) only when a message needs it, up to its framing's cap.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    broken: Cell<bool>,
    /// `PMI_TIMEOUT`: how long a reply may take, in milliseconds (None: no limit).
    timeout_ms: Option<i32>,
    /// `PMI_PORT`'s `host:port` as shown, for the lines that name the server lost;
    /// `None` for an fd (`PMI_FD`), named by its number and its peer ([`Conn::server`]).
    port: Option<String>,
}

impl Conn {
    /// Use `fd`, the `PMI_FD` that `launch::decide` checked (the
    /// only way a launch with a `PMI_FD` reaches a backend): it is closed on drop only
    /// once [`Conn::adopt`] took it.
    pub fn from_fd(fd: RawFd) -> Conn {
        // SAFETY: `launch::decide` checked that `fd` is an open, connected stream socket
        // inherited from the launcher. Until `adopt` the Conn gives it back unclosed on
        // drop (see `Drop`), so the caller's fd is never closed by a failed PMI_Init.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut conn = Conn::new(fd);
        conn.adopted = false;
        conn
    }

    /// Make the fd the library's: closed with the Conn, and close-on-exec so that
    /// programs the application starts do not inherit it.
    pub fn adopt(&mut self) -> Result<(), String> {
        set_cloexec(self.raw_fd())
            .map_err(|e| format!("cannot set FD_CLOEXEC on the PMI fd: {e}"))?;
        self.adopted = true;
        Ok(())
    }

    /// Connect by TCP to `host:port` (a name, an IPv4 or an IPv6 address), with
    /// `TCP_NODELAY`, and the reply limit `timeout` (`PMI_TIMEOUT`), which bounds the
    /// connect too: each address the name resolves to gets the time left (a port whose
    /// backlog is full would otherwise hold it for about two minutes of SYN retries);
    /// resolving the name is the system resolver's, not bounded. The
    /// `PMI_PORT` mode. The socket is close-on-exec.
    pub fn connect(host: &str, port: u16, timeout: Option<u32>) -> Result<Conn, String> {
        use std::net::{TcpStream, ToSocketAddrs};
        use std::time::{Duration, Instant};
        // (The host comes from the environment: a newline in it stays on the one line. An
        // IPv6 host is shown in brackets, as PMI_PORT writes it.)
        let shown = crate::launch::address(&host.escape_debug().to_string(), port);
        let fail = |e: &dyn fmt::Display| format!("cannot connect to PMI_PORT {shown}: {e}");
        let stream = match timeout.filter(|&s| s > 0) {
            None => TcpStream::connect((host, port)).map_err(|e| fail(&e))?,
            Some(seconds) => {
                let deadline = Instant::now() + Duration::from_secs(u64::from(seconds));
                let mut last: Option<io::Error> = None;
                let mut found = None;
                for addr in (host, port).to_socket_addrs().map_err(|e| fail(&e))? {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    match TcpStream::connect_timeout(&addr, left) {
                        Ok(stream) => {
                            found = Some(stream);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                match (found, last) {
                    (Some(stream), _) => stream,
                    (None, Some(e)) if e.kind() == io::ErrorKind::TimedOut => {
                        return Err(fail(&format_args!(
                            "no answer in {seconds} s (PMI_TIMEOUT)"
                        )))
                    }
                    (None, Some(e)) => return Err(fail(&e)),
                    // (Resolving the name, which no bound reaches, took the time.)
                    (None, None) if Instant::now() >= deadline => {
                        return Err(fail(&format_args!(
                            "no answer in {seconds} s (PMI_TIMEOUT)"
                        )))
                    }
                    (None, None) => return Err(fail(&"no address")),
                }
            }
        };
        stream
            .set_nodelay(true)
            .map_err(|e| format!("cannot set TCP_NODELAY on PMI_PORT {shown}: {e}"))?;
        let mut conn = Conn::new(OwnedFd::from(stream));
        conn.set_timeout(timeout);
        conn.port = Some(shown);
        Ok(conn)
    }

    /// Wrap a connected stream socket the caller owns (a socket the library opened, or
    /// one end of a socketpair in tests).
    pub fn new(fd: OwnedFd) -> Conn {
        Conn {
            fd: Some(fd),
            adopted: true,
            buf: vec![0u8; INITIAL_BUFFER],
            start: 0,
            end: 0,
            broken: Cell::new(false),
            timeout_ms: None,
            port: None,
        }
    }

    /// Give up on a reply that takes longer than `seconds` (`PMI_TIMEOUT`).
    pub fn set_timeout(&mut self, seconds: Option<u32>) {
        self.timeout_ms = seconds.map(|s| i32::try_from(u64::from(s) * 1000).unwrap_or(i32::MAX));
    }

    /// The raw fd, so `PMI_Abort` can reach the server while another thread holds the
    /// client.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Send `request`, then read one message as `framing` finds it ([`Conn::recv`]).
    #[inline]
    pub fn exchange(
        &mut self,
        request: &[u8],
        awaited: &[u8],
        framing: &Framing,
    ) -> PmiResult<Range<usize>> {
        self.send(request)?;
        self.recv(awaited, framing)
    }

    /// The bytes of a message [`Conn::recv`] or [`Conn::exchange`] returned: valid until
    /// the next read.
    pub fn message(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    /// Write all of `data`: retry `EINTR`, loop on short writes, never raise `SIGPIPE`.
    pub fn send(&mut self, data: &[u8]) -> PmiResult<()> {
        if self.broken.get() {
            return Err(PmiError::Fail);
        }
        trace::wire(trace::Dir::Client, data);
        let mut sent = 0;
        while sent < data.len() {
            let rest = &data[sent..];
            // SAFETY: `rest` is a live slice of `rest.len()` bytes; `fd` is an open socket
            // owned by `self`. MSG_NOSIGNAL turns a closed peer into EPIPE, not SIGPIPE.
            let n = unsafe {
                libc::send(
                    self.raw_fd(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n >= 0 {
                sent += n as usize;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => self.wait(libc::POLLOUT)?,
                _ => {
                    return Err(self.fail(format_args!(
                        "cannot write to the process manager at {}: {err}",
                        self.server()
                    )))
                }
            }
        }
        Ok(())
    }

    /// Best effort, even on a broken connection: used by `PMI_Abort` only.
    pub fn send_abort(fd: RawFd, line: &[u8]) {
        trace::wire(trace::Dir::Client, line);
        // SAFETY: `line` is a live slice; a stale or closed fd only makes send fail,
        // which is ignored because the process is about to exit anyway.
        unsafe {
            libc::send(fd, line.as_ptr().cast(), line.len(), libc::MSG_NOSIGNAL);
        }
    }

    /// Read until `framing` finds a whole message at the front of the unread bytes; the
    /// buffer grows up to the framing's cap. Returns the message's range (for
    /// [`Conn::message`]). `awaited` names the reply awaited, for the messages.
    #[inline]
    pub fn recv(&mut self, awaited: &[u8], framing: &Framing) -> PmiResult<Range<usize>> {
        if self.broken.get() {
            return Err(PmiError::Fail);
        }
        // PMI_TIMEOUT bounds the whole reply, however many reads it takes.
        let deadline = self
            .timeout_ms
            .map(|ms| Instant::now() + Duration::from_millis(ms as u64));
        loop {
            if let Some(message) = self.take_message(framing)? {
                return Ok(message);
            }
            self.make_room(framing.cap)?;
            if let (Some(deadline), Some(ms)) = (deadline, self.timeout_ms) {
                if !self.ready_by(deadline)? {
                    return Err(self.fail(format_args!(
                        "no reply (cmd={}{}) from the process manager at {} in {} s \
                         (PMI_TIMEOUT)",
                        awaited.escape_ascii(),
                        framing.suffix,
                        self.server(),
                        ms / 1000
                    )));
                }
            }
            match self.read_some(0)? {
                Read::Got | Read::Interrupted => {}
                // (Under PMI_TIMEOUT the wait is the bounded one at the top of the loop.)
                Read::WouldBlock if deadline.is_none() => self.wait(libc::POLLIN)?,
                Read::WouldBlock => {}
            }
        }
    }

    /// A whole message if one is there without waiting: in the bytes read already, or
    /// in what the socket holds now. `None` when there is none yet (a partial one stays
    /// buffered for the next call).
    pub fn recv_now(&mut self, framing: &Framing) -> PmiResult<Option<Range<usize>>> {
        if self.broken.get() {
            return Err(PmiError::Fail);
        }
        loop {
            if let Some(message) = self.take_message(framing)? {
                return Ok(Some(message));
            }
            self.make_room(framing.cap)?;
            match self.read_some(libc::MSG_DONTWAIT)? {
                Read::Got | Read::Interrupted => {}
                Read::WouldBlock => return Ok(None),
            }
        }
    }

    /// The whole message at the front of the unread bytes, if there is one, consumed.
    #[inline(always)]
    fn take_message(&mut self, framing: &Framing) -> PmiResult<Option<Range<usize>>> {
        match (framing.find)(&self.buf[self.start..self.end]) {
            Ok(Some((message, used))) => {
                let at = self.start;
                let message = at + message.start..at + message.end;
                trace::wire(trace::Dir::Server, &self.buf[at..at + used]);
                self.start += used;
                if self.start == self.end {
                    // Nothing left over: the next read starts at the front again. The
                    // message's bytes stay in place until that read.
                    self.start = 0;
                    self.end = 0;
                }
                Ok(Some(message))
            }
            Ok(None) => Ok(None),
            Err(why) => Err(self.fail(format_args!("protocol error: {why}"))),
        }
    }

    /// Room at the end of the buffer for the next read: the unread bytes moved to the
    /// front, or the buffer doubled up to `cap`; a message longer than `cap` is refused.
    #[inline(always)]
    fn make_room(&mut self, cap: usize) -> PmiResult<()> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < cap {
                self.buf.resize((self.buf.len() * 2).min(cap), 0);
            } else {
                return Err(self.fail(format_args!(
                    "protocol error: reply longer than {cap} bytes"
                )));
            }
        }
        Ok(())
    }

    /// One read into the buffer's free room (`flags`: 0, or `MSG_DONTWAIT` not to wait).
    #[inline(always)]
    fn read_some(&mut self, flags: libc::c_int) -> PmiResult<Read> {
        let fd = self.raw_fd();
        let free = &mut self.buf[self.end..];
        // SAFETY: `free` is a live, writable slice of `free.len()` bytes inside `buf`;
        // `fd` is an open socket owned by `self`.
        let n = unsafe {
            if flags == 0 {
                libc::read(fd, free.as_mut_ptr().cast(), free.len())
            } else {
                libc::recv(fd, free.as_mut_ptr().cast(), free.len(), flags)
            }
        };
        if n > 0 {
            self.end += n as usize;
            return Ok(Read::Got);
        }
        if n == 0 {
            return Err(self.fail(format_args!(
                "the process manager at {} closed the connection",
                self.server()
            )));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => Ok(Read::Interrupted),
            Some(libc::EAGAIN) => Ok(Read::WouldBlock),
            _ => Err(self.fail(format_args!(
                "cannot read from the process manager at {}: {err}",
                self.server()
            ))),
        }
    }

    /// The server, as the lines that say it was lost name it: `PMI_PORT host:port`, or
    /// `PMI_FD n`, with the pid that made the socket and that process's name when the
    /// kernel still knows them (for a socketpair, the launcher's process on this node
    /// that serves it: Hydra's proxy, Slurm's `slurmstepd`). Only computed on a failure.
    pub fn server(&self) -> String {
        if let Some(port) = &self.port {
            return format!("PMI_PORT {port}");
        }
        let fd = self.raw_fd();
        match peer_pid(fd) {
            Some(pid) => match process_name(pid) {
                Some(name) => format!("PMI_FD {fd} (pid {pid}, {name})"),
                None => format!("PMI_FD {fd} (pid {pid}, no longer running)"),
            },
            None => format!("PMI_FD {fd}"),
        }
    }

    /// The reply limit (`PMI_TIMEOUT`), if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_ms.map(|ms| Duration::from_millis(ms as u64))
    }

    /// Whether a whole message is read already and waits in the buffer (where no
    /// `poll` of the socket sees it).
    pub fn holds_message(&self, framing: &Framing) -> bool {
        matches!((framing.find)(&self.buf[self.start..self.end]), Ok(Some(_)))
    }

    /// Wait, holding no lock of the library's, until one of `fds` has something to read
    /// or `limit` passes (None: no limit). For a thread waiting in a PMI 1.2 barrier while
    /// other threads use the connection: whichever reads first sorts out what came.
    pub fn wait_readable(fds: [RawFd; 2], limit: Option<Duration>) {
        let mut pfds = fds.map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let ms = limit.map_or(-1, |l| {
            l.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
        });
        // SAFETY: `pfds` is an array of two valid pollfds on the stack, and we pass its
        // length. An fd closed meanwhile (a finalize in another thread) only makes poll
        // say so; the caller then finds the library finalized.
        unsafe { libc::poll(pfds.as_mut_ptr(), 2, ms) };
    }

    /// Block until the fd is ready for `events` (only reached on a non-blocking fd).
    fn wait(&mut self, events: libc::c_short) -> PmiResult<()> {
        let mut pfd = libc::pollfd {
            fd: self.raw_fd(),
            events,
            revents: 0,
        };
        loop {
            // SAFETY: `pfd` is one valid pollfd on the stack, and we pass a count of 1.
            let n = unsafe { libc::poll(&mut pfd, 1, -1) };
            if n >= 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(self.fail(format_args!("cannot poll the PMI fd: {err}")));
            }
        }
    }

    /// Whether the fd becomes readable by `deadline`.
    fn ready_by(&mut self, deadline: Instant) -> PmiResult<bool> {
        let mut pfd = libc::pollfd {
            fd: self.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // (Rounded up: a poll of 0 ms before the deadline would spin.)
            let left = deadline.saturating_duration_since(Instant::now());
            let left = left.as_micros().div_ceil(1000);
            // SAFETY: `pfd` is one valid pollfd on the stack, and we pass a count of 1.
            let n = unsafe { libc::poll(&mut pfd, 1, left.min(i32::MAX as u128) as libc::c_int) };
            if n >= 0 {
                return Ok(n > 0);
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(self.fail(format_args!("cannot poll the PMI fd: {err}")));
            }
        }
    }

    /// Break the connection, print the cause once, and return `PMI_FAIL`. (Through a
    /// shared reference, so that a reply parsed from the buffer can still be returned
    /// when it is good.)
    pub fn fail(&self, cause: fmt::Arguments<'_>) -> PmiError {
        self.broken.set(true);
        trace::fatal(cause)
    }
}

/// What a thread waiting for a PMI 1.2 barrier without the lock polls beside the
/// socket (an eventfd): signalled when another thread read its barrier's end, or left
/// lines in the connection's buffer for the waiters to sort out.
pub struct Waker(OwnedFd);

impl Waker {
    pub fn new() -> PmiResult<Waker> {
        // SAFETY: eventfd takes no pointers; a valid fd is owned from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            let err = io::Error::last_os_error();
            return Err(trace::fatal(format_args!("cannot make an eventfd: {err}")));
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(Waker(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Wake the thread polling it.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes the 8 bytes of `one` to the eventfd; a full counter (never, in
        // practice) only makes the write fail, and the poll wakes anyway.
        unsafe { libc::write(self.raw_fd(), (&raw const one).cast(), 8) };
    }

    /// Reset it: its thread is looking (under the lock) at what came.
    pub fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads at most 8 bytes into `count`; the fd is non-blocking, so an
        // unsignalled one only gives EAGAIN.
        unsafe { libc::read(self.raw_fd(), (&raw mut count).cast(), 8) };
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if !self.adopted {
            // Not ours (yet): give the number back without closing it.
            let _ = self.fd.take().map(IntoRawFd::into_raw_fd);
        }
    }
}

/// A process's name (`/proc/PID/comm`), while it lives (a zombie's too).
fn process_name(pid: libc::pid_t) -> Option<String> {
    let comm = std::fs::read(format!("/proc/{pid}/comm")).ok()?;
    let name = comm.strip_suffix(b"\n").unwrap_or(&comm);
    (!name.is_empty()).then(|| name.escape_ascii().to_string())
}

fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_SETFD only sets the descriptor flags of an open fd; FD_CLOEXEC is the
    // only descriptor flag there is, so nothing else is cleared.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::pmi1::LINES;
    use std::os::unix::net::UnixStream;

    /// The lines `fatal` kept that hold `text` (other tests of this binary may keep
    /// theirs meanwhile).
    fn said(text: &str) -> Vec<String> {
        trace::take_fatal()
            .into_iter()
            .filter(|l| l.contains(text))
            .collect()
    }

    /// A lost server is named in its one line: an fd by its number, the pid that made
    /// the socketpair and that process's name (here this very process).
    #[test]
    fn a_closed_pmi_fd_is_named_with_the_process_that_serves_it() {
        trace::keep_fatal();
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut conn = Conn::new(OwnedFd::from(ours));
        let fd = conn.raw_fd();
        let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
        let want = format!(
            "PMI_FD {fd} (pid {}, {})",
            std::process::id(),
            comm.strip_suffix('\n').unwrap().as_bytes().escape_ascii()
        );
        assert_eq!(conn.server(), want);
        drop(theirs);
        assert_eq!(conn.recv(b"barrier_out", &LINES), Err(PmiError::Fail));
        let line = format!("the process manager at {want} closed the connection");
        assert_eq!(said(&line), vec![line]);
    }

    /// `PMI_PORT`'s server by its address, in a timeout's line as in a closed one's.
    #[test]
    fn a_lost_pmi_port_is_named_by_its_address() {
        trace::keep_fatal();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut conn = Conn::connect("127.0.0.1", port, Some(1)).unwrap();
        let (peer, _) = listener.accept().unwrap();
        assert_eq!(conn.server(), format!("PMI_PORT 127.0.0.1:{port}"));
        assert_eq!(conn.recv(b"barrier_out", &LINES), Err(PmiError::Fail));
        let line = format!(
            "no reply (cmd=barrier_out) from the process manager at PMI_PORT \
             127.0.0.1:{port} in 1 s (PMI_TIMEOUT)"
        );
        assert_eq!(said(&line), vec![line]);
        drop(peer);
        let mut conn = Conn::connect("127.0.0.1", port, None).unwrap();
        drop(listener.accept().unwrap());
        assert_eq!(conn.recv(b"barrier_out", &LINES), Err(PmiError::Fail));
        let line =
            format!("the process manager at PMI_PORT 127.0.0.1:{port} closed the connection");
        assert_eq!(said(&line), vec![line]);
    }

    /// The host as PMI_PORT writes it: a newline escaped (the message stays one line),
    /// an IPv6 address in brackets. (Port 1 on the loopback: refused, or the address is
    /// unusable without IPv6; either way the message shows it.)
    #[test]
    fn a_port_host_is_shown_as_pmi_port_writes_it() {
        for (host, shown) in [("h\nx", "h\\nx:1"), ("::1", "[::1]:1")] {
            for timeout in [None, Some(1)] {
                let why = Conn::connect(host, 1, timeout)
                    .err()
                    .expect("nothing there");
                assert!(!why.contains('\n'), "{why}");
                let start = format!("cannot connect to PMI_PORT {shown}: ");
                assert!(why.starts_with(&start), "{why}");
            }
        }
    }
}
