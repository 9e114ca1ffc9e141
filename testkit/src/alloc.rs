//! [`Counting`]: the system allocator, counting the bytes live and the allocations made,
//! for a test binary that measures what its code holds or allocates. Install it in a test
//! binary of its own (`[[test]]` with its own file): the tests of another binary running
//! beside it in one process would change the count.
//!
//! ```ignore
//! #[global_allocator]
//! static COUNTING: mcpl_testkit::alloc::Counting = mcpl_testkit::alloc::Counting;
//! let before = mcpl_testkit::alloc::Counting::live();
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};

/// The system allocator with two counters beside it: the bytes allocated and not yet freed
/// ([`Counting::live`]) and the allocations made, reallocations included
/// ([`Counting::allocations`]), on every thread but those that said
/// [`Counting::not_this_thread`]. Every call is passed to [`System`] unchanged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on a thread whose allocations are not counted (a test's client, measuring a
    /// server beside it).
    static UNCOUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread's allocations count.
fn counted() -> bool {
    !UNCOUNTED.with(Cell::get)
}

impl Counting {
    /// The bytes allocated through it and not yet freed, by every thread of the process.
    pub fn live() -> isize {
        LIVE.load(Ordering::Relaxed)
    }

    /// The allocations (and reallocations) made through it so far, by every thread.
    pub fn allocations() -> u64 {
        ALLOCATIONS.load(Ordering::Relaxed)
    }

    /// From now on, what the calling thread allocates and frees is not counted (a client
    /// measuring the server it drives). The live count stays exact for the blocks counted
    /// threads make and free; one a counted thread made and this one frees stays in it.
    pub fn not_this_thread() {
        UNCOUNTED.with(|c| c.set(true));
    }
}

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && counted() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() && counted() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) };
        if counted() {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && counted() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }
}
