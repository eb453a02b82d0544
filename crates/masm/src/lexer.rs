//! Text → tokens. Lines matter in `.masm`: a line that starts with white
//! space yields an `Indent` token first, every non-blank line ends with a
//! `Newline`, and blank or comment-only lines yield nothing.

use crate::error::{AsmError, AsmErrorKind, AsmResult, Pos};
use ethnum::U256;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Number(U256),
    /// `x"00ff"`: a byte string.
    Bytes(Vec<u8>),
    Ident(String),
    /// One of `( ) < > [ ] , : :: | + = & # - * !`.
    Sym(&'static str),
    Indent,
    Newline,
    End,
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Number(n) => write!(f, "{n}"),
            Tok::Bytes(_) => f.write_str("byte string"),
            Tok::Ident(s) => f.write_str(s),
            Tok::Sym(s) => f.write_str(s),
            Tok::Indent => f.write_str("<indent>"),
            Tok::Newline => f.write_str("<newline>"),
            Tok::End => f.write_str("<end of file>"),
        }
    }
}

const SYMBOLS: &[&str] = &["::", "(", ")", "<", ">", "[", "]", ",", ":", "|", "+", "=", "&", "#", "-", "*", "!"];

fn id_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$'
}

fn id_cont(c: u8) -> bool {
    id_start(c) || c.is_ascii_digit()
}

/// Splits `src` into tokens with their positions.
pub fn tokenize(src: &str) -> AsmResult<Vec<(Pos, Tok)>> {
    let mut out = Vec::new();
    for (line_no, line) in src.split('\n').enumerate() {
        let line_no = u32::try_from(line_no + 1).unwrap_or(u32::MAX);
        let bytes = line.as_bytes();
        let at = |i: usize| Pos { line: line_no, col: u32::try_from(i + 1).unwrap_or(u32::MAX) };
        let mut i = 0;
        let mut line_toks = Vec::new();
        while i < bytes.len() {
            let c = bytes[i];
            if c == b' ' || c == b'\t' || c == b'\r' {
                i += 1;
                continue;
            }
            if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
                break;
            }
            let start = i;
            if c == b'x' && bytes.get(i + 1) == Some(&b'"') {
                i += 2;
                let digits_start = i;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += 1;
                }
                if i >= bytes.len() {
                    return Err(AsmError::new(AsmErrorKind::Syntax, at(start), "unterminated byte string"));
                }
                let digits = &line[digits_start..i];
                i += 1;
                let value = hex::decode(digits).map_err(|_| {
                    AsmError::new(AsmErrorKind::Syntax, at(start), format!("invalid hex byte string `{digits}`"))
                })?;
                line_toks.push((at(start), Tok::Bytes(value)));
            } else if c.is_ascii_digit() {
                let (radix, digits_start) =
                    if c == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X')) { (16, i + 2) } else { (10, i) };
                i = digits_start;
                while i < bytes.len() && (bytes[i] as char).is_digit(radix) {
                    i += 1;
                }
                if i < bytes.len() && id_cont(bytes[i]) {
                    return Err(AsmError::new(AsmErrorKind::Syntax, at(start), "invalid number literal"));
                }
                let digits = &line[digits_start..i];
                let value = U256::from_str_radix(digits, radix).map_err(|_| {
                    AsmError::new(
                        AsmErrorKind::Syntax,
                        at(start),
                        format!("invalid or too large number `{}`", &line[start..i]),
                    )
                })?;
                line_toks.push((at(start), Tok::Number(value)));
            } else if id_start(c) {
                while i < bytes.len() && id_cont(bytes[i]) {
                    i += 1;
                }
                line_toks.push((at(start), Tok::Ident(line[start..i].to_string())));
            } else if let Some(sym) = SYMBOLS.iter().find(|s| bytes[i..].starts_with(s.as_bytes())) {
                i += sym.len();
                line_toks.push((at(start), Tok::Sym(sym)));
            } else {
                let ch = line[i..].chars().next().unwrap_or('?');
                return Err(AsmError::new(AsmErrorKind::Syntax, at(start), format!("invalid character `{ch}`")));
            }
        }
        if line_toks.is_empty() {
            continue;
        }
        if matches!(bytes.first(), Some(b' ' | b'\t')) {
            out.push((at(0), Tok::Indent));
        }
        let end = at(bytes.len());
        out.extend(line_toks);
        out.push((end, Tok::Newline));
    }
    let last_line = u32::try_from(src.split('\n').count()).unwrap_or(u32::MAX);
    out.push((Pos { line: last_line, col: 1 }, Tok::End));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_indents() {
        let toks: Vec<Tok> = tokenize("module 0x1::m\n\n  // c\n    ld_u8 255 // x\nl0: ret")
            .unwrap()
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(
            toks,
            vec![
                Tok::Ident("module".into()),
                Tok::Number(U256::ONE),
                Tok::Sym("::"),
                Tok::Ident("m".into()),
                Tok::Newline,
                Tok::Indent,
                Tok::Ident("ld_u8".into()),
                Tok::Number(U256::from(255u32)),
                Tok::Newline,
                Tok::Ident("l0".into()),
                Tok::Sym(":"),
                Tok::Ident("ret".into()),
                Tok::Newline,
                Tok::End
            ]
        );
    }

    #[test]
    fn errors_carry_positions() {
        let e = tokenize("module 0x1::m\n  ld_u8 1?").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 10 });
        let e = tokenize("x\"0g\"").unwrap_err();
        assert_eq!(e.pos, Pos { line: 1, col: 1 });
        assert!(tokenize("ld_u256 0x1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff").is_err());
    }
}
