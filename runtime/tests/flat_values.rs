//! Flat values against the tree representation on generated data (seeded,
//! property style): random nested layouts of every width, random values,
//! random vector-operation sequences through the `extern "C"` shims, the
//! integer shims against `runtime::arith`, malformed BCS, limits. Every
//! test also proves that dropping frees every heap block it allocated.

#![allow(unsafe_code)]

use movejit_runtime::arith::{self, BinOp, CmpOp};
use movejit_runtime::error::vec_err;
use movejit_runtime::ethnum::{I256, U256};
use movejit_runtime::flat::{self, shims, ExecContext, FlatLayout, FlatValue, Shape};
use movejit_runtime::helpers::{HelperId, Kind, HELPERS};
use movejit_runtime::ScalarKind;
use movejit_runtime::{bcs, AccountAddress, Layout, Limits, StatusCode, Value};
use std::sync::Arc;

/// xorshift64*: deterministic, seeded.
struct Rng(u64);

/// `n` iterations natively, far fewer under Miri (which is ~1000x slower).
fn iters(n: usize) -> usize {
    if cfg!(miri) {
        (n / 40).max(3)
    } else {
        n
    }
}
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        // Mostly small values so equal pairs occur; sometimes full width.
        if self.below(3) == 0 {
            for x in b.iter_mut() {
                *x = self.next() as u8;
            }
        } else {
            b[0] = self.below(2) as u8;
        }
        b
    }
}

fn scalar_layouts() -> Vec<Layout> {
    use Layout::*;
    vec![Bool, U8, U16, U32, U64, U128, U256, I8, I16, I32, I64, I128, I256, Address, Signer]
}

fn gen_layout(r: &mut Rng, depth: usize) -> Layout {
    let scalars = scalar_layouts();
    let pick = if depth == 0 { 0 } else { r.below(4) };
    match pick {
        0 => scalars[r.below(scalars.len() as u64) as usize].clone(),
        1 => Layout::Vector(Box::new(gen_layout(r, depth - 1))),
        2 => Layout::Struct((0..1 + r.below(4)).map(|_| gen_layout(r, depth - 1)).collect()),
        _ => Layout::Enum(
            (0..1 + r.below(4)).map(|_| (0..r.below(4)).map(|_| gen_layout(r, depth - 1)).collect()).collect(),
        ),
    }
}

fn gen_value(r: &mut Rng, l: &Layout) -> Value {
    match l {
        Layout::Bool => Value::Bool(r.below(2) == 1),
        Layout::U8 => Value::U8(u8::from_le_bytes(r.bytes())),
        Layout::U16 => Value::U16(u16::from_le_bytes(r.bytes())),
        Layout::U32 => Value::U32(u32::from_le_bytes(r.bytes())),
        Layout::U64 => Value::U64(u64::from_le_bytes(r.bytes())),
        Layout::U128 => Value::U128(u128::from_le_bytes(r.bytes())),
        Layout::U256 => Value::U256(U256::from_le_bytes(r.bytes())),
        Layout::I8 => Value::I8(i8::from_le_bytes(r.bytes())),
        Layout::I16 => Value::I16(i16::from_le_bytes(r.bytes())),
        Layout::I32 => Value::I32(i32::from_le_bytes(r.bytes())),
        Layout::I64 => Value::I64(i64::from_le_bytes(r.bytes())),
        Layout::I128 => Value::I128(i128::from_le_bytes(r.bytes())),
        Layout::I256 => Value::I256(I256::from_le_bytes(r.bytes())),
        Layout::Address => Value::Address(AccountAddress(r.bytes())),
        Layout::Signer => Value::signer(AccountAddress(r.bytes())),
        Layout::Vector(e) => Value::Vector((0..r.below(4)).map(|_| gen_value(r, e)).collect()),
        Layout::Struct(fs) => Value::Struct(fs.iter().map(|f| gen_value(r, f)).collect()),
        Layout::Enum(vs) => {
            let t = r.below(vs.len() as u64) as usize;
            Value::Variant(t as u16, vs[t].iter().map(|f| gen_value(r, f)).collect())
        }
        Layout::Function => unreachable!("no closures generated"),
    }
}

fn flat_of(v: &Value, l: &Layout, fl: &Arc<FlatLayout>) -> FlatValue {
    let bytes = bcs::serialize(v, l).expect("tree serializes");
    let f = flat::bcs::deserialize(&bytes, fl.clone()).expect("flat deserializes");
    assert_eq!(flat::bcs::serialize(&f).expect("flat serializes"), bytes, "{l:?}");
    f
}

