//! The key-value space: `PMI2_KVS_Put`, `_Fence`, `_Get`, and Slurm's `PMIX_Ring`.

use libc::{c_char, c_int};

use pmi_core::error::PmiError;
use pmi_core::{ffi, trace};

use crate::api::*;
use crate::codes::guard;

/// Slurm's ring exchange: every process gives `value` and gets its position in the
/// ring (`*rank` of `*ranks`) and its left and right neighbours' values (each at most
/// `maxvalue` bytes with the NUL). A job of one process gets its own value back.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_ARG` for a NULL pointer;
/// `PMI2_ERR_INVALID_LENGTH` for a `maxvalue` below 1;
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
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let s_value = unsafe { ffi::show(value) };
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
/// empty key, one holding a `;`, or one put before with another value;
/// `PMI2_ERR_INVALID_VAL` for an empty value or one holding a `;` (servers cut at it);
/// `PMI2_ERR_INVALID_KEY_LENGTH`/`_VAL_LENGTH` when too long (63 and 1023 bytes at
/// most); nothing is sent when an argument is refused; `PMI2_ERR_INIT` if not
/// initialized; `PMI2_FAIL` if the server refuses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_KVS_Put(key: *const c_char, value: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (s_key, s_value) = unsafe { (ffi::show(key), ffi::show(value)) };
            write!(f, "PMI2_KVS_Put({}, {})", s_key, s_value)
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (key, value) = unsafe { (ffi::bytes_in(key)?, ffi::bytes_in(value)?) };
            with_client(|c| c.put_own(key, value))
        },
    )
}

/// Wait until every process of the job has called it; the puts made before are then
/// visible to all.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INIT` if not initialized; `PMI2_FAIL` if the server
/// fails.
#[unsafe(no_mangle)]
pub extern "C" fn PMI2_KVS_Fence() -> c_int {
    guard(
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
/// `PMI2_ERR_INVALID_LENGTH` if it does not fit in `maxvalue` bytes (`maxvalue` 0 or
/// less included: a way to ask for the length): nothing is written to `value`, and
/// `*vallen` is the value's length without its NUL, negated (as MPICH's client says it):
/// a buffer of that length and one more holds it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI2_KVS_Get(
    jobid: *const c_char,
    src_pmi_id: c_int,
    key: *const c_char,
    value: *mut c_char,
    maxvalue: c_int,
    vallen: *mut c_int,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (s_jobid, s_key) = unsafe { (ffi::show(jobid), ffi::show(key)) };
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
            let out = match unsafe { ffi::out_str(value, maxvalue) } {
                Ok(out) => Some(out),
                // Nothing fits (`maxvalue` < 1): the length needed is still told.
                Err(PmiError::InvalidLength) => None,
                Err(e) => return Err(e),
            };
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
                match out {
                    Some(out) if v.len() < out.capacity() => {
                        out.write(v)?;
                        len.set(n);
                        Ok(())
                    }
                    _ => {
                        len.set(-n);
                        Err(PmiError::InvalidLength)
                    }
                }
            })
        },
    )
}
