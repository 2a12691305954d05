//! `PMI_TIMEOUT` over the PMIx client library's calls, which have no bound of their own.
//!
//! `PMIx_Init` connects to its server and reads the server's handshake in the calling
//! thread, with blocking calls:
//!
//! - the handshake read: OpenPMIx 5.0.11 retries it for ever while the server is silent;
//!   4.2.2 gives up only when `PMIX_MCA_ptl_base_handshake_wait_time` is set (both
//!   measured against a server that accepts and never answers);
//! - the connect: a server whose backlog is full drops the SYNs, and PMIx tries ten
//!   blocking connects (4.2.2 still waited after 20 s).
//!
//! After it, each call that waits for PMIx's progress thread (a get, a commit, a fence,
//! the name service, spawn, finalize) has no bound either (`PMIX_TIMEOUT` is the
//! server's to keep; with the server stopped, 4.2.2's `PMIx_Commit` waited for ever).
//!
//! [`within`] runs `PMIx_Init` beside a watcher thread; [`call`] runs a later call under
//! one watcher thread for the process ([`watch_calls`]), which a call arms with its start
//! and disarms when it returns (a lock taken twice, no system call). When the bound
//! passes and the call has not returned, the watcher shuts down the TCP sockets that lead
//! to the server (for `PMIx_Init`: those opened since it began, also while still
//! connecting), every 10 ms (50 ms for later calls) until it returns: a blocked read then
//! sees the end of the stream and a blocked connect is aborted, so PMIx fails the call
//! (`PMIX_ERR_UNREACH`), and every later one. Should the call still not return after as
//! long again (at least 10 s), the process ends with one line: the user asked for a
//! bound.

use std::collections::HashSet;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::trace;

/// How the call and the watcher meet.
#[derive(Default)]
struct Watch {
    /// The call returned.
    done: bool,
    /// The bound passed first: what the call returned must not be used.
    fired: bool,
}

type Shared = Arc<(Mutex<Watch>, Condvar)>;

/// Run `call` (`PMIx_Init`) bounded by `seconds`; its result, and whether the bound
/// passed before it returned (then the result, even a success, must not be used).
/// `servers`: the server's addresses (empty: any).
pub fn within<T>(
    seconds: u32,
    servers: &[SocketAddr],
    what: &str,
    call: impl FnOnce() -> T,
) -> (T, bool) {
    let shared: Shared = Arc::default();
    let before = open_fds();
    let bound = Duration::from_secs(u64::from(seconds));
    let watcher = {
        let shared = Arc::clone(&shared);
        let servers = servers.to_vec();
        let what = what.to_string();
        std::thread::Builder::new()
            .name("pmi-init-watch".into())
            .spawn(move || watch(&shared, bound, &before, &servers, &what))
    };
    let out = call();
    let fired = {
        let (lock, wake) = &*shared;
        let mut watch = relock(lock);
        watch.done = true;
        wake.notify_all();
        watch.fired
    };
    if let Ok(watcher) = watcher {
        let _ = watcher.join();
    }
    (out, fired)
}

