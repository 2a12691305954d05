//! What a caller may pass, written once for both APIs: the checks are methods of
//! [`Api`] (chosen once, at init), which knows which bytes its wire cannot carry. Nothing
//! here does I/O.
//!
//! The rules, for both APIs:
//! - keys, service names and ports are not empty and hold no byte the API's wire cannot
//!   carry; keys are shorter than the key maximum (with its NUL);
//! - values are not empty (MPICH 5.0.2's Hydra kills the job on an empty value, on
//!   either wire) and hold no such byte; shorter than the value maximum; on PMI-1 they do
//!   not end in ` found=TRUE` or ` found=FALSE` (taken for Hydra's field in a reply);
//! - spawn fields (executable, arguments, info and preput values) follow the value rule,
//!   and a request stays within what the servers take.

use crate::api::{Api, Maxes};
use crate::error::{PmiError, PmiResult};
use crate::wire::pmi1::{END_OF_SPAWN, FOUND_FIELDS};
use crate::wire::SpawnCommand;

impl Api {
    /// A byte the API's wire cannot carry in a key, name or port. PMI-1: RFC 13's
    /// `word` (no space, `=`, control character; bytes above 0x7F allowed, Flux names are
    /// not ASCII). PMI-2: a `;` (the wire doubles it, but MPICH's Hydra 4.0.2 and Slurm
    /// 22.05 cut keys and values at the first one all the same, measured).
    fn breaks_name(self, b: u8) -> bool {
        match self {
            Api::Pmi1 => b <= b' ' || b == b'=' || b == 0x7f,
            Api::Pmi2 => b == b';' || b == 0,
        }
    }

    /// A byte the API's wire cannot carry in a value. PMI-1: anything that would end or
    /// corrupt the line (RFC 13's `string` is space, tab and visible characters). PMI-2:
    /// a `;`, as for names.
    fn breaks_value(self, b: u8) -> bool {
        match self {
            Api::Pmi1 => (b < b' ' && b != b'\t') || b == 0x7f,
            Api::Pmi2 => b == b';' || b == 0,
        }
    }

    /// True when `text` is a non-empty name this API's wire carries intact.
    pub fn is_name(self, text: &[u8]) -> bool {
        !text.is_empty() && !any_byte(text, |b| self.breaks_name(b))
    }

    /// A key: a name shorter than `keylen_max` (NUL included).
    pub fn check_key(self, key: &[u8], keylen_max: usize) -> PmiResult<()> {
        require(self.is_name(key), PmiError::InvalidKey)?;
        require(key.len() < keylen_max, PmiError::InvalidKeyLength)
    }

    /// A value: at least one byte, none the wire cannot carry, on PMI-1 none that a
    /// `put` line would carry to its death ([`kills_hydra5`]), shorter than `vallen_max`
    /// (NUL included).
    pub fn check_value(self, value: &[u8], vallen_max: usize) -> PmiResult<()> {
        let put_trap = self == Api::Pmi1 && kills_hydra5(value);
        require(self.value_ok(value) && !put_trap, PmiError::InvalidVal)?;
        require(value.len() < vallen_max, PmiError::InvalidValLength)
    }

    fn value_ok(self, value: &[u8]) -> bool {
        let cut_in_reply = self == Api::Pmi1 && FOUND_FIELDS.iter().any(|f| value.ends_with(f));
        !value.is_empty() && !any_byte(value, |b| self.breaks_value(b)) && !cut_in_reply
    }

    /// Service names and ports: names (Hydra cuts them at a space, the PMI-2 servers at
    /// a `;`), each shorter than `max` (the value maximum, or [`PORT_MAX`] for ports).
    pub fn check_names(self, names: &[&[u8]], max: usize) -> PmiResult<()> {
        require(
            names.iter().all(|w| self.is_name(w) && w.len() < max),
            PmiError::InvalidArg,
        )
    }

    /// A spawn field (executable, argument, info or preput value): a value, which must
    /// not end in `endcmd` either (Hydra's PMI-1 proxy frames a spawn segment at the
    /// first line ending in it, wherever it is).
    fn spawn_field_ok(self, text: &[u8]) -> bool {
        self.value_ok(text) && !text.ends_with(END_OF_SPAWN)
    }

