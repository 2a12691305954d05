//! The key-value store: names and limits, put, commit, get, barrier, and the legacy
//! calls that the wire protocol no longer carries.

use libc::{c_char, c_int};

use crate::api::unsupported;
use crate::codes::guard;
use pmi_core::api::{Maxes, DEFAULT_MAXES};
use pmi_core::client::BarrierGroup;
use pmi_core::error::PmiError;
use pmi_core::ffi;
use pmi_core::lifecycle;

/// A NULL argument of `PMI_KVS_Put` or `PMI_KVS_Get` as RFC 13 names it, by the argument
/// (`PMI_ERR_INVALID_KVS`, `_KEY`, `_VAL`: the RFC lists no `PMI_ERR_INVALID_ARG` for
/// these two, and Slurm's library answers so); any other refusal as it is.
fn named<T>(checked: Result<T, PmiError>, null: PmiError) -> Result<T, PmiError> {
    checked.map_err(|e| if e == PmiError::InvalidArg { null } else { e })
}

/// Write this process group's kvsname into `(buf, length)`.
///
/// # Safety
/// As for `PMI_KVS_Get_my_name`.
unsafe fn write_kvsname(call: &str, buf: *mut c_char, length: c_int) -> c_int {
    guard(
        |f| write!(f, "{call}({buf:p}, {length})"),
        || {
            // SAFETY: the caller passes NULL or `length` writable bytes.
            let out = unsafe { ffi::out_str(buf, length) }?;
            lifecycle::with_client(|c| out.write(c.kvsname()?))
        },
    )
}

/// Copy this process group's kvsname (`get_my_kvsname`, asked once and cached) and its
/// NUL into `kvsname`, which has `length` bytes.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `kvsname` is NULL;
/// `PMI_ERR_INVALID_LENGTH` if the name and its NUL do not fit in `length` (nothing is
/// written); `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server fails.
///
/// # Safety
/// `kvsname` is NULL or points to `length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Get_my_name(kvsname: *mut c_char, length: c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_kvsname("PMI_KVS_Get_my_name", kvsname, length) }
}

/// Same as `PMI_KVS_Get_my_name`: the kvsname is this process group's id.
///
/// # Safety
/// `id_str` is NULL or points to `length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_id(id_str: *mut c_char, length: c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_kvsname("PMI_Get_id", id_str, length) }
}

/// Same as `PMI_KVS_Get_my_name`: the kvsname is this process group's KVS domain id.
///
/// # Safety
/// `id_str` is NULL or points to `length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_kvs_domain_id(id_str: *mut c_char, length: c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_kvsname("PMI_Get_kvs_domain_id", id_str, length) }
}

/// Write one of the maximum lengths: the server's once initialized, the library's
/// defaults (256, 64, 1024) before `PMI_Init`, after `PMI_Finalize` and in a child forked
/// from the initialized process (which is not initialized, as `PMI_Initialized` tells it).
/// Without the lock: no wait behind another thread's barrier, nor, in a forked child,
/// for a lock a thread of the parent held at the fork.
///
/// # Safety
/// `length` is NULL or points to a writable `int`.
unsafe fn write_max(call: &str, length: *mut c_int, pick: fn(Maxes) -> usize) -> c_int {
    guard(
        |f| write!(f, "{call}({length:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(length) }?;
            let maxes = if lifecycle::forked() {
                DEFAULT_MAXES
            } else {
                lifecycle::maxes().unwrap_or(DEFAULT_MAXES)
            };
            out.set(pick(maxes) as c_int);
            Ok(())
        },
    )
}

/// Set `*length` to the longest kvsname, NUL included (`kvsname_max`; 256 before
/// `PMI_Init`). No traffic. Works before `PMI_Init`, and in a forked child (the defaults).
///
/// Returns `PMI_SUCCESS`, or `PMI_ERR_INVALID_ARG` if `length` is NULL.
///
/// # Safety
/// `length` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Get_name_length_max(length: *mut c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_max("PMI_KVS_Get_name_length_max", length, |m| m.kvsname) }
}

/// Same as `PMI_KVS_Get_name_length_max`: the longest id, NUL included.
///
/// # Safety
/// `length` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_id_length_max(length: *mut c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_max("PMI_Get_id_length_max", length, |m| m.kvsname) }
}

