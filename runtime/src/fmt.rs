//! Printing values the way the Move VM's debug printer does: integers in
//! decimal, addresses as 64 hex digits, vectors `[a, b]`, structs `{ a, b }`,
//! enum variants `|tag|{ a, b }`.

use crate::layout::Layout;
use crate::values::Value;
use std::fmt::Write;

/// The debug text of `v`, shaped by `l`.
pub fn print_value(v: &Value, l: &Layout) -> String {
    let mut s = String::new();
    write_value(&mut s, v, l);
    s
}

fn hex_addr(a: &movejit_format::AccountAddress) -> String {
    a.to_hex_long()[2..].to_string()
}

fn write_list(s: &mut String, items: &[Value], layouts: &mut dyn Iterator<Item = &Layout>, open: &str, close: &str) {
    s.push_str(open);
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match layouts.next() {
            Some(l) => write_value(s, v, l),
            None => {
                let _ = write!(s, "{v:?}");
            }
        }
    }
    s.push_str(close);
}

fn write_value(s: &mut String, v: &Value, l: &Layout) {
    match (v, l) {
        (Value::Bool(b), _) => {
            let _ = write!(s, "{b}");
        }
        (Value::U8(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::U16(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::U32(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::U64(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::U128(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::U256(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I8(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I16(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I32(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I64(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I128(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::I256(x), _) => {
            let _ = write!(s, "{x}");
        }
        (Value::Address(a), _) => s.push_str(&hex_addr(a)),
        (Value::Vector(items), Layout::Vector(el)) => write_list(s, items, &mut std::iter::repeat(&**el), "[", "]"),
        (Value::Struct(f), Layout::Struct(fl)) => write_list(s, f, &mut fl.iter(), "{ ", " }"),
        (Value::Struct(f), Layout::Signer) => write_list(s, f, &mut std::iter::repeat(&Layout::Address), "{ ", " }"),
        (Value::Variant(tag, f), Layout::Enum(vl)) => {
            let _ = write!(s, "|{tag}|");
            let empty = Vec::new();
            let fl = vl.get(*tag as usize).unwrap_or(&empty);
            write_list(s, f, &mut fl.iter(), "{ ", " }");
        }
        (v, _) => {
            let _ = write!(s, "{v:?}");
        }
    }
}
