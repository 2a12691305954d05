//! Eight threads call put (distinct keys), get and the info queries through the C
//! exports at once, 10 000 calls each, against the emulating server: every answer is
//! right, and the recorded transcript parses line by line (no interleaved requests).
//! Its own test binary: the library's state is process-wide.

mod emulated;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::time::Duration;

use pmi::api::info::{PMI_Get_appnum, PMI_Get_rank, PMI_Get_size, PMI_Get_universe_size};
use pmi::api::kvs::{PMI_KVS_Get, PMI_KVS_Put};
use pmi::api::lifecycle::PMI_Finalize;
use pmi::codes::PMI_SUCCESS;

const THREADS: usize = 8;
const CALLS: usize = 10_000;

fn int_query(f: unsafe extern "C" fn(*mut c_int) -> c_int) -> c_int {
    let mut v: c_int = -7;
    // SAFETY: `v` is a writable int.
    assert_eq!(unsafe { f(&mut v) }, PMI_SUCCESS);
    v
}

fn worker(t: usize, kvs: &CStr) -> usize {
    let mut buf = [0 as c_char; 1024];
    let mut puts = 0;
    for i in 0..CALLS {
        match i % 5 {
            0 | 1 => {
                let key = CString::new(format!("t{t}-k{i}")).unwrap();
                let value = CString::new(format!("value of thread {t} call {i}")).unwrap();
                // SAFETY: NUL-terminated strings.
                let rc = unsafe { PMI_KVS_Put(kvs.as_ptr(), key.as_ptr(), value.as_ptr()) };
                assert_eq!(rc, PMI_SUCCESS, "put {key:?}");
                puts += 1;
            }
            2 | 3 => {
                // A key another process put, one for this group of five, read twice
                // (the emulated server answers keys starting with `peer-`).
                let j = i - i % 5;
                let name = format!("peer-t{t}-k{j}");
                let key = CString::new(name.as_str()).unwrap();
                // SAFETY: strings are NUL-terminated; `buf` holds 1024 bytes.
                let rc = unsafe { PMI_KVS_Get(kvs.as_ptr(), key.as_ptr(), buf.as_mut_ptr(), 1024) };
                assert_eq!(rc, PMI_SUCCESS, "get {key:?}");
                // SAFETY: a successful get wrote a NUL-terminated string into `buf`.
                let got = unsafe { CStr::from_ptr(buf.as_ptr()) };
                assert_eq!(
                    Some(got.to_str().unwrap().to_string()),
                    emulated::peer_value(&name)
                );
            }
            _ => {
                assert_eq!(int_query(PMI_Get_rank), 0);
                assert_eq!(int_query(PMI_Get_size), 1);
                assert_eq!(int_query(PMI_Get_universe_size), 1);
                assert_eq!(int_query(PMI_Get_appnum), 0);
            }
        }
    }
    puts
}

#[test]
fn eight_threads_ten_thousand_calls_each_keep_the_wire_whole() {
    let server = emulated::start(Duration::ZERO);
    let kvs = emulated::init_through_c();
    assert_eq!(kvs.to_str().unwrap(), emulated::KVS);

    let puts: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn({
                    let kvs = &kvs;
                    move || worker(t, kvs)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(PMI_Finalize(), PMI_SUCCESS);

    let lines = server.join().unwrap();
    let bad: Vec<&String> = lines.iter().filter(|l| !emulated::is_request(l)).collect();
    assert!(
        bad.is_empty(),
        "malformed or interleaved lines: {:?}",
        &bad[..bad.len().min(5)]
    );
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("cmd=put "), puts);
    assert_eq!(puts, THREADS * CALLS * 2 / 5);
    // In each group of five calls one key is read twice, both times from the server: a
    // key is kept from its second read among the last few on, and never read again here.
    assert_eq!(count("cmd=get "), puts);
    // Universe size and appnum are asked once, whatever the number of threads.
    assert_eq!(count("cmd=get_universe_size"), 1);
    assert_eq!(count("cmd=get_appnum"), 1);
}
