//! The mapping parser and generator, and the task map parser, from tables of strings
//! whose rows name their source, and from properties checked against a simulation of
//! each layout.
use super::generate::*;
use super::parse::*;
use super::taskmap::*;
use super::*;
use proptest::prelude::*;

#[test]
fn a_layout_too_long_to_write_out_is_given_as_one_cycle() {
    let cyclic: Vec<u64> = (0..1024).map(|r| r % 2).collect();
    assert_eq!(cycle_of(&cyclic, 4095).as_deref(), Some("(vector,(0,2,1))"));
    let blocks: Vec<u64> = (0..1024).map(|r| r / 512).collect();
    assert_eq!(
        cycle_of(&blocks, 4095).as_deref(),
        Some("(vector,(0,2,512))")
    );
    // Short enough: every rank, as before.
    let few: Vec<u64> = (0..6).map(|r| r % 2).collect();
    assert_eq!(
        cycle_of(&few, 4095).as_deref(),
        Some("(vector,(0,2,1),(0,2,1),(0,2,1))")
    );
    // A last cycle cut short: 0,0,1 | 0,0,1 | 0.
    let cut = [0, 0, 1, 0, 0, 1, 0];
    assert_eq!(
        cycle_of(&cut, 30).as_deref(),
        Some("(vector,(0,1,2),(1,1,1))")
    );
    // No cycle short enough (the Thue-Morse sequence has none): nothing.
    let irregular: Vec<u64> = (0..4000u64)
        .map(|r| u64::from(r.count_ones() % 2))
        .collect();
    assert_eq!(cycle_of(&irregular, 100), None);
    assert_eq!(shortest_period(&[5]), 1);
    assert_eq!(shortest_period(&[1, 2, 1, 2, 1]), 2);
    assert_eq!(shortest_period(&[1, 1, 2]), 3);
}

proptest! {
    /// However it is written, the text places every rank on its node.
    #[test]
    fn a_cycle_places_every_rank(
        cycle in prop::collection::vec(0u64..4, 1..8),
        size in 1usize..300,
        room in 16usize..200,
    ) {
        let nodes: Vec<u64> = (0..size).map(|r| cycle[r % cycle.len()]).collect();
        if let Some(text) = cycle_of(&nodes, room) {
            prop_assert!(text.len() <= room);
            let mapping = Mapping::parse(text.as_bytes()).unwrap();
            for (rank, &node) in nodes.iter().enumerate() {
                prop_assert_eq!(mapping.node_of(rank as u32, size as u32), Some(node));
            }
        }
    }
}

/// A valid mapping string, where it comes from, and expected cliques.
struct Valid {
    source: &'static str,
    text: &'static str,
    size: u32,
    cliques: &'static [(u32, &'static [u32])],
}

