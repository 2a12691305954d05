//! The option helpers RFC 13 lists as OPTIONAL: local, no traffic, usable before
//! `PMI_Init`. The recognised forms are described in `crate::options`.

use libc::{c_char, c_int};

use crate::api::PMI_keyval_t;
use crate::codes::guard;
use pmi_core::cmdline::{self as options, PmiOption};
use pmi_core::error::{PmiError, PmiResult};
use pmi_core::ffi;

/// Parse the PMI options at the start of `args` (`PMI_KEY=VALUE`, `-PMI_KEY=VALUE`,
/// `-PMI_KEY VALUE`, with one or two dashes): as many contiguous ones as there are.
/// On success `*num_parsed` is the number of arguments they took (0 when `args[0]` is
/// not a PMI option), `*size` the number of keyvals, and `*keyvalp` a `malloc`ed array
/// to release with `PMI_Free_keyvals` (NULL when `*size` is 0). No traffic; works
/// before `PMI_Init`.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_NUM_ARGS` if `num_args` < 0;
/// `PMI_ERR_INVALID_ARGS` if `args` or one of its `num_args` elements is NULL;
/// `PMI_ERR_INVALID_NUM_PARSED`, `PMI_ERR_INVALID_KEYVALP`, `PMI_ERR_INVALID_SIZE` if
/// that output is NULL; `PMI_ERR_NOMEM` if memory runs out.
///
/// # Safety
/// `args` is NULL or holds `num_args` elements, each NULL or a NUL-terminated string;
/// each output is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Parse_option(
    num_args: c_int,
    args: *mut *mut c_char,
    num_parsed: *mut c_int,
    keyvalp: *mut *mut PMI_keyval_t,
    size: *mut c_int,
) -> c_int {
    guard(
        |f| {
            write!(
                f,
                "PMI_Parse_option({num_args}, {args:p}, {num_parsed:p}, {keyvalp:p}, {size:p})"
            )
        },
        || {
            let n = usize::try_from(num_args).map_err(|_| PmiError::InvalidNumArgs)?;
            // SAFETY: the caller passes NULL or `num_args` string pointers.
            let args = unsafe { strings(args, n) }.map_err(|_| PmiError::InvalidArgs)?;
            // SAFETY: each output is NULL or writable.
            let (num_parsed, keyvalp, size) = unsafe {
                (
                    ffi::out(num_parsed).map_err(|_| PmiError::InvalidNumParsed)?,
                    ffi::out(keyvalp).map_err(|_| PmiError::InvalidKeyvalp)?,
                    ffi::out(size).map_err(|_| PmiError::InvalidSize)?,
                )
            };
            let (found, used) = options::leading_options(&args);
            let array = keyval_array(&found)?;
            num_parsed.set(used as c_int);
            size.set(found.len() as c_int);
            keyvalp.set(array);
            Ok(())
        },
    )
}

/// Remove every PMI option (as for `PMI_Parse_option`) from the command line
/// `*argcp`, `*argvp` after the program name, and return them as keyvals. The remaining
/// arguments keep their order; `*argcp` is updated and `(*argvp)[*argcp]` set to NULL.
/// `*keyvalp` is a `malloc`ed array of `*size` keyvals to release with
/// `PMI_Free_keyvals` (NULL when there are none). No traffic; works before `PMI_Init`.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if a pointer (or `*argvp`, or an
/// argument) is NULL or `*argcp` < 0; `PMI_ERR_NOMEM` if memory runs out.
///
/// # Safety
/// `argcp` and `argvp` are NULL or point to a program's `argc` and `argv` (`argc`
/// strings and a slot after them); the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Args_to_keyval(
    argcp: *mut c_int,
    argvp: *mut *mut *mut c_char,
    keyvalp: *mut *mut PMI_keyval_t,
    size: *mut c_int,
) -> c_int {
    guard(
        |f| {
            write!(
                f,
                "PMI_Args_to_keyval({argcp:p}, {argvp:p}, {keyvalp:p}, {size:p})"
            )
        },
        || {
            // SAFETY: each pointer is NULL or valid and writable.
            let (argc, keyvalp, size) =
                unsafe { (ffi::out(argcp)?, ffi::out(keyvalp)?, ffi::out(size)?) };
            // SAFETY: `argvp` is NULL or points to the program's argv.
            let argv = unsafe { argvp.as_mut() }
                .copied()
                .filter(|p| !p.is_null())
                .ok_or(PmiError::InvalidArg)?;
            let n = usize::try_from(argc.get()).map_err(|_| PmiError::InvalidArg)?;
            // SAFETY: argv holds `argc` string pointers.
            let args = unsafe { strings(argv, n) }?;
            let (found, kept) = options::split_options(&args);
            let array = keyval_array(&found)?;
            // Compact argv in place: `kept` is ascending, so every move is to a lower or
            // equal index; then re-terminate it.
            for (to, &from) in kept.iter().enumerate() {
                // SAFETY: both indices are below `argc`, inside the caller's argv.
                unsafe { *argv.add(to) = *argv.add(from) };
            }
            if kept.len() < n {
                // SAFETY: `kept.len()` < `argc`, so the slot is inside argv.
                unsafe { *argv.add(kept.len()) = std::ptr::null_mut() };
            }
            argc.set(kept.len() as c_int);
            size.set(found.len() as c_int);
            keyvalp.set(array);
            Ok(())
        },
    )
}

