//! Native Rust controls: the shared benchmarks' algorithms written in plain
//! Rust with Move's semantics (every `+ - * / %` checked, vectors bounds
//! checked; an error is `None`, where Move aborts), so the distance from a
//! Move executor to compiled native code is measured on the same work.
//!
//! Each kernel takes the Move function's arguments in the same order and
//! returns the same checksum; [`run`] dispatches on the manifest's
//! `native_rust_kernel` name. Sources: `shared/bench/sources/*.move`, and
//! for `fib`, `u64_loop`, `nested_loop` and `sieve` the compiled modules'
//! bytecode (`movejit disasm`).

use ethnum::U256;
use std::hint::black_box;

/// `0xb0::fib::fib`: naive recursion.
pub fn fib(n: u64) -> Option<u64> {
    if n < 2 {
        return Some(n);
    }
    fib(n.checked_sub(1)?)?.checked_add(fib(n.checked_sub(2)?)?)
}

/// `0xb0::int_arith_loop::u64_loop`: thirty rounds of `(x * 31 + 17) %
/// 1000003` per iteration (the bytecode unrolls them).
pub fn u64_loop(n: u64) -> Option<u64> {
    let mut x: u64 = 1;
    let mut i: u64 = 0;
    while i < n {
        for _ in 0..30 {
            x = x.checked_mul(31)?.checked_add(17)?.checked_rem(1_000_003)?;
        }
        i = i.checked_add(1)?;
    }
    Some(x)
}

/// `0xb0::nested_loop::nested_loop`: sum of `i ^ j` over an n×n square.
pub fn nested_loop(n: u64) -> Option<u64> {
    let mut acc: u64 = 0;
    let mut i: u64 = 0;
    while i < n {
        let mut j: u64 = 0;
        while j < n {
            acc = acc.checked_add(i ^ j)?;
            j = j.checked_add(1)?;
        }
        i = i.checked_add(1)?;
    }
    Some(acc)
}

/// `0xb0::sieve::bench_sieve`: `iters` fresh sieves of Eratosthenes over
/// `1..=size`, summing the prime counts.
pub fn sieve(size: u64, iters: u64) -> Option<u64> {
    let mut total: u64 = 0;
    let mut it: u64 = 0;
    while it < iters {
        let mut flags = Vec::new();
        let mut i: u64 = 0;
        while i < size {
            flags.push(true);
            i = i.checked_add(1)?;
        }
        total = total.checked_add(sieve_once(&mut flags, size)?)?;
        it = it.checked_add(1)?;
    }
    Some(total)
}

fn sieve_once(flags: &mut [bool], size: u64) -> Option<u64> {
    let mut count: u64 = 0;
    let mut i: u64 = 2;
    while i <= size {
        if *flags.get(usize::try_from(i.checked_sub(1)?).ok()?)? {
            count = count.checked_add(1)?;
            let mut k = i.checked_add(i)?;
            while k <= size {
                *flags.get_mut(usize::try_from(k.checked_sub(1)?).ok()?)? = false;
                k = k.checked_add(i)?;
            }
        }
        i = i.checked_add(1)?;
    }
    Some(count)
}

fn at(v: &[u64], i: u64) -> Option<u64> {
    v.get(usize::try_from(i).ok()?).copied()
}

fn swap(v: &mut [u64], i: u64, j: u64) -> Option<()> {
    let (i, j) = (usize::try_from(i).ok()?, usize::try_from(j).ok()?);
    if i >= v.len() || j >= v.len() {
        return None;
    }
    v.swap(i, j);
    Some(())
}

fn xorshift(x: u64) -> u64 {
    let x = x ^ (x << 13);
    let x = x ^ (x >> 7);
    x ^ (x << 17)
}

/// Sorts `v[lo..hi)`: Lomuto partition around the middle element.
fn qsort(v: &mut [u64], lo: u64, hi: u64) -> Option<()> {
    if hi <= lo.checked_add(1)? {
        return Some(());
    }
    let mid = lo.checked_add(hi.checked_sub(lo)? / 2)?;
    let last = hi.checked_sub(1)?;
    swap(v, mid, last)?;
    let pivot = at(v, last)?;
    let mut store = lo;
    let mut i = lo;
    while i < last {
        if at(v, i)? < pivot {
            swap(v, i, store)?;
            store = store.checked_add(1)?;
        }
        i = i.checked_add(1)?;
    }
    swap(v, store, last)?;
    qsort(v, lo, store)?;
    qsort(v, store.checked_add(1)?, hi)
}

