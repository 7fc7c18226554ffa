//! The accumulator's per-partition queues: a `Vec` sorted by partition (so every walk over
//! them goes in `TopicPartition` order, as the `BTreeMap` they replace did) with an index by
//! topic name, so that finding a record's queue costs one hash of the topic name and no
//! `TopicPartition` key built or compared name by name. Partitions are only ever added.

use std::collections::hash_map::Entry;

use crate::common::TopicPartition;
use rustc_hash::FxHashMap as FastHashMap;

/// Partition → `Q`, sorted, with lookups by `(&str, i32)`.
#[derive(Debug)]
pub(super) struct Queues<Q> {
    /// Sorted by partition.
    slots: Vec<(TopicPartition, Q)>,
    /// Topic → slot of each partition (`u32::MAX`: none yet).
    by_topic: FastHashMap<String, Vec<u32>>,
}

impl<Q> Default for Queues<Q> {
    fn default() -> Self {
        Queues {
            slots: Vec::new(),
            by_topic: FastHashMap::default(),
        }
    }
}

const NONE: u32 = u32::MAX;

impl<Q> Queues<Q> {
    /// The slot of `topic`-`partition`.
    #[inline]
    fn find(&self, topic: &str, partition: i32) -> Option<usize> {
        let Ok(p) = usize::try_from(partition) else {
            // Never a real partition; kept correct, not fast.
            return self
                .slots
                .iter()
                .position(|(t, _)| t.partition == partition && t.topic == topic);
        };
        let s = *self.by_topic.get(topic)?.get(p)?;
        (s != NONE).then_some(s as usize)
    }

    /// The queue of `tp`.
    pub(super) fn get(&self, tp: &TopicPartition) -> Option<&Q> {
        let s = self.find(&tp.topic, tp.partition)?;
        self.slots.get(s).map(|(_, q)| q)
    }

    /// The queue of `tp`, to change.
    pub(super) fn get_mut(&mut self, tp: &TopicPartition) -> Option<&mut Q> {
        let s = self.find(&tp.topic, tp.partition)?;
        self.slots.get_mut(s).map(|(_, q)| q)
    }

    /// The queue of `topic`-`partition`, made with `make` if there is none yet (only then is
    /// the name copied).
    pub(super) fn get_or_insert_with(
        &mut self,
        topic: &str,
        partition: i32,
        make: impl FnOnce() -> Q,
    ) -> &mut Q {
        let at = match self.find(topic, partition) {
            Some(s) => s,
            None => self.insert(TopicPartition::new(topic, partition), make()),
        };
        &mut self.slots[at].1
    }

    /// Inserts a new partition at its sorted place; returns its slot.
    #[cold]
    fn insert(&mut self, tp: TopicPartition, q: Q) -> usize {
        let at = self
            .slots
            .binary_search_by(|(t, _)| t.cmp(&tp))
            .unwrap_or_else(|at| at);
        // Every slot from `at` on moves one place up.
        for slots in self.by_topic.values_mut() {
            for s in slots
                .iter_mut()
                .filter(|s| **s != NONE && **s as usize >= at)
            {
                *s += 1;
            }
        }
        let Ok(p) = usize::try_from(tp.partition) else {
            self.slots.insert(at, (tp, q));
            return at;
        };
        let slots = match self.by_topic.entry(tp.topic.clone()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Vec::new()),
        };
        if slots.len() <= p {
            slots.resize(p + 1, NONE);
        }
        slots[p] = at as u32;
        self.slots.insert(at, (tp, q));
        at
    }

    /// Every partition and its queue, in partition order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&TopicPartition, &Q)> {
        self.slots.iter().map(|(tp, q)| (tp, q))
    }

    /// Every partition and its queue, to change, in partition order.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&TopicPartition, &mut Q)> {
        self.slots.iter_mut().map(|(tp, q)| (&*tp, q))
    }

    /// Every queue, in partition order.
    pub(super) fn values(&self) -> impl Iterator<Item = &Q> {
        self.slots.iter().map(|(_, q)| q)
    }

    /// Every queue, to change.
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Q> {
        self.slots.iter_mut().map(|(_, q)| q)
    }

    /// The partitions, in order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &TopicPartition> {
        self.slots.iter().map(|(tp, _)| tp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_and_order_survive_inserts_anywhere() {
        let mut q: Queues<u32> = Queues::default();
        let names = ["b", "a", "c", "a", "b", "a"];
        let parts = [3, 1, 0, 0, 0, 7];
        for (i, (n, p)) in names.iter().zip(parts).enumerate() {
            *q.get_or_insert_with(n, p, || 0) = i as u32;
        }
        let keys: Vec<String> = q.keys().map(ToString::to_string).collect();
        assert_eq!(keys, ["a-0", "a-1", "a-7", "b-0", "b-3", "c-0"]);
        for (i, (n, p)) in names.iter().zip(parts).enumerate() {
            assert_eq!(q.get(&TopicPartition::new(*n, p)), Some(&(i as u32)));
        }
        assert_eq!(q.get(&TopicPartition::new("a", 2)), None);
        assert_eq!(q.get(&TopicPartition::new("a", -1)), None);
        *q.get_or_insert_with("a", -1, || 50) += 1;
        *q.get_or_insert_with("a", -1, || 50) += 1;
        assert_eq!(q.get(&TopicPartition::new("a", -1)), Some(&52));
        assert_eq!(q.get(&TopicPartition::new("a", 0)), Some(&3));
        assert_eq!(q.get(&TopicPartition::new("d", 0)), None);
        *q.get_or_insert_with("a", 1, || 99) += 100;
        assert_eq!(q.get(&TopicPartition::new("a", 1)), Some(&101));
    }
}