#[test]
fn layouts_table() {
    use Layout::*;
    let cases: Vec<(Layout, u32, u32)> = vec![
        (Bool, 1, 1),
        (U16, 2, 2),
        (U32, 4, 4),
        (U64, 8, 8),
        (U128, 16, 8),
        (I256, 32, 8),
        (Address, 32, 1),
        (Signer, 32, 1),
        (Vector(Box::new(U8)), 8, 8),
        (Function, 8, 8),
        (Struct(vec![U8, U64, U8]), 24, 8),
        (Struct(vec![U8, U16, Address]), 36, 2),
        (Struct(vec![Bool]), 1, 1),
        // tag (2) + payload at 2: max(u8, u16 at 2..4) → 4, align 2.
        (Enum(vec![vec![U8], vec![U16], vec![]]), 4, 2),
        // payload aligned to 8: 8 + 16.
        (Enum(vec![vec![U64, U64], vec![U8]]), 24, 8),
        (Enum(vec![vec![]]), 2, 2),
    ];
    for (l, size, align) in cases {
        let f = FlatLayout::from_layout(&l, 256).expect("layout");
        assert_eq!((f.size, f.align), (size, align), "{l:?}");
    }
    let f = FlatLayout::from_layout(&Struct(vec![U8, U64, U8, Vector(Box::new(Bool))]), 256).expect("layout");
    let Shape::Struct(fs) = &f.shape else { panic!("struct") };
    assert_eq!(fs.iter().map(|f| f.offset).collect::<Vec<_>>(), vec![0, 8, 16, 24]);
    assert!(f.owns_heap && !f.bytewise_eq);
    let f = FlatLayout::from_layout(&Enum(vec![vec![U8, U32], vec![U64]]), 256).expect("layout");
    let Shape::Enum(vs) = &f.shape else { panic!("enum") };
    assert_eq!(vs[0].iter().map(|f| f.offset).collect::<Vec<_>>(), vec![8, 12]);
    assert_eq!(vs[1][0].offset, 8);
    // Type depth: 300 nested vectors exceed 256.
    let mut deep = U8;
    for _ in 0..300 {
        deep = Vector(Box::new(deep));
    }
    assert_eq!(
        FlatLayout::from_layout(&deep, 256).err().map(|e| e.status),
        Some(StatusCode::VM_MAX_TYPE_DEPTH_REACHED)
    );
}

#[test]
fn generated_values_agree_with_tree() {
    let live = flat::live_allocations();
    let mut r = Rng(0x5EED_F1A7);
    let (mut values, mut pairs, mut equal) = (0, 0, 0);
    for _ in 0..iters(400) {
        let l = gen_layout(&mut r, 4);
        let fl = Arc::new(FlatLayout::from_layout(&l, 256).expect("layout"));
        let trees: Vec<Value> = (0..8).map(|_| gen_value(&mut r, &l)).collect();
        let flats: Vec<FlatValue> = trees.iter().map(|v| flat_of(v, &l, &fl)).collect();
        for (i, (a, fa)) in trees.iter().zip(&flats).enumerate() {
            let c = fa.copy();
            assert!(c.equals(fa), "{l:?}: copy of {a:?}");
            assert_eq!(flat::bcs::serialize(&c).ok(), bcs::serialize(a, &l).ok());
            for (b, fb) in trees.iter().zip(&flats).skip(i) {
                assert_eq!(fa.equals(fb), a == b, "{l:?}: {a:?} vs {b:?}");
                pairs += 1;
                equal += (a == b) as usize;
            }
            values += 1;
        }
    }
    assert!(equal > pairs / 10 && equal < pairs, "equality outcomes not mixed: {equal}/{pairs}");
    eprintln!("generated: {values} values, {pairs} pairs ({equal} equal)");
    assert_eq!(flat::live_allocations(), live, "leak");
}

