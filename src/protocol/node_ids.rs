//! [`NodeIds`]: a list of broker ids that keeps short lists inline, without a heap allocation.
//!
//! Why it exists: every partition of a Metadata response carries three such lists (replicas,
//! in-sync replicas, offline replicas). Their length is the replication factor — almost always
//! 1 to 5 — while a big cluster's Metadata response lists 10^4 to 10^6 partitions. As
//! `Vec<i32>`s, decoding one such response made two or three heap allocations per partition
//! (and as many frees when it was dropped): the allocator, not the parsing, was most of the
//! decode time. `NodeIds` stores up to [`NodeIds::INLINE_CAPACITY`] ids in place and only
//! spills longer lists to the heap.
//!
//! It reads like a slice (`Deref<Target = [i32]>`), converts from `Vec<i32>`, slices, arrays
//! and iterators, and compares by contents: two lists with the same ids are equal however they
//! are stored.
//!
//! ```
//! use kafka_streams_group::protocol::node_ids::NodeIds;
//!
//! let replicas: NodeIds = vec![1, 2, 3].into();
//! assert_eq!(replicas.len(), 3);
//! assert!(replicas.contains(&2));
//! assert_eq!(replicas, [1, 2, 3]);
//! assert_eq!(replicas, (1..=3).collect::<NodeIds>());
//! ```

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Ids kept in place; beyond this the list lives on the heap. Five covers the replication
/// factors clusters use (1, 3, sometimes 4 or 5) and, with a boxed slice as the spilled form,
/// keeps `NodeIds` as small as a `Vec<i32>` (24 bytes on 64-bit targets).
const INLINE: usize = 5;

/// Bytes of [`INLINE`] wire ids, for [`NodeIds::from_be_window`].
pub(crate) const WINDOW: usize = 4 * INLINE;

/// A list of broker (node) ids, stored inline when short; see the [module docs](self).
#[derive(Clone)]
pub struct NodeIds(Repr);

#[derive(Clone)]
enum Repr {
    /// `ids[..len]` are the ids; the rest are unused, with any value (so every comparison,
    /// hash and view goes through [`NodeIds::as_slice`]).
    Inline { len: u8, ids: [i32; INLINE] },
    /// A list longer than `INLINE` (or any list, if built by a test): only the contents count.
    Heap(Box<[i32]>),
}

impl NodeIds {
    /// How many ids are stored without a heap allocation.
    pub const INLINE_CAPACITY: usize = INLINE;

    /// An empty list.
    pub const fn new() -> Self {
        NodeIds(Repr::Inline {
            len: 0,
            ids: [0; INLINE],
        })
    }

    /// A copy of `ids`: inline if it fits, else one heap allocation of exactly its length.
    pub fn from_slice(ids: &[i32]) -> Self {
        if ids.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..ids.len()].copy_from_slice(ids);
            NodeIds(Repr::Inline {
                len: ids.len() as u8,
                ids: inline,
            })
        } else {
            NodeIds(Repr::Heap(ids.into()))
        }
    }

    /// Decodes `bytes.len() / 4` big-endian `int32`s (the body of a wire array, whose length
    /// the caller has already checked); a trailing partial id is ignored.
    pub(crate) fn from_be_bytes(bytes: &[u8]) -> Self {
        let n = bytes.len() / 4;
        if n <= INLINE {
            let mut window = [0u8; WINDOW];
            window[..4 * n].copy_from_slice(&bytes[..4 * n]);
            NodeIds::from_be_window(&window, n)
        } else {
            NodeIds(Repr::Heap(
                bytes
                    .chunks_exact(4)
                    .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ))
        }
    }

    /// The first `n` (at most [`NodeIds::INLINE_CAPACITY`]) big-endian `int32`s of `window`;
    /// bytes after them are ignored.
    ///
    /// A decoder calls this with the next `WINDOW` input bytes whenever that many remain: a
    /// fixed-size conversion with no copy of variable length, which is most of the cost of a
    /// short list (this runs three times per partition of a Metadata response).
    pub(crate) fn from_be_window(window: &[u8; WINDOW], n: usize) -> Self {
        debug_assert!(n <= INLINE);
        // Slots from `n` on hold whatever followed the list: unused, never read.
        let ids = std::array::from_fn(|i| {
            i32::from_be_bytes([
                window[4 * i],
                window[4 * i + 1],
                window[4 * i + 2],
                window[4 * i + 3],
            ])
        });
        NodeIds(Repr::Inline {
            len: n.min(INLINE) as u8,
            ids,
        })
    }

    /// The ids, in order.
    pub fn as_slice(&self) -> &[i32] {
        match &self.0 {
            Repr::Inline { len, ids } => &ids[..usize::from(*len)],
            Repr::Heap(ids) => ids,
        }
    }

    /// The ids as a `Vec`.
    pub fn to_vec(&self) -> Vec<i32> {
        self.as_slice().to_vec()
    }
}

