//! PMI 1.2's barriers awaited without the lock, at the wire backend: which thread's
//! barrier a `barrier_out` ends, and that the thread it ends is woken. Several threads'
//! turns are played here one after another on one backend, in the order that matters
//! (`lifecycle::barrier` takes the lock for each `barrier_ended` and polls the fds of
//! its `BarrierStep::Pending` between them, without the lock).

use std::os::fd::RawFd;
use std::time::Duration;

use pmi_core::client::Client;
use pmi_core::error::PmiError;
use pmi_core::Identity;
use pmi_testkit::core::wire::pmi1::{Group, MAX_LINE};
use pmi_testkit::core::{pmi1_client, Backend, BarrierStep, Pmi1Wire};
use pmi_testkit::scripted::*;

/// MPICH 5's Hydra's answer to `init`: PMI 1.2.
const INIT_REPLY_1_2: &[u8] = b"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n";

/// Rank 0 of 4.
const FOUR: Identity = Identity {
    rank: 0,
    size: 4,
    spawned: false,
};

/// A wire backend past a PMI 1.2 handshake, the server then running `rest`.
fn wire_1_2(rest: Script) -> (Pmi1Wire, std::thread::JoinHandle<Vec<u8>>) {
    let script = Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY_1_2)
        .exchange(MAXES_REQUEST, MAXES_REPLY)
        .then(rest);
    let (stream, server) = serve(script);
    let wire = Pmi1Wire::init_limited(conn(stream), FOUR, MAX_LINE).expect("the handshake");
    (wire, server)
}

/// The fds a thread waiting for `step` polls.
fn fds_of(step: BarrierStep) -> [RawFd; 2] {
    match step {
        BarrierStep::Pending { fds, .. } => fds,
        BarrierStep::Done => panic!("a PMI 1.2 barrier is awaited, not done in the call"),
    }
}

/// Whether a thread polling `fds` would wake within `wait` (what its `poll` sees).
fn wakes(fds: [RawFd; 2], wait: Duration) -> bool {
    let mut pfds = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: two valid pollfds on the stack, and their count.
    let n = unsafe { libc::poll(pfds.as_mut_ptr(), 2, wait.as_millis() as libc::c_int) };
    n > 0
}

/// Two threads wait, for barriers 11 and 22. The first to take the lock reads 22's end
/// (11's has not come): the other thread, which polls afterwards, must wake.
#[test]
fn a_barrier_end_read_by_another_waiter_wakes_its_thread() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:11\n")
            .expect("cmd=barrier_in group=NODE:22\n")
            .send("cmd=barrier_out tag=22\n")
            .expect("cmd=finalize\n")
            .send("cmd=barrier_out tag=11\ncmd=finalize_ack\n"),
    );
    let first = fds_of(wire.barrier_begin(Some(Group::World), 11).unwrap());
    let second = fds_of(wire.barrier_begin(Some(Group::Node), 22).unwrap());
    assert!(wakes(first, Duration::from_secs(10)), "22's end came");
    assert_eq!(wire.barrier_ended(11, false), Ok(false));
    assert!(
        wakes(second, Duration::ZERO),
        "the thread waiting for 22 is not woken: its end was read by the other waiter"
    );
    assert_eq!(wire.barrier_ended(22, false), Ok(true));
    assert_eq!(wire.finalize(), Ok(()));
    assert_eq!(wire.barrier_ended(11, false), Ok(true));
    drop(wire);
    finish(server);
}

/// Two threads wait, for barriers 11 and 22; a third thread's get reads 22's end first
/// and wakes the waiters. The waiter for 11 takes the lock first and finds nothing for
/// it: the waiter for 22, which polls afterwards, must still wake.
#[test]
fn a_waiter_woken_for_nothing_leaves_the_wake_for_the_others() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:11\n")
            .expect("cmd=barrier_in group=NODE:22\n")
            .expect(get_request("k"))
            .send("cmd=barrier_out tag=22\ncmd=get_result rc=0 value=v\n")
            .expect("cmd=finalize\n")
            .send("cmd=barrier_out tag=11\ncmd=finalize_ack\n"),
    );
    let first = fds_of(wire.barrier_begin(Some(Group::World), 11).unwrap());
    let second = fds_of(wire.barrier_begin(Some(Group::Node), 22).unwrap());
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert!(wakes(first, Duration::ZERO), "the get woke the waiters");
    assert_eq!(wire.barrier_ended(11, false), Ok(false));
    assert!(
        wakes(second, Duration::ZERO),
        "the thread waiting for 22 is not woken: the waiter for 11 took the wake"
    );
    assert_eq!(wire.barrier_ended(22, false), Ok(true));
    assert_eq!(wire.finalize(), Ok(()));
    assert_eq!(wire.barrier_ended(11, false), Ok(true));
    drop(wire);
    finish(server);
}