/// Release an array made by `PMI_Parse_option` or `PMI_Args_to_keyval`: its keys, its
/// values and the array. `keyvalp` NULL with `size` 0 is allowed and does nothing.
///
/// Returns `PMI_SUCCESS`, or `PMI_ERR_INVALID_ARG` if `size` < 0 or `keyvalp` is NULL
/// with `size` > 0.
///
/// # Safety
/// `keyvalp` is NULL or an array of `size` keyvals made by this library and not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Free_keyvals(keyvalp: *mut PMI_keyval_t, size: c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Free_keyvals({keyvalp:p}, {size})"),
        || {
            let n = usize::try_from(size).map_err(|_| PmiError::InvalidArg)?;
            if keyvalp.is_null() {
                return if n == 0 {
                    Ok(())
                } else {
                    Err(PmiError::InvalidArg)
                };
            }
            // SAFETY: the array and its strings were allocated by `keyval_array` with
            // malloc, `n` elements long, and are freed once.
            unsafe { free_keyvals(keyvalp, n) };
            Ok(())
        },
    )
}

/// Copy a description of the PMI options, and its NUL, into `str`, which has `*length`
/// bytes; on success `*length` is set to the bytes written, NUL included.
///
/// Returns `PMI_SUCCESS`; `PMI_ERR_INVALID_ARG` if a pointer is NULL (but `str` with
/// `*length` 0: a way to ask for the size); `PMI_ERR_INVALID_LENGTH` if `*length` < 1;
/// `PMI_ERR_NOMEM` if the description does not fit, with `*length` set to the bytes
/// needed, NUL included (nothing is written to `str`).
///
/// # Safety
/// `length` is NULL or points to a writable `int`; `str` is NULL or points to `*length`
/// writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMI_Get_options(str: *mut c_char, length: *mut c_int) -> c_int {
    guard(
        |f| write!(f, "PMI_Get_options({str:p}, {length:p})"),
        || {
            // SAFETY: the caller passes NULL or a writable int.
            let length = unsafe { ffi::out(length) }?;
            let text = options::DESCRIPTION.as_bytes();
            let needed = (text.len() + 1) as c_int;
            if str.is_null() && length.get() == 0 {
                length.set(needed);
                return Err(PmiError::NoMem);
            }
            // SAFETY: `str` is NULL or holds `*length` writable bytes.
            let out = unsafe { ffi::out_str(str, length.get()) }?;
            if out.capacity() <= text.len() {
                length.set(needed);
                return Err(PmiError::NoMem);
            }
            out.write(text)?;
            length.set(needed);
            Ok(())
        },
    )
}

/// `n` C strings as byte slices; `Err(InvalidArg)` if the array or an element is NULL
/// (an empty array may be NULL).
///
/// # Safety
/// `p` is NULL or holds `n` pointers, each NULL or a NUL-terminated string.
unsafe fn strings<'a>(p: *mut *mut c_char, n: usize) -> PmiResult<Vec<&'a [u8]>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: non-NULL, `n` elements.
    let ptrs = unsafe { std::slice::from_raw_parts(p, n) };
    // SAFETY: each element is NULL or a NUL-terminated string.
    ptrs.iter().map(|&s| unsafe { ffi::bytes_in(s) }).collect()
}

/// A `malloc`ed array of keyvals with `malloc`ed, NUL-terminated copies of each key and
/// value; NULL for none. All or nothing: on failure everything is released.
fn keyval_array(found: &[PmiOption<'_>]) -> PmiResult<*mut PMI_keyval_t> {
    if found.is_empty() {
        return Ok(std::ptr::null_mut());
    }
    let bytes = std::mem::size_of::<PMI_keyval_t>() * found.len();
    // SAFETY: malloc of a nonzero size; the result is checked for NULL.
    let array = unsafe { libc::malloc(bytes) }.cast::<PMI_keyval_t>();
    if array.is_null() {
        return Err(PmiError::NoMem);
    }
    for (i, option) in found.iter().enumerate() {
        let (key, val) = (c_copy(option.key), c_copy(option.value));
        // SAFETY: `array` has room for `found.len()` keyvals; slot `i` is in bounds.
        unsafe { array.add(i).write(PMI_keyval_t { key, val }) };
        if key.is_null() || val.is_null() {
            // SAFETY: slots 0..=i are initialised, with malloc'ed or NULL strings.
            unsafe { free_keyvals(array, i + 1) };
            return Err(PmiError::NoMem);
        }
    }
    Ok(array)
}

/// A `malloc`ed, NUL-terminated copy of `bytes`, or NULL when memory runs out.
fn c_copy(bytes: &[u8]) -> *mut c_char {
    // SAFETY: malloc of len + 1 bytes; the result is checked for NULL before use.
    let p = unsafe { libc::malloc(bytes.len() + 1) }.cast::<u8>();
    if !p.is_null() {
        // SAFETY: `p` has len + 1 writable bytes that do not overlap `bytes`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *p.add(bytes.len()) = 0;
        }
    }
    p.cast()
}

/// Free `n` keyvals made by `keyval_array` and the array itself.
///
/// # Safety
/// `array` holds `n` initialised keyvals whose strings are malloc'ed or NULL.
unsafe fn free_keyvals(array: *mut PMI_keyval_t, n: usize) {
    for i in 0..n {
        // SAFETY: slot `i` is initialised; its strings came from malloc (or are NULL).
        unsafe {
            let kv = &*array.add(i);
            libc::free(kv.key.cast_mut().cast());
            libc::free(kv.val.cast());
        }
    }
    // SAFETY: the array came from malloc.
    unsafe { libc::free(array.cast()) };
}
