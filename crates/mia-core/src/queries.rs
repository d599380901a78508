//! What the CLI's listing and maintenance commands read and write: session
//! lookup by id, prefix or slug, messages, approvals and
//! workspace trust, snapshot rows and gc. The store stays behind the
//! runtime; these are the shapes the commands print.

use std::path::{Path, PathBuf};

use mia_permission::PermissionRule;
use mia_protocol::{Message, Session, SessionId};
pub use mia_store::{ProjectApproval, SessionListItem, SnapshotKind, SnapshotRow};

use crate::CoreError;
use crate::runtime::Runtime;
use crate::views::SessionListQuery;

/// What `snapshot gc` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcSummary {
    pub pruned: u64,
    pub kept: usize,
    pub report: mia_snapshot::GcReport,
}

impl Runtime {
    /// A session by full id, unique id prefix (4+ characters) or slug.
    pub async fn resolve_session(&self, reference: &str) -> Result<Session, CoreError> {
        if let Ok(id) = reference.parse::<SessionId>() {
            return self.inner.store.call(move |db| db.get_session(&id)).await;
        }
        let all = self
            .session_items(SessionListQuery {
                archived: true,
                ..Default::default()
            })
            .await?;
        let matches: Vec<Session> = all
            .into_iter()
            .map(|i| i.session)
            .filter(|s| {
                s.slug == reference
                    || (reference.len() >= 4 && s.id.to_string().starts_with(reference))
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(CoreError::Invalid(format!(
                "no session matches `{reference}`; `mia-code sessions list` shows ids and slugs"
            ))),
            many => Err(CoreError::Invalid(format!(
                "`{reference}` matches {} sessions ({}); give more of the id",
                many.len(),
                many.iter()
                    .map(|s| s.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Sessions matching `query`, newest first, with their message counts.
    pub async fn session_items(
        &self,
        query: SessionListQuery,
    ) -> Result<Vec<SessionListItem>, CoreError> {
        let filter = query.filter();
        self.inner
            .store
            .call(move |db| db.list_sessions(&filter))
            .await
    }

    /// A session's messages, oldest first (compacted ones too with `all`).
    pub async fn session_messages(
        &self,
        id: SessionId,
        all: bool,
    ) -> Result<Vec<Message>, CoreError> {
        self.inner
            .store
            .call(move |db| {
                db.get_messages(
                    &id,
                    &mia_store::MessageQuery {
                        include_compacted: all,
                        ..Default::default()
                    },
                )
            })
            .await
    }

    pub async fn message_count(&self, id: SessionId) -> Result<u64, CoreError> {
        self.inner.store.call(move |db| db.message_count(&id)).await
    }

    /// A project's "always for this project" rules given to `agent`, and
    /// whether the project is trusted.
    pub async fn project_permission_inputs(
        &self,
        project: &Path,
        agent: &str,
    ) -> Result<(Vec<PermissionRule>, bool), CoreError> {
        let key = crate::worktrees::project_key(project);
        let agent = agent.to_string();
        self.inner
            .store
            .call(move |db| {
                Ok((
                    db.project_approval_rules(&key, &agent)?,
                    db.is_workspace_trusted(&key)?,
                ))
            })
            .await
    }

    /// Approvals of one project (`Some`), or of every project.
    pub async fn project_approvals(
        &self,
        project: Option<PathBuf>,
    ) -> Result<Vec<ProjectApproval>, CoreError> {
        let key = project.map(|p| p.to_string_lossy().to_string());
        self.inner
            .store
            .call(move |db| db.project_approvals(key.as_deref()))
            .await
    }

    /// Revoke an approval by its id (any project); returns what it was.
    pub async fn revoke_approval_id(&self, id: i64) -> Result<ProjectApproval, CoreError> {
        self.inner
            .store
            .call(move |db| db.revoke_project_approval(id))
            .await
    }

    /// Trust or untrust a workspace; false when untrusting one that was
    /// not trusted.
    pub async fn set_workspace_trust(
        &self,
        project: &Path,
        trust: bool,
    ) -> Result<bool, CoreError> {
        let project = &dunce::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let key = crate::worktrees::project_key(project);
        // Trusting approves the project's hook set as it is now (a changed
        // set asks again); read before anything is written, so a config
        // that does not load changes nothing.
        let hooks = if trust {
            let config = self.load_config(Some(project.to_path_buf())).await?;
            crate::hooks::project_hooks_hash(&config)
        } else {
            None
        };
        self.inner
            .store
            .call(move |db| {
                if trust {
                    db.trust_workspace(&key)?;
                    match hooks {
                        Some(h) => db.approve_hooks(&key, &h)?,
                        None => db.forget_hooks(&key)?,
                    }
                    Ok(true)
                } else {
                    db.forget_hooks(&key)?;
                    db.untrust_workspace(&key)
                }
            })
            .await
    }

    /// Whether `directory`'s workspace is trusted, and its project hooks:
    /// how many, and whether the set as it is now is the approved one.
    pub async fn project_trust(
        &self,
        directory: &Path,
    ) -> Result<mia_protocol::TrustView, CoreError> {
        let directory = &self.project_dir(directory)?;
        let config = self.load_config(Some(directory.to_path_buf())).await?;
        let key = crate::worktrees::project_key(directory);
        let (trusted, approved) = self
            .inner
            .store
            .call(move |db| Ok((db.is_workspace_trusted(&key)?, db.approved_hooks(&key)?)))
            .await?;
        let hash = crate::hooks::project_hooks_hash(&config);
        let hooks = crate::hooks::project_hook_count(&config);
        Ok(mia_protocol::TrustView {
            directory: directory.display().to_string(),
            trusted,
            project_hooks: hooks,
            hooks_approved: hash.is_some() && trusted && hash == approved,
        })
    }

    /// Index a snapshot taken for `session` outside a turn (the CLI's
    /// `snapshot capture --session`): its baseline when it has none yet.
    pub async fn index_capture(
        &self,
        session: SessionId,
        snap: &mia_snapshot::Snapshot,
    ) -> Result<(), CoreError> {
        let mut row = crate::snapshots::new_snapshot(session, snap, mia_store::SnapshotKind::Step);
        self.inner
            .store
            .call(move |db| {
                if db.snapshots(&session)?.is_empty() {
                    row.kind = mia_store::SnapshotKind::Baseline;
                }
                db.add_snapshot(&row).map(|_| ())
            })
            .await?;
        Ok(())
    }

    /// A session's snapshot rows, oldest first.
    pub async fn snapshot_rows(&self, id: SessionId) -> Result<Vec<SnapshotRow>, CoreError> {
        self.inner.store.call(move |db| db.snapshots(&id)).await
    }

    /// Retention for every session of `project` (keep `keep` each plus the
    /// baseline), their refs dropped, snapshots older than
    /// `snapshot.maxAgeDays` (30) released, then `git gc`.
    pub async fn snapshot_gc(&self, project: PathBuf, keep: usize) -> Result<GcSummary, CoreError> {
        let key = project.to_string_lossy().to_string();
        let pruned = self
            .inner
            .store
            .call(move |db| crate::retention::prune_index(db, &key, keep))
            .await?;
        let max_age = match self.load_config(Some(project.clone())).await {
            Ok(c) => crate::snapshots::snapshot_max_age(&c),
            Err(_) => crate::snapshots::EXPIRY,
        };
        let cutoff =
            mia_protocol::now_ms() - i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
        let key = project.to_string_lossy().to_string();
        let aged = self
            .inner
            .store
            .call(move |db| db.expire_snapshots(&key, cutoff))
            .await?;
        let config = crate::snapshots::store_config(&self.options().paths);
        tokio::task::spawn_blocking(move || {
            let mut repo = mia_snapshot::SnapshotRepo::open(&project, config)?;
            let mut released = crate::retention::release(&repo, &pruned)?;
            for (sid, p) in aged {
                released += repo.release(&sid.to_string(), &p.released, &p.unused)?;
            }
            let expired = repo.expire_unowned(max_age)?;
            let mut report = repo.gc()?;
            report.refs_removed = released + expired;
            Ok::<_, mia_snapshot::SnapshotError>(GcSummary {
                pruned: pruned.pruned,
                kept: pruned.kept,
                report,
            })
        })
        .await
        .map_err(|e| CoreError::Internal(format!("the gc task failed: {e}")))?
        .map_err(|e| CoreError::Failed(e.to_string()))
    }
}

impl Runtime {
    /// Give the session database's free space back (`VACUUM`) once a
    /// fifth of it is free (after retention deleted sessions).
    pub async fn compact_store(&self) -> Result<mia_store::Compacted, CoreError> {
        self.inner.store.call(|db| db.compact(0.2)).await
    }
}

/// What `mia-code doctor` reports about the session database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHealth {
    pub path: PathBuf,
    /// Set when the file was damaged and moved aside on this open.
    pub recovery: Option<String>,
    pub schema_version: i64,
    pub sessions: u64,
    /// `integrity_check` and `foreign_key_check` findings; empty when sound.
    pub problems: Vec<String>,
}

/// Create a directory 0700 (or make an existing one private).
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    mia_store::private::ensure_private_dir(dir)
}

/// Make every sensitive path under `$MIA_CODE_HOME` private; returns what changed.
pub fn secure_home(home: &Path) -> std::io::Result<Vec<(PathBuf, u32)>> {
    mia_store::private::secure_home(home)
}

/// Files and directories under `$MIA_CODE_HOME` that other users can read,
/// with their modes (`doctor`).
pub fn exposed_files(home: &Path) -> Vec<(PathBuf, u32)> {
    mia_store::private::exposed(home)
}

/// Open the session database under `paths` and check it.
pub fn store_health(paths: &mia_config::Paths) -> Result<StoreHealth, CoreError> {
    let db = mia_store::SessionDb::open(paths.data_db())?;
    let mut problems = db.integrity_check()?;
    problems.extend(db.foreign_key_check()?);
    Ok(StoreHealth {
        path: paths.data_db(),
        recovery: db.recovery().map(|r| r.to_string()),
        schema_version: db.schema_version().unwrap_or(-1),
        sessions: db.session_count().unwrap_or(0),
        problems,
    })
}

impl Runtime {
    /// The session's todo list as the `todo` tool left it (ACP's plan).
    pub async fn session_todos(&self, id: SessionId) -> Result<Vec<mia_tools::Todo>, CoreError> {
        let state = self.state(id).await?;
        let list = state
            .todos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .items
            .clone();
        Ok(list)
    }
}

impl Runtime {
    /// Route the session's write and edit tools through an editor's
    /// buffers (an ACP client offering `fs/*`); `None` detaches it.
    pub async fn attach_editor(
        &self,
        id: SessionId,
        editor: Option<std::sync::Arc<dyn mia_tools::EditorFs>>,
    ) -> Result<(), CoreError> {
        let state = self.state(id).await?;
        state.with(|l| l.editor = editor.map(mia_tools::EditorFiles));
        Ok(())
    }
}

/// What mia-code keeps on disk (`doctor`): bytes of each part.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct StorageSizes {
    /// `data.db` with its `-wal` and `-shm`.
    pub database: u64,
    /// `snapshots/`: every repository's snapshot store.
    pub snapshots: u64,
    pub logs: u64,
    pub plugins: u64,
}

/// The sizes of the database, the snapshot stores, the logs and the plugins.
pub fn storage_sizes(paths: &mia_config::Paths) -> StorageSizes {
    let db = paths.data_db();
    let file = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let with = |suffix: &str| {
        let mut s = db.clone().into_os_string();
        s.push(suffix);
        file(PathBuf::from(s))
    };
    StorageSizes {
        database: file(db.clone()) + with("-wal") + with("-shm"),
        snapshots: mia_snapshot::dir_size(&paths.home.join("snapshots")),
        logs: mia_snapshot::dir_size(&paths.logs_dir()),
        plugins: mia_snapshot::dir_size(&paths.plugins_dir()),
    }
}