#[test]
fn malformed_bcs_agrees_with_tree_and_frees() {
    let live = flat::live_allocations();
    let mut r = Rng(0xBAD_BC5);
    let mut rejected = 0;
    for _ in 0..iters(600) {
        let l = gen_layout(&mut r, 3);
        let fl = Arc::new(FlatLayout::from_layout(&l, 256).expect("layout"));
        let v = gen_value(&mut r, &l);
        let mut bytes = bcs::serialize(&v, &l).expect("tree serializes");
        match r.below(3) {
            0 => {
                let n = r.below(bytes.len() as u64) as usize;
                bytes.truncate(n);
            }
            1 => bytes.push(r.next() as u8),
            _ => {
                if !bytes.is_empty() {
                    let i = r.below(bytes.len() as u64) as usize;
                    bytes[i] = r.next() as u8;
                }
            }
        }
        let tree = bcs::deserialize(&bytes, &l);
        let flat = flat::bcs::deserialize(&bytes, fl.clone());
        match (&tree, &flat) {
            (Ok(t), Ok(f)) => assert_eq!(flat::bcs::serialize(f).ok(), bcs::serialize(t, &l).ok()),
            (Err(a), Err(b)) => {
                assert_eq!(a.status, b.status);
                rejected += 1;
            }
            _ => panic!("{l:?} {bytes:02x?}: tree {:?} flat {:?}", tree.is_ok(), flat.is_ok()),
        }
        let arg = flat::bcs::deserialize_arg(&bytes, fl.clone());
        if let Err(e) = arg {
            assert_eq!(e.status, StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT);
        }
    }
    assert!(rejected > iters(600) / 6, "{rejected}");
    // Value depth: 129 nested vectors deserialize in neither representation.
    let mut deep = Layout::U8;
    for _ in 0..130 {
        deep = Layout::Vector(Box::new(deep));
    }
    let mut bytes = vec![1u8; 130];
    bytes.push(7);
    let fl = Arc::new(FlatLayout::from_layout(&deep, 256).expect("layout"));
    assert!(bcs::deserialize(&bytes, &deep).is_err());
    assert!(flat::bcs::deserialize(&bytes, fl).is_err());
    assert_eq!(flat::live_allocations(), live, "leak");
}

fn vec_layout(e: &Layout) -> Layout {
    Layout::Vector(Box::new(e.clone()))
}

fn sub_status(e: &movejit_runtime::VmError) -> (StatusCode, Option<u64>) {
    (e.status, e.sub_status)
}

