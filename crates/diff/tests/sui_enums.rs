//! Boundary values of Sui's enum instructions on every executor: jump
//! tables (`variant_switch`) of 1, 2, 64 and 127 variants (Move's largest
//! enum), every variant tag and the first tags past the end, fields of
//! several layouts read by `unpack_variant` (with their error paths) and
//! written through `unpack_variant_mut_ref`, a generic enum at several
//! type arguments, and argument bytes that are not an enum value (tag out
//! of range, tag not in canonical ULEB128). Each call runs through
//! `run_both_with` (interpreter, jit or auto, tier switches, tiny-gas
//! reruns) and its full-budget outcome is also checked against an oracle.

use movejit_diff::{run_both_with, Case, JitVerdict, Options};
use movejit_format::{AccountAddress, StatusCode, StatusFlavour};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use movejit_runtime::bcs::write_uleb;
use movejit_runtime::Type;
use std::fmt::Write as _;

/// The variant counts of the enums `E<n>`.
const SIZES: [usize; 4] = [1, 2, 64, 127];

/// Variant `i`'s fields, by `i % 4`: none, `u8`, `u128`, `(u64, u64)`.
fn fields(i: usize) -> &'static str {
    match i % 4 {
        0 => "",
        1 => "    a: u8\n",
        2 => "    a: u128\n",
        _ => "    a: u64\n    b: u64\n",
    }
}

fn source() -> String {
    let mut s = String::from("version 7\nflavour sui\nmodule 0xcafe::enums\n\n");
    for n in SIZES {
        let _ = writeln!(s, "enum E{n} has copy + drop");
        for i in 0..n {
            let _ = write!(s, "  V{i}\n{}", fields(i));
        }
        s.push('\n');
    }
    s.push_str("enum G<T> has copy + drop\n  None\n  One\n    v: T\n  Two\n    a: T\n    b: T\n\n");
    for n in SIZES {
        let labels: Vec<String> = (0..n).map(|i| format!("l{i}")).collect();
        let table = labels.join(", ");
        // tag(e): the variant's index, through the jump table.
        let _ = writeln!(s, "public fun tag{n}(e: &E{n}): u64\n    move_loc e\n    variant_switch E{n}, [{table}]");
        for i in 0..n {
            let _ = writeln!(s, "l{i}: ld_u64 {i}\n    ret");
        }
        // value(e): its fields folded into a u64 (casts and adds can fail).
        let _ =
            writeln!(s, "\npublic fun value{n}(e: E{n}): u64\n    borrow_loc e\n    variant_switch E{n}, [{table}]");
        for i in 0..n {
            let fold = match i % 4 {
                0 => format!("ld_u64 {i}"),
                1 | 2 => "cast_u64".to_string(),
                _ => "add".to_string(),
            };
            let _ = writeln!(s, "l{i}: move_loc e\n    unpack_variant E{n}, V{i}\n    {fold}\n    ret");
        }
        // bump(e): sets `b` of a two-field variant to `a`, returns the tag.
        let _ = writeln!(
            s,
            "\npublic fun bump{n}(e: &mut E{n}): u64\n    local r: &mut u64\n    copy_loc e\n    freeze_ref\n    variant_switch E{n}, [{table}]"
        );
        for i in 0..n {
            if i % 4 == 3 {
                let _ = writeln!(
                    s,
                    "l{i}: move_loc e\n    unpack_variant_mut_ref E{n}, V{i}\n    st_loc r\n    read_ref\n    move_loc r\n    write_ref\n    ld_u64 {i}\n    ret"
                );
            } else {
                let _ = writeln!(s, "l{i}: move_loc e\n    pop\n    ld_u64 {i}\n    ret");
            }
        }
        s.push('\n');
    }
    s.push_str(
        "public fun gtag<T: copy + drop>(g: &G<T>): u64\n    move_loc g\n    variant_switch G, [n, o, t]\nn: ld_u64 0\n    ret\no: ld_u64 1\n    ret\nt: ld_u64 2\n    ret\n\n",
    );
    s
}

/// Field values of variant `i` (BCS) and the fold `value<n>` computes:
/// `None` when the fold fails with an arithmetic error.
fn variant_values(i: usize) -> Vec<(Vec<u8>, Option<u64>)> {
    match i % 4 {
        0 => vec![(Vec::new(), Some(i as u64))],
        1 => [0u8, 1, 255].iter().map(|v| (vec![*v], Some(u64::from(*v)))).collect(),
        2 => [0u128, u128::from(u64::MAX), u128::from(u64::MAX) + 1, u128::MAX]
            .iter()
            .map(|v| (v.to_le_bytes().to_vec(), u64::try_from(*v).ok()))
            .collect(),
        _ => [(0u64, 0u64), (u64::MAX, 0), (u64::MAX, 1), (1 << 63, 1 << 63)]
            .iter()
            .map(|(a, b)| ([a.to_le_bytes(), b.to_le_bytes()].concat(), a.checked_add(*b)))
            .collect(),
    }
}