/// Set `*length` to the longest key, NUL included (`keylen_max`; 64 before
/// `PMI_Init`). No traffic. Works before `PMI_Init`, and in a forked child (the defaults).
///
/// Returns `PMI_SUCCESS`, or `PMI_ERR_INVALID_ARG` if `length` is NULL.
///
/// # Safety
/// `length` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Get_key_length_max(length: *mut c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_max("PMI_KVS_Get_key_length_max", length, |m| m.key) }
}

/// Set `*length` to the longest value, NUL included (`vallen_max`; 1024 before
/// `PMI_Init`). No traffic. Works before `PMI_Init` (MPICH asks for it first), and in a
/// forked child (the defaults).
///
/// Returns `PMI_SUCCESS`, or `PMI_ERR_INVALID_ARG` if `length` is NULL.
///
/// # Safety
/// `length` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Get_value_length_max(length: *mut c_int) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { write_max("PMI_KVS_Get_value_length_max", length, |m| m.value) }
}

/// Put `key` = `value` into the keyval space `kvsname` (`put`, one round trip). The
/// value is sent verbatim; it becomes visible to others after `PMI_KVS_Commit` and
/// `PMI_Barrier`. A key may be put once: putting it again with the same value succeeds
/// without traffic, with another value fails.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_KVS` if `kvsname` is NULL or not this process
/// group's; `PMI_ERR_INVALID_KEY` if `key` is NULL, empty, holds a space, `=` or a control
/// character, or was put before with another value; `PMI_ERR_INVALID_KEY_LENGTH` if it is
/// longer than the key maximum less one; `PMI_ERR_INVALID_VAL` if `value` is NULL, empty
/// (RFC 13's `string` has at least one character), holds a newline, carriage return or
/// other control character but tab, or ends in ` found=TRUE` or ` found=FALSE` (Hydra 4.1.1
/// to 4.2.0 append that field to a get reply's value), or that MPICH 5.0.2's Hydra cannot
/// parse and ends the job for (a leading space, or after a space a word that starts with
/// `=` or ends at its first `=`: `a =b`, `a b=`); `PMI_ERR_INVALID_VAL_LENGTH` if it is
/// longer than the value maximum less one; `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if
/// the server fails. Nothing is sent when an argument is refused.
///
/// # Safety
/// Each argument is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Put(
    kvsname: *const c_char,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (kvsname, key, value) =
                unsafe { (ffi::show(kvsname), ffi::show(key), ffi::show(value)) };
            write!(f, "PMI_KVS_Put({kvsname}, {key}, {value})")
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (kvsname, key, value) = unsafe {
                (
                    named(ffi::bytes_in(kvsname), PmiError::InvalidKvs)?,
                    named(ffi::bytes_in(key), PmiError::InvalidKey)?,
                    named(ffi::bytes_in(value), PmiError::InvalidVal)?,
                )
            };
            lifecycle::with_client(|c| c.put(kvsname, key, value))
        },
    )
}

/// Commit the puts made so far. On the wire every put already reached the server, so
/// this is local: it only checks `kvsname`. Under PMIx it is `PMIx_Commit`.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `kvsname` is NULL;
/// `PMI_ERR_INVALID_KVS` if it is not this process group's; `PMI_ERR_INIT` if not
/// initialized; `PMI_FAIL` if `PMIx_Commit` fails.
///
/// # Safety
/// `kvsname` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Commit(kvsname: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let kvsname = unsafe { ffi::show(kvsname) };
            write!(f, "PMI_KVS_Commit({kvsname})")
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            let kvsname = unsafe { ffi::bytes_in(kvsname) }?;
            lifecycle::with_client(|c| c.commit(kvsname))
        },
    )
}