/// Random vector-operation sequences, applied to a tree `Vec<Value>` (the
/// interpreter's semantics) and to flat vectors through the `extern "C"`
/// shims: same statuses and sub-statuses, same contents after every step.
#[test]
fn vector_shims_agree_with_tree() {
    let live = flat::live_allocations();
    let mut r = Rng(0x7EC7_0125);
    let mut ops_run = 0;
    let mut errors = [0usize; 5];
    for round in 0..iters(150) {
        let el = gen_layout(&mut r, 2);
        let vl = vec_layout(&el);
        let fe = Arc::new(FlatLayout::from_layout(&el, 256).expect("layout"));
        let fv = Arc::new(FlatLayout::from_layout(&vl, 256).expect("layout"));
        let mut ctx = ExecContext::new(&Limits { max_vector_len: 6, ..Limits::default() });
        let ctxp: *mut ExecContext = &mut ctx;
        let e: *const FlatLayout = Arc::as_ptr(&fe);
        // Two vectors (for move_range), tree and flat.
        let mut tree: [Vec<Value>; 2] = [vec![], vec![]];
        let mut flat: [FlatValue; 2] = [FlatValue::zeroed(fv.clone()), FlatValue::zeroed(fv.clone())];
        for _ in 0..40 {
            let k = r.below(2) as usize;
            let op = r.below(8);
            let expected: Result<(), (StatusCode, Option<u64>)>;
            let got: u32;
            let vp = flat[k].as_ptr();
            match op {
                0 | 1 => {
                    // push_back
                    let v = gen_value(&mut r, &el);
                    let src = flat_of(&v, &el, &fe);
                    expected = if tree[k].len() as u64 >= 6 {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::VEC_SIZE_LIMIT_REACHED)))
                    } else {
                        tree[k].push(v);
                        Ok(())
                    };
                    // SAFETY: live context, cached layout, vector slot and element slot.
                    got = unsafe { shims::vec_push_back(ctxp, e, vp, src.as_ptr()) };
                    if got == 0 {
                        // Moved into the vector: free only the source slot.
                        src.forget_moved();
                    }
                }
                2 => {
                    let dst = FlatValue::zeroed(fe.clone());
                    let popped = tree[k].pop();
                    expected = if popped.is_some() {
                        Ok(())
                    } else {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::POP_EMPTY_VEC)))
                    };
                    // SAFETY: as above; `dst` holds no live value (zeroed).
                    got = unsafe { shims::vec_pop_back(ctxp, e, vp, dst.as_ptr()) };
                    if let Some(p) = popped {
                        assert_eq!(flat::bcs::serialize(&dst).ok(), bcs::serialize(&p, &el).ok());
                    }
                }
                3 => {
                    let (i, j) = (r.below(5), r.below(5));
                    let n = tree[k].len() as u64;
                    expected = if i >= n || j >= n {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::INDEX_OUT_OF_BOUNDS)))
                    } else {
                        tree[k].swap(i as usize, j as usize);
                        Ok(())
                    };
                    // SAFETY: as above.
                    got = unsafe { shims::vec_swap(ctxp, e, vp, i, j) };
                }
                4 => {
                    let i = r.below(5);
                    let mut out: *mut u8 = std::ptr::null_mut();
                    expected = match tree[k].get(i as usize) {
                        Some(_) => Ok(()),
                        None => Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::INDEX_OUT_OF_BOUNDS))),
                    };
                    // SAFETY: as above; `out` is a pointer slot.
                    got = unsafe { shims::vec_borrow(ctxp, e, vp, i, &mut out) };
                    if let Some(v) = tree[k].get(i as usize) {
                        // SAFETY: the shim returned the address of a live element.
                        let s = unsafe { shims::serialize_at(&fe, out) }.expect("element serializes");
                        assert_eq!(Some(s), bcs::serialize(v, &el).ok());
                    }
                }
                5 => {
                    let (removal, len, insert) = (r.below(4), r.below(3), r.below(4));
                    let (from, to) = if k == 0 { (0, 1) } else { (1, 0) };
                    let (flen, tlen) = (tree[from].len() as u64, tree[to].len() as u64);
                    expected = if removal + len > flen || insert > tlen {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::INDEX_OUT_OF_BOUNDS)))
                    } else if len > 0 && tlen + len > 6 {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::VEC_SIZE_LIMIT_REACHED)))
                    } else {
                        let moved: Vec<Value> = tree[from].drain(removal as usize..(removal + len) as usize).collect();
                        tree[to].splice(insert as usize..insert as usize, moved);
                        Ok(())
                    };
                    let (fp, tp) = (flat[from].as_ptr(), flat[to].as_ptr());
                    // SAFETY: two distinct live vector slots.
                    got = unsafe { shims::vec_move_range(ctxp, e, fp, removal, len, tp, insert) };
                }
                6 => {
                    let n = r.below(4);
                    let elems: Vec<Value> = (0..n).map(|_| gen_value(&mut r, &el)).collect();
                    // Elements laid out contiguously, as compiled code's operand slots would be.
                    let mut src = flat::raw::Buf::zeroed((n * fe.size as u64) as usize, fe.align as usize);
                    for (i, v) in elems.iter().enumerate() {
                        let f = flat_of(v, &el, &fe);
                        let at = i * fe.size as usize;
                        src.bytes_mut()[at..at + fe.size as usize].copy_from_slice(f.bytes());
                        f.forget_moved(); // its contents now live in `src`
                    }
                    let dst = FlatValue::zeroed(fv.clone());
                    expected = if n > 6 { unreachable!() } else { Ok(()) };
                    // SAFETY: `dst` is an empty vector slot, `src` holds `n` elements.
                    got = unsafe { shims::vec_pack(ctxp, e, dst.as_ptr(), src.as_ptr(), n) };
                    // Replace vector k by the packed one (the old one is dropped).
                    tree[k] = elems;
                    flat[k] = dst;
                }
                _ => {
                    // unpack with a random expected length, then rebuild empty.
                    let n = r.below(4);
                    let len = tree[k].len() as u64;
                    let mut dst = flat::raw::Buf::zeroed((n * fe.size as u64) as usize, fe.align as usize);
                    expected = if len == n {
                        Ok(())
                    } else {
                        Err((StatusCode::VECTOR_OPERATION_ERROR, Some(vec_err::VEC_UNPACK_PARITY_MISMATCH)))
                    };
                    // SAFETY: the vector slot is consumed; `dst` has room for `n` elements.
                    got = unsafe { shims::vec_unpack(ctxp, e, vp, n, dst.as_ptr()) };
                    if got == 0 {
                        for (i, v) in tree[k].iter().enumerate() {
                            let at = i * fe.size as usize;
                            let p = dst.bytes_mut()[at..].as_mut_ptr();
                            // SAFETY: `p` is a live element moved out by the unpack; dropped once.
                            let s = unsafe { shims::serialize_at(&fe, p) }.expect("element serializes");
                            assert_eq!(Some(s), bcs::serialize(v, &el).ok());
                            // SAFETY: as above.
                            unsafe { shims::value_drop(ctxp, e, p) };
                        }
                    }
                    tree[k].clear();
                    // The slot was consumed either way; it now holds an empty vector.
                }
            }
            ops_run += 1;
            match expected {
                Ok(()) => assert_eq!(got, 0, "round {round} op {op}: {:?}", cx(ctxp).error()),
                Err(want) => {
                    assert_eq!(got, 1, "round {round} op {op}");
                    assert_eq!(cx(ctxp).error().as_ref().map(sub_status), Some(want), "round {round} op {op}");
                    errors[want.1.unwrap_or(0) as usize] += 1;
                    cx(ctxp).clear();
                }
            }
            for (t, f) in tree.iter().zip(&flat) {
                let tv = Value::Vector(t.clone());
                assert_eq!(flat::bcs::serialize(f).ok(), bcs::serialize(&tv, &vl).ok(), "round {round} op {op}");
                // SAFETY: live vector slot.
                assert_eq!(unsafe { shims::vec_len(ctxp, f.as_ptr()) }, t.len() as u64);
            }
        }
    }
    eprintln!("vector ops: {ops_run} run; errors by sub-status {errors:?}");
    assert!(errors[1] > 0 && errors[2] > 0 && errors[3] > 0 && (cfg!(miri) || errors[4] > 0), "{errors:?}");
    assert_eq!(flat::live_allocations(), live, "leak");
}