/// `0xb0::sort_quick::bench_quicksort`: sort `n` xorshift values, check
/// the order, return a positional checksum.
pub fn quicksort(n: u64, seed: u64) -> Option<u64> {
    let mut v = Vec::new();
    let mut x = if seed == 0 { 88_172_645_463_325_252 } else { seed };
    let mut i: u64 = 0;
    while i < n {
        x = xorshift(x);
        v.push(x);
        i = i.checked_add(1)?;
    }
    qsort(&mut v, 0, n)?;
    let mut acc: u64 = 0;
    let mut i: u64 = 0;
    while i < n {
        let e = at(&v, i)?;
        if i > 0 && at(&v, i - 1)? > e {
            return None; // Move: abort 1
        }
        acc = acc.checked_mul(1_000_003)?.checked_add(e.checked_rem(1_000_000_007)?)?.checked_rem(1_000_000_007)?;
        i = i.checked_add(1)?;
    }
    Some(acc)
}

/// 2^127 - 1.
const P127: U256 = U256::from_words(0, u128::MAX >> 1);

fn powmod(b: U256, mut e: U256, m: U256) -> Option<U256> {
    let mut r = U256::ONE;
    let mut b = b.checked_rem(m)?;
    while e > U256::ZERO {
        if e & U256::ONE == U256::ONE {
            r = r.checked_mul(b)?.checked_rem(m)?;
        }
        b = b.checked_mul(b)?.checked_rem(m)?;
        e >>= 1;
    }
    Some(r)
}

/// `0xb0::u256_modexp::bench_modexp`: `iters` chained Fermat inverses
/// modulo 2^127 - 1.
pub fn modexp(iters: u64, seed: u64) -> Option<U256> {
    let mut acc = U256::from(seed).checked_rem(P127)?;
    let e = P127.checked_sub(U256::new(2))?;
    let mut i: u64 = 0;
    while i < iters {
        let base = acc.checked_add(U256::from(i))?.checked_add(U256::new(2))?.checked_rem(P127)?;
        let inv = powmod(base, e, P127)?;
        acc = acc.checked_add(inv)?.checked_rem(P127)?;
        i = i.checked_add(1)?;
    }
    Some(acc)
}

struct PermState {
    count: u64,
    v: Vec<u64>,
}

fn perm_swap(s: &mut PermState, i: u64, j: u64) -> Option<()> {
    let tmp = at(&s.v, i)?;
    let vj = at(&s.v, j)?;
    *s.v.get_mut(usize::try_from(i).ok()?)? = vj;
    *s.v.get_mut(usize::try_from(j).ok()?)? = tmp;
    Some(())
}

fn permute_rec(s: &mut PermState, n: u64) -> Option<()> {
    s.count = s.count.checked_add(1)?;
    if n != 0 {
        let n1 = n - 1;
        permute_rec(s, n1)?;
        let mut i = n1.checked_add(1)?;
        while i > 0 {
            i -= 1;
            perm_swap(s, n1, i)?;
            permute_rec(s, n1)?;
            perm_swap(s, n1, i)?;
        }
    }
    Some(())
}

/// `0xb0::permute::bench_permute`: AWFY Permute of `n` elements, `iters`
/// times; the summed call count.
pub fn permute(n: u64, iters: u64) -> Option<u64> {
    let mut total: u64 = 0;
    let mut it: u64 = 0;
    while it < iters {
        let mut v = Vec::new();
        let mut i: u64 = 0;
        while i < n {
            v.push(0);
            i = i.checked_add(1)?;
        }
        let mut s = PermState { count: 0, v };
        permute_rec(&mut s, n)?;
        total = total.checked_add(s.count)?;
        it = it.checked_add(1)?;
    }
    Some(total)
}

fn index(i: u64) -> Option<usize> {
    usize::try_from(i).ok()
}

