//! What the job and the node are: `PMI2_Job_GetId`, `_GetRank`, `PMI2_Info_GetSize`, the job
//! and node attributes; `PMI2_Job_Connect`/`_Disconnect` (not supported).

use libc::{c_char, c_int};

use pmi_core::error::{PmiError, PmiResult};
use pmi_core::{ffi, lifecycle, trace};

use crate::api::*;
use crate::codes::guard;

/// Copy this job's id and its NUL into `jobid` (`jobid_size` bytes).
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if `jobid` is NULL;
/// `PMI2_ERR_INVALID_LENGTH` if it does not fit (nothing written); `PMI2_ERR_INIT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_GetId(jobid: *mut c_char, jobid_size: c_int) -> c_int {
    guard(
        |f| write!(f, "PMI2_Job_GetId({jobid:p}, {jobid_size})"),
        || {
            // SAFETY: the caller passes NULL or `jobid_size` writable bytes.
            let out = unsafe { ffi::out_str(jobid, jobid_size) }?;
            with_client(|c| out.write(c.kvsname()?))
        },
    )
}

/// This process's rank in the job. No traffic.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if `rank` is NULL; `PMI2_ERR_INIT` if
/// not initialized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_GetRank(rank: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI2_Job_GetRank({rank:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(rank) }?;
            out.set(lifecycle::rank_and_size()?.0);
            Ok(())
        },
    )
}

/// The number of this job's processes on this node (from `PMI_process_mapping`, or the
/// PMIx server's local peers).
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` if `size` is NULL; `PMI2_ERR_INIT` if
/// not initialized; `PMI2_FAIL` if the server fails.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_GetSize(size: *mut c_int) -> c_int {
    guard(
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

/// Not supported: `PMI2_FAIL` (`PMI2_ERR_INVALID_ARG` for a NULL pointer), one trace
/// line, nothing sent. No server offers
/// `job-connect`: Slurm 22.05's plugin logs "not implemented" and never answers, and
/// MPICH's Hydra ends the job on a command it does not know.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_Connect(
    jobid: *const c_char,
    conn: *mut PMI2_Connect_comm_t,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let s_jobid = unsafe { ffi::show(jobid) };
            write!(f, "PMI2_Job_Connect({}, {conn:p})", s_jobid)
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            unsafe { ffi::bytes_in(jobid) }?;
            if conn.is_null() {
                return Err(PmiError::InvalidArg);
            }
            with_client(|_| Ok(()))?;
            trace::line(format_args!("PMI2_Job_Connect: not supported"));
            Err(PmiError::Fail)
        },
    )
}

/// Not supported, as `PMI2_Job_Connect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Job_Disconnect(jobid: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let s_jobid = unsafe { ffi::show(jobid) };
            write!(f, "PMI2_Job_Disconnect({})", s_jobid)
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            unsafe { ffi::bytes_in(jobid) }?;
            with_client(|_| Ok(()))?;
            trace::line(format_args!("PMI2_Job_Disconnect: not supported"));
            Err(PmiError::Fail)
        },
    )
}

/// A node attribute: `*found` is 1 and the value (with its NUL, at most `valuelen`
/// bytes) in `value`, or `*found` is 0. With `waitfor` nonzero, wait until some process
/// on the node puts it; the wait holds the lock every call to the server takes, so
/// the calls of this process's other threads that need the server wait with it (one
/// cannot put the attribute meanwhile), and `PMI_TIMEOUT` bounds it as any reply (a
/// longer wait breaks the connection).
/// `localRanksCount` and `localRanks` (the ranks on this node,
/// comma-separated) are answered from the job's layout, as by
/// `PMI2_Info_GetNodeAttrIntArray`.
///
/// Returns `PMI2_SUCCESS` (`*found` 0 for an attribute nobody put);
/// `PMI2_ERR_INVALID_ARG` if `name`, `value` or `found` is NULL; `PMI2_ERR_INVALID_LENGTH`
/// if `valuelen` < 1 or the value and its NUL do not fit (nothing written, `*found`
/// untouched); `PMI2_ERR_INVALID_KEY`/`_KEY_LENGTH` for a name `PMI2_KVS_Put` would
/// refuse as a key; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the server fails.
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
    fetch: impl FnOnce(&mut pmi_core::client::Client, &[u8]) -> PmiResult<Option<Vec<u8>>>,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller's contract.
            let s_name = unsafe { ffi::show(name) };
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
    array: ffi::OutInts<'_>,
    outlen: ffi::Out<'_, c_int>,
    found: ffi::Out<'_, c_int>,
) -> PmiResult<()> {
    let Some(text) = got else {
        found.set(0);
        outlen.set(0);
        return Ok(());
    };
    let numbers = pmi_core::client::int_list(&text)?;
    array.write(&numbers)?;
    outlen.set(numbers.len() as c_int);
    found.set(1);
    Ok(())
}

/// A node attribute that is a list of integers. `localRanksCount` and `localRanks` (the
/// ranks on this node) are answered from the job's layout; other names from the server.
///
/// Returns `PMI2_SUCCESS` (`*found` 0 and `*outlen` 0 for an attribute nobody put);
/// `PMI2_ERR_INVALID_ARG` if a pointer is NULL; `PMI2_ERR_INVALID_LENGTH` if `arraylen`
/// < 0 or the integers do not fit (nothing written); `PMI2_ERR_INVALID_KEY`/`_KEY_LENGTH`
/// for a name `PMI2_KVS_Put` would refuse as a key; `PMI2_ERR_INIT` if not initialized;
/// `PMI2_FAIL` if the server fails or the value is not a comma-separated list of `int`s.
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
            |c, name| c.node_attr(name, false),
        )
    }
}

/// Set a node attribute for the processes on this node.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for NULL; the codes of `PMI2_KVS_Put`
/// for a name or value it would refuse as a key or value (nothing sent);
/// `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the server fails.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_Info_PutNodeAttr(name: *const c_char, value: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (s_name, s_value) = unsafe { (ffi::show(name), ffi::show(value)) };
            write!(f, "PMI2_Info_PutNodeAttr({}, {})", s_name, s_value)
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (name, value) = unsafe { (ffi::bytes_in(name)?, ffi::bytes_in(value)?) };
            with_client(|c| c.put_node_attr(name, value))
        },
    )
}

/// A job attribute (`PMI_process_mapping`, `universeSize`, ...): `*found` 1 and the
/// value with its NUL in `value` (`valuelen` bytes), or `*found` 0.
///
/// Returns as `PMI2_Info_GetNodeAttr`.
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
///
/// Returns as `PMI2_Info_GetNodeAttrIntArray`.
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
    fetch: impl FnOnce(&mut pmi_core::client::Client, &[u8]) -> PmiResult<Option<Vec<u8>>>,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller's contract.
            let s_name = unsafe { ffi::show(name) };
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