/// The context behind the pointer the shims get (all accesses go through
/// it, so the pointer stays valid under Stacked Borrows).
fn cx<'a>(p: *mut ExecContext) -> &'a mut ExecContext {
    // SAFETY: tests pass a pointer to a live local context, used by one thread.
    unsafe { &mut *p }
}

fn int_kinds() -> Vec<(u8, Layout)> {
    use shims::kind::*;
    vec![
        (U8, Layout::U8),
        (U16, Layout::U16),
        (U32, Layout::U32),
        (U64, Layout::U64),
        (U128, Layout::U128),
        (U256, Layout::U256),
        (I8, Layout::I8),
        (I16, Layout::I16),
        (I32, Layout::I32),
        (I64, Layout::I64),
        (I128, Layout::I128),
        (I256, Layout::I256),
    ]
}

/// An edge-heavy integer of a layout as its 32-byte slot.
fn gen_int(r: &mut Rng, l: &Layout) -> (Value, [u8; 32]) {
    let v = match r.below(4) {
        0 => gen_value(r, l),
        // all ones (MAX for unsigned, -1 for signed) / MIN for signed
        1 => flat_bytes_value(l, [0xff; 32]),
        2 => {
            let w = bcs::serialize(&gen_value(r, l), l).expect("int").len();
            let mut b = [0u8; 32];
            b[w - 1] = 0x80;
            flat_bytes_value(l, b)
        }
        _ => gen_value(r, l),
    };
    let mut slot = [0u8; 32];
    let b = bcs::serialize(&v, l).expect("int");
    slot[..b.len()].copy_from_slice(&b);
    (v, slot)
}

fn flat_bytes_value(l: &Layout, b: [u8; 32]) -> Value {
    let w = match l {
        Layout::U8 | Layout::I8 => 1,
        Layout::U16 | Layout::I16 => 2,
        Layout::U32 | Layout::I32 => 4,
        Layout::U64 | Layout::I64 => 8,
        Layout::U128 | Layout::I128 => 16,
        _ => 32,
    };
    bcs::deserialize(&b[..w], l).expect("int")
}

fn shim_result(got: u32, ctx: &mut ExecContext, out: &[u8; 32], l: &Layout) -> Result<Value, StatusCode> {
    if got == 0 {
        let w = bcs::serialize(&flat_bytes_value(l, [0; 32]), l).expect("int").len();
        Ok(bcs::deserialize(&out[..w], l).expect("int"))
    } else {
        let e = ctx.error().map(|e| e.status).unwrap_or(StatusCode::UNKNOWN_STATUS);
        ctx.clear();
        Err(e)
    }
}

