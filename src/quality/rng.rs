//! A small seeded generator (SplitMix64): the same seed gives the same
//! queries, samples and confidence intervals on every machine.

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A number in `0..n` (`n` > 0); the modulo bias is far below what a
    /// sample of queries could show.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `k` distinct indices of `0..n` in increasing order (all of them when
    /// `k >= n`): a partial Fisher-Yates shuffle.
    pub fn sample(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..n).collect();
        if k >= n {
            return all;
        }
        for i in 0..k {
            let j = i + self.below(n - i);
            all.swap(i, j);
        }
        let mut picked = all[..k].to_vec();
        picked.sort_unstable();
        picked
    }
}

/// A stable hash of `text` under `seed`, for seeded tie-breaking.
pub fn hash(seed: u64, text: &str) -> u64 {
    text.bytes()
        .fold(mix(seed ^ 0xA076_1D64_78BD_642F), |h, b| {
            mix(h ^ u64::from(b))
        })
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(Rng::new(8).next_u64(), a[0]);
    }

    #[test]
    fn samples_are_distinct_sorted_and_bounded() {
        let s = Rng::new(1).sample(100, 10);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && s[9] < 100);
        assert_eq!(Rng::new(1).sample(3, 10), [0, 1, 2]);
        assert_eq!(hash(1, "page"), hash(1, "page"));
        assert_ne!(hash(1, "page"), hash(2, "page"));
    }
}
