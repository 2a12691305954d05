//! Reading `PMI_process_mapping`: a recursive-descent parser over the raw bytes, for the
//! grammar in the module documentation of `mapping`; and the cursor it reads with, which
//! the task map's reader (`taskmap.rs`) shares.

use super::{total_ranks, Block, Group, Item, Mapping, MappingError};

/// Deepest nesting of repeat groups that [`Mapping::parse`] accepts.
pub(super) const MAX_DEPTH: usize = 64;

pub(super) const EMPTY: &str = "empty mapping";
pub(super) const EXPECTED_OPEN: &str = "expected '('";
pub(super) const EXPECTED_VECTOR: &str = "expected 'vector'";
pub(super) const EXPECTED_COMMA: &str = "expected ','";
pub(super) const EXPECTED_CLOSE: &str = "expected ')'";
pub(super) const EXPECTED_ITEM: &str = "expected a block, a node id or a repeat group";
pub(super) const EXPECTED_NUMBER: &str = "expected an unsigned decimal number";
pub(super) const EXPECTED_TIMES: &str = "expected 'x' after ']'";
pub(super) const EXPECTED_NEXT_ITEM: &str = "expected ',' or ')'";
pub(super) const EXPECTED_NEXT_IN_GROUP: &str = "expected ',' or ']'";
pub(super) const OVERFLOW: &str = "number does not fit in 64 bits";
pub(super) const NODE_OVERFLOW: &str = "block's node ids do not fit in 64 bits";
pub(super) const TOO_DEEP: &str = "repeat groups nested too deeply";
pub(super) const TRAILING: &str = "unexpected bytes after the mapping";
pub(super) const NO_RANKS: &str = "mapping places no ranks";

impl Mapping {
    /// Parses a `PMI_process_mapping` value.
    ///
    /// Fails on anything off the grammar in the module documentation, on numbers
    /// that overflow `u64`, on a block whose node ids overflow `u64`, on repeat
    /// groups nested deeper than 64, and on a vector that places no rank at all.
    pub fn parse(text: &[u8]) -> Result<Mapping, MappingError> {
        let items = Cursor::new(text, b" \t").mapping()?;
        let period = total_ranks(&items);
        if period == 0 {
            return Err(MappingError {
                offset: 0,
                reason: NO_RANKS,
            });
        }
        Ok(Mapping { items, period })
    }
}

/// A position in the raw bytes of a mapping or a task map, which skips the grammar's
/// blanks before each token; each grammar's reading is an `impl` of its own (here, and
/// in `taskmap.rs`).
pub(super) struct Cursor<'a> {
    pub(super) text: &'a [u8],
    pub(super) pos: usize,
    /// The bytes that may surround a token.
    blanks: &'static [u8],
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a [u8], blanks: &'static [u8]) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            blanks,
        }
    }

    pub(super) fn error(&self, reason: &'static str) -> MappingError {
        MappingError {
            offset: self.pos,
            reason,
        }
    }

    /// Skips blanks, then returns the next byte without consuming it.
    pub(super) fn peek(&mut self) -> Option<u8> {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| self.blanks.contains(b))
        {
            self.pos += 1;
        }
        self.text.get(self.pos).copied()
    }

    /// Consumes `byte` (after blanks), or fails with `reason`.
    pub(super) fn expect(&mut self, byte: u8, reason: &'static str) -> Result<(), MappingError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(reason))
        }
    }
}

/// The recursive descent of `PMI_process_mapping`'s grammar.
impl Cursor<'_> {
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
