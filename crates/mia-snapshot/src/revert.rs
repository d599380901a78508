//! Steps, undo, revert and redo (spec 021). Only the files the session's
//! steps changed are ever touched; a file changed outside mia-code since the
//! step is a conflict (reported, not overwritten, unless forced — and then
//! backed up); every revert first snapshots the present so it can be redone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{ObjectType, Oid};
use mia_protocol::{FileChange, FileChangeKind, MessageId, PartContent};
use serde::{Deserialize, Serialize};

#[cfg(unix)]
use crate::cache::MODE_EXEC;
use crate::cache::{MODE_LINK, StatInfo};
use crate::capture::{Budget, rel_bytes};
use crate::diff::{DiffStatus, FileDiff, diff_trees};
use crate::error::{Result, SnapshotError};
use crate::model::{CaptureContext, ExcludedFile, Snapshot, StepKind, StepRecord, now_ms};
use crate::repo::SnapshotRepo;
use crate::tree;

/// A step whose "before" snapshot is taken and whose tool is running.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingStep {
    pub ctx: CaptureContext,
    pub before: Snapshot,
    /// The paths the tool said it would touch (None: it could not say).
    pub paths: Option<Vec<PathBuf>>,
    /// Every file the "before" snapshot could not store (`before.excluded`
    /// is capped for display; this is not).
    #[serde(default)]
    pub before_uncaptured: Vec<ExcludedFile>,
    /// Exact permission bits of the named files before the step, where
    /// they are not 0644/0755.
    #[serde(default)]
    pub modes: BTreeMap<String, u32>,
    /// This step's journal entry (known paths).
    #[serde(default)]
    journal_id: Option<String>,
    /// Where the journal ended when the step began (unknown paths).
    #[serde(default)]
    journal_offset: u64,
    /// Other steps that were changing files when this one began.
    #[serde(default)]
    open_at_begin: Vec<crate::journal::Entry>,
    /// Held from "before" to "after" by a step with unknown paths.
    #[serde(skip)]
    _scan_lock: Option<std::sync::Arc<crate::repo::StepLock>>,
    /// Set after the tool ran, for a step with unknown paths: every path
    /// (absolute) the command's processes changed, as the OS sandbox traced
    /// them. A change elsewhere was made by someone else while the step
    /// ran (a person, another program) and is left out of the step.
    /// `None`: not traced, or the trace is incomplete (everything counts).
    #[serde(skip)]
    pub written: Option<Vec<PathBuf>>,
}

/// File state in a snapshot: mode and blob, or absent.
type State = Option<(u32, Oid)>;

/// Permission bits git's two file modes do not restore (e.g. `0o600`).
#[cfg(unix)]
fn odd_mode(abs: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let m = std::fs::symlink_metadata(abs).ok()?;
    if !m.is_file() {
        return None;
    }
    let perm = m.permissions().mode() & 0o7777;
    (perm != 0o644 && perm != 0o755).then_some(perm)
}

#[cfg(not(unix))]
fn odd_mode(_abs: &Path) -> Option<u32> {
    None
}

fn holder_text(ctx: &CaptureContext) -> String {
    match &ctx.session_id {
        Some(s) => format!("session {s}, pid {}", std::process::id()),
        None => format!("pid {}", std::process::id()),
    }
}

impl SnapshotRepo {
    /// Before a file-modifying tool runs: snapshot what it may change.
    /// `paths`: what a write/edit/delete will touch; `None` for bash (scan).
    ///
    /// A step with unknown paths holds the work tree's step lock until
    /// [`finish_step`](Self::finish_step), so two of them never overlap;
    /// one that cannot get it within `config.step_wait` fails with
    /// [`SnapshotError::StepBusy`] and must not run. Known-path steps never
    /// wait: they announce their paths in the work tree's journal, and a
    /// concurrent unknown-path step leaves those paths out of its record.
    ///
    /// Fails with an [`SnapshotError::is_unavailable`] error when the time
    /// budget runs out: record the step's snapshot as unavailable then.
    pub fn begin_step(
        &mut self,
        ctx: CaptureContext,
        paths: Option<&[PathBuf]>,
    ) -> Result<PendingStep> {
        let scan_lock = match paths {
            None => Some(self.acquire_scan_lock(&ctx)?),
            Some(_) => None,
        };
        self.begin_step_narrowed(ctx, paths, None, scan_lock)
    }

    /// [`begin_step`](Self::begin_step) for a step with unknown paths whose
    /// step lock the caller took already ([`crate::acquire_step_lock`]),
    /// narrowed by `watcher` when given.
    pub fn begin_step_holding(
        &mut self,
        ctx: CaptureContext,
        lock: std::sync::Arc<crate::repo::StepLock>,
        watcher: Option<&crate::ProjectWatcher>,
    ) -> Result<PendingStep> {
        if lock.path() != self.scan_lock_path() {
            return Err(SnapshotError::PathOutsideProject {
                path: lock.path().to_path_buf(),
                project: self.project.clone(),
            });
        }
        let narrow = watcher.and_then(|w| self.watched_paths(w));
        self.begin_step_narrowed(ctx, None, narrow, Some(lock))
    }

    /// The work tree's step lock for a step with unknown paths, waiting
    /// `config.step_wait` at most.
    pub(crate) fn acquire_scan_lock(
        &self,
        ctx: &CaptureContext,
    ) -> Result<std::sync::Arc<crate::repo::StepLock>> {
        Ok(std::sync::Arc::new(self.lock_scan_step(
            &holder_text(ctx),
            Some(std::time::Instant::now() + self.config.step_wait),
        )?))
    }

