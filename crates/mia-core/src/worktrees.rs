//! Experiment worktrees and the comparison of attempts (spec 075 and the
//! design card's side-by-side comparison), over `mia-git`: the runtime adds
//! config (`worktree.*`, scripts only from a trusted project), the sessions
//! working in each worktree and what they used, and streams script output
//! as `Event::WorktreeLog`. Every git call runs off the async workers.

use std::path::{Path, PathBuf};

use mia_git::{PromoteMode, Worktrees};
use mia_protocol::{
    AttemptFile, AttemptStats, AttemptUsage, AttemptView, BetweenView, ComparisonView, Event,
    PromotedView, ScriptView, WorktreeCreated, WorktreeSessionRef, WorktreeView,
};

use crate::CoreError;
use crate::runtime::Runtime;

impl From<mia_git::GitError> for CoreError {
    fn from(e: mia_git::GitError) -> Self {
        match e {
            mia_git::GitError::NotFound(_) => CoreError::NotFound(e.to_string()),
            mia_git::GitError::Io { .. } => CoreError::Internal(e.to_string()),
            mia_git::GitError::WouldLose(_) => CoreError::WouldLose(e.to_string()),
            mia_git::GitError::MergeConflict { .. }
            | mia_git::GitError::Conflict(_)
            | mia_git::GitError::HunkGone { .. } => CoreError::Conflict(e.to_string()),
            mia_git::GitError::Remote(_) => CoreError::Remote(e.to_string()),
            mia_git::GitError::NotARepository(_) | mia_git::GitError::Invalid(_) => {
                CoreError::Invalid(e.to_string())
            }
            _ => CoreError::Failed(e.to_string()),
        }
    }
}

/// The repository root a directory belongs to, for approvals and trust:
/// a linked worktree shares its main tree's, so nothing is granted twice.
pub fn project_key(dir: &Path) -> String {
    // `\\?\C:\p` (what std's canonicalize gives on Windows) and `C:\p`
    // are one project.
    let dir = dunce::simplified(dir);
    mia_git::main_root_of(dir)
        .unwrap_or_else(|| dir.to_path_buf())
        .display()
        .to_string()
}

fn state_view(s: mia_git::WorktreeState) -> mia_protocol::WorktreeState {
    match s {
        mia_git::WorktreeState::Ok => mia_protocol::WorktreeState::Ok,
        mia_git::WorktreeState::BranchChanged => mia_protocol::WorktreeState::BranchChanged,
        mia_git::WorktreeState::Missing => mia_protocol::WorktreeState::Missing,
    }
}

pub(crate) fn trash_view(t: &mia_git::TrashEntry) -> mia_protocol::TrashView {
    mia_protocol::TrashView {
        id: t.id.clone(),
        worktree: t.worktree.clone(),
        operation: match t.operation {
            mia_git::TrashOperation::Remove => mia_protocol::TrashOperation::Remove,
            mia_git::TrashOperation::Reset => mia_protocol::TrashOperation::Reset,
            mia_git::TrashOperation::Take => mia_protocol::TrashOperation::Take,
            mia_git::TrashOperation::Promote => mia_protocol::TrashOperation::Promote,
            mia_git::TrashOperation::AutoCleanup => mia_protocol::TrashOperation::AutoCleanup,
        },
        created_at: t.created_at_ms as i64,
        root: t.root.display().to_string(),
        files: t.files.clone(),
        refs: t.refs.iter().map(|(n, _)| n.clone()).collect(),
        submodule_commits: t
            .submodule_commits
            .iter()
            .map(|(p, c)| format!("{p}@{c}"))
            .collect(),
    }
}

fn worktree_view(
    w: mia_git::WorktreeInfo,
    sessions: Vec<WorktreeSessionRef>,
    trash: Option<&mia_git::TrashEntry>,
) -> WorktreeView {
    WorktreeView {
        name: w.name,
        path: w.path.display().to_string(),
        branch: w.branch,
        base: w.base,
        base_ref: w.base_ref,
        head: w.head,
        created_at: w.created_at_ms as i64,
        size_bytes: w.size_bytes,
        dirty: w.dirty,
        ahead: w.ahead,
        merged: w.merged,
        would_lose: w.would_lose,
        sessions,
        state: state_view(w.state),
        recorded_branch: w.recorded_branch,
        trash: trash.map(trash_view),
    }
}

