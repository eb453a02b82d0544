//! `0x1::string_utils::native_format`: a value as text, with Aptos's
//! formatting rules (integer suffixes, `@` addresses, `0x` byte vectors,
//! quoted strings, `Some(..)` / `None`, `[ a, b ]` vectors), and
//! `native_format_list`: a `{}` format string filled from a
//! `Cons<T, Cons<.., NIL>>` list (`{{` / `}}` escape braces).
//!
//! Formatting follows the value's *type*, so it covers what types alone
//! describe: primitives, addresses, signers, vectors, `String` and
//! `Option`. Other structs need field names, which runtime types do not
//! carry: not yet (`VM_EXTENSION_ERROR`).

use crate::args::{extension_error, pop, string_value, ty_arg, Args, Registrar};
use crate::FRAMEWORK;
use movejit_runtime::gas::native::NativeParam as P;
use movejit_runtime::{GasMeter, Type, Value, VmError, VmResult};
use std::cell::Cell;
use std::fmt::Write;

/// Per value node formatted (every value, element and field).
const FORMAT_BASE: P = P::named("aptos_framework.string_utils.format.base");
/// Per byte of a `vector<u8>` or `String` formatted, and of a format string.
const FORMAT_PER_BYTE: P = P::named("aptos_framework.string_utils.format.per_byte");

#[derive(Default)]
struct Options {
    canonicalize: bool,
    single_line: bool,
    include_int_type: bool,
    /// What formatting has cost so far, in Aptos's terms: value nodes and
    /// bytes (Aptos charges each as it goes; the total is charged here
    /// when formatting ends, done or failed).
    nodes: Cell<u64>,
    bytes: Cell<u64>,
}

impl Options {
    fn charge(&self, gas: &mut GasMeter) -> VmResult<()> {
        gas.charge_aptos_native(&[(FORMAT_BASE, self.nodes.get()), (FORMAT_PER_BYTE, self.bytes.get())])
    }
}

fn is_framework(t: &Type, module: &str, name: &str) -> bool {
    matches!(t, Type::Datatype(id, _) if id.address == FRAMEWORK && &*id.module == module && &*id.name == name)
}

fn space_or_newline(newline: bool, out: &mut String, depth: usize) {
    if newline {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    } else {
        out.push(' ');
    }
}

fn address(a: &movejit_runtime::AccountAddress, o: &Options) -> String {
    if o.canonicalize {
        a.to_hex_long()[2..].to_string()
    } else {
        a.to_hex_short()
    }
}

