//! The PMIx client library, loaded at run time (`loader`; no link-time dependency), and
//! the only place that calls it. The `unsafe` of the PMIx backend is here and in
//! `watch` (the sockets a bounded call shuts).
//!
//! Only what the backend uses is declared: five structures' layouts (checked against
//! the real `pmix.h` by `core/tests/pmix_abi.rs`) and seventeen functions. Values are loaded
//! and unloaded with PMIx's own `PMIx_Value_load`/`PMIx_Value_unload`/`PMIx_Info_load`,
//! so the union inside `pmix_value_t` is never read or written here; only its `type`
//! field is, to know what an answer holds before unloading it.

use std::ffi::{c_char, c_int, c_void, CStr, OsStr, OsString};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

use super::watch;
use crate::loader;

use super::abi::*;

/// The loaded library: where it came from, and its functions.
pub struct Lib {
    pub path: String,
    fns: Fns,
}

/// Loaded once per process; never unloaded (the library runs a progress thread).
static LIB: OnceLock<Lib> = OnceLock::new();
/// Between a successful `PMIx_Init` and `PMIx_Finalize`: `PMI_Abort` may call it.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// This process, from `PMIx_Init`: what `PMI2_Abort(0, ...)` aborts.
static ME: OnceLock<Proc> = OnceLock::new();
/// How long `PMIx_Abort` may wait for the server, in seconds: `PMI_TIMEOUT`, else 10.
static ABORT_WAIT: AtomicU32 = AtomicU32::new(10);

/// Bound the wait of an abort by `PMI_TIMEOUT` (unset or 0: the default 10 s).
pub fn set_abort_wait(timeout: Option<u32>) {
    if let Some(seconds) = timeout.filter(|&s| s > 0) {
        ABORT_WAIT.store(seconds, Ordering::SeqCst);
    }
}

/// The PMIx client library this process loaded, and its version, if it did.
pub fn loaded() -> Option<(&'static str, String)> {
    LIB.get().map(|lib| (lib.path.as_str(), lib.version()))
}

/// Load the first candidate that opens and has every function; the error lists each
/// candidate with why it failed.
pub fn load(candidates: &[OsString]) -> Result<&'static Lib, String> {
    if let Some(lib) = LIB.get() {
        return Ok(lib);
    }
    let mut tried = Vec::new();
    for candidate in candidates {
        match open(candidate) {
            Ok(lib) => return Ok(LIB.get_or_init(|| lib)),
            Err(why) => tried.push(format!("{} ({why})", candidate.to_string_lossy())),
        }
    }
    Err(tried.join("; "))
}

fn open(path: &OsStr) -> Result<Lib, String> {
    let handle = loader::open(path)?;
    macro_rules! resolve {
        ($name:literal, $ty:ty) => {{
            let Some(sym) = handle.symbol(concat!($name, "\0")) else {
                // Not this one (an older PMIx): unloaded, so that the next candidate's
                // plugins do not bind to it.
                handle.close();
                return Err(format!("no {}", $name));
            };
            // SAFETY: the symbol is the function `pmix.h` declares under this name, whose
            // C prototype the field's type spells out.
            unsafe { std::mem::transmute::<*mut c_void, $ty>(sym) }
        }};
    }
    let fns = Fns {
        init: resolve!("PMIx_Init", InitFn),
        finalize: resolve!("PMIx_Finalize", FinalizeFn),
        abort: resolve!("PMIx_Abort", AbortFn),
        put: resolve!("PMIx_Put", PutFn),
        commit: resolve!("PMIx_Commit", CommitFn),
        fence: resolve!("PMIx_Fence", FenceFn),
        get: resolve!("PMIx_Get", GetFn),
        publish: resolve!("PMIx_Publish", PublishFn),
        lookup: resolve!("PMIx_Lookup", LookupFn),
        unpublish: resolve!("PMIx_Unpublish", UnpublishFn),
        spawn: resolve!("PMIx_Spawn", SpawnFn),
        value_load: resolve!("PMIx_Value_load", ValueLoadFn),
        value_unload: resolve!("PMIx_Value_unload", ValueUnloadFn),
        value_destruct: resolve!("PMIx_Value_destruct", ValueDestructFn),
        info_load: resolve!("PMIx_Info_load", InfoLoadFn),
        error_string: resolve!("PMIx_Error_string", ErrorStringFn),
        get_version: resolve!("PMIx_Get_version", GetVersionFn),
    };
    Ok(Lib {
        path: path.to_string_lossy().into_owned(),
        fns,
    })
}

