//! PMI 1.2's `PMI_Barrier_group` against a server that speaks only PMI 1.1 (Hydra 4.0.2
//! answers `init` with `pmi_subversion=1`): every group barrier, the probe
//! `PMI_GROUP_SELF` included, fails at once with nothing sent, and the connection stays
//! usable; `PMI_Barrier` waits in the call as it always did. Its own test binary: the
//! library's state is the process's.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::ptr::null;
use std::time::Duration;

use pmi::api::kvs::{PMI_Barrier, PMI_Barrier_group};
use pmi::api::lifecycle::{PMI_Finalize, PMI_Init};
use pmi::codes::{PMI_FAIL, PMI_SUCCESS};
use pmi_testkit::scripted::{finish, in_child};

#[test]
fn a_pmi_1_1_server_has_no_group_barriers() {
    let server = in_child(|stream| serve(stream).into_bytes(), 0, 2);
    let mut spawned = -1;
    // SAFETY: a valid pointer to an int.
    assert_eq!(unsafe { PMI_Init(&mut spawned) }, PMI_SUCCESS);
    let both = [0, 1];
    // SAFETY: the constants need no array; `both` has 2 ranks.
    unsafe {
        assert_eq!(
            PMI_Barrier_group(std::ptr::without_provenance(1), 0, null()),
            PMI_FAIL
        );
        assert_eq!(PMI_Barrier_group(null(), 0, null()), PMI_FAIL);
        assert_eq!(
            PMI_Barrier_group(std::ptr::without_provenance(2), 0, null()),
            PMI_FAIL
        );
        assert_eq!(PMI_Barrier_group(both.as_ptr(), 2, null()), PMI_FAIL);
    }
    assert_eq!(PMI_Barrier(), PMI_SUCCESS);
    assert_eq!(PMI_Finalize(), PMI_SUCCESS);
    assert_eq!(String::from_utf8(finish(server)).unwrap(), "ok");
}

/// Hydra 4.0.2's answers; any other line fails the test.
fn serve(stream: UnixStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut out = stream.try_clone().unwrap();
    let mut lines = BufReader::new(stream).lines();
    for (want, reply) in [
        (
            "cmd=init pmi_version=1 pmi_subversion=1",
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        ),
        (
            "cmd=get_maxes",
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
        ),
        ("cmd=barrier_in", "cmd=barrier_out\n"),
        ("cmd=finalize", "cmd=finalize_ack\n"),
    ] {
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        assert_eq!(line, want, "the server expected another line");
        out.write_all(reply.as_bytes()).unwrap();
    }
    "ok".to_string()
}
