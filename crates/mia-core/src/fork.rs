//! Forks (spec 020): a new session from any message of another, either in
//! the same directory (the conversation only) or in a new worktree holding
//! the project as it was at the fork point (the conversation and the
//! files); promoting a fork; the project's fork tree; comparing two
//! sessions' changes since they diverged.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mia_protocol::{
    Event, FileDiff, ForkFiles, ForkResult, ForkTreeNode, MessageId, PartContent, Session,
    SessionChanges, SessionCompare, SessionId, SessionSummary,
};
use mia_snapshot::{SnapshotRepo, StepKind, StepRecord};
use mia_store::ForkRequest;

use crate::CoreError;
use crate::runtime::{Runtime, lock};
use crate::views::SessionListQuery;

/// How much of the fork point's text a tree edge shows.
const EXCERPT_CHARS: usize = 80;

impl Runtime {
    /// Fork `session_id` at `message_id` (default: its last message).
    pub async fn fork(
        &self,
        session_id: SessionId,
        message_id: Option<MessageId>,
        with_files: bool,
    ) -> Result<ForkResult, CoreError> {
        let parent = self.state(session_id).await?;
        let files = if with_files {
            Some(
                self.fork_workspace(session_id, &parent.directory, message_id)
                    .await?,
            )
        } else {
            None
        };
        let directory = files.as_ref().map(|f| f.path.clone());
        let forked = self
            .inner
            .store
            .call(move |db| {
                db.fork_session(ForkRequest {
                    source: session_id,
                    message: message_id,
                    directory,
                })
            })
            .await;
        // The fork left its WAL checkpoint for later: now, after the reply.
        self.inner.store.run_detached(|db| {
            if let Err(e) = db.checkpoint() {
                tracing::warn!(error = %e, "checkpoint after a fork failed");
            }
        });
        let forked = match forked {
            Ok(f) => f,
            Err(e) => {
                // Nothing half-made is left: the worktree goes with the failed fork.
                if let Some(f) = &files {
                    let _ = self
                        .worktree_remove(parent.directory.clone(), f.worktree.clone(), true)
                        .await;
                }
                return Err(e);
            }
        };
        let child_id = forked.session.id;
        if let Some(f) = &files {
            let mut note = format!(
                "Files: worktree {} ({}) on branch {}, from commit {} with the project as it was at the fork point.",
                f.worktree,
                f.path,
                f.branch,
                short(&f.base)
            );
            if !f.left_out.is_empty() {
                note.push_str(&format!(" Not carried over: {}.", f.left_out.join("; ")));
            }
            let marker = forked.marker.id;
            self.append(
                child_id,
                marker,
                vec![PartContent::Text {
                    text: note,
                    synthetic: true,
                }],
            )
            .await?;
        }
        // What the store does not hold is inherited from this process's
        // live state: the session's "always"/"never" answers (per agent, as
        // given) and its todo list.
        let child = self.state(child_id).await?;
        let rules = parent.with(|l| l.session_rules.clone());
        child.with(|l| l.session_rules = rules);
        let todos = lock(&parent.todos).clone();
        *lock(&child.todos) = todos;
        tracing::info!(parent = %session_id, child = %child_id, fork_point = %forked.fork_point, copied = forked.copied, with_files, "forked");
        self.emit(Event::SessionUpdated {
            session: forked.session.clone(),
        });
        Ok(ForkResult {
            session: forked.session,
            files,
        })
    }