fn format(t: &Type, v: &Value, depth: usize, o: &Options, out: &mut String) -> VmResult<()> {
    o.nodes.set(o.nodes.get() + 1);
    let bad = || VmError::invariant(format!("string_utils: {v:?} is not a {t}"));
    let int = |text: String, suffix: &'static str, out: &mut String| {
        out.push_str(&text);
        suffix
    };
    let suffix = match (t, v) {
        (Type::Bool, Value::Bool(b)) => int(b.to_string(), "", out),
        (Type::U8, Value::U8(x)) => int(x.to_string(), "u8", out),
        (Type::U16, Value::U16(x)) => int(x.to_string(), "u16", out),
        (Type::U32, Value::U32(x)) => int(x.to_string(), "u32", out),
        (Type::U64, Value::U64(x)) => int(x.to_string(), "u64", out),
        (Type::U128, Value::U128(x)) => int(x.to_string(), "u128", out),
        (Type::U256, Value::U256(x)) => int(x.to_string(), "u256", out),
        (Type::I8, Value::I8(x)) => int(x.to_string(), "i8", out),
        (Type::I16, Value::I16(x)) => int(x.to_string(), "i16", out),
        (Type::I32, Value::I32(x)) => int(x.to_string(), "i32", out),
        (Type::I64, Value::I64(x)) => int(x.to_string(), "i64", out),
        (Type::I128, Value::I128(x)) => int(x.to_string(), "i128", out),
        (Type::I256, Value::I256(x)) => int(x.to_string(), "i256", out),
        (Type::Address, Value::Address(a)) => {
            let _ = write!(out, "@{}", address(a, o));
            ""
        }
        (Type::Signer, Value::Struct(f)) => {
            let a = match f.first() {
                Some(Value::Address(a)) => a,
                _ => return Err(bad()),
            };
            let _ = write!(out, "signer(@{})", address(a, o));
            ""
        }
        (Type::Vector(e), Value::Vector(items)) => {
            if **e == Type::U8 {
                o.bytes.set(o.bytes.get() + items.len() as u64);
                out.push_str("0x");
                for b in items {
                    match b {
                        Value::U8(b) => {
                            let _ = write!(out, "{b:02x}");
                        }
                        _ => return Err(bad()),
                    }
                }
                return Ok(());
            }
            let newline = !o.single_line && matches!(**e, Type::Vector(_) | Type::Datatype(..));
            out.push('[');
            if !items.is_empty() {
                space_or_newline(newline, out, depth + 1);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        space_or_newline(newline, out, depth + 1);
                    }
                    format(e, item, depth + 1, o, out)?;
                }
                space_or_newline(newline, out, depth);
            }
            out.push(']');
            ""
        }
        (t, Value::Struct(f)) if is_framework(t, "string", "String") => {
            let bytes = f.first().ok_or_else(bad)?.to_bytes()?;
            o.bytes.set(o.bytes.get() + bytes.len() as u64);
            let s = std::str::from_utf8(&bytes).map_err(|_| VmError::invariant("Non-UTF8 string"))?;
            let _ = write!(out, "\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
            return Ok(());
        }
        (Type::Datatype(_, args), v) if is_framework(t, "option", "Option") => {
            let inner = args.first().ok_or_else(bad)?;
            let content = match v {
                Value::Variant(0, _) => None,
                Value::Variant(_, f) => Some(f.first().ok_or_else(bad)?),
                Value::Struct(f) => match f.first() {
                    Some(Value::Vector(items)) => items.first(),
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            match content {
                None => out.push_str("None"),
                Some(x) => {
                    out.push_str("Some(");
                    format(inner, x, depth, o, out)?;
                    out.push(')');
                }
            }
            return Ok(());
        }
        (Type::Datatype(..) | Type::Function(..), _) => {
            return Err(extension_error(format!("string_utils: formatting {t} is not supported yet")))
        }
        _ => return Err(bad()),
    };
    if o.include_int_type {
        out.push_str(suffix);
    }
    Ok(())
}

/// `native_format(s: &T, type_tag, canonicalize, single_line, include_int_types)`.
pub fn native_format(
    t: &Type,
    v: &Value,
    canonicalize: bool,
    single_line: bool,
    include_int_type: bool,
) -> VmResult<String> {
    format_priced(t, v, &Options { canonicalize, single_line, include_int_type, ..Options::default() })
}

fn format_priced(t: &Type, v: &Value, o: &Options) -> VmResult<String> {
    let mut out = String::new();
    format(t, v, 0, o, &mut out)?;
    Ok(out)
}

/// `native_format_list`: the list's element count differs from the `{}` count.
pub const EARGS_MISMATCH: u64 = 1;
/// `native_format_list`: unmatched braces or a format that is not UTF-8.
pub const EINVALID_FORMAT: u64 = 2;

/// `list` is `0x1::string_utils::<name>` (`Cons` or `NIL`), else `EARGS_MISMATCH`.
fn expect_list(list: &Type, name: &str) -> VmResult<()> {
    if is_framework(list, "string_utils", name) {
        Ok(())
    } else {
        Err(VmError::abort(EARGS_MISMATCH))
    }
}

/// `native_format_list(fmt, list)`: each `{}` is replaced by the next list
/// element, formatted as `native_format` does with type tags, single-line,
/// no integer suffixes. Errors come in the order Aptos finds them: scanning
/// the format left to right, then checking that the list is used up.
pub fn native_format_list(fmt: &[u8], list_ty: &Type, list: &Value) -> VmResult<String> {
    let fmt = std::str::from_utf8(fmt).map_err(|_| VmError::abort(EINVALID_FORMAT))?;
    format_list_priced(fmt, list_ty, list, &Options { single_line: true, ..Options::default() }, &mut |_| Ok(()))
}

/// [`native_format_list`] pricing into `options`; `element` is told each
/// element's type before it is formatted (Aptos builds its annotated
/// layout then, loading the modules it reaches).
fn format_list_priced(
    fmt: &str,
    list_ty: &Type,
    list: &Value,
    options: &Options,
    element: &mut dyn FnMut(&Type) -> VmResult<()>,
) -> VmResult<String> {
    let (mut ty, mut val) = (list_ty, list);
    let mut out = String::new();
    // 1 after a `{`, -1 after a `}`, 0 otherwise.
    let mut open: i8 = 0;
    for c in fmt.chars() {
        match (open, c) {
            (1, '}') => {
                open = 0;
                expect_list(ty, "Cons")?;
                let (Type::Datatype(_, args), Value::Struct(fields)) = (ty, val) else {
                    return Err(VmError::invariant("string_utils: Cons is not a struct"));
                };
                let (Some(car_ty), Some(cdr_ty), [car, cdr]) = (args.first(), args.get(1), fields.as_slice()) else {
                    return Err(VmError::invariant("string_utils: malformed Cons"));
                };
                element(car_ty)?;
                format(car_ty, car, 0, options, &mut out)?;
                (ty, val) = (cdr_ty, cdr);
                continue;
            }
            (1, '{') | (-1, '}') => open = 0,
            (1 | -1, _) => return Err(VmError::abort(EINVALID_FORMAT)),
            (_, '{') => {
                open = 1;
                continue;
            }
            (_, '}') => {
                open = -1;
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    if open != 0 {
        return Err(VmError::abort(EINVALID_FORMAT));
    }
    expect_list(ty, "NIL")?;
    Ok(out)
}

pub(crate) fn register(r: &mut Registrar<'_>) {
    r.add("string_utils", "native_format_list", |cx, ty, mut args: Args| {
        let list = pop(&mut args)?;
        let fmt = pop(&mut args)?;
        let fmt = cx.deref(&fmt)?.to_bytes()?;
        cx.gas.charge_native(fmt.len())?;
        let fmt = std::str::from_utf8(&fmt).map_err(|_| VmError::abort(EINVALID_FORMAT))?;
        // Aptos: the format string's bytes first, then each element as it
        // is formatted.
        cx.gas.charge_aptos_native(&[(FORMAT_PER_BYTE, fmt.len() as u64)])?;
        let options = Options { single_line: true, ..Options::default() };
        // A copy of the list (as Aptos reads it), so that each element's
        // layout modules can be charged while it is walked.
        let list = cx.deref(&list)?.clone();
        let s = format_list_priced(fmt, ty_arg(ty, 0)?, &list, &options, &mut |t| cx.charge_layout(t));
        options.charge(cx.gas)?;
        let s = s?;
        cx.gas.charge_native(s.len())?;
        Ok(vec![string_value(&s)])
    });
    r.add("string_utils", "native_format", |cx, ty, mut args: Args| {
        let include_int_type = pop(&mut args)?.as_bool()?;
        let single_line = pop(&mut args)?.as_bool()?;
        let canonicalize = pop(&mut args)?.as_bool()?;
        // Only struct names use `type_tag`, and structs are not formatted here.
        let _type_tag = pop(&mut args)?.as_bool()?;
        let v = pop(&mut args)?;
        cx.charge_layout(ty_arg(ty, 0)?)?;
        let options = Options { canonicalize, single_line, include_int_type, ..Options::default() };
        let s = format_priced(ty_arg(ty, 0)?, cx.deref(&v)?, &options);
        options.charge(cx.gas)?;
        let s = s?;
        cx.gas.charge_native(s.len())?;
        Ok(vec![string_value(&s)])
    });
}
