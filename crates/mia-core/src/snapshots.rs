//! Snapshots around a tool call: the "before" snapshot (after the work
//! tree's step lock, for a shell step), the "after" one and its record,
//! retention for the session that grew, and the engine's settings.

use std::path::PathBuf;
use std::sync::Arc;

use mia_config::{Config, Paths};
use mia_protocol::{Event, FileChange, MessageId, PartContent, SessionId};

use crate::runtime::{Runtime, lock};
use crate::session::SessionState;

impl Runtime {
    /// A deleted session's snapshots: drop the refs it owned (the trees go
    /// at the next gc unless another session or capture keeps them).
    pub(crate) async fn release_session_snapshots(&self, state: &Arc<SessionState>) {
        let session_id = state.id;
        let Ok(config) = self.load_config(Some(state.directory.clone())).await else {
            return;
        };
        let cfg = snapshot_config(&config, &self.inner.opts.paths)
            .unwrap_or_else(|| store_config(&self.inner.opts.paths));
        let dir = state.directory.clone();
        let done = tokio::task::spawn_blocking(move || {
            let repo = mia_snapshot::SnapshotRepo::open(&dir, cfg)?;
            repo.release_session(&session_id.to_string())
        })
        .await;
        if let Ok(Err(e)) = done {
            tracing::warn!(session = %session_id, error = %e, "could not release a deleted session's snapshots");
        }
    }

