//! The lifecycle both APIs share: init (choose and start a backend, once), whether
//! initialized, finalize, and abort. Each front's `api/lifecycle.rs` (`libpmi`,
//! `libpmi2`) only converts arguments around these.

use std::ffi::OsString;

use libc::c_char;

use crate::api::Api;
use crate::backend::Identity;
use crate::backends::{self, pmix_lib};
use crate::client::Client;
use crate::conn::{self, Conn};
use crate::env::{self, Launch};
use crate::error::{PmiError, PmiResult};
use crate::sibling;
use crate::state::{self, Lifecycle};
use crate::trace;

/// Initialize once: later calls return the same identity without traffic; a call after
/// finalize fails. `call` names the export, for messages.
pub fn init(api: Api, call: &str) -> PmiResult<Identity> {
    // Before the lock: a fork by another thread while init holds it must be seen.
    watch_forks();
    let mut state = state::lock()?;
    match &*state {
        Lifecycle::Ready(client) => return Ok(client.identity()),
        Lifecycle::Finalized => {
            return Err(trace::fatal(format_args!(
                "{call}: called again after the library was finalized"
            )))
        }
        Lifecycle::Uninit => {}
    }
    let lookup = |name: &str| std::env::var_os(name);
    trace::set_enabled(env::debug_requested(&lookup));
    let refuse = |why: String| trace::fatal(format_args!("{call}: {why}"));
    let timeout = env::timeout(&lookup).map_err(refuse)?;
    let (launch, stale) = launch_from(&lookup);
    if let Some(why) = stale {
        trace::warn(format_args!(
            "{call}: {why} (an outer job's, left in the environment): using the launch \
             PMI_PORT or the PMIx server names"
        ));
    }
    let launch = launch.map_err(refuse)?;
    // One connection, one library: the other PMI library of this process, initialized,
    // owns PMI_FD (or PMI_PORT's PMI_ID); under PMIx the two would share one PMIx client
    // and each put its own key directory under the same keys (libpmi:dir:F).
    if !matches!(launch, Launch::Singleton) {
        if let Some(sibling) = sibling::initialized_sibling(api) {
            return Err(refuse(format!(
                "{sibling} is initialized in this process and owns its connection to the \
                 process manager; one process can use one PMI library"
            )));
        }
    }
    let mut client = Client::new(backends::start(api, launch, timeout)?, api);
    client.adopt_connection().map_err(refuse)?;
    let id = client.identity();
    state::set_ready(id.rank, id.size, client.maxes(), client.raw_fd());
    *state = Lifecycle::Ready(Box::new(client));
    Ok(id)
}

/// Have `state` told when this process forks: a child's PMI calls must not touch the
/// parent's connection or wait for a lock the parent held at the fork. Once per process;
/// a second caller waits until the handler is registered. (Three states in an atomic
/// rather than `std::sync::Once`: one code page fewer to fault in during a cold
/// `PMI_Init`.)
fn watch_forks() {
    use std::sync::atomic::{AtomicU8, Ordering};
    const NOT_YET: u8 = 0;
    const REGISTERING: u8 = 1;
    const DONE: u8 = 2;
    static WATCH: AtomicU8 = AtomicU8::new(NOT_YET);
    extern "C" fn in_child() {
        state::mark_forked();
    }
    match WATCH.compare_exchange(NOT_YET, REGISTERING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            // SAFETY: registers a child handler that only does an atomic store
            // (async-signal-safe, as a handler run after fork in a threaded program must
            // be).
            unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
            WATCH.store(DONE, Ordering::Release);
        }
        Err(_) => {
            while WATCH.load(Ordering::Acquire) != DONE {
                std::thread::yield_now();
            }
        }
    }
}

/// Between a successful init and finalize (never in a forked child).
///
/// Without the lock: a thread asking never waits behind another thread's barrier, and
/// the other PMI library of this process may ask while this one initializes (`sibling`)
/// without the two waiting for each other.
pub fn initialized() -> PmiResult<bool> {
    Ok(!state::forked() && state::ready())
}

/// Leave the job and close the connection; afterwards calls get `PMI_ERR_INIT`.
pub fn finalize() -> PmiResult<()> {
    let mut state = state::lock()?;
    match std::mem::replace(&mut *state, Lifecycle::Finalized) {
        Lifecycle::Ready(mut client) => {
            state::clear_ready();
            // The abort fd stays until the server acknowledged: an abort from another
            // thread meanwhile still reaches the server. It is cleared before the
            // connection is closed, so the number is never stale.
            let result = client.finalize();
            state::clear_abort_fd();
            drop(client);
            result
        }
        other => {
            *state = other;
            Err(PmiError::Init)
        }
    }
}

/// The launch `PMI_Init` takes from the environment `lookup` reads, and why `PMI_FD` was
/// set aside, when it was. A `PMI_FD` that is not open beside another launch's variables
/// (PMI_PORT, a PMIx server's; `env::names_another_launch` says when) is an outer job's:
/// `prterun` or `mpiexec -pmi-port` run inside a Slurm step that set PMI_FD, whose fd
/// the launcher closed; or its number was taken since by another file (not a launcher's
/// socket). The other launch, then. (Not said under PMI_SINGLETON=1, which wins over
/// both.) The environment is asked first: under a launcher that names only PMI_FD, no
/// system call is made for this. `pmi-probe` reports the launch from here too.
pub fn launch_from(
    lookup: &dyn Fn(&str) -> Option<OsString>,
) -> (Result<Launch, String>, Option<String>) {
    let stale = env::pmi_fd(lookup)
        .filter(|_| env::names_another_launch(lookup) && !env::singleton_requested(lookup))
        .and_then(|fd| {
            if !conn::fd_is_open(fd) {
                Some(format!("PMI_FD={fd} is not open"))
            } else {
                conn::check_pmi_fd(fd).err()
            }
        });
    match stale {
        Some(why) => {
            let without_fd = |name: &str| (name != "PMI_FD").then(|| lookup(name)).flatten();
            (env::launch(&without_fd), Some(why))
        }
        None => (env::launch(lookup), None),
    }
}

/// Tell the process manager to abort the job (`whole_job`) or this process: `line` on
/// the wire's socket (written without allocating or waiting for a lock: abort is called
/// from signal handlers; it says which), or `PMIx_Abort` under PMIx. `message` is
/// printed on stderr first. Nothing is sent from a forked child. The caller exits
/// afterwards.
pub fn abort(code: i32, message: &[u8], raw_message: *const c_char, line: &[u8], whole_job: bool) {
    if !message.is_empty() {
        trace::raw_line(message);
    }
    if state::forked() {
        return;
    }
    // The lock may be held by a thread blocked in a barrier: then use the fd directly.
    let fd = match state::try_lock() {
        Some(state) => match &*state {
            Lifecycle::Ready(client) => client.raw_fd(),
            _ => -1,
        },
        None => state::abort_fd(),
    };
    if fd >= 0 {
        Conn::send_abort(fd, line);
    } else {
        pmix_lib::abort(code, raw_message, whole_job);
    }
}
