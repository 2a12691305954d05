//! The C fronts' one pointer toolbox: the panic boundary ([`boundary`], and [`guard`]
//! with the front's table of return codes), C strings in, ints and strings out. Every export of `libpmi`
//! and `libpmi2` converts its arguments here and nowhere else.

use std::ffi::CStr;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use libc::{c_char, c_int};

use crate::error::{PmiError, PmiResult};
use crate::trace;

/// An API's return codes, with their names for the trace: success, and one row per
/// error (every [`PmiError`] once; each front's tests check it).
pub struct Codes {
    pub success: (c_int, &'static str),
    pub errors: [(PmiError, c_int, &'static str); 15],
}

impl Codes {
    /// The code and its name for `e`.
    pub fn of(&self, e: PmiError) -> (c_int, &'static str) {
        let row = self.errors.iter().find(|row| row.0 == e);
        let (_, code, name) = row.unwrap_or(&self.errors[0]);
        (*code, name)
    }
}

impl Codes {
    /// Compare the table with a C header's `#define NAME VALUE` lines (the reference
    /// headers' numbers): every code named in the table must be defined there with the
    /// same value, and every error must have exactly one row. The mismatches, if any.
    pub fn check_against(&self, header: &str) -> Result<(), String> {
        let defined = |name: &str| {
            header.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("#define") && words.next() == Some(name))
                    .then(|| words.next().and_then(|v| v.parse::<c_int>().ok()))
                    .flatten()
            })
        };
        let mut wrong = Vec::new();
        let rows = std::iter::once(self.success).chain(self.errors.iter().map(|r| (r.1, r.2)));
        for (code, name) in rows {
            if defined(name) != Some(code) {
                wrong.push(format!("{name} = {code}, the header: {:?}", defined(name)));
            }
        }
        for e in PmiError::ALL {
            let n = self.errors.iter().filter(|row| row.0 == e).count();
            if n != 1 {
                wrong.push(format!("{e} has {n} rows"));
            }
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(wrong.join("; "))
        }
    }
}

/// Run an export's body: `Ok` → the API's success code, `Err(e)` → its code for `e`, a
/// panic → its code for `PmiError::Fail`. Nothing unwinds into C. With `PMI_DEBUG`, the
/// call (as `call` writes it, only then) is traced with the code's name, without
/// allocating: PMI calls are made from signal handlers.
pub fn guard(
    codes: &Codes,
    call: impl Fn(&mut fmt::Formatter<'_>) -> fmt::Result,
    body: impl FnOnce() -> PmiResult<()>,
) -> c_int {
    // (None: the body panicked.)
    let result = boundary(None, || Some(body()));
    let (code, name) = match &result {
        Some(Ok(())) => codes.success,
        Some(Err(e)) => codes.of(*e),
        None => codes.of(PmiError::Fail),
    };
    if trace::enabled() {
        let call = Call(call);
        match &result {
            None => trace::line(format_args!("{call} = {name} (internal error)")),
            _ => trace::line(format_args!("{call} = {name}")),
        }
    }
    code
}

/// The panic boundary, the library's only one: run `body`, and should it panic, return
/// `on_panic` instead of unwinding into C. Every export runs inside it: through
/// [`guard`], or directly for the few that return no code of their API
/// (`PMI2_Initialized`, the aborts).
#[inline(always)]
pub fn boundary<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

/// A call as `guard` traces it.
struct Call<F>(F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for Call<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

/// A C string argument as the trace shows it: quoted and escaped, NULL as `NULL`, cut
/// after 256 bytes; formatted without allocating.
pub struct Shown<'a>(Option<&'a [u8]>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 256;
        match self.0 {
            None => f.write_str("NULL"),
            Some(bytes) if bytes.len() > SHOWN => write!(
                f,
                "\"{}\"...({} bytes)",
                bytes[..SHOWN].escape_ascii(),
                bytes.len()
            ),
            Some(bytes) => write!(f, "\"{}\"", bytes.escape_ascii()),
        }
    }
}

/// A C string argument for the trace.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn show<'a>(p: *const c_char) -> Shown<'a> {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    Shown(unsafe { bytes_in(p) }.ok())
}

