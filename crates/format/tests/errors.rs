//! Hand-built malformed inputs, one per status the decoder and bounds
//! checker produce, each checked for the exact status (and a sane offset).

mod common;

use movejit_format::{decode_module, decode_script, serialize_module, Flavour, StatusCode};
use StatusCode as S;

const APTOS: u32 = 0x0A00_0000;
const SUI: u32 = 0x0500_0000;

fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A module written table by table, so headers can be made wrong on purpose.
#[derive(Clone)]
struct Raw {
    word: u32,
    tables: Vec<(u8, Vec<u8>)>,
    tail: Vec<u8>,
}

impl Raw {
    fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0xA1, 0x1C, 0xEB, 0x0B];
        out.extend_from_slice(&self.word.to_le_bytes());
        uleb(&mut out, self.tables.len() as u64);
        let mut off = 0u64;
        for (kind, content) in &self.tables {
            out.push(*kind);
            uleb(&mut out, off);
            uleb(&mut out, content.len() as u64);
            off += content.len() as u64;
        }
        for (_, content) in &self.tables {
            out.extend_from_slice(content);
        }
        out.extend_from_slice(&self.tail);
        out
    }

    fn table(&mut self, kind: u8) -> &mut Vec<u8> {
        &mut self.tables.iter_mut().find(|(k, _)| *k == kind).expect("table present").1
    }
}

fn version_of(word: u32) -> u32 {
    word & 0x00FF_FFFF
}

/// Module `0x0::m` with one public function `f()` whose code is `code`
/// (`count` instructions), locals signature 0 (empty), plus `sigs` extra
/// signatures appended after the empty one.
fn module_with(word: u32, code: &[u8], count: u64, sigs: &[&[u8]]) -> Raw {
    let v = version_of(word);
    let aptos = word >> 24 == 0x0A;
    let sui = word >> 24 == 0x05;
    let mut fh = vec![0, 1, 0, 0, 0];
    if aptos && v >= 7 {
        fh.push(0x01); // no access specifiers
    }
    if aptos && v >= 8 {
        fh.push(0x00); // no attributes
    }
    let mut sig_table = vec![0x00];
    for s in sigs {
        sig_table.extend_from_slice(s);
    }
    let mut fdef = vec![0, 1, 0, 0, 0];
    uleb(&mut fdef, count);
    fdef.extend_from_slice(code);
    if sui {
        fdef.push(0); // jump table count
    }
    Raw {
        word,
        tables: vec![
            (0x01, vec![0, 0]),
            (0x03, fh),
            (0x05, sig_table),
            (0x07, vec![1, b'm', 1, b'f']),
            (0x08, vec![0; 32]),
            (0x0C, fdef),
        ],
        tail: vec![0],
    }
}

fn ret_module(word: u32) -> Raw {
    module_with(word, &[0x02], 1, &[])
}

#[track_caller]
fn expect(bytes: &[u8], status: StatusCode) {
    match decode_module(bytes) {
        Ok(_) => panic!("expected {status}, decoded fine"),
        Err(e) => {
            println!("{status}: {e}");
            assert_eq!(e.status, status, "{e}");
            assert!(e.offset <= bytes.len(), "offset {} past input of {} bytes: {e}", e.offset, bytes.len());
        }
    }
}

#[test]
fn the_minimal_modules_are_valid_in_every_version_and_flavour() {
    for word in [5, 6, APTOS | 7, APTOS | 8, APTOS | 9, APTOS | 10, SUI | 7] {
        let bytes = ret_module(word).bytes();
        let m = decode_module(&bytes).unwrap_or_else(|e| panic!("{word:#x}: {e}"));
        assert_eq!(m.version, version_of(word));
        assert_eq!(serialize_module(&m), bytes, "{word:#x} round trip");
    }
}

#[test]
fn magic_and_version_word() {
    let good = ret_module(APTOS | 9).bytes();
    let mut b = good.clone();
    b[0] = 0xDE;
    expect(&b, S::BAD_MAGIC);
    expect(&[0xA1, 0x1C, 0xEB], S::BAD_MAGIC);
    expect(&[], S::BAD_MAGIC);
    expect(&[0xA1, 0x1C, 0xEB, 0x0B, 6, 0], S::MALFORMED); // truncated version word
                                                           // Unsupported words: v1-v4, unflavoured v7, Aptos v6/v11, Sui v6/v8, other flavour bytes.
    for word in [0, 1, 4, 7, 10, APTOS | 6, APTOS | 11, SUI | 6, SUI | 8, 0x0B00_0007, 0xFF00_0007, 0x0A01_0007] {
        let mut b = good.clone();
        b[4..8].copy_from_slice(&u32::to_le_bytes(word));
        expect(&b, S::UNKNOWN_VERSION);
    }
}

