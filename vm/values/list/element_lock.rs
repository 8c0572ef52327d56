//! The lock around a list's elements: a flag taken with one atomic
//! compare-and-swap and given back with a plain release store.
//!
//! `std::sync::Mutex` costs two atomic read-modify-writes per access (its
//! unlock swaps to learn whether to wake a sleeper) plus two checks of the
//! panic count for poisoning. List element access is the hot path of
//! `vm.list.get/set` in both tiers and the lock is almost never contended
//! (one program thread owns most lists), so a waiter here spins briefly and
//! then yields its time slice instead of sleeping; the owner never has
//! anyone to wake. Critical sections are short (one element, or one
//! `Vec` operation), and no code holds two element locks at once.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind an [`ElementLock`]: `T` shared between threads, one
/// holder at a time.
pub(crate) struct ElementLock<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a guard, and at most one guard
// exists at a time (`held` is set by a successful compare-and-swap and
// cleared only by the guard's drop), so sharing the lock shares `T` as a
// mutex does: `T: Send` suffices.
unsafe impl<T: Send> Sync for ElementLock<T> {}

/// Exclusive access to the value until dropped.
pub(crate) struct ElementGuard<'a, T> {
    lock: &'a ElementLock<T>,
}

impl<T> ElementLock<T> {
    pub(crate) fn new(value: T) -> Self {
        ElementLock {
            held: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock, waiting (spinning, then yielding) while another
    /// thread holds it.
    #[inline]
    pub(crate) fn lock(&self) -> ElementGuard<'_, T> {
        if let Some(g) = self.try_lock() {
            return g;
        }
        self.lock_contended()
    }

    #[cold]
    fn lock_contended(&self) -> ElementGuard<'_, T> {
        let mut spins = 0u32;
        loop {
            if !self.held.load(Ordering::Relaxed) {
                if let Some(g) = self.try_lock() {
                    return g;
                }
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Takes the lock if no one holds it.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<ElementGuard<'_, T>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| ElementGuard { lock: self })
    }

    /// The value, through exclusive access to the lock itself.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T> Deref for ElementGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see the `Sync` impl), so no
        // other reference to the value exists while it lives.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for ElementGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this borrow unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for ElementGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::ElementLock;
    use std::sync::Arc;

    #[test]
    fn try_lock_fails_while_held() {
        let l = ElementLock::new(5);
        let g = l.lock();
        assert!(l.try_lock().is_none());
        drop(g);
        assert_eq!(*l.try_lock().expect("free again"), 5);
    }

    #[test]
    fn threads_exclude_each_other() {
        let l = Arc::new(ElementLock::new(Vec::<u64>::new()));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let l = Arc::clone(&l);
                std::thread::spawn(move || {
                    for k in 0..20_000u64 {
                        let mut v = l.lock();
                        // A torn update would show as a wrong length.
                        let n = v.len();
                        v.push(t * 100_000 + k);
                        assert_eq!(v.len(), n + 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("no panic");
        }
        assert_eq!(l.lock().len(), 80_000);
    }

    #[test]
    fn a_panic_while_held_releases() {
        let l = Arc::new(ElementLock::new(0));
        let l2 = Arc::clone(&l);
        let r = std::thread::spawn(move || {
            let _g = l2.lock();
            panic!("inside");
        })
        .join();
        assert!(r.is_err());
        assert!(l.try_lock().is_some());
    }
}