const VALID: &[Valid] = &[
    Valid {
        source: "RFC 13, 2*2 block",
        text: "(vector,(0,2,2))",
        size: 4,
        cliques: &[(0, &[0, 1]), (1, &[0, 1]), (2, &[2, 3]), (3, &[2, 3])],
    },
    Valid {
        source: "RFC 13, 2*2 cyclic",
        text: "(vector,(0,2,1),(0,2,1))",
        size: 4,
        cliques: &[(0, &[0, 2]), (1, &[1, 3]), (2, &[0, 2]), (3, &[1, 3])],
    },
    Valid {
        source: "RFC 13, 2*4 block",
        text: "(vector,(0,2,4))",
        size: 8,
        cliques: &[(0, &[0, 1, 2, 3]), (5, &[4, 5, 6, 7])],
    },
    Valid {
        source: "RFC 13, 2*4 cyclic",
        text: "(vector,(0,2,1),(0,2,1),(0,2,1),(0,2,1))",
        size: 8,
        cliques: &[(0, &[0, 2, 4, 6]), (7, &[1, 3, 5, 7])],
    },
    Valid {
        source: "RFC 13, 2*2 + 2*4 block",
        text: "(vector,(0,2,2),(2,2,4))",
        size: 12,
        cliques: &[
            (1, &[0, 1]),
            (2, &[2, 3]),
            (4, &[4, 5, 6, 7]),
            (11, &[8, 9, 10, 11]),
        ],
    },
    Valid {
        source: "RFC 13, 2*2 + 2*4 cyclic",
        text: "(vector,(0,4,1),(0,4,1),(2,2,1),(2,2,1))",
        size: 12,
        cliques: &[
            (0, &[0, 4]),
            (5, &[1, 5]),
            (2, &[2, 6, 8, 10]),
            (11, &[3, 7, 9, 11]),
        ],
    },
    Valid {
        source: "RFC 13, 4096*256 block",
        text: "(vector,(0,4096,256))",
        size: 1_048_576,
        cliques: &[(0, &[]), (255, &[]), (256, &[]), (1_048_575, &[])],
    },
    Valid {
        source: "Hydra 4.0.2, -n 2",
        text: "(vector,(0,1,1))",
        size: 2,
        cliques: &[(0, &[0, 1]), (1, &[0, 1])],
    },
    Valid {
        source: "Hydra 4.0.2, -hosts a:2,b:2 -n 4",
        text: "(vector,(0,2,2))",
        size: 4,
        cliques: &[(0, &[0, 1]), (3, &[2, 3])],
    },
    Valid {
        source: "Hydra 4.0.2, -hosts a:1,b:1 -n 4 (round robin)",
        text: "(vector,(0,2,1))",
        size: 4,
        cliques: &[(0, &[0, 2]), (1, &[1, 3]), (2, &[0, 2]), (3, &[1, 3])],
    },
    Valid {
        source: "Hydra 4.0.2, -hosts a:3,b:1 -n 6",
        text: "(vector,(0,1,3),(1,1,1))",
        size: 6,
        cliques: &[(0, &[0, 1, 2, 4, 5]), (3, &[3]), (5, &[0, 1, 2, 4, 5])],
    },
    Valid {
        source: "Hydra 4.0.2, -hosts a:2,b:1,c:3 -n 9",
        text: "(vector,(0,1,2),(1,1,1),(2,1,3))",
        size: 9,
        cliques: &[
            (0, &[0, 1, 6, 7]),
            (2, &[2, 8]),
            (4, &[3, 4, 5]),
            (7, &[0, 1, 6, 7]),
        ],
    },
    Valid {
        source: "Hydra 4.0.2, 2 spawned children on node 1",
        text: "(vector,(1,1,4))",
        size: 2,
        cliques: &[(0, &[0, 1]), (1, &[0, 1])],
    },
    Valid {
        source: "MPICH 4.1+, bare node ids",
        text: "(vector,0,1,2)",
        size: 7,
        cliques: &[(0, &[0, 3, 6]), (4, &[1, 4]), (5, &[2, 5])],
    },
    Valid {
        source: "MPICH 4.1+, repeat group of bare ids",
        text: "(vector,[0,1]x2)",
        size: 4,
        cliques: &[(0, &[0, 2]), (3, &[1, 3])],
    },
    Valid {
        source: "MPICH 4.1+, repeat group then block",
        text: "(vector,[(0,2,1)]x3,(2,1,2))",
        size: 10,
        cliques: &[(0, &[0, 2, 4, 8]), (3, &[1, 3, 5, 9]), (7, &[6, 7])],
    },
    Valid {
        source: "MPICH 4.1+, nested groups",
        text: "(vector,[[0]x2,1]x2)",
        size: 6,
        cliques: &[(0, &[0, 1, 3, 4]), (2, &[2, 5])],
    },
    Valid {
        source: "MPICH 4.1+, nested groups with a zero repeat",
        text: "(vector,[[5]x0,[(0,2,1)]x2]x1,7)",
        size: 6,
        cliques: &[(0, &[0, 2, 5]), (1, &[1, 3]), (4, &[4]), (5, &[0, 2, 5])],
    },
    Valid {
        source: "whitespace around every token",
        text: " ( vector , ( 0 , 2 , 2 ) ) ",
        size: 4,
        cliques: &[(0, &[0, 1]), (2, &[2, 3])],
    },
    Valid {
        source: "tabs and spaces in groups",
        text: "(\tvector\t,[ 0 ,\t1 ] x 2 )\t",
        size: 4,
        cliques: &[(0, &[0, 2]), (1, &[1, 3])],
    },
    Valid {
        source: "leading zeros are plain digits",
        text: "(vector,(00,002,01))",
        size: 2,
        cliques: &[(0, &[0]), (1, &[1])],
    },
    Valid {
        source: "empty blocks among others",
        text: "(vector,(9,0,5),(0,1,2),(8,3,0))",
        size: 3,
        cliques: &[(2, &[0, 1, 2])],
    },
];

/// Spelled out: (mapping, size, the same placement written in full or None).
#[test]
fn repeating_mappings_are_spelled_out() {
    let rows: &[(&str, u32, Option<&str>)] = &[
        // Hydra 4.0.2, `-n 4` on one host without slot counts (FIELD-NOTES).
        ("(vector,(0,1,1))", 4, Some("(vector,(0,1,4))")),
        // Hydra 4.0.2, `-hosts a:1,b:1 -n 4`: round robin.
        ("(vector,(0,2,1))", 4, Some("(vector,(0,2,1),(0,2,1))")),
        // Hydra 4.0.2, `-hosts a:3,b:1 -n 6`: ranks 4 and 5 back on node 0.
        (
            "(vector,(0,1,3),(1,1,1))",
            6,
            Some("(vector,(0,1,3),(1,1,1),(0,1,2))"),
        ),
        // MPICH 4.1+ repeat groups.
        (
            "(vector,[(0,2,1)]x2)",
            6,
            Some("(vector,(0,2,1),(0,2,1),(0,2,1))"),
        ),
        ("(vector,0)", 3, Some("(vector,(0,1,3))")),
        ("(vector,(0,2,2))", 1, Some("(vector,(0,1,1))")),
        // Too long for the room given, and too many ranks to walk.
        ("(vector,(0,2,1))", 400, None),
        ("(vector,(0,1,1))", SPELL_OUT_MAX_RANKS + 1, None),
    ];
    for &(text, size, want) in rows {
        let mapping = Mapping::parse(text.as_bytes()).unwrap();
        assert_eq!(
            mapping.spelled_out(size, 1023).as_deref(),
            want,
            "{text} x {size}"
        );
    }
    assert!(Mapping::parse(b"(vector,(0,1,1))")
        .unwrap()
        .repeats_within(2));
    assert!(!Mapping::parse(b"(vector,(0,1,16))")
        .unwrap()
        .repeats_within(4));
}

