//! A bounds-checked cursor over untrusted bytes.
//!
//! Every read checks the bytes left first; nothing here allocates from a
//! length it has read. Errors carry the absolute byte offset in the original
//! input, so a reader over one table still reports positions in the file.

use crate::{Flavour, FormatError, FormatResult, StatusCode};

/// A cursor over a slice of the input, `base` bytes from its start.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
    pub version: u32,
    pub flavour: Flavour,
    pub context: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], base: usize, version: u32, flavour: Flavour, context: &'static str) -> Self {
        Reader { data, pos: 0, base, version, flavour, context }
    }

    /// Absolute offset of the next byte in the original input.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn error(&self, status: StatusCode, message: impl Into<String>) -> FormatError {
        FormatError::new(status, self.offset(), self.context, message)
    }

    pub fn error_at(&self, offset: usize, status: StatusCode, message: impl Into<String>) -> FormatError {
        FormatError::new(status, offset, self.context, message)
    }

    /// One byte; running out is `MALFORMED`, as in both real deserializers.
    pub fn u8(&mut self) -> FormatResult<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.error(StatusCode::MALFORMED, "unexpected end of input")),
        }
    }

    /// `n` raw bytes; running out gives `status`.
    pub fn bytes(&mut self, n: usize, status: StatusCode) -> FormatResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(status, format!("needs {} bytes, {} left", n, self.remaining())));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn array<const N: usize>(&mut self, status: StatusCode) -> FormatResult<[u8; N]> {
        let b = self.bytes(N, status)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// A canonical ULEB128 value no larger than `max`.
    ///
    /// Non-canonical encodings (a final zero byte after a continuation),
    /// values that overflow 64 bits, truncation and values above `max` are
    /// all `MALFORMED`, matching Move's `read_uleb128_as_u64` and
    /// `read_uleb_internal`.
    pub fn uleb(&mut self, max: u64, what: &str) -> FormatResult<u64> {
        // Fast path: most values fit in one byte.
        if let Some(&byte) = self.data.get(self.pos) {
            if byte < 0x80 && u64::from(byte) <= max {
                self.pos += 1;
                return Ok(u64::from(byte));
            }
        }
        let start = self.offset();
        let mut value: u64 = 0;
        let mut shift: u32 = 0;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(self.error_at(start, StatusCode::MALFORMED, format!("truncated ULEB128 {what}")));
            };
            self.pos += 1;
            let low = u64::from(byte & 0x7F);
            if shift >= 64 || (shift > 0 && (low << shift) >> shift != low) {
                return Err(self.error_at(start, StatusCode::MALFORMED, format!("ULEB128 {what} overflows u64")));
            }
            value |= low << shift;
            if byte & 0x80 == 0 {
                if shift > 0 && low == 0 {
                    return Err(self.error_at(start, StatusCode::MALFORMED, format!("non-canonical ULEB128 {what}")));
                }
                break;
            }
            shift += 7;
        }
        if value > max {
            return Err(self.error_at(
                start,
                StatusCode::MALFORMED,
                format!("{what} {value} exceeds the maximum {max}"),
            ));
        }
        Ok(value)
    }

    /// A ULEB128 table index (u16 range unless `max` says less).
    pub fn index(&mut self, max: u64, what: &str) -> FormatResult<u16> {
        // `max` never exceeds u16::MAX for indices, so the cast is lossless.
        Ok(self.uleb(max.min(u64::from(u16::MAX)), what)? as u16)
    }

    /// A ULEB128 count; the caller's maximum keeps it small.
    pub fn count(&mut self, max: u64, what: &str) -> FormatResult<usize> {
        let v = self.uleb(max, what)?;
        usize::try_from(v).map_err(|_| self.error(StatusCode::MALFORMED, format!("{what} too large")))
    }
}

/// Writes `value` as canonical ULEB128.
pub(crate) fn write_uleb(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let low = (value & 0x7F) as u8;
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], max: u64) -> FormatResult<u64> {
        Reader::new(bytes, 0, 9, Flavour::Aptos, "test").uleb(max, "value")
    }

    #[test]
    fn uleb_round_trips_and_rejects_bad_encodings() {
        for v in [0, 1, 127, 128, 255, 300, 16383, 16384, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut buf = Vec::new();
            write_uleb(&mut buf, v);
            assert_eq!(read(&buf, u64::MAX), Ok(v), "{v}");
        }
        let status = |b: &[u8], max| read(b, max).unwrap_err().status;
        assert_eq!(status(&[0x80, 0x00], u64::MAX), StatusCode::MALFORMED); // non-canonical
        assert_eq!(status(&[0xFF, 0x80, 0x00], u64::MAX), StatusCode::MALFORMED);
        assert_eq!(status(&[0x80], u64::MAX), StatusCode::MALFORMED); // truncated
        assert_eq!(status(&[], u64::MAX), StatusCode::MALFORMED);
        let mut too_big = vec![0xFF; 9];
        too_big.push(0x02); // bit 64 set
        assert_eq!(status(&too_big, u64::MAX), StatusCode::MALFORMED);
        assert_eq!(status(&[0xFF; 11], u64::MAX), StatusCode::MALFORMED);
        assert_eq!(status(&[0x80, 0x02], 255), StatusCode::MALFORMED); // 256 > max
        assert_eq!(read(&[0xFF, 0x01], 255), Ok(255));
    }

    #[test]
    fn reads_never_pass_the_end_and_report_absolute_offsets() {
        let data = [1u8, 2, 3];
        let mut r = Reader::new(&data, 100, 9, Flavour::Aptos, "test");
        assert_eq!(r.u8(), Ok(1));
        let e = r.bytes(3, StatusCode::BAD_U32).unwrap_err();
        assert_eq!((e.status, e.offset), (StatusCode::BAD_U32, 101));
        assert_eq!(r.array::<2>(StatusCode::BAD_U16), Ok([2, 3]));
        assert!(r.at_end());
        assert_eq!(r.u8().unwrap_err().offset, 103);
    }
}