fn relock(lock: &Mutex<Watch>) -> MutexGuard<'_, Watch> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The watcher: wait for the bound; then shut the server's sockets until the call
/// returns, and end the process if it still has not after [`grace`].
fn watch(
    shared: &Shared,
    bound: Duration,
    before: &HashSet<RawFd>,
    servers: &[SocketAddr],
    what: &str,
) {
    let (lock, wake) = &**shared;
    let mut watch = relock(lock);
    let deadline = Instant::now() + bound;
    while !watch.done {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        watch = wake
            .wait_timeout(watch, left)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
    if watch.done {
        return;
    }
    // The lock is held while sockets are shut: the caller cannot mark the call done
    // (and go on to use the connection) in between.
    watch.fired = true;
    let last = Instant::now() + grace(bound);
    while !watch.done {
        if Instant::now() >= last {
            give_up(what, grace(bound));
        }
        shut(&open_fds().difference(before).copied().collect(), servers);
        watch = wake
            .wait_timeout(watch, Duration::from_millis(10))
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
}

/// The watch over the calls after `PMIx_Init` (one a process).
struct Calls {
    bound: Duration,
    servers: Vec<SocketAddr>,
    /// The server as the lines name it (`at PMIX_SERVER_URI41="..."`).
    server: String,
    slot: Mutex<Slot>,
}

/// The call being watched, if one is.
#[derive(Default)]
struct Slot {
    /// The running call's name and start.
    armed: Option<(&'static str, Instant)>,
    /// The bound passed before the armed call returned.
    fired: bool,
    /// The watcher thread runs.
    running: bool,
    /// It is asked to end (`PMIx_Finalize` returned).
    stop: bool,
}

static CALLS: OnceLock<Calls> = OnceLock::new();

/// The watch has said (one line) that a call outlived its bound: the call's own failure
/// need not say it again.
static SAID: AtomicBool = AtomicBool::new(false);

/// Whether a call's timeout has been announced by the watch ([`SAID`]).
pub fn said_timeout() -> bool {
    SAID.load(Ordering::Relaxed)
}

/// Watch every later [`call`] with `seconds` as its bound: start the watcher thread (once,
/// and again after [`stop_calls`]). Without the server's address nothing can be shut, and
/// nothing is watched. `server` names it in the line a timeout prints ("the PMIx server
/// {server}").
pub fn watch_calls(seconds: u32, servers: &[SocketAddr], server: &str) {
    if servers.is_empty() {
        return;
    }
    let calls = CALLS.get_or_init(|| Calls {
        bound: Duration::from_secs(u64::from(seconds)),
        servers: servers.to_vec(),
        server: server.to_string(),
        slot: Mutex::default(),
    });
    let mut slot = relock_slot(&calls.slot);
    slot.stop = false;
    if !slot.running {
        let started = std::thread::Builder::new()
            .name("pmi-watch".into())
            .spawn(move || tick(calls));
        slot.running = started.is_ok();
    }
}

/// End the watcher thread (after `PMIx_Finalize`).
pub fn stop_calls() {
    if let Some(calls) = CALLS.get() {
        relock_slot(&calls.slot).stop = true;
    }
}

/// Run `call`, one PMIx call that waits for the server, under the watch; its result, and
/// whether the bound passed before it returned (its connection to the server is then
/// shut, and the result must not be used).
pub fn call<T>(what: &'static str, call: impl FnOnce() -> T) -> (T, bool) {
    let Some(calls) = CALLS.get() else {
        return (call(), false);
    };
    {
        let mut slot = relock_slot(&calls.slot);
        if !slot.running {
            drop(slot);
            return (call(), false);
        }
        slot.armed = Some((what, Instant::now()));
        slot.fired = false;
    }
    let out = call();
    let mut slot = relock_slot(&calls.slot);
    slot.armed = None;
    (out, std::mem::take(&mut slot.fired))
}

fn relock_slot(lock: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The watcher of later calls: every 50 ms, the armed call's age.
fn tick(calls: &Calls) {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let mut slot = relock_slot(&calls.slot);
        if slot.stop {
            slot.running = false;
            return;
        }
        let Some((what, start)) = slot.armed else {
            continue;
        };
        let age = start.elapsed();
        if age < calls.bound {
            continue;
        }
        if !slot.fired {
            slot.fired = true;
            SAID.store(true, Ordering::Relaxed);
            trace::fatal(format_args!(
                "{what}: no answer from the PMIx server {} in {} s (PMI_TIMEOUT): its \
                 connection is shut",
                calls.server,
                calls.bound.as_secs()
            ));
        }
        if age >= calls.bound + grace(calls.bound) {
            give_up(what, grace(calls.bound));
        }
        // The lock is held: the call cannot be disarmed (and a new one armed) meanwhile.
        shut(&open_fds(), &calls.servers);
    }
}

/// Shut down (both ways) the sockets among `fds` that lead to `servers`
/// ([`server_sockets`]).
fn shut(fds: &HashSet<RawFd>, servers: &[SocketAddr]) {
    for fd in server_sockets(fds, servers) {
        // SAFETY: shutdown takes an fd number and no memory. The number led to the server
        // when /proc was read; should PMIx's thread close it and another thread open a
        // socket under it before this line, that socket is shut (a narrow window, only
        // once a call has outlived its bound, and the process is then on its way out).
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }
}

/// How long a call may take to return once its connection was shut: as long as the
/// bound, and at least 10 s (PMIx retries its connects, and a busy machine is slow).
fn grace(bound: Duration) -> Duration {
    bound.max(Duration::from_secs(10))
}

/// The last resort: a call that outlived its bound and the grace after it ends the
/// process.
fn give_up(what: &str, grace: Duration) -> ! {
    trace::fatal(format_args!(
        "{what} has not returned {} s after PMI_TIMEOUT passed and its connection to the \
         server was shut: ending the process",
        grace.as_secs()
    ));
    // SAFETY: ends the process at once, as PMI_TIMEOUT asks; nothing of the caller's is
    // touched.
    unsafe { libc::_exit(1) }
}

/// The process's open file descriptors (not the one that listed them, closed again).
fn open_fds() -> HashSet<RawFd> {
    let listed: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    listed
        .into_iter()
        // SAFETY: F_GETFD only asks whether the number is open.
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1)
        .collect()
}

/// Of the descriptors `fds`, the TCP sockets connected to one of `servers` (any, when
/// empty) or still connecting to one, from the kernel's table of this network
/// namespace's TCP sockets (`/proc/self/net/tcp` and `tcp6`), matched by inode.
fn server_sockets(fds: &HashSet<RawFd>, servers: &[SocketAddr]) -> Vec<RawFd> {
    use std::os::unix::fs::MetadataExt;
    let by_inode: Vec<(u64, RawFd)> = fds
        .iter()
        .filter_map(|&fd| {
            let meta = std::fs::metadata(format!("/proc/self/fd/{fd}")).ok()?;
            (meta.mode() & libc::S_IFMT == libc::S_IFSOCK).then(|| (meta.ino(), fd))
        })
        .collect();
    if by_inode.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for socket in text.lines().skip(1).filter_map(tcp_row) {
            let wanted = matches!(socket.state, ESTABLISHED | SYN_SENT)
                && (servers.is_empty() || servers.contains(&socket.remote));
            if let Some(&(_, fd)) = by_inode.iter().find(|(ino, _)| *ino == socket.inode) {
                if wanted {
                    found.push(fd);
                }
            }
        }
    }
    found
}

/// The kernel's TCP states (`include/net/tcp_states.h`) that lead to a server.
const ESTABLISHED: u8 = 1;
const SYN_SENT: u8 = 2;

/// One row of `/proc/net/tcp{,6}`.
#[derive(Debug, PartialEq)]
struct TcpRow {
    remote: SocketAddr,
    state: u8,
    inode: u64,
}

/// `  1: 0100007F:9D1B 0100007F:1F90 02 ... 0 0 4748897 ...`: the remote address (each
/// 32-bit word printed in hex as the host holds it, the port in hex), the state and
/// the inode.
fn tcp_row(line: &str) -> Option<TcpRow> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (ip, port) = fields.get(2)?.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let mut bytes = Vec::with_capacity(16);
    for word in ip.as_bytes().chunks(8) {
        let word = u32::from_str_radix(std::str::from_utf8(word).ok()?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    let remote = match bytes.len() {
        4 => SocketAddr::from((Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?), port)),
        16 => SocketAddr::from((Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?), port)),
        _ => return None,
    };
    Some(TcpRow {
        remote,
        state: u8::from_str_radix(fields.get(3)?, 16).ok()?,
        inode: fields.get(9)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// A watched read of a silent peer ended at the bound (1 s): the watch fired, and the
    /// read saw the end of the stream well before 3 s.
    fn assert_cut_off(read: std::io::Result<usize>, fired: bool, start: Instant) {
        assert!(fired);
        assert_eq!(read.unwrap(), 0, "the read sees the end of the stream");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_returning_call_is_not_touched() {
        let (out, fired) = within(5, &[], "call", || 7);
        assert_eq!((out, fired), (7, false));
    }

    #[test]
    fn a_silent_server_is_cut_off_at_the_bound() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let start = Instant::now();
        let (read, fired) = within(1, &[server], "call", || {
            let mut stream = TcpStream::connect(server).unwrap();
            let mut byte = [0u8; 1];
            std::io::Read::read(&mut stream, &mut byte)
        });
        assert_cut_off(read, fired, start);
    }

    #[test]
    fn another_peer_is_left_alone() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let (_, fired) = within(1, &[other.local_addr().unwrap()], "call", || {
            let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            std::thread::sleep(Duration::from_millis(1300));
            // Still open: the watcher did not shut it.
            stream
                .set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let mut byte = [0u8; 1];
            let read = std::io::Read::read(&mut &stream, &mut byte);
            assert!(read.is_err(), "no end of stream: {read:?}");
        });
        assert!(fired);
    }

    /// A port on 127.0.0.1 whose backlog (0) is full: a connect to it waits in
    /// `SYN_SENT`. The listener and what fills it; keep both.
    fn full_port() -> (TcpListener, Vec<TcpStream>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
        // SAFETY: a listening socket this test owns.
        let listening = unsafe { libc::listen(fd, 0) };
        assert_eq!(listening, 0);
        let addr = listener.local_addr().unwrap();
        let held = (0..8)
            .map_while(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok())
            .collect();
        (listener, held)
    }

    #[test]
    fn a_connect_in_progress_is_aborted_and_a_listener_left_alone() {
        let (full, _held) = full_port();
        let target = full.local_addr().unwrap();
        let start = Instant::now();
        let (listener, fired) = within(1, &[target], "call", || {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let connected = TcpStream::connect(target);
            assert!(connected.is_err(), "{connected:?}");
            listener
        });
        assert!(fired);
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        // The listener opened during the call still takes connections.
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).unwrap();
        let (_, from) = listener.accept().unwrap();
        assert_eq!(from, client.local_addr().unwrap());
    }

    #[test]
    fn a_later_call_is_cut_off_at_the_bound_and_the_next_is_not_watched_after_stop() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        // The connection exists before the call, as PMIx's does after PMIx_Init.
        let mut stream = TcpStream::connect(server).unwrap();
        watch_calls(1, &[server], "at PMIX_SERVER_URI41=\"test\"");
        let start = Instant::now();
        let (read, fired) = call("PMIx_Fence", || {
            let mut byte = [0u8; 1];
            std::io::Read::read(&mut stream, &mut byte)
        });
        assert_cut_off(read, fired, start);
        // A call that returns in time is not marked.
        assert_eq!(call("PMIx_Get", || 5), (5, false));
        stop_calls();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!relock_slot(&CALLS.get().unwrap().slot).running);
    }

    #[test]
    fn tcp_rows_read_back() {
        let v4 = "   3: 0100007F:9D1B 0700000A:1092 02 00000000:00000000 01:00000000 \
                  00000003     0        0 4748897 2 0000000000000000 200 0 0 1 7";
        assert_eq!(
            tcp_row(v4),
            Some(TcpRow {
                remote: "10.0.0.7:4242".parse().unwrap(),
                state: SYN_SENT,
                inode: 4748897
            })
        );
        let v6 = "   0: 00000000000000000000000001000000:9D1B \
                  00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 \
                  00000000     0        0 99 1 0000000000000000 20 4 30 10 -1";
        assert_eq!(
            tcp_row(v6).map(|row| (row.remote, row.state, row.inode)),
            Some(("[::1]:8080".parse().unwrap(), ESTABLISHED, 99))
        );
        assert_eq!(tcp_row("  sl  local_address rem_address   st"), None);
    }
}
