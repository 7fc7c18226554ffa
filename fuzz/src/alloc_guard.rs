//! A global allocator that aborts the process on any single allocation above
//! [`MAX_SINGLE_ALLOCATION`] (64 MiB).
//!
//! Why: the decoders promise never to trust a length from the wire (every count is bounded by
//! the bytes that remain). Fuzz inputs are at most a few KiB, so a legitimate decode never needs
//! anything close to 64 MiB; an allocation that big can only come from an unchecked length.
//! Without sanitizers (`-s none`) libFuzzer's own `-malloc_limit_mb` cannot see allocations, so
//! this guard turns such a bug into an abort, which libFuzzer records as a crash with a
//! reproducer. The check is on one allocation's size, not on the total, so it costs nothing.
//!
//! This is the only `unsafe` code in the project: implementing `GlobalAlloc` requires it. It
//! lives in the fuzz crate (tooling, outside the library's `forbid(unsafe_code)`), delegates
//! everything to the system allocator and adds only a size comparison.

use std::alloc::{GlobalAlloc, Layout, System};

/// Largest single allocation allowed before the process aborts.
pub const MAX_SINGLE_ALLOCATION: usize = 64 * 1024 * 1024;

/// The guard allocator (installed below as the global allocator).
pub struct AbortOnHugeAlloc;

#[cold]
fn too_big() -> ! {
    // No formatting: that could allocate inside the allocator. Stderr is unbuffered.
    use std::io::Write;
    let _ = std::io::stderr()
        .write_all(b"alloc_guard: single allocation above 64 MiB; unchecked length?\n");
    std::process::abort()
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the only addition is a size comparison that may abort.
unsafe impl GlobalAlloc for AbortOnHugeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_SINGLE_ALLOCATION {
            too_big();
        }
        // SAFETY: same layout the caller gave us; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_SINGLE_ALLOCATION {
            too_big();
        }
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_SINGLE_ALLOCATION {
            too_big();
        }
        // SAFETY: `ptr`/`layout` came from this allocator, i.e. from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr`/`layout` came from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: AbortOnHugeAlloc = AbortOnHugeAlloc;