proptest! {
    /// Written out, a mapping places every rank on the same node, needs no cycle, and
    /// fits in the room given.
    #[test]
    fn spelled_out_keeps_every_rank_in_place(layout in layouts(), room in 16usize..2048) {
        let mapping = Mapping::parse(encode_rfc13(&layout).as_bytes()).unwrap();
        let (size, nodes) = (layout.size, simulate(&layout));
        if let Some(full) = mapping.spelled_out(size, room) {
            prop_assert!(full.len() <= room);
            let again = Mapping::parse(full.as_bytes()).unwrap();
            prop_assert!(!again.repeats_within(size));
            for (rank, &node) in (0..size).zip(&nodes) {
                prop_assert_eq!(again.node_of(rank, size), Some(node));
            }
        }
    }
}

#[test]
fn valid_strings() {
    for row in VALID {
        let mapping = Mapping::parse(row.text.as_bytes())
            .unwrap_or_else(|e| panic!("{} ({}): {e}", row.source, row.text));
        for &(rank, expected) in row.cliques {
            let clique = mapping.clique(rank, row.size).unwrap();
            if !expected.is_empty() {
                assert_eq!(clique, expected, "{}: rank {rank}", row.source);
            }
            assert!(clique.contains(&rank), "{}: rank {rank}", row.source);
            assert_eq!(
                mapping.clique_size(rank, row.size),
                Some(clique.len()),
                "{}: rank {rank}",
                row.source
            );
        }
    }
}

#[test]
fn rfc13_large_block_cliques() {
    let mapping = Mapping::parse(b"(vector,(0,4096,256))").unwrap();
    let size = 1_048_576;
    for rank in [0, 255, 256, 1_000_000, 1_048_575] {
        let base = rank / 256 * 256;
        let expected: Vec<u32> = (base..base + 256).collect();
        assert_eq!(mapping.clique(rank, size).unwrap(), expected);
        assert_eq!(mapping.node_of(rank, size), Some(u64::from(rank / 256)));
    }
}

#[test]
fn invalid_strings() {
    let deep = [b"(vector,".as_slice(), &[b'['; 10_000]].concat();
    let table: &[(&[u8], &str)] = &[
        (b"", EMPTY),
        (b" \t ", EMPTY),
        (b"vector", EXPECTED_OPEN),
        (b"(vector)", EXPECTED_COMMA),
        (b"(vector,)", EXPECTED_ITEM),
        (b"(vector,(0,1))", EXPECTED_COMMA),
        (b"(vector,(0,1,1,1))", EXPECTED_CLOSE),
        (b"(vector,(-1,1,1))", EXPECTED_NUMBER),
        (b"(vector,(+1,1,1))", EXPECTED_NUMBER),
        (b"(vector,-1)", EXPECTED_ITEM),
        (b"(vector,(18446744073709551616,1,1))", OVERFLOW),
        (b"(vector,(0,1,99999999999999999999))", OVERFLOW),
        (b"(vector,[0]x18446744073709551616)", OVERFLOW),
        (b"(vector,(18446744073709551615,2,1))", NODE_OVERFLOW),
        (b"(vector,(0,0,0))", NO_RANKS),
        (b"(vector,(0,5,0),(3,0,7))", NO_RANKS),
        (b"(vector,[0]x0)", NO_RANKS),
        (b"(vector,[[(0,1,1)]x0]x4000000000)", NO_RANKS),
        (b"(vector,(0,1,1)", EXPECTED_NEXT_ITEM),
        (b"(vector,(0,1,1", EXPECTED_CLOSE),
        (b"(vector,[0,1)", EXPECTED_NEXT_IN_GROUP),
        (b"(vector,[0,1]", EXPECTED_TIMES),
        (b"(vector,[0,1]x)", EXPECTED_NUMBER),
        (b"(vector,[0,1]X2)", EXPECTED_TIMES),
        (b"(vector,[]x2)", EXPECTED_ITEM),
        (b"(vector,0x2)", EXPECTED_NEXT_ITEM),
        (b"(vector,(0,1,1)))", TRAILING),
        (b"(vector,(0,1,1)) junk", TRAILING),
        (b"(vector,(0,1,1))\n", TRAILING),
        (b"(vector,(0,1,1))\0", TRAILING),
        (b"(VECTOR,(0,1,1))", EXPECTED_VECTOR),
        (b"(vec tor,(0,1,1))", EXPECTED_VECTOR),
        (b"(vector,(0,,1))", EXPECTED_NUMBER),
        (b"(vector,(0 1,1))", EXPECTED_COMMA),
        (b"(vector,(0,1,1),)", EXPECTED_ITEM),
        (b"(vector,(\xff,1,1))", EXPECTED_NUMBER),
        (b"\xc3\xa9(vector,(0,1,1))", EXPECTED_OPEN),
        (&deep, TOO_DEEP),
    ];
    for &(text, reason) in table {
        let error = Mapping::parse(text).expect_err(&String::from_utf8_lossy(text));
        assert_eq!(error.reason, reason, "{:?}", String::from_utf8_lossy(text));
        assert!(error.offset <= text.len());
    }
}

#[test]
fn error_offsets_and_display() {
    let error = Mapping::parse(b"(vector,(0,1))").unwrap_err();
    assert_eq!(error.offset, 12);
    assert_eq!(error.to_string(), "expected ',' at byte 12");
    let error = Mapping::parse(b"(vector,(18446744073709551616,1,1))").unwrap_err();
    assert_eq!(error.offset, 9);
}

