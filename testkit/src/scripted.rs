//! A scripted PMI server on a socketpair, for tests that assert on the wire: it speaks
//! PMI-1 lines and PMI-2 frames.
//!
//! A [`Script`] is a list of [`Step`]s run in order by a server thread: read one line
//! (or one PMI-2 frame) from the client and check it, write raw bytes (at once or one byte at a time),
//! pause, or close the socket. Every byte the client sends is recorded, including
//! bytes sent after the script ran out, until the client closes its end; joining the
//! server with [`finish`] returns that transcript.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use pmi_core::client::Client;
use pmi_core::error::PmiResult;
use pmi_core::testkit::wire::pmi1::MAX_LINE;
use pmi_core::testkit::{pmi1_client, Connection as Conn};
use pmi_core::Identity;

/// How long the server waits for the client before it gives up and fails the test.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The pause between bytes of a dribbled reply.
pub const DRIBBLE_PAUSE: Duration = Duration::from_millis(1);

/// Hydra 4.0.2's kvsname, used by every standard handshake.
pub const KVS: &[u8] = b"kvs_3162_0_1666487188_vm";

/// One thing the server does.
#[derive(Debug, Clone)]
pub enum Step {
    /// Read one line from the client; it must be exactly this (newline included).
    Expect(Vec<u8>),
    /// Read one PMI-2 frame (six characters of length, then the command); its command
    /// must be exactly this.
    ExpectFrame(Vec<u8>),
    /// Write these bytes in one write.
    Send(Vec<u8>),
    /// Write these bytes one at a time, pausing [`DRIBBLE_PAUSE`] after each.
    Dribble(Vec<u8>),
    /// Do nothing for a while.
    Sleep(Duration),
    /// Shut the socket down and stop: whatever the client sends later is lost.
    Close,
}

/// The server's steps, built with the chaining methods below.
#[derive(Debug, Clone, Default)]
pub struct Script {
    steps: Vec<Step>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    pub fn step(mut self, step: Step) -> Script {
        self.steps.push(step);
        self
    }

    /// Expect the request line `line` (newline included).
    pub fn expect(self, line: impl AsRef<[u8]>) -> Script {
        self.step(Step::Expect(line.as_ref().to_vec()))
    }

    /// Expect the PMI-2 frame whose command is `command` (`cmd=...;`).
    pub fn expect_frame(self, command: impl AsRef<[u8]>) -> Script {
        self.step(Step::ExpectFrame(command.as_ref().to_vec()))
    }

    /// Write `command` framed as PMI-2 servers write it: its length, left-justified in
    /// six characters, then the command.
    pub fn send_frame(self, command: impl AsRef<[u8]>) -> Script {
        self.send(frame(command.as_ref()))
    }

    /// Expect the frame `request`, answer the frame `reply`.
    pub fn exchange_frames(self, request: impl AsRef<[u8]>, reply: impl AsRef<[u8]>) -> Script {
        self.expect_frame(request).send_frame(reply)
    }

    /// Write `bytes` as they are.
    pub fn send(self, bytes: impl AsRef<[u8]>) -> Script {
        self.step(Step::Send(bytes.as_ref().to_vec()))
    }

    /// Write `bytes` one byte at a time.
    pub fn dribble(self, bytes: impl AsRef<[u8]>) -> Script {
        self.step(Step::Dribble(bytes.as_ref().to_vec()))
    }

    pub fn sleep(self, pause: Duration) -> Script {
        self.step(Step::Sleep(pause))
    }

    pub fn close(self) -> Script {
        self.step(Step::Close)
    }

    /// Expect `request`, answer `reply`: one round trip.
    pub fn exchange(self, request: impl AsRef<[u8]>, reply: impl AsRef<[u8]>) -> Script {
        self.expect(request).send(reply)
    }

    /// Append another script's steps.
    pub fn then(mut self, other: Script) -> Script {
        self.steps.extend(other.steps);
        self
    }
}

/// `command` framed: its length left-justified in six characters, then the command.
pub fn frame(command: &[u8]) -> Vec<u8> {
    let mut out = format!("{:<6}", command.len()).into_bytes();
    out.extend_from_slice(command);
    out
}

pub const INIT_REQUEST: &[u8] = b"cmd=init pmi_version=1 pmi_subversion=1\n";
pub const INIT_REPLY: &[u8] = b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n";
pub const MAXES_REQUEST: &[u8] = b"cmd=get_maxes\n";
pub const MAXES_REPLY: &[u8] = b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n";
pub const KVSNAME_REQUEST: &[u8] = b"cmd=get_my_kvsname\n";

/// Hydra 4.0.2's answers to `init` and `get_maxes`.
pub fn handshake() -> Script {
    Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY)
        .exchange(MAXES_REQUEST, MAXES_REPLY)
}

/// Hydra 4.0.2's answer to `get_my_kvsname`, naming [`KVS`].
pub fn kvsname() -> Script {
    let mut reply = b"cmd=my_kvsname kvsname=".to_vec();
    reply.extend_from_slice(KVS);
    reply.push(b'\n');
    Script::new().exchange(KVSNAME_REQUEST, reply)
}

