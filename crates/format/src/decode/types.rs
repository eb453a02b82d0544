//! Signature tokens, ability sets and the small shared encodings.

use crate::binary::{limit, ty};
use crate::reader::Reader;
use crate::{AbilitySet, Flavour, FormatResult, SignatureToken, StatusCode, StructHandleIndex, StructTypeParameter};

/// A type constructor still waiting for its arguments.
enum Pending {
    Vector,
    Reference,
    MutableReference,
    StructInst { handle: StructHandleIndex, arity: usize, args: Vec<SignatureToken> },
    Function { abilities: AbilitySet, params: usize, results: usize, args: Vec<SignatureToken> },
}

/// One node read from the stream: complete, or a constructor.
enum Node {
    Done(SignatureToken),
    Open(Pending),
}

impl Pending {
    /// Feeds one argument; returns the finished token once saturated.
    fn feed(self, tok: SignatureToken) -> Node {
        match self {
            Pending::Vector => Node::Done(SignatureToken::Vector(Box::new(tok))),
            Pending::Reference => Node::Done(SignatureToken::Reference(Box::new(tok))),
            Pending::MutableReference => Node::Done(SignatureToken::MutableReference(Box::new(tok))),
            Pending::StructInst { handle, arity, mut args } => {
                args.push(tok);
                if args.len() >= arity {
                    Node::Done(SignatureToken::StructInstantiation(handle, args))
                } else {
                    Node::Open(Pending::StructInst { handle, arity, args })
                }
            }
            Pending::Function { abilities, params, results, mut args } => {
                args.push(tok);
                if args.len() >= params + results {
                    let results_vec = args.split_off(params);
                    Node::Done(SignatureToken::Function(args, results_vec, abilities))
                } else {
                    Node::Open(Pending::Function { abilities, params, results, args })
                }
            }
        }
    }
}

/// Reads one signature token (pre-order encoding) without recursion.
///
/// Nesting is limited like Move's `load_signature_token`: more than 256
/// constructors open at once is `MALFORMED`.
pub(crate) fn signature_token(r: &mut Reader) -> FormatResult<SignatureToken> {
    let mut stack: Vec<Node> = Vec::new();
    let first = token_node(r)?;
    if let Node::Done(tok) = first {
        return Ok(tok);
    }
    stack.push(first);
    loop {
        if stack.len() > limit::SIGNATURE_TOKEN_DEPTH {
            return Err(r.error(StatusCode::MALFORMED, "signature token nesting deeper than 256"));
        }
        match stack.pop() {
            Some(Node::Done(tok)) => match stack.pop() {
                Some(Node::Open(parent)) => stack.push(parent.feed(tok)),
                Some(Node::Done(_)) => {
                    return Err(r.error(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, "token stack out of order"))
                }
                None => return Ok(tok),
            },
            Some(open @ Node::Open(_)) => {
                stack.push(open);
                stack.push(token_node(r)?);
            }
            None => return Err(r.error(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, "empty token stack")),
        }
    }
}

fn token_node(r: &mut Reader) -> FormatResult<Node> {
    let at = r.offset();
    let tag = r.u8()?;
    let sui = r.flavour == Flavour::Sui;
    let unknown =
        |r: &Reader| r.error_at(at, StatusCode::UNKNOWN_SERIALIZED_TYPE, format!("unknown type tag {tag:#04x}"));
    let too_new = |r: &Reader, what: &str, since: u32| {
        r.error_at(
            at,
            StatusCode::MALFORMED,
            format!("{what} types need bytecode version {since}, module is v{}", r.version),
        )
    };
    if tag > ty::I256 || tag == 0 || (sui && tag >= ty::FUNCTION) {
        return Err(unknown(r));
    }
    match tag {
        ty::U16 | ty::U32 | ty::U256 if r.version < 6 => return Err(too_new(r, "u16/u32/u256", 6)),
        ty::FUNCTION if r.version < 8 => return Err(too_new(r, "function", 8)),
        ty::I8..=ty::I256 if r.version < 9 => return Err(too_new(r, "signed integer", 9)),
        _ => {}
    }
    use SignatureToken as T;
    Ok(match tag {
        ty::BOOL => Node::Done(T::Bool),
        ty::U8 => Node::Done(T::U8),
        ty::U16 => Node::Done(T::U16),
        ty::U32 => Node::Done(T::U32),
        ty::U64 => Node::Done(T::U64),
        ty::U128 => Node::Done(T::U128),
        ty::U256 => Node::Done(T::U256),
        ty::I8 => Node::Done(T::I8),
        ty::I16 => Node::Done(T::I16),
        ty::I32 => Node::Done(T::I32),
        ty::I64 => Node::Done(T::I64),
        ty::I128 => Node::Done(T::I128),
        ty::I256 => Node::Done(T::I256),
        ty::ADDRESS => Node::Done(T::Address),
        ty::SIGNER => Node::Done(T::Signer),
        ty::VECTOR => Node::Open(Pending::Vector),
        ty::REFERENCE => Node::Open(Pending::Reference),
        ty::MUTABLE_REFERENCE => Node::Open(Pending::MutableReference),
        ty::STRUCT => Node::Done(T::Struct(StructHandleIndex(r.index(limit::TABLE_INDEX, "struct handle index")?))),
        ty::STRUCT_INST => {
            let handle = StructHandleIndex(r.index(limit::TABLE_INDEX, "struct handle index")?);
            let arity = r.count(limit::TYPE_PARAMETER_COUNT, "type argument count")?;
            if arity == 0 {
                return Err(r.error(StatusCode::MALFORMED, "struct instantiation with no type arguments"));
            }
            Node::Open(Pending::StructInst { handle, arity, args: Vec::new() })
        }
        ty::TYPE_PARAMETER => Node::Done(T::TypeParameter(type_parameter_index(r)?)),
        ty::FUNCTION => {
            let abilities = ability_set(r)?;
            let params = r.count(limit::TYPE_PARAMETER_COUNT, "function parameter count")?;
            let results = r.count(limit::TYPE_PARAMETER_COUNT, "function result count")?;
            if params + results == 0 {
                Node::Done(T::Function(Vec::new(), Vec::new(), abilities))
            } else {
                Node::Open(Pending::Function { abilities, params, results, args: Vec::new() })
            }
        }
        _ => return Err(unknown(r)),
    })
}

