//! A seeded pseudo-random generator for tests and benchmarks, so a seed replays a run.

/// xorshift64*: tiny and deterministic, the same numbers on every machine. The state is
/// public so a caller can start from a raw state (`Rng(seed | 1)`: it must not be zero);
/// [`Rng::new`] spreads nearby seeds apart first.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator from any seed: nearby seeds start far apart, and zero is never the
    /// state (xorshift would stay at zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The sequence is fixed: recorded runs, benchmarks and seeds in bug reports rely on it.
    #[test]
    fn a_seed_gives_the_same_numbers_everywhere() {
        let mut rng = Rng(1);
        assert_eq!([rng.next(), rng.next(), rng.next()], [5_180_492_295_206_395_165, 12_380_297_144_915_551_517, 13_389_498_078_930_870_103]);
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(a.below(1000), b.below(1000));
        assert_eq!(Rng::new(0).0 & 1, 1, "a zero seed never gives a zero state");
    }
}
