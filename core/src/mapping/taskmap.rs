//! Reading `flux.taskmap`: the Flux task map of RFC 34, which Flux's job shell publishes
//! in the PMI-1 KVS beside `PMI_process_mapping`, and alone when that key would pass
//! 1024 bytes (many tasks per node placed cyclically: flux-core#4778).
//!
//! ```text
//! taskmap = blocks / "{" members "}"     ; the members hold "version": 1 and "map": blocks,
//!                                         ; in any order, and any others, which are skipped
//! blocks  = "[" block *("," block) "]"    ; one block at least
//! block   = "[" nodeid "," nnodes "," ppn "," repeat "]"
//! ```
//!
//! JSON (RFC 8259) throughout, whitespace included; every number of a block is an
//! integer without fraction or exponent, `nodeid` at least 0 and the others at least 1.
//! A block is the RFC 13 block `(nodeid,nnodes,ppn)` placed `repeat` times in a row, the
//! repeat group `[(nodeid,nnodes,ppn)]xrepeat`, and the blocks in order place every task
//! of the job once (a map of another size is refused: it is not walked again from its
//! start, as a `PMI_process_mapping` vector is). Member names are compared as written
//! (an escaped name is another name).

use super::parse::{Cursor, NODE_OVERFLOW, OVERFLOW, TRAILING};
use super::{total_ranks, Block, Group, Item, Mapping, MappingError};

/// Deepest nesting of arrays and objects a skipped member's value may have.
const MAX_DEPTH: usize = 64;

pub(super) const NOT_JSON: &str = "expected a JSON value";
pub(super) const EXPECTED_MAP: &str = "expected a task map: an array of blocks, or an object";
pub(super) const EXPECTED_BLOCK: &str = "expected a block: [nodeid,nnodes,ppn,repeat]";
pub(super) const BLOCK_LENGTH: &str = "a block has exactly four numbers";
pub(super) const NO_BLOCKS: &str = "the task map has no blocks";
pub(super) const EXPECTED_INTEGER: &str = "expected a non-negative integer";
pub(super) const NOT_POSITIVE: &str = "nnodes, ppn and repeat are at least 1";
pub(super) const EXPECTED_NAME: &str = "expected a member name";
pub(super) const EXPECTED_COLON: &str = "expected ':'";
pub(super) const EXPECTED_NEXT: &str = "expected ',' or the end of the array or object";
pub(super) const DUPLICATE: &str = "member given twice";
pub(super) const NO_VERSION: &str = "the object has no \"version\"";
pub(super) const BAD_VERSION: &str = "only task map version 1 is known";
pub(super) const NO_MAP: &str = "the object has no \"map\"";
pub(super) const UNTERMINATED: &str = "unterminated string";
pub(super) const OTHER_SIZE: &str = "the task map is not of this job's size";
pub(super) const NESTED_TOO_DEEP: &str = "values nested too deeply";

impl Mapping {
    /// Parses a `flux.taskmap` value (RFC 34), wrapped or not, of a job of `size` tasks.
    ///
    /// Fails on anything that is not such a map: JSON off the grammar in the module
    /// documentation, a version other than 1, a block that is not four integers in
    /// range, numbers or node ids that do not fit in 64 bits, a map of no block, and a
    /// map that places another number of tasks than `size`.
    pub fn parse_taskmap(text: &[u8], size: u32) -> Result<Mapping, MappingError> {
        let mut json = Cursor::new(text, b" \t\n\r");
        let items = match json.peek() {
            Some(b'[') => json.task_blocks()?,
            Some(b'{') => json.wrapped()?,
            Some(_) => return Err(json.error(EXPECTED_MAP)),
            None => return Err(json.error(NOT_JSON)),
        };
        if json.peek().is_some() {
            return Err(json.error(TRAILING));
        }
        // (Every block places at least one rank: never zero.)
        let period = total_ranks(&items);
        if period != u64::from(size) {
            return Err(MappingError {
                offset: 0,
                reason: OTHER_SIZE,
            });
        }
        Ok(Mapping { items, period })
    }
}