    /// [`begin_step`](Self::begin_step); a step with unknown paths captures
    /// only `narrow` (what a watcher saw change) on top of the latest
    /// snapshot when given.
    pub(crate) fn begin_step_narrowed(
        &mut self,
        ctx: CaptureContext,
        paths: Option<&[PathBuf]>,
        narrow: Option<Vec<PathBuf>>,
        scan_lock: Option<std::sync::Arc<crate::repo::StepLock>>,
    ) -> Result<PendingStep> {
        let budget = Budget {
            start: std::time::Instant::now(),
            limit: Some(self.config.time_budget),
        };
        let _lock = self.lock_until(Some(budget.start + self.config.time_budget))?;
        let journal = crate::journal::Journal::new(&self.state);
        let capture_paths = match (paths, &narrow) {
            (Some(p), _) => Some(p.to_vec()),
            (None, Some(n)) if self.latest().is_some() => Some(n.clone()),
            _ => None,
        };
        let (before, before_uncaptured) =
            self.capture_recorded_locked(&ctx, capture_paths.as_deref(), budget)?;
        let mut modes = BTreeMap::new();
        let (journal_id, journal_offset, open_at_begin) = match paths {
            Some(ps) => {
                let rels = ps
                    .iter()
                    .map(|p| self.relative_path(p))
                    .collect::<Result<Vec<_>>>()?;
                for rel in &rels {
                    if let Some(m) = odd_mode(&crate::names::abs(&self.project, rel)) {
                        modes.insert(rel.clone(), m);
                    }
                }
                if !self.scan_step_running() {
                    journal.rotate_if_large()?;
                }
                let id = journal.begin(ctx.session_id.as_deref(), rels)?;
                (Some(id), 0, Vec::new())
            }
            None => {
                // Exact bits of files whose bits git's modes cannot restore,
                // from the scan's stat cache (a shell step may delete a 0600
                // `.env`; undo must not bring it back world-readable).
                if let Some(cache) = &self.cache {
                    for (rel, e) in &cache.files {
                        let p = e.stat.perm;
                        if e.stat.mode != MODE_LINK && p != 0 && p != 0o644 && p != 0o755 {
                            modes.insert(crate::names::enc(rel), p);
                        }
                    }
                }
                journal.rotate_if_large()?;
                (None, journal.len(), journal.open_entries())
            }
        };
        Ok(PendingStep {
            ctx,
            before,
            paths: paths.map(<[PathBuf]>::to_vec),
            before_uncaptured,
            modes,
            journal_id,
            journal_offset,
            open_at_begin,
            _scan_lock: scan_lock,
            written: None,
        })
    }

    /// After the tool ran: snapshot again and record what it actually
    /// changed. Known-path steps compare only their paths, on top of the
    /// "before" tree, so other sessions' captures never leak in; steps with
    /// unknown paths leave out what other steps announced meanwhile.
    pub fn finish_step(&mut self, pending: PendingStep) -> Result<StepRecord> {
        self.finish_step_narrowed(pending, None)
    }

    /// [`finish_step`](Self::finish_step); a step with unknown paths
    /// captures only `narrow` on top of its "before" tree when given.
    pub(crate) fn finish_step_narrowed(
        &mut self,
        pending: PendingStep,
        narrow: Option<Vec<PathBuf>>,
    ) -> Result<StepRecord> {
        let budget = Budget {
            start: std::time::Instant::now(),
            limit: Some(self.config.time_budget),
        };
        let _lock = self.lock_until(Some(budget.start + self.config.time_budget))?;
        let journal = crate::journal::Journal::new(&self.state);
        let result = self.finish_step_locked(&pending, narrow.as_deref(), &journal, budget);
        if let Some(id) = &pending.journal_id
            && let Err(e) = journal.end(id)
        {
            tracing::warn!(error = %e, "could not close a step in the journal");
        }
        result
    }

    fn finish_step_locked(
        &mut self,
        pending: &PendingStep,
        narrow: Option<&[PathBuf]>,
        journal: &crate::journal::Journal,
        budget: Budget,
    ) -> Result<StepRecord> {
        let before_oid = self.resolve(&pending.before.hash)?;
        let session = pending.ctx.session_id.as_deref();
        let mut foreign = Vec::new();
        let (after, changes, uncaptured) = match &pending.paths {
            Some(paths) => {
                let captured =
                    self.capture_paths_on(before_oid, pending.before.files, paths, budget)?;
                self.keep_for(session, captured.tree)?;
                self.set_latest(captured.tree, captured.files)?;
                let rels = paths
                    .iter()
                    .map(|p| self.relative_path(p))
                    .collect::<Result<Vec<_>>>()?;
                self.update_uncaptured(Some(&rels), &captured.excluded)?;
                // Only exclusions among the step's own paths (a first capture
                // may have been a full scan listing the whole project's).
                let mine = |e: &ExcludedFile| {
                    rels.iter().any(|r| {
                        e.path == *r
                            || e.path.strip_suffix('/') == Some(r.as_str())
                            || e.path.starts_with(&format!("{r}/"))
                    })
                };
                let mut unc: Vec<ExcludedFile> = pending
                    .before_uncaptured
                    .iter()
                    .filter(|e| mine(e))
                    .cloned()
                    .collect();
                unc.extend(captured.excluded.into_iter().filter(|e| mine(e)));
                unc.sort_by(|a, b| a.path.cmp(&b.path));
                unc.dedup_by(|a, b| a.path == b.path);
                let changes = self.changes_between(before_oid, captured.tree, Some(&rels))?;
                (captured.tree, changes, unc)
            }
            None => {
                let (after, after_excluded) = match narrow {
                    Some(ps) => {
                        let captured =
                            self.capture_paths_on(before_oid, pending.before.files, ps, budget)?;
                        self.keep_for(session, captured.tree)?;
                        self.set_latest(captured.tree, captured.files)?;
                        let rels = ps
                            .iter()
                            .map(|p| self.relative_path(p))
                            .collect::<Result<Vec<_>>>()?;
                        let set = self.update_uncaptured(Some(&rels), &captured.excluded)?;
                        (captured.tree, set)
                    }
                    None => {
                        let (snap, set) =
                            self.capture_recorded_locked(&pending.ctx, None, budget)?;
                        (self.resolve(&snap.hash)?, set)
                    }
                };
                let all = self.changes_between(before_oid, after, None)?;
                // Steps of other sessions that ran meanwhile.
                let since = journal.begun_since(pending.journal_offset);
                let others = crate::journal::concurrent(&pending.open_at_begin, &since, session);
                let mut changes = Vec::new();
                let written = pending.written.as_ref().map(|w| self.written_rels(w));
                for c in all {
                    match others
                        .iter()
                        .find(|o| crate::journal::touches(&o.paths, &c.path))
                    {
                        Some(o) => foreign.push(crate::model::ForeignChange {
                            path: c.path.clone(),
                            session: o.session.clone(),
                            not_by_command: false,
                        }),
                        None if written
                            .as_ref()
                            .is_some_and(|w| !crate::journal::touches(w, &c.path)) =>
                        {
                            foreign.push(crate::model::ForeignChange {
                                path: c.path.clone(),
                                session: None,
                                not_by_command: true,
                            });
                        }
                        None => changes.push(c),
                    }
                }
                // Files the "before" scan could not store that the step
                // changed (now captured) or removed: undo must leave them.
                let after_tree = self.repo.find_tree(after).map_err(self.git_err())?;
                let still_excluded: HashSet<&str> =
                    after_excluded.iter().map(|e| e.path.as_str()).collect();
                let mut unc = Vec::new();
                for u in &pending.before_uncaptured {
                    if u.path.ends_with('/') {
                        continue;
                    }
                    let changed = changes.iter().any(|c| c.path == u.path);
                    let gone = tree::file_at(&after_tree, &u.path).is_none()
                        && !still_excluded.contains(u.path.as_str())
                        && std::fs::symlink_metadata(crate::names::abs(&self.project, &u.path))
                            .is_err();
                    if changed || gone {
                        unc.push(u.clone());
                    }
                }
                (after, changes, unc)
            }
        };
        let mut modes = pending.modes.clone();
        modes.retain(|p, _| changes.iter().any(|c| &c.path == p));
        Ok(StepRecord {
            id: pending
                .ctx
                .tool_call_id
                .clone()
                .unwrap_or_else(|| format!("step-{}-{}", now_ms(), short(&after.to_string()))),
            session_id: pending.ctx.session_id.clone().unwrap_or_default(),
            message_id: pending.ctx.message_id.clone().unwrap_or_default(),
            tool_call_id: pending.ctx.tool_call_id.clone(),
            kind: StepKind::Tool,
            before: before_oid.to_string(),
            after: after.to_string(),
            changes,
            uncaptured,
            foreign,
            modes,
            created_at: now_ms(),
        })
    }

