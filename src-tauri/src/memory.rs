//! Giving the memory the app freed back to the system once it is quiet.
//!
//! glibc's allocator keeps what a thread freed in that thread's arena for
//! reuse, and returns pages to the system only from the top of an arena. A
//! window's work is bursty (a 2,000-message session's answer built and handed
//! to the webview, a streamed turn's events serialised), so after a burst the
//! freed pages stay resident below live allocations: measured after the
//! desktop benchmark's session visits and streamed answer, `malloc_trim(0)`
//! took the app process from 111 to 105 MB (docs/benchmarks.md).
//!
//! [`Trimmer`] does that once the app has been quiet for [`QUIET`] after the
//! work that called [`Trimmer::poke`]: a large API answer, a batch of streamed
//! events. A burst of pokes (a stream sends one per frame) leads to one trim
//! after its end, never one per poke. The trim runs on a blocking thread;
//! glibc serialises it with every other allocator call (a few milliseconds).
//!
//! Elsewhere (macOS, Windows, or a Linux without glibc) [`release_free_memory`]
//! does nothing: those allocators return memory by themselves or have no
//! such call.
#![allow(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How long the app must have been quiet before it trims.
pub const QUIET: Duration = Duration::from_secs(1);

/// An API answer at least this large pokes the trimmer (small ones leave
/// little behind; the session list polled every few seconds should not trim).
pub const LARGE_ANSWER: usize = 64 * 1024;

/// Asks the allocator to return the memory it holds free to the system.
/// Returns whether it gave anything back.
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` takes no pointers and has no preconditions;
        // glibc locks each arena while it walks it.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Runs a trim once the app has been quiet for [`QUIET`] after a poke.
#[derive(Clone)]
pub struct Trimmer {
    inner: Arc<Inner>,
}

struct Inner {
    /// When the last poke came, in milliseconds after `origin`.
    last_ms: AtomicU64,
    /// How many pokes came so far.
    pokes: AtomicU64,
    origin: Instant,
    wake: Notify,
}

impl Trimmer {
    /// Starts the task that trims with [`release_free_memory`] (on the async runtime the
    /// caller runs in).
    pub fn start() -> Self {
        Self::start_with(QUIET, || {
            let started = std::time::Instant::now();
            let released = release_free_memory();
            tracing::debug!(released, took = ?started.elapsed(), "gave freed memory back");
        })
    }

    /// Starts the task with another quiet period and trim (tests).
    pub fn start_with(quiet: Duration, trim: impl Fn() + Send + Sync + 'static) -> Self {
        let inner = Arc::new(Inner {
            last_ms: AtomicU64::new(0),
            pokes: AtomicU64::new(0),
            origin: Instant::now(),
            wake: Notify::new(),
        });
        let task = Arc::clone(&inner);
        let trim = Arc::new(trim);
        tokio::spawn(async move {
            // The pokes counted at the last trim: a wake-up without a poke since (`Notify` keeps
            // one made while the task was not waiting) trims nothing.
            let mut trimmed_at = 0;
            loop {
                task.wake.notified().await;
                // Then quiet: every poke meanwhile moves the end further.
                loop {
                    let pokes = task.pokes.load(Ordering::Acquire);
                    if pokes == trimmed_at {
                        break;
                    }
                    let last =
                        task.origin + Duration::from_millis(task.last_ms.load(Ordering::Acquire));
                    let due = last + quiet;
                    if Instant::now() < due {
                        tokio::time::sleep_until(due).await;
                        continue;
                    }
                    trimmed_at = pokes;
                    let trim = Arc::clone(&trim);
                    if let Err(e) = tokio::task::spawn_blocking(move || trim()).await {
                        tracing::warn!(error = %e, "the memory trim failed");
                    }
                    break;
                }
            }
        });
        Self { inner }
    }

    /// Work that leaves freed memory behind just happened.
    pub fn poke(&self) {
        let ms = u64::try_from(self.inner.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.inner.last_ms.store(ms, Ordering::Release);
        self.inner.pokes.fetch_add(1, Ordering::AcqRel);
        self.inner.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting() -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + 'static) {
        let n = Arc::new(AtomicUsize::new(0));
        let m = Arc::clone(&n);
        (n, move || {
            m.fetch_add(1, Ordering::SeqCst);
        })
    }

    /// Lets the task and the blocking trim run (time is paused: sleeps end at once when
    /// nothing else is left to do).
    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_pokes_trims_once_after_its_end() {
        let (n, trim) = counting();
        let t = Trimmer::start_with(Duration::from_secs(1), trim);
        // A stream: a poke every 16 ms for 2 s.
        for _ in 0..125 {
            t.poke();
            tokio::time::sleep(Duration::from_millis(16)).await;
        }
        assert_eq!(
            n.load(Ordering::SeqCst),
            0,
            "no trim while the burst goes on"
        );
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert_eq!(
            n.load(Ordering::SeqCst),
            0,
            "none before a whole quiet second"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        settle().await;
        assert_eq!(n.load(Ordering::SeqCst), 1, "one trim once it was quiet");
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(n.load(Ordering::SeqCst), 1, "and none without a new poke");
    }

    #[tokio::test(start_paused = true)]
    async fn each_quiet_period_after_work_trims_again() {
        let (n, trim) = counting();
        let t = Trimmer::start_with(Duration::from_secs(1), trim);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            n.load(Ordering::SeqCst),
            0,
            "nothing to give back before any work"
        );
        t.poke();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        settle().await;
        assert_eq!(n.load(Ordering::SeqCst), 1);
        t.poke();
        t.poke();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        settle().await;
        assert_eq!(n.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_allocator_call_can_be_made() {
        // Whatever it returns (nothing may be free), it must not fail; and freed memory is
        // there to give back after a large allocation is dropped.
        let big: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 64 * 1024]).collect();
        drop(big);
        let _ = release_free_memory();
    }
}