    /// A new worktree at the parent's HEAD with the fork point's files applied over it.
    async fn fork_workspace(
        &self,
        session_id: SessionId,
        dir: &Path,
        message_id: Option<MessageId>,
    ) -> Result<ForkFiles, CoreError> {
        // The fork point is checked before anything is created.
        let point = self
            .inner
            .store
            .call(move |db| db.fork_files_point(&session_id, message_id.as_ref()))
            .await?;
        let head = {
            let dir = dir.to_path_buf();
            tokio::task::spawn_blocking(move || mia_git::head_commit(&dir))
                .await
                .map_err(|e| CoreError::Internal(format!("a git task failed: {e}")))?
                .map_err(|e| {
                    CoreError::Invalid(format!(
                        "a fork with files needs a git repository with a commit ({e}); fork the conversation only (without files), or commit first"
                    ))
                })?
        };
        let config = self.load_config(Some(dir.to_path_buf())).await?;
        let snapshot_config = crate::snapshots::snapshot_config(&config, &self.options().paths)
            .unwrap_or_else(|| crate::snapshots::store_config(&self.options().paths));
        // The session never changed a file: its files at the fork point are
        // the directory's as they are now (uncommitted changes included).
        let (snapshot, left_out) = match point.snapshot {
            Some(hash) => (
                hash,
                point
                    .left_out
                    .into_iter()
                    .map(|(p, reason)| format!("{p} ({})", reason_text(&reason)))
                    .collect::<Vec<_>>(),
            ),
            None => {
                let snap = self
                    .with_repo(session_id, |repo| {
                        repo.capture_unbounded(&mia_snapshot::CaptureContext::default(), None)
                    })
                    .await?;
                let left: Vec<String> = snap
                    .excluded
                    .iter()
                    .map(|e| format!("{} ({})", e.path, mia_snapshot::reason_text(e.reason)))
                    .collect();
                (snap.hash, left)
            }
        };
        let created = self
            .worktree_create(
                dir.to_path_buf(),
                None,
                Some(head.clone()),
                Arc::new(std::sync::atomic::AtomicBool::new(false)),
            )
            .await?;
        let path = PathBuf::from(&created.path);
        let hash = snapshot.clone();
        let applied = tokio::task::spawn_blocking(move || {
            let mut repo = SnapshotRepo::open(&path, snapshot_config)?;
            repo.restore(&hash, None, true)
        })
        .await
        .map_err(|e| CoreError::Internal(format!("a snapshot task failed: {e}")));
        let failed = match applied {
            Ok(Ok(outcome)) if outcome.applied => None,
            Ok(Ok(outcome)) => Some(format!(
                "{} file(s) could not be written",
                outcome.conflicts.len()
            )),
            Ok(Err(e)) => Some(e.to_string()),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = failed {
            let _ = self
                .worktree_remove(dir.to_path_buf(), created.name.clone(), true)
                .await;
            return Err(CoreError::Failed(format!(
                "the fork point's files could not be applied to a new worktree ({why}); nothing was created. Fork the conversation only, or try again"
            )));
        }
        Ok(ForkFiles {
            worktree: created.name,
            path: created.path,
            branch: created.branch,
            base: head,
            snapshot: Some(snapshot),
            left_out,
            included: created.included,
        })
    }

    /// Make a fork top-level; its fork metadata is kept.
    pub async fn promote(&self, session_id: SessionId) -> Result<Session, CoreError> {
        let session = self
            .inner
            .store
            .call(move |db| db.promote_session(&session_id))
            .await?;
        if let Some(state) = self.loaded_state(session_id) {
            state.set_session(session.clone());
        }
        self.emit(Event::SessionUpdated {
            session: session.clone(),
        });
        Ok(session)
    }

    /// The fork tree of a project: its sessions and those of its worktrees,
    /// forks nested under their parents, each with its figures.
    pub async fn fork_tree(
        &self,
        project: &Path,
        archived: bool,
    ) -> Result<Vec<ForkTreeNode>, CoreError> {
        // A worktree's tree is its main project's.
        let project = dunce::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let project = match mia_git::main_root_of(&project) {
            Some(root) => dunce::canonicalize(&root).unwrap_or(root),
            None => project,
        };
        let all = self
            .list_sessions(SessionListQuery {
                archived,
                ..Default::default()
            })
            .await?;
        // A directory belongs to the project when it is the project or one
        // of its linked worktrees (checked once per distinct directory).
        let mut belongs: HashMap<String, bool> = HashMap::new();
        let project_text = project.display().to_string();
        let mut items: Vec<SessionSummary> = Vec::new();
        // Subagents' sessions are not attempts of the user's: not in the fork tree.
        for s in all.into_iter().filter(|s| s.session.spawned_by.is_none()) {
            let dir = s.session.directory.clone();
            let ok = *belongs.entry(dir.clone()).or_insert_with(|| {
                dir == project_text
                    || mia_git::main_root_of(Path::new(&dir))
                        .is_some_and(|r| dunce::canonicalize(&r).unwrap_or(r) == project)
            });
            if ok {
                items.push(s);
            }
        }
        let mut ids: HashSet<String> = HashSet::new();
        for s in &items {
            ids.insert(s.session.project_id.clone());
        }
        let stats = self
            .inner
            .store
            .call(move |db| {
                let mut all = HashMap::new();
                for p in ids {
                    all.extend(db.session_stats(&p)?);
                }
                Ok(all)
            })
            .await?;
        // The fork points' text, for the edges.
        let points: Vec<(SessionId, MessageId)> = items
            .iter()
            .filter_map(|s| {
                s.session
                    .fork
                    .as_ref()
                    .map(|f| (f.source_session_id, f.source_message_id))
            })
            .collect();
        let forks: Vec<SessionId> = items
            .iter()
            .filter(|s| s.session.fork.is_some())
            .map(|s| s.session.id)
            .collect();
        let (excerpts, first_prompts) = self.fork_texts(points, forks).await?;
        let dirs: HashMap<SessionId, String> = items
            .iter()
            .map(|s| (s.session.id, s.session.directory.clone()))
            .collect();
        let worktrees: HashMap<SessionId, Option<String>> = items
            .iter()
            .map(|s| (s.session.id, s.worktree.clone()))
            .collect();
        // The store's tree (parents, creation order), with this view's figures on each node.
        let tree = mia_store::build_tree(
            items
                .into_iter()
                .map(|s| mia_store::SessionListItem {
                    session: s.session,
                    message_count: s.message_count,
                })
                .collect(),
        );
        struct Ctx<'a> {
            stats: &'a HashMap<SessionId, mia_store::SessionStats>,
            excerpts: &'a HashMap<MessageId, String>,
            first_prompts: &'a HashMap<SessionId, String>,
            dirs: &'a HashMap<SessionId, String>,
            worktrees: &'a HashMap<SessionId, Option<String>>,
        }
        fn node(n: mia_store::TreeNode, cx: &Ctx<'_>) -> ForkTreeNode {
            let s = n.item.session;
            let worktree = cx.worktrees.get(&s.id).cloned().flatten();
            let st = cx.stats.get(&s.id).cloned().unwrap_or_default();
            let own_worktree = match s.parent_id.and_then(|p| cx.dirs.get(&p)) {
                Some(parent_dir) => *parent_dir != s.directory && worktree.is_some(),
                None => worktree.is_some(),
            };
            ForkTreeNode {
                fork_excerpt: s
                    .fork
                    .as_ref()
                    .and_then(|f| cx.excerpts.get(&f.source_message_id).cloned()),
                first_prompt: cx.first_prompts.get(&s.id).cloned(),
                files_changed: st.files_changed,
                cost_usd: st.cost_usd,
                own_worktree,
                children: n.children.into_iter().map(|c| node(c, cx)).collect(),
                summary: SessionSummary {
                    session: s,
                    message_count: n.item.message_count,
                    worktree,
                },
            }
        }
        let cx = Ctx {
            stats: &stats,
            excerpts: &excerpts,
            first_prompts: &first_prompts,
            dirs: &dirs,
            worktrees: &worktrees,
        };
        Ok(tree.into_iter().map(|n| node(n, &cx)).collect())
    }