#[test]
fn flavour_decides_what_the_shared_bytes_mean() {
    // A Sui v7 module read with the Aptos word: its code unit's jump-table
    // count byte is left over, so the function table does not parse the same.
    let sui = ret_module(SUI | 7);
    assert_eq!(decode_module(&sui.bytes()).unwrap().flavour, Flavour::Sui);
    let mut as_aptos = sui.clone();
    as_aptos.word = APTOS | 7;
    assert!(decode_module(&as_aptos.bytes()).is_err());
    // 0x56 is VariantSwitch in Sui and TestVariant in Aptos.
    let sui_switch = module_with(SUI | 7, &[0x56, 0x00], 1, &[]);
    let e = decode_module(&sui_switch.bytes()).unwrap_err();
    assert_eq!(e.status, S::INDEX_OUT_OF_BOUNDS, "no jump table 0: {e}");
    let aptos_test = module_with(APTOS | 7, &[0x56, 0x00], 1, &[]);
    let e = decode_module(&aptos_test.bytes()).unwrap_err();
    assert_eq!(e.status, S::INDEX_OUT_OF_BOUNDS, "no struct variant handle 0: {e}");
    // Opcodes above 0x56 do not exist in Sui.
    expect(&module_with(SUI | 7, &[0x57, 0x00], 1, &[]).bytes(), S::UNKNOWN_OPCODE);
}

#[test]
fn table_directory_errors() {
    let base = ret_module(APTOS | 9);
    // Duplicate kind.
    let mut r = base.clone();
    r.tables.push((0x01, vec![0, 0]));
    expect(&r.bytes(), S::DUPLICATE_TABLE);
    // Unknown kinds.
    for kind in [0x00, 0x09, 0x15, 0xFF] {
        let mut r = base.clone();
        r.tables.push((kind, vec![0]));
        expect(&r.bytes(), S::UNKNOWN_TABLE_TYPE);
    }
    // Empty table.
    let mut r = base.clone();
    r.tables.push((0x10, vec![]));
    expect(&r.bytes(), S::BAD_HEADER_TABLE);
    // A gap between tables: patch the second table's offset.
    let mut b = base.bytes();
    // header: magic 4, word 4, count 1, then (kind, off, len) triples of 1-byte ulebs.
    b[9 + 3 + 1] += 1;
    expect(&b, S::BAD_HEADER_TABLE);
    // A table claiming more bytes than the binary has.
    let mut b = base.bytes();
    let last = 9 + 3 * 5;
    b[last + 2] = 0x7F;
    expect(&b, S::BAD_HEADER_TABLE);
    // Tables fit in the file length but not after the directory: MALFORMED.
    let mut b = base.bytes();
    let total = b.len() - 9 - 3 * base.tables.len();
    b[last + 2] += (b.len() - 9 - total) as u8 - 1;
    expect(&b, S::MALFORMED);
    // Enum/variant table kinds before v7.
    let mut r = ret_module(6);
    r.tables.push((0x11, vec![0]));
    expect(&r.bytes(), S::MALFORMED);
    // Sui never has metadata.
    let mut r = ret_module(SUI | 7);
    r.tables.push((0x10, vec![1, b'k', 1, b'v']));
    expect(&r.bytes(), S::MALFORMED);
    let mut r = ret_module(APTOS | 9);
    r.tables.push((0x10, vec![1, b'k', 1, b'v']));
    assert_eq!(decode_module(&r.bytes()).unwrap().metadata.len(), 1);
}

#[test]
fn uleb_encodings() {
    // Non-canonical self handle index (0x80 0x00 == 0).
    let mut r = ret_module(APTOS | 9);
    r.tail = vec![0x80, 0x00];
    expect(&r.bytes(), S::MALFORMED);
    // Overflowing u64.
    let mut r = ret_module(APTOS | 9);
    r.tail = vec![0xFF; 11];
    expect(&r.bytes(), S::MALFORMED);
    // Above the field's maximum: local index 256 in CopyLoc.
    expect(&module_with(APTOS | 9, &[0x0A, 0x80, 0x02, 0x02], 2, &[]).bytes(), S::MALFORMED);
    // Truncated ULEB at the end of a table.
    expect(&module_with(APTOS | 9, &[0x05, 0x80], 1, &[]).bytes(), S::MALFORMED);
    // Non-canonical table count.
    let mut b = ret_module(APTOS | 9).bytes();
    b.insert(8, 0x86);
    b[9] = 0x00;
    expect(&b, S::MALFORMED);
}