/// The bytes of the handshake's two requests, to start an expected transcript.
pub fn handshake_requests() -> Vec<u8> {
    [INIT_REQUEST, MAXES_REQUEST].concat()
}

/// `cmd=get kvsname=<KVS> key=<key>\n`.
pub fn get_request(key: &str) -> Vec<u8> {
    let mut line = b"cmd=get kvsname=".to_vec();
    line.extend_from_slice(KVS);
    line.extend_from_slice(b" key=");
    line.extend_from_slice(key.as_bytes());
    line.push(b'\n');
    line
}

/// `cmd=put kvsname=<KVS> key=<key> value=<value>\n`.
pub fn put_request(key: &str, value: &str) -> Vec<u8> {
    let mut line = b"cmd=put kvsname=".to_vec();
    line.extend_from_slice(KVS);
    line.extend_from_slice(format!(" key={key} value={value}\n").as_bytes());
    line
}

/// Start a server thread running `script` on one end of a fresh socketpair; return the
/// other end and the thread.
pub fn serve(script: Script) -> (UnixStream, JoinHandle<Vec<u8>>) {
    let (client, server) = UnixStream::pair().expect("socketpair");
    let handle = thread::Builder::new()
        .name("scripted-pmi-server".into())
        .spawn(move || run(server, script.steps))
        .expect("spawn the server thread");
    (client, handle)
}

/// Run `script` in a forked process on a connection the library will accept as its
/// `PMI_FD` ([`in_child`]), as rank `rank` of `size`.
pub fn serve_in_child(script: Script, rank: i32, size: i32) -> JoinHandle<Vec<u8>> {
    in_child(move |server| run(server, script.steps), rank, size)
}

