//! The two APIs a client serves, `libpmi.so.0`'s PMI-1 and `libpmi2.so.0`'s PMI-2, and
//! their fixed facts: what each calls an operation, the length maxima it promises, where
//! its servers publish the job layout. What a caller may pass to each is `rules`.

/// Maximum lengths, each including the terminating NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maxes {
    pub kvsname: usize,
    pub key: usize,
    pub value: usize,
}

/// What the length queries answer before `PMI_Init` (MPICH's ch3 asks for the value
/// length first) and what Hydra announces.
pub const DEFAULT_MAXES: Maxes = Maxes {
    kvsname: 256,
    key: 64,
    value: 1024,
};

/// Which API a client serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// RFC 13's PMI-1 (`libpmi.so.0`), over the PMI-1.1 wire: line-based, `key=value`
    /// fields separated by spaces.
    Pmi1,
    /// PMI-2 (`libpmi2.so.0`), over the PMI-2 wire: length-framed, fields separated by
    /// `;`.
    Pmi2,
}

/// An operation, for messages: each API names it its own way ([`Api::call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Init,
    Abort,
    Put,
    Barrier,
    Spawn,
    Publish,
    Unpublish,
    Lookup,
}

/// Where the job layout (`PMI_process_mapping`) is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingSource {
    /// A key of the job's key-value space (PMI-1 servers).
    KvsKey,
    /// A job attribute (PMI-2 servers).
    JobAttr,
}

/// `PMI2_MAX_KEYLEN`, `PMI2_MAX_VALLEN` (and `PMI2_MAX_ATTRVALUE`), NUL included: what
/// PMI-2's header promises whatever the server.
pub const PMI2_MAXES: Maxes = Maxes {
    kvsname: 256,
    key: 64,
    value: 1024,
};

/// The longest port name, NUL included, that publish accepts and lookup writes: MPICH
/// passes lookups a `char port[MPI_MAX_PORT_NAME]` of 256 bytes, so a longer answer would
/// be written past the caller's buffer.
pub const PORT_MAX: usize = 256;

impl Api {
    /// The API's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Api::Pmi1 => "PMI-1",
            Api::Pmi2 => "PMI-2",
        }
    }

    /// The C function of this API that carries out `op`, for messages: a PMI-2 program
    /// is told about `PMI2_Job_Spawn`, not `PMI_Spawn_multiple`.
    pub fn call(self, op: Op) -> &'static str {
        match (self, op) {
            (Api::Pmi1, Op::Init) => "PMI_Init",
            (Api::Pmi1, Op::Abort) => "PMI_Abort",
            (Api::Pmi1, Op::Put) => "PMI_KVS_Put",
            (Api::Pmi1, Op::Barrier) => "PMI_Barrier",
            (Api::Pmi1, Op::Spawn) => "PMI_Spawn_multiple",
            (Api::Pmi1, Op::Publish) => "PMI_Publish_name",
            (Api::Pmi1, Op::Unpublish) => "PMI_Unpublish_name",
            (Api::Pmi1, Op::Lookup) => "PMI_Lookup_name",
            (Api::Pmi2, Op::Init) => "PMI2_Init",
            (Api::Pmi2, Op::Abort) => "PMI2_Abort",
            (Api::Pmi2, Op::Put) => "PMI2_KVS_Put",
            (Api::Pmi2, Op::Barrier) => "PMI2_KVS_Fence",
            (Api::Pmi2, Op::Spawn) => "PMI2_Job_Spawn",
            (Api::Pmi2, Op::Publish) => "PMI2_Nameserv_publish",
            (Api::Pmi2, Op::Unpublish) => "PMI2_Nameserv_unpublish",
            (Api::Pmi2, Op::Lookup) => "PMI2_Nameserv_lookup",
        }
    }

    /// The maxima the API promises its callers whatever the backend says (PMI-2's
    /// header constants); `None`: the backend's own (PMI-1's `get_maxes`).
    pub fn fixed_maxes(self) -> Option<Maxes> {
        match self {
            Api::Pmi1 => None,
            Api::Pmi2 => Some(PMI2_MAXES),
        }
    }

    /// Where this API's servers publish the job layout.
    pub fn mapping_source(self) -> MappingSource {
        match self {
            Api::Pmi1 => MappingSource::KvsKey,
            Api::Pmi2 => MappingSource::JobAttr,
        }
    }
}
