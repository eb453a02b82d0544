//! A small deterministic generator (SplitMix64). Kept here rather than taken
//! from a crate so a seed names the same program forever, whatever version
//! of a dependency is resolved.

#![forbid(unsafe_code)]

#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    /// Fuzz input still to be handed out before `state` takes over.
    tape: Vec<u8>,
    pos: usize,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed ^ 0x6a09_e667_f3bc_c908, tape: Vec::new(), pos: 0 }
    }
    /// A generator driven by arbitrary bytes (fuzz input): each draw takes
    /// the next eight bytes of `bytes`, so a mutated byte changes one choice
    /// of the generated program rather than all of them (what lets
    /// coverage guide the search); past the end, draws continue from a
    /// seed hashed from the whole input.
    pub fn from_bytes(bytes: &[u8]) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        Rng { tape: bytes.to_vec(), ..Rng::new(h) }
    }
    pub fn next_u64(&mut self) -> u64 {
        if self.pos < self.tape.len() {
            let end = (self.pos + 8).min(self.tape.len());
            let mut word = [0u8; 8];
            word[..end - self.pos].copy_from_slice(&self.tape[self.pos..end]);
            self.pos = end;
            return u64::from_le_bytes(word);
        }
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`; 0 when `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den as usize) < num as usize
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn fuzz_bytes_are_drawn_in_order_then_hashed() {
        let input = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0xff, 3];
        let mut r = Rng::from_bytes(&input);
        // Eight little-endian bytes per draw; a short tail is zero-padded.
        assert_eq!([r.next_u64(), r.next_u64(), r.next_u64()], [1, 2, 0x03ff]);
        // Then the generator the whole input seeds: equal inputs agree,
        // and a different input (sharing the prefix) does not.
        let tail = |bytes: &[u8]| {
            let mut r = Rng::from_bytes(bytes);
            for _ in 0..bytes.len().div_ceil(8) {
                r.next_u64();
            }
            [r.next_u64(), r.next_u64()]
        };
        assert_eq!(tail(&input), [r.next_u64(), r.next_u64()]);
        assert_ne!(tail(&input), tail(&input[..17]));
        // A mutated byte changes only the draw that holds it.
        let mut mutated = input;
        mutated[9] = 7;
        let mut m = Rng::from_bytes(&mutated);
        assert_eq!(m.next_u64(), 1);
        assert_eq!(m.next_u64(), 2 + (7 << 8));
    }
}
