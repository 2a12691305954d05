//! The `PMI_process_mapping` KVS value, and the node-local "clique" of a rank.
//!
//! Accepted grammar (RFC 13, extended the way MPICH 4.1 and later write it):
//!
//! ```text
//! mapping = "(" "vector" "," list ")"
//! list    = item *("," item)
//! item    = block / node / group
//! block   = "(" uint "," uint "," uint ")"  ; (first node id, node count, ranks per node)
//! node    = uint                             ; a bare node id N, the same as (N,1,1)
//! group   = "[" list "]" "x" uint            ; the list repeated uint times
//! uint    = 1*DIGIT                          ; unsigned decimal, at most u64::MAX
//! ```
//!
//! Spaces and tabs may surround every token; nothing else may appear.
//!
//! Placement, as MPICH Hydra means it: the items are walked in order; the block
//! `(s,n,p)` places `p` consecutive ranks on node `s`, then `p` on node `s+1`, and
//! so on up to node `s+n-1`. When the vector ends before every rank is placed it
//! starts again from its first item, as often as needed. One walk of the vector is
//! called a *cycle* below.
//!
//! Repeat groups are never expanded: a group keeps the number of ranks one pass
//! of its items places, and positions inside it are found by division. Rank
//! counts saturate at `u64::MAX`, which is exact for every question asked here,
//! because ranks are below `u32::MAX`: a saturated count is always larger than
//! any rank position it is compared with.
//!
//! Cost: parsing is linear in the input. [`Mapping::node_of`] follows one path
//! down the item tree; [`Mapping::clique_size`] is pure arithmetic over the tree
//! (at most items × nesting depth steps). [`Mapping::clique`] walks the items
//! once, for the first pass of each group and the first cycle of the vector,
//! then copies that pass shifted for each later repetition, stopping at the
//! first one that adds nothing: items + answer steps, however large the repeat
//! counts and whatever `size` is.

#![forbid(unsafe_code)]

use std::fmt;

/// Deepest nesting of repeat groups that [`Mapping::parse`] accepts.
const MAX_DEPTH: usize = 64;

const EMPTY: &str = "empty mapping";
const EXPECTED_OPEN: &str = "expected '('";
const EXPECTED_VECTOR: &str = "expected 'vector'";
const EXPECTED_COMMA: &str = "expected ','";
const EXPECTED_CLOSE: &str = "expected ')'";
const EXPECTED_ITEM: &str = "expected a block, a node id or a repeat group";
const EXPECTED_NUMBER: &str = "expected an unsigned decimal number";
const EXPECTED_TIMES: &str = "expected 'x' after ']'";
const EXPECTED_NEXT_ITEM: &str = "expected ',' or ')'";
const EXPECTED_NEXT_IN_GROUP: &str = "expected ',' or ']'";
const OVERFLOW: &str = "number does not fit in 64 bits";
const NODE_OVERFLOW: &str = "block's node ids do not fit in 64 bits";
const TOO_DEEP: &str = "repeat groups nested too deeply";
const TRAILING: &str = "unexpected bytes after the mapping";
const NO_RANKS: &str = "mapping places no ranks";

/// Why a mapping string was refused (for a one-line warning naming the string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappingError {
    /// Byte offset in the input where the problem was found.
    pub offset: usize,
    /// What was wrong there.
    pub reason: &'static str,
}

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for MappingError {}

/// A parsed `PMI_process_mapping`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The items of the vector, in order.
    items: Vec<Item>,
    /// Ranks one cycle of the vector places (saturated); never zero.
    period: u64,
}

/// One item of the vector or of a repeat group.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Block(Block),
    Group(Group),
}

/// `(first,nodes,ppn)`: `ppn` ranks on each of `nodes` consecutive node ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    first: u64,
    nodes: u64,
    ppn: u64,
}

/// `[items]xtimes`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    items: Vec<Item>,
    times: u64,
    /// Ranks one pass of `items` places (saturated).
    once: u64,
}