/// The bytes of a NUL-terminated C string; NULL → `PMI_ERR_INVALID_ARG`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
#[inline]
pub unsafe fn bytes_in<'a>(p: *const c_char) -> PmiResult<&'a [u8]> {
    if p.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// A copy of the caller's `count` C ints at `p`: NULL → `PMI_ERR_INVALID_ARG`, a count
/// below 0 → `PMI_ERR_INVALID_SIZE`. (A copy: the array may also be another argument.)
///
/// # Safety
/// `p` is NULL or points to `count` readable ints.
pub unsafe fn ints_in(p: *const c_int, count: c_int) -> PmiResult<Vec<c_int>> {
    if p.is_null() {
        return Err(PmiError::InvalidArg);
    }
    let len = usize::try_from(count).map_err(|_| PmiError::InvalidSize)?;
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| PmiError::NoMem)?;
    // SAFETY: the caller promises `count` readable ints at `p`; read one by one, without
    // assuming their alignment.
    out.extend((0..len).map(|i| unsafe { p.add(i).read_unaligned() }));
    Ok(out)
}

// The outputs below hold raw pointers and write through them, never through a `&mut`:
// C lets a caller pass one place for two arguments (`PMI2_Init(&x, &size, &rank, &x)`,
// `PMI_KVS_Get(kvs, buf, buf, n)`), which two live `&mut` (or a `&mut` beside a `&`)
// would make undefined behaviour. Written so, the last write wins, as in C.

/// A C output parameter, checked for NULL before any work is done and written only on
/// success.
pub struct Out<'a, T: Copy> {
    ptr: NonNull<T>,
    _call: PhantomData<&'a mut T>,
}

impl<T: Copy> Out<'_, T> {
    pub fn set(self, value: T) {
        // SAFETY: `out` checked the pointer non-NULL and its caller promised it valid for
        // writes of one `T` during the call; a raw write is defined whatever else points
        // there.
        unsafe { self.ptr.as_ptr().write(value) }
    }

    /// The current value, for in-out parameters.
    pub fn get(&self) -> T {
        // SAFETY: as for `set`; the caller promised an initialized `T` for an in-out one.
        unsafe { self.ptr.as_ptr().read() }
    }
}

/// Check an `int *` (or similar) output for NULL → `PMI_ERR_INVALID_ARG`.
///
/// # Safety
/// `p` is NULL or valid for writes of one `T` during the call (and for reads of one, if
/// [`Out::get`] is called). Other arguments may point to the same place.
pub unsafe fn out<'a, T: Copy>(p: *mut T) -> PmiResult<Out<'a, T>> {
    let ptr = NonNull::new(p).ok_or(PmiError::InvalidArg)?;
    Ok(Out {
        ptr,
        _call: PhantomData,
    })
}

/// A C string buffer `(buf, length)`, `length` counting the NUL.
pub struct OutStr<'a> {
    ptr: NonNull<u8>,
    len: usize,
    _call: PhantomData<&'a mut [u8]>,
}

impl OutStr<'_> {
    /// Copy `text` and a NUL, or `PMI_ERR_INVALID_LENGTH` with nothing written when it
    /// does not fit. Never truncates.
    #[inline]
    pub fn write(self, text: &[u8]) -> PmiResult<()> {
        if text.len() >= self.len {
            return Err(PmiError::InvalidLength);
        }
        // SAFETY: `out_str` checked the pointer non-NULL and its caller promised `len`
        // writable bytes; `text.len() + 1 <= len`. `copy` allows `text` to overlap them.
        unsafe {
            std::ptr::copy(text.as_ptr(), self.ptr.as_ptr(), text.len());
            self.ptr.as_ptr().add(text.len()).write(0);
        }
        Ok(())
    }

    /// The capacity, NUL included.
    pub fn capacity(&self) -> usize {
        self.len
    }
}

/// Check a string buffer: NULL → `PMI_ERR_INVALID_ARG`, `length < 1` →
/// `PMI_ERR_INVALID_LENGTH`.
///
/// # Safety
/// `buf` is NULL or valid for writes of `length` bytes during the call. Other arguments
/// may point into them.
#[inline]
pub unsafe fn out_str<'a>(buf: *mut c_char, length: c_int) -> PmiResult<OutStr<'a>> {
    let ptr = NonNull::new(buf.cast::<u8>()).ok_or(PmiError::InvalidArg)?;
    let len = usize::try_from(length)
        .ok()
        .filter(|&n| n > 0)
        .ok_or(PmiError::InvalidLength)?;
    Ok(OutStr {
        ptr,
        len,
        _call: PhantomData,
    })
}