#[test]
fn nesting_limit_is_64() {
    let nested = |depth: usize| format!("(vector,{}0{})", "[".repeat(depth), "]x1".repeat(depth));
    let mapping = Mapping::parse(nested(MAX_DEPTH).as_bytes()).unwrap();
    assert_eq!(mapping.clique(0, 3), Some(vec![0, 1, 2]));
    let error = Mapping::parse(nested(MAX_DEPTH + 1).as_bytes()).unwrap_err();
    assert_eq!(error.reason, TOO_DEEP);
}

#[test]
fn big_job_clique_is_computed_directly() {
    let mapping = Mapping::parse(b"(vector,(0,4096,256))").unwrap();
    let clique = mapping.clique(1_000_000, 1_048_576).unwrap();
    assert_eq!(clique.len(), 256);
    assert_eq!(clique[0], 999_936);
    assert_eq!(mapping.clique_size(1_000_000, 1_048_576), Some(256));
}

#[test]
fn out_of_range_ranks() {
    let mapping = Mapping::parse(b"(vector,(0,2,1))").unwrap();
    assert_eq!(mapping.node_of(0, 0), None);
    assert_eq!(mapping.clique(0, 0), None);
    assert_eq!(mapping.clique_size(0, 0), None);
    assert_eq!(mapping.node_of(4, 4), None);
    assert_eq!(mapping.clique(5, 4), None);
    assert_eq!(mapping.clique_size(u32::MAX, u32::MAX), None);
    assert_eq!(mapping.node_of(3, 4), Some(1));
}

#[test]
fn huge_repeat_counts_are_not_expanded() {
    let mapping = Mapping::parse(b"(vector,[(0,1,1)]x4000000000)").unwrap();
    let all: Vec<u32> = (0..10).collect();
    assert_eq!(mapping.clique(3, 10), Some(all));
    assert_eq!(mapping.clique_size(9, 10), Some(10));
    assert_eq!(mapping.node_of(9, 10), Some(0));

    let mapping =
        Mapping::parse(b"(vector,[[1]x18446744073709551615]x18446744073709551615,0)").unwrap();
    assert_eq!(mapping.node_of(u32::MAX - 1, u32::MAX), Some(1));
    assert_eq!(mapping.clique_size(0, u32::MAX), Some(u32::MAX as usize));
    assert_eq!(mapping.clique(0, 5), Some(vec![0, 1, 2, 3, 4]));
}

#[test]
fn huge_numbers_saturate_without_overflow() {
    let mapping = Mapping::parse(b"(vector,(18446744073709551615,1,1))").unwrap();
    assert_eq!(mapping.node_of(7, 8), Some(u64::MAX));
    assert_eq!(mapping.clique_size(7, 8), Some(8));

    let mapping = Mapping::parse(b"(vector,(0,1,18446744073709551615),(1,1,1))").unwrap();
    assert_eq!(mapping.clique_size(0, u32::MAX), Some(u32::MAX as usize));
    assert_eq!(mapping.node_of(u32::MAX - 1, u32::MAX), Some(0));

    // Rank 1 is the only one on node 1 even in the largest job.
    let mapping = Mapping::parse(b"(vector,0,1,[0]x18446744073709551615)").unwrap();
    assert_eq!(mapping.clique(1, u32::MAX), Some(vec![1]));
    assert_eq!(
        mapping.clique_size(2, u32::MAX),
        Some(u32::MAX as usize - 1)
    );
}

// ----- properties -----------------------------------------------------

/// A job layout as Hydra sees it: hosts with slot counts and a placement.
#[derive(Debug, Clone)]
struct Layout {
    slots: Vec<u64>,
    round_robin: bool,
    size: u32,
}

fn layouts() -> impl Strategy<Value = Layout> {
    (
        prop::collection::vec(1u64..=4, 1..16),
        any::<bool>(),
        1u32..200,
    )
        .prop_map(|(slots, round_robin, size)| Layout {
            slots,
            round_robin,
            size,
        })
}

/// Node of every rank, placed the way Hydra does it.
fn simulate(layout: &Layout) -> Vec<u64> {
    let size = layout.size as usize;
    let hosts = layout.slots.len() as u64;
    if layout.round_robin {
        return (0..layout.size)
            .map(|rank| u64::from(rank) % hosts)
            .collect();
    }
    let mut nodes = Vec::with_capacity(size);
    while nodes.len() < size {
        for (host, &slots) in (0u64..).zip(&layout.slots) {
            for _ in 0..slots {
                if nodes.len() < size {
                    nodes.push(host);
                }
            }
        }
    }
    nodes
}

/// Consecutive hosts with the same slot count: (first host, hosts, slots).
fn runs(slots: &[u64]) -> Vec<(u64, u64, u64)> {
    let mut runs: Vec<(u64, u64, u64)> = Vec::new();
    for (host, &ppn) in (0u64..).zip(slots) {
        match runs.last_mut() {
            Some(run) if run.2 == ppn => run.1 += 1,
            _ => runs.push((host, 1, ppn)),
        }
    }
    runs
}

