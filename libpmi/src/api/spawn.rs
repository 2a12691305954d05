//! Dynamic processes: `PMI_Spawn_multiple`.

use libc::{c_char, c_int};

use crate::api::PMI_keyval_t;
use crate::codes::guard;
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::SpawnCommand;
use pmi_core::{ffi, lifecycle};

/// Spawn processes into a new process group: for each command `i` of `count`, up to
/// `maxprocs[i]` copies of `cmds[i]` with the NULL-terminated arguments `argvs[i]`
/// (`argvs` NULL: no arguments) and the `info_keyval_sizesp[i]` info pairs of
/// `info_keyval_vectors[i]` (Hydra knows `path`, `wdir`, `host`, `hosts`, `hostfile`).
/// The `preput_keyval_size` pairs of `preput_keyval_vector` are put in the new group's
/// KVS before it starts. One `mcmd=spawn` segment per command, then one `spawn_result`.
/// `errors` has one slot per process requested (the sum of `maxprocs`): each gets the
/// server's error code, or 0 when the server sends none. The children's `PMI_Init`
/// reports `spawned` = `PMI_TRUE`, and their appnum is the index of their command.
///
/// Nothing is sent unless every argument is valid. Returns `PMI_SUCCESS`;
/// `PMI_ERR_INVALID_NUM_ARGS` if `count` < 1; `PMI_ERR_INVALID_ARGS` if `cmds` or a
/// command is NULL or empty, or a command or an argument is empty or holds a newline or
/// another control character but tab, or ends in `endcmd` (Hydra would take it for the end of
/// the segment); `PMI_ERR_INVALID_ARG` if `maxprocs` or `errors` is NULL, or a key,
/// value or pair array that is needed is NULL; `PMI_ERR_INVALID_SIZE` if a `maxprocs`
/// is < 1, an info or preput count is negative, or the total overflows an `int`;
/// `PMI_ERR_INVALID_KEY` / `PMI_ERR_INVALID_KEY_LENGTH` for preput and info keys as for
/// `PMI_KVS_Put`; `PMI_ERR_INVALID_VAL` for a preput value that is empty or has a
/// space (Hydra 4.0.2 crashes on one), a control character or a trailing `endcmd`, or an
/// info value that is empty or has a control character or a trailing `endcmd`; `PMI_ERR_INVALID_VAL_LENGTH` for a value
/// too long; `PMI_ERR_INIT` if not initialized; `PMI_FAIL` if the server refuses.
///
/// # Safety
/// `cmds`, `maxprocs` (and `argvs`, `info_keyval_sizesp`, `info_keyval_vectors` when
/// not NULL) hold `count` elements; each `argvs[i]` that is not NULL is NULL-terminated;
/// each info vector holds its count of pairs; `preput_keyval_vector` holds
/// `preput_keyval_size` pairs; strings are NUL-terminated; `errors` has a slot for
/// every process requested.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Spawn_multiple(
    count: c_int,
    cmds: *mut *const c_char,
    argvs: *mut *mut *const c_char,
    maxprocs: *const c_int,
    info_keyval_sizesp: *const c_int,
    info_keyval_vectors: *mut *const PMI_keyval_t,
    preput_keyval_size: c_int,
    preput_keyval_vector: *const PMI_keyval_t,
    errors: *mut c_int,
) -> c_int {
    guard(
        |f| {
            write!(f, "PMI_Spawn_multiple({count}, {cmds:p}, {argvs:p}, {maxprocs:p}, {info_keyval_sizesp:p}, {info_keyval_vectors:p}, {preput_keyval_size}, {preput_keyval_vector:p}, {errors:p})")
        },
        || {
            let count = usize::try_from(count)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or(PmiError::InvalidNumArgs)?;
            if cmds.is_null() {
                return Err(PmiError::InvalidArgs);
            }
            if maxprocs.is_null() || errors.is_null() {
                return Err(PmiError::InvalidArg);
            }
            // SAFETY: non-NULL, and the caller promises `count` elements in each array.
            let (cmd_ptrs, maxprocs) = unsafe {
                (
                    std::slice::from_raw_parts(cmds, count),
                    std::slice::from_raw_parts(maxprocs, count),
                )
            };
            let mut commands = Vec::with_capacity(count);
            let mut total: c_int = 0;
            for i in 0..count {
                // SAFETY: `cmds[i]` is NULL or a NUL-terminated string.
                let execname =
                    unsafe { ffi::bytes_in(cmd_ptrs[i]) }.map_err(|_| PmiError::InvalidArgs)?;
                let nprocs = u32::try_from(maxprocs[i])
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(PmiError::InvalidSize)?;
                total = total
                    .checked_add(maxprocs[i])
                    .ok_or(PmiError::InvalidSize)?;
                // SAFETY: `argvs` is NULL or holds `count` NULL-terminated argument arrays.
                let args = unsafe { argv_of(argvs, i) }?;
                // SAFETY: the info arrays are NULL or hold `count` elements, each vector its
                // count of pairs.
                let info = unsafe { info_of(info_keyval_sizesp, info_keyval_vectors, i) }?;
                commands.push(SpawnCommand {
                    execname,
                    args,
                    maxprocs: nprocs,
                    info,
                });
            }
            // SAFETY: the caller promises `preput_keyval_size` pairs.
            let preput = unsafe { pairs(preput_keyval_vector, preput_keyval_size) }?;
            // SAFETY: non-NULL, and the caller promises a slot per process requested.
            // Written only once the codes are known: not while the strings are borrowed
            // (C may pass overlapping arrays), and not on failure.
            let errors = unsafe { ffi::out_ints(errors, total) }?;
            let spawned = lifecycle::with_client(|c| c.spawn(&commands, &preput))?;
            errors.write_padded(&spawned.codes)
        },
    )
}