/// A C string on the stack from bytes without NUL, up to `N - 1` of them.
fn c_array<const N: usize>(text: &[u8]) -> Option<[c_char; N]> {
    if text.len() >= N || text.contains(&0) {
        return None;
    }
    let mut out = [0 as c_char; N];
    for (slot, &b) in out.iter_mut().zip(text) {
        *slot = b as c_char;
    }
    Some(out)
}

/// A heap C string (for arrays PMIx reads): `None` on a NUL inside.
fn c_string(text: &[u8]) -> Option<std::ffi::CString> {
    std::ffi::CString::new(text).ok()
}

/// A process: namespace and rank.
pub fn proc_of(nspace: &[u8], rank: u32) -> Option<Proc> {
    Some(Proc {
        nspace: c_array(nspace)?,
        rank,
    })
}

impl Proc {
    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn nspace(&self) -> &[u8] {
        // SAFETY: c_char and u8 have the same size and alignment.
        let bytes: &[u8; NSPACE_LEN] = unsafe { &*self.nspace.as_ptr().cast() };
        let end = memchr::memchr(0, bytes).unwrap_or(NSPACE_LEN);
        &bytes[..end]
    }
}

/// An info array PMIx reads; each entry's value is released on drop.
struct Infos<'l> {
    lib: &'l Lib,
    items: Vec<Info>,
}

/// What an info entry carries.
pub enum InfoValue<'a> {
    Bool(bool),
    Int(c_int),
    Str(&'a [u8]),
}

impl<'l> Infos<'l> {
    fn new(lib: &'l Lib) -> Infos<'l> {
        Infos {
            lib,
            items: Vec::new(),
        }
    }

    /// Add `key` = `value`; `None` when a string holds a NUL.
    fn add(&mut self, key: &CStr, value: &InfoValue<'_>) -> Option<()> {
        // SAFETY: an all-zero pmix_info_t is PMIX_INFO_STATIC_INIT's value.
        let mut info: Info = unsafe { std::mem::zeroed() };
        let flag: bool;
        let int: c_int;
        let text;
        let (data, kind): (*const c_void, u16) = match value {
            InfoValue::Bool(b) => {
                flag = *b;
                ((&raw const flag).cast(), BOOL)
            }
            InfoValue::Int(i) => {
                int = *i;
                ((&raw const int).cast(), INT)
            }
            InfoValue::Str(s) => {
                text = c_string(s)?;
                (text.as_ptr().cast(), STRING)
            }
        };
        // SAFETY: `info` is a zeroed pmix_info_t, the key NUL-terminated, `data` points
        // to a value of type `kind` (a string is copied by PMIx).
        unsafe { (self.lib.fns.info_load)(&raw mut info, key.as_ptr(), data, kind) };
        self.items.push(info);
        Some(())
    }

    fn ptr(&self) -> *const Info {
        if self.items.is_empty() {
            std::ptr::null()
        } else {
            self.items.as_ptr()
        }
    }
}

impl Drop for Infos<'_> {
    fn drop(&mut self) {
        for info in &mut self.items {
            // SAFETY: the value was loaded by PMIx_Info_load; destruct frees what it copied.
            unsafe { (self.lib.fns.value_destruct)(&raw mut info.value) };
        }
    }
}

/// A value PMIx returned from `PMIx_Get`, released on drop.
struct Returned<'l> {
    lib: &'l Lib,
    value: *mut Value,
}

impl Drop for Returned<'_> {
    fn drop(&mut self) {
        // SAFETY: `value` came from PMIx_Get (malloc'd by PMIx, as PMIX_VALUE_RELEASE
        // assumes): destruct its contents, then free it.
        unsafe {
            (self.lib.fns.value_destruct)(self.value);
            libc::free(self.value.cast());
        }
    }
}

/// What a get answered.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Answer {
    Text(Vec<u8>),
    Number(i64),
    /// A process id (`PMIX_PARENT_ID`): its namespace and rank.
    Proc(Vec<u8>, u32),
    /// Another type, by its code.
    Other(u16),
}

impl Lib {
    pub fn version(&self) -> String {
        // SAFETY: PMIx_Get_version returns a static NUL-terminated string.
        let v = unsafe { (self.fns.get_version)() };
        if v.is_null() {
            return "?".into();
        }
        // SAFETY: non-NULL, NUL-terminated, static.
        unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
    }

