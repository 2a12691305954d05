//! `libpmi2.so.0`: the PMI-2 API (MPICH's `pmi2.h`, as Slurm's `libpmi2.so.0` exports it:
//! 21 `PMI2_*` functions and Slurm's `PMIX_Ring`), over the same core as `libpmi.so.0`:
//! the PMI-2 wire protocol on `PMI_FD`/`PMI_PORT`, the PMIx backend under a PMIx server,
//! or a singleton.
//!
//! The C caller's contract, for every export:
//! - the return value is a `PMI2_*` code (`PMI2_Initialized` answers 0 or 1);
//!   outputs are written only on success, never past the length the caller gave, and
//!   nothing is truncated silently: a value that does not fit is
//!   `PMI2_ERR_INVALID_LENGTH` with nothing written (`PMI2_KVS_Get` also reports the
//!   length needed, negated, in `*vallen`);
//! - NULL pointers are `PMI2_ERR_INVALID_ARG`; calls before `PMI2_Init` or after
//!   `PMI2_Finalize` get `PMI2_ERR_INIT`;
//! - keys are 1 to 63 bytes, values at most 1023 (`PMI2_MAX_KEYLEN`, `PMI2_MAX_VALLEN`,
//!   NUL included), checked before anything is sent; a `;` is doubled on the wire;
//! - every call is safe from any thread; no panic unwinds into C; `SIGPIPE` is never
//!   raised.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
// C names as the reference header spells them.
#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

use std::fmt::Write as _;

use libc::{c_char, c_int, c_void};

use pmi::backend::{wire2::abort_frame, Api};
use pmi::error::{PmiError, PmiResult};
use pmi::ffi::{self, show};
use pmi::state;
use pmi::wire::SpawnCommand;
use pmi::{session, trace};

/// Operation completed successfully.
pub const PMI2_SUCCESS: c_int = 0;
/// Operation failed.
pub const PMI2_FAIL: c_int = -1;
/// PMI not initialized.
pub const PMI2_ERR_INIT: c_int = 1;
/// Input buffer not large enough.
pub const PMI2_ERR_NOMEM: c_int = 2;
/// Invalid argument.
pub const PMI2_ERR_INVALID_ARG: c_int = 3;
/// Invalid key argument.
pub const PMI2_ERR_INVALID_KEY: c_int = 4;
/// Invalid key length argument.
pub const PMI2_ERR_INVALID_KEY_LENGTH: c_int = 5;
/// Invalid val argument.
pub const PMI2_ERR_INVALID_VAL: c_int = 6;
/// Invalid val length argument.
pub const PMI2_ERR_INVALID_VAL_LENGTH: c_int = 7;
/// Invalid length argument.
pub const PMI2_ERR_INVALID_LENGTH: c_int = 8;
/// Invalid number of arguments.
pub const PMI2_ERR_INVALID_NUM_ARGS: c_int = 9;
/// Invalid args argument.
pub const PMI2_ERR_INVALID_ARGS: c_int = 10;
/// Invalid num_parsed length argument.
pub const PMI2_ERR_INVALID_NUM_PARSED: c_int = 11;
/// Invalid keyvalp argument.
pub const PMI2_ERR_INVALID_KEYVALP: c_int = 12;
/// Invalid size argument.
pub const PMI2_ERR_INVALID_SIZE: c_int = 13;
/// Other unspecified error.
pub const PMI2_ERR_OTHER: c_int = 14;

/// The longest key, NUL included.
pub const PMI2_MAX_KEYLEN: c_int = 64;
/// The longest value, NUL included.
pub const PMI2_MAX_VALLEN: c_int = 1024;
/// The longest attribute value, NUL included.
pub const PMI2_MAX_ATTRVALUE: c_int = 1024;
/// "No hint" for `PMI2_KVS_Get`'s `src_pmi_id`.
pub const PMI2_ID_NULL: c_int = -1;

