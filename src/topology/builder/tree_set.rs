//! A model of `java.util.TreeSet` (a red-black `TreeMap`) that keeps Java's iteration order
//! even when the elements' sort keys change after they were added.
//!
//! `TopologyDescription` sorts a node's predecessors and successors with a comparator on the
//! size of the sub-tree below each node, and those sizes still grow while the description is
//! being built. A `TreeSet` keeps every element where the comparisons *at insertion time* put
//! it, and where a later element lands depends on which elements it meets on its way down the
//! tree, so reproducing the printed order needs the tree itself: the same search, the same
//! red-black rebalancing (`TreeMap.fixAfterInsertion`) and an in-order walk.

use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Color {
    Red,
    Black,
}

#[derive(Clone, Debug)]
struct Entry<T> {
    item: T,
    left: Option<usize>,
    right: Option<usize>,
    parent: Option<usize>,
    color: Color,
}

/// An insertion-ordered model of `TreeSet<T>` with an external comparator.
#[derive(Clone, Debug)]
pub(crate) struct JavaTreeSet<T> {
    entries: Vec<Entry<T>>,
    root: Option<usize>,
}

impl<T: Copy> JavaTreeSet<T> {
    /// An empty set.
    pub(crate) fn new() -> Self {
        Self {
            entries: Vec::new(),
            root: None,
        }
    }

    /// `TreeSet.add`: `cmp(new, existing)` decides the way down; `Equal` means present.
    pub(crate) fn insert(&mut self, item: T, mut cmp: impl FnMut(&T, &T) -> Ordering) {
        let mut parent = None;
        let mut went_left = false;
        let mut at = self.root;
        while let Some(i) = at {
            parent = Some(i);
            match cmp(&item, &self.entries[i].item) {
                Ordering::Less => {
                    went_left = true;
                    at = self.entries[i].left;
                }
                Ordering::Greater => {
                    went_left = false;
                    at = self.entries[i].right;
                }
                Ordering::Equal => return,
            }
        }
        let new = self.entries.len();
        self.entries.push(Entry {
            item,
            left: None,
            right: None,
            parent,
            color: Color::Black,
        });
        match parent {
            None => self.root = Some(new),
            Some(p) if went_left => self.entries[p].left = Some(new),
            Some(p) => self.entries[p].right = Some(new),
        }
        self.fix_after_insertion(new);
    }

    /// The elements in the tree's (in-)order.
    pub(crate) fn items(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut stack = Vec::new();
        let mut at = self.root;
        while at.is_some() || !stack.is_empty() {
            while let Some(i) = at {
                stack.push(i);
                at = self.entries[i].left;
            }
            if let Some(i) = stack.pop() {
                out.push(self.entries[i].item);
                at = self.entries[i].right;
            }
        }
        out
    }

    fn color(&self, i: Option<usize>) -> Color {
        i.map_or(Color::Black, |i| self.entries[i].color)
    }

    fn set_color(&mut self, i: Option<usize>, color: Color) {
        if let Some(i) = i {
            self.entries[i].color = color;
        }
    }

    fn parent(&self, i: Option<usize>) -> Option<usize> {
        i.and_then(|i| self.entries[i].parent)
    }

    fn left(&self, i: Option<usize>) -> Option<usize> {
        i.and_then(|i| self.entries[i].left)
    }

    fn right(&self, i: Option<usize>) -> Option<usize> {
        i.and_then(|i| self.entries[i].right)
    }

    /// `TreeMap.fixAfterInsertion`, step for step.
    fn fix_after_insertion(&mut self, new: usize) {
        self.entries[new].color = Color::Red;
        let mut x = Some(new);
        while x.is_some() && x != self.root && self.color(self.parent(x)) == Color::Red {
            let p = self.parent(x);
            let g = self.parent(p);
            if p == self.left(g) {
                let y = self.right(g);
                if self.color(y) == Color::Red {
                    self.set_color(p, Color::Black);
                    self.set_color(y, Color::Black);
                    self.set_color(g, Color::Red);
                    x = g;
                } else {
                    if x == self.right(p) {
                        x = p;
                        self.rotate_left(x);
                    }
                    let p = self.parent(x);
                    let g = self.parent(p);
                    self.set_color(p, Color::Black);
                    self.set_color(g, Color::Red);
                    self.rotate_right(g);
                }
            } else {
                let y = self.left(g);
                if self.color(y) == Color::Red {
                    self.set_color(p, Color::Black);
                    self.set_color(y, Color::Black);
                    self.set_color(g, Color::Red);
                    x = g;
                } else {
                    if x == self.left(p) {
                        x = p;
                        self.rotate_right(x);
                    }
                    let p = self.parent(x);
                    let g = self.parent(p);
                    self.set_color(p, Color::Black);
                    self.set_color(g, Color::Red);
                    self.rotate_left(g);
                }
            }
        }
        let root = self.root;
        self.set_color(root, Color::Black);
    }

    fn rotate_left(&mut self, p: Option<usize>) {
        let Some(p) = p else { return };
        let Some(r) = self.entries[p].right else {
            return;
        };
        self.entries[p].right = self.entries[r].left;
        if let Some(rl) = self.entries[r].left {
            self.entries[rl].parent = Some(p);
        }
        self.replace_child(p, r);
        self.entries[r].left = Some(p);
        self.entries[p].parent = Some(r);
    }

    fn rotate_right(&mut self, p: Option<usize>) {
        let Some(p) = p else { return };
        let Some(l) = self.entries[p].left else {
            return;
        };
        self.entries[p].left = self.entries[l].right;
        if let Some(lr) = self.entries[l].right {
            self.entries[lr].parent = Some(p);
        }
        self.replace_child(p, l);
        self.entries[l].right = Some(p);
        self.entries[p].parent = Some(l);
    }

    /// Puts `new` where `old` hangs from its parent (or at the root).
    fn replace_child(&mut self, old: usize, new: usize) {
        let parent = self.entries[old].parent;
        self.entries[new].parent = parent;
        match parent {
            None => self.root = Some(new),
            Some(q) if self.entries[q].left == Some(old) => self.entries[q].left = Some(new),
            Some(q) => self.entries[q].right = Some(new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consistent_keys_come_out_sorted() {
        let mut set = JavaTreeSet::new();
        for x in [5, 3, 9, 1, 4, 7, 8, 2, 6, 0, 5] {
            set.insert(x, |a: &i32, b: &i32| a.cmp(b));
        }
        assert_eq!(set.items(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn a_key_changed_after_insertion_keeps_its_place_and_steers_later_inserts() {
        // Keys live outside the set (as node sizes do); 'a' grows after it was added.
        let mut key = [1, 2, 3, 0];
        let mut set = JavaTreeSet::new();
        set.insert(0usize, |a, b| key[*a].cmp(&key[*b])); // a=1
        set.insert(1usize, |a, b| key[*a].cmp(&key[*b])); // b=2: right of a
        key[0] = 10; // a now sorts last, but stays first in the tree
        set.insert(2usize, |a, b| key[*a].cmp(&key[*b])); // c=3: 3<10 goes left of a
                                                          // Balanced after c: a rotation may reshape the tree but keeps the in-order sequence.
        assert_eq!(set.items(), vec![2, 0, 1]);
        key[3] = 5;
        set.insert(3usize, |a, b| key[*a].cmp(&key[*b]));
        assert_eq!(set.items().len(), 4);
    }
}
