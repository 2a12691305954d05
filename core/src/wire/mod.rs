//! The ground floor: the two wire formats, pure. No I/O, no C types, and nothing of the
//! library above it (the connection moves their bytes, the backends say which message to
//! send, `rules` says what a caller may put in one).
//!
//! - this file: what both wires share: how a message is found in the bytes read
//!   ([`Framing`]), RFC 13's integers, and what a spawn request carries;
//! - [`pmi1`]: the PMI-1.1 line format (`cmd=put kvsname=.. key=.. value=..\n`);
//! - [`pmi2`]: the PMI-2 frame format (`     NNcmd=kvs-put;key=..;value=..;`).

pub mod pmi1;
pub mod pmi2;

use std::ops::Range;

/// What a framing's `find` answers about the unread bytes: `Ok(Some((message, taken)))`
/// when a whole message lies in them (its range, and how many bytes it used up, relative
/// to the unread bytes), `Ok(None)` to read more, or `Err(why)` for bytes that cannot
/// start a message.
pub type Scan = Result<Option<(Range<usize>, usize)>, &'static str>;

/// How a wire format's messages are found in the bytes read. A message may not be
/// longer than `cap` bytes; a reply awaited is named `cmd=<awaited><suffix>` in messages.
/// Each format has its own ([`pmi1::LINES`], [`pmi2::FRAMES`]).
pub struct Framing {
    pub cap: usize,
    pub suffix: &'static str,
    pub find: fn(&[u8]) -> Scan,
}

/// One command of a spawn request: the same on both wires (and under PMIx).
#[derive(Debug, Clone, Default)]
pub struct SpawnCommand<'a> {
    pub execname: &'a [u8],
    pub args: Vec<&'a [u8]>,
    pub maxprocs: u32,
    pub info: Vec<(&'a [u8], &'a [u8])>,
}

/// The digits of an integer, as RFC 13's `int`: what [`format_int`] writes into.
pub type IntDigits = [u8; 20];

/// `n` in decimal, written at the end of `buf`; returns the digits (and sign). No
/// formatting machinery and no allocation: PMI-2 writes a length and a rank this way on
/// its hot path, and an abort from a signal handler its exit code.
pub fn format_int(n: i64, buf: &mut IntDigits) -> &[u8] {
    let mut at = buf.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// A decimal integer with an optional sign, as RFC 13's `int`; `None` on anything else
/// or on overflow.
pub fn parse_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    Some(if negative { -n } else { n })
}

/// A comma-separated list of C `int`s (`errcodes=0,-1,2`, PMI-2's `localRanks`); `None`
/// when one is not an integer that fits an `int`, or there are more than `most`.
pub fn parse_int_list(text: &[u8], most: usize) -> Option<Vec<i32>> {
    let items = text.split(|&b| b == b',');
    if items.clone().count() > most {
        return None;
    }
    items
        .map(|item| parse_int(item).and_then(|n| i32::try_from(n).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_int_writes_what_parse_int_reads() {
        let mut buf = IntDigits::default();
        for n in [0, 7, -1, 42, 999_999, -2_147_483_648, i64::MAX] {
            let text = format_int(n, &mut buf).to_vec();
            assert_eq!(text, n.to_string().as_bytes());
            assert_eq!(parse_int(&text), Some(n));
        }
        // The longest (parse_int takes its magnitude as positive first: overflow).
        assert_eq!(
            format_int(i64::MIN, &mut buf),
            i64::MIN.to_string().as_bytes()
        );
    }

    #[test]
    fn parse_int_is_strict() {
        assert_eq!(parse_int(b"-1"), Some(-1));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"0012"), Some(12));
        for bad in [
            &b""[..],
            b"-",
            b"1x",
            b" 1",
            b"99999999999999999999",
            b"0x10",
        ] {
            assert_eq!(parse_int(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn int_lists() {
        assert_eq!(parse_int_list(b"0,-1,2", 3), Some(vec![0, -1, 2]));
        assert_eq!(parse_int_list(b"5", 3), Some(vec![5]));
        for bad in [&b"0,1,2,3"[..], b"0,x", b"1,2,99999999999", b"", b"1,,2"] {
            assert_eq!(parse_int_list(bad, 3), None, "{bad:?}");
        }
    }
}