#[test]
fn integer_shims_agree_with_arith() {
    let mut r = Rng(0x1A7E_9E25);
    let mut ctx = ExecContext::new(&Limits::default());
    let ctxp: *mut ExecContext = &mut ctx;
    let ops = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::BitOr, BinOp::BitAnd, BinOp::Xor];
    let cmps = [CmpOp::Lt, CmpOp::Gt, CmpOp::Le, CmpOp::Ge];
    let casts = ScalarKind::INTEGERS;
    let (mut checked, mut errors) = (0, 0);
    for _ in 0..iters(300) {
        for (k, l) in int_kinds() {
            let ((a, sa), (b, sb)) = (gen_int(&mut r, &l), gen_int(&mut r, &l));
            for (i, op) in ops.iter().enumerate() {
                let mut out = [0u8; 32];
                // SAFETY: 32-byte slots, live context.
                let got =
                    unsafe { shims::int_binop(ctxp, out.as_mut_ptr(), sa.as_ptr(), sb.as_ptr(), k | (i as u8) << 4) };
                let want = arith::binop(*op, a.clone(), b.clone()).map_err(|e| e.status);
                errors += want.is_err() as usize;
                assert_eq!(shim_result(got, cx(ctxp), &out, &l), want, "{op:?} {a:?} {b:?}");
                checked += 1;
            }
            for (i, op) in cmps.iter().enumerate() {
                let mut out = [0u8; 32];
                // SAFETY: as above.
                let got =
                    unsafe { shims::int_cmp(ctxp, out.as_mut_ptr(), sa.as_ptr(), sb.as_ptr(), k | (i as u8) << 4) };
                assert_eq!(got, 0);
                assert_eq!(Ok(out[0] == 1), arith::compare(*op, &a, &b).map_err(|e| e.status));
                checked += 1;
            }
            let n = r.below(300) as u8;
            for left in [true, false] {
                let mut out = [0u8; 32];
                // SAFETY: as above.
                let got = unsafe { shims::int_shift(ctxp, out.as_mut_ptr(), sa.as_ptr(), n, k | (!left as u8) << 4) };
                let want = arith::shift(left, a.clone(), Value::U8(n)).map_err(|e| e.status);
                assert_eq!(shim_result(got, cx(ctxp), &out, &l), want);
                checked += 1;
            }
            for (t, (tk, tl)) in casts.iter().zip(int_kinds()) {
                let mut out = [0u8; 32];
                // SAFETY: as above.
                let got = unsafe { shims::int_cast(ctxp, out.as_mut_ptr(), sa.as_ptr(), k | tk << 4) };
                let want = arith::cast(a.clone(), *t).map_err(|e| e.status);
                errors += want.is_err() as usize;
                assert_eq!(shim_result(got, cx(ctxp), &out, &tl), want, "{a:?} as {t:?}");
                checked += 1;
            }
            if k >= shims::kind::I8 {
                let mut out = [0u8; 32];
                // SAFETY: as above.
                let got = unsafe { shims::int_negate(ctxp, out.as_mut_ptr(), sa.as_ptr(), k) };
                assert_eq!(shim_result(got, cx(ctxp), &out, &l), arith::negate(a.clone()).map_err(|e| e.status));
                checked += 1;
            }
        }
    }
    eprintln!("integer shims: {checked} checks, {errors} ARITHMETIC_ERRORs expected and seen");
    assert!(errors > iters(300) * 3);
    // A bad code is recorded, never a panic.
    let mut out = [0u8; 32];
    // SAFETY: as above.
    let got = unsafe { shims::int_binop(ctxp, out.as_mut_ptr(), out.as_ptr(), out.as_ptr(), 0xf0 | 4) };
    assert_eq!(got, 1);
    assert_eq!(cx(ctxp).error().map(|e| e.status), Some(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR));
}