/// An info entry, as Slurm's and MPICH's `pmi2.h` lay it out (MPICH's `MPIR_Info` has
/// the same fields); spawn reads `key` and `value` of each.
#[repr(C)]
pub struct MPID_Info {
    pub handle: c_int,
    pub pobj_mutex: c_int,
    pub ref_count: c_int,
    pub next: *mut MPID_Info,
    pub key: *mut c_char,
    pub value: *mut c_char,
}

/// The connection structure of `PMI2_Job_Connect`.
#[repr(C)]
pub struct PMI2_Connect_comm_t {
    pub read:
        Option<unsafe extern "C" fn(buf: *mut c_void, maxlen: c_int, ctx: *mut c_void) -> c_int>,
    pub write:
        Option<unsafe extern "C" fn(buf: *const c_void, len: c_int, ctx: *mut c_void) -> c_int>,
    pub ctx: *mut c_void,
    pub isMaster: c_int,
}

/// Run `body` on the initialized client.
fn with_client<T>(f: impl FnOnce(&mut pmi::client::Client) -> PmiResult<T>) -> PmiResult<T> {
    state::with_client(f)
}

/// Copy `text` and its NUL into `(buf, len)`; `PMI2_ERR_INVALID_LENGTH` with nothing
/// written when it does not fit.
///
/// # Safety
/// `buf` is NULL or points to `len` writable bytes.
unsafe fn write_str(buf: *mut c_char, len: c_int, text: &[u8]) -> PmiResult<()> {
    // SAFETY: the caller's contract.
    let out = unsafe { ffi::out_str(buf, len) }?;
    out.write(text)
}

/// Initialize: connect to the process manager (or PMIx, or a singleton) and report this
/// process's place in the job. Calling it again after success answers the same without
/// traffic.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if a pointer is NULL; `PMI2_FAIL` if no
/// process manager accepts this process (one line on stderr says why).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Init(
    spawned: *mut c_int,
    size: *mut c_int,
    rank: *mut c_int,
    appnum: *mut c_int,
) -> c_int {
    ffi::guard(
        |f| write!(f, "PMI2_Init({spawned:p}, {size:p}, {rank:p}, {appnum:p})"),
        || {
            // SAFETY: the caller passes NULL or writable ints.
            let (s, z, r, a) = unsafe {
                (
                    ffi::out(spawned)?,
                    ffi::out(size)?,
                    ffi::out(rank)?,
                    ffi::out(appnum)?,
                )
            };
            let id = session::init(Api::Pmi2, "PMI2_Init")?;
            let app = with_client(|c| c.appnum())?;
            s.set(c_int::from(id.spawned));
            z.set(id.size);
            r.set(id.rank);
            a.set(app);
            Ok(())
        },
    )
}

/// Leave the job (`finalize`, wait for the answer) and close the connection.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the server
/// did not acknowledge (the library is finalized all the same).
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_Finalize() -> c_int {
    ffi::guard(|f| f.write_str("PMI2_Finalize()"), session::finalize)
}

/// 1 between a successful `PMI2_Init` and `PMI2_Finalize`, else 0. No traffic.
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_Initialized() -> c_int {
    std::panic::catch_unwind(|| c_int::from(session::initialized().unwrap_or(false))).unwrap_or(0)
}

/// Abort: print `msg` (NULL allowed) on stderr, tell the process manager to abort the
/// whole job (`flag` nonzero) or this process (`isworld=FALSE`), and exit with status 1.
/// Never returns; works before `PMI2_Init` and while another thread is in a call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Abort(flag: c_int, msg: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    let message = unsafe { ffi::bytes_in(msg) }.unwrap_or_default();
    trace::line(format_args!(
        "PMI2_Abort({flag}, \"{}\")",
        message[..message.len().min(256)].escape_ascii()
    ));
    let _ = std::panic::catch_unwind(|| {
        let mut buf = [0u8; 1024];
        let frame = abort_frame(&mut buf, flag != 0, message);
        session::abort(1, message, msg, frame);
    });
    std::process::exit(1)
}

