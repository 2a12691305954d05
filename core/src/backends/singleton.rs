//! No process manager: a true singleton, rank 0 of 1, with a process-local KVS that
//! keeps the same rules as the wire's.

use crate::api::{Api, Op};
use crate::api::{Maxes, DEFAULT_MAXES};
use crate::backend::{Backend, Identity};
use crate::backend::{SpawnCommand, Spawned};
use crate::error::{PmiError, PmiResult};
use crate::store::Store;
use crate::trace;

/// The layout of a job of one process (RFC 13: one block, node 0, one node, one process
/// on it), as the process manager's key.
const MAPPING_KEY: &[u8] = b"PMI_process_mapping";
const MAPPING: &[u8] = b"(vector,(0,1,1))";

pub struct Singleton {
    /// Whose calls these are, for messages.
    api: Api,
    kvs: Store,
    /// PMI-2's node attributes: this process is the node.
    node: Store,
}

impl Singleton {
    pub fn new(api: Api) -> Singleton {
        Singleton {
            api,
            kvs: Store::default(),
            node: Store::default(),
        }
    }
}

/// What needs a process manager: `PMI_FAIL`, with one line on stderr.
fn no_manager(call: &str) -> PmiError {
    trace::fatal(format_args!("{call}: no process manager (singleton mode)"))
}

impl Singleton {
    /// What needs a process manager: `PMI_FAIL`, with one line on stderr naming the
    /// caller's function.
    fn no_manager(&self, op: Op) -> PmiError {
        no_manager(self.api.call(op))
    }
}

impl Backend for Singleton {
    fn name(&self) -> &'static str {
        "singleton"
    }

    fn identity(&self) -> Identity {
        Identity {
            rank: 0,
            size: 1,
            spawned: false,
        }
    }

    fn maxes(&self) -> Maxes {
        DEFAULT_MAXES
    }

    /// A name of its own, so that two singletons never look like one job.
    fn kvsname(&mut self) -> PmiResult<Vec<u8>> {
        Ok(format!("singleton_kvs_{}", std::process::id()).into_bytes())
    }

    fn universe_size(&mut self) -> PmiResult<i32> {
        Ok(1)
    }

    fn appnum(&mut self) -> PmiResult<i32> {
        Ok(0)
    }

    fn put(&mut self, _kvsname: &[u8], key: &[u8], value: &[u8]) -> PmiResult<()> {
        self.kvs.insert(key, value);
        Ok(())
    }

    fn commit(&mut self) -> PmiResult<()> {
        Ok(())
    }

    /// Nobody to wait for.
    fn barrier(&mut self) -> PmiResult<()> {
        Ok(())
    }

    /// Every group of a job of one is this process alone: a no-op, as MPICH's singleton.
    fn group_barriers(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Every key there is was put by this process, but `PMI_process_mapping`, which
    /// RFC 13's process manager provides: this one process on its one node.
    fn get(&mut self, _kvsname: &[u8], key: &[u8]) -> PmiResult<&[u8]> {
        match self.kvs.get(key) {
            Some(value) => Ok(value),
            None if key == MAPPING_KEY => Ok(MAPPING),
            None => Err(PmiError::InvalidKey),
        }
    }

    /// PMI-2's job attributes: the universe size, and the layout as the get gives it.
    fn job_attr(&mut self, name: &[u8]) -> PmiResult<Option<Vec<u8>>> {
        Ok(match name {
            b"universeSize" => Some(self.universe_size()?.to_string().into_bytes()),
            MAPPING_KEY => Some(MAPPING.to_vec()),
            _ => None,
        })
    }

    /// Nobody else could put it: waiting would never end.
    fn node_attr(&mut self, name: &[u8], wait: bool) -> PmiResult<Option<Vec<u8>>> {
        match self.node.get(name) {
            Some(value) => Ok(Some(value.to_vec())),
            None if wait => Err(no_manager("PMI2_Info_GetNodeAttr(wait)")),
            None => Ok(None),
        }
    }

    fn put_node_attr(&mut self, name: &[u8], value: &[u8]) -> PmiResult<()> {
        self.node.insert(name, value);
        Ok(())
    }

    fn local_ranks(&mut self) -> PmiResult<Option<Vec<i32>>> {
        Ok(Some(vec![0]))
    }

    fn publish_name(&mut self, _service: &[u8], _port: &[u8]) -> PmiResult<()> {
        Err(self.no_manager(Op::Publish))
    }

    fn unpublish_name(&mut self, _service: &[u8]) -> PmiResult<()> {
        Err(self.no_manager(Op::Unpublish))
    }

    fn lookup_name(&mut self, _service: &[u8]) -> PmiResult<&[u8]> {
        Err(self.no_manager(Op::Lookup))
    }

    fn spawn(
        &mut self,
        _commands: &[SpawnCommand<'_>],
        _preput: &[(&[u8], &[u8])],
        _slots: usize,
    ) -> PmiResult<Spawned> {
        Err(self.no_manager(Op::Spawn))
    }

    fn finalize(&mut self) -> PmiResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_one_process_on_one_node_for_both_apis() {
        let mut pmi1 = Singleton::new(Api::Pmi1);
        assert_eq!(
            pmi1.get(b"kvs", b"PMI_process_mapping"),
            Ok(&b"(vector,(0,1,1))"[..])
        );
        assert_eq!(pmi1.get(b"kvs", b"PMI_other"), Err(PmiError::InvalidKey));
        let mut pmi2 = Singleton::new(Api::Pmi2);
        assert_eq!(
            pmi2.job_attr(b"PMI_process_mapping"),
            Ok(Some(b"(vector,(0,1,1))".to_vec()))
        );
        assert_eq!(pmi2.job_attr(b"universeSize"), Ok(Some(b"1".to_vec())));
        assert_eq!(pmi2.job_attr(b"other"), Ok(None));
    }
}
