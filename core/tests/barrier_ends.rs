//! PMI 1.2's barriers awaited without the lock, at the wire backend: which thread's
//! barrier a `barrier_out` ends, and that the thread it ends is woken. Several threads'
//! turns are played here one after another on one backend, in the order that matters
//! (`lifecycle::barrier` takes the lock for each `barrier_ended` and polls the fds of
//! its `BarrierStep::Pending` between them, without the lock).

use std::os::fd::RawFd;
use std::time::Duration;

use pmi_core::client::Client;
use pmi_core::error::{PmiError, PmiResult};
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

/// A barrier begun, as the thread that awaits it knows it.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    id: i32,
    fds: [RawFd; 2],
}

fn waiting(step: PmiResult<BarrierStep>) -> Waiting {
    match step {
        Ok(BarrierStep::Pending { id, fds, .. }) => Waiting { id, fds },
        other => panic!("a PMI 1.2 barrier is awaited without the lock, not {other:?}"),
    }
}

/// Whether its thread, polling its fds, would wake within `wait` (what its `poll` sees).
fn wakes(w: Waiting, wait: Duration) -> bool {
    let mut pfds = w.fds.map(|fd| libc::pollfd {
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
    let first = waiting(wire.barrier_begin(Some(Group::World), 11));
    let second = waiting(wire.barrier_begin(Some(Group::Node), 22));
    assert!(wakes(first, Duration::from_secs(10)), "22's end came");
    assert_eq!(wire.barrier_ended(first.id, false), Ok(false));
    assert!(
        wakes(second, Duration::ZERO),
        "the thread waiting for 22 is not woken: its end was read by the other waiter"
    );
    assert_eq!(wire.barrier_ended(second.id, false), Ok(true));
    assert_eq!(wire.finalize(), Ok(()));
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    drop(wire);
    finish(server);
}

/// Two threads wait, for barriers 11 and 22; a third thread's get reads 22's end first.
/// The waiter for 11 takes the lock first (woken by anything) and finds nothing for it:
/// the waiter for 22, which polls afterwards, must still wake.
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
    let first = waiting(wire.barrier_begin(Some(Group::World), 11));
    let second = waiting(wire.barrier_begin(Some(Group::Node), 22));
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert_eq!(wire.barrier_ended(first.id, false), Ok(false));
    assert!(
        wakes(second, Duration::ZERO),
        "the thread waiting for 22 is not woken: the waiter for 11 took the wake"
    );
    assert_eq!(wire.barrier_ended(second.id, false), Ok(true));
    assert_eq!(wire.finalize(), Ok(()));
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    drop(wire);
    finish(server);
}

/// Two threads wait, for barriers 11 and 22, whose ends come in one read. The thread
/// that reads them finds its own first: the other thread, which polls afterwards, must
/// wake for the line left behind.
#[test]
fn ends_read_together_wake_every_thread_they_end() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:11\n")
            .expect("cmd=barrier_in group=NODE:22\n")
            .send("cmd=barrier_out tag=11\ncmd=barrier_out tag=22\n"),
    );
    let first = waiting(wire.barrier_begin(Some(Group::World), 11));
    let second = waiting(wire.barrier_begin(Some(Group::Node), 22));
    assert!(wakes(first, Duration::from_secs(10)), "the ends came");
    // (Both lines in the socket: one write, read at once.)
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    assert!(
        wakes(second, Duration::ZERO),
        "the thread waiting for 22 is not woken: its end waits unread in the buffer"
    );
    assert_eq!(wire.barrier_ended(second.id, false), Ok(true));
    drop(wire);
    finish(server);
}

/// A barrier's end that comes in the same read as another thread's get reply, behind
/// it: the thread waiting for the barrier must wake.
#[test]
fn an_end_read_behind_a_get_reply_wakes_its_thread() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:11\n")
            .expect(get_request("k"))
            .send("cmd=get_result rc=0 value=v\ncmd=barrier_out tag=11\n"),
    );
    let first = waiting(wire.barrier_begin(Some(Group::World), 11));
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert!(
        wakes(first, Duration::ZERO),
        "the thread waiting for 11 is not woken: its end waits unread in the buffer"
    );
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    drop(wire);
    finish(server);
}

/// Two barriers of one group and one tag (two threads; the server counts them as two
/// rounds of one barrier, which end in order): each end ends one, the first begun first,
/// whichever thread reads it.
#[test]
fn two_barriers_of_one_group_and_tag_end_one_each() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in group=WORLD:7\n")
            .expect("cmd=barrier_in group=WORLD:7\n")
            .send("cmd=barrier_out tag=7\n")
            .expect(get_request("k"))
            .send("cmd=get_result rc=0 value=v\ncmd=barrier_out tag=7\n"),
    );
    let first = waiting(wire.barrier_begin(Some(Group::World), 7));
    let second = waiting(wire.barrier_begin(Some(Group::World), 7));
    assert!(wakes(second, Duration::from_secs(10)));
    assert_eq!(wire.barrier_ended(second.id, false), Ok(false));
    assert!(
        wakes(first, Duration::ZERO),
        "the first begun is ended first"
    );
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert!(wakes(second, Duration::ZERO));
    assert_eq!(wire.barrier_ended(second.id, false), Ok(true));
    drop(wire);
    finish(server);
}

