//! The read side for front ends: what the UI shows (session detail, undo
//! timeline and previews, diffs, agents, project files, settings, compiled
//! permission rules, approvals). Types are in `mia_protocol::view`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mia_config::Config;
use mia_protocol::{
    AgentInfo, AgentModeView, ApprovalView, DiffScope, DiffView, FileDiff, HistoryAction,
    PartContent, PermissionsView, PreviewAction, PreviewFile, ProjectSummary, ProviderInfo,
    RevertPreview, RuleView, SessionDetail, SessionId, SessionSummary, SettingsUpdate,
    SettingsView, StepKindView, TimelineStep,
};
use mia_snapshot::{SnapshotRepo, StepKind, StepRecord};

use crate::CoreError;
use crate::agents::Agents;
use crate::runtime::{Runtime, lock};

/// Which sessions [`Runtime::list_sessions`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionListQuery {
    /// Only this project's (a directory; canonicalised).
    pub project: Option<String>,
    /// Archived ones too.
    pub archived: bool,
    pub limit: Option<u32>,
    /// Only sessions created at or after this time (Unix ms).
    pub since: Option<i64>,
    /// Only sessions with this status (as readers see it).
    pub status: Option<mia_protocol::SessionStatus>,
}

impl SessionListQuery {
    pub(crate) fn filter(&self) -> mia_store::SessionFilter {
        mia_store::SessionFilter {
            project_id: self.project.as_deref().map(|p| {
                let dir = dunce::canonicalize(std::path::Path::new(p))
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| p.to_string());
                mia_store::project_id_for(&dir)
            }),
            include_archived: self.archived,
            limit: self.limit,
            since: self.since,
            status: self.status,
            ..Default::default()
        }
    }
}

/// Most paths `files` returns (the @-mention list).
pub const MAX_FILES: usize = 20_000;