    /// Traced paths as project-relative paths, each as spelled and as its
    /// real path (a write through a symbolic link changes its target).
    /// Paths outside the project are dropped.
    fn written_rels(&self, written: &[PathBuf]) -> Vec<String> {
        let mut v = Vec::new();
        for w in written {
            let real = dunce::canonicalize(w).ok();
            for p in std::iter::once(w.clone()).chain(real) {
                if let Ok(r) = self.relative_path(&p)
                    && !v.contains(&r)
                {
                    v.push(r);
                }
            }
        }
        v
    }

    /// Per-file changes between two snapshots (a type change counts once,
    /// as modified).
    pub fn changes_between(
        &self,
        a: Oid,
        b: Oid,
        filter: Option<&[String]>,
    ) -> Result<Vec<FileChange>> {
        let ta = self.repo.find_tree(a).map_err(self.git_err())?;
        let tb = self.repo.find_tree(b).map_err(self.git_err())?;
        let diffs = diff_trees(&self.repo, &ta, &tb, filter).map_err(self.git_err())?;
        let mut by_path: BTreeMap<String, FileChange> = BTreeMap::new();
        for d in diffs {
            let kind = match d.status {
                DiffStatus::Added => FileChangeKind::Added,
                DiffStatus::Deleted => FileChangeKind::Deleted,
                DiffStatus::Modified => FileChangeKind::Modified,
            };
            by_path
                .entry(d.file.clone())
                .and_modify(|c| {
                    c.kind = FileChangeKind::Modified;
                    c.additions += d.additions;
                    c.deletions += d.deletions;
                })
                .or_insert(FileChange {
                    path: d.file,
                    kind,
                    additions: d.additions,
                    deletions: d.deletions,
                });
        }
        Ok(by_path.into_values().collect())
    }

    fn state_in(&self, snapshot: &str, path: &str) -> Result<State> {
        let oid = self.resolve(snapshot)?;
        let t = self.repo.find_tree(oid).map_err(self.git_err())?;
        Ok(tree::file_at(&t, path))
    }

