//! A small, fast, non-cryptographic hasher for maps keyed by names the application itself
//! chose (topic names on the producer's per-record path), where std's SipHash, built to resist
//! hash flooding by untrusted keys, costs more than the lookup it serves. The mixing step is
//! rustc's `FxHasher` (a rotate, an xor and a multiply per 8 bytes).

use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastHashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FastHasher>>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// FxHash: fast on short keys; not for keys an adversary picks.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher {
    hash: u64,
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differing_in_their_tail_hash_apart_and_lookups_work() {
        let mut m: FastHashMap<String, usize> = FastHashMap::default();
        for i in 0..1000 {
            m.insert(
                format!("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-x{i}"),
                i,
            );
        }
        for i in 0..1000 {
            assert_eq!(
                m.get(format!("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-x{i}").as_str()),
                Some(&i)
            );
        }
        let h = |s: &str| {
            let mut h = FastHasher::default();
            h.write(s.as_bytes());
            h.finish()
        };
        assert_ne!(h("topic-a"), h("topic-b"));
        assert_ne!(h("abc"), h("abc\0"), "the tail's length is mixed in");
    }
}
