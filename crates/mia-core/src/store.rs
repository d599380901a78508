//! One thread owns the SQLite connection; everyone else sends it closures.
//!
//! A request that panics does not take the thread down: its caller gets
//! [`CoreError::StoreFailed`] with the panic's message, the connection is
//! opened again (a panic may have left a transaction half done; SQLite
//! rolls it back), and the next request runs as usual.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc;

use mia_store::SessionDb;
use tokio::sync::oneshot;

use crate::CoreError;

type Job = Box<dyn FnOnce(&mut SessionDb) + Send>;

/// A cheap, cloneable handle to the store thread.
#[derive(Clone)]
pub struct StoreHandle {
    tx: mpsc::Sender<Job>,
}

impl std::fmt::Debug for StoreHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreHandle")
    }
}

/// What a panic said.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The store thread: jobs in order; after a panicking job, the
/// connection is opened again.
fn serve(mut db: SessionDb, rx: mpsc::Receiver<Job>) {
    for job in rx {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| job(&mut db))) {
            let message = panic_message(payload.as_ref());
            tracing::error!(error = %message, "a store request panicked; opening the database again");
            match SessionDb::open(db.path().to_path_buf()) {
                Ok(fresh) => db = fresh,
                Err(e) => {
                    tracing::error!(error = %e, "could not open the database again; keeping the old connection");
                }
            }
        }
    }
}

impl StoreHandle {
    /// Move `db` onto its own thread.
    pub fn spawn(db: SessionDb) -> Result<Self, CoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mia-store".into())
            .spawn(move || serve(db, rx))
            .map_err(|e| CoreError::Internal(format!("cannot start the store thread: {e}")))?;
        Ok(Self { tx })
    }

    /// Queue `f` on the store thread now, without waiting: it runs before
    /// any request made after this returns (the thread takes jobs in order).
    pub(crate) fn run_detached(&self, f: impl FnOnce(&mut SessionDb) + Send + 'static) {
        let _ = self.tx.send(Box::new(f));
    }

    /// Run `f` on the store thread and wait for its result. A panic in `f`
    /// is [`CoreError::StoreFailed`].
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SessionDb) -> Result<T, mia_store::StoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let (reply, wait) = oneshot::channel();
        // The request runs in its caller's span (a turn, a step, a tool
        // call: their session id), so its log lines say whose it is.
        let caller = tracing::Span::current();
        self.tx
            .send(Box::new(move |db| {
                let _caller = caller.enter();
                let _span = tracing::debug_span!("store_request").entered();
                match catch_unwind(AssertUnwindSafe(|| f(db))) {
                    Ok(result) => {
                        let _ = reply.send(result.map_err(CoreError::Store));
                    }
                    Err(payload) => {
                        let _ = reply
                            .send(Err(CoreError::StoreFailed(panic_message(payload.as_ref()))));
                        // The thread opens the connection again.
                        resume_unwind(payload);
                    }
                }
            }))
            .map_err(|_| CoreError::StoreFailed("the store thread has stopped".into()))?;
        wait.await
            .map_err(|_| CoreError::StoreFailed("the store thread dropped a request".into()))?
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_request_is_an_error_and_the_store_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let db = SessionDb::open(dir.path().join("data.db")).unwrap();
        let store = StoreHandle::spawn(db).unwrap();
        let created = store
            .call(|db| {
                db.create_session(mia_store::NewSession {
                    directory: "/p".into(),
                    ..Default::default()
                })
            })
            .await
            .unwrap();
        let failed = store
            .call(|_db| -> Result<(), mia_store::StoreError> { panic!("boom in a request") })
            .await;
        match failed {
            Err(CoreError::StoreFailed(m)) => assert!(m.contains("boom in a request"), "{m}"),
            other => panic!("expected StoreFailed, got {other:?}"),
        }
        // Every later caller is served, by the connection opened again.
        let id = created.id;
        let again = store.call(move |db| db.get_session(&id)).await.unwrap();
        assert_eq!(again.id, created.id);
    }
}