/// Spawn `count` commands as a new job: `cmds[i]` with `argcs[i]` arguments
/// `argvs[i][0..]`, `maxprocs[i]` processes, `info_keyval_sizes[i]` info entries in the
/// array `info_keyval_vectors[i]`; the `preput_keyval_size` entries
/// `*preput_keyval_vector[j]` are put in the new job's key-value space. The new job's
/// id goes to `jobId` (`jobIdSize` bytes) when the server gives one (Hydra 4.0.2, Slurm,
/// PMIx; MPICH 5.0.2's Hydra does not: "" then, and "" with a trace line when it does
/// not fit), and a code per process to `errors`.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_NUM_ARGS`/`_ARGS`/`_ARG`/`_SIZE`/
/// `_KEY`/`_VAL` for bad arguments (nothing sent); `PMI2_FAIL` if the server refuses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_Spawn(
    count: c_int,
    cmds: *mut *const c_char,
    argcs: *mut c_int,
    argvs: *mut *mut *const c_char,
    maxprocs: *const c_int,
    info_keyval_sizes: *const c_int,
    info_keyval_vectors: *mut *const MPID_Info,
    preput_keyval_size: c_int,
    preput_keyval_vector: *mut *const MPID_Info,
    jobId: *mut c_char,
    jobIdSize: c_int,
    errors: *mut c_int,
) -> c_int {
    ffi::guard(
        |f| {
            write!(f, "PMI2_Job_Spawn({count}, {cmds:p}, {argcs:p}, {argvs:p}, {maxprocs:p}, {info_keyval_sizes:p}, {info_keyval_vectors:p}, {preput_keyval_size}, {preput_keyval_vector:p}, {jobId:p}, {jobIdSize}, {errors:p})")
        },
        || {
            let n = usize::try_from(count)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or(PmiError::InvalidNumArgs)?;
            if cmds.is_null() || maxprocs.is_null() || errors.is_null() {
                return Err(PmiError::InvalidArg);
            }
            // SAFETY: non-NULL, and the caller promises `count` elements.
            let (cmds, maxprocs) = unsafe {
                (
                    std::slice::from_raw_parts(cmds.cast_const(), n),
                    std::slice::from_raw_parts(maxprocs, n),
                )
            };
            let mut commands = Vec::with_capacity(n);
            let mut total = 0usize;
            for i in 0..n {
                // SAFETY: each command is NULL or a NUL-terminated string.
                let execname =
                    unsafe { ffi::bytes_in(cmds[i]) }.map_err(|_| PmiError::InvalidArgs)?;
                let procs = u32::try_from(maxprocs[i])
                    .ok()
                    .filter(|&p| p >= 1)
                    .ok_or(PmiError::InvalidSize)?;
                total = total
                    .checked_add(procs as usize)
                    .ok_or(PmiError::InvalidSize)?;
                // SAFETY: `argcs`/`argvs` are NULL or hold `count` elements, argvs[i]
                // holding argcs[i] strings.
                let args = unsafe { args_of(argcs.cast_const(), argvs.cast_const(), i) }?;
                // SAFETY: the info arrays are NULL or hold `count` elements, each an
                // array of its size of entries.
                let info =
                    unsafe { info_of(info_keyval_sizes, info_keyval_vectors.cast_const(), i) }?;
                commands.push(SpawnCommand {
                    execname,
                    args,
                    maxprocs: procs,
                    info,
                });
            }
            // SAFETY: the caller promises `preput_keyval_size` pointers to entries.
            let preput =
                unsafe { preput_of(preput_keyval_vector.cast_const(), preput_keyval_size) }?;
            // SAFETY: non-NULL, and the caller promises a slot per process requested.
            let errors = unsafe { std::slice::from_raw_parts_mut(errors, total) };
            let id = with_client(|c| c.spawn(&commands, &preput, errors))?.unwrap_or_default();
            if !jobId.is_null() && jobIdSize > 0 {
                // The processes are started: an id too long for the buffer is not an
                // error of the spawn; "" then, and a trace line says so.
                let fits = id.len() < usize::try_from(jobIdSize).unwrap_or(0);
                if !fits {
                    trace::line(format_args!(
                        "PMI2_Job_Spawn: the new job's id \"{}\" does not fit in {jobIdSize} bytes: \"\" given",
                        id.escape_ascii()
                    ));
                }
                // SAFETY: `jobId` has `jobIdSize` writable bytes.
                unsafe { write_str(jobId, jobIdSize, if fits { &id } else { b"" }) }?;
            }
            Ok(())
        },
    )
}

