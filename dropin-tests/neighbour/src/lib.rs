//! A Rust static library of the program's own: it allocates, formats, and catches a
//! panic of its own (its unwinder and personality routine must be its own, not
//! libpmi.a's).
use std::ffi::c_int;

/// `2 * x`, through a string; for a negative `x` a panic, caught here: then -1.
#[no_mangle]
pub extern "C" fn neighbour_answer(x: c_int) -> c_int {
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| {
        assert!(x >= 0, "negative");
        format!("{}", 2 * x)
    });
    match caught {
        Ok(text) => text.parse().unwrap_or(-2),
        Err(_) => -1,
    }
}