/// The RFC 13 form: `(s,n,p)` blocks, adjacent equal-ppn hosts merged.
fn encode_rfc13(layout: &Layout) -> String {
    if layout.round_robin {
        return format!("(vector,(0,{},1))", layout.slots.len());
    }
    let blocks: Vec<String> = runs(&layout.slots)
        .iter()
        .map(|(first, hosts, ppn)| format!("({first},{hosts},{ppn})"))
        .collect();
    format!("(vector,{})", blocks.join(","))
}

/// How to spell a layout in MPICH's newer form.
#[derive(Debug, Clone)]
struct Style {
    /// Per host (or run), which of the equivalent spellings to use.
    choices: Vec<u8>,
    /// Wrap the whole vector in `[...]xK` (same mapping, since it cycles).
    wrap: u64,
    /// Surround tokens with blanks.
    blanks: bool,
}

fn styles() -> impl Strategy<Value = Style> {
    (prop::collection::vec(0u8..4, 16), 1u64..4, any::<bool>()).prop_map(
        |(choices, wrap, blanks)| Style {
            choices,
            wrap,
            blanks,
        },
    )
}

/// The MPICH 4.1+ form, with bare ids and repeat groups.
fn encode_mpich(layout: &Layout, style: &Style) -> String {
    let hosts = layout.slots.len();
    let items = if layout.round_robin {
        let ids: Vec<String> = (0..hosts).map(|host| host.to_string()).collect();
        match style.choices[0] {
            0 => ids.join(","),
            1 => format!("[{}]x1", ids.join(",")),
            2 => format!("[(0,{hosts},1)]x2"),
            _ => format!("[[{}]x1]x3", ids.join(",")),
        }
    } else {
        let parts: Vec<String> = runs(&layout.slots)
            .iter()
            .zip(&style.choices)
            .map(|(&(first, count, ppn), &choice)| spell_run(first, count, ppn, choice))
            .collect();
        parts.join(",")
    };
    let items = if style.wrap > 1 {
        format!("[{items}]x{}", style.wrap)
    } else {
        items
    };
    let text = format!("(vector,{items})");
    if style.blanks {
        text.replace(',', " ,\t")
            .replace('(', "( ")
            .replace(']', " ] ")
            .replace('x', "x ")
    } else {
        text
    }
}

/// One run of `count` hosts from `first` with `ppn` slots each, spelled per `choice`.
fn spell_run(first: u64, count: u64, ppn: u64, choice: u8) -> String {
    let hosts = first..first + count;
    let each = |spell: &dyn Fn(u64) -> String| -> String {
        hosts.clone().map(spell).collect::<Vec<_>>().join(",")
    };
    match choice {
        0 if ppn == 1 => each(&|host| host.to_string()),
        0 | 1 => each(&|host| format!("[{host}]x{ppn}")),
        2 => format!("[({first},{count},{ppn})]x1"),
        _ => each(&|host| format!("[[{host}]x1]x{ppn}")),
    }
}

/// Checks every rank's clique from `text` against the nodes in `expected`.
fn check_against(text: &str, expected: &[u64]) -> Result<(), TestCaseError> {
    let mapping =
        Mapping::parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    let size = u32::try_from(expected.len()).unwrap();
    for (rank, &node) in (0u32..).zip(expected) {
        let want: Vec<u32> = (0u32..)
            .zip(expected)
            .filter(|&(_, &other)| other == node)
            .map(|(other, _)| other)
            .collect();
        prop_assert_eq!(
            mapping.node_of(rank, size),
            Some(node),
            "{} rank {}",
            text,
            rank
        );
        prop_assert_eq!(mapping.clique_size(rank, size), Some(want.len()));
        prop_assert_eq!(
            mapping.clique(rank, size),
            Some(want),
            "{} rank {}",
            text,
            rank
        );
    }
    prop_assert_eq!(mapping.clique(size, size), None);
    Ok(())
}

/// A mapping item for generating structured strings.
#[derive(Debug, Clone)]
enum Tree {
    Block(u64, u64, u64),
    Node(u64),
    Group(Vec<Tree>, u64),
}

fn numbers() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..4,
        1 => Just(u64::MAX),
        1 => Just(1u64 << 32),
        1 => Just(4_000_000_000u64),
        1 => any::<u64>(),
    ]
}

fn trees() -> impl Strategy<Value = Vec<Tree>> {
    let leaf = prop_oneof![
        (numbers(), numbers(), numbers()).prop_map(|(s, n, p)| Tree::Block(s, n, p)),
        numbers().prop_map(Tree::Node),
    ];
    let tree = leaf.prop_recursive(4, 24, 4, |inner| {
        (prop::collection::vec(inner, 1..4), numbers())
            .prop_map(|(items, times)| Tree::Group(items, times))
    });
    prop::collection::vec(tree, 1..5)
}

fn render(items: &[Tree], blank: &str) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|item| match item {
            Tree::Block(s, n, p) => format!("({blank}{s},{n}{blank},{p})"),
            Tree::Node(id) => format!("{blank}{id}"),
            Tree::Group(inner, times) => {
                format!("[{}]{blank}x{times}", render(inner, blank))
            }
        })
        .collect();
    parts.join(&format!("{blank},"))
}

