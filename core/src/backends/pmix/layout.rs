//! The job's layout as PMIx tells it: `PMI_process_mapping` from `PMIX_ANL_MAP`, or
//! built from every rank's host name or node id.

use std::collections::HashMap;

use super::calls::{self, Answer};
use super::{Pmix, PMIX_MAXES};
use crate::api::Api;
use crate::mapping;
use crate::trace;

/// The longest `PMI_process_mapping` a program of `api` can read: the value maximum it
/// is told, less the NUL.
fn mapping_room(api: Api) -> usize {
    api.fixed_maxes().unwrap_or(PMIX_MAXES).value - 1
}

impl Pmix {
    /// `PMI_process_mapping`, asked or built once (`build_mapping`); `None` when none is
    /// known (asked again the next time).
    pub(super) fn mapping(&mut self) -> Option<Vec<u8>> {
        if self.layout.is_none() {
            self.layout = self.build_mapping();
        }
        self.layout.clone()
    }

    /// `PMI_process_mapping` as PMIx gives it (`PMIX_ANL_MAP`, Slurm), or built from
    /// every rank's host name or node id (PRRTE gives no ANL map, and across hosts no
    /// node id of a process on another host); `None` when none is known.
    fn build_mapping(&self) -> Option<Vec<u8>> {
        if let Ok(Answer::Text(map)) = self.fetch(&self.wildcard(), b"pmix.anlmap") {
            return Some(map);
        }
        let (nodes, from) = match self.nodes_by(b"pmix.hname") {
            Some(nodes) => (nodes, "host names"),
            None => (self.nodes_by(b"pmix.nodeid")?, "node ids"),
        };
        // Within the API's value maximum, as every value is (a reader sized its buffer
        // so): this backend's for PMI-1, PMI-2's header constant for PMI-2.
        let room = mapping_room(self.api);
        let Some(text) = mapping::cycle_of(&nodes, room) else {
            trace::line(format_args!(
                "no PMI_process_mapping: the layout of {} ranks from {from} does not fit in \
                 {room} bytes",
                nodes.len()
            ));
            return None;
        };
        trace::line(format_args!(
            "PMI_process_mapping built from {} {from}: \"{text}\"",
            nodes.len()
        ));
        Some(text.into_bytes())
    }

    /// Each rank's node, numbered by `key`'s value (a host name or a node id) in the
    /// order the nodes first appear; `None` when a rank has no such value.
    fn nodes_by(&self, key: &[u8]) -> Option<Vec<u64>> {
        let mut seen: HashMap<Answer, u64> = HashMap::new();
        let mut nodes = Vec::with_capacity(self.id.size as usize);
        for rank in 0..self.id.size as u32 {
            let who = calls::proc_of(self.me.nspace(), rank)?;
            let node = match self.lib.get(&who, key, self.timeout) {
                Ok(answer @ (Answer::Text(_) | Answer::Number(_))) => answer,
                _ => return None,
            };
            let next = seen.len() as u64;
            nodes.push(*seen.entry(node).or_insert(next));
        }
        Some(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_mapping_fits_what_each_api_reads() {
        assert_eq!(mapping_room(Api::Pmi1), 4095);
        assert_eq!(mapping_room(Api::Pmi2), 1023);
        // 256 ranks dealt round-robin to 2 hosts: 1032 bytes written out, too long for
        // PMI-2, which gets one cycle.
        let nodes: Vec<u64> = (0..256).map(|r| r % 2).collect();
        let pmi1 = mapping::cycle_of(&nodes, mapping_room(Api::Pmi1)).unwrap();
        assert_eq!(pmi1.len(), 1032);
        let pmi2 = mapping::cycle_of(&nodes, mapping_room(Api::Pmi2));
        assert_eq!(pmi2.as_deref(), Some("(vector,(0,2,1))"));
    }
}