/// Run `serve` in a forked process on a connection the library will accept as its
/// `PMI_FD` (inherited, not close-on-exec, and connected to another process, as a
/// launcher's is: the library refuses a socket whose peer is itself), and set `PMI_FD`,
/// `PMI_RANK` and `PMI_SIZE` for the library's init. Returns a thread that yields what
/// `serve` returned (what the client sent) once it is over; [`finish`] it. A failure in
/// the server fails the test there.
pub fn in_child(
    serve: impl FnOnce(UnixStream) -> Vec<u8> + std::panic::UnwindSafe,
    rank: i32,
    size: i32,
) -> JoinHandle<Vec<u8>> {
    use std::os::fd::{AsRawFd, IntoRawFd};
    use std::os::unix::net::UnixListener;
    let path = std::env::temp_dir().join(format!("pmi-scripted-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let (mut record_in, mut record_out) = UnixStream::pair().expect("socketpair");
    // SAFETY: the child only serves its socket and writes what it recorded, then leaves
    // with _exit without running the parent's code (glibc keeps malloc usable after fork).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        drop(record_in);
        // The child listens: the peer the library sees is then the child.
        let served = std::panic::catch_unwind(move || {
            let listener = UnixListener::bind(&path).expect("bind");
            let (server, _) = listener.accept().expect("accept");
            serve(server)
        });
        let code = match served {
            Ok(transcript) => i32::from(record_out.write_all(&transcript).is_err()),
            Err(_) => 1,
        };
        // SAFETY: ends the child at once, as a forked child must.
        unsafe { libc::_exit(code) };
    }
    drop(record_out);
    let mut tries = 0;
    let client = loop {
        match UnixStream::connect(&path) {
            Ok(client) => break client,
            Err(_) if tries < 500 => {
                tries += 1;
                thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("cannot connect to the server: {e}"),
        }
    };
    let _ = std::fs::remove_file(&path);
    // SAFETY: F_SETFD on an fd this function owns: the PMI_FD a launcher passes is
    // inherited, so it is not close-on-exec.
    unsafe { libc::fcntl(client.as_raw_fd(), libc::F_SETFD, 0) };
    std::env::set_var("PMI_FD", client.into_raw_fd().to_string());
    std::env::set_var("PMI_RANK", rank.to_string());
    std::env::set_var("PMI_SIZE", size.to_string());
    std::env::remove_var("PMI_DEBUG");
    thread::spawn(move || {
        let mut transcript = Vec::new();
        let _ = record_in.read_to_end(&mut transcript);
        let mut status = 0;
        // SAFETY: reaps the child started above; `status` is a valid int.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(status, 0, "the server failed (its message is above)");
        transcript
    })
}

/// Join the server and return what the client sent; a failure inside the server
/// (a wrong request line, a timeout) fails the test with the server's own message.
pub fn finish(server: JoinHandle<Vec<u8>>) -> Vec<u8> {
    match server.join() {
        Ok(transcript) => transcript,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Wrap the client end of the socketpair in a [`Conn`].
pub fn conn(stream: UnixStream) -> Conn {
    Conn::new(OwnedFd::from(stream))
}

/// Rank 0 of 1, not spawned.
pub const ID: Identity = Identity {
    rank: 0,
    size: 1,
    spawned: false,
};

/// `pmi1_client` over a fresh server running `script`, as rank 0 of 1.
pub fn init(script: Script) -> (PmiResult<Client>, JoinHandle<Vec<u8>>) {
    init_as(ID, script)
}

/// `pmi1_client` over a fresh server running `script`.
pub fn init_as(id: Identity, script: Script) -> (PmiResult<Client>, JoinHandle<Vec<u8>>) {
    let (stream, server) = serve(script);
    (pmi1_client(conn(stream), id, MAX_LINE), server)
}

/// A client past the standard handshake, the server then running `rest`.
pub fn client(rest: Script) -> (Client, JoinHandle<Vec<u8>>) {
    client_as(ID, rest)
}

/// A client past the standard handshake and the kvsname query, the server then
/// running `rest`.
pub fn client_with_kvsname(rest: Script) -> (Client, JoinHandle<Vec<u8>>) {
    let (mut client, server) = client(kvsname().then(rest));
    assert_eq!(client.kvsname(), Ok(KVS));
    (client, server)
}

/// Like [`client`], with the given identity.
pub fn client_as(id: Identity, rest: Script) -> (Client, JoinHandle<Vec<u8>>) {
    let (client, server) = init_as(id, handshake().then(rest));
    match client {
        Ok(client) => (client, server),
        Err(e) => {
            let transcript = finish(server);
            panic!(
                "the standard handshake failed with {e}; the client sent {:?}",
                show(&transcript)
            );
        }
    }
}

/// Bytes as text, for assertion messages.
pub fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The server's side: run the steps, then record until the client closes.
fn run(mut stream: UnixStream, steps: Vec<Step>) -> Vec<u8> {
    stream
        .set_read_timeout(Some(TIMEOUT))
        .expect("read timeout");
    stream
        .set_write_timeout(Some(TIMEOUT))
        .expect("write timeout");
    let mut rx = Receiver::default();
    'script: for (i, step) in steps.into_iter().enumerate() {
        match step {
            Step::Expect(want) => {
                let got = rx.line(&mut stream).unwrap_or_else(|why| {
                    panic!(
                        "step {i}: expected {:?}, but {why}; the client sent {:?}",
                        show(&want),
                        show(&rx.transcript)
                    )
                });
                if got != want {
                    panic!(
                        "step {i}: expected the request {:?}, got {:?}",
                        show(&want),
                        show(&got)
                    );
                }
            }
            Step::ExpectFrame(want) => {
                let got = rx.frame(&mut stream).unwrap_or_else(|why| {
                    panic!(
                        "step {i}: expected the frame {:?}, but {why}; the client sent {:?}",
                        show(&want),
                        show(&rx.transcript)
                    )
                });
                if got != want {
                    panic!(
                        "step {i}: expected the frame {:?}, got {:?}",
                        show(&want),
                        show(&got)
                    );
                }
            }
            Step::Send(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    // The client hung up early: the transcript tells what it sent.
                    break 'script;
                }
            }
            Step::Dribble(bytes) => {
                for byte in bytes {
                    if stream.write_all(&[byte]).is_err() {
                        break 'script;
                    }
                    thread::sleep(DRIBBLE_PAUSE);
                }
            }
            Step::Sleep(pause) => thread::sleep(pause),
            Step::Close => {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return rx.transcript;
            }
        }
    }
    rx.drain(&mut stream);
    rx.transcript
}

/// What the server read: everything, and the part not yet taken as lines.
#[derive(Default)]
struct Receiver {
    transcript: Vec<u8>,
    pending: Vec<u8>,
}

impl Receiver {
    /// Read until one whole line is pending and take it (newline included).
    fn line(&mut self, stream: &mut UnixStream) -> Result<Vec<u8>, String> {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
                return Ok(self.pending.drain(..=i).collect());
            }
            match self.read(stream) {
                Ok(0) => return Err("the client closed the connection".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("reading failed ({e})")),
            }
        }
    }

    /// Read until one whole PMI-2 frame is pending and take its command.
    fn frame(&mut self, stream: &mut UnixStream) -> Result<Vec<u8>, String> {
        loop {
            if self.pending.len() >= 6 {
                let prefix = String::from_utf8_lossy(&self.pending[..6]).into_owned();
                let len: usize = prefix
                    .trim()
                    .parse()
                    .map_err(|_| format!("a frame without a length: {prefix:?}"))?;
                if self.pending.len() >= 6 + len {
                    let mut command: Vec<u8> = self.pending.drain(..6 + len).collect();
                    return Ok(command.split_off(6));
                }
            }
            match self.read(stream) {
                Ok(0) => return Err("the client closed the connection".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("reading failed ({e})")),
            }
        }
    }

    /// Record everything until the client closes its end.
    fn drain(&mut self, stream: &mut UnixStream) {
        loop {
            match self.read(stream) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return,
                Err(e) => panic!(
                    "the script is over but the client did not close its end ({e}): is it \
                     waiting for a reply the script does not give? It sent {:?}",
                    show(&self.transcript)
                ),
            }
        }
    }

    fn read(&mut self, stream: &mut UnixStream) -> std::io::Result<usize> {
        let mut chunk = [0u8; 4096];
        loop {
            match stream.read(&mut chunk) {
                Ok(n) => {
                    self.transcript.extend_from_slice(&chunk[..n]);
                    self.pending.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
