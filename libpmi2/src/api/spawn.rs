//! `PMI2_Job_Spawn`, and reading its C arrays.

use libc::{c_char, c_int};

use pmi_core::error::{PmiError, PmiResult};
use pmi_core::SpawnCommand;
use pmi_core::{ffi, trace};

use crate::api::*;
use crate::codes::guard;

/// Spawn `count` commands as a new job: `cmds[i]` with `argcs[i]` arguments
/// `argvs[i][0..]`, `maxprocs[i]` processes, `info_keyval_sizes[i]` info entries in the
/// array `info_keyval_vectors[i]`; the `preput_keyval_size` entries
/// `*preput_keyval_vector[j]` are put in the new job's key-value space. The new job's
/// id goes to `jobId` (`jobIdSize` bytes) when the server gives one (Hydra 4.0.2, Slurm,
/// PMIx; MPICH 5.0.2's Hydra does not: "" then, and "" with a trace line when it does
/// not fit), and a code per process to `errors`.
///
/// Returns `PMI2_SUCCESS`; `PMI2_ERR_INVALID_NUM_ARGS`/`_ARGS`/`_ARG`/`_SIZE`/
/// `_KEY`/`_VAL` for bad arguments (nothing sent): `PMI2_ERR_INVALID_ARG` for a NULL
/// command, argument, key or value, and for `argvs` without `argcs` or `argcs` naming
/// arguments without `argvs` (`jobId` may be NULL); `PMI2_ERR_INVALID_SIZE` for a
/// `maxprocs` below 1 or adding up past `INT_MAX`; `PMI2_ERR_INVALID_ARGS` also for an
/// empty argument, one holding a `;`, or more than 996 arguments, info and preput
/// fields in all (an argument one, an info or preput entry two, a command four: with
/// `cmd`, `ncmds` and `preputcount`, 999 fields; the Hydras die on 1000),
/// `PMI2_ERR_INVALID_VAL` for an empty value or one holding a `;`;
/// `PMI2_ERR_INVALID_LENGTH` when the request would pass 64 KiB; `PMI2_FAIL` if the
/// server refuses. The rules PMI-1's spawn follows hold here too, under every server,
/// so that a program behaves the same under each: a command, argument or value may not
/// end in `endcmd` (`_ARGS`, `_VAL`), nor an info or preput key (`_KEY`), and a preput
/// value may not hold a space (`_VAL`).
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
    guard(
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
                let execname = unsafe { ffi::bytes_in(cmds[i]) }?;
                let procs = u32::try_from(maxprocs[i])
                    .ok()
                    .filter(|&p| p >= 1)
                    .ok_or(PmiError::InvalidSize)?;
                total = total
                    .checked_add(procs as usize)
                    .filter(|&t| t <= c_int::MAX as usize)
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
            // Written only once the codes are known: not while the strings are borrowed
            // (C may pass overlapping arrays), and not on failure.
            let errors = unsafe { ffi::out_ints(errors, total as c_int) }?;
            let spawned = with_client(|c| c.spawn(&commands, &preput))?;
            errors.write_padded(&spawned.codes)?;
            let id = spawned.jobid.unwrap_or_default();
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
    if argcs.is_null() {
        // Arguments without their count cannot be read.
        return if argvs.is_null() {
            Ok(Vec::new())
        } else {
            Err(PmiError::InvalidArg)
        };
    }
    // SAFETY: `argcs` holds more than `i` elements.
    let argc = usize::try_from(unsafe { *argcs.add(i) }).map_err(|_| PmiError::InvalidArgs)?;
    if argc == 0 {
        return Ok(Vec::new());
    }
    if argvs.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: `argvs` holds more than `i` elements.
    let argv = unsafe { *argvs.add(i) };
    if argv.is_null() {
        return Err(PmiError::InvalidArg);
    }
    (0..argc)
        // SAFETY: `argv` holds `argc` strings, each NULL or NUL-terminated.
        .map(|j| unsafe { ffi::bytes_in(*argv.add(j)) })
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
    unsafe { Ok((ffi::bytes_in(entry.key)?, ffi::bytes_in(entry.value)?)) }
}