impl Block {
    /// Ranks the block places (saturated).
    fn ranks(&self) -> u64 {
        self.nodes.saturating_mul(self.ppn)
    }

    /// Offset, within the block, of the first rank it places on `node`, if any.
    fn offset_of(&self, node: u64) -> Option<u64> {
        let index = node.checked_sub(self.first)?;
        (index < self.nodes && self.ppn > 0).then(|| index.saturating_mul(self.ppn))
    }

    /// Node of the rank at `offset` within the block (`offset < self.ranks()`).
    fn node_at(&self, offset: u64) -> Option<u64> {
        self.first.checked_add(offset.checked_div(self.ppn)?)
    }
}

impl Item {
    /// Ranks the item places (saturated).
    fn ranks(&self) -> u64 {
        match self {
            Item::Block(block) => block.ranks(),
            Item::Group(group) => group.once.saturating_mul(group.times),
        }
    }
}

/// Ranks one pass of `items` places (saturated).
fn total_ranks(items: &[Item]) -> u64 {
    items
        .iter()
        .fold(0, |sum, item| sum.saturating_add(item.ranks()))
}

/// `(a / b, a % b)`, or `(0, a)` when `b` is zero.
fn div_rem(a: u64, b: u64) -> (u64, u64) {
    match (a.checked_div(b), a.checked_rem(b)) {
        (Some(quotient), Some(remainder)) => (quotient, remainder),
        _ => (0, a),
    }
}

impl Mapping {
    /// Parses a `PMI_process_mapping` value.
    ///
    /// Fails on anything off the grammar in the module documentation, on numbers
    /// that overflow `u64`, on a block whose node ids overflow `u64`, on repeat
    /// groups nested deeper than 64, and on a vector that places no rank at all.
    pub fn parse(text: &[u8]) -> Result<Mapping, MappingError> {
        let items = Parser { text, pos: 0 }.mapping()?;
        let period = total_ranks(&items);
        if period == 0 {
            return Err(MappingError {
                offset: 0,
                reason: NO_RANKS,
            });
        }
        Ok(Mapping { items, period })
    }

    /// Node id of `rank` in a job of `size` ranks; None when rank >= size.
    pub fn node_of(&self, rank: u32, size: u32) -> Option<u64> {
        if rank >= size {
            return None;
        }
        locate(&self.items, u64::from(rank).checked_rem(self.period)?)
    }

    /// The clique of `rank`: every rank < size on rank's node, ascending. None when rank >= size,
    /// or when the memory for it cannot be had.
    pub fn clique(&self, rank: u32, size: u32) -> Option<Vec<u32>> {
        let node = self.node_of(rank, size)?;
        let mut ranks = Vec::new();
        ranks
            .try_reserve_exact(self.clique_size(rank, size)?)
            .ok()?;
        // The job is the vector repeated without end, cut at `size`.
        collect_repeated(
            &self.items,
            self.period,
            u64::MAX,
            node,
            0,
            u64::from(size),
            &mut ranks,
        );
        Some(ranks)
    }

    /// Same as clique(...).map(|v| v.len()) but without allocating the vector.
    pub fn clique_size(&self, rank: u32, size: u32) -> Option<usize> {
        let node = self.node_of(rank, size)?;
        let (cycles, rest) = div_rem(u64::from(size), self.period);
        let whole = if cycles == 0 {
            0
        } else {
            count_all(&self.items, node).saturating_mul(cycles)
        };
        let count = whole.saturating_add(count_prefix(&self.items, node, rest));
        usize::try_from(count).ok()
    }
}

/// The most ranks [`Mapping::spelled_out`] walks: it costs a step per rank.
const SPELL_OUT_MAX_RANKS: u32 = 1 << 20;

