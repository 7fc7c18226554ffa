//! The order in which Kafka Streams (Java) lists copartition groups in its heartbeat.
//!
//! Java never sorts copartition groups. `InternalTopologyBuilder.copartitionGroups()` turns
//! each declared group into a `HashSet<String>` of topic names, merges groups that share a
//! topic (a `LinkedHashMap` from topic to group), and de-duplicates the groups through a
//! `HashSet<Set<String>>`; `StreamsGroupHeartbeatRequestManager` then writes the groups in that
//! set's iteration order and, inside each group, the topics in the group's iteration order, as
//! indexes into the sorted topic lists. So the wire order is `java.util.HashMap` iteration
//! order, which this module reproduces exactly: `String.hashCode`, the spread `h ^ (h >>> 16)`,
//! power-of-two tables that double past 3/4 load, insertion order inside a bucket, and the
//! initial table size `new HashSet<>(collection)` picks (which changed in JDK 19, see
//! [`JavaHashSetSizing`]).
//!
//! Not reproduced: a bucket that collects 9 or more entries in a table of 64 or more becomes a
//! red-black tree whose iteration order is not the insertion order. That needs 9 topic names
//! (or 9 groups) with one hash bucket in a group of more than 48 topics; such a topology gets
//! the insertion order here.

/// Which Java runtime's `new HashSet<>(Collection)` sizing to follow when ordering copartition
/// groups (see [`StreamsTopology::java_hash_set_sizing`](super::StreamsTopology)).
///
/// JDK 11–18 size the set for `max(n / 0.75 + 1, 16)` entries, JDK 19 and later for
/// `max(n, 12) / 0.75` (`HashMap.newHashMap`). The two only differ when the number `n` of
/// distinct copartitioned topics in the whole topology is 12, 24, 48, … **and** one
/// subtopology has two or more copartition groups; otherwise both give the same order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JavaHashSetSizing {
    /// The Java application runs on JDK 11 to 18 (e.g. 17).
    Jdk11To18,
    /// The Java application runs on JDK 19 or later (e.g. 21, 25).
    #[default]
    Jdk19AndLater,
}

/// `java.lang.String.hashCode()`: `h = 31 * h + c` over the UTF-16 code units.
pub(crate) fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `HashMap.hash`: the key's hash with its high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the smallest power of two ≥ `cap` (at least 1, at most 2^30).
fn table_size_for(cap: usize) -> usize {
    cap.clamp(1, 1 << 30).next_power_of_two()
}

/// A model of `java.util.HashSet` that keeps exactly Java's iteration order.
#[derive(Clone, Debug)]
pub(crate) struct JavaHashSet<T> {
    /// Empty until the first insert (Java allocates the table lazily).
    table: Vec<Vec<(u32, T)>>,
    /// The capacity the first allocation uses.
    initial: usize,
    len: usize,
}

impl<T: PartialEq> JavaHashSet<T> {
    /// `new HashSet<>()`: 16 buckets on first insert.
    pub(crate) fn new() -> Self {
        Self::with_table(16)
    }

    /// A set whose first table has `table_size_for(cap)` buckets (`new HashMap<>(cap)`).
    fn with_capacity(cap: usize) -> Self {
        Self::with_table(table_size_for(cap))
    }

    fn with_table(initial: usize) -> Self {
        Self {
            table: Vec::new(),
            initial,
            len: 0,
        }
    }

    fn threshold(&self) -> usize {
        self.table.len() / 4 * 3
    }

    /// `HashMap.resize`: double the table (or allocate it), splitting every bucket in order.
    fn resize(&mut self) {
        let new_len = if self.table.is_empty() {
            self.initial
        } else {
            self.table.len() * 2
        };
        let old = std::mem::take(&mut self.table);
        self.table = (0..new_len).map(|_| Vec::new()).collect();
        for bucket in old {
            for (hash, item) in bucket {
                let i = hash as usize & (new_len - 1);
                self.table[i].push((hash, item));
            }
        }
    }

    /// `HashSet.add`: no change if an equal element is present.
    pub(crate) fn insert(&mut self, hash: i32, item: T) {
        if self.table.is_empty() {
            self.resize();
        }
        let hash = spread(hash);
        let i = hash as usize & (self.table.len() - 1);
        let bucket = &mut self.table[i];
        if bucket.iter().any(|(h, x)| *h == hash && *x == item) {
            return;
        }
        bucket.push((hash, item));
        // treeifyBin: a bucket of 9+ entries doubles a table smaller than 64 instead.
        if bucket.len() > 8 && self.table.len() < 64 {
            self.resize();
        }
        self.len += 1;
        if self.len > self.threshold() {
            self.resize();
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.table.iter().flatten().map(|(_, x)| x)
    }
}

/// A set of names in Java's `HashSet<String>` order (a `new HashSet<>()` the names were
/// added to one by one, in the order given).
pub(crate) fn string_set<'a>(names: impl IntoIterator<Item = &'a str>) -> JavaHashSet<&'a str> {
    let mut set = JavaHashSet::new();
    for name in names {
        set.insert(java_string_hash(name), name);
    }
    set
}