/// # Safety
/// As for `PMI2_Job_Spawn`'s `argcs` and `argvs`.
unsafe fn args_of<'a>(
    argcs: *const c_int,
    argvs: *const *mut *const c_char,
    i: usize,
) -> PmiResult<Vec<&'a [u8]>> {
    if argcs.is_null() || argvs.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: both hold more than `i` elements.
    let (argc, argv) = unsafe { (*argcs.add(i), *argvs.add(i)) };
    let argc = usize::try_from(argc).map_err(|_| PmiError::InvalidArgs)?;
    if argc == 0 {
        return Ok(Vec::new());
    }
    if argv.is_null() {
        return Err(PmiError::InvalidArgs);
    }
    (0..argc)
        // SAFETY: `argv` holds `argc` NUL-terminated strings.
        .map(|j| unsafe { ffi::bytes_in(*argv.add(j)) }.map_err(|_| PmiError::InvalidArgs))
        .collect()
}

/// # Safety
/// As for `PMI2_Job_Spawn`'s info arrays.
unsafe fn info_of<'a>(
    sizes: *const c_int,
    vectors: *const *const MPID_Info,
    i: usize,
) -> PmiResult<Vec<(&'a [u8], &'a [u8])>> {
    if sizes.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: `sizes` holds more than `i` elements.
    let n = usize::try_from(unsafe { *sizes.add(i) }).map_err(|_| PmiError::InvalidSize)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if vectors.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: `vectors` holds more than `i` elements.
    let entries = unsafe { *vectors.add(i) };
    if entries.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: `entries` is an array of `n` entries.
    let entries = unsafe { std::slice::from_raw_parts(entries, n) };
    entries.iter().map(pair).collect()
}

/// # Safety
/// `vector` is NULL (with `n` 0) or holds `n` pointers to entries.
unsafe fn preput_of<'a>(
    vector: *const *const MPID_Info,
    n: c_int,
) -> PmiResult<Vec<(&'a [u8], &'a [u8])>> {
    let n = usize::try_from(n).map_err(|_| PmiError::InvalidSize)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if vector.is_null() {
        return Err(PmiError::InvalidArg);
    }
    (0..n)
        .map(|j| {
            // SAFETY: `vector` holds `n` pointers, each NULL or to one entry.
            let entry = unsafe { (*vector.add(j)).as_ref() }.ok_or(PmiError::InvalidArg)?;
            pair(entry)
        })
        .collect()
}

fn pair<'a>(entry: &MPID_Info) -> PmiResult<(&'a [u8], &'a [u8])> {
    // SAFETY: an entry's key and value are NULL or NUL-terminated strings that outlive
    // the call.
    unsafe {
        Ok((
            ffi::bytes_in(entry.key).map_err(|_| PmiError::InvalidKey)?,
            ffi::bytes_in(entry.value).map_err(|_| PmiError::InvalidVal)?,
        ))
    }
}

/// Copy this job's id and its NUL into `jobid` (`jobid_size` bytes).
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if `jobid` is NULL;
/// `PMI2_ERR_INVALID_LENGTH` if it does not fit (nothing written); `PMI2_ERR_INIT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_GetId(jobid: *mut c_char, jobid_size: c_int) -> c_int {
    ffi::guard(
        |f| write!(f, "PMI2_Job_GetId({jobid:p}, {jobid_size})"),
        || {
            // SAFETY: the caller passes NULL or `jobid_size` writable bytes.
            let out = unsafe { ffi::out_str(jobid, jobid_size) }?;
            with_client(|c| out.write(c.kvsname()?))
        },
    )
}

