//! The order in which [`DslTestDriver`](super::DslTestDriver) takes the records waiting in
//! the topics a program reads: Java's `PartitionGroup` over one task, as in Java's
//! `TopologyTestDriver`.
//!
//! Each topic (one partition) has a FIFO queue. The non-empty queues wait in a
//! `java.util.PriorityQueue` ordered by the timestamp of their first record; the next record
//! is the first of the queue at the top, which goes back into the priority queue if it still
//! holds records. The priority queue is a binary heap whose order among equal timestamps
//! depends on the order of its insertions and removals: it is reproduced step by step
//! (`siftUp`/`siftDown` as in the JDK), so records of the same timestamp in several topics
//! come in Java's order (for two topics: alternately), not in the order they were written.
//! Topics of a driver are taken from one such group per piped record, as Java's driver drains
//! its task after each.

use std::collections::{BTreeMap, VecDeque};

use super::super::task::InputRecord;

/// The waiting records of a driver (see the module docs).
#[derive(Debug, Default)]
pub(super) struct TopicQueues {
    queues: BTreeMap<String, VecDeque<InputRecord>>,
    /// The topics with records, as the elements of Java's heap array.
    heap: Vec<String>,
}

impl TopicQueues {
    /// Appends `record` to its topic's queue (`PartitionGroup.addRawRecords`: a queue that
    /// was empty joins the priority queue).
    pub(super) fn add(&mut self, record: InputRecord) {
        let topic = record.partition.topic.clone();
        let queue = self.queues.entry(topic.clone()).or_default();
        queue.push_back(record);
        if queue.len() == 1 {
            self.offer(topic);
        }
    }

    /// The next record to process (`PartitionGroup.nextRecord`), if any.
    pub(super) fn pop(&mut self) -> Option<InputRecord> {
        let topic = self.poll()?;
        let queue = self.queues.get_mut(&topic)?;
        let record = queue.pop_front();
        if !queue.is_empty() {
            self.offer(topic);
        }
        record
    }

    /// The timestamp of the first record of `topic`'s queue.
    fn head(&self, topic: &str) -> i64 {
        self.queues
            .get(topic)
            .and_then(|q| q.front())
            .map_or(i64::MAX, |r| r.timestamp)
    }

    /// `PriorityQueue.offer`: `siftUp` from the end, moving past parents only while
    /// strictly earlier.
    fn offer(&mut self, topic: String) {
        let ts = self.head(&topic);
        let mut k = self.heap.len();
        self.heap.push(topic);
        while k > 0 {
            let parent = (k - 1) >> 1;
            if ts >= self.head(&self.heap[parent]) {
                break;
            }
            self.heap.swap(k, parent);
            k = parent;
        }
    }

    /// `PriorityQueue.poll`: takes the top; the last element sifts down from the top,
    /// towards the earlier child (the left one on a tie) while that child is strictly
    /// earlier.
    fn poll(&mut self) -> Option<String> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.heap.swap_remove(0);
        let n = self.heap.len();
        if n > 0 {
            let ts = self.head(&self.heap[0]);
            let mut k = 0;
            while k < n >> 1 {
                let mut child = 2 * k + 1;
                let right = child + 1;
                if right < n && self.head(&self.heap[child]) > self.head(&self.heap[right]) {
                    child = right;
                }
                if ts <= self.head(&self.heap[child]) {
                    break;
                }
                self.heap.swap(k, child);
                k = child;
            }
        }
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::TopicPartition;

    fn record(topic: &str, offset: i64, ts: i64) -> InputRecord {
        InputRecord::new(TopicPartition::new(topic, 0), offset, ts, None, None)
    }

    fn order(q: &mut TopicQueues) -> Vec<(String, i64)> {
        std::iter::from_fn(|| q.pop())
            .map(|r| (r.partition.topic.to_string(), r.offset))
            .collect()
    }

    /// Two topics' records of one timestamp alternate, as Java's heap of two queues
    /// gives them; an earlier timestamp goes first whatever its topic.
    #[test]
    fn equal_timestamps_alternate_and_earlier_ones_go_first() {
        let mut q = TopicQueues::default();
        for (t, o) in [("a", 0), ("a", 1), ("b", 0), ("b", 1)] {
            q.add(record(t, o, 10));
        }
        let s = |t: &str, o| (t.to_string(), o);
        assert_eq!(order(&mut q), [s("a", 0), s("b", 0), s("a", 1), s("b", 1)]);
        q.add(record("a", 2, 9));
        q.add(record("b", 2, 5));
        q.add(record("c", 0, 7));
        assert_eq!(order(&mut q), [s("b", 2), s("c", 0), s("a", 2)]);
    }

    /// Java's `PriorityQueue` on three queues of one timestamp (the order a JDK 17 program
    /// doing the same prints): after the first poll the last element moves to the top and
    /// ties stay put, so `b` waits until `a` and `c` are empty.
    #[test]
    fn three_queues_follow_the_jdk_heap() {
        let mut q = TopicQueues::default();
        for (t, o) in [("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("c", 1)] {
            q.add(record(t, o, 1));
        }
        let got: Vec<String> = order(&mut q)
            .into_iter()
            .map(|(t, o)| format!("{t}{o}"))
            .collect();
        assert_eq!(got, ["a0", "c0", "a1", "c1", "b0", "b1"]);
    }
}