/// Serialises writes of the global config file from the settings screen.
static SETTINGS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Replace `path` atomically with `text`: a symlink is followed (its target
/// is replaced), the file keeps its permissions (a new one is 0600: config
/// files can hold API keys), and the temporary file has a unique name.
fn replace_file(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let target = dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target.parent().unwrap_or(Path::new("."));
    let existing = std::fs::metadata(&target).ok().map(|m| m.permissions());
    // `tempfile` creates it 0600 with a unique name; removed if we fail.
    let mut tmp = tempfile::Builder::new()
        .prefix(".mia-code-config-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    if let Some(perms) = existing {
        tmp.as_file().set_permissions(perms)?;
    }
    tmp.persist(&target).map_err(|e| e.error)?;
    // The rename itself survives a crash once the directory is synced.
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// Provider ids always listed in settings (others appear when configured).
const KNOWN_PROVIDERS: [&str; 3] = ["anthropic", "openai", "google"];

impl Runtime {
    /// Everything a front end needs to draw a session, including asks that
    /// are waiting (so a reloaded window shows them).
    pub async fn session_detail(&self, id: SessionId) -> Result<SessionDetail, CoreError> {
        self.session_detail_with(id, false).await
    }

    /// [`Runtime::session_detail`], with the compaction archive when
    /// `archived` (archived messages carry `compacted_by`).
    pub async fn session_detail_with(
        &self,
        id: SessionId,
        archived: bool,
    ) -> Result<SessionDetail, CoreError> {
        // Read before the store: every Event up to here may be in what loads.
        let seq = self.event_seq(id);
        let epoch = self.epoch();
        let (session, messages) = self
            .inner
            .store
            .call(move |db| {
                let session = db.get_session(&id)?;
                let messages = db.get_messages(
                    &id,
                    &mia_store::MessageQuery {
                        include_compacted: archived,
                        ..Default::default()
                    },
                )?;
                Ok((session, messages))
            })
            .await?;
        let (pending_permissions, running, queued_agent) = self.live(id);
        // The last request's estimate, else (below) one from the history alone.
        let last_context = self
            .loaded_state(id)
            .and_then(|s| s.with(|l| l.last_context.clone()));
        let model = session
            .model
            .as_deref()
            .and_then(|m| m.parse::<mia_providers::ModelRef>().ok())
            .filter(|_| last_context.is_none());
        // The config, read once, only when something below needs it.
        let config = if session.agent.is_none() || model.is_some() {
            self.load_config(Some(PathBuf::from(&session.directory)))
                .await
                .ok()
        } else {
            None
        };
        let agent = match (&session.agent, &config) {
            (Some(a), _) => a.clone(),
            (None, Some(c)) => c.default_agent().to_string(),
            (None, None) => "build".into(),
        };
        let context = last_context.or_else(|| {
            let (model, config) = (model.as_ref()?, config.as_ref()?);
            let visible: Vec<&mia_protocol::Message> = messages
                .iter()
                .filter(|m| m.compacted_by.is_none())
                .collect();
            let mut est = crate::compaction::Estimates::default();
            Some(crate::compaction::context_usage(
                config, model, &visible, None, &mut est,
            ))
        });
        Ok(SessionDetail {
            session,
            messages,
            pending_permissions,
            running,
            queued_agent,
            agent,
            context,
            seq,
            epoch,
        })
    }

    /// Sessions as listed in the sidebar.
    pub async fn list_sessions(
        &self,
        query: SessionListQuery,
    ) -> Result<Vec<SessionSummary>, CoreError> {
        let filter = query.filter();
        let items = self
            .inner
            .store
            .call(move |db| db.list_sessions(&filter))
            .await?;
        Ok(items
            .into_iter()
            .map(|i| {
                let dir = std::path::Path::new(&i.session.directory);
                let worktree = mia_git::main_root_of(dir)
                    .and(dir.file_name())
                    .map(|n| n.to_string_lossy().to_string());
                SessionSummary {
                    session: i.session,
                    message_count: i.message_count,
                    worktree,
                }
            })
            .collect())
    }

    /// Project directories with sessions, most recently used first.
    pub async fn projects(&self) -> Result<Vec<ProjectSummary>, CoreError> {
        let items = self
            .inner
            .store
            .call(|db| db.list_sessions(&mia_store::SessionFilter::default()))
            .await?;
        let mut by_dir: HashMap<String, ProjectSummary> = HashMap::new();
        for i in items {
            let s = i.session;
            let e = by_dir
                .entry(s.directory.clone())
                .or_insert_with(|| ProjectSummary {
                    directory: s.directory.clone(),
                    project_id: s.project_id.clone(),
                    sessions: 0,
                    last_used: 0,
                });
            e.sessions += 1;
            e.last_used = e.last_used.max(s.updated_at);
        }
        let mut list: Vec<ProjectSummary> = by_dir.into_values().collect();
        list.sort_by_key(|p| std::cmp::Reverse(p.last_used));
        Ok(list)
    }

    /// The session's file-changing steps and those of the subagents it
    /// delegated to (one timeline, spec 015): a child's step counts as part
    /// of the parent message that made the `task` call, so undoing or
    /// reverting the parent's turn includes what its children changed. A
    /// child's step ids are prefixed with its session id (`<child>:<id>`).
    pub async fn step_records(&self, id: SessionId) -> Result<Vec<StepRecord>, CoreError> {
        Ok(self
            .family_records(id)
            .await?
            .into_iter()
            .map(|(r, _)| r)
            .collect())
    }

    /// [`Runtime::step_records`] with, for each step, the subagent session
    /// that made it (`None`: the session's own).
    pub(crate) async fn family_records(
        &self,
        id: SessionId,
    ) -> Result<Vec<(StepRecord, Option<(SessionId, String)>)>, CoreError> {
        type Rows = Vec<(Vec<mia_store::StepRow>, Option<(SessionId, String, String)>)>;
        let rows: Rows = self
            .inner
            .store
            .call(move |db| {
                let mut out: Rows = vec![(db.snapshot_steps(&id)?, None)];
                // (session, the top-level message its steps belong to)
                let mut frontier: Vec<(SessionId, Option<String>)> = vec![(id, None)];
                for _ in 0..crate::delegate::MAX_DEPTH {
                    let mut next = Vec::new();
                    for (s, attributed) in &frontier {
                        for child in db.spawned_children(s)? {
                            let session = db.get_session(&child)?;
                            let Some(spawn) = session.spawned_by else {
                                continue;
                            };
                            let message = match attributed {
                                Some(m) => Some(m.clone()),
                                None => db.message_with_call(s, &spawn.call_id)?,
                            };
                            let Some(message) = message else { continue };
                            let agent = session.agent.unwrap_or_default();
                            out.push((
                                db.snapshot_steps(&child)?,
                                Some((child, message.clone(), agent)),
                            ));
                            next.push((child, Some(message)));
                        }
                    }
                    if next.is_empty() {
                        break;
                    }
                    frontier = next;
                }
                Ok(out)
            })
            .await?;
        let mut all: Vec<(StepRecord, Option<(SessionId, String)>)> = Vec::new();
        for (steps, child) in rows {
            for row in steps {
                let mut r: StepRecord = serde_json::from_value(row.step.record).map_err(|e| {
                    CoreError::Internal(format!("a stored snapshot step is unreadable: {e}"))
                })?;
                let from = match &child {
                    None => None,
                    Some((child_id, message, agent)) => {
                        let prefix = |s: &str| format!("{child_id}:{s}");
                        r.id = prefix(&r.id);
                        r.kind = match r.kind {
                            StepKind::Revert { undid } => StepKind::Revert {
                                undid: undid.iter().map(|u| prefix(u)).collect(),
                            },
                            StepKind::Redo { revert } => StepKind::Redo {
                                revert: prefix(&revert),
                            },
                            k => k,
                        };
                        r.message_id = message.clone();
                        Some((*child_id, agent.clone()))
                    }
                };
                all.push((r, from));
            }
        }
        // One timeline, in the order things happened (own steps first on a tie).
        all.sort_by_key(|(r, from)| (r.created_at, from.is_some()));
        Ok(all)
    }

    /// Run `f` on the session's snapshot repository (opened on first use), off the async runtime.
    pub(crate) async fn with_repo<T: Send + 'static>(
        &self,
        id: SessionId,
        f: impl FnOnce(&mut SnapshotRepo) -> Result<T, mia_snapshot::SnapshotError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let state = self.state(id).await?;
        let config = self.load_config(Some(state.directory.clone())).await?;
        let snapshot_config = crate::snapshots::snapshot_config(&config, &self.options().paths)
            .unwrap_or_else(|| crate::snapshots::store_config(&self.options().paths));
        let repo = state.project.snapshots.clone();
        let dir = state.directory.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = lock(&repo);
            if guard.is_none() {
                *guard = Some(
                    SnapshotRepo::open(&dir, snapshot_config)
                        .map_err(|e| CoreError::Failed(e.to_string()))?,
                );
            }
            match guard.as_mut() {
                Some(repo) => f(repo).map_err(|e| CoreError::Failed(e.to_string())),
                None => Err(CoreError::Internal(
                    "snapshot repository unavailable".into(),
                )),
            }
        })
        .await
        .map_err(|e| CoreError::Internal(format!("the snapshot task failed: {e}")))?
    }

    /// The session's file-changing steps, oldest first (spec 021's `/snapshots`).
    pub async fn timeline(&self, id: SessionId) -> Result<Vec<TimelineStep>, CoreError> {
        let family = self.family_records(id).await?;
        let subagent_of: HashMap<String, (SessionId, String)> = family
            .iter()
            .filter_map(|(r, from)| from.clone().map(|f| (r.id.clone(), f)))
            .collect();
        let records: Vec<StepRecord> = family.into_iter().map(|(r, _)| r).collect();
        let undone = mia_snapshot::undone_steps(&records);
        // Tool names by call id, from the session's stored tool calls.
        let messages = self
            .inner
            .store
            .call(move |db| db.get_messages(&id, &mia_store::MessageQuery::default()))
            .await?;
        let mut tools: HashMap<String, String> = HashMap::new();
        for m in &messages {
            for p in &m.parts {
                if let PartContent::ToolCall { call_id, tool, .. } = &p.content {
                    tools.insert(call_id.clone(), tool.clone());
                }
            }
        }
        // One entry per step that changed files (a shell command that changed nothing is not one).
        Ok(records
            .iter()
            .filter(|r| {
                !(r.kind == StepKind::Tool && r.changes.is_empty() && r.uncaptured.is_empty())
            })
            .enumerate()
            .map(|(i, r)| TimelineStep {
                index: u32::try_from(i + 1).unwrap_or(u32::MAX),
                id: r.id.clone(),
                message_id: r.message_id.clone(),
                tool_call_id: r.tool_call_id.clone(),
                tool: r.tool_call_id.as_ref().and_then(|c| tools.get(c).cloned()),
                kind: match r.kind {
                    StepKind::Tool => StepKindView::Tool,
                    StepKind::Revert { .. } => StepKindView::Revert,
                    StepKind::Redo { .. } => StepKindView::Redo,
                },
                before: r.before.clone(),
                after: r.after.clone(),
                changes: r.changes.clone(),
                uncaptured: r.uncaptured.iter().map(|u| u.path.clone()).collect(),
                undone: undone.contains(&r.id),
                created_at: r.created_at,
                subagent_session_id: subagent_of.get(&r.id).map(|(s, _)| s.to_string()),
                subagent: subagent_of.get(&r.id).map(|(_, a)| a.clone()),
            })
            .collect())
    }

    /// Exactly which files an undo/revert/redo would change, and the
    /// conflicts it would meet, without changing anything.
    pub async fn preview(
        &self,
        id: SessionId,
        action: HistoryAction,
    ) -> Result<RevertPreview, CoreError> {
        let records = self.step_records(id).await?;
        let a = action.clone();
        let (plan, conflicts, diff) = self
            .with_repo(id, move |repo| {
                let plan = crate::undo::plan(repo, &records, &a)?;
                let (conflicts, diff) = repo.preview(&plan)?;
                Ok((plan, conflicts, diff))
            })
            .await?;
        let conflict_of: HashMap<String, String> =
            conflicts.into_iter().map(|c| (c.path, c.reason)).collect();
        Ok(RevertPreview {
            action,
            steps: plan.steps.clone(),
            files: plan
                .files
                .iter()
                .map(|f| PreviewFile {
                    path: f.path.clone(),
                    action: match f.action {
                        mia_snapshot::FileAction::Restore => PreviewAction::Restore,
                        mia_snapshot::FileAction::Remove => PreviewAction::Remove,
                    },
                    was: f.was,
                    conflict: conflict_of.get(&f.path).cloned(),
                })
                .collect(),
            unrestorable: plan.unrestorable.iter().map(|u| u.path.clone()).collect(),
            left_alone: plan
                .skipped
                .iter()
                .map(|f| mia_protocol::LeftAlone {
                    path: f.path.clone(),
                    reason: match &f.session {
                        Some(s) => format!("changed by session {s} while the step ran"),
                        None if f.not_by_command => "changed while the command ran, but not by it (a person or another program)".into(),
                        None => "changed by another mia-code process while the step ran".into(),
                    },
                })
                .collect(),
            additions: plan.step_additions,
            deletions: plan.step_deletions,
            diff,
        })
    }

    /// A diff of the session, of one message or of one step (spec 077).
    pub async fn diff(&self, id: SessionId, scope: DiffScope) -> Result<DiffView, CoreError> {
        let records = self.step_records(id).await?;
        let files: Vec<FileDiff> = match &scope {
            DiffScope::Session => {
                let baseline = self
                    .inner
                    .store
                    .call(move |db| db.snapshots(&id))
                    .await?
                    .into_iter()
                    .find(|s| {
                        s.snapshot.kind == mia_store::SnapshotKind::Baseline
                            && s.snapshot.unavailable.is_none()
                    })
                    .map(|s| s.snapshot.hash)
                    .or_else(|| records.first().map(|r| r.before.clone()));
                let mut paths: Vec<PathBuf> = records
                    .iter()
                    .flat_map(|r| r.changes.iter().map(|c| PathBuf::from(&c.path)))
                    .collect();
                paths.sort();
                paths.dedup();
                match baseline {
                    Some(base) if !paths.is_empty() => {
                        self.with_repo(id, move |repo| repo.diff_worktree(&base, Some(&paths)))
                            .await?
                    }
                    _ => Vec::new(),
                }
            }
            DiffScope::Message { message_id } => {
                let steps: Vec<&StepRecord> = records
                    .iter()
                    .filter(|r| &r.message_id == message_id && r.kind == StepKind::Tool)
                    .collect();
                match (steps.first(), steps.last()) {
                    (Some(first), Some(last)) => {
                        let (a, b) = (first.before.clone(), last.after.clone());
                        let paths = changed_paths(&steps);
                        self.with_repo(id, move |repo| repo.diff_paths(&a, &b, &paths))
                            .await?
                    }
                    _ => Vec::new(),
                }
            }
            DiffScope::Step { step } => {
                let Some(r) = records
                    .iter()
                    .find(|r| &r.id == step || r.tool_call_id.as_deref() == Some(step.as_str()))
                else {
                    return Err(CoreError::Invalid(format!(
                        "step {step} changed no file in session {id} (see its timeline for the steps that did)"
                    )));
                };
                let (a, b) = (r.before.clone(), r.after.clone());
                let paths = changed_paths(&[r]);
                self.with_repo(id, move |repo| repo.diff_paths(&a, &b, &paths))
                    .await?
            }
        };
        let stats = mia_snapshot::stats(&files);
        // Binary files go into the patch as `GIT binary patch` sections.
        let (patch, files) = if files.iter().any(|f| f.binary) {
            self.with_repo(id, move |repo| Ok((repo.patch(&files), files)))
                .await?
        } else {
            (mia_snapshot::to_patch(&files), files)
        };
        Ok(DiffView {
            scope,
            summary: mia_snapshot::summary_line(&stats),
            patch,
            stats,
            files,
        })
    }

    /// Agents a front end can show (hidden ones left out), primary first.
    pub fn agents(&self, directory: &Path) -> Result<Vec<AgentInfo>, CoreError> {
        let directory = self.project_dir(directory)?;
        let config = Config::load(&self.options().paths, Some(&directory))?;
        Ok(agent_infos(&config, &self.options().paths))
    }

    /// Models to pick from (the composer's picker): the catalog's, for the
    /// providers that are configured or have a key.
    pub fn models(
        &self,
        directory: Option<&Path>,
    ) -> Result<Vec<mia_protocol::ModelChoice>, CoreError> {
        let settings = self.settings(directory)?;
        let usable: Vec<String> = settings
            .providers
            .iter()
            .filter(|p| p.key_source.is_some() || p.base_url.is_some())
            .map(|p| p.id.clone())
            .collect();
        let catalog = mia_providers::catalog::builtin();
        Ok(catalog
            .models()
            .iter()
            .filter(|m| usable.iter().any(|u| u == m.provider))
            .map(|m| mia_protocol::ModelChoice {
                id: format!("{}/{}", m.provider, m.id),
                provider: m.provider.to_string(),
                context_window: m.context_window,
                max_output: m.max_output,
                input_price: m.prices.input,
                output_price: m.prices.output,
                reasoning: m.reasoning,
            })
            .collect())
    }

    /// Project files for @-mentions: gitignore respected, `.git` and
    /// `.mia-code` left out, at most [`MAX_FILES`], sorted.
    pub async fn files(&self, directory: PathBuf) -> Result<Vec<String>, CoreError> {
        let directory = self.project_dir(&directory)?;
        tokio::task::spawn_blocking(move || list_files(&directory))
            .await
            .map_err(|e| CoreError::Internal(format!("the file walk failed: {e}")))?
    }

    /// The settings screen: providers (where each key comes from, never the key), agents, defaults.
    pub fn settings(&self, directory: Option<&Path>) -> Result<SettingsView, CoreError> {
        let paths = &self.options().paths;
        let directory = directory.map(|d| self.project_dir(d)).transpose()?;
        let config = Config::load(paths, directory.as_deref())?;
        let configured = config.merged.providers.clone().unwrap_or_default();
        let mut ids: Vec<String> = KNOWN_PROVIDERS.iter().map(|s| s.to_string()).collect();
        for id in configured.keys() {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        let catalog = mia_providers::catalog::builtin();
        let credentials = &self.options().credentials;
        let providers = ids
            .iter()
            .map(|id| {
                let entry = configured.get(id);
                let kind = entry
                    .and_then(|e| e.api.as_deref())
                    .and_then(mia_providers::ProviderKind::parse)
                    .unwrap_or_else(|| mia_providers::ProviderKind::for_provider_id(id));
                let key_source =
                    match credentials.resolve(id, entry.and_then(|e| e.api_key.as_deref())) {
                        Ok(Some(k)) => Some(k.source.to_string()),
                        Ok(None) => None,
                        Err(e) => Some(format!("unusable: {e}")),
                    };
                ProviderInfo {
                    id: id.clone(),
                    kind: match kind {
                        mia_providers::ProviderKind::Anthropic => "anthropic",
                        mia_providers::ProviderKind::OpenAi => "openai",
                        mia_providers::ProviderKind::Google => "gemini",
                    }
                    .into(),
                    base_url: entry.and_then(|e| e.base_url.clone()),
                    key_source,
                    models: catalog
                        .models()
                        .iter()
                        .filter(|m| m.provider == id.as_str())
                        .map(|m| format!("{}/{}", m.provider, m.id))
                        .collect(),
                }
            })
            .collect();
        Ok(SettingsView {
            providers,
            default_agent: config.default_agent().to_string(),
            model: config.merged.model.clone(),
            agents: agent_infos(&config, paths),
            global_config: settings_file(paths).display().to_string(),
            config_files: config
                .layers
                .iter()
                .filter_map(|l| l.path.as_ref().map(|p| p.display().to_string()))
                .collect(),
            sandbox: Some(crate::sandbox::report(&config)),
            updates_check: config
                .merged
                .updates
                .as_ref()
                .and_then(|u| u.check)
                .unwrap_or(true),
        })
    }

    /// Write defaults from the settings screen to the global config file.
    /// The file is checked with the config loader before it replaces the
    /// old one; a file with comments is refused (they would be lost).
    pub fn update_settings(&self, update: SettingsUpdate) -> Result<(), CoreError> {
        use crate::limits::{MAX_MODEL, check_len, check_name};
        for (agent, model) in &update.agent_models {
            check_name("agent name in agent_models", agent)?;
            check_len("model", model, MAX_MODEL)?;
        }
        if let Some(a) = update.default_agent.as_deref().filter(|a| !a.is_empty()) {
            check_name("default agent", a)?;
        }
        if let Some(m) = &update.model {
            check_len("model", m, MAX_MODEL)?;
        }
        for r in update.permissions.iter().flatten() {
            check_len("permission of a rule", &r.permission, MAX_MODEL)?;
            if r.permission.trim().is_empty() || r.permission.contains(char::is_whitespace) {
                return Err(CoreError::Invalid(format!(
                    "{:?} is not a permission: a name such as bash, edit, read or webfetch, without spaces",
                    r.permission
                )));
            }
            if let Some(p) = &r.pattern {
                check_len("pattern of a rule", p, 4096)?;
            }
        }
        // One read-modify-write at a time (two saves must not lose each other's change).
        let _guard = SETTINGS_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = settings_file(&self.options().paths);
        let old = match std::fs::read_to_string(&path) {
            Ok(s) => Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(CoreError::Invalid(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let mut doc: serde_json::Value = match old.as_deref().map(str::trim) {
            None | Some("") => serde_json::json!({}),
            Some(text) => serde_json::from_str(text).map_err(|_| {
                CoreError::Invalid(format!(
                    "{} has comments or is not plain JSON; settings are not written there so nothing in it is lost: edit it by hand",
                    path.display()
                ))
            })?,
        };
        let Some(obj) = doc.as_object_mut() else {
            return Err(CoreError::Invalid(format!(
                "{} is not a JSON object",
                path.display()
            )));
        };
        let set = |key: &str, value: &str, obj: &mut serde_json::Map<String, serde_json::Value>| {
            if value.trim().is_empty() {
                obj.remove(key);
            } else {
                obj.insert(key.to_string(), value.trim().into());
            }
        };
        if let Some(a) = &update.default_agent {
            set("defaultAgent", a, obj);
        }
        if let Some(m) = &update.model {
            set("model", m, obj);
        }
        if !update.agent_models.is_empty() {
            let agents = obj.entry("agent").or_insert_with(|| serde_json::json!({}));
            let Some(agents) = agents.as_object_mut() else {
                return Err(CoreError::Invalid(format!(
                    "`agent` in {} is not an object",
                    path.display()
                )));
            };
            for (name, model) in &update.agent_models {
                let entry = agents
                    .entry(name.clone())
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(e) = entry.as_object_mut() {
                    set("model", model, e);
                }
            }
        }
        match &update.permissions {
            Some(rules) if rules.is_empty() => {
                obj.remove("permissions");
            }
            Some(rules) => {
                let v =
                    serde_json::to_value(rules).map_err(|e| CoreError::Internal(e.to_string()))?;
                obj.insert("permissions".into(), v);
            }
            None => {}
        }
        if let Some(check) = update.updates_check {
            let updates = obj
                .entry("updates")
                .or_insert_with(|| serde_json::json!({}));
            let Some(updates) = updates.as_object_mut() else {
                return Err(CoreError::Invalid(format!(
                    "`updates` in {} is not an object",
                    path.display()
                )));
            };
            updates.insert("check".into(), check.into());
        }
        let text =
            serde_json::to_string_pretty(&doc).map_err(|e| CoreError::Internal(e.to_string()))?;
        // Validate as the loader would before replacing anything.
        mia_config::parse_file(&path, &text, mia_config::LayerKind::Global)?;
        for m in update
            .model
            .iter()
            .chain(update.agent_models.values())
            .filter(|m| !m.trim().is_empty())
        {
            m.trim()
                .parse::<mia_providers::ModelRef>()
                .map_err(|_| CoreError::BadModel(m.clone()))?;
        }
        if let Some(a) = update
            .default_agent
            .as_deref()
            .filter(|a| !a.trim().is_empty())
        {
            let config = Config::load(&self.options().paths, None)?;
            Agents::from_config(&config).session_agent(a.trim())?;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CoreError::Failed(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        replace_file(&path, &format!("{text}\n"))
            .map_err(|e| CoreError::Failed(format!("cannot write {}: {e}", path.display())))
    }

    /// Store an API key through the credential chain (OS keychain, else the
    /// 0600 credentials file); returns where it went.
    pub fn set_key(&self, provider: &str, key: &str) -> Result<String, CoreError> {
        check_provider_id(provider)?;
        crate::limits::check_len("API key", key, 16 * 1024)?;
        self.options()
            .credentials
            .store(provider, key, mia_providers::credentials::StoreTarget::Auto)
            .map(|s| s.to_string())
            .map_err(|e| CoreError::Failed(e.to_string()))
    }

    /// Remove stored keys (keychain and file; environment and config are untouched).
    pub fn delete_key(&self, provider: &str) -> Result<(), CoreError> {
        check_provider_id(provider)?;
        self.options()
            .credentials
            .remove(provider)
            .map(|_| ())
            .map_err(|e| CoreError::Failed(e.to_string()))
    }

    /// An agent's compiled rules in check order, with their sources and lint warnings.
    pub async fn permissions_view(
        &self,
        directory: PathBuf,
        agent: Option<String>,
    ) -> Result<PermissionsView, CoreError> {
        let dir = self.project_dir(&directory)?;
        let paths = self.options().paths.clone();
        let config = self.load_config(Some(dir.clone())).await?;
        let agent = agent.unwrap_or_else(|| config.default_agent().to_string());
        Agents::from_config(&config).get(&agent)?;
        let key = crate::worktrees::project_key(&dir);
        let asked = agent.clone();
        let (approvals, trusted) = self
            .inner
            .store
            .call(move |db| {
                Ok((
                    db.project_approval_rules(&key, &asked)?,
                    db.is_workspace_trusted(&key)?,
                ))
            })
            .await?;
        let policy = crate::permissions::PolicyRecipe::new(&config, &agent, &paths)
            .project(approvals, trusted)
            .compile();
        let mut warnings: Vec<String> = policy.errors.iter().map(|e| e.to_string()).collect();
        warnings.extend(policy.lint.iter().map(|l| l.message.clone()));
        Ok(PermissionsView {
            agent,
            rules: policy
                .positions()
                .into_iter()
                .map(|p| RuleView {
                    permission: p.rule.permission.clone(),
                    pattern: p.rule.pattern.clone(),
                    action: p.rule.action.as_str().to_string(),
                    layer: p.layer.to_string(),
                    source: format!("{} #{}", p.source, p.index + 1),
                })
                .collect(),
            warnings,
            trusted,
        })
    }

    /// "Always for this project" approvals of a project.
    pub async fn approvals(&self, directory: PathBuf) -> Result<Vec<ApprovalView>, CoreError> {
        let key = crate::worktrees::project_key(&self.project_dir(&directory)?);
        let list = self
            .inner
            .store
            .call(move |db| db.project_approvals(Some(&key)))
            .await?;
        Ok(list
            .into_iter()
            .map(|a| ApprovalView {
                id: a.id,
                permission: a.rule.permission.clone(),
                pattern: a.rule.pattern.clone().unwrap_or_else(|| "*".into()),
                agent: Some(a.agent.clone()),
                created_at: a.created_at,
            })
            .collect())
    }

    /// Revoke one approval of `directory`'s project.
    pub async fn revoke_approval(&self, directory: PathBuf, id: i64) -> Result<(), CoreError> {
        let key = crate::worktrees::project_key(&self.project_dir(&directory)?);
        self.inner
            .store
            .call(move |db| {
                let of_project = db.project_approvals(Some(&key))?;
                if !of_project.iter().any(|a| a.id == id) {
                    return Err(mia_store::StoreError::InvalidInput(format!(
                        "approval #{id} does not belong to project {key}"
                    )));
                }
                db.revoke_project_approval(id).map(|_| ())
            })
            .await
    }

    /// Pending asks (oldest first), whether a turn runs, the queued agent
    /// switch — from this process's live state, without loading anything.
    /// Every pending permission ask in this process of the sessions of
    /// `directory`'s project (its worktrees included; subagents' asks too),
    /// oldest first: the attention queue a window shows across sessions.
    pub fn pending_asks(
        &self,
        directory: &std::path::Path,
    ) -> Vec<mia_protocol::PermissionRequest> {
        let key = crate::worktrees::project_key(directory);
        let states: Vec<_> = lock(&self.inner.sessions).values().cloned().collect();
        let mut out: Vec<mia_protocol::PermissionRequest> = states
            .iter()
            .filter(|s| crate::worktrees::project_key(&s.directory) == key)
            .flat_map(|s| s.pending_requests())
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    fn live(&self, id: SessionId) -> (Vec<mia_protocol::PermissionRequest>, bool, Option<String>) {
        match self.loaded_state(id) {
            Some(state) => {
                let mut pending = state.pending_requests();
                // The asks of its subagents (answered on their own session).
                let children: Vec<_> = lock(&self.inner.sessions)
                    .values()
                    .filter(|s| s.lineage().root == Some(id))
                    .cloned()
                    .collect();
                for c in children {
                    pending.extend(c.pending_requests());
                }
                pending.sort_by(|a, b| a.id.cmp(&b.id));
                (
                    pending,
                    state.with(|l| l.running.is_some()),
                    state.with(|l| l.queued_agent.clone()),
                )
            }
            None => (Vec::new(), false, None),
        }
    }
}

pub(crate) fn changed_paths(steps: &[&StepRecord]) -> Vec<String> {
    let mut files: Vec<String> = steps
        .iter()
        .flat_map(|r| r.changes.iter().map(|c| c.path.clone()))
        .collect();
    files.sort();
    files.dedup();
    files
}

impl Runtime {
    /// A directory a front end may open as a project (see [`crate::limits::project_dir`]).
    pub(crate) fn project_dir(&self, dir: &Path) -> Result<PathBuf, CoreError> {
        crate::limits::project_dir(dir, &self.options().paths)
    }
}

fn canonical(dir: &Path) -> Result<PathBuf, CoreError> {
    dunce::canonicalize(dir).map_err(|e| {
        CoreError::Invalid(format!(
            "project directory {} is not accessible: {e}",
            dir.display()
        ))
    })
}

fn check_provider_id(provider: &str) -> Result<(), CoreError> {
    crate::limits::check_len("provider id", provider, crate::limits::MAX_NAME)?;
    if provider.is_empty()
        || !provider
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(CoreError::Invalid(format!(
            "`{provider}` is not a provider id (letters, digits, `-`, `_`, `.`)"
        )));
    }
    Ok(())
}

/// The global config file settings are written to: `~/.config/mia-code/config.json`
/// (`$XDG_CONFIG_HOME`), the first of the global files.
fn settings_file(paths: &mia_config::Paths) -> PathBuf {
    paths
        .global_configs
        .first()
        .cloned()
        .unwrap_or_else(|| paths.user_home.join(".config/mia-code/config.json"))
}

fn agent_infos(config: &Config, paths: &mia_config::Paths) -> Vec<AgentInfo> {
    let agents = Agents::from_config(config);
    let mut list: Vec<AgentInfo> = agents
        .all()
        .filter(|a| !a.hidden)
        .map(|a| AgentInfo {
            name: a.name.clone(),
            description: a.description.clone(),
            mode: match a.mode {
                mia_config::AgentMode::Primary => AgentModeView::Primary,
                mia_config::AgentMode::Subagent => AgentModeView::Subagent,
                mia_config::AgentMode::All => AgentModeView::All,
            },
            model: a.model.clone(),
            builtin: a.builtin,
            read_only: is_read_only(config, &a.name, paths),
            source: {
                let key = format!("agent.{}", a.name);
                config
                    .origins
                    .iter()
                    .filter(|(k, src)| {
                        (k.as_str() == key || k.starts_with(&format!("{key}.")))
                            && src.as_str() != "built-in"
                    })
                    .map(|(_, src)| src.clone())
                    .next_back()
                    .unwrap_or_else(|| "built-in".into())
            },
            timeout_secs: a.timeout_secs,
        })
        .collect();
    // Primary agents first: built-in ones before configured ones, the one
    // that changes things before the planner (build, then plan: the
    // default order of Tab); then by name.
    let planner = |name: &str| agents.get(name).is_ok_and(|a| a.caps.read_only);
    list.sort_by_key(|a| {
        let subagent = matches!(a.mode, AgentModeView::Subagent);
        (
            subagent,
            !subagent && !a.builtin,
            !subagent && a.builtin && planner(&a.name),
            a.name.clone(),
        )
    });
    list
}

/// Whether the agent's compiled rules can never allow `edit` or `write`.
fn is_read_only(config: &Config, agent: &str, paths: &mia_config::Paths) -> bool {
    let policy = crate::permissions::PolicyRecipe::new(config, agent, paths).compile();
    let Ok(cwd) = std::env::current_dir() else {
        return false;
    };
    let Ok(ctx) = mia_permission::PathContext::new(&cwd, None) else {
        return false;
    };
    let checker = mia_permission::Checker::new(&policy, &ctx);
    !crate::permissions::tool_offered(&checker, "edit")
        && !crate::permissions::tool_offered(&checker, "write")
}

fn list_files(dir: &Path) -> Result<Vec<String>, CoreError> {
    let root = canonical(dir)?;
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(&root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .filter_entry(|e| {
            let name = e.file_name();
            name != ".git" && name != ".mia-code" && name != "node_modules"
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(&root) {
            out.push(
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
        if out.len() >= MAX_FILES {
            break;
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use super::replace_file;

    #[cfg(unix)]
    #[test]
    fn replacing_a_config_keeps_its_mode_and_follows_a_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("config.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        replace_file(&link, "{\"model\": \"a/b\"}\n").unwrap();
        // The link is still a link; its target got the new text and kept 0600.
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&real).unwrap(),
            "{\"model\": \"a/b\"}\n"
        );
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A new file is created 0600; no temporary file is left behind.
        let fresh = dir.path().join("new.json");
        replace_file(&fresh, "{}\n").unwrap();
        assert_eq!(
            std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty());
    }
}