    /// Snapshot retention for the session that just grew, while the turn
    /// still holds the session (so none of its captures can race the refs
    /// it drops): prune its index in SQL, drop its refs to what it no longer
    /// needs, and start `git gc` in the background only when the store is
    /// past its thresholds.
    pub(crate) async fn retain(&self, state: &Arc<SessionState>) {
        let session_id = state.id;
        let Ok(config) = self.load_config(Some(state.directory.clone())).await else {
            return;
        };
        let Some(snapshot_config) = snapshot_config(&config, &self.inner.opts.paths) else {
            return;
        };
        let keep = snapshot_config.keep_per_session;
        let max_age = snapshot_max_age(&config);
        let pruned = match self
            .inner
            .store
            .call(move |db| db.prune_session_snapshots(&session_id, keep))
            .await
        {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed");
                return;
            }
        };
        // Spec 076's expiry (`snapshot.maxAgeDays`, 30 days), and
        // `sessions.retentionDays`, at most once an hour per process.
        let expired = if self.expiry_due() {
            let rt = self.clone();
            tokio::spawn(async move {
                if let Err(e) = rt.prune_sessions().await {
                    tracing::warn!(error = %e, "session retention failed");
                }
            });
            let dir = state.directory.display().to_string();
            let cutoff =
                mia_protocol::now_ms() - i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
            match self
                .inner
                .store
                .call(move |db| db.expire_snapshots(&dir, cutoff))
                .await
            {
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::warn!(error = %e, "snapshot expiry failed");
                    None
                }
            }
        } else {
            None
        };
        let repo = state.project.snapshots.clone();
        let dir = state.directory.clone();
        let removed = pruned.removed;
        let result = tokio::task::spawn_blocking(move || {
            let guard = lock(&repo);
            let Some(repo) = guard.as_ref() else {
                return Ok::<_, mia_snapshot::SnapshotError>((0, None));
            };
            let mut released = if pruned.released.is_empty() {
                0
            } else {
                repo.release(&session_id.to_string(), &pruned.released, &pruned.unused)?
            };
            if let Some(expired) = expired {
                for (sid, p) in expired {
                    released += repo.release(&sid.to_string(), &p.released, &p.unused)?;
                }
                released += repo.expire_unowned(max_age)?;
                repo.expire_backups(max_age, MAX_BACKUPS);
            }
            Ok((released, repo.gc_due()))
        })
        .await;
        match result {
            Ok(Ok((released, due))) => {
                if removed > 0 {
                    tracing::info!(session = %session_id, pruned = removed, released, "snapshot retention");
                }
                if let Some(why) = due {
                    tracing::info!(project = %dir.display(), %why, "snapshot gc in the background");
                    drop(mia_snapshot::gc_in_background(dir, snapshot_config));
                }
            }
            Ok(Err(e)) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed")
            }
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "snapshot retention failed")
            }
        }
    }

    pub(crate) async fn begin_snapshot(
        &self,
        state: &Arc<SessionState>,
        session_id: SessionId,
        message_id: MessageId,
        call_id: &str,
        paths: Option<Vec<PathBuf>>,
        config: mia_snapshot::SnapshotConfig,
    ) -> Result<mia_snapshot::PendingStep, SnapFail> {
        // A session's first change is preceded by its baseline snapshot
        // (kept by retention for good), once per session across processes.
        let needs_baseline = !state
            .has_baseline
            .load(std::sync::atomic::Ordering::Relaxed)
            && !self
                .inner
                .store
                .call(move |db| db.snapshots(&session_id))
                .await
                .map_err(|e| SnapFail::Unavailable(e.to_string()))?
                .iter()
                .any(|s| s.snapshot.kind == mia_store::SnapshotKind::Baseline);
        if !needs_baseline {
            state
                .has_baseline
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // A shell step first waits for the work tree's step lock, without
        // holding the repository handle the project's sessions share.
        let step_lock = match &paths {
            Some(_) => None,
            None => {
                let dir = state.directory.clone();
                let cfg = config.clone();
                let holder = format!(
                    "session {session_id}, {} pid {}",
                    crate::session::claim::this_owner().name,
                    std::process::id()
                );
                Some(
                    tokio::task::spawn_blocking(move || {
                        mia_snapshot::acquire_step_lock(&dir, &cfg, &holder)
                    })
                    .await
                    .map_err(|e| SnapFail::Unavailable(e.to_string()))?
                    .map_err(|e| match e {
                        mia_snapshot::SnapshotError::StepBusy { .. } => {
                            SnapFail::Busy(e.to_string())
                        }
                        e => SnapFail::Unavailable(e.to_string()),
                    })?,
                )
            }
        };
        let repo = state.project.snapshots.clone();
        let dir = state.directory.clone();
        let ctx = mia_snapshot::CaptureContext {
            session_id: Some(session_id.to_string()),
            message_id: Some(message_id.to_string()),
            tool_call_id: Some(call_id.to_string()),
        };
        let watcher = state.project.watcher.clone();
        let (pending, baseline) = tokio::task::spawn_blocking(move || {
            let mut guard = lock(&repo);
            if guard.is_none() {
                let opened = mia_snapshot::SnapshotRepo::open(&dir, config)
                    .map_err(|e| SnapFail::Unavailable(e.to_string()))?;
                match mia_snapshot::ProjectWatcher::start(
                    opened.project(),
                    opened.config().excluded_dirs.clone(),
                ) {
                    Ok(w) => *lock(&watcher) = Some(w),
                    Err(e) => {
                        tracing::info!(error = %e, "no file watcher; bash steps scan the project")
                    }
                }
                *guard = Some(opened);
            }
            let repo = guard
                .as_mut()
                .ok_or_else(|| SnapFail::Unavailable("snapshot repository unavailable".into()))?;
            let baseline = if needs_baseline {
                // The baseline is a full scan: the watcher counts from it.
                if let Some(w) = lock(&watcher).as_ref() {
                    w.prime();
                }
                let base_ctx = mia_snapshot::CaptureContext {
                    session_id: ctx.session_id.clone(),
                    message_id: None,
                    tool_call_id: None,
                };
                match repo.capture(&base_ctx, None) {
                    Ok(snap) => Some(snap),
                    Err(e) => {
                        tracing::warn!(error = %e, "baseline snapshot unavailable");
                        None
                    }
                }
            } else {
                None
            };
            let w = lock(&watcher);
            let pending = match (step_lock, w.as_ref()) {
                (Some(held), w) => repo.begin_step_holding(ctx, held, w),
                (None, Some(w)) => repo.begin_step_with_watcher(ctx, paths.as_deref(), w),
                (None, None) => repo.begin_step(ctx, paths.as_deref()),
            }
            .map_err(|e| match e {
                mia_snapshot::SnapshotError::StepBusy { .. } => SnapFail::Busy(e.to_string()),
                e => SnapFail::Unavailable(e.to_string()),
            })?;
            Ok::<_, SnapFail>((pending, baseline))
        })
        .await
        .map_err(|e| SnapFail::Unavailable(e.to_string()))??;
        if let Some(snap) = baseline {
            state
                .has_baseline
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let row = new_snapshot(session_id, &snap, mia_store::SnapshotKind::Baseline);
            if let Err(e) = self.inner.store.call(move |db| db.add_snapshot(&row)).await {
                tracing::warn!(session = %session_id, error = %e, "could not index the baseline snapshot");
            }
        }
        Ok(pending)
    }

    /// Snapshot after the tool ran; the part to store and the Event to emit.
    pub(crate) async fn finish_snapshot(
        &self,
        state: &Arc<SessionState>,
        session_id: SessionId,
        call_id: &str,
        pending: Result<mia_snapshot::PendingStep, String>,
    ) -> (PartContent, Event) {
        let (hash, files, unavailable) = match pending {
            Err(reason) => (None, Vec::new(), Some(reason)),
            Ok(pending) => {
                let before = pending.before.clone();
                let repo = state.project.snapshots.clone();
                let watcher = state.project.watcher.clone();
                let record = tokio::task::spawn_blocking(move || {
                    let mut guard = lock(&repo);
                    let repo = guard.as_mut().ok_or("snapshot repository unavailable")?;
                    match lock(&watcher).as_ref() {
                        Some(w) => repo.finish_step_with_watcher(pending, w),
                        None => repo.finish_step(pending),
                    }
                    .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r);
                match record {
                    Ok(record) => {
                        let out = (Some(record.before.clone()), record.changes.clone(), None);
                        // The index undo/revert work from, across processes.
                        let snapshot =
                            new_snapshot(session_id, &before, mia_store::SnapshotKind::Step);
                        let step = new_step(session_id, &record);
                        let stored = self
                            .inner
                            .store
                            .call(move |db| {
                                db.add_snapshot(&snapshot)?;
                                if let Some(step) = step {
                                    db.add_snapshot_step(&step)?;
                                }
                                Ok(())
                            })
                            .await;
                        if let Err(e) = stored {
                            tracing::warn!(session = %session_id, error = %e, "could not index a snapshot step");
                        }
                        state
                            .steps_taken
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        out
                    }
                    Err(reason) => (None, Vec::new(), Some(reason)),
                }
            }
        };
        let files: Vec<FileChange> = files;
        if let Some(reason) = &unavailable {
            let row = mia_store::NewSnapshot {
                session_id,
                hash: String::new(),
                message_id: None,
                tool_call_id: Some(call_id.to_string()),
                kind: mia_store::SnapshotKind::Step,
                files: 0,
                excluded: serde_json::Value::Array(Vec::new()),
                excluded_total: 0,
                mode: String::new(),
                ms: 0,
                unavailable: Some(reason.clone()),
            };
            if let Err(e) = self.inner.store.call(move |db| db.add_snapshot(&row)).await {
                tracing::warn!(session = %session_id, error = %e, "could not index an unavailable snapshot");
            }
        }
        (
            PartContent::Snapshot {
                hash: hash.clone().unwrap_or_default(),
                tool_call_id: Some(call_id.to_string()),
                files: files.clone(),
                unavailable: unavailable.clone(),
            },
            Event::Snapshot {
                session_id,
                call_id: call_id.to_string(),
                hash,
                files,
                unavailable,
            },
        )
    }
}

/// The snapshot engine's settings from the `snapshot` config section;
/// `None` when snapshots are turned off.
/// Snapshots of sessions idle this long, captures without a session and
/// forced-undo backups are removed (spec 076: "older than 30 days").
pub const EXPIRY: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// `snapshot.maxAgeDays` (default [`EXPIRY`]).
pub(crate) fn snapshot_max_age(config: &mia_config::Config) -> std::time::Duration {
    config
        .merged
        .snapshot
        .as_ref()
        .and_then(|s| s.max_age_days)
        .map_or(EXPIRY, |d| {
            std::time::Duration::from_secs(u64::from(d.get().min(3650)) * 24 * 3600)
        })
}
/// Forced-undo backups kept per work tree at most.
pub(crate) const MAX_BACKUPS: usize = 50;

impl Runtime {
    /// Whether the expiry pass should run now (once an hour per process).
    fn expiry_due(&self) -> bool {
        let now = mia_protocol::now_ms();
        let last = self
            .inner
            .last_expiry
            .load(std::sync::atomic::Ordering::Relaxed);
        now - last > 3_600_000
            && self
                .inner
                .last_expiry
                .compare_exchange(
                    last,
                    now,
                    std::sync::atomic::Ordering::Relaxed,
                    std::sync::atomic::Ordering::Relaxed,
                )
                .is_ok()
    }
}

pub(crate) fn snapshot_config(
    config: &Config,
    paths: &Paths,
) -> Option<mia_snapshot::SnapshotConfig> {
    let section = config.merged.snapshot.clone().unwrap_or_default();
    if section.enabled == Some(false) {
        return None;
    }
    let mut out = store_config(paths);
    if let Some(n) = section.max_file_size {
        out.max_file_size = n;
    }
    if let Some(ms) = section.capture_budget_ms {
        out.time_budget = std::time::Duration::from_millis(ms);
    }
    if let Some(n) = section.retention {
        out.keep_per_session = n as usize;
    }
    // Plain directory names join the built-in excluded directories.
    for pattern in section.exclude.iter().flatten() {
        let name = pattern.trim_matches('/');
        if !name.is_empty()
            && !name.contains(['*', '?', '[', '/'])
            && !out.excluded_dirs.iter().any(|d| d == name)
        {
            out.excluded_dirs.push(name.to_string());
        }
    }
    Some(out)
}

/// The snapshot engine's defaults with the store under `$MIA_CODE_HOME`.
pub fn store_config(paths: &Paths) -> mia_snapshot::SnapshotConfig {
    mia_snapshot::SnapshotConfig {
        store_root: Some(paths.home.join("snapshots")),
        ..mia_snapshot::SnapshotConfig::default()
    }
}

/// Why a step's "before" snapshot was not taken.
#[derive(Debug)]
pub(crate) enum SnapFail {
    /// No snapshot (time budget, lock, I/O): the step runs without undo.
    Unavailable(String),
    /// Another step with unknown paths holds the work tree: this one must
    /// not run (its changes and the other's could not be told apart).
    Busy(String),
}

/// The store's row for a snapshot mia-snapshot took.
pub(crate) fn new_snapshot(
    session_id: SessionId,
    snap: &mia_snapshot::Snapshot,
    kind: mia_store::SnapshotKind,
) -> mia_store::NewSnapshot {
    mia_store::NewSnapshot {
        session_id,
        hash: snap.hash.clone(),
        message_id: snap.message_id.clone(),
        tool_call_id: snap.tool_call_id.clone(),
        kind,
        files: snap.files,
        excluded: serde_json::to_value(&snap.excluded).unwrap_or_default(),
        excluded_total: snap.excluded_total,
        mode: serde_json::to_value(snap.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        ms: snap.ms,
        unavailable: None,
    }
}

/// The store's row for a finished step; `None` if the record cannot be encoded.
pub(crate) fn new_step(
    session_id: SessionId,
    record: &mia_snapshot::StepRecord,
) -> Option<mia_store::NewStep> {
    let kind = match record.kind {
        mia_snapshot::StepKind::Tool => "tool",
        mia_snapshot::StepKind::Revert { .. } => "revert",
        mia_snapshot::StepKind::Redo { .. } => "redo",
    };
    Some(mia_store::NewStep {
        id: record.id.clone(),
        session_id,
        message_id: record.message_id.clone(),
        tool_call_id: record.tool_call_id.clone(),
        kind: kind.to_string(),
        before_hash: record.before.clone(),
        after_hash: record.after.clone(),
        record: serde_json::to_value(record).ok()?,
    })
}

/// The paths a sandboxed command changed (`metadata.written`), when the
/// trace is complete; `None` otherwise (every change then counts as the
/// command's).
pub(crate) fn traced_writes(metadata: &serde_json::Value) -> Option<Vec<std::path::PathBuf>> {
    let w = metadata.get("written")?;
    if w.get("complete")?.as_bool() != Some(true) {
        return None;
    }
    Some(
        w.get("paths")?
            .as_array()?
            .iter()
            .filter_map(|p| p.as_str().map(std::path::PathBuf::from))
            .collect(),
    )
}
