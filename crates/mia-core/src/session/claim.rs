//! Claiming a session (issue 11): one owner at a time, in this process (the
//! session's `running` slot) and across processes (a lease in the store,
//! refreshed by a heartbeat). A turn, an undo/revert/redo and a delete each
//! hold a claim for as long as they run.

use std::sync::Arc;
use std::time::Duration;

use mia_store::{LeaseOwner, StoreError};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::runtime::Runtime;
use crate::session::SessionState;

/// How often a held claim is refreshed (a claim is dead after
/// [`mia_store::LEASE_STALE_MS`] without one).
const HEARTBEAT: Duration = Duration::from_secs(3);

/// A claim this process holds on a session.
pub(crate) struct Held {
    token: String,
    stop: CancellationToken,
}

/// Is `pid` running on `host`? Only this host can be checked; another
/// host's claim lives until its heartbeat stops.
pub(crate) fn alive(host: &str, pid: u32) -> bool {
    if host != mia_store::this_host() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) | Err(nix::errno::Errno::EPERM) => true,
            Err(_) => false,
        }
    }
    #[cfg(windows)]
    {
        mia_sandbox::process::alive(pid)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

/// This process as a claim owner: its program name and pid.
pub(crate) fn this_owner() -> LeaseOwner {
    let name = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "mia-code".into());
    LeaseOwner {
        name,
        pid: std::process::id(),
        host: mia_store::this_host(),
    }
}

impl Runtime {
    /// Claim the session for `kind` (`turn`, `undo`, `delete`, ...): here
    /// first (one operation per session per process), then in the store
    /// (one owner across processes). Returns the token that cancels what
    /// the claim is for.
    pub(crate) async fn claim(
        &self,
        state: &Arc<SessionState>,
        kind: &str,
    ) -> Result<CancellationToken, CoreError> {
        let session_id = state.id;
        let cancel = CancellationToken::new();
        let taken = state.with(|l| {
            let free = l.running.is_none();
            if free {
                l.running = Some(cancel.clone());
            }
            free
        });
        if !taken {
            let owner = this_owner();
            return Err(CoreError::Busy {
                session: session_id.to_string(),
                holder: format!("another operation in {}, pid {}", owner.name, owner.pid),
            });
        }
        let owner = this_owner();
        let kind_owned = kind.to_string();
        let claimed = self
            .inner
            .store
            .call(move |db| db.claim_session(&session_id, &kind_owned, &owner, &alive))
            .await;
        let lease = match claimed {
            Ok(l) => l,
            Err(e) => {
                state.with(|l| l.running = None);
                return Err(match e {
                    CoreError::Store(StoreError::SessionBusy { session, holder }) => {
                        CoreError::Busy { session, holder }
                    }
                    other => other,
                });
            }
        };
        let stop = CancellationToken::new();
        {
            let store = self.inner.store.clone();
            let stop = stop.clone();
            let token = lease.token.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(HEARTBEAT) => {}
                    }
                    let token = token.clone();
                    match store
                        .call(move |db| db.heartbeat(&session_id, &token))
                        .await
                    {
                        Ok(true) => {}
                        Ok(false) => {
                            // Taken over after our heartbeat stalled: stop.
                            tracing::warn!(session = %session_id, "lost the claim on the session; stopping");
                            cancel.cancel();
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(session = %session_id, error = %e, "claim heartbeat failed")
                        }
                    }
                }
            });
        }
        state.with(|l| {
            l.claim = Some(Held {
                token: lease.token,
                stop,
            });
        });
        Ok(cancel)
    }

    /// Give the session back: stop the heartbeat, drop the lease, free the
    /// slot.
    pub(crate) async fn release(&self, state: &Arc<SessionState>) {
        let session_id = state.id;
        let held = state.with(|l| l.claim.take());
        if let Some(h) = held {
            h.stop.cancel();
            let token = h.token;
            if let Err(e) = self
                .inner
                .store
                .call(move |db| db.release_claim(&session_id, &token))
                .await
            {
                tracing::warn!(session = %session_id, error = %e, "could not release the session claim");
            }
        }
        state.with(|l| l.running = None);
    }

    /// Claims of processes that died are dropped (and the sessions they
    /// left busy are idle again). Run once when a runtime starts.
    pub(crate) fn recover_dead_claims(&self) {
        // Queued at once, so every read after the runtime exists sees the
        // sessions a killed process left busy as idle again.
        self.inner
            .store
            .run_detached(|db| match db.recover_dead_claims(&alive) {
                Ok(0) => {}
                Ok(n) => tracing::info!(claims = n, "recovered the claims of stopped processes"),
                Err(e) => tracing::warn!(error = %e, "could not check session claims"),
            });
    }
}