    /// PMIx's name for a status, e.g. `PMIX_ERR_NOT_FOUND`.
    pub fn error_string(&self, status: c_int) -> String {
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string.
        let s = unsafe { (self.fns.error_string)(status) };
        if s.is_null() {
            return format!("status {status}");
        }
        // SAFETY: non-NULL, NUL-terminated, static.
        let name = unsafe { CStr::from_ptr(s) };
        format!("{} ({status})", name.to_string_lossy())
    }

    /// `PMIx_Init`: this process's id. The client uses the data store its server offers
    /// (`PMIX_GDS_MODULE`; Slurm's `ds21` keeps the job's data in shared memory): the
    /// library no longer forces PMIx's `hash`, which cost a 256-rank job under
    /// `srun --mpi=pmix` about twice the time of a native client's (measured).
    pub fn init(&self) -> Result<Proc, c_int> {
        // SAFETY: an all-zero pmix_proc_t is a valid out-parameter.
        let mut me: Proc = unsafe { std::mem::zeroed() };
        // SAFETY: `me` is writable; no info.
        let rc = unsafe { (self.fns.init)(&raw mut me, std::ptr::null_mut(), 0) };
        if rc == SUCCESS {
            let _ = ME.set(me);
            ACTIVE.store(true, Ordering::SeqCst);
            Ok(me)
        } else {
            Err(rc)
        }
    }

    pub fn finalize(&self) -> c_int {
        ACTIVE.store(false, Ordering::SeqCst);
        let rc = watched("PMIx_Finalize", || {
            // SAFETY: no info.
            unsafe { (self.fns.finalize)(std::ptr::null(), 0) }
        });
        watch::stop_calls();
        rc
    }

    /// `PMIx_Get` of `key` for `who`, without asking the server for data this client
    /// does not hold (`PMIX_IMMEDIATE`). `Err(status)` when it fails,
    /// `PMIX_ERR_NOT_FOUND` included.
    pub fn get(&self, who: &Proc, key: &[u8], timeout: Option<u32>) -> Result<Answer, c_int> {
        self.get_with(who, key, true, timeout)
    }

    /// `PMIx_Get` of a key `who` is known to have put: the client asks its server for
    /// the data of a process on another host (which `PMIX_IMMEDIATE` forbids: such a
    /// get is `PMIX_ERR_NOT_FOUND` even after a fence collected the data, measured with
    /// PMIx 4.2.2 and Open MPI 5.0.11's PRRTE across two hosts). Bounded by `timeout`.
    pub fn get_from(&self, who: &Proc, key: &[u8], timeout: Option<u32>) -> Result<Answer, c_int> {
        self.get_with(who, key, false, timeout)
    }

    fn get_with(
        &self,
        who: &Proc,
        key: &[u8],
        immediate: bool,
        timeout: Option<u32>,
    ) -> Result<Answer, c_int> {
        let key: [c_char; KEY_LEN] = c_array(key).ok_or(ERR_BAD_PARAM)?;
        let mut infos = Infos::new(self);
        if immediate {
            infos.add(c"pmix.immediate", &InfoValue::Bool(true));
        }
        add_timeout(&mut infos, timeout);
        let mut value: *mut Value = std::ptr::null_mut();
        let (rc, late) = watch::call("PMIx_Get", || {
            // SAFETY: `who` and `key` are valid and NUL-terminated, `infos` holds its
            // count of entries, `value` is writable.
            unsafe {
                (self.fns.get)(
                    who,
                    key.as_ptr(),
                    infos.ptr(),
                    infos.items.len(),
                    &raw mut value,
                )
            }
        });
        // (Released when this returns, whatever it returns.)
        let returned = (!value.is_null()).then(|| Returned { lib: self, value });
        if late {
            return Err(ERR_TIMEOUT);
        }
        if rc != SUCCESS {
            return Err(rc);
        }
        let Some(returned) = returned else {
            return Err(ERR_BAD_PARAM);
        };
        self.unload(returned.value)
    }

