//! A cursor over fuzz input that never fails: reads past the end yield zeros (and
//! [`Input::is_empty`] tells the caller to stop), so every byte string is a valid program and
//! libFuzzer's mutations shift fields rather than invalidate the whole input. [`Writer`] writes
//! the same fields, for seeds.

/// Reads fields from fuzz input.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// Whether every octet was read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// One octet (0 past the end).
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A big-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }

    /// A big-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// Up to `n` octets (fewer at the end).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// Octets prefixed by a u16 length, at most `max` of them.
    pub fn blob(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.u16()).min(max);
        self.bytes(n)
    }
}

/// Writes fields in the form [`Input`] reads them.
#[derive(Debug, Default, Clone)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// One octet.
    pub fn u8(&mut self, b: u8) -> &mut Self {
        self.0.push(b);
        self
    }

    /// A big-endian u16.
    pub fn u16(&mut self, n: u16) -> &mut Self {
        self.0.extend_from_slice(&n.to_be_bytes());
        self
    }

    /// A big-endian u32.
    pub fn u32(&mut self, n: u32) -> &mut Self {
        self.0.extend_from_slice(&n.to_be_bytes());
        self
    }

    /// Raw octets.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }

    /// Octets prefixed by their u16 length.
    pub fn blob(&mut self, b: &[u8]) -> &mut Self {
        let n = u16::try_from(b.len()).expect("a seed blob fits a u16 length");
        self.u16(n).bytes(b)
    }
}
