//! PMI 1.2 against a server that answers `init` with `pmi_subversion=2`, as MPICH 5's
//! Hydra does: `PMI_Barrier_group` names its group on the wire as MPICH 5's client does
//! (ranks ascending, the tag a hash of the string), refuses bad groups before anything
//! is sent, and waits without the lock, so another thread's put and get are answered
//! while it waits, even when the barrier's end comes first on the connection. The server
//! is a forked child that checks every line; it holds the barrier until the other
//! thread's get was answered. Its own test binary: the library's state is the process's.

use std::ffi::CString;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::RawFd;
use std::os::raw::c_int;
use std::os::unix::net::UnixStream;
use std::ptr::null;
use std::time::Duration;

use pmi::api::kvs::{PMI_Barrier, PMI_Barrier_group, PMI_KVS_Get, PMI_KVS_Put};
use pmi::api::lifecycle::{PMI_Finalize, PMI_Init};
use pmi::codes::{PMI_ERR_INVALID_ARG, PMI_ERR_INVALID_SIZE, PMI_SUCCESS};
use pmi_testkit::scripted::{finish, in_child};

/// `PMI_GROUP_WORLD`, `PMI_GROUP_SELF`, `PMI_GROUP_NODE`, as pmi.h defines them: the
/// addresses 0, 1 and 2, which no array has.
const WORLD: *const c_int = std::ptr::null();
const SELF: *const c_int = std::ptr::without_provenance(1);
const NODE: *const c_int = std::ptr::without_provenance(2);

const KVS: &str = "kvs_1_2";

/// MPICH 5's tag of a string tag: FNV-1a as a C int, made non-negative.
fn tag_of(text: &str) -> i32 {
    let hash = text.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    });
    (hash as i32).checked_abs().unwrap_or(0)
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

fn byte(fd: RawFd) -> bool {
    let mut b = 0u8;
    // SAFETY: reads one byte into a valid buffer.
    unsafe { libc::read(fd, (&raw mut b).cast(), 1) == 1 }
}

fn signal(fd: RawFd) -> bool {
    // SAFETY: writes one byte from a valid buffer.
    unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) == 1 }
}