    /// An info or preput key: a key, which must not end in `endcmd` either (its line,
    /// `preput_key_0=KEY`, would end in it as a value's does).
    fn check_spawn_key(self, key: &[u8], max: usize) -> PmiResult<()> {
        self.check_key(key, max)?;
        require(!key.ends_with(END_OF_SPAWN), PmiError::InvalidKey)
    }

    /// Check every field of a spawn request, for every backend.
    ///
    /// Executable names and arguments that would break the framing get
    /// `PMI_ERR_INVALID_ARGS`; preput and info keys follow the key rules and may not end
    /// in `endcmd` either (`PMI_ERR_INVALID_KEY`); preput values
    /// follow the value rules and may not hold a space (Hydra 4.0.2's proxy for the
    /// children crashes on one); info values that would break the framing get
    /// `PMI_ERR_INVALID_VAL`. How many fields a request may have is each wire's own rule
    /// (`wire::pmi1::encode_spawn`, `wire::pmi2::encode`).
    pub fn check_spawn(
        self,
        commands: &[SpawnCommand<'_>],
        preput: &[(&[u8], &[u8])],
        maxes: Maxes,
    ) -> PmiResult<()> {
        for cmd in commands {
            require(!cmd.execname.is_empty(), PmiError::InvalidArgs)?;
            for text in std::iter::once(&cmd.execname).chain(&cmd.args) {
                require(self.spawn_field_ok(text), PmiError::InvalidArgs)?;
            }
            for (key, value) in &cmd.info {
                self.check_spawn_key(key, maxes.key)?;
                require(self.spawn_field_ok(value), PmiError::InvalidVal)?;
                require(value.len() < maxes.value, PmiError::InvalidValLength)?;
            }
        }
        for (key, value) in preput {
            self.check_spawn_key(key, maxes.key)?;
            self.check_value(value, maxes.value)?;
            require(
                self.spawn_field_ok(value) && !value.contains(&b' '),
                PmiError::InvalidVal,
            )?;
        }
        Ok(())
    }
}

/// The ranks of a PMI 1.2 group barrier (`PMI_Barrier_group` with an array of ranks),
/// as every member must name them alike: ascending. Refused before anything is sent:
/// `PMI_ERR_INVALID_SIZE` for a count below 1 or above the job's size;
/// `PMI_ERR_INVALID_ARG` for a rank outside the job, a rank named twice, or a group
/// without this process (the server would wait for ever, or Hydra's proxy assert).
pub fn group_ranks(ranks: &[i32], me: i32, size: i32) -> PmiResult<Vec<i32>> {
    require(
        !ranks.is_empty() && ranks.len() <= size as usize,
        PmiError::InvalidSize,
    )?;
    require(
        ranks.iter().all(|r| (0..size).contains(r)),
        PmiError::InvalidArg,
    )?;
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    require(
        sorted.windows(2).all(|w| w[0] != w[1]) && sorted.binary_search(&me).is_ok(),
        PmiError::InvalidArg,
    )?;
    Ok(sorted)
}

/// A PMI-1 value that MPICH 5.0.2's Hydra cannot parse in a `put` line (a spawn sends its
/// fields a line each), and ends the whole job for (measured): it reads the words after a
/// value's first space as more `key=value` fields, and dies on a value that starts with a
/// space (`value= x`), or has after a space a word that starts with `=` or ends at its
/// first `=` (`a =b`, `a b=`, `a b= c`). Hydra 4 keeps only the first word of any value
/// with a space.
fn kills_hydra5(value: &[u8]) -> bool {
    // (A value without a space, as most are, is found so by one `memchr`.)
    let Some(space) = memchr::memchr(b' ', value) else {
        return false;
    };
    space == 0
        || value[space + 1..]
            .split(|&b| b == b' ')
            .filter(|word| !word.is_empty())
            .any(|word| word[0] == b'=' || memchr::memchr(b'=', word) == Some(word.len() - 1))
}

/// Whether any byte of `text` is `bad`: every byte is looked at, without stopping at the
/// first, which lets the compiler test many at once (the texts are short, and good).
#[inline]
fn any_byte(text: &[u8], bad: impl Fn(u8) -> bool) -> bool {
    text.iter().fold(false, |found, &b| found | bad(b))
}

fn require(ok: bool, err: PmiError) -> PmiResult<()> {
    if ok {
        Ok(())
    } else {
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PMI2_MAXES;

    #[test]
    fn key_rules() {
        let api = Api::Pmi1;
        assert_eq!(api.check_key(b"k0", 64), Ok(()));
        assert_eq!(api.check_key(b"\xc6\x92", 64), Ok(()));
        for bad in [&b""[..], b"a b", b"a=b", b"a\nb", b"a\tb", b"a\x7fb"] {
            assert_eq!(api.check_key(bad, 64), Err(PmiError::InvalidKey), "{bad:?}");
        }
        assert_eq!(api.check_key(&[b'k'; 63], 64), Ok(()));
        assert_eq!(
            api.check_key(&[b'k'; 64], 64),
            Err(PmiError::InvalidKeyLength)
        );
        let api = Api::Pmi2;
        assert_eq!(api.check_key(b"a b=c", 64), Ok(()));
        for bad in [&b""[..], b"a;b", b";"] {
            assert_eq!(api.check_key(bad, 64), Err(PmiError::InvalidKey), "{bad:?}");
        }
    }

    #[test]
    fn value_rules() {
        let api = Api::Pmi1;
        assert_eq!(api.check_value(b"a b\tc=d \xc6\x92", 1024), Ok(()));
        // (Hydra's reply field is refused only at the end, where a reply would lose it.)
        for ok in [
            &b"found=TRUE"[..],
            b"x found=TRUE y",
            b"x found=true",
            b"x  found=FALSE.",
        ] {
            assert_eq!(api.check_value(ok, 1024), Ok(()), "{ok:?}");
        }
        // What MPICH 5.0.2's Hydra parses (it keeps the first word) and what it dies of.
        for ok in [
            &b"=x"[..],
            b"a=",
            b"x ",
            b"a  b",
            b"a b=c d",
            b"a b==c",
            b"a b=c=",
            b"a \\=b",
        ] {
            assert_eq!(api.check_value(ok, 1024), Ok(()), "{ok:?}");
        }
        for bad in [
            &b""[..],
            b"a\nb",
            b"a\rb",
            b"\x01",
            b"\x7f",
            b"x found=TRUE",
            b" found=FALSE",
            b" x",
            b"  ",
            b"a =b",
            b"a  =b",
            b"a b=",
            b"a b= c",
            b"a b c=",
            b"a b=c =d",
        ] {
            assert_eq!(
                api.check_value(bad, 1024),
                Err(PmiError::InvalidVal),
                "{bad:?}"
            );
        }
        assert_eq!(api.check_value(&[b'v'; 1023], 1024), Ok(()));
        assert_eq!(
            api.check_value(&[b'v'; 1024], 1024),
            Err(PmiError::InvalidValLength)
        );
        // PMI-2: an empty value is refused as on PMI-1 (MPICH 5.0.2's mpiexec exits 255
        // on `value=;`), and so is a `;`.
        let api = Api::Pmi2;
        assert_eq!(api.check_value(b"a b\nc=d", 1024), Ok(()));
        assert_eq!(api.check_value(b"x found=TRUE", 1024), Ok(()));
        for bad in [&b""[..], b"a;b", b";"] {
            assert_eq!(
                api.check_value(bad, 1024),
                Err(PmiError::InvalidVal),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn names_and_ports() {
        assert_eq!(Api::Pmi1.check_names(&[b"svc", b"port"], 256), Ok(()));
        assert_eq!(
            Api::Pmi1.check_names(&[b"s v"], 256),
            Err(PmiError::InvalidArg)
        );
        assert_eq!(
            Api::Pmi2.check_names(&[b"tcp://h;1"], 256),
            Err(PmiError::InvalidArg)
        );
        assert_eq!(
            Api::Pmi2.check_names(&[&[b'p'; 256]], 256),
            Err(PmiError::InvalidArg)
        );
    }

    #[test]
    fn spawn_rules_for_both_apis() {
        let ok = SpawnCommand {
            execname: b"/bin/prog",
            args: vec![b"a"],
            maxprocs: 1,
            info: vec![],
        };
        for api in [Api::Pmi1, Api::Pmi2] {
            assert_eq!(
                api.check_spawn(std::slice::from_ref(&ok), &[], PMI2_MAXES),
                Ok(())
            );
            let mut empty = ok.clone();
            empty.args = vec![b""];
            assert_eq!(
                api.check_spawn(&[empty], &[], PMI2_MAXES),
                Err(PmiError::InvalidArgs)
            );
            assert_eq!(
                api.check_spawn(std::slice::from_ref(&ok), &[(b"k", b"")], PMI2_MAXES),
                Err(PmiError::InvalidVal)
            );
        }
        let mut semi = ok.clone();
        semi.args = vec![b"a;b"];
        assert_eq!(
            Api::Pmi2.check_spawn(&[semi.clone()], &[], PMI2_MAXES),
            Err(PmiError::InvalidArgs)
        );
        assert_eq!(Api::Pmi1.check_spawn(&[semi], &[], PMI2_MAXES), Ok(()));
        assert_eq!(
            Api::Pmi2.check_spawn(&[ok], &[(b"k", b"x;y")], PMI2_MAXES),
            Err(PmiError::InvalidVal)
        );
    }

    #[test]
    fn group_ranks_are_sorted_and_checked() {
        assert_eq!(group_ranks(&[5, 0, 1], 1, 8), Ok(vec![0, 1, 5]));
        assert_eq!(group_ranks(&[3], 3, 4), Ok(vec![3]));
        for (ranks, err) in [
            (&[][..], PmiError::InvalidSize),
            (&[0, 1, 2, 3, 0][..], PmiError::InvalidSize),
            (&[0, 4][..], PmiError::InvalidArg),
            (&[-1, 0][..], PmiError::InvalidArg),
            (&[0, 1, 1][..], PmiError::InvalidArg),
            (&[2, 3][..], PmiError::InvalidArg),
        ] {
            assert_eq!(group_ranks(ranks, 0, 4), Err(err), "{ranks:?}");
        }
    }

    fn spawn_of(args: &[&'static [u8]]) -> SpawnCommand<'static> {
        SpawnCommand {
            execname: b"/bin/prog",
            args: args.to_vec(),
            maxprocs: 2,
            info: vec![],
        }
    }

    #[test]
    fn pmi1_spawn_fields_that_would_break_the_framing_are_refused() {
        // What Hydra's PMI-1 proxy cannot frame: a line end, or a line ending in `endcmd`.
        let check = |commands: &[SpawnCommand<'_>], preput: &[(&[u8], &[u8])]| {
            Api::Pmi1.check_spawn(commands, preput, PMI2_MAXES)
        };
        let bad_args: &[&[u8]] = &[b"a\nb", b"x\r", b"stop endcmd", b"endcmd"];
        for arg in bad_args {
            let r = check(&[spawn_of(&[arg])], &[]);
            assert_eq!(r, Err(PmiError::InvalidArgs), "{arg:?}");
        }
        let exec = SpawnCommand {
            execname: b"/bin/endcmd",
            ..spawn_of(&[])
        };
        assert_eq!(check(&[exec], &[]), Err(PmiError::InvalidArgs));
        let empty = SpawnCommand {
            execname: b"",
            ..spawn_of(&[])
        };
        assert_eq!(check(&[empty], &[]), Err(PmiError::InvalidArgs));
        let ok = [spawn_of(&[b"\t", b"endcmd x"])];
        assert_eq!(check(&ok, &[]), Ok(()));
        let empty_arg = [spawn_of(&[b"x", b""])];
        assert_eq!(check(&empty_arg, &[]), Err(PmiError::InvalidArgs));
        let cases: &[(&[u8], &[u8], PmiError)] = &[
            (b"k k", b"v", PmiError::InvalidKey),
            (b"", b"v", PmiError::InvalidKey),
            (b"k", b"a b", PmiError::InvalidVal),
            (b"k", b"a\nb", PmiError::InvalidVal),
            (b"k", b"xendcmd", PmiError::InvalidVal),
            (b"k", b"", PmiError::InvalidVal),
            (b"xendcmd", b"v", PmiError::InvalidKey),
            (b"endcmd", b"v", PmiError::InvalidKey),
        ];
        for (key, value, err) in cases {
            let r = check(&ok, &[(key, value)]);
            assert_eq!(r, Err(*err), "preput {key:?}={value:?}");
        }
        let mut info = spawn_of(&[]);
        info.info = vec![(b"wdir", b"/tmp/endcmd")];
        assert_eq!(check(&[info.clone()], &[]), Err(PmiError::InvalidVal));
        info.info = vec![(b"myendcmd", b"/tmp")];
        assert_eq!(check(&[info], &[]), Err(PmiError::InvalidKey));
        let fine_key = [(&b"endcmd_x"[..], &b"v"[..])];
        assert_eq!(check(&ok, &fine_key), Ok(()));
    }
}