    /// The text of each fork point (a marker's: the message it follows),
    /// and each fork's own first prompt, shortened.
    async fn fork_texts(
        &self,
        points: Vec<(SessionId, MessageId)>,
        forks: Vec<SessionId>,
    ) -> Result<(HashMap<MessageId, String>, HashMap<SessionId, String>), CoreError> {
        self.inner
            .store
            .call(move |db| {
                let mut out = HashMap::new();
                for (session, message) in points {
                    if let Ok(m) = db.get_message(&session, &message) {
                        // A fork of a fork made at its marker: the text
                        // is the message the marker follows.
                        let shown = if m.message_type == mia_protocol::MessageType::Fork {
                            db.get_messages(
                                &session,
                                &mia_store::MessageQuery {
                                    before: Some(message),
                                    limit: Some(1),
                                    tail: true,
                                    ..Default::default()
                                },
                            )?
                            .pop()
                            .unwrap_or(m)
                        } else {
                            m
                        };
                        out.insert(message, excerpt(&shown));
                    }
                }
                let mut firsts = HashMap::new();
                for (session, message) in db.first_prompts_after_fork(&forks)? {
                    if let Ok(m) = db.get_message(&session, &message) {
                        firsts.insert(session, excerpt(&m));
                    }
                }
                Ok((out, firsts))
            })
            .await
    }

    /// Two sessions' file changes since they diverged: for a fork and its
    /// ancestor, the ancestor's steps after the fork point against the
    /// fork's own; for two forks of one session, each one's own steps.
    pub async fn compare_sessions(
        &self,
        a: SessionId,
        b: SessionId,
    ) -> Result<SessionCompare, CoreError> {
        let (sa, sb) = self
            .inner
            .store
            .call(move |db| Ok((db.get_session(&a)?, db.get_session(&b)?)))
            .await?;
        let ancestors_a = self.ancestors(&sa).await?;
        let ancestors_b = self.ancestors(&sb).await?;
        let point_in = |anc: &[(SessionId, MessageId)], id: SessionId| {
            anc.iter().find(|(s, _)| *s == id).map(|(_, m)| *m)
        };
        let (after_a, after_b, fork_point) = if let Some(m) = point_in(&ancestors_b, a) {
            // a is b's ancestor: a's changes after the fork point vs b's own.
            (Some(m), None, Some(m))
        } else if let Some(m) = point_in(&ancestors_a, b) {
            (None, Some(m), Some(m))
        } else {
            // Siblings or unrelated: each side's own changes.
            let common = ancestors_a
                .iter()
                .find(|(s, _)| ancestors_b.iter().any(|(t, _)| t == s))
                .map(|(_, m)| *m);
            (None, None, common)
        };
        let left = self.changes_since(&sa, after_a).await?;
        let right = self.changes_since(&sb, after_b).await?;
        Ok(SessionCompare {
            left,
            right,
            fork_point: fork_point.map(|m| m.to_string()),
        })
    }