impl Mapping {
    /// Whether one cycle of the vector places fewer than `size` ranks, so that a reader
    /// must start it again to place them all (Hydra 4.0.2 writes `(vector,(0,1,1))` for
    /// `-n 4` on one host).
    pub fn repeats_within(&self, size: u32) -> bool {
        self.period < u64::from(size)
    }

    /// The same placement of `size` ranks written out in full as RFC 13 blocks, no
    /// repeat groups and no cycle: `(vector,(0,1,1))` with 4 ranks is `(vector,(0,1,4))`,
    /// `(vector,(0,2,1))` with 4 is `(vector,(0,2,1),(0,2,1))`. Readers that never
    /// repeat the vector (Intel MPI 2021) place every rank right with it. None when it
    /// would be longer than `max_len` bytes or `size` is over [`SPELL_OUT_MAX_RANKS`].
    pub fn spelled_out(&self, size: u32, max_len: usize) -> Option<String> {
        if size == 0 || size > SPELL_OUT_MAX_RANKS {
            return None;
        }
        vector_of((0..size).map(|rank| self.node_of(rank, size)), max_len)
    }
}

/// Node of the rank at `offset` within one pass of `items`.
fn locate(items: &[Item], mut offset: u64) -> Option<u64> {
    for item in items {
        let ranks = item.ranks();
        if offset < ranks {
            return match item {
                Item::Block(block) => block.node_at(offset),
                Item::Group(group) => locate(&group.items, offset.checked_rem(group.once)?),
            };
        }
        offset -= ranks;
    }
    None
}

/// Appends, ascending, the ranks below `limit` that one pass of `items`, starting
/// at rank `base`, places on `node`.
fn collect(items: &[Item], node: u64, mut base: u64, limit: u64, out: &mut Vec<u32>) {
    for item in items {
        if base >= limit {
            return;
        }
        match item {
            Item::Block(block) => {
                if let Some(offset) = block.offset_of(node) {
                    let first = base.saturating_add(offset);
                    let end = first.saturating_add(block.ppn).min(limit);
                    out.extend((first..end).filter_map(|rank| u32::try_from(rank).ok()));
                }
            }
            Item::Group(group) => collect_repeated(
                &group.items,
                group.once,
                group.times,
                node,
                base,
                limit,
                out,
            ),
        }
        base = base.saturating_add(item.ranks());
    }
}

/// Like [`collect`] for `times` passes of `items`, each placing `once` ranks.
///
/// Only the first pass is walked; later passes copy its ranks shifted by a
/// multiple of `once`, and stop as soon as a pass adds nothing below `limit`.
fn collect_repeated(
    items: &[Item],
    once: u64,
    times: u64,
    node: u64,
    base: u64,
    limit: u64,
    out: &mut Vec<u32>,
) {
    if times == 0 {
        return;
    }
    let start = out.len();
    collect(items, node, base, limit, out);
    let pass_end = out.len();
    for pass in 1..times {
        let Ok(shift) = u32::try_from(once.saturating_mul(pass)) else {
            return;
        };
        let keep = out[start..pass_end]
            .partition_point(|&rank| u64::from(rank) + u64::from(shift) < limit);
        if keep == 0 {
            return;
        }
        let from = out.len();
        out.extend_from_within(start..start + keep);
        // Each shifted rank is below `limit`, which fits in a u32.
        for rank in &mut out[from..] {
            *rank += shift;
        }
    }
}

/// Ranks one pass of `items` places on `node` (saturated).
fn count_all(items: &[Item], node: u64) -> u64 {
    items
        .iter()
        .fold(0, |sum, item| sum.saturating_add(count_item(item, node)))
}

/// Ranks `item` places on `node` (saturated).
fn count_item(item: &Item, node: u64) -> u64 {
    match item {
        Item::Block(block) => block.offset_of(node).map_or(0, |_| block.ppn),
        Item::Group(group) => count_all(&group.items, node).saturating_mul(group.times),
    }
}