impl Default for NodeIds {
    fn default() -> Self {
        NodeIds::new()
    }
}

impl Deref for NodeIds {
    type Target = [i32];
    fn deref(&self) -> &[i32] {
        self.as_slice()
    }
}

impl AsRef<[i32]> for NodeIds {
    fn as_ref(&self) -> &[i32] {
        self.as_slice()
    }
}

// Sound because `Eq`, `Ord` and `Hash` are all those of the slice.
impl Borrow<[i32]> for NodeIds {
    fn borrow(&self) -> &[i32] {
        self.as_slice()
    }
}

impl From<&[i32]> for NodeIds {
    fn from(ids: &[i32]) -> Self {
        NodeIds::from_slice(ids)
    }
}

impl<const N: usize> From<[i32; N]> for NodeIds {
    fn from(ids: [i32; N]) -> Self {
        NodeIds::from_slice(&ids)
    }
}

impl From<Vec<i32>> for NodeIds {
    /// Short lists move inline (the `Vec`'s buffer is freed); long ones keep their buffer,
    /// shrunk to fit.
    fn from(ids: Vec<i32>) -> Self {
        if ids.len() <= INLINE {
            NodeIds::from_slice(&ids)
        } else {
            NodeIds(Repr::Heap(ids.into_boxed_slice()))
        }
    }
}

impl From<NodeIds> for Vec<i32> {
    fn from(ids: NodeIds) -> Self {
        match ids.0 {
            Repr::Inline { .. } => ids.to_vec(),
            Repr::Heap(ids) => ids.into_vec(),
        }
    }
}

impl FromIterator<i32> for NodeIds {
    fn from_iter<I: IntoIterator<Item = i32>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let mut inline = [0; INLINE];
        let mut len = 0;
        while len < INLINE {
            match iter.next() {
                Some(id) => {
                    inline[len] = id;
                    len += 1;
                }
                None => {
                    return NodeIds(Repr::Inline {
                        len: len as u8,
                        ids: inline,
                    })
                }
            }
        }
        // Full: anything more spills, together with what was read so far.
        match iter.next() {
            None => NodeIds(Repr::Inline {
                len: len as u8,
                ids: inline,
            }),
            Some(next) => {
                let mut all = inline.to_vec();
                all.push(next);
                all.extend(iter);
                NodeIds(Repr::Heap(all.into_boxed_slice()))
            }
        }
    }
}