#[test]
fn value_shims_and_table() {
    let live = flat::live_allocations();
    let mut r = Rng(42);
    let mut ctx = ExecContext::new(&Limits::default());
    let ctxp: *mut ExecContext = &mut ctx;
    for _ in 0..iters(100) {
        let l = gen_layout(&mut r, 3);
        let fl = Arc::new(FlatLayout::from_layout(&l, 256).expect("layout"));
        let v = flat_of(&gen_value(&mut r, &l), &l, &fl);
        let c = FlatValue::zeroed(fl.clone());
        // SAFETY: live slots of the layout; `c` holds no live value.
        unsafe {
            assert_eq!(shims::value_copy(ctxp, Arc::as_ptr(&fl), c.as_ptr(), v.as_ptr()), 0);
            assert_eq!(shims::value_eq(ctxp, Arc::as_ptr(&fl), c.as_ptr(), v.as_ptr()), 1);
        }
        assert_eq!(flat::bcs::serialize(&c).ok(), flat::bcs::serialize(&v).ok());
        // Drop through the shim, then let `c` drop its (now empty) slot.
        // SAFETY: live slot; it holds no live value afterwards.
        unsafe { shims::value_drop(ctxp, Arc::as_ptr(&fl), c.as_ptr()) };
        let _ = FlatValue::copy(&v);
    }
    assert_eq!(flat::live_allocations(), live, "leak");
    // The table names every shim, context first; ids index it.
    assert_eq!(HELPERS.len(), 40);
    for h in HELPERS {
        assert_eq!(h.params.first(), Some(&Kind::Ptr), "{}: context first", h.name);
    }
    assert_eq!(HelperId::vec_push_back().entry().shim, shims::vec_push_back as *const u8);
    assert_eq!(HelperId::call_interpreted().entry().shim, flat::closure_shims::call_interpreted as *const u8);
    assert_eq!(HelperId::int_binop().entry().shim, shims::int_binop as *const u8);
    assert_eq!(HelperId::aptos_call().entry().shim, flat::host::aptos_call as *const u8);
    assert_eq!(HelperId::native_fast().entry().params.len(), 8);
    // Exists and borrow take the address as four words (under Aptos the
    // segment's rest is in the context: unmetered calls pass six words in
    // registers); borrow returns the reference.
    assert_eq!(HelperId::global_borrow().entry().params.len(), 6);
    assert_eq!(HelperId::global_borrow().entry().result, Kind::U64);
    assert_eq!(HelperId::closure_fast().entry().result, Kind::U64);
    assert_eq!(HelperId::aptos_closure_fast().entry().result, Kind::U64);
    assert_eq!(ExecContext::OFFSETS.status, 0);
    assert_eq!(ExecContext::OFFSETS.flags, 28);
    assert_eq!(ExecContext::OFFSETS.max_vector_len, 80);
    assert_eq!(ExecContext::OFFSETS.global_rest, 88);
    assert_eq!(ExecContext::OFFSETS.host, 96);
    assert_eq!(ExecContext::OFFSETS.aptos_meter, 104);
}

/// A `TypeInfo` that knows one generic struct `0x1::m::Pair<T>` = `{ T, u8 }`.
struct PairTypes;
impl movejit_runtime::natives::TypeInfo for PairTypes {
    fn layout_of(&self, ty: &movejit_runtime::Type) -> movejit_runtime::VmResult<Layout> {
        use movejit_runtime::Type as T;
        Ok(match ty {
            T::U8 => Layout::U8,
            T::U64 => Layout::U64,
            T::Vector(e) => Layout::Vector(Box::new(self.layout_of(e)?)),
            T::Datatype(_, args) if args.len() == 1 => Layout::Struct(vec![self.layout_of(&args[0])?, Layout::U8]),
            t => return Err(movejit_runtime::VmError::invariant(format!("{t}"))),
        })
    }
}

