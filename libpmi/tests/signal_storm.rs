//! A storm of signals whose handler is installed without SA_RESTART (SIGALRM every
//! millisecond, aimed at the calling thread) while the client blocks in reads: every call still succeeds, because
//! the library retries EINTR. Its own test binary: it changes process-wide signal state.

mod emulated;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pmi::api::kvs::{PMI_Barrier, PMI_KVS_Get, PMI_KVS_Put};
use pmi::api::lifecycle::PMI_Finalize;
use pmi::codes::PMI_SUCCESS;

static SIGNALS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count_signal(_: c_int) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

/// Deliver SIGALRM to the calling thread every millisecond until the returned timer
/// is deleted. The handler is installed without SA_RESTART, so a blocking read in this
/// thread returns EINTR. (A process-wide `setitimer` would mostly interrupt the test
/// harness's main thread instead; the signal must hit the thread inside the library.)
fn storm_on_this_thread() -> libc::timer_t {
    // SAFETY: a zeroed sigaction with a handler and an empty mask is valid; the handler
    // only touches an atomic, which is async-signal-safe. The sigevent names this
    // thread by its kernel id, and the timer is written into `timer`.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = count_signal as extern "C" fn(c_int) as usize;
        action.sa_flags = 0; // no SA_RESTART
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()),
            0
        );
        let mut event: libc::sigevent = std::mem::zeroed();
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = libc::SIGALRM;
        event.sigev_notify_thread_id = libc::gettid();
        let mut timer: libc::timer_t = std::mem::zeroed();
        assert_eq!(
            libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer),
            0
        );
        let tick = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        let spec = libc::itimerspec {
            it_interval: tick,
            it_value: tick,
        };
        assert_eq!(
            libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()),
            0
        );
        timer
    }
}

#[test]
fn every_call_succeeds_through_a_storm_of_eintr() {
    // Each reply comes 3 ms late: the client sits in read() while signals arrive.
    let server = emulated::start(Duration::from_millis(3));
    let timer = storm_on_this_thread();

    let name = emulated::init_through_c();
    let mut value = [0 as c_char; 1024];
    for i in 0..100 {
        let key = CString::new(format!("key-{i}")).unwrap();
        let val = CString::new(format!("value-{i}")).unwrap();
        // (Read back from the server: a key another process put, not this one's own.)
        let peer = format!("peer-key-{i}");
        let peer_key = CString::new(peer.as_str()).unwrap();
        let peer_val = CString::new(emulated::peer_value(&peer).unwrap()).unwrap();
        // SAFETY: NUL-terminated strings; `value` holds 1024 bytes.
        unsafe {
            assert_eq!(
                PMI_KVS_Put(name.as_ptr(), key.as_ptr(), val.as_ptr()),
                PMI_SUCCESS
            );
            assert_eq!(PMI_Barrier(), PMI_SUCCESS);
            assert_eq!(
                PMI_KVS_Get(name.as_ptr(), peer_key.as_ptr(), value.as_mut_ptr(), 1024),
                PMI_SUCCESS
            );
            assert_eq!(CStr::from_ptr(value.as_ptr()), peer_val.as_c_str());
        }
    }
    assert_eq!(PMI_Finalize(), PMI_SUCCESS);
    // SAFETY: `timer` was created above and is deleted once.
    assert_eq!(unsafe { libc::timer_delete(timer) }, 0);
    server.join().unwrap();

    // 300 round trips of at least 3 ms each: hundreds of interruptions, surely.
    let seen = SIGNALS.load(Ordering::Relaxed);
    assert!(
        seen >= 300,
        "only {seen} signals arrived: the storm did not happen"
    );
}