/// Barriers of two groups with one tag cannot run at once: both ends would name the
/// tag, and the first to come, whichever group's, would end the barrier begun first
/// (`PMI_Barrier` would return when the node had entered). The second is refused,
/// nothing sent: here a NODE, a WORLD and a list without a tag (0) beside
/// `PMI_Barrier` (0, and another barrier for the server: `barrier_in` with no group);
/// NODE with another tag runs; once `PMI_Barrier` ended, NODE with 0 runs.
#[test]
fn barriers_of_two_groups_with_one_tag_do_not_run_at_once() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in\n")
            .expect("cmd=barrier_in group=NODE:5\n")
            .send("cmd=barrier_out tag=0\n")
            .expect("cmd=barrier_in group=NODE:0\n")
            .send("cmd=barrier_out tag=5\ncmd=barrier_out tag=0\n"),
    );
    let plain = waiting(wire.barrier_begin(None, 0));
    for group in [Group::Node, Group::World, Group::Ranks(&[0, 1])] {
        assert_eq!(
            wire.barrier_begin(Some(group), 0),
            Err(PmiError::InvalidArg),
            "{group:?}"
        );
    }
    let tagged = waiting(wire.barrier_begin(Some(Group::Node), 5));
    assert!(wakes(plain, Duration::from_secs(10)));
    assert_eq!(wire.barrier_ended(plain.id, false), Ok(true));
    let node = waiting(wire.barrier_begin(Some(Group::Node), 0));
    assert!(wakes(tagged, Duration::from_secs(10)));
    assert_eq!(wire.barrier_ended(tagged.id, false), Ok(true));
    assert_eq!(wire.barrier_ended(node.id, false), Ok(true));
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

/// A second `barrier_out` for one barrier ends no barrier: wherever it is read (here
/// with the first), the connection is broken there (an unexpected reply), and neither
/// a later call nor the next barrier, which the server never answers, passes.
#[test]
fn a_second_end_of_one_barrier_does_not_end_the_next() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .expect("cmd=barrier_in\n")
            .send("cmd=barrier_out tag=0\ncmd=barrier_out tag=0\n")
            .sleep(Duration::from_millis(200))
            .send("cmd=get_result rc=0 value=v\n"),
    );
    let first = waiting(wire.barrier_begin(None, 0));
    assert!(wakes(first, Duration::from_secs(10)));
    assert_eq!(wire.barrier_ended(first.id, false), Ok(true));
    assert_eq!(
        wire.get(KVS, b"k"),
        Err(PmiError::Fail),
        "the connection goes on after a barrier_out that ends no barrier"
    );
    let next = wire.barrier_begin(None, 0).and_then(|step| match step {
        BarrierStep::Pending { id, .. } => wire.barrier_ended(id, false),
        BarrierStep::Done => Ok(true),
    });
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
        let first = waiting(wire.barrier_begin(Some(Group::World), 11));
        assert!(wakes(first, Duration::from_secs(10)));
        assert_eq!(
            wire.barrier_ended(first.id, false),
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
    let first = waiting(wire.barrier_begin(Some(Group::World), 11));
    assert_eq!(wire.get(KVS, b"k"), Ok(&b"v"[..]));
    assert_eq!(wire.barrier_ended(first.id, false), Err(PmiError::Fail));
    drop(wire);
    finish(server);
}

/// A thread that reads its own end (as where it waits alone) does not leave its waker
/// signalled for the next barrier, which would wake at once for nothing, taking the lock
/// and two system calls more: the next barrier's thread sleeps until its end comes.
#[test]
fn a_barrier_ended_leaves_no_wake_for_the_next() {
    let (mut wire, server) = wire_1_2(
        Script::new()
            .exchange("cmd=barrier_in\n", "cmd=barrier_out tag=0\n")
            .expect("cmd=barrier_in\n")
            .sleep(Duration::from_millis(200))
            .send("cmd=barrier_out tag=0\n"),
    );
    for i in 0..2 {
        let plain = waiting(wire.barrier_begin(None, 0));
        if i == 1 {
            assert!(
                !wakes(plain, Duration::from_millis(50)),
                "the next barrier's thread woke before its end came"
            );
        }
        assert!(wakes(plain, Duration::from_secs(10)));
        assert_eq!(wire.barrier_ended(plain.id, false), Ok(true));
    }
    drop(wire);
    finish(server);
}