/// A client over a PMI 1.2 handshake, the server then running `rest`.
fn client_1_2(rest: Script) -> (Client, std::thread::JoinHandle<Vec<u8>>) {
    let script = Script::new()
        .exchange(INIT_REQUEST, INIT_REPLY_1_2)
        .exchange(MAXES_REQUEST, MAXES_REPLY)
        .then(rest);
    let (stream, server) = serve(script);
    let client = pmi1_client(conn(stream), FOUR, MAX_LINE).expect("the handshake");
    (client, server)
}

/// A second `barrier_out` for one barrier, read by a later call while no barrier is
/// awaited, ends no barrier: the connection is broken there (an unexpected reply), and
/// the next barrier, which the server never answers, does not pass (nothing is sent).
#[test]
fn a_second_end_of_one_barrier_does_not_end_the_next() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in\n")
            .send("cmd=barrier_out tag=0\ncmd=barrier_out tag=0\n")
            .expect(get_request("k"))
            .send("cmd=get_result rc=0 value=v\n"),
    );
    let fds = fds_of(wire.barrier_begin(None, 0).unwrap());
    assert!(wakes(fds, Duration::from_secs(10)));
    assert_eq!(wire.barrier_ended(0, false), Ok(true));
    assert_eq!(
        wire.get(KVS, b"k"),
        Err(PmiError::Fail),
        "a barrier_out while no barrier is awaited"
    );
    let next = wire
        .barrier_begin(None, 0)
        .and_then(|_| wire.barrier_ended(0, false));
    assert_ne!(next, Ok(true), "the next barrier passed without its end");
    drop(wire);
    finish(server);
}

/// A server that says it speaks PMI 1.2 but answers a group barrier as a 1.1 server
/// does (a `barrier_out` with no tag), or with a tag that is not an integer, or no
/// barrier's: the barrier fails at once, rather than wait for an end that cannot
/// come; so does a plain barrier ended by a tag that is not an integer.
#[test]
fn a_barrier_out_that_names_no_barrier_begun_fails_the_barrier() {
    for reply in [
        "cmd=barrier_out\n",
        "cmd=barrier_out rc=0\n",
        "cmd=barrier_out tag=\n",
        "cmd=barrier_out tag=x11\n",
        "cmd=barrier_out tag=-11\n",
        "cmd=barrier_out tag=4294967307\n",
        "cmd=barrier_out tag=12\n",
    ] {
        let (mut wire, server) = wire_1_2(
            Script::new()
                .expect("cmd=barrier_in group=WORLD:11\n")
                .send(reply),
        );
        let fds = fds_of(wire.barrier_begin(Some(Group::World), 11).unwrap());
        assert!(wakes(fds, Duration::from_secs(10)));
        assert_eq!(
            wire.barrier_ended(11, false),
            Err(PmiError::Fail),
            "{reply}"
        );
        drop(wire);
        finish(server);
    }
    for reply in [
        "cmd=barrier_out tag=x\n",
        "cmd=barrier_out tag=4294967296\n",
    ] {
        let (mut client, server) = client_1_2(Script::new().exchange("cmd=barrier_in\n", reply));
        assert_eq!(client.barrier(), Err(PmiError::Fail), "{reply}");
        drop(client);
        finish(server);
    }
}

/// A barrier's end that says it failed (`rc` not 0) fails the barrier, whichever
/// thread read it: here a get's, while the barrier was awaited.
#[test]
fn a_failed_barrier_end_read_by_a_get_fails_the_barrier() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:11\n")
            .expect(get_request("k"))
            .send("cmd=barrier_out rc=-1 tag=11 msg=failed\ncmd=get_result rc=0 value=v\n"),
    );
    wire.barrier_begin(Some(Group::World), 11).unwrap();
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert_eq!(wire.barrier_ended(11, false), Err(PmiError::Fail));
    drop(wire);
    finish(server);
}
