//! The fixed header (magic, version word) and the table directory.

use crate::binary::{self, limit, table};
use crate::reader::Reader;
use crate::{Flavour, FormatError, FormatResult, StatusCode};

/// A table directory entry: kind, offset and length inside the content area.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableHeader {
    pub kind: u8,
    pub offset: u32,
    pub len: u32,
}

/// Reads magic and version word; returns (version, flavour).
///
/// Version words: `w <= 6` is an unflavoured v5/v6 module (`Common`), high
/// byte 0x0A is Aptos v7–v10, high byte 0x05 is Sui v7. Everything else is
/// `UNKNOWN_VERSION`.
pub(crate) fn read_version(bytes: &[u8]) -> FormatResult<(u32, Flavour)> {
    if bytes.len() < 4 || bytes[..4] != binary::MAGIC {
        return Err(FormatError::new(StatusCode::BAD_MAGIC, 0, "magic", "expected A1 1C EB 0B"));
    }
    let Some(word) = bytes.get(4..8) else {
        return Err(FormatError::new(StatusCode::MALFORMED, 4, "version word", "bad binary header: truncated version"));
    };
    let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    let unknown = |msg: String| FormatError::new(StatusCode::UNKNOWN_VERSION, 4, "version word", msg);
    if w <= 6 {
        if w < binary::VERSION_MIN {
            return Err(unknown(format!("bytecode version {w} unsupported (minimum {})", binary::VERSION_MIN)));
        }
        return Ok((w, Flavour::Common));
    }
    let version = w & 0x00FF_FFFF;
    match w >> 24 {
        binary::APTOS_FLAVOUR_BYTE if (7..=binary::APTOS_VERSION_MAX).contains(&version) => {
            Ok((version, Flavour::Aptos))
        }
        binary::SUI_FLAVOUR_BYTE if version == binary::SUI_VERSION_MAX => Ok((version, Flavour::Sui)),
        _ => Err(unknown(format!("version word {w:#010x} is not a supported Aptos or Sui version"))),
    }
}

/// Reads the table count and directory. Kinds are checked after each
/// entry's offset and length, in the order the real deserializers do.
pub(crate) fn read_directory(r: &mut Reader) -> FormatResult<Vec<TableHeader>> {
    r.context = "table directory";
    let count = r.count(limit::TABLE_COUNT, "table count")?;
    let mut tables = Vec::with_capacity(count.min(r.remaining()));
    for _ in 0..count {
        let at = r.offset();
        let kind = r.u8()?;
        let offset = r.uleb(limit::TABLE_OFFSET, "table offset")? as u32;
        let len = r.uleb(limit::TABLE_SIZE, "table size")? as u32;
        if !table::is_known(kind) {
            return Err(r.error_at(at, StatusCode::UNKNOWN_TABLE_TYPE, format!("unknown table kind {kind:#04x}")));
        }
        tables.push(TableHeader { kind, offset, len });
    }
    Ok(tables)
}

/// Sorts the directory by offset and checks it: contiguous from 0, no empty
/// table, no duplicate kind, nothing past the end of the blob. Returns the
/// total content length.
pub(crate) fn check_directory(tables: &mut [TableHeader], binary_len: usize, at: usize) -> FormatResult<u32> {
    tables.sort_by_key(|t| t.offset);
    let bad = |msg: String| FormatError::new(StatusCode::BAD_HEADER_TABLE, at, "table directory", msg);
    let mut seen = [false; 256];
    let mut end: u32 = 0;
    for t in tables.iter() {
        if t.offset != end {
            return Err(bad(format!(
                "table {:#04x} starts at {} but the previous one ends at {end}",
                t.kind, t.offset
            )));
        }
        if t.len == 0 {
            return Err(bad(format!("table {:#04x} is empty", t.kind)));
        }
        end = end.checked_add(t.len).ok_or_else(|| bad(format!("table {:#04x} end overflows", t.kind)))?;
        if std::mem::replace(&mut seen[t.kind as usize], true) {
            return Err(FormatError::new(
                StatusCode::DUPLICATE_TABLE,
                at,
                "table directory",
                format!("table kind {:#04x} appears twice", t.kind),
            ));
        }
        if end as usize > binary_len {
            return Err(bad(format!("table {:#04x} ends at {end}, past the end of the binary", t.kind)));
        }
    }
    Ok(end)
}
