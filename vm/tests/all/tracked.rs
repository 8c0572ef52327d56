//! A host object that counts its makings and drops on the test's thread,
//! for the topics that check reference counts (`refcounts`,
//! `borrowed_host_args`): every object made must be dropped exactly once.

use std::cell::Cell;

thread_local! {
    static CREATED: Cell<usize> = const { Cell::new(0) };
    static DROPPED: Cell<usize> = const { Cell::new(0) };
}

/// The counted object.
pub struct Tracked;

impl Tracked {
    /// A new object, counted as made.
    pub fn new() -> Tracked {
        CREATED.with(|c| c.set(c.get() + 1));
        Tracked
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
        assert!(
            DROPPED.with(Cell::get) <= CREATED.with(Cell::get),
            "an object was dropped twice"
        );
    }
}

/// Objects alive now (on this thread).
pub fn live() -> usize {
    CREATED.with(Cell::get) - DROPPED.with(Cell::get)
}
