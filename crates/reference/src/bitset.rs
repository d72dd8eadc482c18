//! A fixed-size bit set over document numbers, used for group/tag filters so
//! that ANY/ALL combinations cost a few thousand word operations even on a
//! 100k-tool catalog.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitset {
    words: Vec<u64>,
    len: usize,
}

impl Bitset {
    pub fn empty(len: usize) -> Self {
        Bitset {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    pub fn full(len: usize) -> Self {
        let mut set = Bitset {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        set.clear_tail();
        set
    }

    fn clear_tail(&mut self) {
        let rem = self.len % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    pub fn insert(&mut self, i: usize) {
        if i < self.len {
            self.words[i / 64] |= 1 << (i % 64);
        }
    }

    pub fn contains(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    pub fn union_with(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub fn intersect_with(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &word)| {
            let mut w = word;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut a = Bitset::empty(130);
        for i in [0, 63, 64, 129, 500] {
            a.insert(i);
        }
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 63, 64, 129]);
        let full = Bitset::full(130);
        assert_eq!(full.count(), 130);
        let mut b = full.clone();
        b.intersect_with(&a);
        assert_eq!(b, a);
        let mut c = Bitset::empty(130);
        c.union_with(&a);
        assert!(c.contains(129) && !c.contains(1) && !c.contains(1000));
    }
}