#[test]
fn trailing_bytes_status_depends_on_flavour() {
    let mut r = ret_module(SUI | 7);
    r.tail.push(0);
    expect(&r.bytes(), S::TRAILING_BYTES);
    let mut r = ret_module(APTOS | 9);
    r.tail.push(0);
    expect(&r.bytes(), S::MALFORMED);
}

#[test]
fn opcodes() {
    expect(&module_with(APTOS | 10, &[0x69], 1, &[]).bytes(), S::UNKNOWN_OPCODE);
    expect(&module_with(APTOS | 10, &[0x00], 1, &[]).bytes(), S::UNKNOWN_OPCODE);
    // Newer than the module: LdU16 at v5, TestVariant at v6, closures at v7,
    // signed ints at v8, AbortMsg at v9.
    expect(&module_with(5, &[0x48, 1, 0, 0x02], 2, &[]).bytes(), S::MALFORMED);
    expect(&module_with(6, &[0x56, 0, 0x02], 2, &[]).bytes(), S::MALFORMED);
    expect(&module_with(APTOS | 7, &[0x5A, 0, 0x02], 2, &[]).bytes(), S::MALFORMED);
    expect(&module_with(APTOS | 8, &[0x5B, 1, 0x02], 2, &[]).bytes(), S::MALFORMED);
    expect(&module_with(APTOS | 9, &[0x68], 1, &[]).bytes(), S::MALFORMED);
    // The same instructions at their own version decode (then fail nothing).
    decode_module(&module_with(APTOS | 9, &[0x5B, 1, 0x01, 0x02], 3, &[]).bytes()).unwrap();
    // Truncated fixed-width operands.
    expect(&module_with(APTOS | 9, &[0x48, 1], 1, &[]).bytes(), S::BAD_U16);
    expect(&module_with(APTOS | 9, &[0x49, 1], 1, &[]).bytes(), S::BAD_U32);
    expect(&module_with(APTOS | 9, &[0x06, 1], 1, &[]).bytes(), S::BAD_U64);
    expect(&module_with(APTOS | 9, &[0x32, 1], 1, &[]).bytes(), S::BAD_U128);
    expect(&module_with(APTOS | 9, &[0x4A, 1], 1, &[]).bytes(), S::BAD_U256);
    expect(&module_with(APTOS | 9, &[0x40, 1, 1, 0], 1, &[]).bytes(), S::BAD_U64);
    expect(&module_with(APTOS | 9, &[0x5E, 1], 1, &[]).bytes(), S::MALFORMED);
    // Fewer instructions than the count says.
    expect(&module_with(APTOS | 9, &[0x02], 2, &[]).bytes(), S::MALFORMED);
}

#[test]
fn signature_tokens() {
    let with_sig = |word: u32, sig: &[u8]| module_with(word, &[0x02], 1, &[sig]).bytes();
    expect(&with_sig(APTOS | 10, &[1, 0x17]), S::UNKNOWN_SERIALIZED_TYPE);
    expect(&with_sig(APTOS | 10, &[1, 0x00]), S::UNKNOWN_SERIALIZED_TYPE);
    expect(&with_sig(SUI | 7, &[1, 0x10, 0, 0, 0]), S::UNKNOWN_SERIALIZED_TYPE);
    expect(&with_sig(SUI | 7, &[1, 0x11]), S::UNKNOWN_SERIALIZED_TYPE);
    expect(&with_sig(5, &[1, 0x0D]), S::MALFORMED); // u16 before v6
    expect(&with_sig(APTOS | 7, &[1, 0x10, 0, 0, 0]), S::MALFORMED); // function type before v8
    expect(&with_sig(APTOS | 8, &[1, 0x11]), S::MALFORMED); // i8 before v9
    decode_module(&with_sig(APTOS | 9, &[2, 0x11, 0x10, 0x03, 1, 1, 0x03, 0x01])).unwrap();
    // Struct instantiation with no type arguments.
    expect(&with_sig(APTOS | 9, &[1, 0x0B, 0, 0]), S::MALFORMED);
    // Type parameter index 65536: read, then fails the u16 conversion.
    expect(&with_sig(APTOS | 9, &[1, 0x09, 0x80, 0x80, 0x04]), S::UNKNOWN_INVARIANT_VIOLATION_ERROR);
    // Nesting: 255 vectors around a bool fit Move's stack limit, 256 do not.
    let nested = |depth: usize| {
        let mut s = vec![1];
        s.extend(std::iter::repeat_n(0x0A, depth));
        s.push(0x01);
        s
    };
    decode_module(&with_sig(APTOS | 9, &nested(255))).unwrap();
    expect(&with_sig(APTOS | 9, &nested(256)), S::MALFORMED);
    expect(&with_sig(APTOS | 9, &nested(100_000)), S::MALFORMED);
    // Truncated inside a token.
    expect(&with_sig(APTOS | 9, &[1, 0x0A]), S::MALFORMED);
}