/// Ranks the first `len` positions of one pass of `items` place on `node`.
fn count_prefix(items: &[Item], node: u64, len: u64) -> u64 {
    let mut left = len;
    let mut count: u64 = 0;
    for item in items {
        if left == 0 {
            break;
        }
        let ranks = item.ranks();
        if left >= ranks {
            count = count.saturating_add(count_item(item, node));
            left -= ranks;
            continue;
        }
        let partial = match item {
            Item::Block(block) => block
                .offset_of(node)
                .map_or(0, |offset| left.saturating_sub(offset).min(block.ppn)),
            Item::Group(group) => {
                let (passes, rest) = div_rem(left, group.once);
                count_all(&group.items, node)
                    .saturating_mul(passes)
                    .saturating_add(count_prefix(&group.items, node, rest))
            }
        };
        return count.saturating_add(partial);
    }
    count
}

/// Recursive-descent parser over the raw bytes.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, reason: &'static str) -> MappingError {
        MappingError {
            offset: self.pos,
            reason,
        }
    }

    /// Skips spaces and tabs, then returns the next byte without consuming it.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t') = self.text.get(self.pos) {
            self.pos += 1;
        }
        self.text.get(self.pos).copied()
    }

    /// Consumes `byte` (after blanks), or fails with `reason`.
    fn expect(&mut self, byte: u8, reason: &'static str) -> Result<(), MappingError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(reason))
        }
    }

    /// `"(" "vector" "," list ")"` and nothing after it but blanks.
    fn mapping(&mut self) -> Result<Vec<Item>, MappingError> {
        if self.peek().is_none() {
            return Err(self.error(EMPTY));
        }
        self.expect(b'(', EXPECTED_OPEN)?;
        self.peek();
        if !self.text[self.pos..].starts_with(b"vector") {
            return Err(self.error(EXPECTED_VECTOR));
        }
        self.pos += b"vector".len();
        self.expect(b',', EXPECTED_COMMA)?;
        let items = self.list(0)?;
        if self.peek().is_some() {
            return Err(self.error(TRAILING));
        }
        Ok(items)
    }

    /// `item *("," item)` and its closing `)` (at depth 0) or `]` (inside a group).
    fn list(&mut self, depth: usize) -> Result<Vec<Item>, MappingError> {
        let (close, reason) = if depth == 0 {
            (b')', EXPECTED_NEXT_ITEM)
        } else {
            (b']', EXPECTED_NEXT_IN_GROUP)
        };
        let mut items = Vec::new();
        loop {
            items.push(self.item(depth)?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(byte) if byte == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return Err(self.error(reason)),
            }
        }
    }

    fn item(&mut self, depth: usize) -> Result<Item, MappingError> {
        match self.peek() {
            Some(b'(') => self.block().map(Item::Block),
            Some(b'[') => self.group(depth + 1).map(Item::Group),
            Some(b'0'..=b'9') => Ok(Item::Block(Block {
                first: self.number()?,
                nodes: 1,
                ppn: 1,
            })),
            _ => Err(self.error(EXPECTED_ITEM)),
        }
    }

    /// `"(" uint "," uint "," uint ")"`.
    fn block(&mut self) -> Result<Block, MappingError> {
        let start = self.pos;
        self.pos += 1;
        let first = self.number()?;
        self.expect(b',', EXPECTED_COMMA)?;
        let nodes = self.number()?;
        self.expect(b',', EXPECTED_COMMA)?;
        let ppn = self.number()?;
        self.expect(b')', EXPECTED_CLOSE)?;
        if nodes > 0 && first.checked_add(nodes - 1).is_none() {
            return Err(MappingError {
                offset: start,
                reason: NODE_OVERFLOW,
            });
        }
        Ok(Block { first, nodes, ppn })
    }

    /// `"[" list "]" "x" uint`, at nesting level `depth` (1 for the outermost).
    fn group(&mut self, depth: usize) -> Result<Group, MappingError> {
        if depth > MAX_DEPTH {
            return Err(self.error(TOO_DEEP));
        }
        self.pos += 1;
        let items = self.list(depth)?;
        self.expect(b'x', EXPECTED_TIMES)?;
        let times = self.number()?;
        let once = total_ranks(&items);
        Ok(Group { items, times, once })
    }

    /// `1*DIGIT`, after blanks.
    fn number(&mut self) -> Result<u64, MappingError> {
        self.peek();
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(&byte @ b'0'..=b'9') = self.text.get(self.pos) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(byte - b'0')))
                .ok_or(MappingError {
                    offset: start,
                    reason: OVERFLOW,
                })?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(EXPECTED_NUMBER));
        }
        Ok(value)
    }
}

