//! The PMI command-line options that `PMI_Parse_option` and `PMI_Args_to_keyval`
//! recognise: pure, no C types.
//!
//! A PMI option is an argument naming a `PMI_`-prefixed key:
//! - `PMI_KEY=VALUE`, `-PMI_KEY=VALUE` or `--PMI_KEY=VALUE`: one argument;
//! - `-PMI_KEY VALUE` or `--PMI_KEY VALUE`: two arguments (at the very end, with no
//!   value following, the value is empty).
//!
//! A bare `PMI_KEY` with neither dash nor `=` is left to the program. The key is kept
//! without its dashes; the value may be empty.

/// One recognised option: its key and value, and how many arguments it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmiOption<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub args: usize,
}

const PREFIX: &[u8] = b"PMI_";

/// The PMI option at the start of `args`, if there is one.
pub fn option_at<'a>(args: &[&'a [u8]]) -> Option<PmiOption<'a>> {
    let first = *args.first()?;
    let name = first
        .strip_prefix(b"--")
        .or_else(|| first.strip_prefix(b"-"));
    let dashed = name.is_some();
    let name = name.unwrap_or(first);
    if !name.starts_with(PREFIX) {
        return None;
    }
    if let Some(eq) = name.iter().position(|&b| b == b'=') {
        return Some(PmiOption {
            key: &name[..eq],
            value: &name[eq + 1..],
            args: 1,
        });
    }
    if !dashed {
        return None;
    }
    Some(match args.get(1) {
        Some(value) => PmiOption {
            key: name,
            value,
            args: 2,
        },
        None => PmiOption {
            key: name,
            value: b"",
            args: 1,
        },
    })
}

/// The contiguous PMI options at the start of `args` (`PMI_Parse_option`), and the
/// number of arguments they took.
pub fn leading_options<'a>(args: &[&'a [u8]]) -> (Vec<PmiOption<'a>>, usize) {
    let mut found = Vec::new();
    let mut used = 0;
    while let Some(option) = option_at(&args[used..]) {
        used += option.args;
        found.push(option);
    }
    (found, used)
}

/// Every PMI option in `argv` after the program name (`PMI_Args_to_keyval`), and the
/// indices of the arguments that remain, in order (the program name first).
pub fn split_options<'a>(argv: &[&'a [u8]]) -> (Vec<PmiOption<'a>>, Vec<usize>) {
    let mut found = Vec::new();
    let mut kept = Vec::with_capacity(argv.len());
    if argv.is_empty() {
        return (found, kept);
    }
    kept.push(0);
    let mut i = 1;
    while i < argv.len() {
        match option_at(&argv[i..]) {
            Some(option) => {
                i += option.args;
                found.push(option);
            }
            None => {
                kept.push(i);
                i += 1;
            }
        }
    }
    (found, kept)
}

/// What `PMI_Get_options` describes.
pub const DESCRIPTION: &str = "PMI options: PMI_KEY=VALUE, -PMI_KEY=VALUE or -PMI_KEY VALUE \
(one or two dashes) pass KEY=VALUE to PMI_Spawn_multiple; this library interprets none \
of them. Environment: PMI_FD, PMI_PORT, PMI_ID, PMI_RANK, PMI_SIZE, PMI_SPAWNED, PMI_DEBUG.";

#[cfg(test)]
mod tests {
    use super::*;

    fn opt<'a>(key: &'a str, value: &'a str, args: usize) -> PmiOption<'a> {
        PmiOption {
            key: key.as_bytes(),
            value: value.as_bytes(),
            args,
        }
    }

    #[test]
    fn recognised_forms() {
        let cases: &[(&[&str], Option<PmiOption<'_>>)] = &[
            (&["PMI_FOO=bar"], Some(opt("PMI_FOO", "bar", 1))),
            (&["-PMI_FOO=bar"], Some(opt("PMI_FOO", "bar", 1))),
            (&["--PMI_FOO=a=b c"], Some(opt("PMI_FOO", "a=b c", 1))),
            (&["PMI_EMPTY="], Some(opt("PMI_EMPTY", "", 1))),
            (&["-PMI_Q", "v"], Some(opt("PMI_Q", "v", 2))),
            (&["--PMI_Q", "v w"], Some(opt("PMI_Q", "v w", 2))),
            (&["-PMI_LAST"], Some(opt("PMI_LAST", "", 1))),
            (&["PMI_BARE", "x"], None),
            (&["-x", "PMI_A=1"], None),
            (&["---PMI_A=1"], None),
            (&["pmi_a=1"], None),
            (&["other"], None),
            (&[], None),
        ];
        for (args, want) in cases {
            let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            assert_eq!(option_at(&args), *want, "{args:?}");
        }
    }

    #[test]
    fn leading_options_stop_at_the_first_other_argument() {
        let args: Vec<&[u8]> = ["PMI_A=1", "-PMI_B", "2", "prog", "PMI_C=3"]
            .iter()
            .map(|a| a.as_bytes())
            .collect();
        let (found, used) = leading_options(&args);
        assert_eq!(found, vec![opt("PMI_A", "1", 1), opt("PMI_B", "2", 2)]);
        assert_eq!(used, 3);
        assert_eq!(leading_options(&args[3..]), (vec![], 0));
    }

    #[test]
    fn split_options_keeps_the_program_name_and_other_arguments() {
        let argv: Vec<&[u8]> = ["PMI_X=prog", "a", "PMI_A=1", "-v", "--PMI_B", "2", "b"]
            .iter()
            .map(|a| a.as_bytes())
            .collect();
        let (found, kept) = split_options(&argv);
        assert_eq!(found, vec![opt("PMI_A", "1", 1), opt("PMI_B", "2", 2)]);
        assert_eq!(kept, vec![0, 1, 3, 6]);
        assert_eq!(split_options(&[]), (vec![], vec![]));
    }
}
