//! Writing `PMI_process_mapping`: a layout written out in full for readers that do not
//! repeat the vector, and the vector form of a layout given rank by rank (the PMIx
//! backend builds the key from each rank's host).

use super::Mapping;

/// The most ranks [`Mapping::spelled_out`] walks: it costs a step per rank.
pub(super) const SPELL_OUT_MAX_RANKS: u32 = 1 << 20;

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
pub(super) fn shortest_period<T: PartialEq>(items: &[T]) -> usize {
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