/// Copy the value of `key` in `kvsname`, and its NUL, into `value`, which has `length`
/// bytes (`get`, one round trip; none for a key this process put, nor for a key read
/// again among the last 8 keys read, which a cache of at most 4 MiB keeps, because
/// RFC 13 keys are put once).
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_VAL` if `value` is NULL;
/// `PMI_ERR_INVALID_LENGTH` if `length` < 1 or the value and its NUL do not fit (nothing
/// is written, never a truncation); `PMI_ERR_INVALID_KVS` if `kvsname` is NULL or not this
/// process group's; `PMI_ERR_INVALID_KEY` if the key is NULL, malformed (as for
/// `PMI_KVS_Put`) or the server does not have it (the connection stays usable);
/// `PMI_ERR_INVALID_KEY_LENGTH` if it is too long; `PMI_ERR_INIT` if not initialized;
/// `PMI_FAIL` if the server fails.
///
/// # Safety
/// `kvsname` and `key` are NULL or NUL-terminated strings; `value` is NULL or points to
/// `length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Get(
    kvsname: *const c_char,
    key: *const c_char,
    value: *mut c_char,
    length: c_int,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let (kvsname, key) = unsafe { (ffi::show(kvsname), ffi::show(key)) };
            write!(f, "PMI_KVS_Get({kvsname}, {key}, {value:p}, {length})")
        },
        || {
            // SAFETY: the caller passes NULL or NUL-terminated strings, and NULL or `length`
            // writable bytes.
            let (kvsname, key, out) = unsafe {
                (
                    named(ffi::bytes_in(kvsname), PmiError::InvalidKvs)?,
                    named(ffi::bytes_in(key), PmiError::InvalidKey)?,
                    named(ffi::out_str(value, length), PmiError::InvalidVal)?,
                )
            };
            lifecycle::with_client(|c| out.write(c.get(kvsname, key)?))
        },
    )
}

/// Block until every process of the process group has entered the barrier
/// (`barrier_in` / `barrier_out`). Puts made before it are visible to every process
/// after it.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server
/// fails, or if another thread waits in a group barrier without a tag
/// (`PMI_Barrier_group`: their ends could not be told apart; nothing is sent).
#[unsafe(no_mangle)]
pub extern "C" fn PMI_Barrier() -> c_int {
    guard(
        |f| f.write_str("PMI_Barrier()"),
        || lifecycle::barrier(None, None),
    )
}

/// PMI 1.2 (MPICH 5): block until every process of a group of the job has entered the
/// barrier; puts made before it are visible to the group's processes after it.
/// `group` is `PMI_GROUP_WORLD` (the whole job), `PMI_GROUP_NODE` (the processes on
/// this node), `PMI_GROUP_SELF` (this process alone: a no-op), or an array of `count`
/// ranks of the job (any order, this process among them; `count` is ignored for the
/// three constants). Barriers of one group that `stringtag`s (NULL allowed) tell apart
/// may run at once, in different threads; every member must pass the same tag. From a
/// PMI 1.2 server, barriers of two groups with one tag may not (NULL's tag is 0, as
/// `PMI_Barrier`'s): their ends could not be told apart. With a
/// server that speaks PMI 1.2 (MPICH 5's Hydra: `cmd=barrier_in group=<ranks>:<tag>`) or
/// under PMIx (`PMIx_Fence` over the group's processes); for a singleton every group is
/// this process alone. Another thread's calls are not held while it waits.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INIT` if not initialized; `PMI_ERR_INVALID_ARG` if
/// the array is NULL (not one of the constants), names a rank outside the job or twice,
/// or does not name this process, or if (from a PMI 1.2 server) this process waits in a
/// barrier of another group with the same tag (nothing is sent); `PMI_ERR_INVALID_SIZE`
/// if `count` < 1 or larger than the job, or the ranks would make a request line longer
/// than the server reads (64 KiB: some 11 000 ranks of five digits; nothing is sent);
/// `PMI_FAIL` if the server has no group barriers (PMI 1.1: Hydra 4, Slurm's PMI-1 wire;
/// so `PMI_Barrier_group(PMI_GROUP_SELF, 0, NULL)` says whether they work, as with
/// MPICH's client) or fails.
///
/// # Safety
/// `group` is one of the three constants or points to `count` readable ints;
/// `stringtag` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Barrier_group(
    group: *const c_int,
    count: c_int,
    stringtag: *const c_char,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            let tag = unsafe { ffi::show(stringtag) };
            write!(f, "PMI_Barrier_group({group:p}, {count}, {tag})")
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            let tag = (!stringtag.is_null())
                .then(|| unsafe { ffi::bytes_in(stringtag) })
                .transpose()?;
            let ranks;
            let which = match group as usize {
                0 => BarrierGroup::World,
                1 => BarrierGroup::Myself,
                2 => BarrierGroup::Node,
                _ => {
                    // The count is checked against the job before the array is read.
                    let (_, size) = lifecycle::rank_and_size()?;
                    if count < 1 || count > size {
                        return Err(PmiError::InvalidSize);
                    }
                    // SAFETY: not a constant, so the caller passes `count` readable ints.
                    ranks = unsafe { ffi::ints_in(group, count) }?;
                    BarrierGroup::Ranks(&ranks)
                }
            };
            lifecycle::barrier(Some(which), tag)
        },
    )
}