#[test]
fn definitions_and_handles() {
    let base = ret_module(APTOS | 9);
    // Unknown function flag bits, checked after the code unit.
    let mut r = base.clone();
    r.table(0x0C)[2] = 0x08;
    expect(&r.bytes(), S::INVALID_FLAG_BITS);
    // Visibility 2 (old "script") is gone since v5.
    let mut r = base.clone();
    r.table(0x0C)[1] = 2;
    expect(&r.bytes(), S::MALFORMED);
    // Struct definition flags.
    let mut r = base.clone();
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x0A, vec![0, 0x04]));
    expect(&r.bytes(), S::UNKNOWN_NATIVE_STRUCT_FLAG);
    let mut r = ret_module(SUI | 7);
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x0A, vec![0, 0x03, 1, 1, 0]));
    expect(&r.bytes(), S::UNKNOWN_NATIVE_STRUCT_FLAG);
    let mut r = ret_module(6);
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x0A, vec![0, 0x03, 1, 1, 0]));
    expect(&r.bytes(), S::MALFORMED);
    // Aptos enum with zero variants: decodes, then the bounds check refuses it.
    let mut r = base.clone();
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x0A, vec![0, 0x03, 0]));
    expect(&r.bytes(), S::ZERO_VARIANTS_ERROR);
    // Sui enum flags and empty enums.
    let mut r = ret_module(SUI | 7);
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x11, vec![0, 0x01, 1, 1, 0]));
    expect(&r.bytes(), S::UNKNOWN_ENUM_FLAG);
    let mut r = ret_module(SUI | 7);
    r.tables.push((0x02, vec![0, 1, 0, 0]));
    r.tables.push((0x11, vec![0, 0x02, 0]));
    expect(&r.bytes(), S::MALFORMED);
    // Sui jump table kind.
    let mut r = ret_module(SUI | 7);
    let fdef = r.table(0x0C);
    fdef.pop();
    fdef.extend_from_slice(&[1, 0, 1, 0x02, 0]);
    expect(&r.bytes(), S::UNKNOWN_JUMP_TABLE_FLAG);
    // Identifiers: `$` only from v9, and Move's identifier syntax.
    for (word, ident, ok) in [
        (APTOS | 8, "a$b", false),
        (APTOS | 9, "a$b", true),
        (APTOS | 9, "$a", true),
        (APTOS | 9, "1a", false),
        (APTOS | 9, "_", false),
        (APTOS | 9, "a-b", false),
        (APTOS | 9, "<SELF>", true),
    ] {
        let mut r = ret_module(word);
        let ids = r.table(0x07);
        ids.extend_from_slice(&[ident.len() as u8]);
        ids.extend_from_slice(ident.as_bytes());
        match decode_module(&r.bytes()) {
            Ok(_) => assert!(ok, "{ident} at {word:#x} should be rejected"),
            Err(e) => {
                assert!(!ok, "{ident} at {word:#x}: {e}");
                assert_eq!(e.status, S::MALFORMED);
            }
        }
    }
    // Aptos function attributes: struct-API ones only from v10, unknown tags.
    let mut r = ret_module(APTOS | 9);
    *r.table(0x03).last_mut().unwrap() = 1;
    r.table(0x03).push(0x03);
    expect(&r.bytes(), S::MALFORMED);
    let mut r = ret_module(APTOS | 10);
    *r.table(0x03).last_mut().unwrap() = 1;
    r.table(0x03).extend_from_slice(&[0x04, 7, 0]);
    let m = decode_module(&r.bytes()).unwrap();
    assert_eq!(m.function_handles[0].attributes, vec![movejit_format::FunctionAttribute::PackVariant(7)]);
    let mut r = ret_module(APTOS | 10);
    *r.table(0x03).last_mut().unwrap() = 1;
    r.table(0x03).push(0x0A);
    expect(&r.bytes(), S::MALFORMED);
    // Access specifiers: kind 3 (acquires) is not accepted by the deserializer.
    let mut r = ret_module(APTOS | 9);
    let fh = r.table(0x03);
    fh.truncate(5);
    fh.extend_from_slice(&[0x02, 1, 0x03, 0x01, 0x01, 0x01, 0x00]);
    expect(&r.bytes(), S::MALFORMED);
    let mut r = ret_module(APTOS | 9);
    let fh = r.table(0x03);
    fh.truncate(5);
    fh.extend_from_slice(&[0x02, 1, 0x01, 0x02, 0x01, 0x01, 0x00]);
    let m = decode_module(&r.bytes()).unwrap();
    assert_eq!(serialize_module(&m), r.bytes());
}

