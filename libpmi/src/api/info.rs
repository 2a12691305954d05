//! Process group information: size, rank, universe size, appnum, and the clique.

use libc::c_int;

use crate::codes::guard;
use pmi_core::{ffi, lifecycle};

/// Set `*size` to the number of processes in this process group (`PMI_SIZE`). No
/// traffic.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `size` is NULL; `PMI_ERR_INIT` if not
/// initialized.
///
/// # Safety
/// `size` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_size(size: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_size({size:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(size) }?;
            out.set(lifecycle::rank_and_size()?.1);
            Ok(())
        },
    )
}

/// Set `*rank` to this process's rank, `0` to size-1 (`PMI_RANK`). No traffic.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `rank` is NULL; `PMI_ERR_INIT` if not
/// initialized.
///
/// # Safety
/// `rank` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_rank(rank: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_rank({rank:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(rank) }?;
            out.set(lifecycle::rank_and_size()?.0);
            Ok(())
        },
    )
}

/// Set `*size` to the universe size (`get_universe_size`, asked once and cached).
/// `-1` means the process manager does not know (Hydra without `-usize`, or a reply
/// without `size`).
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `size` is NULL; `PMI_ERR_INIT` if not
/// initialized; `PMI_FAIL` if the server fails.
///
/// # Safety
/// `size` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_universe_size(size: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_universe_size({size:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(size) }?;
            out.set(lifecycle::with_client(|c| c.universe_size())?);
            Ok(())
        },
    )
}

/// Set `*appnum` to the application number (`get_appnum`, asked once and cached):
/// the index of this process's executable in an MPMD launch or in a spawn; `-1` when the
/// process manager does not say (a reply without `appnum`, a PMIx server without it).
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `appnum` is NULL; `PMI_ERR_INIT` if
/// not initialized; `PMI_FAIL` if the server fails.
///
/// # Safety
/// `appnum` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_appnum(appnum: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_appnum({appnum:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(appnum) }?;
            out.set(lifecycle::with_client(|c| c.appnum())?);
            Ok(())
        },
    )
}

/// Set `*size` to the number of processes of this process group on this node, computed
/// from the `PMI_process_mapping` key (fetched once). When the key is missing or empty
/// the clique is this process alone; when it is malformed, too, with one warning on
/// stderr.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `size` is NULL; `PMI_ERR_INIT` if not
/// initialized; `PMI_FAIL` if the server fails.
///
/// # Safety
/// `size` is NULL or points to a writable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_clique_size(size: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_clique_size({size:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let out = unsafe { ffi::out(size) }?;
            let n = lifecycle::with_client(|c| c.clique_size())?;
            // A clique too large for an int (a PMI_SIZE past 2^31 cannot be set anyway).
            out.set(c_int::try_from(n).map_err(|_| pmi_core::error::PmiError::Fail)?);
            Ok(())
        },
    )
}

/// Fill `ranks[0 .. clique size)` with the ranks of this process group on this node,
/// ascending (see `PMI_Get_clique_size`). `length` is the number of slots in `ranks`.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if `ranks` is NULL;
/// `PMI_ERR_INVALID_LENGTH` if `length` is smaller than the clique (nothing is written);
/// `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server fails.
///
/// # Safety
/// `ranks` is NULL or points to `length` writable `int`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_clique_ranks(ranks: *mut c_int, length: c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_clique_ranks({ranks:p}, {length})"),
        || {
            // SAFETY: the caller passes NULL or `length` writable ints, and they are the
            // call's only pointer.
            let out = unsafe { ffi::out_ints(ranks, length)?.into_slice() };
            lifecycle::with_client(|c| c.clique_into(out).map(drop))
        },
    )
}