#[test]
fn group_barriers_over_a_pmi_1_2_server() {
    let (mut seen, mut got) = ([-1; 2], [-1; 2]);
    // SAFETY: valid arrays of two ints for the pipes' ends.
    assert_eq!(unsafe { libc::pipe(seen.as_mut_ptr()) }, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { libc::pipe(got.as_mut_ptr()) }, 0);
    let tagged = tag_of("pset-1");
    let server = in_child(
        move |stream| serve(stream, seen[1], got[0], tagged).into_bytes(),
        3,
        8,
    );
    let mut spawned = -1;
    // SAFETY: a valid pointer to an int.
    assert_eq!(unsafe { PMI_Init(&mut spawned) }, PMI_SUCCESS);

    // Refused before anything is sent: a rank twice, a rank outside the job, a group
    // without this process, no ranks, more ranks than the job has, a NULL array.
    let twice = [3, 1, 3];
    let outside = [3, 8];
    let without = [0, 1];
    // SAFETY: each array has the count given; the tag is NULL.
    unsafe {
        assert_eq!(
            PMI_Barrier_group(twice.as_ptr(), 3, null()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI_Barrier_group(outside.as_ptr(), 2, null()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI_Barrier_group(without.as_ptr(), 2, null()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI_Barrier_group(twice.as_ptr(), 0, null()),
            PMI_ERR_INVALID_SIZE
        );
        assert_eq!(
            PMI_Barrier_group(twice.as_ptr(), 9, null()),
            PMI_ERR_INVALID_SIZE
        );
        assert_eq!(
            PMI_Barrier_group(twice.as_ptr(), -1, null()),
            PMI_ERR_INVALID_SIZE
        );
        // This process alone: a no-op, with the constant or as a list.
        assert_eq!(PMI_Barrier_group(SELF, 0, null()), PMI_SUCCESS);
        assert_eq!(PMI_Barrier_group([3].as_ptr(), 1, null()), PMI_SUCCESS);
    }

    // A group barrier waits; meanwhile another thread's put and get are answered.
    let tag = c("pset-1");
    let waiting = std::thread::spawn(move || {
        let ranks = [5, 3, 1];
        // SAFETY: an array of 3 ranks and a NUL-terminated tag.
        unsafe { PMI_Barrier_group(ranks.as_ptr(), 3, tag.as_ptr()) }
    });
    assert!(byte(seen[0]), "the server read the group barrier");
    let (kvs, key, value) = (c(KVS), c("card-3"), c("tcp://h:3"));
    // SAFETY: NUL-terminated strings.
    assert_eq!(
        unsafe { PMI_KVS_Put(kvs.as_ptr(), key.as_ptr(), value.as_ptr()) },
        PMI_SUCCESS
    );
    let mut buf = vec![0u8; 64];
    let peer = c("card-5");
    // SAFETY: NUL-terminated strings and a buffer of the length given.
    let rc = unsafe { PMI_KVS_Get(kvs.as_ptr(), peer.as_ptr(), buf.as_mut_ptr().cast(), 64) };
    assert_eq!(rc, PMI_SUCCESS);
    let end = buf.iter().position(|&b| b == 0).unwrap();
    assert_eq!(&buf[..end], b"tcp://h:5");
    assert!(signal(got[1]), "told the server the get was answered");
    assert_eq!(waiting.join().unwrap(), PMI_SUCCESS);

    // PMI_Barrier waits the same way; then NODE and WORLD with a tag.
    assert_eq!(PMI_Barrier(), PMI_SUCCESS);
    let world = c("w");
    // SAFETY: the constants need no array; the tags are NULL or NUL-terminated.
    unsafe {
        assert_eq!(PMI_Barrier_group(NODE, 0, null()), PMI_SUCCESS);
        assert_eq!(PMI_Barrier_group(WORLD, 7, world.as_ptr()), PMI_SUCCESS);
    }
    assert_eq!(PMI_Finalize(), PMI_SUCCESS);
    let heard = String::from_utf8(finish(server)).unwrap();
    assert_eq!(heard, "ok");
}

/// The server: checks each line and answers as MPICH 5's Hydra does. Tells the test it
/// read the group barrier (`seen`); holds it until the test says the other thread's get
/// was answered (`got`), and sends the barrier's end before the get's reply.
fn serve(stream: UnixStream, seen: RawFd, got: RawFd, tagged: i32) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut out = stream.try_clone().unwrap();
    let mut lines = BufReader::new(stream).lines();
    let mut next = || lines.next().and_then(Result::ok).unwrap_or_default();
    let mut expect = |want: &str| {
        let line = next();
        assert_eq!(line, want, "the server expected another line");
    };
    let mut say = |text: &str| out.write_all(text.as_bytes()).unwrap();
    expect("cmd=init pmi_version=1 pmi_subversion=1");
    say("cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n");
    expect("cmd=get_maxes");
    say("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    expect(&format!("cmd=barrier_in group=1,3,5:{tagged}"));
    assert!(signal(seen), "signalled the test");
    expect("cmd=get_my_kvsname");
    say(&format!("cmd=my_kvsname rc=0 kvsname={KVS}\n"));
    expect(&format!("cmd=put kvsname={KVS} key=card-3 value=tcp://h:3"));
    say("cmd=put_result rc=0\n");
    expect(&format!("cmd=get kvsname={KVS} key=card-5"));
    // The barrier's end first: the getting thread must pass it on.
    say(&format!("cmd=barrier_out tag={tagged}\n"));
    say("cmd=get_result rc=0 value=tcp://h:5\n");
    assert!(byte(got), "heard the get was answered");
    expect("cmd=barrier_in");
    say("cmd=barrier_out tag=0\n");
    expect("cmd=barrier_in group=NODE:0");
    say("cmd=barrier_out tag=0\n");
    expect(&format!("cmd=barrier_in group=WORLD:{}", tag_of("w")));
    say(&format!("cmd=barrier_out tag={}\n", tag_of("w")));
    expect("cmd=finalize");
    say("cmd=finalize_ack\n");
    "ok".to_string()
}
