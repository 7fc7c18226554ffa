//! `split()` / `branch()` (Java's `BranchedKStream`, `Branched`): a `KSTREAM-BRANCH-…`
//! processor and one child processor per branch, named `<splitter><index>` or
//! `<splitter><branch name>`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::exec::{erase2, NodeExec};
use super::stream::{KStream, Predicate};

/// A branch predicate, shared by the kept operation and the runner's exec.
type SharedPredicate<K, V> = Arc<dyn Fn(&K, &V) -> bool + Send + Sync>;

/// A branch's chain function: the branch in, the stream to return for it (if any) out.
type ChainFunction<K, V> = Box<dyn FnOnce(KStream<K, V>) -> Option<KStream<K, V>>>;

/// What a branch does with its stream.
enum Chain<K, V> {
    Function(ChainFunction<K, V>),
    Consumer(Box<dyn FnOnce(KStream<K, V>)>),
}

/// `Branched`: a branch's name (suffix of the splitter's name) and what to do with it.
pub struct Branched<K, V> {
    name: Option<String>,
    chain: Option<Chain<K, V>>,
}

impl<K, V> Default for Branched<K, V> {
    fn default() -> Self {
        Self {
            name: None,
            chain: None,
        }
    }
}

impl<K, V> Branched<K, V> {
    /// `Branched.as(name)`: the branch is `<splitter name><name>`.
    pub fn named(name: &str) -> Self {
        Self {
            name: Some(name.to_string()),
            chain: None,
        }
    }

    /// `Branched.withFunction(chain)`: `chain` is applied to the branch at once; what it
    /// returns (if anything) is the branch's entry in the result.
    pub fn with_function(
        chain: impl FnOnce(KStream<K, V>) -> Option<KStream<K, V>> + 'static,
    ) -> Self {
        Self {
            name: None,
            chain: Some(Chain::Function(Box::new(chain))),
        }
    }

    /// `Branched.withConsumer(chain)`: `chain` is applied to the branch at once; the branch
    /// has no entry in the result.
    pub fn with_consumer(chain: impl FnOnce(KStream<K, V>) + 'static) -> Self {
        Self {
            name: None,
            chain: Some(Chain::Consumer(Box::new(chain))),
        }
    }

    /// The same, with a name (`Branched.withFunction(chain, name)` and friends).
    pub fn and_named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
}

/// Java's `BranchedKStream`: add branches in order; a record goes to the first branch whose
/// predicate is true (each branch's predicate is kept with its node, the default branch's is
/// always true).
pub struct BranchedKStream<K, V> {
    source: KStream<K, V>,
    splitter: String,
    branches: usize,
    outputs: BTreeMap<String, KStream<K, V>>,
}

impl<K: 'static, V: 'static> KStream<K, V> {
    /// `split()`: a `KSTREAM-BRANCH-…` processor.
    pub fn split(&self) -> BranchedKStream<K, V> {
        self.split_named(None)
    }

    /// `split(Named.as(name))`: the splitter is `name`, the branches `name` + suffix.
    pub fn split_named(&self, name: Option<&str>) -> BranchedKStream<K, V> {
        let f: Predicate<K, V> = Box::new(|_, _| true);
        let splitter: KStream<K, V> = self.processor("KSTREAM-BRANCH-", name, false, f);
        self.inner
            .borrow_mut()
            .exec(&splitter.node, NodeExec::Branch(Vec::new()));
        BranchedKStream {
            source: self.clone(),
            splitter: splitter.node,
            branches: 0,
            outputs: BTreeMap::new(),
        }
    }
}

impl<K: 'static, V: 'static> BranchedKStream<K, V> {
    /// `branch(predicate)`.
    pub fn branch(self, predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static) -> Self {
        self.branch_with(predicate, Branched::default())
    }

    /// `branch(predicate, branched)`.
    pub fn branch_with(
        mut self,
        predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
        branched: Branched<K, V>,
    ) -> Self {
        self.branches += 1;
        self.add(self.branches, Arc::new(predicate), branched);
        self
    }

    /// `defaultBranch()`: the records no predicate took; ends the split.
    pub fn default_branch(self) -> BTreeMap<String, KStream<K, V>> {
        self.default_branch_with(Branched::default())
    }

    /// `defaultBranch(branched)`.
    pub fn default_branch_with(
        mut self,
        branched: Branched<K, V>,
    ) -> BTreeMap<String, KStream<K, V>> {
        self.add(0, Arc::new(|_: &K, _: &V| true), branched);
        self.outputs
    }

    /// `noDefaultBranch()`: ends the split; records no predicate took are dropped.
    pub fn no_default_branch(self) -> BTreeMap<String, KStream<K, V>> {
        self.outputs
    }

    /// `BranchedKStreamImpl.createBranch`: the child is named `<splitter><name or index>`;
    /// Java also uses up a number for it (`newProcessorName(childName)`), unused.
    fn add(&mut self, index: usize, predicate: SharedPredicate<K, V>, branched: Branched<K, V>) {
        let child = match &branched.name {
            Some(n) => format!("{}{n}", self.splitter),
            None => format!("{}{index}", self.splitter),
        };
        let mut inner = self.source.inner.borrow_mut();
        inner.next_name(&child);
        let result = inner.topology.add_processor(&child, &[&self.splitter]);
        inner.record(result);
        let kept = predicate.clone();
        let f: Predicate<K, V> = Box::new(move |k, v| kept(k, v));
        inner.keep(&child, f);
        inner.exec(&child, NodeExec::PassThrough);
        if let Some(NodeExec::Branch(branches)) = inner.execs.get_mut(&self.splitter) {
            branches.push((child.clone(), erase2(move |k: &K, v: &V| predicate(k, v))));
        }
        drop(inner);
        let stream = KStream::new(
            self.source.inner.clone(),
            child.clone(),
            self.source.repartition_required,
        );
        match branched.chain {
            Some(Chain::Function(f)) => {
                if let Some(out) = f(stream) {
                    self.outputs.insert(child, out);
                }
            }
            Some(Chain::Consumer(f)) => f(stream),
            None => {
                self.outputs.insert(child, stream);
            }
        }
    }
}