/// A type parameter index: Move allows the uleb up to 65536 and then fails
/// the u16 conversion with an invariant violation; we report the same.
fn type_parameter_index(r: &mut Reader) -> FormatResult<u16> {
    let v = r.uleb(limit::TYPE_PARAMETER_INDEX, "type parameter index")?;
    u16::try_from(v).map_err(|_| {
        r.error(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, "type parameter index 65536 does not fit in u16")
    })
}

/// A list of tokens (a `Signature` or a function's parameter list).
pub(crate) fn signature_tokens(r: &mut Reader) -> FormatResult<Vec<SignatureToken>> {
    let n = r.count(limit::SIGNATURE_SIZE, "signature size")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        out.push(signature_token(r)?);
    }
    Ok(out)
}

/// Abilities as a uleb no larger than 0xF.
pub(crate) fn ability_set(r: &mut Reader) -> FormatResult<AbilitySet> {
    Ok(AbilitySet(r.uleb(limit::ABILITY_SET, "ability set")? as u8))
}

/// A type parameter count followed by that many ability sets.
pub(crate) fn ability_sets(r: &mut Reader) -> FormatResult<Vec<AbilitySet>> {
    let n = r.count(limit::TYPE_PARAMETER_COUNT, "type parameter count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        out.push(ability_set(r)?);
    }
    Ok(out)
}

/// Struct (datatype) type parameters: constraints and a phantom flag.
pub(crate) fn struct_type_parameters(r: &mut Reader) -> FormatResult<Vec<StructTypeParameter>> {
    let n = r.count(limit::TYPE_PARAMETER_COUNT, "type parameter count")?;
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        let constraints = ability_set(r)?;
        let is_phantom = r.uleb(1, "phantom flag")? != 0;
        out.push(StructTypeParameter { constraints, is_phantom });
    }
    Ok(out)
}

/// A length-prefixed byte blob with a maximum length.
pub(crate) fn byte_blob(r: &mut Reader, max: u64, what: &str) -> FormatResult<Vec<u8>> {
    let n = r.count(max, what)?;
    Ok(r.bytes(n, StatusCode::MALFORMED)?.to_vec())
}

/// An identifier: valid UTF-8 and a valid Move identifier; `$` only from v9
/// (which only Aptos has).
pub(crate) fn identifier(r: &mut Reader) -> FormatResult<String> {
    let max = if r.flavour == Flavour::Sui { limit::IDENTIFIER_SIZE_SUI } else { limit::IDENTIFIER_SIZE_APTOS };
    let at = r.offset();
    let n = r.count(max, "identifier size")?;
    let raw = r.bytes(n, StatusCode::MALFORMED)?;
    let s = std::str::from_utf8(raw).map_err(|_| r.error_at(at, StatusCode::MALFORMED, "identifier is not UTF-8"))?;
    if !is_valid_identifier(s, r.version >= 9) {
        return Err(r.error_at(at, StatusCode::MALFORMED, format!("invalid identifier {s:?}")));
    }
    Ok(s.to_string())
}

/// Move's identifier rule: `[a-zA-Z][a-zA-Z0-9_]*`, or `_`/`$` followed by at
/// least one such character, or `<SELF>` / `<SELF>_<digits>`; `$` allowed
/// only when `dollar` (bytecode v9+).
pub fn is_valid_identifier(s: &str, dollar: bool) -> bool {
    let b = s.as_bytes();
    let body_ok = |rest: &[u8]| rest.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_' || (dollar && c == b'$'));
    if b == b"<SELF>" {
        return true;
    }
    if let Some(digits) = b.strip_prefix(b"<SELF>_") {
        return !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
    }
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() => body_ok(&b[1..]),
        Some(b'_') => b.len() > 1 && body_ok(&b[1..]),
        Some(b'$') if dollar => b.len() > 1 && body_ok(&b[1..]),
        _ => false,
    }
}