/// The tags of an `n`-variant enum worth a call: the edges and a few inside.
fn tags(n: usize) -> Vec<usize> {
    let mut t: Vec<usize> = [0, 1, 2, 3, 4, 5, 6, 7, n / 2, n.saturating_sub(2), n.saturating_sub(1)]
        .into_iter()
        .filter(|t| *t < n)
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// What a call should give: the status, and the u64 returned.
#[derive(Debug, PartialEq)]
enum Want {
    Returns(u64),
    /// The `&mut` argument's final bytes too.
    ReturnsWith(u64, Vec<u8>),
    Status(StatusCode),
}

struct Call {
    function: String,
    type_args: Vec<Type>,
    arg: Vec<u8>,
    want: Want,
}

fn calls() -> Vec<Call> {
    let mut out = Vec::new();
    let call = |function: String, arg: Vec<u8>, want| Call { function, type_args: Vec::new(), arg, want };
    for n in SIZES {
        for i in tags(n) {
            for (fields, folded) in variant_values(i) {
                let mut arg = Vec::new();
                write_uleb(&mut arg, i as u64);
                arg.extend(&fields);
                out.push(call(format!("tag{n}"), arg.clone(), Want::Returns(i as u64)));
                let value = folded.map_or(Want::Status(StatusCode::ARITHMETIC_ERROR), Want::Returns);
                out.push(call(format!("value{n}"), arg.clone(), value));
                let bumped = if i % 4 == 3 {
                    [&arg[..arg.len() - 8], &arg[arg.len() - 16..arg.len() - 8]].concat()
                } else {
                    arg.clone()
                };
                out.push(call(format!("bump{n}"), arg, Want::ReturnsWith(i as u64, bumped)));
            }
        }
        // Not a value of the enum: the first tags past the end, and tag 1
        // in a non-canonical ULEB128.
        let mut bad: Vec<Vec<u8>> = [n as u64, n as u64 + 1, 255, 1 << 32]
            .iter()
            .map(|t| {
                let mut a = Vec::new();
                write_uleb(&mut a, *t);
                a.extend([0u8; 16]);
                a
            })
            .collect();
        bad.push([&[0x81u8, 0x00][..], &[0u8; 16]].concat());
        for arg in bad {
            for f in ["tag", "value", "bump"] {
                out.push(call(
                    format!("{f}{n}"),
                    arg.clone(),
                    Want::Status(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT),
                ));
            }
        }
    }
    for (ty, value) in [
        (Type::U8, vec![0xffu8]),
        (Type::U256, vec![0xff; 32]),
        (Type::Address, vec![0xca; 32]),
        (Type::Vector(Box::new(Type::U64)), vec![1, 9, 0, 0, 0, 0, 0, 0, 0]),
    ] {
        for (tag, copies) in [(0u8, 0), (1, 1), (2, 2)] {
            let arg = [vec![tag], value.repeat(copies)].concat();
            out.push(Call {
                function: "gtag".into(),
                type_args: vec![ty.clone()],
                arg,
                want: Want::Returns(u64::from(tag)),
            });
        }
        out.push(Call {
            function: "gtag".into(),
            type_args: vec![ty],
            arg: vec![3],
            want: Want::Status(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT),
        });
    }
    out
}

#[test]
fn enum_instructions_at_their_boundaries_agree_with_an_oracle_on_every_executor() {
    let module = match assemble_with(&source(), AsmOptions { default_version: None, deps: &[] }) {
        Ok(Assembled::Module(m)) => m,
        Ok(Assembled::Script(_)) => panic!("a script"),
        Err(e) => panic!("{e}"),
    };
    let opts = Options { gas_points: 3, ..Options::default() };
    let calls = calls();
    let (mut wrong, mut on_jit) = (Vec::new(), 0);
    for c in &calls {
        let case = Case {
            name: c.function.clone(),
            flavour: StatusFlavour::Sui,
            modules: vec![module.clone()],
            address: AccountAddress::from_u64(0xcafe),
            module: "enums".into(),
            function: c.function.clone(),
            type_args: c.type_args.clone(),
            args: vec![c.arg.clone()],
        };
        let compared = match run_both_with(&case, &opts) {
            Ok(compared) => compared,
            Err(d) => {
                wrong.push(format!("DIVERGENCE {}: {d}", case.describe()));
                continue;
            }
        };
        on_jit += usize::from(compared.jit == JitVerdict::Agreed);
        let o = &compared.outcome;
        let u64_of = |b: &[u8]| b.try_into().ok().map(u64::from_le_bytes);
        let got = match o.status {
            StatusCode::EXECUTED => match (o.returns.first().and_then(|r| u64_of(r)), &c.want) {
                (Some(v), Want::ReturnsWith(..)) => {
                    Want::ReturnsWith(v, o.mutrefs.first().map(|(_, b)| b.clone()).unwrap_or_default())
                }
                (Some(v), _) => Want::Returns(v),
                (None, _) => Want::Status(StatusCode::UNKNOWN_STATUS),
            },
            s => Want::Status(s),
        };
        if got != c.want {
            wrong.push(format!("{}: got {got:?}, want {:?} ({o})", case.describe(), c.want));
        }
    }
    println!("{} calls, {on_jit} compared on jit", calls.len());
    assert!(wrong.is_empty(), "{} wrong of {}:\n{}", wrong.len(), calls.len(), wrong.join("\n"));
    assert_eq!(on_jit, calls.len(), "every call runs compiled on executor jit");
}