    /// The contents of a value PMIx gave, by its type.
    fn unload(&self, value: *mut Value) -> Result<Answer, c_int> {
        // SAFETY: `value` points to a pmix_value_t PMIx filled; `type` is its first field.
        let kind = unsafe { (*value).kind };
        if kind == STRING {
            let mut data: *mut c_void = std::ptr::null_mut();
            let mut size = 0usize;
            // SAFETY: for a string PMIx allocates a copy into `data` (strdup).
            let rc = unsafe { (self.fns.value_unload)(value, &raw mut data, &raw mut size) };
            if rc != SUCCESS {
                return Err(rc);
            }
            if data.is_null() {
                return Ok(Answer::Text(Vec::new()));
            }
            // SAFETY: a NUL-terminated copy, ours to free.
            let text = unsafe { CStr::from_ptr(data.cast()) }.to_bytes().to_vec();
            // SAFETY: allocated by PMIx with malloc, freed once.
            unsafe { libc::free(data) };
            return Ok(Answer::Text(text));
        }
        if kind == PROC {
            // SAFETY: an all-zero pmix_proc_t is a valid destination.
            let mut id: Proc = unsafe { std::mem::zeroed() };
            let mut data: *mut c_void = (&raw mut id).cast();
            let mut size = 0usize;
            // SAFETY: for a process id PMIx copies one pmix_proc_t into `data`.
            let rc = unsafe { (self.fns.value_unload)(value, &raw mut data, &raw mut size) };
            if rc != SUCCESS {
                return Err(rc);
            }
            return Ok(Answer::Proc(id.nspace().to_vec(), id.rank));
        }
        let Some((width, signed)) = scalar(kind) else {
            return Ok(Answer::Other(kind));
        };
        let mut scratch = [0u64; 2];
        let mut data: *mut c_void = scratch.as_mut_ptr().cast();
        let mut size = 0usize;
        // SAFETY: for a scalar PMIx copies at most 8 bytes into the 16 at `data`.
        let rc = unsafe { (self.fns.value_unload)(value, &raw mut data, &raw mut size) };
        if rc != SUCCESS {
            return Err(rc);
        }
        let bytes = scratch[0].to_ne_bytes();
        let mut raw = [0u8; 8];
        raw[..width].copy_from_slice(&bytes[..width]);
        let unsigned = u64::from_ne_bytes(raw);
        let number = if signed {
            let shift = 64 - 8 * width as u32;
            ((unsigned << shift) as i64) >> shift
        } else {
            unsigned as i64
        };
        Ok(Answer::Number(number))
    }

    /// `PMIx_Put` of a string in the global scope.
    pub fn put(&self, key: &[u8], value: &[u8]) -> c_int {
        self.put_scoped(SCOPE_GLOBAL, key, value)
    }

    /// `PMIx_Put` of a string for the processes on this node only.
    pub fn put_local(&self, key: &[u8], value: &[u8]) -> c_int {
        self.put_scoped(SCOPE_LOCAL, key, value)
    }

    fn put_scoped(&self, scope: u8, key: &[u8], value: &[u8]) -> c_int {
        let (Some(key), Some(text)) = (c_array::<KEY_LEN>(key), c_string(value)) else {
            return ERR_BAD_PARAM;
        };
        // SAFETY: an all-zero pmix_value_t is PMIX_VALUE_STATIC_INIT's value.
        let mut v: Value = unsafe { std::mem::zeroed() };
        // SAFETY: loads a copy of the NUL-terminated string.
        unsafe { (self.fns.value_load)(&raw mut v, text.as_ptr().cast(), STRING) };
        // SAFETY: `key` is NUL-terminated, `v` a loaded value; PMIx copies both.
        let rc = unsafe { (self.fns.put)(scope, key.as_ptr(), &raw mut v) };
        // SAFETY: frees the copy PMIx_Value_load made.
        unsafe { (self.fns.value_destruct)(&raw mut v) };
        rc
    }

    /// `PMIx_Commit`, which waits for the progress thread (4.2.2 waited for ever with its
    /// server stopped: measured).
    pub fn commit(&self) -> c_int {
        watched("PMIx_Commit", || {
            // SAFETY: no arguments.
            unsafe { (self.fns.commit)() }
        })
    }

    /// `PMIx_Fence` over the whole namespace, with `collect`ing every process's data.
    pub fn fence(&self, collect: bool, timeout: Option<u32>) -> c_int {
        self.fence_of(&[], collect, timeout)
    }

    /// `PMIx_Fence` over `procs` (none: this whole namespace), collecting their data when
    /// `collect`.
    pub fn fence_of(&self, procs: &[Proc], collect: bool, timeout: Option<u32>) -> c_int {
        let mut infos = Infos::new(self);
        if collect {
            infos.add(c"pmix.collect", &InfoValue::Bool(true));
        }
        add_timeout(&mut infos, timeout);
        let (ptr, n) = if procs.is_empty() {
            (std::ptr::null(), 0)
        } else {
            (procs.as_ptr(), procs.len())
        };
        watched("PMIx_Fence", || {
            // SAFETY: `ptr` is NULL (this namespace) or `procs`, `n` pmix_proc_t long, alive
            // during the call; `infos` holds its count of entries.
            unsafe { (self.fns.fence)(ptr, n, infos.ptr(), infos.items.len()) }
        })
    }