/// This process's rank in the job. No traffic.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_GetRank(rank: *mut c_int) -> c_int {
    ffi::guard(
        |f| write!(f, "PMI2_Job_GetRank({rank:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(rank) }?;
            out.set(state::rank_and_size()?.0);
            Ok(())
        },
    )
}

/// The number of this job's processes on this node (from `PMI_process_mapping`, or the
/// PMIx server's local peers).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetSize(size: *mut c_int) -> c_int {
    ffi::guard(
        |f| write!(f, "PMI2_Info_GetSize({size:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(size) }?;
            let n = with_client(|c| c.clique_size())?;
            out.set(c_int::try_from(n).map_err(|_| PmiError::Fail)?);
            Ok(())
        },
    )
}

/// Not supported: `PMI2_FAIL`, one trace line, nothing sent. No server offers
/// `job-connect`: Slurm 22.05's plugin logs "not implemented" and never answers, and
/// MPICH's Hydra ends the job on a command it does not know.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_Connect(
    jobid: *const c_char,
    conn: *mut PMI2_Connect_comm_t,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let s_jobid = unsafe { show(jobid) };
    ffi::guard(
        |f| write!(f, "PMI2_Job_Connect({}, {conn:p})", s_jobid),
        || {
            with_client(|_| Ok(()))?;
            trace::line(format_args!("PMI2_Job_Connect: not supported"));
            Err(PmiError::Fail)
        },
    )
}

/// Not supported, as `PMI2_Job_Connect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_Disconnect(jobid: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let s_jobid = unsafe { show(jobid) };
    ffi::guard(
        |f| write!(f, "PMI2_Job_Disconnect({})", s_jobid),
        || {
            with_client(|_| Ok(()))?;
            trace::line(format_args!("PMI2_Job_Disconnect: not supported"));
            Err(PmiError::Fail)
        },
    )
}

/// Slurm's ring exchange: every process gives `value` and gets its position in the
/// ring (`*rank` of `*ranks`) and its left and right neighbours' values (each at most
/// `maxvalue` bytes with the NUL). A job of one process gets its own value back.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for a NULL pointer;
/// `PMI2_ERR_INVALID_VAL_LENGTH` for a value of `maxvalue` bytes or more;
/// `PMI2_ERR_INVALID_LENGTH` if a neighbour's value does not fit (nothing written);
/// `PMI2_FAIL` where the server has no ring (Hydra; PMIx).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIX_Ring(
    value: *const c_char,
    rank: *mut c_int,
    ranks: *mut c_int,
    left: *mut c_char,
    right: *mut c_char,
    maxvalue: c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let s_value = unsafe { show(value) };
    ffi::guard(
        |f| {
            write!(
                f,
                "PMIX_Ring({}, {rank:p}, {ranks:p}, {left:p}, {right:p}, {maxvalue})",
                s_value
            )
        },
        || {
            // SAFETY: the caller's contract for each pointer.
            let (v, r, n) = unsafe { (ffi::bytes_in(value)?, ffi::out(rank)?, ffi::out(ranks)?) };
            // SAFETY: `left` and `right` are NULL or have `maxvalue` writable bytes.
            let (l, rt) = unsafe {
                (
                    ffi::out_str(left, maxvalue)?,
                    ffi::out_str(right, maxvalue)?,
                )
            };
            if v.len() >= l.capacity() {
                return Err(PmiError::InvalidValLength);
            }
            let (pos, size, lv, rv) = with_client(|c| c.ring(v))?;
            if lv.len() >= l.capacity() || rv.len() >= rt.capacity() {
                return Err(PmiError::InvalidLength);
            }
            l.write(&lv)?;
            rt.write(&rv)?;
            r.set(pos);
            n.set(size);
            Ok(())
        },
    )
}