    /// The file's state on disk right now, hashed but not stored.
    fn current_state(&self, rel: &str) -> Result<CurrentState> {
        let abs = crate::names::abs(&self.project, rel);
        let meta = match std::fs::symlink_metadata(&abs) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CurrentState::Absent),
            Err(e) => return Err(SnapshotError::io("reading", &abs)(e)),
        };
        if meta.is_dir() {
            return Ok(CurrentState::Directory);
        }
        let stat = StatInfo::from_metadata(&meta);
        let bytes = if stat.mode == MODE_LINK {
            rel_bytes(&std::fs::read_link(&abs).map_err(SnapshotError::io("reading", &abs))?)
        } else {
            std::fs::read(&abs).map_err(SnapshotError::io("reading", &abs))?
        };
        let oid = Oid::hash_object(ObjectType::Blob, &bytes).map_err(self.git_err())?;
        Ok(CurrentState::File(stat.mode, oid))
    }

    /// Undo the last file-modifying step of the session (`records`: the
    /// session's step records in order).
    pub fn plan_undo(&self, records: &[StepRecord]) -> Result<RevertPlan> {
        let st = ActiveState::of(records);
        let Some(idx) = records.iter().rposition(|r| {
            r.kind == StepKind::Tool && !st.undone.contains(&r.id) && !r.changes.is_empty()
        }) else {
            return Err(SnapshotError::NothingToRevert {
                what: "undo",
                detail: "no file-modifying step of this session is left to undo".into(),
            });
        };
        self.plan_for(records, &[idx], PlanKind::Undo, None)
    }

    /// Revert to the state before `message_id`'s first change: every step
    /// from there on (still active) is undone, cumulatively.
    pub fn plan_revert(&self, records: &[StepRecord], message_id: &str) -> Result<RevertPlan> {
        let st = ActiveState::of(records);
        let Some(first) = records
            .iter()
            .position(|r| r.kind == StepKind::Tool && r.message_id == message_id)
        else {
            return Err(SnapshotError::MessageNotFound {
                message: message_id.to_string(),
            });
        };
        let idxs: Vec<usize> = (first..records.len())
            .filter(|i| {
                let r = &records[*i];
                r.kind == StepKind::Tool && !st.undone.contains(&r.id) && !r.changes.is_empty()
            })
            .collect();
        if idxs.is_empty() {
            return Err(SnapshotError::NothingToRevert {
                what: "revert",
                detail: format!("the changes from message {message_id} on were already undone"),
            });
        }
        self.plan_for(
            records,
            &idxs,
            PlanKind::Revert,
            Some(message_id.to_string()),
        )
    }

    /// Undo one step of the session (`step`: a step id or its tool call
    /// id), whether or not it is the last one. Later steps that changed the
    /// same files make their current content a conflict (shown, not overwritten).
    pub fn plan_undo_step(&self, records: &[StepRecord], step: &str) -> Result<RevertPlan> {
        let st = ActiveState::of(records);
        let Some(idx) = records.iter().position(|r| {
            r.kind == StepKind::Tool && (r.id == step || r.tool_call_id.as_deref() == Some(step))
        }) else {
            return Err(SnapshotError::NothingToRevert {
                what: "undo",
                detail: format!("step {step} is not a file-changing step of this session"),
            });
        };
        if st.undone.contains(&records[idx].id) || records[idx].changes.is_empty() {
            return Err(SnapshotError::NothingToRevert {
                what: "undo",
                detail: format!("step {step} is already undone or changed no file"),
            });
        }
        self.plan_for(records, &[idx], PlanKind::Undo, None)
    }

    /// What applying `plan` now would meet, without changing anything:
    /// conflicts per path (files changed outside mia-code since) and the
    /// diff from the files on disk to the state the plan restores.
    pub fn preview(&self, plan: &RevertPlan) -> Result<(Vec<Conflict>, Vec<FileDiff>)> {
        let mut conflicts = Vec::new();
        let mut diffs = Vec::new();
        for f in &plan.files {
            let current = self.current_state(&f.path)?;
            let reason = match (&current, &f.expected) {
                _ if f.later_step.is_some() => Some(later_step_reason(f)),
                (CurrentState::Directory, _) => Some("is now a directory".to_string()),
                (_, Expectation::Unknown) => {
                    Some("its state after the step was not captured".into())
                }
                (_, Expectation::Any) => None,
                (cur, Expectation::State(exp)) if cur.as_state() != *exp => {
                    Some("changed outside mia-code since the step".into())
                }
                _ => None,
            };
            if let Some(reason) = reason {
                conflicts.push(Conflict {
                    path: f.path.clone(),
                    reason,
                    backup: None,
                });
            }
            let now = match current {
                CurrentState::File(mode, oid) => {
                    let abs = crate::names::abs(&self.project, &f.path);
                    let bytes = if mode == MODE_LINK {
                        rel_bytes(
                            &std::fs::read_link(&abs)
                                .map_err(SnapshotError::io("reading", &abs))?,
                        )
                    } else {
                        std::fs::read(&abs).map_err(SnapshotError::io("reading", &abs))?
                    };
                    Some((mode, bytes, oid.to_string()))
                }
                _ => None,
            };
            let want = match f.want {
                Some((mode, oid)) => Some((
                    mode,
                    self.repo
                        .find_blob(oid)
                        .map_err(self.git_err())?
                        .content()
                        .to_vec(),
                    oid.to_string(),
                )),
                None => None,
            };
            diffs.push(crate::diff::bytes_diff(&f.path, now, want));
        }
        Ok((conflicts, diffs))
    }

    /// Redo: undo the most recent undo/revert, if nothing changed files since.
    pub fn plan_redo(&self, records: &[StepRecord]) -> Result<RevertPlan> {
        let st = ActiveState::of(records);
        let last_change = records
            .iter()
            .rposition(|r| !r.changes.is_empty() || r.kind != StepKind::Tool);
        let Some(idx) = last_change else {
            return Err(SnapshotError::NothingToRevert {
                what: "redo",
                detail: "this session has no undo to redo".into(),
            });
        };
        let r = &records[idx];
        if !matches!(r.kind, StepKind::Revert { .. }) || st.redone.contains(&r.id) {
            return Err(SnapshotError::NothingToRevert {
                what: "redo",
                detail: "redo is possible only right after an undo or revert".into(),
            });
        }
        self.plan_for(records, &[idx], PlanKind::Redo, None)
    }

    fn plan_for(
        &self,
        records: &[StepRecord],
        idxs: &[usize],
        kind: PlanKind,
        target_message: Option<String>,
    ) -> Result<RevertPlan> {
        let active = ActiveState::of(records);
        // Desired state: before the earliest planned step touching the file.
        let mut desired: BTreeMap<String, (usize, FileChangeKind)> = BTreeMap::new();
        let mut unrestorable = Vec::new();
        for &i in idxs {
            for c in &records[i].changes {
                desired.entry(c.path.clone()).or_insert((i, c.kind));
            }
            for u in &records[i].uncaptured {
                unrestorable.push(u.clone());
            }
        }
        let first = idxs.first().copied().unwrap_or(0);
        let mut files = Vec::new();
        for (path, (i, _)) in &desired {
            let src = &records[*i].before;
            // What the session left on disk: after of the last record
            // (any kind) touching this path.
            let last = records
                .iter()
                .rposition(|r| r.changes.iter().any(|c| &c.path == path))
                .unwrap_or(*i);
            let expected_snapshot = records[last].after.clone();
            let want = self.state_in(src, path)?;
            if want.is_none() && records[*i].uncaptured.iter().any(|u| &u.path == path) {
                // It existed before the step but was never captured
                // (binary, too large): listed as unrestorable, left alone.
                continue;
            }
            let expected = self.state_in(&expected_snapshot, path)?;
            if want == expected {
                continue;
            }
            let uncaptured_after = records[last].uncaptured.iter().any(|u| &u.path == path);
            let was = match (&want, &expected) {
                (None, _) => FileChangeKind::Added,
                (Some(_), None) => FileChangeKind::Deleted,
                _ => FileChangeKind::Modified,
            };
            // A later tool step outside the plan, still active, changed it too.
            let later_step = records
                .iter()
                .enumerate()
                .skip(*i + 1)
                .find(|(j, r)| {
                    r.kind == StepKind::Tool
                        && !idxs.contains(j)
                        && !active.undone.contains(&r.id)
                        && r.changes.iter().any(|c| &c.path == path)
                })
                .map(|(_, r)| r.id.clone());
            files.push(PlannedFile {
                later_step,
                path: path.clone(),
                action: if want.is_some() {
                    FileAction::Restore
                } else {
                    FileAction::Remove
                },
                was,
                source_snapshot: src.clone(),
                perm: records[*i].modes.get(path).copied(),
                expected_snapshot: if uncaptured_after {
                    None
                } else {
                    Some(expected_snapshot)
                },
                want,
                expected: if uncaptured_after {
                    Expectation::Unknown
                } else {
                    Expectation::State(expected)
                },
            });
        }
        // Counts of what the undone steps did (their additions/deletions).
        let mut additions = 0;
        let mut deletions = 0;
        for &i in idxs {
            for c in &records[i].changes {
                additions += c.additions;
                deletions += c.deletions;
            }
        }
        unrestorable.sort_by(|a, b| a.path.cmp(&b.path));
        unrestorable.dedup_by(|a, b| a.path == b.path);
        let mut skipped: Vec<crate::model::ForeignChange> = idxs
            .iter()
            .flat_map(|&i| records[i].foreign.iter().cloned())
            .filter(|f| !files.iter().any(|p: &PlannedFile| p.path == f.path))
            .collect();
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        skipped.dedup_by(|a, b| a.path == b.path);
        let target = &records[first];
        Ok(RevertPlan {
            kind,
            session_id: target.session_id.clone(),
            target_message_id: target_message.or_else(|| Some(target.message_id.clone())),
            target_snapshot: target.before.clone(),
            steps: idxs.iter().map(|i| records[*i].id.clone()).collect(),
            files,
            unrestorable,
            skipped,
            step_additions: additions,
            step_deletions: deletions,
        })
    }

    /// Carry out a plan: conflict check, pre-revert snapshot, restore,
    /// verification, record. Without `force`, any conflict leaves every file
    /// untouched and is reported.
    pub fn execute(&mut self, plan: &RevertPlan, force: bool) -> Result<RevertOutcome> {
        let _lock = self.lock_until(None)?;
        let journal = crate::journal::Journal::new(&self.state);
        let session = Some(plan.session_id.as_str()).filter(|s| !s.is_empty());
        // Announced, so a shell command running meanwhile in another
        // session does not take what this restores as its own change.
        let entry = if plan.files.is_empty() {
            None
        } else {
            Some(journal.begin(session, plan.files.iter().map(|f| f.path.clone()).collect())?)
        };
        let result = self.execute_locked(plan, force);
        if let Some(id) = entry
            && let Err(e) = journal.end(&id)
        {
            tracing::warn!(error = %e, "could not close a restore in the journal");
        }
        result
    }

    fn execute_locked(&mut self, plan: &RevertPlan, force: bool) -> Result<RevertOutcome> {
        let paths: Vec<PathBuf> = plan.files.iter().map(|f| PathBuf::from(&f.path)).collect();
        let ctx = CaptureContext {
            session_id: Some(plan.session_id.clone()),
            message_id: plan.target_message_id.clone(),
            tool_call_id: None,
        };
        // A plan with no files (the steps cancel out) still records that the
        // steps are undone, so later undo/redo see the same history.
        let pre = self.capture_locked(&ctx, Some(&paths), Budget::unlimited())?;
        let pre_oid = self.resolve(&pre.hash)?;
        let mut conflicts = Vec::new();
        let pre_tree = self.repo.find_tree(pre_oid).map_err(self.git_err())?;
        for f in &plan.files {
            let current = self.current_state(&f.path)?;
            let reason = match (&current, &f.expected) {
                _ if f.later_step.is_some() => Some(later_step_reason(f)),
                (CurrentState::Directory, _) => Some("is now a directory".to_string()),
                (CurrentState::File(..), _) if tree::file_at(&pre_tree, &f.path).is_none() => {
                    Some("its current content could not be captured (binary or too large)".into())
                }
                (_, Expectation::Unknown) => {
                    Some("its state after the step was not captured".into())
                }
                (_, Expectation::Any) => None,
                (cur, Expectation::State(exp)) if cur.as_state() != *exp => {
                    Some("changed outside mia-code since the step".into())
                }
                _ => None,
            };
            if let Some(reason) = reason {
                conflicts.push(Conflict {
                    path: f.path.clone(),
                    reason,
                    backup: None,
                });
            }
        }
        drop(pre_tree);
        if !conflicts.is_empty() && !force {
            let message = blocked_message(plan, &conflicts);
            return Ok(RevertOutcome {
                applied: false,
                plan: plan.clone(),
                conflicts,
                restored: Vec::new(),
                removed: Vec::new(),
                pre_revert_snapshot: Some(pre.hash),
                record: None,
                message,
            });
        }
        if !conflicts.is_empty() {
            let stamp = format!("{}-{}", now_ms(), short(&pre.hash));
            for c in &mut conflicts {
                let src = crate::names::abs(&self.project, &c.path);
                if std::fs::symlink_metadata(&src).is_err() {
                    continue;
                }
                // Outside the work tree, like the snapshots themselves.
                let dst = self.backups_dir().join(&stamp).join(&c.path);
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(SnapshotError::io("creating", parent))?;
                }
                copy_entry(&src, &dst)?;
                c.backup = Some(dst.display().to_string());
            }
        }
        let mut restored = Vec::new();
        let mut removed = Vec::new();
        for (i, f) in plan.files.iter().enumerate() {
            let done = match f.want {
                Some((mode, oid)) => self
                    .repo
                    .find_blob(oid)
                    .map_err(self.git_err())
                    .and_then(|blob| {
                        write_entry(&self.project, &f.path, mode, f.perm, blob.content())
                    })
                    .map(|()| restored.push(f.path.clone())),
                None => remove_entry(&self.project, &f.path).map(|()| removed.push(f.path.clone())),
            };
            if let Err(e) = done {
                // Never a silent half state: put back what this run changed.
                let back = self.roll_back(&plan.files[..i], pre_oid);
                return Err(SnapshotError::RestoreFailed {
                    path: f.path.clone(),
                    reason: e.to_string(),
                    rolled_back: back.is_ok(),
                    pre_revert: pre.hash.clone(),
                });
            }
        }
        let after = self.capture_paths_on(pre_oid, pre.files, &paths, Budget::unlimited())?;
        self.keep_for(session_of(plan), after.tree)?;
        self.set_latest(after.tree, after.files)?;
        let rels: Vec<String> = plan.files.iter().map(|f| f.path.clone()).collect();
        self.update_uncaptured(Some(&rels), &after.excluded)?;
        let after_tree = self.repo.find_tree(after.tree).map_err(self.git_err())?;
        for f in &plan.files {
            let got = tree::file_at(&after_tree, &f.path);
            if got != f.want {
                return Err(SnapshotError::RestoreVerificationFailed {
                    path: f.path.clone(),
                    expected: describe(f.want),
                    found: describe(got),
                    pre_revert: pre.hash.clone(),
                });
            }
        }
        let changes = self.changes_between(pre_oid, after.tree, Some(&rels))?;
        let kind = match plan.kind {
            PlanKind::Redo => StepKind::Redo {
                revert: plan.steps.first().cloned().unwrap_or_default(),
            },
            _ => StepKind::Revert {
                undid: plan.steps.clone(),
            },
        };
        let record = StepRecord {
            id: format!(
                "{}-{}-{}",
                plan.kind.verb(),
                now_ms(),
                short(&after.tree.to_string())
            ),
            session_id: plan.session_id.clone(),
            message_id: plan.target_message_id.clone().unwrap_or_default(),
            tool_call_id: None,
            kind,
            before: pre.hash.clone(),
            after: after.tree.to_string(),
            changes,
            uncaptured: Vec::new(),
            foreign: Vec::new(),
            modes: BTreeMap::new(),
            created_at: now_ms(),
        };
        let mut outcome = RevertOutcome {
            applied: true,
            plan: plan.clone(),
            conflicts,
            restored,
            removed,
            pre_revert_snapshot: Some(pre.hash),
            record: Some(record),
            message: String::new(),
        };
        outcome.message = applied_message(&outcome);
        Ok(outcome)
    }

    /// Put `files` back as the pre-revert snapshot has them (after a
    /// restore failed partway).
    fn roll_back(&self, files: &[PlannedFile], pre: Oid) -> Result<()> {
        let pre_tree = self.repo.find_tree(pre).map_err(self.git_err())?;
        let mut first_err = None;
        for f in files {
            let r = match tree::file_at(&pre_tree, &f.path) {
                Some((mode, oid)) => self
                    .repo
                    .find_blob(oid)
                    .map_err(self.git_err())
                    .and_then(|b| write_entry(&self.project, &f.path, mode, None, b.content())),
                None => remove_entry(&self.project, &f.path),
            };
            if let Err(e) = r {
                tracing::warn!(path = %f.path, error = %e, "could not roll back a file");
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Restore files from a snapshot (the CLI's `snapshot restore`). With
    /// `paths`, just those; without, every file that differs between the
    /// snapshot and the working tree. Files whose current content is not
    /// captured (binary, too large) are conflicts unless `force`.
    pub fn restore(
        &mut self,
        hash: &str,
        paths: Option<&[PathBuf]>,
        force: bool,
    ) -> Result<RevertOutcome> {
        let target = self.resolve(hash)?;
        let rels_given: Option<Vec<String>> = match paths {
            Some(ps) => Some(
                ps.iter()
                    .map(|p| self.relative_path(p))
                    .collect::<Result<Vec<_>>>()?,
            ),
            None => None,
        };
        let current_tree = match rels_given {
            Some(_) => None,
            None => {
                let _lock = self.lock_until(None)?;
                Some(self.capture_tree(None, Budget::unlimited())?.tree)
            }
        };
        let plan = self.plan_restore(target, rels_given, current_tree)?;
        self.execute(&plan, force)
    }

    fn plan_restore(
        &self,
        target: Oid,
        rels_given: Option<Vec<String>>,
        current_tree: Option<Oid>,
    ) -> Result<RevertPlan> {
        let target_tree = self.repo.find_tree(target).map_err(self.git_err())?;
        let rels: Vec<String> = match (rels_given, current_tree) {
            (Some(r), _) => r,
            (None, Some(current)) => {
                let cur_tree = self.repo.find_tree(current).map_err(self.git_err())?;
                let diffs = diff_trees(&self.repo, &cur_tree, &target_tree, None)
                    .map_err(self.git_err())?;
                let mut v: Vec<String> = diffs.into_iter().map(|d| d.file).collect();
                v.dedup();
                v
            }
            (None, None) => Vec::new(),
        };
        let mut files = Vec::new();
        let mut wanted: BTreeMap<String, State> = BTreeMap::new();
        for rel in &rels {
            match target_tree.get_path(&crate::names::path_of(rel)) {
                Ok(e) if e.kind() == Some(ObjectType::Tree) => {
                    let sub = self.repo.find_tree(e.id()).map_err(self.git_err())?;
                    for (p, st) in tree::flatten(&self.repo, &sub, &format!("{rel}/"))
                        .map_err(self.git_err())?
                    {
                        wanted.insert(p, Some(st));
                    }
                }
                _ => {
                    wanted.insert(rel.clone(), tree::file_at(&target_tree, rel));
                }
            }
        }
        for (path, want) in wanted {
            let current = self.current_state(&path)?;
            if current.as_state() == want {
                continue;
            }
            let was = match (&want, current.as_state()) {
                (None, _) => FileChangeKind::Added,
                (Some(_), None) => FileChangeKind::Deleted,
                _ => FileChangeKind::Modified,
            };
            files.push(PlannedFile {
                path,
                action: if want.is_some() {
                    FileAction::Restore
                } else {
                    FileAction::Remove
                },
                was,
                source_snapshot: target.to_string(),
                expected_snapshot: None,
                later_step: None,
                perm: None,
                want,
                expected: Expectation::Any,
            });
        }
        let plan = RevertPlan {
            kind: PlanKind::Restore,
            session_id: String::new(),
            target_message_id: None,
            target_snapshot: target.to_string(),
            steps: Vec::new(),
            files,
            unrestorable: Vec::new(),
            skipped: Vec::new(),
            step_additions: 0,
            step_deletions: 0,
        };
        Ok(plan)
    }

    /// Capture `paths` on top of an explicit base tree (not "latest").
    pub(crate) fn capture_paths_on(
        &mut self,
        base: Oid,
        base_count: u64,
        paths: &[PathBuf],
        budget: Budget,
    ) -> Result<crate::capture::Captured> {
        self.capture_paths_with_base(base, base_count, paths, budget)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CurrentState {
    Absent,
    Directory,
    File(u32, Oid),
}

impl CurrentState {
    fn as_state(&self) -> State {
        match self {
            Self::File(m, o) => Some((*m, *o)),
            _ => None,
        }
    }
}

fn describe(s: State) -> String {
    match s {
        None => "no file".into(),
        Some((m, o)) => format!("{m:o} {}", short(&o.to_string())),
    }
}

pub(crate) fn short(h: &str) -> String {
    h.chars().take(9).collect()
}

/// Which steps are currently undone, which reverts were redone.
struct ActiveState {
    undone: HashSet<String>,
    redone: HashSet<String>,
}

impl ActiveState {
    fn of(records: &[StepRecord]) -> Self {
        let by_id: HashMap<&str, &StepRecord> =
            records.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut undone = HashSet::new();
        let mut redone = HashSet::new();
        for r in records {
            match &r.kind {
                StepKind::Tool => {}
                StepKind::Revert { undid } => undone.extend(undid.iter().cloned()),
                StepKind::Redo { revert } => {
                    if let Some(StepKind::Revert { undid }) =
                        by_id.get(revert.as_str()).map(|x| &x.kind)
                    {
                        for u in undid {
                            undone.remove(u);
                        }
                    }
                    redone.insert(revert.clone());
                }
            }
        }
        Self { undone, redone }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanKind {
    Undo,
    Revert,
    Redo,
    Restore,
}

impl PlanKind {
    pub fn verb(self) -> &'static str {
        match self {
            Self::Undo => "undo",
            Self::Revert => "revert",
            Self::Redo => "redo",
            Self::Restore => "restore",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    Restore,
    Remove,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expectation {
    /// No check (plain restore).
    Any,
    /// The state the session left the file in.
    State(#[serde(skip)] State),
    /// The session's last state of the file was not captured.
    Unknown,
}

/// One file a revert will touch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedFile {
    pub path: String,
    pub action: FileAction,
    /// What the undone steps did to it overall.
    pub was: FileChangeKind,
    /// Snapshot the content comes from.
    pub source_snapshot: String,
    /// Snapshot holding the state the session left it in (checked against
    /// the disk for outside changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_snapshot: Option<String>,
    /// A later step of the session, not undone, that also changed this
    /// file: undoing the earlier step would silently drop its change, so
    /// it is a conflict (undo that step first, or revert to here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub later_step: Option<String>,
    #[serde(skip)]
    want: State,
    /// Exact permission bits to restore (recorded by the step).
    #[serde(skip)]
    perm: Option<u32>,
    #[serde(skip, default = "default_expectation")]
    expected: Expectation,
}

fn default_expectation() -> Expectation {
    Expectation::Unknown
}

/// What an undo/revert/redo/restore will do, before doing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertPlan {
    pub kind: PlanKind,
    pub session_id: String,
    pub target_message_id: Option<String>,
    /// The snapshot the state goes back to (before the earliest undone step).
    pub target_snapshot: String,
    /// Ids of the steps undone (for redo: the revert undone).
    pub steps: Vec<String>,
    pub files: Vec<PlannedFile>,
    /// Files the steps touched whose content was never captured.
    pub unrestorable: Vec<ExcludedFile>,
    /// Files that changed while the steps ran but not by them (another
    /// session's step): left as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::model::ForeignChange>,
    /// Lines the undone steps added / deleted.
    pub step_additions: u32,
    pub step_deletions: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    pub path: String,
    pub reason: String,
    /// Where the current content was copied before a forced revert
    /// (project-relative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
}

/// The result of executing a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertOutcome {
    /// False when conflicts stopped it (nothing was changed).
    pub applied: bool,
    pub plan: RevertPlan,
    pub conflicts: Vec<Conflict>,
    pub restored: Vec<String>,
    pub removed: Vec<String>,
    /// Snapshot of the state just before (redo/undo of this revert).
    pub pre_revert_snapshot: Option<String>,
    /// The step record to append to the session's records.
    pub record: Option<StepRecord>,
    /// The system message to append to the session (spec 021 format).
    pub message: String,
}

impl RevertOutcome {
    /// The `revert` part the session store keeps.
    pub fn to_part(&self) -> PartContent {
        PartContent::Revert {
            target_message_id: self
                .plan
                .target_message_id
                .as_deref()
                .and_then(|m| m.parse::<MessageId>().ok()),
            restored: self.restored.clone(),
            removed: self.removed.clone(),
            conflicts: self.conflicts.iter().map(|c| c.path.clone()).collect(),
            pre_revert_snapshot: self.pre_revert_snapshot.clone(),
        }
    }
}

fn header(plan: &RevertPlan) -> String {
    let snap = short(&plan.target_snapshot);
    match (plan.kind, &plan.target_message_id) {
        (PlanKind::Redo, _) => format!("Redid the changes undone by {}:", plan.steps.join(", ")),
        (PlanKind::Restore, _) => format!("Restored files from snapshot {snap}:"),
        (_, Some(m)) if !m.is_empty() => {
            format!("Reverted to snapshot {snap} (before message {m}):")
        }
        _ => format!("Reverted to snapshot {snap}:"),
    }
}

fn applied_message(o: &RevertOutcome) -> String {
    let mut s = header(&o.plan);
    s.push('\n');
    for f in &o.plan.files {
        let what = match (f.action, f.was) {
            (FileAction::Remove, _) => "removed (was created)",
            (FileAction::Restore, FileChangeKind::Deleted) => "restored (was deleted)",
            _ => "restored (was modified)",
        };
        s.push_str(&format!("  - {}: {what}", f.path));
        if let Some(c) = o.conflicts.iter().find(|c| c.path == f.path) {
            match &c.backup {
                Some(b) => s.push_str(&format!(" [{}; previous content kept at {b}]", c.reason)),
                None => s.push_str(&format!(" [{}]", c.reason)),
            }
        }
        s.push('\n');
    }
    for u in &o.plan.unrestorable {
        s.push_str(&format!(
            "  - {}: not captured before the step ({}); left as it is\n",
            u.path,
            crate::model::reason_text(u.reason)
        ));
    }
    for f in &o.plan.skipped {
        s.push_str(&format!(
            "  - {}: left as it is (changed {} while the step ran)\n",
            f.path,
            match &f.session {
                Some(sid) => format!("by session {sid}"),
                None if f.not_by_command => {
                    "by someone else, not by the command (a person or another program)".to_string()
                }
                None => "by another mia-code process".to_string(),
            }
        ));
    }
    s.push('\n');
    let n = o.plan.files.len();
    let files = format!("{n} file{}", if n == 1 { "" } else { "s" });
    if o.plan.kind == PlanKind::Restore {
        // A plain restore undoes no recorded step: count what it changed.
        let (add, del) = o
            .record
            .as_ref()
            .map(|r| {
                r.changes
                    .iter()
                    .fold((0u32, 0u32), |(a, d), c| (a + c.additions, d + c.deletions))
            })
            .unwrap_or((0, 0));
        s.push_str(&format!("  {files} affected (+{add} -{del})."));
        if let Some(p) = &o.pre_revert_snapshot {
            s.push_str(&format!(
                "\n  The previous state is snapshot {} (`mia-code snapshot restore {}` brings it back).",
                short(p),
                short(p)
            ));
        }
        return s;
    }
    s.push_str(&format!(
        "  {files} affected, {} addition{} restored, {} deletion{} undone.",
        o.plan.step_additions,
        if o.plan.step_additions == 1 { "" } else { "s" },
        o.plan.step_deletions,
        if o.plan.step_deletions == 1 { "" } else { "s" },
    ));
    if let Some(p) = &o.pre_revert_snapshot {
        s.push_str(&format!(
            "\n  The previous state is snapshot {} (redo restores it).",
            short(p)
        ));
    }
    s
}

fn blocked_message(plan: &RevertPlan, conflicts: &[Conflict]) -> String {
    let mut s = format!(
        "Nothing was {}: {} file{} changed outside mia-code since the step:\n",
        match plan.kind {
            PlanKind::Redo => "redone",
            PlanKind::Restore => "restored",
            _ => "reverted",
        },
        conflicts.len(),
        if conflicts.len() == 1 { "" } else { "s" }
    );
    for c in conflicts {
        s.push_str(&format!("  - {}: {}\n", c.path, c.reason));
    }
    s.push_str(
        "Re-run with --force to overwrite them (their current content is kept as a backup).",
    );
    s
}

fn session_of(plan: &RevertPlan) -> Option<&str> {
    Some(plan.session_id.as_str()).filter(|s| !s.is_empty())
}

/// Write a file or symlink atomically (a unique temp file in the same
/// directory, then rename). Permission bits: `perm` when the step recorded
/// them, else the bits the file has now (with the executable bits set or
/// cleared to match `mode`), else 0644/0755.
fn write_entry(
    project: &Path,
    rel: &str,
    mode: u32,
    perm: Option<u32>,
    content: &[u8],
) -> Result<()> {
    let abs = crate::names::abs(project, rel);
    if let Some(parent) = abs.parent() {
        std::fs::create_dir_all(parent).map_err(SnapshotError::io("creating", parent))?;
    }
    if let Ok(m) = std::fs::symlink_metadata(&abs)
        && m.is_dir()
    {
        std::fs::remove_dir(&abs).map_err(SnapshotError::io("removing the directory", &abs))?;
    }
    let current_perm = current_perm(&abs);
    let dir = abs.parent().unwrap_or(project);
    if mode == MODE_LINK {
        let target = crate::capture::bytes_to_path(content);
        let name = abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}.mia-restore-{}-{}",
            std::process::id(),
            now_ms()
        ));
        let _ = std::fs::remove_file(&tmp);
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &tmp)
            .map_err(SnapshotError::io("creating the symlink", &tmp))?;
        #[cfg(windows)]
        windows_symlink(dir, &target, &tmp)?;
        #[cfg(not(any(unix, windows)))]
        std::fs::write(&tmp, target.to_string_lossy().as_bytes())
            .map_err(SnapshotError::io("writing", &tmp))?;
        return std::fs::rename(&tmp, &abs).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            SnapshotError::io("replacing", &abs)(e)
        });
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".mia-restore-")
        .tempfile_in(dir)
        .map_err(SnapshotError::io("writing a temporary file in", dir))?;
    {
        use std::io::Write as _;
        tmp.write_all(content)
            .map_err(SnapshotError::io("writing", tmp.path().to_path_buf()))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let exec = mode == MODE_EXEC;
        let bits = match (perm, current_perm) {
            (Some(p), _) => p,
            (None, Some(cur)) if exec => cur | ((cur & 0o444) >> 2),
            (None, Some(cur)) => cur & !0o111,
            (None, None) if exec => 0o755,
            (None, None) => 0o644,
        };
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(bits)).map_err(
            SnapshotError::io("setting permissions on", tmp.path().to_path_buf()),
        )?;
    }
    #[cfg(not(unix))]
    let _ = (perm, current_perm);
    let mut tmp = tmp;
    let mut waited = Duration::ZERO;
    loop {
        match tmp.persist(&abs) {
            Ok(_) => return Ok(()),
            Err(e) if in_use(&e.error) && waited < IN_USE_WAIT => {
                tmp = e.file;
                std::thread::sleep(IN_USE_STEP);
                waited += IN_USE_STEP;
            }
            Err(e) if in_use(&e.error) => return Err(in_use_error(&abs, waited)),
            Err(e) => return Err(SnapshotError::io("replacing", &abs)(e.error)),
        }
    }
}

