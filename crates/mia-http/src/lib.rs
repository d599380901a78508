//! The accept loop both HTTP servers of mia-code use (`mia-code serve` and
//! `mia-share-server`): a connection cap, deadlines for a new connection's
//! first request, for every request's headers and for idle connections,
//! and room made when the slots are full by closing the oldest connection
//! that has not sent a request (not by refusing the newcomer), so sockets
//! held open without a word cannot lock other clients out. Each request
//! carries its peer address as axum's `ConnectInfo`.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;

/// The loop's numbers.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// A request's headers must arrive within this time (slowloris).
    pub header_read_timeout: Duration,
    /// A new connection must deliver its first request within this time.
    pub first_request: Duration,
    /// A connection with no request in progress and no bytes either way
    /// for this long is closed.
    pub idle: Duration,
    /// After the shutdown signal, open requests get this long.
    pub shutdown_grace: Duration,
}

/// Connections that have not delivered a request yet, oldest first: when
/// every slot is taken, the oldest of them is closed to make room, so
/// sockets held open without a word cannot lock a client with the token
/// out (every client of `serve` is on loopback: a per-address cap would).
#[derive(Default)]
struct Waiting {
    next: u64,
    conns: std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>,
}

impl Waiting {
    fn lock(w: &std::sync::Mutex<Waiting>) -> std::sync::MutexGuard<'_, Waiting> {
        w.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A slot for a new connection: a free one, else the one of the oldest
/// connection that has not sent a request (it is closed); `None` when
/// every connection is serving requests.
async fn make_room(
    slots: &std::sync::Arc<tokio::sync::Semaphore>,
    waiting: &std::sync::Mutex<Waiting>,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    if let Ok(slot) = slots.clone().try_acquire_owned() {
        return Some(slot);
    }
    let (_, stop) = Waiting::lock(waiting).conns.pop_first()?;
    let _ = stop.send(());
    tokio::time::timeout(
        std::time::Duration::from_secs(1),
        slots.clone().acquire_owned(),
    )
    .await
    .ok()?
    .ok()
}

/// The accept loop: a connection cap, a header-read timeout, an idle
/// timeout, and a shutdown that does not wait for open event streams.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let waiting = std::sync::Arc::new(std::sync::Mutex::new(Waiting::default()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin or die.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = make_room(&slots, &waiting).await else {
            tracing::warn!("too many connections, all serving requests; closing a new one");
            drop(stream);
            continue;
        };
        let (evict, evicted) = tokio::sync::oneshot::channel();
        let seq = {
            let mut w = Waiting::lock(&waiting);
            let seq = w.next;
            w.next += 1;
            w.conns.insert(seq, evict);
            seq
        };
        let _ = stream.set_nodelay(true);
        let activity = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(now_ms()));
        let io = TokioIo::new(Watched {
            inner: stream,
            activity: activity.clone(),
        });
        // Requests in progress on this connection: a long one (a start
        // script, a check command) is not idle while its handler works.
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let svc = {
            let app = app.clone();
            let busy = busy.clone();
            let activity = activity.clone();
            let waiting = waiting.clone();
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                use tower::ServiceExt as _;
                req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
                let app = app.clone();
                let busy = busy.clone();
                let activity = activity.clone();
                // It spoke: no longer the first to be closed for room.
                Waiting::lock(&waiting).conns.remove(&seq);
                busy.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                async move {
                    let r = app.oneshot(req.map(axum::body::Body::new)).await;
                    busy.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                    activity.store(now_ms(), std::sync::atomic::Ordering::Relaxed);
                    r
                }
            })
        };
        let conn = graceful.watch(http.serve_connection(io, svc));
        let waiting = waiting.clone();
        tokio::spawn(async move {
            // No request within FIRST_REQUEST_TIMEOUT: closed.
            let mute = {
                let waiting = waiting.clone();
                async move {
                    tokio::time::sleep(limits.first_request).await;
                    if !Waiting::lock(&waiting).conns.contains_key(&seq) {
                        std::future::pending::<()>().await;
                    }
                }
            };
            let idle = async {
                loop {
                    tokio::time::sleep(limits.idle / 4).await;
                    let last = activity.load(std::sync::atomic::Ordering::Relaxed);
                    let working = busy.load(std::sync::atomic::Ordering::Relaxed) > 0;
                    if !working && now_ms().saturating_sub(last) > limits.idle.as_millis() as u64 {
                        break;
                    }
                }
            };
            tokio::select! {
                _ = conn => {}
                () = idle => {}
                () = mute => {}
                // Sent when the slot is needed; dropped (not sent) once the
                // connection has spoken, which must not close it.
                () = async {
                    if evicted.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                } => {}
            }
            Waiting::lock(&waiting).conns.remove(&seq);
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {}
    }
    Ok(())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A socket that records when bytes last moved (for the idle timeout).
struct Watched {
    inner: tokio::net::TcpStream,
    activity: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Watched {
    fn touch(&self) {
        self.activity
            .store(now_ms(), std::sync::atomic::Ordering::Relaxed);
    }
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.touch();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.inner).poll_write(cx, data);
        if matches!(r, std::task::Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        r
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
