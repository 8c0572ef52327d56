//! A context's memory budget ([`crate::Limits::max_memory_bytes`]): the
//! bytes its programs hold in buffers they allocate or clone, in lists they
//! allocate or grow, in register stacks and in module globals, and what a
//! compile of the compiling tier may take while it runs. Each holder
//! keeps a [`Charge`] that returns its bytes when it is dropped, so the
//! budget counts what is alive, wherever the holder ends up (another
//! context's list, the embedder). Atomic counters: a charge may be released
//! on any thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::trap::{StatusCode, Trap};

/// The bytes a context may hold and holds.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    limit: AtomicU64,
    used: AtomicU64,
    /// The most ever held at once.
    peak: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes, none used.
    pub fn new(limit: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit: AtomicU64::new(limit),
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        })
    }

    /// Changes the limit (what is already held stays held).
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, or fails with RESOURCE_EXHAUSTED
    /// naming `what` and leaves the budget as it was.
    fn take(&self, bytes: u64, what: &str) -> Result<(), Trap> {
        let limit = self.limit.load(Ordering::Relaxed);
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let next = used.checked_add(bytes).filter(|&n| n <= limit);
            let Some(next) = next else {
                return Err(Trap::new(
                    StatusCode::ResourceExhausted,
                    format!(
                        "{what} needs {bytes} more bytes, but the context already holds {used} of \
                         its {limit} (Limits::max_memory_bytes, irvm --max-memory-bytes)"
                    ),
                ));
            };
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }

    fn give_back(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Bytes held against a budget; given back when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Charge {
    /// A charge of nothing yet against `budget`.
    pub fn empty(budget: &Arc<MemoryBudget>) -> Charge {
        Charge {
            budget: budget.clone(),
            bytes: 0,
        }
    }

    /// A charge of `bytes` for `what` (failing when the budget has not that
    /// much left).
    pub fn new(budget: &Arc<MemoryBudget>, bytes: u64, what: &str) -> Result<Charge, Trap> {
        let mut c = Charge::empty(budget);
        c.resize(bytes, what)?;
        Ok(c)
    }

    /// The bytes charged now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Makes the charge `bytes`: takes the difference from the budget (or
    /// fails, unchanged) or gives it back.
    pub fn resize(&mut self, bytes: u64, what: &str) -> Result<(), Trap> {
        if bytes > self.bytes {
            self.budget.take(bytes - self.bytes, what)?;
        } else {
            self.budget.give_back(self.bytes - bytes);
        }
        self.bytes = bytes;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_bounded_and_given_back() {
        let b = MemoryBudget::new(100);
        let a = Charge::new(&b, 60, "a").unwrap();
        let err = Charge::new(&b, 41, "b").unwrap_err();
        assert_eq!(err.code, StatusCode::ResourceExhausted);
        assert!(err.message.contains("max-memory-bytes"), "{err}");
        let mut c = Charge::new(&b, 40, "c").unwrap();
        assert_eq!(b.used(), 100);
        assert!(c.resize(41, "c").is_err());
        assert_eq!(b.used(), 100, "a failed resize changes nothing");
        c.resize(10, "c").unwrap();
        assert_eq!(b.used(), 70);
        drop(a);
        drop(c);
        assert_eq!(b.used(), 0);
        assert!(Charge::new(&b, u64::MAX, "huge").is_err());
    }
}
