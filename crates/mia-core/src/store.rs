//! One thread owns the SQLite connection; everyone else sends it closures.

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

impl StoreHandle {
    /// Move `db` onto its own thread.
    pub fn spawn(db: SessionDb) -> Result<Self, CoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mia-store".into())
            .spawn(move || {
                let mut db = db;
                for job in rx {
                    job(&mut db);
                }
            })
            .map_err(|e| CoreError::Internal(format!("cannot start the store thread: {e}")))?;
        Ok(Self { tx })
    }

    /// Queue `f` on the store thread now, without waiting: it runs before
    /// any request made after this returns (the thread takes jobs in order).
    pub(crate) fn run_detached(&self, f: impl FnOnce(&mut SessionDb) + Send + 'static) {
        let _ = self.tx.send(Box::new(f));
    }

    /// Run `f` on the store thread and wait for its result.
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SessionDb) -> Result<T, mia_store::StoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let (reply, wait) = oneshot::channel();
        self.tx
            .send(Box::new(move |db| {
                let _ = reply.send(f(db));
            }))
            .map_err(|_| CoreError::Internal("the store thread has stopped".into()))?;
        wait.await
            .map_err(|_| CoreError::Internal("the store thread dropped a request".into()))?
            .map_err(CoreError::Store)
    }
}
