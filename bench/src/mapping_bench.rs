//! Parse + clique of one rank in a `PMI_process_mapping` (default: the million-rank
//! `(vector,(0,4096,256))`, rank 1000000 of 1048576), timed without the wire.
//!
//! `mapping_bench [MAPPING RANK SIZE ITERATIONS]` prints one line:
//! `parse_ns=.. clique_ns=.. total_ns=.. first_total_ns=.. clique=N first=R last=R`,
//! medians over the iterations, and the very first (cold) iteration separately.

use std::hint::black_box;
use std::time::Instant;

use pmi_core::testkit::Mapping;

fn median(v: &mut [u128]) -> u128 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let text = arg(0, "(vector,(0,4096,256))");
    let rank: u32 = arg(1, "1000000").parse().expect("RANK");
    let size: u32 = arg(2, "1048576").parse().expect("SIZE");
    let iterations: usize = arg(3, "501").parse().expect("ITERATIONS");

    let (mut parse, mut clique, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_total = None;
    let mut answer = Vec::new();
    for _ in 0..iterations.max(1) {
        let t0 = Instant::now();
        let mapping = Mapping::parse(black_box(text.as_bytes())).expect("a valid mapping");
        let t1 = Instant::now();
        let ranks = mapping
            .clique(black_box(rank), black_box(size))
            .expect("rank < size");
        let t2 = Instant::now();
        first_total.get_or_insert((t2 - t0).as_nanos());
        parse.push((t1 - t0).as_nanos());
        clique.push((t2 - t1).as_nanos());
        total.push((t2 - t0).as_nanos());
        answer = black_box(ranks);
    }
    println!(
        "parse_ns={} clique_ns={} total_ns={} first_total_ns={} clique={} first={} last={}",
        median(&mut parse),
        median(&mut clique),
        median(&mut total),
        first_total.unwrap_or_default(),
        answer.len(),
        answer.first().copied().unwrap_or(0),
        answer.last().copied().unwrap_or(0),
    );
}