/// Put `key` = `value` in this job's key-value space; other processes see it after the
/// next `PMI2_KVS_Fence`. A key is put once: again with the same value succeeds, with
/// another value is `PMI2_ERR_INVALID_KEY`.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL; `PMI2_ERR_INVALID_KEY` for an
/// empty key; `PMI2_ERR_INVALID_KEY_LENGTH`/`_VAL_LENGTH` when too long (nothing sent);
/// `PMI2_ERR_INIT`; `PMI2_FAIL` if the server refuses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_KVS_Put(key: *const c_char, value: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let (s_key, s_value) = unsafe { (show(key), show(value)) };
    ffi::guard(
        |f| write!(f, "PMI2_KVS_Put({}, {})", s_key, s_value),
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (key, value) = unsafe { (ffi::bytes_in(key)?, ffi::bytes_in(value)?) };
            with_client(|c| c.put_own(key, value))
        },
    )
}

/// Wait until every process of the job has called it; the puts made before are then
/// visible to all.
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_KVS_Fence() -> c_int {
    ffi::guard(
        |f| f.write_str("PMI2_KVS_Fence()"),
        || with_client(|c| c.fence()),
    )
}

/// The value of `key` in this job's space (`jobid` NULL or this job's id), with
/// `src_pmi_id` as a hint of who put it (`PMI2_ID_NULL`: none). On success the value and
/// its NUL are in `value` and its length (without the NUL) in `*vallen`.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL `key`, `value` or `vallen`, or
/// another job's id; `PMI2_ERR_INVALID_KEY` if no process put it;
/// `PMI2_ERR_INVALID_LENGTH` if it does not fit in `maxvalue` bytes: nothing is written
/// to `value`, and `*vallen` is the length needed, negated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_KVS_Get(
    jobid: *const c_char,
    src_pmi_id: c_int,
    key: *const c_char,
    value: *mut c_char,
    maxvalue: c_int,
    vallen: *mut c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let (s_jobid, s_key) = unsafe { (show(jobid), show(key)) };
    ffi::guard(
        |f| {
            write!(
                f,
                "PMI2_KVS_Get({}, {src_pmi_id}, {}, {value:p}, {maxvalue}, {vallen:p})",
                s_jobid, s_key
            )
        },
        || {
            // SAFETY: `key` is NULL or a NUL-terminated string; `vallen` is NULL or a
            // writable int.
            let (key, len) = unsafe { (ffi::bytes_in(key)?, ffi::out(vallen)?) };
            // SAFETY: `value` is NULL or has `maxvalue` writable bytes.
            let out = unsafe { ffi::out_str(value, maxvalue) }?;
            // SAFETY: `jobid` is NULL or a NUL-terminated string.
            let job = unsafe { ffi::bytes_in(jobid) }.ok();
            let src = (src_pmi_id >= 0).then_some(src_pmi_id);
            with_client(|c| {
                match job.map(|j| c.check_kvsname(j)) {
                    Some(Err(PmiError::InvalidKvs)) => {
                        trace::line(format_args!(
                            "PMI2_KVS_Get: another job's space is not supported"
                        ));
                        return Err(PmiError::InvalidArg);
                    }
                    Some(Err(e)) => return Err(e),
                    _ => {}
                }
                let v = c.get_own(key, src)?;
                let n = c_int::try_from(v.len()).map_err(|_| PmiError::Fail)?;
                if v.len() >= out.capacity() {
                    len.set(-n);
                    return Err(PmiError::InvalidLength);
                }
                out.write(v)?;
                len.set(n);
                Ok(())
            })
        },
    )
}

/// A node attribute: `*found` is 1 and the value (with its NUL, at most `valuelen`
/// bytes) in `value`, or `*found` is 0. With `waitfor` nonzero, wait until some process
/// on the node puts it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetNodeAttr(
    name: *const c_char,
    value: *mut c_char,
    valuelen: c_int,
    found: *mut c_int,
    waitfor: c_int,
) -> c_int {
    // SAFETY: the same contract as this function's.
    unsafe {
        text_attr_call(
            "PMI2_Info_GetNodeAttr",
            Some(waitfor),
            (name, value, valuelen, found),
            |c, name| c.node_attr(name, waitfor != 0),
        )
    }
}

