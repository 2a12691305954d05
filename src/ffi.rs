//! The only pointer toolbox: the panic boundary, C strings in, ints and strings out.
//! Every export in `api/` converts its arguments here and nowhere else.

use std::ffi::CStr;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use libc::{c_char, c_int};

use crate::error::{PmiError, PmiResult, PMI_FAIL, PMI_SUCCESS};
use crate::trace;

/// Run an export's body: `Ok` → `PMI_SUCCESS`, `Err(e)` → `e.code()`, a panic →
/// `PMI_FAIL`. Nothing unwinds into C. With `PMI_DEBUG`, the call (as `call` writes it,
/// only then) is traced with its return code, without allocating: PMI calls are made
/// from signal handlers.
pub fn guard(
    call: impl Fn(&mut fmt::Formatter<'_>) -> fmt::Result,
    body: impl FnOnce() -> PmiResult<()>,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(body));
    let code = match &result {
        Ok(Ok(())) => PMI_SUCCESS,
        Ok(Err(e)) => e.code(),
        Err(_) => PMI_FAIL,
    };
    if trace::enabled() {
        let call = Call(call);
        match &result {
            Ok(Ok(())) => trace::line(format_args!("{call} = PMI_SUCCESS")),
            Ok(Err(e)) => trace::line(format_args!("{call} = {e}")),
            Err(_) => trace::line(format_args!("{call} = PMI_FAIL (internal error)")),
        }
    }
    code
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
pub unsafe fn bytes_in<'a>(p: *const c_char) -> PmiResult<&'a [u8]> {
    if p.is_null() {
        return Err(PmiError::InvalidArg);
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// A C output parameter, checked for NULL before any work is done and written only on
/// success.
pub struct Out<'a, T>(&'a mut T);

impl<T> Out<'_, T> {
    pub fn set(self, value: T) {
        *self.0 = value;
    }

    /// The current value, for in-out parameters.
    pub fn get(&self) -> &T {
        self.0
    }
}

/// Check an `int *` (or similar) output for NULL → `PMI_ERR_INVALID_ARG`.
///
/// # Safety
/// `p` is NULL or valid for writes of one `T`, and not aliased during the call.
pub unsafe fn out<'a, T>(p: *mut T) -> PmiResult<Out<'a, T>> {
    // SAFETY: the caller promises `p` is NULL or valid and unaliased.
    unsafe { p.as_mut() }.map(Out).ok_or(PmiError::InvalidArg)
}

/// A C string buffer `(buf, length)`, `length` counting the NUL.
pub struct OutStr<'a>(&'a mut [u8]);

impl OutStr<'_> {
    /// Copy `text` and a NUL, or `PMI_ERR_INVALID_LENGTH` with nothing written when it
    /// does not fit. Never truncates.
    pub fn write(self, text: &[u8]) -> PmiResult<()> {
        if text.len() >= self.0.len() {
            return Err(PmiError::InvalidLength);
        }
        self.0[..text.len()].copy_from_slice(text);
        self.0[text.len()] = 0;
        Ok(())
    }

    /// The capacity, NUL included.
    pub fn capacity(&self) -> usize {
        self.0.len()
    }
}

/// Check a string buffer: NULL → `PMI_ERR_INVALID_ARG`, `length < 1` →
/// `PMI_ERR_INVALID_LENGTH`.
///
/// # Safety
/// `buf` is NULL or valid for writes of `length` bytes, and not aliased during the call.
pub unsafe fn out_str<'a>(buf: *mut c_char, length: c_int) -> PmiResult<OutStr<'a>> {
    if buf.is_null() {
        return Err(PmiError::InvalidArg);
    }
    let len = usize::try_from(length)
        .ok()
        .filter(|&n| n > 0)
        .ok_or(PmiError::InvalidLength)?;
    // SAFETY: non-NULL, and the caller promises `length` writable, unaliased bytes.
    Ok(OutStr(unsafe {
        std::slice::from_raw_parts_mut(buf.cast::<u8>(), len)
    }))
}

/// Check an `int ranks[]` output of `length` slots.
///
/// # Safety
/// `p` is NULL or valid for writes of `length` ints, and not aliased during the call.
pub unsafe fn out_ints<'a>(p: *mut c_int, length: c_int) -> PmiResult<&'a mut [c_int]> {
    if p.is_null() {
        return Err(PmiError::InvalidArg);
    }
    let len = usize::try_from(length).map_err(|_| PmiError::InvalidLength)?;
    // SAFETY: non-NULL, and the caller promises `length` writable, unaliased ints.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panic boundary holds with the unwinder this crate links (statically, see
    /// `build.rs`): a panicking body is `PMI_FAIL`, and the caller goes on.
    #[test]
    fn a_panic_is_pmi_fail() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let code = guard(|f| f.write_str("PMI_Test()"), || panic!("injected"));
        std::panic::set_hook(hook);
        assert_eq!(code, PMI_FAIL);
        assert_eq!(guard(|f| f.write_str("PMI_Test()"), || Ok(())), PMI_SUCCESS);
    }
}