    /// `PMIx_Publish` of `service` = `port` (strings).
    pub fn publish(&self, service: &[u8], port: &[u8]) -> c_int {
        let Some(key) = c_string(service).filter(|k| k.as_bytes().len() < KEY_LEN) else {
            return ERR_BAD_PARAM;
        };
        let mut infos = Infos::new(self);
        if infos.add(&key, &InfoValue::Str(port)).is_none() {
            return ERR_BAD_PARAM;
        }
        watched("PMIx_Publish", || {
            // SAFETY: `infos` holds its count of entries.
            unsafe { (self.fns.publish)(infos.ptr(), infos.items.len()) }
        })
    }

    /// `PMIx_Lookup` of `service`, without waiting for it to be published.
    pub fn lookup(&self, service: &[u8]) -> Result<Answer, c_int> {
        let key: [c_char; KEY_LEN] = c_array(service).ok_or(ERR_BAD_PARAM)?;
        // SAFETY: an all-zero pmix_pdata_t is PMIX_LOOKUP_STATIC_INIT's value.
        let mut data: Pdata = unsafe { std::mem::zeroed() };
        data.key = key;
        let (rc, late) = watch::call("PMIx_Lookup", || {
            // SAFETY: one writable pdata with its key set; no info.
            unsafe { (self.fns.lookup)(&raw mut data, 1, std::ptr::null(), 0) }
        });
        let answer = if late {
            Err(ERR_TIMEOUT)
        } else if rc == SUCCESS {
            self.unload(&raw mut data.value)
        } else {
            Err(rc)
        };
        // SAFETY: frees what PMIx_Lookup put in the value (nothing when it failed).
        unsafe { (self.fns.value_destruct)(&raw mut data.value) };
        answer
    }

    /// `PMIx_Unpublish` of `service`.
    pub fn unpublish(&self, service: &[u8]) -> c_int {
        let Some(key) = c_string(service) else {
            return ERR_BAD_PARAM;
        };
        let mut keys = [key.as_ptr().cast_mut(), std::ptr::null_mut()];
        watched("PMIx_Unpublish", || {
            // SAFETY: a NULL-terminated array of NUL-terminated keys, which PMIx only
            // reads.
            unsafe { (self.fns.unpublish)(keys.as_mut_ptr(), std::ptr::null(), 0) }
        })
    }

    /// `PMIx_Spawn` of `apps`; the children's namespace on success.
    pub fn spawn(&self, apps: &[AppSpec<'_>]) -> Result<Vec<u8>, c_int> {
        // Everything PMIx reads stays alive in these until the call returns.
        let mut strings: Vec<Vec<std::ffi::CString>> = Vec::new();
        let mut arrays: Vec<Vec<*mut c_char>> = Vec::new();
        let mut infos: Vec<Infos<'_>> = Vec::new();
        let mut c_apps = Vec::with_capacity(apps.len());
        for app in apps {
            let strs = |list: &[Vec<u8>]| -> Option<Vec<std::ffi::CString>> {
                list.iter().map(|s| c_string(s)).collect()
            };
            let argv = strs(&app.argv).ok_or(ERR_BAD_PARAM)?;
            let env = strs(&app.env).ok_or(ERR_BAD_PARAM)?;
            let cmd = c_string(app.cmd).ok_or(ERR_BAD_PARAM)?;
            let cwd = app
                .cwd
                .map(c_string)
                .map(|c| c.ok_or(ERR_BAD_PARAM))
                .transpose()?;
            let mut app_infos = Infos::new(self);
            for (key, value) in &app.info {
                app_infos
                    .add(key, &InfoValue::Str(value))
                    .ok_or(ERR_BAD_PARAM)?;
            }
            let ptrs = |list: &[std::ffi::CString]| -> Vec<*mut c_char> {
                list.iter()
                    .map(|s| s.as_ptr().cast_mut())
                    .chain(std::iter::once(std::ptr::null_mut()))
                    .collect()
            };
            let mut argv_ptrs = ptrs(&argv);
            let mut env_ptrs = ptrs(&env);
            c_apps.push(App {
                cmd: cmd.as_ptr().cast_mut(),
                argv: argv_ptrs.as_mut_ptr(),
                env: env_ptrs.as_mut_ptr(),
                cwd: cwd
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |c| c.as_ptr().cast_mut()),
                maxprocs: c_int::try_from(app.maxprocs).map_err(|_| ERR_BAD_PARAM)?,
                info: app_infos.ptr().cast_mut(),
                ninfo: app_infos.items.len(),
            });
            arrays.push(argv_ptrs);
            arrays.push(env_ptrs);
            strings.push(argv);
            strings.push(env);
            strings.push(vec![cmd]);
            strings.extend(cwd.map(|c| vec![c]));
            infos.push(app_infos);
        }
        let mut nspace = [0 as c_char; NSPACE_LEN];
        let rc = watched("PMIx_Spawn", || {
            // SAFETY: `c_apps` points into `strings`, `arrays` and `infos`, all alive
            // until the call returns; `nspace` has room for PMIX_MAX_NSLEN + 1 bytes.
            unsafe {
                (self.fns.spawn)(
                    std::ptr::null(),
                    0,
                    c_apps.as_ptr(),
                    c_apps.len(),
                    nspace.as_mut_ptr(),
                )
            }
        });
        drop(c_apps);
        if rc != SUCCESS {
            return Err(rc);
        }
        let child = Proc { nspace, rank: 0 };
        Ok(child.nspace().to_vec())
    }
}

