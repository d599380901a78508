//! The accept loop: a connection cap, deadlines for silent and slow
//! clients, and room made by closing the oldest connection that has not
//! sent a request (not by refusing the newcomer), so sockets held open
//! without a word cannot lock other clients out.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// A request's headers must arrive within this time (slowloris).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A new connection must deliver its first request's headers within this
/// time, or it is closed.
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection with nothing to do for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections that have not delivered a request yet, oldest first.
#[derive(Default)]
struct Waiting {
    next: u64,
    conns: BTreeMap<u64, oneshot::Sender<()>>,
}

fn waiting(w: &Mutex<Waiting>) -> MutexGuard<'_, Waiting> {
    w.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A slot: a free one, else the one of the oldest connection that has not
/// sent a request (it is closed); `None` when every connection is busy.
async fn make_room(slots: &Arc<Semaphore>, w: &Mutex<Waiting>) -> Option<OwnedSemaphorePermit> {
    if let Ok(slot) = slots.clone().try_acquire_owned() {
        return Some(slot);
    }
    let (_, stop) = waiting(w).conns.pop_first()?;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(1), slots.clone().acquire_owned())
        .await
        .ok()?
        .ok()
}

/// Serve `app` (with each request's peer address as `ConnectInfo`) until
/// `shutdown` resolves; open requests then get a moment to finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let w = Arc::new(Mutex::new(Waiting::default()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = make_room(&slots, &w).await else {
            tracing::warn!("too many connections, all busy; closing a new one");
            continue;
        };
        let (evict, evicted) = oneshot::channel();
        let seq = {
            let mut g = waiting(&w);
            let seq = g.next;
            g.next += 1;
            g.conns.insert(seq, evict);
            seq
        };
        // Requests in progress, and when the last one ended: a connection
        // that is neither busy nor heard from for IDLE_TIMEOUT is closed.
        let busy = Arc::new(AtomicUsize::new(0));
        let activity = Arc::new(AtomicU64::new(now_ms()));
        let svc = {
            let app = app.clone();
            let w = w.clone();
            let (busy, activity) = (busy.clone(), activity.clone());
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                use tower::ServiceExt as _;
                waiting(&w).conns.remove(&seq);
                req.extensions_mut().insert(ConnectInfo(peer));
                busy.fetch_add(1, Ordering::Relaxed);
                let app = app.clone();
                let (busy, activity) = (busy.clone(), activity.clone());
                async move {
                    let r = app.oneshot(req.map(axum::body::Body::new)).await;
                    busy.fetch_sub(1, Ordering::Relaxed);
                    activity.store(now_ms(), Ordering::Relaxed);
                    r
                }
            })
        };
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), svc));
        let w = w.clone();
        tokio::spawn(async move {
            let mute = {
                let w = w.clone();
                async move {
                    tokio::time::sleep(FIRST_REQUEST_TIMEOUT).await;
                    if !waiting(&w).conns.contains_key(&seq) {
                        std::future::pending::<()>().await;
                    }
                }
            };
            tokio::select! {
                _ = conn => {}
                () = mute => {}
                () = async {
                    // Dropped (not sent) once the connection has spoken.
                    if evicted.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                } => {}
                () = async {
                    loop {
                        tokio::time::sleep(IDLE_TIMEOUT / 4).await;
                        let quiet = now_ms().saturating_sub(activity.load(Ordering::Relaxed));
                        if busy.load(Ordering::Relaxed) == 0 && quiet > IDLE_TIMEOUT.as_millis() as u64 {
                            break;
                        }
                    }
                } => {}
            }
            waiting(&w).conns.remove(&seq);
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {}
    }
    Ok(())
}

fn now_ms() -> u64 {
    u64::try_from(mia_protocol::now_ms()).unwrap_or(0)
}
