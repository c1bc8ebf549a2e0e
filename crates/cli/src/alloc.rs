//! The process allocator: mimalloc for small blocks, the system allocator for large ones.
//!
//! Validation and render build trees of many small nodes on several threads, where mimalloc's
//! per-thread heaps cost less than glibc's malloc (12,900 bundles in one call: about 10 % less
//! CPU). Large blocks are a different case: a render output of tens of MB grows by `realloc`,
//! which glibc serves with `mremap` (no copy) and hands back to the system when freed, while
//! mimalloc copies and keeps the memory. Splitting at [`LARGE`] keeps both behaviours.
//!
//! The split is sound because Rust always frees and reallocates a block with the layout (so
//! the size) it was allocated with: the size alone says which allocator owns a block.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes come from the system allocator.
pub const LARGE: usize = 1 << 20;

/// The allocator the binary and the in-process benches install as `#[global_allocator]`.
pub struct SplitAllocator;

fn small(size: usize) -> bool {
    size < LARGE
}

// SAFETY: every method forwards to an allocator chosen by the block's size, and a block is
// always freed or reallocated with the size it was allocated with (GlobalAlloc's contract), so
// it always returns to the allocator that made it. A block that changes side in `realloc` is
// copied by hand into a block of the other allocator.
unsafe impl GlobalAlloc for SplitAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            // SAFETY: forwarded with the caller's layout.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        } else {
            // SAFETY: forwarded with the caller's layout.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            // SAFETY: forwarded with the caller's layout.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        } else {
            // SAFETY: forwarded with the caller's layout.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if small(layout.size()) {
            // SAFETY: a block of this size was made by mimalloc (see the impl's comment).
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        } else {
            // SAFETY: a block of this size was made by the system allocator.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(layout.size()), small(new_size)) {
            // SAFETY: the block stays with the allocator that made it.
            (true, true) => unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) },
            // SAFETY: as above.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            _ => {
                // The caller guarantees a valid layout for the new size with the old alignment.
                let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                    return std::ptr::null_mut();
                };
                // SAFETY: a fresh block from whichever allocator owns the new size.
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks are valid for the smaller of the two sizes and are
                    // distinct allocations; the old one is then freed with its own layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_move_between_the_two_allocators_with_their_bytes() {
        let a = SplitAllocator;
        let Ok(layout) = Layout::from_size_align(1000, 8) else {
            panic!("layout")
        };
        // SAFETY: every block is used within its size and freed once with its layout.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in 0..1000 {
                *p.add(i) = (i % 251) as u8;
            }
            // Small to large, large to larger, large to small.
            let q = a.realloc(p, layout, LARGE + 10);
            assert!(!q.is_null());
            let big = Layout::from_size_align_unchecked(LARGE + 10, 8);
            let r = a.realloc(q, big, 3 * LARGE);
            assert!(!r.is_null());
            let bigger = Layout::from_size_align_unchecked(3 * LARGE, 8);
            let s = a.realloc(r, bigger, 500);
            assert!(!s.is_null());
            for i in 0..500 {
                assert_eq!(*s.add(i), (i % 251) as u8);
            }
            a.dealloc(s, Layout::from_size_align_unchecked(500, 8));
            let z = a.alloc_zeroed(big);
            assert!(!z.is_null());
            assert!((0..LARGE + 10).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, big);
        }
    }
}