/// `AbstractSet.hashCode`: the wrapping sum of the elements' hashes.
fn set_hash(names: &[&str]) -> i32 {
    names
        .iter()
        .fold(0i32, |h, n| h.wrapping_add(java_string_hash(n)))
}

/// Order-insensitive equality of two name lists without duplicates (`AbstractSet.equals`).
#[derive(Clone, Debug)]
struct Group<'a>(Vec<&'a str>);

impl PartialEq for Group<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|n| other.0.contains(n))
    }
}

/// `InternalTopologyBuilder.copartitionGroups()` followed by the heartbeat's iteration: the
/// copartition groups, as topic names, in the order and with the topic order Java sends them.
///
/// `declared` lists the groups in the order they were declared, each with its topics in the
/// order Java adds them to the group's set (the order of the group's source nodes; that order
/// only matters for names that share a hash bucket).
pub(crate) fn java_copartition_groups<'a>(
    declared: &[Vec<&'a str>],
    sizing: JavaHashSetSizing,
) -> Vec<Vec<&'a str>> {
    // Each declared group becomes a HashSet of its topics (Collectors.toSet()).
    let topic_sets: Vec<Vec<&str>> = declared
        .iter()
        .map(|g| string_set(g.iter().copied()).iter().copied().collect())
        .collect();
    // Merge through a LinkedHashMap<topic, group>: a group that shares a topic with an
    // earlier one is added to the first earlier group found in its own iteration order.
    let mut groups: Vec<JavaHashSet<&str>> = Vec::new();
    let mut keys: Vec<&str> = Vec::new(); // insertion order of the map's keys
    let mut group_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for topics in &topic_sets {
        let found = topics.iter().find_map(|t| group_of.get(t).copied());
        let g = found.unwrap_or_else(|| {
            groups.push(JavaHashSet::new());
            groups.len() - 1
        });
        for t in topics {
            groups[g].insert(java_string_hash(t), *t);
        }
        for t in topics {
            if group_of.insert(*t, g).is_none() {
                keys.push(*t);
            }
        }
    }
    // new HashSet<>(map.values()): one entry per distinct group content, sized for the
    // number of map entries (one per topic).
    let n = keys.len();
    let cap = match sizing {
        JavaHashSetSizing::Jdk11To18 => ((n as f32 / 0.75f32) as usize + 1).max(16),
        JavaHashSetSizing::Jdk19AndLater => (n.max(12) as f64 / 0.75).ceil() as usize,
    };
    let mut unique: JavaHashSet<Group> = JavaHashSet::with_capacity(cap);
    for key in &keys {
        let members: Vec<&str> = groups[group_of[key]].iter().copied().collect();
        unique.insert(set_hash(&members), Group(members));
    }
    unique.iter().map(|g| g.0.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values from java.lang.String.hashCode().
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("orders"), -1008770331);
        assert_eq!(java_string_hash("customers"), 1611562069);
        // A non-BMP character counts as two UTF-16 units.
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn orders_customers_come_out_customers_last() {
        // Java 17: `new HashSet<>(List.of("customers", "orders"))` prints [orders, customers]
        // (issue 13: the group goes on the wire as [1, 0]).
        let g =
            java_copartition_groups(&[vec!["customers", "orders"]], JavaHashSetSizing::default());
        assert_eq!(g, vec![vec!["orders", "customers"]]);
    }

    #[test]
    fn colliding_names_keep_insertion_order_and_resize_splits_buckets() {
        // "Aa" and "BB" have the same String.hashCode.
        assert_eq!(java_string_hash("Aa"), java_string_hash("BB"));
        let g = java_copartition_groups(&[vec!["BB", "Aa"]], JavaHashSetSizing::default());
        assert_eq!(g, vec![vec!["BB", "Aa"]]);
        let g = java_copartition_groups(&[vec!["Aa", "BB"]], JavaHashSetSizing::default());
        assert_eq!(g, vec![vec!["Aa", "BB"]]);
        // 13 names force one resize from 16 to 32 buckets; the order is still by bucket.
        let names: Vec<String> = (0..13).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let g = java_copartition_groups(std::slice::from_ref(&refs), JavaHashSetSizing::default());
        let mut want = refs.clone();
        want.sort_by_key(|n| spread(java_string_hash(n)) & 31);
        assert_eq!(g[0], want);
    }

    #[test]
    fn groups_sharing_a_topic_merge_and_duplicates_vanish() {
        let g = java_copartition_groups(
            &[vec!["a", "b"], vec!["b", "c"], vec!["a", "b"], vec![]],
            JavaHashSetSizing::default(),
        );
        assert_eq!(g.len(), 1);
        let mut names = g[0].clone();
        names.sort_unstable();
        assert_eq!(names, vec!["a", "b", "c"]);
    }
}