    /// (ancestor session, fork point in it), nearest first.
    async fn ancestors(&self, s: &Session) -> Result<Vec<(SessionId, MessageId)>, CoreError> {
        let mut out = Vec::new();
        let mut fork = s.fork.clone();
        let mut seen = HashSet::new();
        while let Some(f) = fork {
            if !seen.insert(f.source_session_id) || out.len() > 16 {
                break;
            }
            out.push((f.source_session_id, f.source_message_id));
            let id = f.source_session_id;
            fork = match self.inner.store.call(move |db| db.get_session(&id)).await {
                Ok(p) => p.fork,
                Err(_) => None,
            };
        }
        Ok(out)
    }

    /// A session's file changes from its steps (after `after`'s position
    /// when given): each file from before the first step that changed it to
    /// after the last one.
    async fn changes_since(
        &self,
        s: &Session,
        after: Option<MessageId>,
    ) -> Result<SessionChanges, CoreError> {
        let id = s.id;
        let records = self.step_records(id).await?;
        let records: Vec<StepRecord> = match after {
            Some(point) => {
                let messages = self
                    .inner
                    .store
                    .call(move |db| {
                        db.get_messages(
                            &id,
                            &mia_store::MessageQuery {
                                include_compacted: true,
                                ..Default::default()
                            },
                        )
                    })
                    .await?;
                let order: HashMap<String, usize> = messages
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.id.to_string(), i))
                    .collect();
                let cut = order.get(&point.to_string()).copied().unwrap_or(0);
                records
                    .into_iter()
                    .filter(|r| order.get(&r.message_id).is_some_and(|&i| i > cut))
                    .collect()
            }
            None => records,
        };
        // path → (before of the first step, after of the last step)
        let mut span: Vec<(String, String, String)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for r in &records {
            if r.kind == StepKind::Tool && r.changes.is_empty() {
                continue;
            }
            for c in &r.changes {
                match index.get(&c.path) {
                    Some(&i) => span[i].2 = r.after.clone(),
                    None => {
                        index.insert(c.path.clone(), span.len());
                        span.push((c.path.clone(), r.before.clone(), r.after.clone()));
                    }
                }
            }
        }
        let files: Vec<FileDiff> = if span.is_empty() {
            Vec::new()
        } else {
            self.with_repo(id, move |repo| {
                let mut out = Vec::new();
                for (path, before, after) in span {
                    out.extend(repo.diff_paths(&before, &after, &[path])?);
                }
                Ok(out)
            })
            .await?
        };
        let worktree = mia_git::main_root_of(Path::new(&s.directory))
            .and(Path::new(&s.directory).file_name())
            .map(|n| n.to_string_lossy().to_string());
        Ok(SessionChanges {
            session_id: s.id.to_string(),
            title: s.title.clone(),
            worktree,
            stats: mia_snapshot::stats(&files),
            files,
        })
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(10)]
}

/// "too-large" → the snapshot engine's words for it.
fn reason_text(reason: &str) -> String {
    serde_json::from_value::<mia_snapshot::ExcludeReason>(serde_json::Value::String(
        reason.to_string(),
    ))
    .map(|r| mia_snapshot::reason_text(r).to_string())
    .unwrap_or_else(|_| reason.to_string())
}

/// The first words of a message, for a tree edge.
fn excerpt(m: &mia_protocol::Message) -> String {
    let text = m
        .parts
        .iter()
        .find_map(|p| match &p.content {
            PartContent::Text { text, .. } if !text.trim().is_empty() => Some(text.clone()),
            PartContent::CompactionSummary { summary, .. } => Some(summary.clone()),
            PartContent::ToolCall { tool, .. } => Some(format!("[{tool}]")),
            _ => None,
        })
        .unwrap_or_default();
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > EXCERPT_CHARS {
        let cut: String = line.chars().take(EXCERPT_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        line
    }
}
