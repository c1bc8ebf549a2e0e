//! The one work pool of the crate: a few scoped threads taking indices from a shared counter
//! (work stealing, so uneven items keep every thread busy), results returned in index order so
//! output never depends on scheduling. Bundles, catalog files, catalog folders and templates'
//! bundle images all fan out through it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads worth running, asked of the system once per process: the standard
/// library reads the cgroup quota files on every call (a dozen system calls), and the bundle
/// batch asked once per bundle.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Maps `work` over `0..len` on up to `threads` threads and returns the results in index order.
///
/// `priority`, when given, is how much work each index is (bundle or file size): the largest
/// are started first, so that no thread is left alone with a big item at the end (ties keep the
/// index order). A panic in `work` on a helper thread reaches the caller once every thread has
/// stopped, as it would have on the caller's thread; the panic hook of [`crate::guard`] has
/// recorded its message and file by then.
pub fn map_indexed<R: Send>(
    len: usize,
    threads: usize,
    priority: Option<&[u64]>,
    work: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(len);
    if threads <= 1 {
        return (0..len).map(work).collect();
    }
    let mut order: Vec<usize> = (0..len).collect();
    if let Some(priority) = priority {
        order.sort_by_key(|&i| std::cmp::Reverse(priority.get(i).copied().unwrap_or(0)));
    }
    let next = AtomicUsize::new(0);
    let drain = || {
        let mut done = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            done.push((i, work(i)));
        }
        done
    };
    let finished: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(drain)).collect();
        let mut finished = vec![drain()];
        let mut panic = None;
        for helper in helpers {
            match helper.join() {
                Ok(done) => finished.push(done),
                Err(payload) => panic = panic.or(Some(payload)),
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
        finished
    });
    let mut slots: Vec<Option<R>> = (0..len).map(|_| None).collect();
    for (i, result) in finished.into_iter().flatten() {
        if let Some(slot) = slots.get_mut(i) {
            *slot = Some(result);
        }
    }
    // Every index was taken exactly once, so every slot is filled.
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_index_order_whatever_the_threads() {
        for threads in [0, 1, 2, 7] {
            let out = map_indexed(50, threads, None, |i| i * 2);
            assert_eq!(out, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_largest_items_start_first() {
        let priority: Vec<u64> = (0..20).collect();
        let started = std::sync::Mutex::new(Vec::new());
        map_indexed(20, 2, Some(&priority), |i| {
            if let Ok(mut s) = started.lock() {
                s.push(i);
            }
        });
        let started = started.into_inner().unwrap_or_default();
        // The two threads take 19 and 18 first, in either order.
        let mut first: Vec<usize> = started.iter().take(2).copied().collect();
        first.sort_unstable();
        assert_eq!(first, vec![18, 19]);
    }

    #[test]
    fn a_panic_on_a_helper_thread_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            map_indexed(10, 2, None, |i| {
                if i == 7 {
                    panic!("item 7 failed");
                }
                i
            })
        });
        assert!(caught.is_err());
    }
}