impl<'a> IntoIterator for &'a NodeIds {
    type Item = &'a i32;
    type IntoIter = std::slice::Iter<'a, i32>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for NodeIds {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for NodeIds {}

impl PartialEq<[i32]> for NodeIds {
    fn eq(&self, other: &[i32]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<Vec<i32>> for NodeIds {
    fn eq(&self, other: &Vec<i32>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> PartialEq<[i32; N]> for NodeIds {
    fn eq(&self, other: &[i32; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialOrd for NodeIds {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NodeIds {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for NodeIds {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for NodeIds {
    /// Like a slice: `[1, 2, 3]`, whatever the storage.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
impl proptest::arbitrary::Arbitrary for NodeIds {
    type Parameters = ();
    type Strategy = proptest::strategy::Map<
        proptest::collection::VecStrategy<proptest::num::i32::Any>,
        fn(Vec<i32>) -> NodeIds,
    >;
    /// 0 to 8 ids: both sides of the inline/heap boundary.
    fn arbitrary_with(_: ()) -> Self::Strategy {
        use proptest::strategy::Strategy;
        proptest::collection::vec(proptest::num::i32::ANY, 0..=INLINE + 3).prop_map(NodeIds::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::hash_map::DefaultHasher;

    fn is_inline(ids: &NodeIds) -> bool {
        matches!(ids.0, Repr::Inline { .. })
    }

    fn hash_of(ids: &NodeIds) -> u64 {
        let mut h = DefaultHasher::new();
        ids.hash(&mut h);
        h.finish()
    }

    /// Every lengths around the boundary, built each way.
    fn lists() -> impl Iterator<Item = Vec<i32>> {
        (0..=INLINE + 2).map(|n| (0..n as i32).map(|i| i * 7 - 3).collect())
    }

    #[test]
    fn small_enough_to_replace_a_vec() {
        assert_eq!(
            std::mem::size_of::<NodeIds>(),
            std::mem::size_of::<Vec<i32>>()
        );
    }

    #[test]
    fn inline_up_to_capacity_then_heap() {
        for v in lists() {
            let fits = v.len() <= NodeIds::INLINE_CAPACITY;
            let built = [
                NodeIds::from(v.clone()),
                NodeIds::from_slice(&v),
                NodeIds::from(v.as_slice()),
                v.iter().copied().collect(),
                NodeIds::from_be_bytes(&v.iter().flat_map(|i| i.to_be_bytes()).collect::<Vec<_>>()),
            ];
            for ids in built {
                assert_eq!(is_inline(&ids), fits, "{} ids", v.len());
                assert_eq!(ids.as_slice(), v.as_slice());
                assert_eq!(ids.len(), v.len());
                assert_eq!(ids, v);
                assert_eq!(Vec::from(ids.clone()), v);
                assert_eq!(format!("{ids:?}"), format!("{v:?}"));
            }
        }
    }

    #[test]
    fn equal_by_contents_across_representations() {
        for v in lists() {
            let inline_or_heap = NodeIds::from(v.clone());
            let heap = NodeIds(Repr::Heap(v.clone().into_boxed_slice()));
            assert!(!is_inline(&heap));
            assert_eq!(inline_or_heap, heap);
            assert_eq!(heap, inline_or_heap);
            assert_eq!(hash_of(&heap), hash_of(&inline_or_heap));
            assert_eq!(heap.cmp(&inline_or_heap), std::cmp::Ordering::Equal);
            // Unused inline slots never leak into comparisons.
            if v.len() < INLINE {
                let mut ids = [99; INLINE];
                ids[..v.len()].copy_from_slice(&v);
                let dirty = NodeIds(Repr::Inline {
                    len: v.len() as u8,
                    ids,
                });
                assert_eq!(dirty, heap);
                assert_eq!(hash_of(&dirty), hash_of(&heap));
            }
        }
        assert_ne!(NodeIds::from([1, 2]), [1, 2, 0]);
        assert_ne!(NodeIds::from([1, 2]), [2, 1]);
        let (low, high) = (NodeIds::from([1, 2]), NodeIds::from([1, 3]));
        assert!(low < high);
    }

    #[test]
    fn empty_and_default() {
        assert!(NodeIds::new().is_empty());
        assert_eq!(NodeIds::default(), NodeIds::from(Vec::new()));
        assert_eq!(NodeIds::new(), [0i32; 0]);
        assert!(is_inline(&NodeIds::default()));
    }

    #[test]
    fn from_be_window_takes_the_first_n_ids() {
        let mut window = [0u8; WINDOW];
        for (i, b) in window.iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        for n in 0..=INLINE {
            let ids = NodeIds::from_be_window(&window, n);
            assert_eq!(ids, NodeIds::from_be_bytes(&window[..4 * n]));
            assert_eq!(ids.len(), n);
            assert!(is_inline(&ids));
        }
        assert_eq!(
            NodeIds::from_be_window(&window, 2),
            [0x0102_0304, 0x0506_0708]
        );
    }

    #[test]
    fn from_be_bytes_ignores_a_partial_trailing_id() {
        assert_eq!(NodeIds::from_be_bytes(&[0, 0, 0, 7, 1, 2]), [7]);
        assert_eq!(NodeIds::from_be_bytes(&[0xff, 0xff, 0xff, 0xfe]), [-2]);
    }

    proptest! {
        #[test]
        fn round_trips_through_vec_and_iter(v in proptest::collection::vec(any::<i32>(), 0..20)) {
            let ids = NodeIds::from(v.clone());
            prop_assert_eq!(ids.iter().copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(ids.iter().copied().collect::<NodeIds>(), ids.clone());
            prop_assert_eq!(Vec::from(ids), v);
        }
    }
}
