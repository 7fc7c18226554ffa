//! Java's default partitioner for keyed records, so Rust and Java put a key on the same
//! partition: `Utils.toPositive(Utils.murmur2(keyBytes)) % numPartitions`
//! (`BuiltInPartitioner.partitionForKey`).

/// Kafka's `Utils.murmur2`: 32-bit MurmurHash2 with seed `0x9747b28c`, little-endian blocks.
///
/// ```
/// use kafka_streams_group::protocol::records::murmur2;
/// assert_eq!(murmur2(b""), 275646681);
/// assert_eq!(murmur2(b"kafka"), -798503068);
/// ```
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    let mut h = SEED ^ len as u32;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        let mut k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    // Java reads the tail bytes as signed bytes (sign-extended), then masks with 0xff.
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Kafka's `Utils.toPositive`: clears the sign bit (not `abs`).
pub fn to_positive(n: i32) -> i32 {
    n & 0x7fff_ffff
}

/// The partition Java's producer picks for a non-null key among `num_partitions`
/// (`None` if `num_partitions` is not positive).
///
/// ```
/// use kafka_streams_group::protocol::records::partition_for_key;
/// assert_eq!(partition_for_key(b"hello", 6), Some(3));
/// assert_eq!(partition_for_key(b"streams", 3), Some(2));
/// assert_eq!(partition_for_key(b"x", 0), None);
/// ```
pub fn partition_for_key(key: &[u8], num_partitions: i32) -> Option<i32> {
    (num_partitions > 0).then(|| to_positive(murmur2(key)) % num_partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe values of streams-data-path.md §3.1, taken from Java.
    #[test]
    fn matches_the_java_probe_values() {
        let probes: [(&str, i32, i32, i32); 7] = [
            ("", 275646681, 0, 3),
            ("a", -1563381124, 1, 4),
            ("hello", 2132663229, 0, 3),
            ("kafka", -798503068, 1, 4),
            ("streams", 1819902956, 2, 2),
            ("the", -890893617, 2, 5),
            ("foo bar", 1377375084, 0, 0),
        ];
        for (key, hash, p3, p6) in probes {
            assert_eq!(murmur2(key.as_bytes()), hash, "{key:?}");
            assert_eq!(partition_for_key(key.as_bytes(), 3), Some(p3), "{key:?}");
            assert_eq!(partition_for_key(key.as_bytes(), 6), Some(p6), "{key:?}");
        }
        assert_eq!(partition_for_key(b"a", -1), None);
    }
}