#[test]
fn layout_cache_is_shared_across_threads() {
    use movejit_runtime::Type;
    let cache = Arc::new(flat::FlatLayouts::new(256));
    let tag = |t: &str| Type::parse_tag(t).expect("tag");
    // Type tags name no references (parse_tag refuses them): built here.
    let tys: Vec<Type> = vec![
        tag("0x1::m::Pair<u64>"),
        tag("0x1::m::Pair<vector<u8>>"),
        Type::MutableReference(Box::new(tag("0x1::m::Pair<u8>"))),
        tag("vector<u64>"),
    ];
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (cache, tys) = (cache.clone(), tys.clone());
            std::thread::spawn(move || {
                tys.iter()
                    .map(|t| Arc::as_ptr(&cache.layout_of(&PairTypes, t).expect("layout")) as usize)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ptrs: Vec<Vec<usize>> = handles.into_iter().map(|h| h.join().expect("thread")).collect();
    assert!(ptrs.windows(2).all(|w| w[0] == w[1]), "every thread sees the same cached layouts");
    // The reference's target is cached too.
    assert_eq!(cache.len(), 5);
    let pair = cache.layout_of(&PairTypes, &tys[0]).expect("layout");
    assert_eq!((pair.size, pair.align), (16, 8));
    let r = cache.layout_of(&PairTypes, &tys[2]).expect("layout");
    assert!(matches!(&r.shape, Shape::Reference(t) if t.size == 2));
    assert!(cache.layout_of(&PairTypes, &Type::Bool).is_err());
}

/// The memory shims feed the memory algebra of the Aptos meter
/// `ExecContext::aptos_meter` points to, with its rules (uses past the quota fail with
/// `MEMORY_LIMIT_EXCEEDED` and leave nothing; releases, which compiled code
/// makes inline, never fail); with no meter they do nothing.
#[test]
fn memory_shims_feed_the_meter() {
    use movejit_runtime::gas::algebra::MemoryAlgebra;
    use movejit_runtime::gas::aptos::{AptosMeter, AptosPricing};
    let mut want = MemoryAlgebra::new(100);
    let mut meter = AptosMeter::new(AptosPricing::v50(), 0);
    meter.memory = MemoryAlgebra::new(100);
    let mut ctx = ExecContext::new(&Limits::default());
    ctx.aptos_meter = &mut meter as *mut AptosMeter as u64;
    let ctxp: *mut ExecContext = &mut ctx;
    // (use or release, amount, status)
    let steps: [(bool, u64, u32); 5] = [(true, 60, 0), (false, 20, 0), (true, 50, 0), (true, 11, 1), (false, 5, 0)];
    for (using, n, st) in steps {
        let got = if using {
            // SAFETY: `ctxp` is live and `aptos_meter` points to a live algebra.
            unsafe { shims::memory_use(ctxp, n) }
        } else {
            meter.memory.release_memory(n);
            0
        };
        assert_eq!(got, st, "{using} {n}");
        if using {
            assert_eq!(want.use_memory(n).is_err(), st != 0);
        } else {
            want.release_memory(n);
        }
    }
    assert_eq!(cx(ctxp).error().map(|e| e.status), Some(StatusCode::MEMORY_LIMIT_EXCEEDED));
    let m = &meter.memory;
    assert_eq!((m.peak(), m.current()), (want.peak(), want.current()));
    assert_eq!(m.peak(), 100);
    // No meter: nothing to feed.
    let mut ctx = ExecContext::new(&Limits::default());
    // SAFETY: a live context without a meter.
    unsafe {
        assert_eq!(shims::memory_use(&mut ctx, u64::MAX), 0);
    }
    assert_eq!(HelperId::memory_use().entry().shim, shims::memory_use as *const u8);

    // A returning frame's local: its heap size, unless the slot is all zero
    // (moved out).
    let l = Layout::Vector(Box::new(Layout::U64));
    let fl = Arc::new(FlatLayout::from_layout(&l, 8).expect("layout"));
    let v = flat::bcs::deserialize(
        &bcs::serialize(&Value::Vector(vec![Value::U64(1), Value::U64(2)]), &l).expect("bcs"),
        fl.clone(),
    )
    .expect("value");
    let heap = AptosPricing::v50().sizes.heap(&fl, v.bytes());
    assert!(heap > 0);
    let empty = FlatValue::zeroed(fl.clone());
    let mut meter = AptosMeter::new(AptosPricing::v50(), 0);
    meter.memory = MemoryAlgebra::new(1000);
    meter.memory.use_memory(500).expect("fits");
    let mut ctx = ExecContext::new(&Limits::default());
    ctx.aptos_meter = &mut meter as *mut AptosMeter as u64;
    // SAFETY: live context and meter; live slots of layout `fl`.
    unsafe {
        assert_eq!(shims::memory_release_value(&mut ctx, Arc::as_ptr(&fl), empty.as_ptr()), 0);
        assert_eq!(meter.memory.current(), 500, "a zero slot holds nothing");
        assert_eq!(shims::memory_release_value(&mut ctx, Arc::as_ptr(&fl), v.as_ptr()), 0);
    }
    assert_eq!(meter.memory.current(), 500 - heap);
    // A value surely held: its heap size, whatever its bytes.
    // SAFETY: live context and meter; live slots of layout `fl`.
    unsafe {
        assert_eq!(shims::memory_release_heap(&mut ctx, Arc::as_ptr(&fl), v.as_ptr()), 0);
    }
    assert_eq!(meter.memory.current(), 500 - 2 * heap);
}