/// How long a replace or delete waits for another program to let go of a
/// file (Windows), and the step between tries.
const IN_USE_WAIT: Duration = Duration::from_millis(1500);
const IN_USE_STEP: Duration = Duration::from_millis(50);

/// Windows refuses to replace or delete a file another program has open
/// without sharing delete access (an editor, an indexer, antivirus, a dev
/// server): sharing or lock violation, or access denied while it is open.
/// Such holders usually let go within moments, so the caller retries for
/// [`IN_USE_WAIT`], as Git for Windows does. Never on Unix.
fn in_use(e: &std::io::Error) -> bool {
    cfg!(windows) && matches!(e.raw_os_error(), Some(5 | 32 | 33))
}

fn in_use_error(abs: &Path, waited: Duration) -> SnapshotError {
    SnapshotError::InUse {
        path: abs.to_path_buf(),
        waited_ms: waited.as_millis() as u64,
    }
}

/// A symlink on Windows: a directory or file link by what the target is,
/// and where creating links needs a privilege the user lacks (no Developer
/// Mode), a file holding the target path, as git does with
/// `core.symlinks=false`.
#[cfg(windows)]
fn windows_symlink(dir: &Path, target: &Path, tmp: &Path) -> Result<()> {
    let made = if dir.join(target).is_dir() {
        std::os::windows::fs::symlink_dir(target, tmp)
    } else {
        std::os::windows::fs::symlink_file(target, tmp)
    };
    match made {
        Ok(()) => Ok(()),
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied
                || e.raw_os_error() == Some(1314) =>
        {
            tracing::warn!(path = %tmp.display(), "no privilege to create a symlink; restored as a file holding its target");
            std::fs::write(tmp, target.to_string_lossy().as_bytes())
                .map_err(SnapshotError::io("writing", tmp))
        }
        Err(e) => Err(SnapshotError::io("creating the symlink", tmp)(e)),
    }
}