/// `0xb0::vector_ops::bench_vector`: push_back, an indexed prefix pass,
/// a swap-based reverse, pop_back/push_back of the upper half, a fold.
pub fn vector_ops(n: u64, rounds: u64, seed: u64) -> Option<u64> {
    const M: u64 = 1_000_003;
    let mut v: Vec<u64> = Vec::new();
    let mut x = if seed == 0 { 88_172_645_463_325_252 } else { seed };
    let mut i: u64 = 0;
    while i < n {
        x = xorshift(x);
        v.push(x % M);
        i = i.checked_add(1)?;
    }
    let mut r: u64 = 0;
    while r < rounds {
        let mut i: u64 = 1;
        while i < n {
            let prev = *v.get(index(i.checked_sub(1)?)?)?;
            let cur = v.get_mut(index(i)?)?;
            *cur = cur.checked_add(prev.checked_mul(3)?)? % M;
            i = i.checked_add(1)?;
        }
        let (mut lo, mut hi) = (0u64, n);
        while lo.checked_add(1)? < hi {
            hi = hi.checked_sub(1)?;
            swap(&mut v, lo, hi)?;
            lo = lo.checked_add(1)?;
        }
        let mut tmp = Vec::new();
        let mut j: u64 = 0;
        while j < n / 2 {
            tmp.push(v.pop()?);
            j = j.checked_add(1)?;
        }
        while let Some(t) = tmp.pop() {
            v.push(t ^ r);
        }
        r = r.checked_add(1)?;
    }
    let mut acc = v.len() as u64;
    let mut i: u64 = 0;
    while i < n {
        acc = acc.checked_mul(M)?.checked_add(at(&v, i)?)? % 1_000_000_007;
        i = i.checked_add(1)?;
    }
    Some(acc)
}

#[derive(Clone, Copy)]
struct Vec2 {
    x: u64,
    y: u64,
}

#[derive(Clone, Copy)]
struct Particle {
    pos: Vec2,
    vel: Vec2,
    mass: u64,
    hits: u64,
}

struct ParticleStats {
    moved: u64,
    bounced: u64,
    energy: u64,
}

const WORLD: u64 = 1_000_003;

fn particle_step(p: &mut Particle, st: &mut ParticleStats) -> Option<()> {
    p.pos.x = p.pos.x.checked_add(p.vel.x)? % WORLD;
    p.pos.y = p.pos.y.checked_add(p.vel.y)? % WORLD;
    st.moved = st.moved.checked_add(1)?;
    if p.pos.x < p.vel.y {
        p.vel = Vec2 { x: p.vel.y, y: p.vel.x };
        p.hits = p.hits.checked_add(1)?;
        st.bounced = st.bounced.checked_add(1)?;
    }
    st.energy = st.energy.checked_add(p.mass.checked_mul(p.vel.x.checked_add(p.vel.y)?)?)? % 1_000_000_007;
    Some(())
}

/// Swaps the masses of particles `i` and `j` through copies.
fn exchange(ps: &mut [Particle], i: u64, j: u64) -> Option<()> {
    let (i, j) = (index(i)?, index(j)?);
    let (a, b) = (*ps.get(i)?, *ps.get(j)?);
    *ps.get_mut(i)? = Particle { mass: b.mass, ..a };
    *ps.get_mut(j)? = Particle { mass: a.mass, ..b };
    Some(())
}

/// `0xb0::structs::bench_structs`: a vector of nested structs stepped
/// `steps` times, with whole-struct copies and repacks.
pub fn structs(n: u64, steps: u64, seed: u64) -> Option<u64> {
    let mut ps: Vec<Particle> = Vec::new();
    let mut x = if seed == 0 { 88_172_645_463_325_252 } else { seed };
    let mut i: u64 = 0;
    while i < n {
        let mut next = |m: u64| {
            x = xorshift(x);
            x % m
        };
        let (px, py, vx, vy) = (next(WORLD), next(WORLD), next(1000), next(1000));
        let mass = 1u64.checked_add(i % 7)?;
        ps.push(Particle { pos: Vec2 { x: px, y: py }, vel: Vec2 { x: vx, y: vy }, mass, hits: 0 });
        i = i.checked_add(1)?;
    }
    let mut st = ParticleStats { moved: 0, bounced: 0, energy: 0 };
    let mut s: u64 = 0;
    while s < steps {
        let mut i: u64 = 0;
        while i < n {
            particle_step(ps.get_mut(index(i)?)?, &mut st)?;
            i = i.checked_add(1)?;
        }
        if n > 1 {
            exchange(&mut ps, s % n, n.checked_sub(1)?.checked_sub(s % n)?)?;
        }
        s = s.checked_add(1)?;
    }
    let mut acc = st.energy;
    let mut i: u64 = 0;
    while i < n {
        let p = ps.get(index(i)?)?;
        let a = acc.checked_mul(31)?.checked_add(p.pos.x)?.checked_add(p.pos.y.checked_mul(7)?)?;
        acc = a.checked_add(p.hits)? % 1_000_000_007;
        i = i.checked_add(1)?;
    }
    Some(acc.checked_add(st.moved)?.checked_add(st.bounced)? % 1_000_000_007)
}