/// The two text-attribute calls: check and convert the arguments, `fetch` the
/// attribute, and write it with `*found`. `waitfor` is only shown in the trace.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `value` is NULL or has `valuelen` writable bytes;
/// `found` is NULL or a writable int.
unsafe fn text_attr_call(
    call: &str,
    waitfor: Option<c_int>,
    (name, value, valuelen, found): (*const c_char, *mut c_char, c_int, *mut c_int),
    fetch: impl FnOnce(&mut pmi::client::Client, &[u8]) -> PmiResult<Option<Vec<u8>>>,
) -> c_int {
    // SAFETY: the caller's contract.
    let s_name = unsafe { show(name) };
    ffi::guard(
        |f| {
            write!(f, "{call}({s_name}, {value:p}, {valuelen}, {found:p}")?;
            match waitfor {
                Some(w) => write!(f, ", {w})"),
                None => f.write_str(")"),
            }
        },
        || {
            // SAFETY: the caller's contract for each pointer.
            let (name, found) = unsafe { (ffi::bytes_in(name)?, ffi::out(found)?) };
            // SAFETY: `value` is NULL or has `valuelen` writable bytes.
            let out = unsafe { ffi::out_str(value, valuelen) }?;
            match with_client(|c| fetch(c, name))? {
                Some(v) => {
                    out.write(&v)?;
                    found.set(1);
                }
                None => found.set(0),
            }
            Ok(())
        },
    )
}

/// An integer array attribute into `array` (`arraylen` slots; `*outlen` filled).
fn int_array(
    got: Option<Vec<u8>>,
    array: &mut [c_int],
    outlen: ffi::Out<'_, c_int>,
    found: ffi::Out<'_, c_int>,
) -> PmiResult<()> {
    let Some(text) = got else {
        found.set(0);
        outlen.set(0);
        return Ok(());
    };
    let numbers: Option<Vec<c_int>> = text
        .split(|&b| b == b',')
        .map(|n| pmi::wire::parse_int(n).and_then(|n| c_int::try_from(n).ok()))
        .collect();
    let numbers = numbers.ok_or_else(|| {
        trace::line(format_args!(
            "not a list of integers: \"{}\"",
            text.escape_ascii()
        ));
        PmiError::Fail
    })?;
    let slots = array
        .get_mut(..numbers.len())
        .ok_or(PmiError::InvalidLength)?;
    slots.copy_from_slice(&numbers);
    outlen.set(numbers.len() as c_int);
    found.set(1);
    Ok(())
}

/// A node attribute that is a list of integers. `localRanksCount` and `localRanks` (the
/// ranks on this node) are answered from the job's layout; other names from the server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetNodeAttrIntArray(
    name: *const c_char,
    array: *mut c_int,
    arraylen: c_int,
    outlen: *mut c_int,
    found: *mut c_int,
) -> c_int {
    // SAFETY: the same contract as this function's.
    unsafe {
        int_array_call(
            "PMI2_Info_GetNodeAttrIntArray",
            (name, array, arraylen, outlen, found),
            |c, name| match name {
                b"localRanksCount" => Ok(Some(c.clique_size()?.to_string().into_bytes())),
                b"localRanks" => {
                    let mut ranks = vec![0; c.clique_size()?];
                    c.clique_into(&mut ranks)?;
                    let mut text = String::new();
                    for (i, r) in ranks.iter().enumerate() {
                        let _ = write!(text, "{}{r}", if i > 0 { "," } else { "" });
                    }
                    Ok(Some(text.into_bytes()))
                }
                _ => c.node_attr(name, false),
            },
        )
    }
}

/// Set a node attribute for the processes on this node.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_PutNodeAttr(name: *const c_char, value: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let (s_name, s_value) = unsafe { (show(name), show(value)) };
    ffi::guard(
        |f| write!(f, "PMI2_Info_PutNodeAttr({}, {})", s_name, s_value),
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (name, value) = unsafe { (ffi::bytes_in(name)?, ffi::bytes_in(value)?) };
            with_client(|c| c.put_node_attr(name, value))
        },
    )
}