/// An `int array[]` output of `length` slots.
pub struct OutInts<'a> {
    ptr: NonNull<c_int>,
    len: usize,
    _call: PhantomData<&'a mut [c_int]>,
}

impl<'a> OutInts<'a> {
    /// Copy `values` to the front, or `PMI_ERR_INVALID_LENGTH` with nothing written when
    /// they do not fit.
    pub fn write(self, values: &[c_int]) -> PmiResult<()> {
        if values.len() > self.len {
            return Err(PmiError::InvalidLength);
        }
        // SAFETY: `out_ints` checked the pointer non-NULL and its caller promised `len`
        // writable ints; `values.len() <= len`. `copy` allows `values` to overlap them.
        unsafe { std::ptr::copy(values.as_ptr(), self.ptr.as_ptr(), values.len()) };
        Ok(())
    }

    /// Copy `values` to the front and 0 into every slot after them, or
    /// `PMI_ERR_INVALID_LENGTH` with nothing written when they do not fit.
    pub fn write_padded(self, values: &[c_int]) -> PmiResult<()> {
        if values.len() > self.len {
            return Err(PmiError::InvalidLength);
        }
        // SAFETY: as in `write`; the slots past `values.len()` are within the `len`
        // writable ints too.
        unsafe {
            let rest = self.ptr.as_ptr().add(values.len());
            std::ptr::write_bytes(rest, 0, self.len - values.len());
        }
        self.write(values)
    }

    /// The slots as a slice, for a callee that fills them in place.
    ///
    /// # Safety
    /// No other argument of the call points into them.
    pub unsafe fn into_slice(self) -> &'a mut [c_int] {
        // SAFETY: valid for `len` writable ints (`out_ints`), unaliased (the caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// Check an `int ranks[]` output of `length` slots: NULL → `PMI_ERR_INVALID_ARG`,
/// `length < 0` → `PMI_ERR_INVALID_LENGTH`.
///
/// # Safety
/// `p` is NULL or valid for writes of `length` ints during the call.
pub unsafe fn out_ints<'a>(p: *mut c_int, length: c_int) -> PmiResult<OutInts<'a>> {
    let ptr = NonNull::new(p).ok_or(PmiError::InvalidArg)?;
    let len = usize::try_from(length).map_err(|_| PmiError::InvalidLength)?;
    Ok(OutInts {
        ptr,
        len,
        _call: PhantomData,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panic boundary holds with the unwinder this crate links (statically, see
    /// `build.rs`): a panicking body is `PMI_FAIL`, and the caller goes on.
    const TEST_CODES: Codes = Codes {
        success: (0, "OK"),
        errors: [
            (PmiError::Fail, -1, "FAIL"),
            (PmiError::Init, 1, "E1"),
            (PmiError::NoMem, 2, "E2"),
            (PmiError::InvalidArg, 3, "E3"),
            (PmiError::InvalidKey, 4, "E4"),
            (PmiError::InvalidKeyLength, 5, "E5"),
            (PmiError::InvalidVal, 6, "E6"),
            (PmiError::InvalidValLength, 7, "E7"),
            (PmiError::InvalidLength, 8, "E8"),
            (PmiError::InvalidNumArgs, 9, "E9"),
            (PmiError::InvalidArgs, 10, "E10"),
            (PmiError::InvalidNumParsed, 11, "E11"),
            (PmiError::InvalidKeyvalp, 12, "E12"),
            (PmiError::InvalidSize, 13, "E13"),
            (PmiError::InvalidKvs, 14, "E14"),
        ],
    };

    #[test]
    fn a_panic_is_the_fail_code() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let code = guard(&TEST_CODES, |f| f.write_str("T()"), || panic!("injected"));
        std::panic::set_hook(hook);
        assert_eq!(code, -1);
        assert_eq!(guard(&TEST_CODES, |f| f.write_str("T()"), || Ok(())), 0);
        let code = guard(
            &TEST_CODES,
            |f| f.write_str("T()"),
            || Err(PmiError::InvalidKvs),
        );
        assert_eq!(code, 14);
    }
}