/// Appends the nodes of one pass of `items` until `out` holds `want` entries.
fn expand(items: &[Tree], want: usize, out: &mut Vec<u64>) {
    for item in items {
        if out.len() >= want {
            return;
        }
        match *item {
            Tree::Node(id) => out.push(id),
            Tree::Block(first, nodes, ppn) => {
                if ppn == 0 {
                    continue;
                }
                for index in 0..nodes {
                    for _ in 0..ppn {
                        if out.len() >= want {
                            return;
                        }
                        out.push(first.wrapping_add(index));
                    }
                }
            }
            Tree::Group(ref inner, times) => {
                for _ in 0..times {
                    let before = out.len();
                    expand(inner, want, out);
                    if out.len() == before || out.len() >= want {
                        break;
                    }
                }
            }
        }
    }
}

/// Node of each of the first `size` ranks, by brute-force cyclic expansion.
fn reference_nodes(items: &[Tree], size: usize) -> Vec<u64> {
    let mut nodes = Vec::new();
    loop {
        let before = nodes.len();
        expand(items, size, &mut nodes);
        if nodes.len() >= size || nodes.len() == before {
            return nodes;
        }
    }
}

/// Properties every successfully parsed mapping must have.
fn check_invariants(mapping: &Mapping, size: u32) -> Result<(), TestCaseError> {
    for rank in 0..size {
        let clique = mapping.clique(rank, size);
        prop_assert!(clique.is_some());
        let clique = clique.unwrap_or_default();
        prop_assert!(clique.contains(&rank));
        prop_assert!(clique.windows(2).all(|pair| pair[0] < pair[1]));
        prop_assert!(clique.iter().all(|&other| other < size));
        prop_assert_eq!(mapping.clique_size(rank, size), Some(clique.len()));
        let node = mapping.node_of(rank, size);
        prop_assert!(clique
            .iter()
            .all(|&other| mapping.node_of(other, size) == node));
    }
    prop_assert_eq!(mapping.clique(size, size), None);
    prop_assert_eq!(mapping.clique_size(size, size), None);
    Ok(())
}

const ALPHABET: &[u8] = b"(vector,)[]x0123456789 \t-";

