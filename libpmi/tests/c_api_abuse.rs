//! Caller abuse through the C exports: NULL everywhere, lengths 0 and negative, keys and
//! values with newlines, `=`, spaces, 1 MiB strings, a kvsname that is not ours. Each
//! gets its code, and the recorded wire shows that none of it was sent. Then what the
//! caller's output arrays get from a spawn the server answers or refuses. Its own test
//! binary: the library's state is process-wide.

mod emulated;

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::ptr::{null, null_mut};
use std::time::Duration;

use pmi::api::info::*;
use pmi::api::kvs::*;
use pmi::api::lifecycle::{PMI_Finalize, PMI_Init};
use pmi::api::names::*;
use pmi::api::spawn::PMI_Spawn_multiple;
use pmi::codes::*;

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn abuse_gets_clear_codes_and_sends_nothing() {
    let server = emulated::start(Duration::ZERO);
    let mut spawned: c_int = -1;
    // SAFETY (whole test): every pointer passed is NULL, a live CString, or a live
    // buffer at least as long as the length passed with it.
    unsafe {
        assert_eq!(PMI_Init(&mut spawned), PMI_SUCCESS);
        let mut name = [0 as c_char; 256];
        assert_eq!(PMI_KVS_Get_my_name(name.as_mut_ptr(), 256), PMI_SUCCESS);
        let kvs = name.as_ptr();
        let mut buf = [b'X' as c_char; 64];
        let untouched = |b: &[c_char]| b.iter().all(|&x| x == b'X' as c_char);

        // NULL everywhere.
        for f in [
            PMI_Get_rank,
            PMI_Get_size,
            PMI_Get_universe_size,
            PMI_Get_appnum,
        ] {
            assert_eq!(f(null_mut()), PMI_ERR_INVALID_ARG);
        }
        assert_eq!(PMI_Get_clique_size(null_mut()), PMI_ERR_INVALID_ARG);
        assert_eq!(PMI_Get_clique_ranks(null_mut(), 4), PMI_ERR_INVALID_ARG);
        assert_eq!(
            PMI_KVS_Put(null(), c("k").as_ptr(), c("v").as_ptr()),
            PMI_ERR_INVALID_KVS
        );
        assert_eq!(
            PMI_KVS_Put(kvs, null(), c("v").as_ptr()),
            PMI_ERR_INVALID_KEY
        );
        assert_eq!(
            PMI_KVS_Put(kvs, c("k").as_ptr(), null()),
            PMI_ERR_INVALID_VAL
        );
        assert_eq!(
            PMI_KVS_Get(kvs, c("k").as_ptr(), null_mut(), 64),
            PMI_ERR_INVALID_VAL
        );
        assert_eq!(
            PMI_KVS_Get(null(), c("k").as_ptr(), buf.as_mut_ptr(), 64),
            PMI_ERR_INVALID_KVS
        );
        assert_eq!(PMI_KVS_Commit(null()), PMI_ERR_INVALID_ARG);
        assert_eq!(
            PMI_Publish_name(null(), c("p").as_ptr()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI_Lookup_name(c("svc").as_ptr(), null_mut()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(PMI_Unpublish_name(null()), PMI_ERR_INVALID_ARG);
        let mut one = [1 as c_int];
        let mut errors = [0 as c_int; 1];
        let spawn_null = PMI_Spawn_multiple(
            1,
            null_mut(),
            null_mut(),
            one.as_mut_ptr(),
            null(),
            null_mut(),
            0,
            null(),
            errors.as_mut_ptr(),
        );
        assert_eq!(spawn_null, PMI_ERR_INVALID_ARGS);

        // Lengths 0 and negative: nothing written.
        for len in [0, -1, c_int::MIN] {
            assert_eq!(
                PMI_KVS_Get_my_name(buf.as_mut_ptr(), len),
                PMI_ERR_INVALID_LENGTH
            );
            assert_eq!(
                PMI_KVS_Get(kvs, c("k").as_ptr(), buf.as_mut_ptr(), len),
                PMI_ERR_INVALID_LENGTH
            );
        }
        assert!(untouched(&buf));

        // Keys and values that would break the line, and a kvsname that is not ours.
        for key in ["", "a b", "a=b", "a\nb", "cmd=put\n", "\r"] {
            assert_eq!(
                PMI_KVS_Put(kvs, c(key).as_ptr(), c("v").as_ptr()),
                PMI_ERR_INVALID_KEY,
                "{key:?}"
            );
            assert_eq!(
                PMI_KVS_Get(kvs, c(key).as_ptr(), buf.as_mut_ptr(), 64),
                PMI_ERR_INVALID_KEY
            );
        }
        for value in ["a\nb", "x\ncmd=barrier_in", "\r", "\x1b[2J"] {
            assert_eq!(
                PMI_KVS_Put(kvs, c("k").as_ptr(), c(value).as_ptr()),
                PMI_ERR_INVALID_VAL,
                "{value:?}"
            );
        }
        let foreign = c("kvs_someone_else");
        assert_eq!(
            PMI_KVS_Put(foreign.as_ptr(), c("k").as_ptr(), c("v").as_ptr()),
            PMI_ERR_INVALID_KVS
        );
        assert_eq!(
            PMI_KVS_Get(foreign.as_ptr(), c("k").as_ptr(), buf.as_mut_ptr(), 64),
            PMI_ERR_INVALID_KVS
        );
        assert_eq!(PMI_KVS_Commit(foreign.as_ptr()), PMI_ERR_INVALID_KVS);
        for word in ["a b", "a=b", "x\ny", ""] {
            assert_eq!(
                PMI_Publish_name(c(word).as_ptr(), c("p").as_ptr()),
                PMI_ERR_INVALID_ARG
            );
            assert_eq!(
                PMI_Publish_name(c("svc").as_ptr(), c(word).as_ptr()),
                PMI_ERR_INVALID_ARG
            );
        }

        // 1 MiB strings.
        let huge = c(&"k".repeat(1 << 20));
        assert_eq!(
            PMI_KVS_Put(kvs, huge.as_ptr(), c("v").as_ptr()),
            PMI_ERR_INVALID_KEY_LENGTH
        );
        assert_eq!(
            PMI_KVS_Get(kvs, huge.as_ptr(), buf.as_mut_ptr(), 64),
            PMI_ERR_INVALID_KEY_LENGTH
        );
        assert_eq!(
            PMI_KVS_Put(kvs, c("k").as_ptr(), huge.as_ptr()),
            PMI_ERR_INVALID_VAL_LENGTH
        );
        assert_eq!(
            PMI_KVS_Put(huge.as_ptr(), c("k").as_ptr(), c("v").as_ptr()),
            PMI_ERR_INVALID_KVS
        );
        assert_eq!(
            PMI_Publish_name(huge.as_ptr(), c("p").as_ptr()),
            PMI_ERR_INVALID_ARG
        );
        assert_eq!(
            PMI_Lookup_name(huge.as_ptr(), buf.as_mut_ptr()),
            PMI_ERR_INVALID_ARG
        );
        let cmds = [huge.as_ptr()];
        let spawn_huge = PMI_Spawn_multiple(
            1,
            cmds.as_ptr().cast_mut(),
            null_mut(),
            one.as_mut_ptr(),
            null(),
            null_mut(),
            0,
            null(),
            errors.as_mut_ptr(),
        );
        assert_eq!(spawn_huge, PMI_ERR_INVALID_ARGS);
        assert!(untouched(&buf));

        // Ports: at most 255 bytes go out, and at most 256 bytes come back into the
        // caller's buffer (MPICH passes char port[MPI_MAX_PORT_NAME], 256 bytes).
        let long_port = c(&"p".repeat(256));
        assert_eq!(
            PMI_Publish_name(c("svc").as_ptr(), long_port.as_ptr()),
            PMI_ERR_INVALID_ARG
        );
        let mut port = [b'X' as c_char; 512];
        assert_eq!(
            PMI_Lookup_name(c("long-port").as_ptr(), port.as_mut_ptr()),
            PMI_ERR_INVALID_LENGTH
        );
        assert!(untouched(&port), "nothing written for a 300-byte port");
        assert_eq!(
            PMI_Lookup_name(c("short").as_ptr(), port.as_mut_ptr()),
            PMI_SUCCESS
        );
        assert_eq!(
            std::ffi::CStr::from_ptr(port.as_ptr()).to_bytes(),
            b"tcp://h:1"
        );
        assert!(untouched(&port[10..]));

        // Spawn: the server's codes for the first processes, 0 for the rest; nothing
        // written when it refuses.
        let mut three = [3 as c_int];
        for (command, rc, codes) in [
            ("/bin/true", PMI_SUCCESS, [0, 7, 0]),
            ("fail", PMI_FAIL, [-9; 3]),
        ] {
            let mut errors = [-9 as c_int; 3];
            let command = c(command);
            let cmds = [command.as_ptr()];
            let spawn = PMI_Spawn_multiple(
                1,
                cmds.as_ptr().cast_mut(),
                null_mut(),
                three.as_mut_ptr(),
                null(),
                null_mut(),
                0,
                null(),
                errors.as_mut_ptr(),
            );
            assert_eq!((spawn, errors), (rc, codes));
        }

        assert_eq!(PMI_Finalize(), PMI_SUCCESS);
    }
    let lines = server.join().unwrap();
    let spawn = |command: &str| {
        [
            "mcmd=spawn\n".to_string(),
            "nprocs=3\n".into(),
            format!("execname={command}\n"),
            "totspawns=1\n".into(),
            "spawnssofar=1\n".into(),
            "argcnt=0\n".into(),
            "preput_num=0\n".into(),
            "info_num=0\n".into(),
            "endcmd\n".into(),
        ]
    };
    let mut expected: Vec<String> = [
        "cmd=init pmi_version=1 pmi_subversion=1\n",
        "cmd=get_maxes\n",
        "cmd=get_my_kvsname\n",
        "cmd=lookup_name service=long-port\n",
        "cmd=lookup_name service=short\n",
    ]
    .map(String::from)
    .to_vec();
    expected.extend(spawn("/bin/true"));
    expected.extend(spawn("fail"));
    expected.push("cmd=finalize\n".into());
    assert_eq!(
        lines, expected,
        "only the handshake, the kvsname, the good lookups and spawns, and finalize went out"
    );
}