/// The vector form of a layout given rank by rank (the node of rank 0, 1, ...): each
/// run of ranks on one node is a block, and runs of equal length on consecutive nodes
/// merge into one block. `None` when a node is unknown (`None`), there are no ranks, or
/// the text would be longer than `max_len`. Nothing is allocated per rank.
pub fn vector_of(nodes: impl IntoIterator<Item = Option<u64>>, max_len: usize) -> Option<String> {
    let mut text = String::from("(vector");
    // The block being built: (first node, nodes, ppn); and the run of ranks on one
    // node being counted: (node, ranks).
    let mut block: Option<(u64, u64, u64)> = None;
    let mut run: Option<(u64, u64)> = None;
    let close = |block: (u64, u64, u64), text: &mut String| -> Option<()> {
        use std::fmt::Write;
        let _ = write!(text, ",({},{},{})", block.0, block.1, block.2);
        (text.len() < max_len).then_some(())
    };
    for next in nodes.into_iter().map(Some).chain(std::iter::once(None)) {
        let node = match next {
            Some(known) => Some(known?),
            None => None,
        };
        match (run, node) {
            (Some((n, len)), Some(next)) if n == next => run = Some((n, len + 1)),
            _ => {
                if let Some((n, len)) = run {
                    block = match block {
                        Some((first, count, ppn))
                            if ppn == len && first.checked_add(count) == Some(n) =>
                        {
                            Some((first, count + 1, ppn))
                        }
                        Some(done) => {
                            close(done, &mut text)?;
                            Some((n, 1, len))
                        }
                        None => Some((n, 1, len)),
                    };
                }
                run = node.map(|n| (n, 1));
            }
        }
    }
    close(block?, &mut text)?;
    text.push(')');
    (text.len() <= max_len).then_some(text)
}

/// The vector form of a layout given rank by rank, as [`vector_of`], in at most `max_len`
/// bytes: every rank written out when that fits, else one cycle of the layout's shortest
/// period (`(vector,(0,2,1))` for ranks dealt round-robin to 2 nodes), which a reader
/// repeats as RFC 13 says; `None` when neither fits.
pub fn cycle_of(nodes: &[u64], max_len: usize) -> Option<String> {
    vector_of(nodes.iter().map(|&n| Some(n)), max_len).or_else(|| {
        let period = shortest_period(nodes);
        vector_of(nodes[..period].iter().map(|&n| Some(n)), max_len)
    })
}

/// The smallest `p` such that `items[i] == items[i + p]` wherever both exist: the
/// length of the shortest prefix whose repetition gives `items` (the prefix function,
/// one pass).
fn shortest_period<T: PartialEq>(items: &[T]) -> usize {
    let mut border = vec![0usize; items.len()];
    let mut k = 0;
    for i in 1..items.len() {
        while k > 0 && items[i] != items[k] {
            k = border[k - 1];
        }
        if items[i] == items[k] {
            k += 1;
        }
        border[i] = k;
    }
    items.len() - border.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
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
        let nested =
            |depth: usize| format!("(vector,{}0{})", "[".repeat(depth), "]x1".repeat(depth));
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
        let mapping = Mapping::parse(text.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
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
}
