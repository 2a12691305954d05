//! PMI 1.2's barriers from many threads at once through the C exports, against a
//! server that answers them late and in another order than they came, between another
//! thread's get replies: every barrier ends as soon as its end came (a thread left
//! asleep with its end read would wait for `PMI_TIMEOUT`, and find it then), and every
//! get is answered right. Its own test binary: the library's state is the process's.

use std::ffi::{CStr, CString};
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::raw::{c_char, c_int};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use pmi::api::kvs::{PMI_Barrier, PMI_Barrier_group, PMI_KVS_Get};
use pmi::api::lifecycle::{PMI_Finalize, PMI_Init};
use pmi::codes::PMI_SUCCESS;
use pmi_testkit::scripted::{finish, in_child};

const KVS: &str = "kvs_1_2";
const THREADS: usize = 4;
const BARRIERS: usize = 300;
const GETS: usize = 3000;
/// Longer than any barrier takes here (the server holds an end a few milliseconds),
/// shorter than `PMI_TIMEOUT`.
const PROMPT: Duration = Duration::from_secs(5);

/// `PMI_GROUP_WORLD` and `PMI_GROUP_NODE`, as pmi.h defines them.
const WORLD: *const c_int = std::ptr::null();
const NODE: *const c_int = std::ptr::without_provenance(2);

#[test]
fn barriers_from_many_threads_all_end() {
    std::env::set_var("PMI_TIMEOUT", "30");
    let server = in_child(|stream| serve(stream).into_bytes(), 0, 2);
    let mut spawned = -1;
    // SAFETY: a valid pointer to an int.
    assert_eq!(unsafe { PMI_Init(&mut spawned) }, PMI_SUCCESS);
    let waiters: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                let tag = CString::new(format!("thread-{t}")).unwrap();
                for i in 0..BARRIERS {
                    let start = Instant::now();
                    let rc = match (t, i % 3) {
                        // One thread's plain barrier, one NODE: their tags differ too.
                        (0, _) => PMI_Barrier(),
                        // SAFETY: a constant needs no array; the tag is NUL-terminated.
                        (1, 0) => unsafe { PMI_Barrier_group(NODE, 0, tag.as_ptr()) },
                        // SAFETY: as above.
                        _ => unsafe { PMI_Barrier_group(WORLD, 0, tag.as_ptr()) },
                    };
                    assert_eq!(rc, PMI_SUCCESS, "thread {t}, barrier {i}");
                    let took = start.elapsed();
                    assert!(took < PROMPT, "thread {t}, barrier {i} took {took:?}");
                }
            })
        })
        .collect();
    let getter = std::thread::spawn(|| {
        let kvs = CString::new(KVS).unwrap();
        let mut buf = [0 as c_char; 64];
        for i in 0..GETS {
            let key = CString::new(format!("k{i}")).unwrap();
            // SAFETY: NUL-terminated strings and a buffer of the length given.
            let rc = unsafe { PMI_KVS_Get(kvs.as_ptr(), key.as_ptr(), buf.as_mut_ptr(), 64) };
            assert_eq!(rc, PMI_SUCCESS, "get {i}");
            // SAFETY: a successful get wrote a NUL-terminated string.
            let got = unsafe { CStr::from_ptr(buf.as_ptr()) };
            assert_eq!(got.to_str().unwrap(), format!("v{i}"));
        }
    });
    for waiter in waiters {
        waiter.join().unwrap();
    }
    getter.join().unwrap();
    assert_eq!(PMI_Finalize(), PMI_SUCCESS);
    assert_eq!(String::from_utf8(finish(server)).unwrap(), "ok");
}

/// MPICH 5's Hydra's answers, the barriers' ends held back and sent in the reverse of
/// the order they came: when a get comes (before its reply), and when nothing came for
/// a moment.
fn serve(stream: UnixStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    let mut out = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut held: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut idle = 0;
    loop {
        match reader.read_line(&mut line) {
            Ok(0) => return "closed early".into(),
            Ok(_) if line.ends_with('\n') => {}
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                idle += 1;
                assert!(idle < 10_000, "the client went quiet: {held:?}");
                let ends: String = held.drain(..).rev().collect();
                out.write_all(ends.as_bytes()).unwrap();
                continue;
            }
            Err(e) => panic!("{e}"),
        }
        idle = 0;
        let request = std::mem::take(&mut line);
        let request = request.trim_end();
        let field = |key: &str| {
            request
                .split(' ')
                .find_map(|t| t.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        let reply = match field("cmd").as_deref() {
            Some("init") => "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=2\n".into(),
            Some("get_maxes") => {
                "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n".into()
            }
            Some("get_my_kvsname") => format!("cmd=my_kvsname rc=0 kvsname={KVS}\n"),
            Some("barrier_in") => {
                let tag = field("group").map_or("0".into(), |g| {
                    g.rsplit_once(':').map(|(_, t)| t.to_string()).unwrap()
                });
                held.push(format!("cmd=barrier_out tag={tag}\n"));
                continue;
            }
            Some("get") => {
                let key = field("key").unwrap();
                let ends: String = held.drain(..).rev().collect();
                format!("{ends}cmd=get_result rc=0 value=v{}\n", &key[1..])
            }
            Some("finalize") => {
                out.write_all(b"cmd=finalize_ack\n").unwrap();
                return if held.is_empty() {
                    "ok".into()
                } else {
                    format!("{held:?}")
                };
            }
            _ => panic!("unexpected request {request:?}"),
        };
        out.write_all(reply.as_bytes()).unwrap();
    }
}