/// The arguments of command `i`: none when `argvs` or `argvs[i]` is NULL.
///
/// # Safety
/// `argvs` is NULL or holds more than `i` elements, each NULL or a NULL-terminated
/// array of NUL-terminated strings.
unsafe fn argv_of<'a>(argvs: *mut *mut *const c_char, i: usize) -> PmiResult<Vec<&'a [u8]>> {
    let mut args = Vec::new();
    if argvs.is_null() {
        return Ok(args);
    }
    // SAFETY: `argvs` holds more than `i` elements.
    let mut next = unsafe { *argvs.add(i) }.cast_const();
    if next.is_null() {
        return Ok(args);
    }
    // SAFETY: the array is NULL-terminated, so every element up to the NULL is readable.
    while let Some(&arg) = unsafe { next.as_ref() } {
        if arg.is_null() {
            break;
        }
        // SAFETY: a non-NULL element is a NUL-terminated string.
        args.push(unsafe { ffi::bytes_in(arg) }?);
        // SAFETY: the terminating NULL has not been reached, so the next element exists.
        next = unsafe { next.add(1) };
    }
    Ok(args)
}

/// The info pairs of command `i`: none when the sizes array is NULL.
///
/// # Safety
/// `sizes` and `vectors` are NULL or hold more than `i` elements; `vectors[i]` holds
/// `sizes[i]` pairs.
unsafe fn info_of<'a>(
    sizes: *const c_int,
    vectors: *mut *const PMI_keyval_t,
    i: usize,
) -> PmiResult<Vec<(&'a [u8], &'a [u8])>> {
    if sizes.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: `sizes` holds more than `i` elements.
    let n = unsafe { *sizes.add(i) };
    if n == 0 {
        return Ok(Vec::new());
    }
    if vectors.is_null() {
        return Err(if n < 0 {
            PmiError::InvalidSize
        } else {
            PmiError::InvalidArg
        });
    }
    // SAFETY: `vectors` holds more than `i` elements, `vectors[i]` holds `n` pairs.
    unsafe { pairs(*vectors.add(i), n) }
}

/// `n` key/value pairs as byte strings.
///
/// # Safety
/// `n` <= 0, or `kv` points to `n` pairs of NULL or NUL-terminated strings.
unsafe fn pairs<'a>(kv: *const PMI_keyval_t, n: c_int) -> PmiResult<Vec<(&'a [u8], &'a [u8])>> {
    let n = usize::try_from(n).map_err(|_| PmiError::InvalidSize)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if kv.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: non-NULL, and the caller promises `n` pairs.
    let kv = unsafe { std::slice::from_raw_parts(kv, n) };
    kv.iter()
        // SAFETY: each key and value is NULL or a NUL-terminated string.
        .map(|p| unsafe { Ok((ffi::bytes_in(p.key)?, ffi::bytes_in(p.val)?)) })
        .collect()
}