fn script_view(r: &mia_git::ScriptResult) -> ScriptView {
    ScriptView {
        command: r.command.clone(),
        exit_code: r.exit_code,
        cancelled: r.cancelled,
        duration_ms: r.duration_ms,
        output: r.output.clone(),
    }
}

/// `worktree compare` options.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// Run `worktree.checkCommand` in both attempts first.
    pub check: bool,
    /// List each changed file's hunks against the base (`files[].hunks`).
    pub hunks: bool,
}

impl Runtime {
    /// The worktrees of the repository `dir` is in, with `worktree.*` settings.
    async fn worktrees(&self, dir: &Path) -> Result<Worktrees, CoreError> {
        let dir = crate::limits::project_dir(dir, &self.options().paths)?;
        let key = project_key(&dir);
        let trusted = {
            let key = key.clone();
            self.inner
                .store
                .call(move |db| db.is_workspace_trusted(&key))
                .await?
        };
        let config = self.load_config(Some(dir.clone())).await?;
        let paths = self.options().paths.clone();
        let attempts = self.inner.attempts.clone();
        tokio::task::spawn_blocking(move || -> Result<Worktrees, CoreError> {
            let repo = mia_git::Repo::discover(&dir)?;
            let w = config.merged.worktree.clone().unwrap_or_default();
            // Commands and hooks from a project config (it came with the
            // repository) apply only once the workspace is trusted; until
            // then the value of the layers below (global, built-in) stands.
            let layers: Vec<&mia_config::WorktreeConfig> = config
                .layers
                .iter()
                .rev()
                .filter(|l| trusted || l.kind != mia_config::LayerKind::Project)
                .filter_map(|l| l.file.worktree.as_ref())
                .collect();
            let pick = |f: &dyn Fn(&mia_config::WorktreeConfig) -> bool| {
                layers.iter().copied().find(|w| f(w))
            };
            let defaults = mia_git::Settings::default();
            // Where worktrees go: a project's value only once trusted, and
            // then only inside the repository; a person's global value
            // anywhere they like.
            let directory = config
                .layers
                .iter()
                .rev()
                .filter(|l| trusted || l.kind != mia_config::LayerKind::Project)
                .find_map(|l| {
                    let d = l.file.worktree.as_ref()?.directory.as_ref()?;
                    Some((l.kind, PathBuf::from(d)))
                });
            let (directory, contained) = match directory {
                Some((mia_config::LayerKind::Global, d)) => (d, false),
                Some((_, d)) => (d, true),
                None => (defaults.directory, true),
            };
            let settings = mia_git::Settings {
                directory,
                contained,
                branch_prefix: pick(&|w| w.branch_prefix.is_some())
                    .and_then(|w| w.branch_prefix.clone())
                    .unwrap_or(defaults.branch_prefix),
                run_hooks: pick(&|w| w.run_hooks.is_some())
                    .and_then(|w| w.run_hooks)
                    .unwrap_or(false),
                start_scripts: pick(&|w| w.start_scripts.is_some())
                    .and_then(|w| w.start_scripts.clone())
                    .unwrap_or_default(),
                check_command: pick(&|w| w.check_command.is_some())
                    .and_then(|w| w.check_command.clone()),
                auto_cleanup: w.auto_cleanup.unwrap_or(true),
            };
            // Start scripts and the check command run in the OS sandbox of
            // the worktree they run in.
            let confine_config = config.clone();
            let wt = Worktrees::new(repo, settings).with_confinement(std::sync::Arc::new(
                move |dir: &Path| {
                    crate::sandbox::script_confinement(&confine_config, dir, &paths).unwrap_or_else(
                        || mia_sandbox::Confinement {
                            policy: mia_sandbox::SandboxPolicy::off(),
                            gate: None,
                        },
                    )
                },
            ));
            Ok(match attempts {
                Some(feed) => wt.with_changes(feed),
                None => wt,
            })
        })
        .await
        .map_err(|e| CoreError::Internal(format!("a worktree task failed: {e}")))?
    }