#[test]
fn bounds_check_errors() {
    // No module handles at all.
    let mut r = ret_module(APTOS | 9);
    r.tables.retain(|(k, _)| *k != 0x01 && *k != 0x03 && *k != 0x0C);
    expect(&r.bytes(), S::NO_MODULE_HANDLES);
    // Self handle out of range.
    let mut r = ret_module(APTOS | 9);
    r.tail = vec![1];
    expect(&r.bytes(), S::INDEX_OUT_OF_BOUNDS);
    // Identifier index out of range in the module handle.
    let mut r = ret_module(APTOS | 9);
    r.table(0x01)[1] = 9;
    expect(&r.bytes(), S::INDEX_OUT_OF_BOUNDS);
    // Branch target, local, constant, call, signature out of range.
    for code in [&[0x05, 0x05][..], &[0x0A, 0x00], &[0x07, 0x00], &[0x11, 0x03], &[0x41, 0x09]] {
        expect(&module_with(APTOS | 9, code, 1, &[]).bytes(), S::INDEX_OUT_OF_BOUNDS);
    }
    // Type parameter index beyond the function's type parameters.
    expect(&module_with(APTOS | 9, &[0x41, 0x01, 0x02], 2, &[&[1, 0x09, 0]]).bytes(), S::INDEX_OUT_OF_BOUNDS);
    // Struct token with the wrong number of type arguments.
    let mut r = ret_module(APTOS | 9);
    r.tables.push((0x02, vec![0, 1, 0, 1, 0, 0]));
    r.table(0x05).extend_from_slice(&[1, 0x08, 0]);
    expect(&r.bytes(), S::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH);
    // Parameters plus locals above 255: TOO_MANY_LOCALS (255 locals alone are fine).
    let mut locals = vec![0xFF, 0x01];
    locals.extend(std::iter::repeat_n(0x03, 255));
    let mut r = module_with(APTOS | 9, &[0x02], 1, &[&locals, &[1, 0x03]]);
    r.table(0x0C)[4] = 1; // locals = signature 1
    decode_module(&r.bytes()).unwrap();
    r.table(0x03)[2] = 2; // parameters = signature 2 (one u64)
    expect(&r.bytes(), S::TOO_MANY_LOCALS);
    // Sui jump table with a target past the code, and a head enum that does not exist.
    let mut r = ret_module(SUI | 7);
    let fdef = r.table(0x0C);
    fdef.pop();
    fdef.extend_from_slice(&[1, 0, 1, 0x01, 5]);
    expect(&r.bytes(), S::INDEX_OUT_OF_BOUNDS);
}

#[test]
fn scripts() {
    // A script: common tables, then type params, params, (v8+ access specifiers), code.
    let script = |word: u32, extra: &[(u8, Vec<u8>)]| {
        let mut tables = vec![(0x05, vec![0x00])];
        tables.extend_from_slice(extra);
        let mut tail = vec![0, 0];
        if version_of(word) >= 8 {
            tail.push(0x01);
        }
        tail.extend_from_slice(&[0, 1, 0x02]);
        Raw { word, tables, tail }.bytes()
    };
    let s = decode_script(&script(APTOS | 9, &[])).unwrap();
    assert_eq!(s.code.code, vec![movejit_format::Bytecode::Ret]);
    assert_eq!(movejit_format::serialize_script(&s), script(APTOS | 9, &[]));
    decode_script(&script(6, &[])).unwrap();
    let e = decode_script(&script(SUI | 7, &[])).unwrap_err();
    assert_eq!(e.status, S::MALFORMED, "Sui has no scripts: {e}");
    let e = decode_script(&script(APTOS | 9, &[(0x0C, vec![0])])).unwrap_err();
    assert_eq!(e.status, S::MALFORMED, "{e}");
    let mut b = script(APTOS | 9, &[]);
    b.push(0);
    assert_eq!(decode_script(&b).unwrap_err().status, S::MALFORMED);
}
