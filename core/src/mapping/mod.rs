//! The `PMI_process_mapping` KVS value, and the node-local "clique" of a rank. Flux's
//! task map (`flux.taskmap`, RFC 34: [`Mapping::parse_taskmap`]) reads into the same
//! items: each of its blocks is a block in a repeat group.
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

mod generate;
mod parse;
mod taskmap;

use std::fmt;

pub use generate::cycle_of;

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

#[cfg(test)]
mod tests;