proptest! {
    #[test]
    fn layouts_round_trip(layout in layouts(), style in styles()) {
        let expected = simulate(&layout);
        check_against(&encode_rfc13(&layout), &expected)?;
        check_against(&encode_mpich(&layout, &style), &expected)?;
    }

    #[test]
    fn structured_strings_match_expansion(
        items in trees(),
        blanks in any::<bool>(),
        size in 0u32..48,
    ) {
        let text = format!("(vector,{})", render(&items, if blanks { " \t" } else { "" }));
        let Ok(mapping) = Mapping::parse(text.as_bytes()) else {
            return Ok(());
        };
        check_invariants(&mapping, size)?;
        let nodes = reference_nodes(&items, size as usize);
        prop_assert_eq!(nodes.len(), size as usize);
        for (rank, &node) in (0u32..).zip(&nodes) {
            prop_assert_eq!(mapping.node_of(rank, size), Some(node), "{} rank {}", text, rank);
            let want = (0u32..).zip(&nodes).filter(|&(_, &n)| n == node).map(|(r, _)| r);
            prop_assert_eq!(mapping.clique(rank, size), Some(want.collect::<Vec<_>>()));
        }
    }

    #[test]
    fn mutated_strings_never_panic(
        items in trees(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(ALPHABET),
        delete in any::<bool>(),
        size in 0u32..40,
    ) {
        let mut text = format!("(vector,{})", render(&items, "")).into_bytes();
        let at = at.index(text.len());
        if delete {
            text.remove(at);
        } else {
            text.insert(at, byte);
        }
        if let Ok(mapping) = Mapping::parse(&text) {
            check_invariants(&mapping, size)?;
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        prefix in any::<bool>(),
        body in prop::collection::vec(
            prop_oneof![prop::sample::select(ALPHABET), any::<u8>()],
            0..48,
        ),
        size in 0u32..40,
    ) {
        let text = if prefix { [b"(vector,".as_slice(), &body].concat() } else { body };
        if let Ok(mapping) = Mapping::parse(&text) {
            check_invariants(&mapping, size)?;
        }
    }
}

#[test]
fn vector_of_node_lists() {
    // PRRTE gives each rank's node id (PMIX_NODEID), not a mapping: the PMIx backend
    // writes one from them.
    let rows: &[(&[u64], Option<&str>)] = &[
        (&[0, 0, 1, 1], Some("(vector,(0,2,2))")),
        (&[0, 1, 0, 1], Some("(vector,(0,2,1),(0,2,1))")),
        (&[1, 1, 0], Some("(vector,(1,1,2),(0,1,1))")),
        (&[0, 0, 0, 1], Some("(vector,(0,1,3),(1,1,1))")),
        (&[7], Some("(vector,(7,1,1))")),
        (&[], None),
    ];
    for (nodes, want) in rows {
        let got = vector_of(nodes.iter().map(|&n| Some(n)), usize::MAX);
        assert_eq!(got.as_deref(), *want, "{nodes:?}");
        if let Some(text) = got {
            let mapping = Mapping::parse(text.as_bytes()).unwrap();
            for (rank, &node) in nodes.iter().enumerate() {
                let size = nodes.len() as u32;
                assert_eq!(mapping.node_of(rank as u32, size), Some(node), "{text}");
            }
        }
    }
    assert_eq!(vector_of([Some(0), None, Some(1)], usize::MAX), None);
    assert_eq!(vector_of([Some(0), Some(1)], 10), None);
}

/// A Flux task map (RFC 34), where it comes from, and the same placement as a raw task
/// map: for node 0, 1, ... in turn, its ranks (RFC 22 idsets, `;` between nodes).
const TASKMAPS: &[(&str, &str, &str)] = &[
    ("RFC 34 test vectors", "[[0,1,1,1]]", "0"),
    ("RFC 34 test vectors", "[[0,2,1,1]]", "0;1"),
    ("RFC 34 test vectors", "[[0,1,2,1]]", "0-1"),
    ("RFC 34 test vectors", "[[0,2,2,1]]", "0-1;2-3"),
    ("RFC 34 test vectors", "[[0,2,1,2]]", "0,2;1,3"),
    ("RFC 34 test vectors", "[[1,1,1,1],[0,1,1,1]]", "1;0"),
    ("RFC 34 test vectors", "[[0,4,4,1]]", "0-3;4-7;8-11;12-15"),
    ("RFC 34 test vectors", "[[0,4,1,4]]", "0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15"),
    ("RFC 34 test vectors", "[[0,4,2,2]]", "0-1,8-9;2-3,10-11;4-5,12-13;6-7,14-15"),
    ("RFC 34 test vectors", "[[0,4,2,1],[4,2,4,1]]", "0-1;2-3;4-5;6-7;8-11;12-15"),
    ("RFC 34 test vectors", "[[0,6,1,2],[4,2,1,2]]", "0,6;1,7;2,8;3,9;4,10,12,14;5,11,13,15"),
    (
        "RFC 34 test vectors",
        "[[5,1,4,1],[4,1,4,1],[3,1,2,1],[2,1,2,1],[1,1,2,1],[0,1,2,1]]",
        "14-15;12-13;10-11;8-9;4-7;0-3",
    ),
    (
        "RFC 34 test vectors",
        "[[0,5,2,1],[6,1,2,1],[5,1,2,1],[7,1,2,1]]",
        "0-1;2-3;4-5;6-7;8-9;12-13;10-11;14-15",
    ),
    ("RFC 34 test vectors", "[[3,1,4,1],[2,1,4,1],[1,1,4,1],[0,1,4,1]]", "12-15;8-11;4-7;0-3"),
    ("RFC 34, the wrapped form", r#"{"version":1, "map":[[0,4,4,1]]}"#, "0-3;4-7;8-11;12-15"),
    (
        "flux-core libtaskmap tests",
        "[[0,8,16,1],[8,4,32,1]]",
        "0-15;16-31;32-47;48-63;64-79;80-95;96-111;112-127;128-159;160-191;192-223;224-255",
    ),
    (
        "JSON whitespace and members in any order, others skipped",
        " {\n\t\"map\" : [ [0, 2, 1, 2] ] ,\r\n \"x\":{\"a\":[1,-2.5e3,\"]\\\"}\",true,null,{}]},\"version\": 1}\n",
        "0,2;1,3",
    ),
];

/// Node of each rank of a raw task map (`;` between nodes, idsets of ranks).
fn raw_nodes(raw: &str) -> Vec<u64> {
    let mut nodes = Vec::new();
    for (node, idset) in (0u64..).zip(raw.split(';')) {
        for range in idset.split(',') {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            for rank in lo.parse::<usize>().unwrap()..=hi.parse::<usize>().unwrap() {
                if nodes.len() <= rank {
                    nodes.resize(rank + 1, u64::MAX);
                }
                nodes[rank] = node;
            }
        }
    }
    nodes
}

#[test]
fn taskmaps_place_every_rank_as_their_raw_form() {
    for &(source, text, raw) in TASKMAPS {
        let nodes = raw_nodes(raw);
        let size = nodes.len() as u32;
        let mapping = Mapping::parse_taskmap(text.as_bytes(), size)
            .unwrap_or_else(|e| panic!("{source} ({text}): {e}"));
        // Not another job's: a task map is walked once.
        for other in [size - 1, size + 1, 2 * size] {
            let error = Mapping::parse_taskmap(text.as_bytes(), other).unwrap_err();
            assert_eq!(error.reason, OTHER_SIZE, "{source} ({text})");
        }
        for rank in 0..size {
            let node = nodes[rank as usize];
            let want: Vec<u32> = (0..size).filter(|&r| nodes[r as usize] == node).collect();
            assert_eq!(
                mapping.node_of(rank, size),
                Some(node),
                "{source} ({text}) rank {rank}"
            );
            assert_eq!(
                mapping.clique_size(rank, size),
                Some(want.len()),
                "{source} ({text})"
            );
            assert_eq!(
                mapping.clique(rank, size),
                Some(want),
                "{source} ({text}) rank {rank}"
            );
        }
    }
}

/// The large rows of RFC 34's table and flux-core's tests, at a few ranks.
#[test]
fn large_taskmaps_are_not_expanded() {
    let size = 4096 * 256;
    let block = Mapping::parse_taskmap(b"[[0,4096,256,1]]", size).unwrap();
    let cyclic = Mapping::parse_taskmap(br#"{"version":1,"map":[[0,4096,1,256]]}"#, size).unwrap();
    let cyclic2 = Mapping::parse_taskmap(b"[[0,4096,2,128]]", size).unwrap();
    assert_eq!(block.node_of(1_000_000, size), Some(3906));
    assert_eq!(
        block.clique(1_000_000, size),
        Some((999_936..1_000_192).collect())
    );
    // flux-core libtaskmap tests: node 1 of [[0,4096,1,256]] is 1, 4097, 8193, ...
    let node1: Vec<u32> = (0..256).map(|i| 1 + 4096 * i).collect();
    assert_eq!(cyclic.node_of(4097, size), Some(1));
    assert_eq!(cyclic.clique(4097, size), Some(node1));
    // cyclic:2: ranks 2k and 2k+1 of each pass share a node.
    assert_eq!(cyclic2.node_of(8192 + 5, size), Some(2));
    assert_eq!(cyclic2.clique_size(5, size), Some(256));
}

#[test]
fn invalid_taskmaps() {
    let deep = format!(
        r#"{{"version":1,"map":[[0,1,1,1]],"x":{}}}"#,
        "[".repeat(100)
    );
    let table: &[(&str, &str)] = &[
        // flux-core libtaskmap tests: what taskmap_decode() refuses.
        ("}", EXPECTED_MAP),
        ("{}", NO_VERSION),
        (r#"{"version":1}"#, NO_MAP),
        (r#"{"version":1,"map":{}}"#, EXPECTED_MAP),
        (r#"{"version":2,"map":[[1,1,1,1]]}"#, BAD_VERSION),
        (r#"{"version":1,"map":[[]]}"#, EXPECTED_INTEGER),
        (r#"{"version":1,"map":[["1","1","1"]]}"#, EXPECTED_INTEGER),
        ("[[-1,1,1,1]]", EXPECTED_INTEGER),
        ("[[0,1,1,1],[-1,1,1,1]]", EXPECTED_INTEGER),
        ("[[0,1,1,1],1]", EXPECTED_BLOCK),
        // RFC 34: one block at least, four integers each, nnodes, ppn and repeat >= 1.
        ("[]", NO_BLOCKS),
        (r#"{"version":1,"map":[]}"#, NO_BLOCKS),
        ("[[0,1,1]]", BLOCK_LENGTH),
        ("[[0,1,1,1,1]]", BLOCK_LENGTH),
        ("[[0,0,1,1]]", NOT_POSITIVE),
        ("[[0,1,0,1]]", NOT_POSITIVE),
        ("[[0,1,1,0]]", NOT_POSITIVE),
        ("[[0,1,1,1.0]]", EXPECTED_INTEGER),
        ("[[0,1,1,1e0]]", EXPECTED_INTEGER),
        ("[[01,1,1,1]]", EXPECTED_INTEGER),
        ("[[0,1,1,true]]", EXPECTED_INTEGER),
        // Not the JSON of a task map.
        ("", NOT_JSON),
        ("  \n", NOT_JSON),
        ("(vector,(0,1,1))", EXPECTED_MAP),
        ("0-1;2-3", EXPECTED_MAP),
        ("[[0,1,1,1],]", EXPECTED_BLOCK),
        ("[[0,1,1,1]", EXPECTED_NEXT),
        ("[[0,1,1,1]] x", TRAILING),
        ("[[0,1,1,1]][]", TRAILING),
        (r#"{"version":1,"map":[[0,1,1,1]],}"#, EXPECTED_NAME),
        (r#"{"version":1 "map":[[0,1,1,1]]}"#, EXPECTED_NEXT),
        (r#"{"version" 1}"#, EXPECTED_COLON),
        (r#"{"version":1,"map":[[0,1,1,1]],"x":}"#, NOT_JSON),
        (r#"{"version":1,"map":[[0,1,1,1]],"x":"open}"#, UNTERMINATED),
        (r#"{"version":1,"version":1,"map":[[0,1,1,1]]}"#, DUPLICATE),
        (
            r#"{"version":1,"map":[[0,1,1,1]],"map":[[0,1,1,1]]}"#,
            DUPLICATE,
        ),
        (r#"{"version":"1","map":[[0,1,1,1]]}"#, EXPECTED_INTEGER),
        (r#"{"ver\u0073ion":1,"map":[[0,1,1,1]]}"#, NO_VERSION),
        ("[[18446744073709551616,1,1,1]]", OVERFLOW),
        ("[[18446744073709551615,2,1,1]]", NODE_OVERFLOW),
        (&deep, NESTED_TOO_DEEP),
    ];
    for &(text, reason) in table {
        let error = Mapping::parse_taskmap(text.as_bytes(), 1).expect_err(text);
        assert_eq!(error.reason, reason, "{text:?}");
        assert!(error.offset <= text.len(), "{text:?}");
    }
    let error = Mapping::parse_taskmap(b"[[0,1,1,0]]", 1).unwrap_err();
    assert_eq!(
        (error.offset, error.to_string().as_str()),
        (8, "nnodes, ppn and repeat are at least 1 at byte 8")
    );
}

proptest! {
    /// Whatever bytes come, the parser answers without panicking, and a map it takes
    /// has every clique's invariants.
    #[test]
    fn arbitrary_taskmaps_never_panic(
        body in prop::collection::vec(
            prop_oneof![prop::sample::select(&b"[]{},:\"0123456789 -.eversionmap"[..]), any::<u8>()],
            0..48,
        ),
        size in 1u32..40,
    ) {
        if let Ok(mapping) = Mapping::parse_taskmap(&body, size) {
            check_invariants(&mapping, size)?;
        }
    }
}