/// One application of a spawn, as the backend builds it.
pub struct AppSpec<'a> {
    pub cmd: &'a [u8],
    /// The full argument vector, the command first.
    pub argv: Vec<Vec<u8>>,
    /// `NAME=value` entries added to the children's environment.
    pub env: Vec<Vec<u8>>,
    pub cwd: Option<&'a [u8]>,
    pub maxprocs: u32,
    /// PMIx attribute names with string values.
    pub info: Vec<(&'static CStr, &'a [u8])>,
}

/// A call that waits for the server, under `PMI_TIMEOUT`'s watch (`pmix_watch`): its
/// status, or `PMIX_ERR_TIMEOUT` when the bound passed first.
fn watched(what: &'static str, call: impl FnOnce() -> c_int) -> c_int {
    match watch::call(what, call) {
        (_, true) => ERR_TIMEOUT,
        (rc, false) => rc,
    }
}

fn add_timeout(infos: &mut Infos<'_>, timeout: Option<u32>) {
    if let Some(seconds) = timeout {
        let seconds = c_int::try_from(seconds).unwrap_or(c_int::MAX);
        infos.add(c"pmix.timeout", &InfoValue::Int(seconds));
    }
}

/// `PMIx_Abort` of the whole job (`whole_job`), or of this process alone (PMI-2's
/// `PMI2_Abort(0, ...)`), when PMIx is initialized; false when it is not. Its wait for
/// the server is bounded: after `PMI_TIMEOUT` seconds (else 10) the process ends by
/// `SIGALRM`, its action reset to the default first (only async-signal-safe calls here
/// before `PMIx_Abort` itself); the bound is lifted when `PMIx_Abort` returns.
pub fn abort(code: c_int, message: *const c_char, whole_job: bool) -> bool {
    let Some(lib) = LIB.get() else {
        return false;
    };
    if !ACTIVE.load(Ordering::SeqCst) {
        return false;
    }
    let message = if message.is_null() {
        c"".as_ptr()
    } else {
        message
    };
    let mut me = ME.get().copied();
    let (procs, nprocs) = match (&mut me, whole_job) {
        (Some(me), false) => (std::ptr::from_mut(me), 1),
        _ => (std::ptr::null_mut(), 0),
    };
    // SAFETY: sigaction, sigemptyset, sigaddset, pthread_sigmask and alarm are
    // async-signal-safe; every struct is a valid, initialised local.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        let mut alarm: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut alarm);
        libc::sigaddset(&mut alarm, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &alarm, std::ptr::null_mut());
        libc::alarm(ABORT_WAIT.load(Ordering::SeqCst));
    }
    // SAFETY: `message` is NUL-terminated (the caller's, or empty); `procs` is NULL (the
    // job) or this process's id, `nprocs` entries.
    unsafe { (lib.fns.abort)(code, message, procs, nprocs) };
    // Answered in time: the bound is off, so that the exit that follows (its handlers
    // may take a while) ends with the code asked for, not with SIGALRM.
    // SAFETY: alarm is async-signal-safe and takes no pointer.
    unsafe { libc::alarm(0) };
    true
}