/// The permission bits of a regular file at `abs`, if there is one.
fn current_perm(abs: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let m = std::fs::symlink_metadata(abs).ok()?;
        m.is_file().then(|| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = abs;
        None
    }
}

/// Remove a file and then any directories it leaves empty.
fn remove_entry(project: &Path, rel: &str) -> Result<()> {
    let abs = crate::names::abs(project, rel);
    let mut waited = Duration::ZERO;
    loop {
        match std::fs::remove_file(&abs) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) if in_use(&e) && waited < IN_USE_WAIT => {
                std::thread::sleep(IN_USE_STEP);
                waited += IN_USE_STEP;
            }
            Err(e) if in_use(&e) => return Err(in_use_error(&abs, waited)),
            Err(e) => return Err(SnapshotError::io("removing", &abs)(e)),
        }
    }
    let mut dir = abs.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        if d == project || !d.starts_with(project) {
            break;
        }
        if std::fs::remove_dir(&d).is_err() {
            break;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Ok(())
}

fn copy_entry(src: &Path, dst: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(src).map_err(SnapshotError::io("reading", src))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(src).map_err(SnapshotError::io("reading", src))?;
        let _ = std::fs::remove_file(dst);
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, dst).map_err(SnapshotError::io("backing up", dst))?;
        #[cfg(not(unix))]
        std::fs::write(dst, target.to_string_lossy().as_bytes())
            .map_err(SnapshotError::io("backing up", dst))?;
        return Ok(());
    }
    std::fs::copy(src, dst)
        .map(|_| ())
        .map_err(SnapshotError::io("backing up", src))
}

fn later_step_reason(f: &PlannedFile) -> String {
    format!(
        "also changed by a later step ({}) that is not undone: undo that step first, or revert to here",
        f.later_step.as_deref().unwrap_or("?")
    )
}

/// Ids of the session's steps whose changes are currently undone (by an
/// undo or revert that was not redone).
pub fn undone_steps(records: &[StepRecord]) -> HashSet<String> {
    ActiveState::of(records).undone
}