/// A job attribute (`PMI_process_mapping`, `universeSize`, ...): `*found` 1 and the
/// value with its NUL in `value` (`valuelen` bytes), or `*found` 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetJobAttr(
    name: *const c_char,
    value: *mut c_char,
    valuelen: c_int,
    found: *mut c_int,
) -> c_int {
    // SAFETY: the same contract as this function's.
    unsafe {
        text_attr_call(
            "PMI2_Info_GetJobAttr",
            None,
            (name, value, valuelen, found),
            |c, name| c.job_attr(name),
        )
    }
}

/// A job attribute that is a list of integers (`universeSize`, ...).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetJobAttrIntArray(
    name: *const c_char,
    array: *mut c_int,
    arraylen: c_int,
    outlen: *mut c_int,
    found: *mut c_int,
) -> c_int {
    // SAFETY: the same contract as this function's.
    unsafe {
        int_array_call(
            "PMI2_Info_GetJobAttrIntArray",
            (name, array, arraylen, outlen, found),
            |c, name| c.job_attr(name),
        )
    }
}

/// The two `...IntArray` calls: check and convert the arguments, `fetch` the attribute's
/// text, and write it as integers.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `array` is NULL or has `arraylen` writable ints;
/// `outlen` and `found` are NULL or writable ints.
unsafe fn int_array_call(
    call: &str,
    (name, array, arraylen, outlen, found): (
        *const c_char,
        *mut c_int,
        c_int,
        *mut c_int,
        *mut c_int,
    ),
    fetch: impl FnOnce(&mut pmi::client::Client, &[u8]) -> PmiResult<Option<Vec<u8>>>,
) -> c_int {
    // SAFETY: the caller's contract.
    let s_name = unsafe { show(name) };
    ffi::guard(
        |f| {
            write!(
                f,
                "{call}({s_name}, {array:p}, {arraylen}, {outlen:p}, {found:p})"
            )
        },
        || {
            // SAFETY: the caller's contract for each pointer.
            let (name, outlen, found) =
                unsafe { (ffi::bytes_in(name)?, ffi::out(outlen)?, ffi::out(found)?) };
            // SAFETY: `array` is NULL or has `arraylen` writable ints.
            let array = unsafe { ffi::out_ints(array, arraylen) }?;
            let got = with_client(|c| fetch(c, name))?;
            int_array(got, array, outlen, found)
        },
    )
}

/// Publish `port` under `service_name` (`info_ptr` is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_publish(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
    port: *const c_char,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let (s_service_name, s_port) = unsafe { (show(service_name), show(port)) };
    ffi::guard(
        |f| {
            write!(
                f,
                "PMI2_Nameserv_publish({}, {info_ptr:p}, {})",
                s_service_name, s_port
            )
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (service, port) = unsafe { (ffi::bytes_in(service_name)?, ffi::bytes_in(port)?) };
            with_client(|c| c.publish_name(service, port))
        },
    )
}

/// The port published under `service_name`, with its NUL, into `port` (`portLen`
/// bytes); `PMI2_FAIL` when nothing is published under it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_lookup(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
    port: *mut c_char,
    portLen: c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let s_service_name = unsafe { show(service_name) };
    ffi::guard(
        |f| {
            write!(
                f,
                "PMI2_Nameserv_lookup({}, {info_ptr:p}, {port:p}, {portLen})",
                s_service_name
            )
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated name, and NULL or `portLen`
            // writable bytes.
            let (service, out) =
                unsafe { (ffi::bytes_in(service_name)?, ffi::out_str(port, portLen)?) };
            with_client(|c| out.write(c.lookup_name(service)?))
        },
    )
}

/// Withdraw what was published under `service_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Nameserv_unpublish(
    service_name: *const c_char,
    info_ptr: *const MPID_Info,
) -> c_int {
    // SAFETY: the caller passes NULL or NUL-terminated strings.
    let s_service_name = unsafe { show(service_name) };
    ffi::guard(
        |f| {
            write!(
                f,
                "PMI2_Nameserv_unpublish({}, {info_ptr:p})",
                s_service_name
            )
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let service = unsafe { ffi::bytes_in(service_name) }?;
            with_client(|c| c.unpublish_name(service))
        },
    )
}