/// The kernels by their manifest name (`native_rust_kernel`, or
/// [`UNLISTED`] where the manifest names none).
pub const KERNELS: &[&str] =
    &["fib", "u64_loop", "nested_loop", "sieve", "quicksort", "modexp", "permute", "vector_ops", "structs"];

/// Controls of benchmarks whose manifest line names none (benchmark,
/// kernel): the vector-heavy and the struct-heavy kernel.
pub const UNLISTED: &[(&str, &str)] = &[("vector_ops", "vector_ops"), ("structs", "structs")];

/// Why a native control could not be run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NativeError {
    #[error("no native control named `{0}`")]
    Unknown(String),
    #[error("`{kernel}` takes {want} u64 arguments, got {got}")]
    Arguments { kernel: String, want: usize, got: usize },
    #[error("arithmetic error or out-of-bounds access (Move would abort)")]
    Aborted,
}

/// Runs kernel `name` on BCS `u64` arguments (through `black_box`) and
/// returns the BCS of its checksum.
pub fn run(name: &str, args: &[Vec<u8>]) -> Result<Vec<u8>, NativeError> {
    let want = match name {
        "fib" | "u64_loop" | "nested_loop" => 1,
        "sieve" | "quicksort" | "modexp" | "permute" => 2,
        "vector_ops" | "structs" => 3,
        _ => return Err(NativeError::Unknown(name.to_string())),
    };
    let bad = || NativeError::Arguments { kernel: name.to_string(), want, got: args.len() };
    if args.len() != want {
        return Err(bad());
    }
    let a: Vec<u64> = args
        .iter()
        .map(|b| <[u8; 8]>::try_from(b.as_slice()).map(u64::from_le_bytes).map(black_box))
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let u64_bcs = |r: Option<u64>| r.map(|x| x.to_le_bytes().to_vec()).ok_or(NativeError::Aborted);
    match name {
        "fib" => u64_bcs(fib(a[0])),
        "u64_loop" => u64_bcs(u64_loop(a[0])),
        "nested_loop" => u64_bcs(nested_loop(a[0])),
        "sieve" => u64_bcs(sieve(a[0], a[1])),
        "quicksort" => u64_bcs(quicksort(a[0], a[1])),
        "permute" => u64_bcs(permute(a[0], a[1])),
        "vector_ops" => u64_bcs(vector_ops(a[0], a[1], a[2])),
        "structs" => u64_bcs(structs(a[0], a[1], a[2])),
        _ => modexp(a[0], a[1]).map(|x| x.to_le_bytes().to_vec()).ok_or(NativeError::Aborted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_known_values() {
        assert_eq!(fib(10), Some(55));
        assert_eq!(P127, (U256::ONE << 127u32) - U256::ONE);
        // AWFY: permute(6) makes 8660 calls.
        assert_eq!(permute(6, 1), Some(8660));
        // 1..=100 has 25 primes.
        assert_eq!(sieve(100, 2), Some(50));
        assert_eq!(nested_loop(2), Some(2));
        assert_eq!(run("fib", &[vec![0; 7]]), Err(NativeError::Arguments { kernel: "fib".into(), want: 1, got: 1 }));
        assert_eq!(run("nope", &[]), Err(NativeError::Unknown("nope".into())));
        // x^(p-2) is the inverse of x modulo p.
        let inv = powmod(U256::new(3), P127 - U256::new(2), P127).unwrap();
        assert_eq!(inv * 3 % P127, U256::ONE);
    }
}
