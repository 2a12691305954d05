//! Writing to a server that has gone away must fail with `PMI_FAIL`, never kill the
//! process with `SIGPIPE`. This is its own test binary because it changes the process's
//! `SIGPIPE` disposition, which would affect every other test sharing the process.

use pmi_core::error::PmiError;
use pmi_testkit::scripted::*;

#[test]
fn write_after_server_closed_is_fail_not_sigpipe() {
    // The Rust runtime starts every program with SIGPIPE ignored, which would hide the
    // bug this test looks for; a C program calling the library has the default action,
    // which kills the process. Restore that default before the client writes.
    // SAFETY: SIG_DFL is a valid disposition for SIGPIPE, and nothing in this process
    // has installed a handler that would be lost.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(previous, libc::SIG_ERR);

    let (mut client, server) = client(Script::new().close());
    // Join the server first: its end is closed before the client writes.
    assert_wire_is_handshake(&finish(server));

    // The connection is not broken yet, so this really writes to the dead socket: the
    // test process surviving the call is the assertion.
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.barrier(), Err(PmiError::Fail));
    assert_eq!(client.put(KVS, b"k", b"v"), Err(PmiError::Fail));
    drop(client);
}

fn assert_wire_is_handshake(transcript: &[u8]) {
    assert_eq!(show(transcript), show(&handshake_requests()));
}