/// Not supported: the PMI-1.1 wire protocol has no command to create a keyval space
/// (Hydra kills the whole job on `create_kvs`), so nothing is sent.
///
/// Returns `PMI_ERR_INVALID_ARG` if `kvsname` is NULL; `PMI_ERR_INVALID_LENGTH` if
/// `length` < 1; `PMI_ERR_INIT` if not initialized; otherwise `PMI_FAIL`.
///
/// # Safety
/// `kvsname` is NULL or points to `length` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Create(kvsname: *mut c_char, length: c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_KVS_Create({kvsname:p}, {length})"),
        || {
            // SAFETY: the caller passes NULL or `length` writable bytes.
            unsafe { ffi::out_str(kvsname, length) }?;
            lifecycle::with_client(|_| {
                Err(unsupported("PMI_KVS_Create", "no create_kvs in PMI-1.1"))
            })
        },
    )
}

/// Not supported: the PMI-1.1 wire protocol has no command to destroy a keyval space
/// (Hydra kills the whole job on `destroy_kvs`), so nothing is sent.
///
/// Returns `PMI_ERR_INVALID_ARG` if `kvsname` is NULL; `PMI_ERR_INIT` if not
/// initialized; otherwise `PMI_FAIL`.
///
/// # Safety
/// `kvsname` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Destroy(kvsname: *const c_char) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let kvsname = unsafe { ffi::show(kvsname) };
            write!(f, "PMI_KVS_Destroy({kvsname})")
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string.
            unsafe { ffi::bytes_in(kvsname) }?;
            lifecycle::with_client(|_| {
                Err(unsupported("PMI_KVS_Destroy", "no destroy_kvs in PMI-1.1"))
            })
        },
    )
}

/// Check the arguments shared by the two iterator calls, then refuse.
///
/// # Safety
/// As for `PMI_KVS_Iter_first`.
unsafe fn iterate(
    call: &str,
    kvsname: *const c_char,
    key: *mut c_char,
    key_len: c_int,
    val: *mut c_char,
    val_len: c_int,
) -> c_int {
    guard(
        |f| {
            // SAFETY: the caller passes NULL or NUL-terminated strings.
            let kvsname = unsafe { ffi::show(kvsname) };
            write!(
                f,
                "{call}({kvsname}, {key:p}, {key_len}, {val:p}, {val_len})"
            )
        },
        || {
            // SAFETY: the caller passes NULL or a NUL-terminated string, and NULL or
            // `key_len` / `val_len` writable bytes.
            let kvsname = unsafe {
                ffi::out_str(key, key_len)?;
                ffi::out_str(val, val_len)?;
                ffi::bytes_in(kvsname)?
            };
            lifecycle::with_client(|c| {
                c.check_kvsname(kvsname)?;
                Err::<(), PmiError>(unsupported(call, "no getbyidx in PMI-1.1"))
            })
        },
    )
}

/// Not supported: iterating needs `getbyidx`, which PMI-1.1 servers do not know (Hydra
/// kills the whole job on it), so nothing is sent and nothing is written.
///
/// Returns `PMI_ERR_INVALID_ARG` if a pointer is NULL; `PMI_ERR_INVALID_LENGTH` if a
/// length < 1; `PMI_ERR_INIT` if not initialized; `PMI_ERR_INVALID_KVS` if `kvsname`
/// is not this process group's; otherwise `PMI_FAIL`.
///
/// # Safety
/// `kvsname` is NULL or a NUL-terminated string; `key` and `val` are NULL or point to
/// `key_len` and `val_len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Iter_first(
    kvsname: *const c_char,
    key: *mut c_char,
    key_len: c_int,
    val: *mut c_char,
    val_len: c_int,
) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { iterate("PMI_KVS_Iter_first", kvsname, key, key_len, val, val_len) }
}

/// Not supported, as `PMI_KVS_Iter_first`; same return codes.
///
/// # Safety
/// As for `PMI_KVS_Iter_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_KVS_Iter_next(
    kvsname: *const c_char,
    key: *mut c_char,
    key_len: c_int,
    val: *mut c_char,
    val_len: c_int,
) -> c_int {
    // SAFETY: same contract as this function's.
    unsafe { iterate("PMI_KVS_Iter_next", kvsname, key, key_len, val, val_len) }
}
