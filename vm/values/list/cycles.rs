//! Reclaiming reference cycles between lists.
//!
//! Refs are reference-counted, as in IREE, so a list that (directly or
//! through other lists) contains itself never reaches a count of zero:
//! `vm.list.set.ref %l, %i, %l` leaks in the reference runtime. A context
//! remembers the lists its bytecode allocates that can hold lists (variant
//! lists and lists of lists: no other list can be part of a cycle) in a
//! [`ListTracker`], and finds the tracked lists that nothing outside the
//! tracked lists holds any more and empties them, which breaks their cycles
//! and lets them drop. It does so whenever the number of tracked lists has
//! doubled since the last time (so a program that keeps making cycles runs
//! in bounded memory, at amortised O(1) per allocation), when the context
//! is dropped, and on [`crate::Context::collect_cycles`].
//!
//! The test is trial deletion: a list whose strong count exceeds the number
//! of references held by tracked lists is held from outside (a register, a
//! global, a host object, the embedder), so it and everything it reaches is
//! alive. Everything else is garbage. Holders the collector cannot see
//! through (host objects) count as outside holders, so the collector only
//! ever errs on the side of keeping a list. It is sound at any point
//! between instructions: every holder outside the tracked lists is counted.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, Weak};

/// Held shared by every change to a list that may hold lists, and
/// exclusively by a collection: lists are shared between threads (and
/// contexts), and trial deletion reads edges and counts at different
/// moments, so an edge moved from one list to another in between (another
/// thread's `get_ref(take)` then `set_ref`) could make a reachable list
/// look like garbage. Changes wait while a collection runs; collections
/// wait for changes in progress.
static EDGES: RwLock<()> = RwLock::new(());

/// The shared hold a list change takes (`List::items_mut`).
pub(crate) fn edge_change() -> RwLockReadGuard<'static, ()> {
    EDGES.read().unwrap_or_else(|e| e.into_inner())
}

use crate::values::List;

/// The lists allocated by one context's bytecode, held weakly.
#[derive(Default)]
pub(crate) struct ListTracker {
    lists: Vec<Weak<List>>,
    /// Length at which dead entries are next pruned (amortises the pruning
    /// to O(1) per allocation).
    prune_at: usize,
}

impl ListTracker {
    /// Remembers a newly allocated list (one that may hold lists). When the
    /// tracked lists have doubled since the last collection, collects first.
    pub(crate) fn track(&mut self, list: &Arc<List>) {
        if self.lists.len() >= self.prune_at {
            self.collect();
        }
        self.lists.push(Arc::downgrade(list));
    }

    /// Number of tracked lists still alive.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.lists.iter().filter(|w| w.strong_count() > 0).count()
    }

    /// Empties every tracked list that is only reachable from tracked lists
    /// (garbage held alive by a cycle). Returns how many lists were emptied.
    pub(crate) fn collect(&mut self) -> usize {
        // No list edge moves until the garbage is emptied (see `EDGES`).
        // `live` holds every tracked list, so none is freed meanwhile.
        let hold = EDGES.write().unwrap_or_else(|e| e.into_inner());
        let live: Vec<Arc<List>> = self.lists.iter().filter_map(Weak::upgrade).collect();
        if live.is_empty() {
            self.prune_at = 64;
            return 0;
        }
        let index: HashMap<*const List, usize> = live
            .iter()
            .enumerate()
            .map(|(n, l)| (Arc::as_ptr(l), n))
            .collect();
        // Edges between tracked lists, and how many references each list
        // receives from tracked lists.
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); live.len()];
        let mut internal = vec![0usize; live.len()];
        let mut readable = vec![true; live.len()];
        for (n, list) in live.iter().enumerate() {
            let ok = list.for_each_list(|child| {
                if let Some(&m) = index.get(&Arc::as_ptr(child)) {
                    edges[n].push(m);
                    internal[m] += 1;
                }
            });
            readable[n] = ok;
        }
        // Roots: held from outside the tracked lists. `live` itself holds
        // one count of each. A list whose contents could not be read (it is
        // borrowed right now) is treated as a root too.
        let mut alive = vec![false; live.len()];
        let mut work = Vec::new();
        for (n, list) in live.iter().enumerate() {
            if Arc::strong_count(list) - 1 > internal[n] || !readable[n] {
                alive[n] = true;
                work.push(n);
            }
        }
        while let Some(n) = work.pop() {
            for &m in &edges[n] {
                if !alive[m] {
                    alive[m] = true;
                    work.push(m);
                }
            }
        }
        let mut emptied = 0;
        let mut garbage = Vec::new();
        for (n, list) in live.iter().enumerate() {
            if !alive[n] {
                // Dropped after the hold ends: dropping an element may drop
                // other lists.
                garbage.push(list.take_items());
                emptied += 1;
            }
        }
        drop(hold);
        drop(garbage);
        drop(live);
        self.lists.retain(|w| w.strong_count() > 0);
        self.prune_at = (self.lists.len() * 2).max(64);
        emptied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::{Ref, TypeDef};

    fn list() -> Arc<List> {
        let l = Arc::new(List::new(TypeDef::Any, 1).unwrap());
        l.resize(1).unwrap();
        l
    }

    #[test]
    fn self_cycle_is_collected_once_unreachable() {
        let mut t = ListTracker::default();
        let a = list();
        t.track(&a);
        a.set_ref(0, Ref::List(a.clone())).unwrap();
        assert_eq!(t.collect(), 0, "held by a local: alive");
        let weak = Arc::downgrade(&a);
        drop(a);
        assert_eq!(weak.strong_count(), 1, "the cycle keeps it alive");
        assert_eq!(t.collect(), 1);
        assert_eq!(weak.strong_count(), 0);
        assert_eq!(t.live(), 0);
    }

    #[test]
    fn tracking_collects_as_it_goes() {
        let mut t = ListTracker::default();
        let weaks: Vec<Weak<List>> = (0..1000)
            .map(|_| {
                let a = list();
                t.track(&a);
                a.set_ref(0, Ref::List(a.clone())).unwrap();
                Arc::downgrade(&a)
            })
            .collect();
        // Every cycle but the most recent ones was reclaimed on the way.
        let alive = weaks.iter().filter(|w| w.strong_count() > 0).count();
        assert!(alive <= 64, "{alive} self-cycles still alive");
        t.collect();
        assert!(weaks.iter().all(|w| w.strong_count() == 0));
    }

    #[test]
    fn lists_reachable_from_a_held_list_survive() {
        let mut t = ListTracker::default();
        let (a, b, c) = (list(), list(), list());
        for l in [&a, &b, &c] {
            t.track(l);
        }
        // a -> b -> c -> b (cycle), a held from outside.
        a.set_ref(0, Ref::List(b.clone())).unwrap();
        b.set_ref(0, Ref::List(c.clone())).unwrap();
        c.set_ref(0, Ref::List(b.clone())).unwrap();
        let wb = Arc::downgrade(&b);
        drop((b, c));
        assert_eq!(t.collect(), 0);
        assert_eq!(wb.strong_count(), 2);
        drop(a);
        assert_eq!(t.collect(), 2, "b and c form unreachable garbage");
        assert_eq!(wb.strong_count(), 0);
    }
}