    pub(crate) async fn on_git<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, mia_git::GitError> + Send + 'static,
    ) -> Result<T, CoreError> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| CoreError::Internal(format!("a worktree task failed: {e}")))?
            .map_err(CoreError::from)
    }

    /// The sessions whose directory is `path`.
    async fn sessions_in(&self, path: &Path) -> Result<Vec<mia_store::SessionListItem>, CoreError> {
        let dir = path.display().to_string();
        let filter = mia_store::SessionFilter {
            directory: Some(dir),
            include_archived: false,
            ..Default::default()
        };
        self.inner
            .store
            .call(move |db| db.list_sessions(&filter))
            .await
    }

    /// `worktree list`.
    pub async fn worktree_list(&self, dir: PathBuf) -> Result<Vec<WorktreeView>, CoreError> {
        let wt = self.worktrees(&dir).await?;
        let list = self.on_git(move || wt.list()).await?;
        let mut out = Vec::with_capacity(list.len());
        for w in list {
            let sessions = self
                .sessions_in(&w.path)
                .await?
                .into_iter()
                .map(|i| WorktreeSessionRef {
                    id: i.session.id.to_string(),
                    title: i.session.title,
                    status: i.session.status.as_str().to_string(),
                })
                .collect();
            out.push(worktree_view(w, sessions, None));
        }
        Ok(out)
    }

    /// `worktree create`: start scripts stream as `Event::WorktreeLog`.
    pub async fn worktree_create(
        &self,
        dir: PathBuf,
        name: Option<String>,
        base: Option<String>,
        cancel: mia_git::Cancel,
    ) -> Result<WorktreeCreated, CoreError> {
        let wt = self.worktrees(&dir).await?;
        let root = wt.repo.root.display().to_string();
        let rt = self.clone();
        let c = self
            .on_git(move || {
                let opts = mia_git::CreateOptions { name, base };
                wt.create(&opts, &cancel, &mut |l| {
                    rt.emit(Event::WorktreeLog {
                        directory: root.clone(),
                        name: l.worktree.clone(),
                        command: l.script.clone(),
                        line: l.line.clone(),
                        stderr: l.stderr,
                    });
                })
            })
            .await?;
        Ok(WorktreeCreated {
            name: c.name,
            path: c.path.display().to_string(),
            branch: c.branch,
            base: c.base,
            head: c.head,
            included: c.included,
            submodules: c.submodules,
            scripts: c.scripts.iter().map(script_view).collect(),
        })
    }

    /// `worktree remove`: refused (with what would be lost) unless `force`,
    /// and while a session in it is running.
    pub async fn worktree_remove(
        &self,
        dir: PathBuf,
        name: String,
        force: bool,
    ) -> Result<WorktreeView, CoreError> {
        let wt = self.worktrees(&dir).await?;
        let path = {
            let wt = wt.clone();
            let n = name.clone();
            self.on_git(move || wt.attempt_path(&n)).await?
        };
        for s in self.sessions_in(&path).await? {
            if s.session.status != mia_protocol::SessionStatus::Idle {
                return Err(CoreError::Conflict(format!(
                    "session {} is running in worktree {name}: stop it first",
                    s.session.id
                )));
            }
        }
        let (removed, trash) = self.on_git(move || wt.remove(&name, force)).await?;
        Ok(worktree_view(removed, Vec::new(), trash.as_ref()))
    }

    /// `worktree reset`: back to its base, what it drops kept in the trash
    /// first (`None`: there was nothing to keep).
    pub async fn worktree_reset(
        &self,
        dir: PathBuf,
        name: String,
    ) -> Result<Option<mia_protocol::TrashView>, CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || wt.reset(&name).map(|(_, t)| t.as_ref().map(trash_view)))
            .await
    }

    /// `worktree trash`: what forced operations and resets kept.
    pub async fn worktree_trash(
        &self,
        dir: PathBuf,
    ) -> Result<Vec<mia_protocol::TrashView>, CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || wt.trash_list().map(|v| v.iter().map(trash_view).collect()))
            .await
    }

    /// `worktree trash restore ID [--into DIR]`: where the files went.
    pub async fn worktree_trash_restore(
        &self,
        dir: PathBuf,
        id: String,
        into: Option<PathBuf>,
    ) -> Result<(mia_protocol::TrashView, PathBuf), CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || {
            wt.trash_restore(&id, into.as_deref())
                .map(|(t, p)| (trash_view(&t), p))
        })
        .await
    }

    /// What the sessions in `path` used.
    async fn usage_in(&self, path: &Path) -> Result<AttemptUsage, CoreError> {
        let mut u = AttemptUsage::default();
        let mut cost = Some(0.0);
        for s in self.sessions_in(path).await? {
            u.sessions += 1;
            let id = s.session.id;
            let messages = self
                .inner
                .store
                .call(move |db| db.get_messages(&id, &mia_store::MessageQuery::default()))
                .await?;
            if let (Some(first), Some(last)) = (messages.first(), messages.last()) {
                u.duration_ms += (last.created_at - first.created_at).max(0) as u64;
            }
            for m in messages
                .iter()
                .filter(|m| m.role == mia_protocol::Role::Assistant)
            {
                u.steps += 1;
                if let Some(t) = m.metadata.tokens {
                    u.input_tokens += t.input + t.cache_read + t.cache_write;
                    u.output_tokens += t.output;
                }
                cost = match (cost, m.metadata.cost_usd) {
                    (Some(c), Some(x)) => Some(c + x),
                    _ => None,
                };
            }
        }
        u.cost = cost.filter(|_| u.steps > 0);
        Ok(u)
    }

    /// `worktree compare A B` (a worktree name or `main` each).
    pub async fn worktree_compare(
        &self,
        dir: PathBuf,
        a: String,
        b: String,
        opts: CompareOptions,
    ) -> Result<ComparisonView, CoreError> {
        let wt = self.worktrees(&dir).await?;
        if opts.check {
            for name in [a.clone(), b.clone()] {
                let wt = wt.clone();
                let rt = self.clone();
                let root = wt.repo.root.display().to_string();
                self.on_git(move || {
                    let n = name.clone();
                    wt.check(&name, &mia_git::Cancel::default(), &mut |l| {
                        rt.emit(Event::WorktreeLog {
                            directory: root.clone(),
                            name: n.clone(),
                            command: l.script.clone(),
                            line: l.line.clone(),
                            stderr: l.stderr,
                        });
                    })
                })
                .await?;
            }
        }
        let (cmp, checks, hunks) = {
            let wt = wt.clone();
            let (a, b) = (a.clone(), b.clone());
            self.on_git(move || {
                let cmp = wt.compare(&a, &b)?;
                let mut hunks = std::collections::HashMap::new();
                if opts.hunks {
                    for x in [&cmp.a, &cmp.b] {
                        for f in &x.files {
                            let list = wt.attempt_hunks(&x.name, &cmp.base, &f.path)?;
                            hunks.insert((x.name.clone(), f.path.clone()), list);
                        }
                    }
                }
                Ok((cmp, (wt.last_check(&a), wt.last_check(&b)), hunks))
            })
            .await?
        };
        let view =
            |x: &mia_git::Attempt, check: Option<mia_git::ScriptResult>, usage| AttemptView {
                name: x.name.clone(),
                path: x.path.display().to_string(),
                files: x
                    .files
                    .iter()
                    .map(|f| AttemptFile {
                        path: f.path.clone(),
                        status: f.status,
                        additions: f.additions,
                        deletions: f.deletions,
                        binary: f.binary,
                        hunks: hunks
                            .get(&(x.name.clone(), f.path.clone()))
                            .map(|l| l.iter().cloned().map(crate::ship::hunk_view).collect())
                            .unwrap_or_default(),
                    })
                    .collect(),
                stats: AttemptStats {
                    files: x.stats.files,
                    additions: x.stats.additions,
                    deletions: x.stats.deletions,
                },
                usage,
                check: check.as_ref().map(script_view),
            };
        let ua = self.usage_in(&cmp.a.path).await?;
        let ub = self.usage_in(&cmp.b.path).await?;
        Ok(ComparisonView {
            base: cmp.base.clone(),
            a: view(&cmp.a, checks.0, ua),
            b: view(&cmp.b, checks.1, ub),
            between: cmp
                .between
                .into_iter()
                .map(|x| BetweenView {
                    path: x.path,
                    status: x.status,
                })
                .collect(),
        })
    }

    /// The unified diff of one file of an attempt against `base`.
    pub async fn worktree_file_diff(
        &self,
        dir: PathBuf,
        name: String,
        base: String,
        path: String,
    ) -> Result<mia_protocol::WorktreeFileDiff, CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || {
            let diff = wt.file_diff(&name, &base, &path)?;
            let sides = wt.file_sides(&name, &base, &path)?;
            let files = if sides.before.is_none() && sides.after.is_none() {
                Vec::new()
            } else {
                vec![mia_snapshot::contents_diff(
                    &path,
                    sides.before,
                    sides.after,
                )]
            };
            Ok(mia_protocol::WorktreeFileDiff { diff, files })
        })
        .await
    }

    /// Take `path` from attempt `from` into attempt `into` (or `main`):
    /// the whole file, or (`hunk`) one hunk of what `from` changed there.
    pub async fn worktree_take(
        &self,
        dir: PathBuf,
        from: String,
        path: String,
        into: String,
        hunk: Option<String>,
        force: bool,
    ) -> Result<Option<mia_protocol::TrashView>, CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || {
            match &hunk {
                Some(id) => wt.take_hunk(&from, &path, id, &into, force),
                None => wt.take(&from, &path, &into, force),
            }
            .map(|t| t.as_ref().map(trash_view))
        })
        .await
    }

    /// One file as attempt `a` has it against attempt `b`'s: the direct
    /// A↔B diff of a file both changed.
    pub async fn worktree_between(
        &self,
        dir: PathBuf,
        a: String,
        b: String,
        path: String,
    ) -> Result<mia_protocol::WorktreeFileDiff, CoreError> {
        let wt = self.worktrees(&dir).await?;
        self.on_git(move || {
            let sides = wt.between_sides(&a, &b, &path)?;
            let files = if sides.before.is_none() && sides.after.is_none() {
                Vec::new()
            } else {
                vec![mia_snapshot::contents_diff(
                    &path,
                    sides.before,
                    sides.after,
                )]
            };
            let diff = files
                .first()
                .map(|f| mia_snapshot::to_patch(std::slice::from_ref(f)))
                .unwrap_or_default();
            Ok(mia_protocol::WorktreeFileDiff { diff, files })
        })
        .await
    }

    /// `worktree promote NAME --merge|--keep-branch`.
    pub async fn worktree_promote(
        &self,
        dir: PathBuf,
        name: String,
        keep_branch: bool,
        force: bool,
    ) -> Result<PromotedView, CoreError> {
        let mut wt = self.worktrees(&dir).await?;
        // Never remove (auto-cleanup) a worktree a session is working in.
        let path = {
            let wt = wt.clone();
            let n = name.clone();
            self.on_git(move || wt.attempt_path(&n)).await?
        };
        if !self
            .sessions_in(&path)
            .await?
            .into_iter()
            .all(|s| s.session.status == mia_protocol::SessionStatus::Idle)
        {
            wt.settings.auto_cleanup = false;
        }
        let mode = if keep_branch {
            PromoteMode::KeepBranch
        } else {
            PromoteMode::Merge
        };
        let p = self.on_git(move || wt.promote(&name, mode, force)).await?;
        Ok(PromotedView {
            name: p.name,
            branch: p.branch,
            head: p.head,
            merged_into: p.merged_into,
            commit: p.commit,
            fast_forward: p.fast_forward,
            removed: p.removed,
            others: p.others,
            committed: p.committed,
            kept: p.kept,
            trash: p.trash.as_ref().map(trash_view),
        })
    }
}