/// Reading JSON (its whitespace the cursor's blanks), for the task map's few shapes.
impl<'a> Cursor<'a> {
    /// After an element of an array or object closed by `close`: whether another follows
    /// (the `,` consumed) or not (`close` consumed).
    fn next_of(&mut self, close: u8) -> Result<bool, MappingError> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(byte) if byte == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error(EXPECTED_NEXT)),
        }
    }

    /// `{"version": 1, "map": [...], ...}`: the blocks of its map.
    fn wrapped(&mut self) -> Result<Vec<Item>, MappingError> {
        let start = self.pos;
        self.pos += 1;
        let (mut version, mut map) = (false, None);
        let mut more = self.peek() != Some(b'}');
        if !more {
            self.pos += 1;
        }
        while more {
            self.peek();
            let at = self.pos;
            let name = self.string(EXPECTED_NAME)?;
            self.expect(b':', EXPECTED_COLON)?;
            let again = match name {
                b"version" => {
                    self.peek();
                    let number = self.pos;
                    if self.integer()? != 1 {
                        self.pos = number;
                        return Err(self.error(BAD_VERSION));
                    }
                    std::mem::replace(&mut version, true)
                }
                b"map" => map.replace(self.task_blocks()?).is_some(),
                _ => {
                    self.skip_value(1)?;
                    false
                }
            };
            if again {
                self.pos = at;
                return Err(self.error(DUPLICATE));
            }
            more = self.next_of(b'}')?;
        }
        let missing = |reason| MappingError {
            offset: start,
            reason,
        };
        if !version {
            return Err(missing(NO_VERSION));
        }
        map.ok_or(missing(NO_MAP))
    }

    /// `[block, ...]`: one item per block, a repeat group where `repeat` is over 1.
    fn task_blocks(&mut self) -> Result<Vec<Item>, MappingError> {
        self.expect(b'[', EXPECTED_MAP)?;
        if self.peek() == Some(b']') {
            return Err(self.error(NO_BLOCKS));
        }
        let mut items = Vec::new();
        loop {
            self.peek();
            let start = self.pos;
            let [first, nodes, ppn, times] = self.task_block()?;
            if first.checked_add(nodes - 1).is_none() {
                self.pos = start;
                return Err(self.error(NODE_OVERFLOW));
            }
            let block = Block { first, nodes, ppn };
            items.push(if times == 1 {
                Item::Block(block)
            } else {
                Item::Group(Group {
                    once: block.ranks(),
                    items: vec![Item::Block(block)],
                    times,
                })
            });
            if !self.next_of(b']')? {
                return Ok(items);
            }
        }
    }

    /// `[nodeid, nnodes, ppn, repeat]`, each in range.
    fn task_block(&mut self) -> Result<[u64; 4], MappingError> {
        self.expect(b'[', EXPECTED_BLOCK)?;
        let mut numbers = [0; 4];
        for (i, slot) in numbers.iter_mut().enumerate() {
            if i > 0 && !self.next_of(b']')? {
                return Err(self.error(BLOCK_LENGTH));
            }
            self.peek();
            let at = self.pos;
            *slot = self.integer()?;
            if i > 0 && *slot == 0 {
                self.pos = at;
                return Err(self.error(NOT_POSITIVE));
            }
        }
        if self.next_of(b']')? {
            return Err(self.error(BLOCK_LENGTH));
        }
        Ok(numbers)
    }

    /// A JSON number that is a non-negative integer (`0`, or a digit 1-9 and digits; no
    /// sign, fraction or exponent), after whitespace.
    fn integer(&mut self) -> Result<u64, MappingError> {
        self.peek();
        let digits = self.text[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let leading_zero = digits > 1 && self.text[self.pos] == b'0';
        let fraction = matches!(self.text.get(self.pos + digits), Some(b'.' | b'e' | b'E'));
        if digits == 0 || leading_zero || fraction {
            return Err(self.error(EXPECTED_INTEGER));
        }
        let mut value: u64 = 0;
        for &byte in &self.text[self.pos..self.pos + digits] {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(byte - b'0')))
                .ok_or(self.error(OVERFLOW))?;
        }
        self.pos += digits;
        Ok(value)
    }

    /// A string's raw bytes between its quotes (escapes left as written), after
    /// whitespace; `reason` when there is none.
    fn string(&mut self, reason: &'static str) -> Result<&'a [u8], MappingError> {
        self.expect(b'"', reason)?;
        let (text, start) = (self.text, self.pos);
        loop {
            match text.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(&text[start..self.pos - 1]);
                }
                Some(b'\\') => self.pos += 2,
                Some(_) => self.pos += 1,
                None => {
                    self.pos = start - 1;
                    return Err(self.error(UNTERMINATED));
                }
            }
        }
    }

    /// Any JSON value, passed over unread (a member other than `version` and `map`), at
    /// nesting level `depth`. Its numbers are not checked.
    fn skip_value(&mut self, depth: usize) -> Result<(), MappingError> {
        if depth > MAX_DEPTH {
            return Err(self.error(NESTED_TOO_DEEP));
        }
        match self.peek() {
            Some(b'"') => self.string(NOT_JSON).map(|_| ()),
            Some(open @ (b'[' | b'{')) => {
                let close = if open == b'[' { b']' } else { b'}' };
                self.pos += 1;
                if self.peek() == Some(close) {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    if open == b'{' {
                        self.string(EXPECTED_NAME)?;
                        self.expect(b':', EXPECTED_COLON)?;
                    }
                    self.skip_value(depth + 1)?;
                    if !self.next_of(close)? {
                        return Ok(());
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                self.pos += self.text[self.pos..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                Ok(())
            }
            _ => {
                let word = [&b"true"[..], b"false", b"null"]
                    .into_iter()
                    .find(|word| self.text[self.pos..].starts_with(word))
                    .ok_or(self.error(NOT_JSON))?;
                self.pos += word.len();
                Ok(())
            }
        }
    }
}
