//! Review and ship on a checkout (the project or a worktree): hunks staged,
//! unstaged or discarded (a discard is snapshotted first, and is an
//! undoable step when it names a session), commit (the repository's hooks
//! run: it is the person's action, outside the sandbox), messages drafted
//! by the small model, push with the person's git, pull requests on GitHub
//! or GitLab.

use std::path::{Path, PathBuf};

use mia_protocol::{
    BranchStatus, CommitResult, Draft, Event, ForgeKind, HunkReverted, HunkView, MessageType,
    NewMessage, PartContent, PullRequestLink, PullRequestView, PushResult, Role, SessionId,
};
use mia_providers::{ChatMessage, ChatRequest, ChatRole, ContentPart, ModelRef};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::runtime::Runtime;

/// How much of a staged diff a commit-message draft reads.
const DRAFT_DIFF_BYTES: usize = 60_000;

pub(crate) fn hunk_view(h: mia_git::HunkEntry) -> HunkView {
    HunkView {
        id: h.id,
        file: h.file,
        old_file: h.old_file,
        old_start: h.old_start,
        old_lines: h.old_lines,
        new_start: h.new_start,
        new_lines: h.new_lines,
        staged: h.staged,
        lines: h.lines,
        binary: h.binary,
        whole_file: h.whole_file,
    }
}

/// What `pr create` is asked for.
#[derive(Debug, Clone, Default)]
pub struct PrRequest {
    pub remote: Option<String>,
    pub base: Option<String>,
    pub draft: bool,
    pub title: Option<String>,
    pub body: Option<String>,
    /// Draft the title and body with the small model.
    pub generate: bool,
    pub provider: Option<ForgeKind>,
    /// The session whose work this is (for `generate`).
    pub session: Option<SessionId>,
}

/// Where a branch's pull requests go: the forge, its repository path and
/// the remote.
struct Target {
    forge: mia_forge::Forge,
    repo: String,
    remote: String,
    branch: String,
}

impl Runtime {
    /// The top of the checkout `dir` is in, refused outside a project.
    fn checkout(&self, dir: &Path) -> Result<PathBuf, CoreError> {
        let dir = self.project_dir(dir)?;
        Ok(mia_git::ship::toplevel(&dir)?)
    }

    /// The work tree's hunks against the index, or (`staged`) the index's
    /// against `HEAD`.
    pub async fn hunk_list(&self, dir: &Path, staged: bool) -> Result<Vec<HunkView>, CoreError> {
        let dir = self.checkout(dir)?;
        let side = if staged {
            mia_git::HunkSide::Staged
        } else {
            mia_git::HunkSide::Unstaged
        };
        self.on_git(move || mia_git::hunks::list(&dir, side))
            .await
            .map(|l| l.into_iter().map(hunk_view).collect())
    }

    pub async fn hunk_stage(&self, dir: &Path, id: &str) -> Result<HunkView, CoreError> {
        let dir = self.checkout(dir)?;
        let id = id.to_string();
        self.on_git(move || mia_git::hunks::stage(&dir, &id))
            .await
            .map(hunk_view)
    }

    pub async fn hunk_unstage(&self, dir: &Path, id: &str) -> Result<HunkView, CoreError> {
        let dir = self.checkout(dir)?;
        let id = id.to_string();
        self.on_git(move || mia_git::hunks::unstage(&dir, &id))
            .await
            .map(hunk_view)
    }

    /// Discard the work tree's hunk `id`. Its file is snapshotted first:
    /// with `session`, as a step of that session (undo brings the hunk
    /// back); without, as a capture whose restore command is returned.
    pub async fn hunk_revert(
        &self,
        dir: &Path,
        id: &str,
        session: Option<SessionId>,
    ) -> Result<HunkReverted, CoreError> {
        let root = self.checkout(dir)?;
        let (hunk, root) = {
            let (r, i) = (root.clone(), id.to_string());
            self.on_git(move || mia_git::hunks::prepare_revert(&r, &i))
                .await?
        };
        let file = root.join(&hunk.file);
        match session {
            None => {
                let snap = self
                    .capture_project(&root, None, std::slice::from_ref(&file))
                    .await?;
                let (r, i) = (root.clone(), id.to_string());
                let done = self.on_git(move || mia_git::hunks::revert(&r, &i)).await?;
                let restore_command = format!(
                    "mia-code snapshot restore {} --paths {} --project {}",
                    snap.hash,
                    shell_word(&done.file),
                    shell_word(&root.display().to_string())
                );
                Ok(HunkReverted {
                    hunk: hunk_view(done),
                    snapshot: snap.hash,
                    session_id: None,
                    restore_command: Some(restore_command),
                })
            }
            Some(sid) => self.hunk_revert_step(sid, &root, id, hunk, file).await,
        }
    }

    /// [`hunk_revert`](Self::hunk_revert) recorded as a step of `sid`: a
    /// system message says what was discarded and carries the snapshot.
    async fn hunk_revert_step(
        &self,
        sid: SessionId,
        root: &Path,
        id: &str,
        hunk: mia_git::HunkEntry,
        file: PathBuf,
    ) -> Result<HunkReverted, CoreError> {
        let state = self.state(sid).await?;
        let sdir = dunce::canonicalize(&state.directory).unwrap_or(state.directory.clone());
        let rdir = dunce::canonicalize(root).unwrap_or(root.to_path_buf());
        if !sdir.starts_with(&rdir) && !rdir.starts_with(&sdir) {
            return Err(CoreError::Invalid(format!(
                "session {sid} works in {}, not in {}: name a session of this checkout, or leave --session out",
                sdir.display(),
                rdir.display()
            )));
        }
        let config = self.load_config(Some(state.directory.clone())).await?;
        let cfg = crate::snapshots::snapshot_config(&config, &self.options().paths).ok_or_else(
            || {
                CoreError::Refused(
                    "snapshots are turned off (`snapshot.enabled`), so a discarded hunk could not be brought back; leave --session out or turn them on".into(),
                )
            },
        )?;
        self.claim(&state, "hunk revert").await?;
        let result = async {
            let text = format!(
                "Discarded hunk {} of {} (lines {}-{}); undo brings it back.",
                hunk.id,
                hunk.file,
                hunk.new_start,
                hunk.new_start + hunk.new_lines.saturating_sub(1)
            );
            let msg = self
                .inner
                .store
                .call(move |db| {
                    db.add_message(
                        &sid,
                        NewMessage {
                            role: Some(Role::System),
                            message_type: MessageType::Normal,
                            parts: vec![PartContent::Text {
                                text,
                                synthetic: true,
                            }],
                            ..Default::default()
                        },
                    )
                })
                .await?;
            let call_id = format!("hunk-revert-{}-{}", hunk.id, mia_protocol::now_ms());
            let pending = self
                .begin_snapshot(&state, sid, msg.id, &call_id, Some(vec![file]), cfg)
                .await
                .map_err(|e| {
                    CoreError::Failed(format!(
                        "the file could not be snapshotted, so nothing was discarded: {e:?}"
                    ))
                })?;
            let before = pending.before.hash.clone();
            let (r, i) = (root.to_path_buf(), id.to_string());
            let done = self.on_git(move || mia_git::hunks::revert(&r, &i)).await;
            let (part, event) = self
                .finish_snapshot(&state, sid, &call_id, Ok(pending))
                .await;
            let mid = msg.id;
            self.inner
                .store
                .call(move |db| db.append_parts(&sid, &mid, vec![part]))
                .await?;
            let stored = self
                .inner
                .store
                .call(move |db| db.get_message(&sid, &mid))
                .await?;
            self.emit(Event::MessageStored { message: stored });
            self.emit(event);
            let done = done?;
            Ok(HunkReverted {
                hunk: hunk_view(done),
                snapshot: before,
                session_id: Some(sid),
                restore_command: None,
            })
        }
        .await;
        self.release(&state).await;
        result
    }

    /// Where the checkout's branch stands, with its recorded pull request.
    pub async fn git_status(&self, dir: &Path) -> Result<BranchStatus, CoreError> {
        let dir = self.checkout(dir)?;
        self.on_git(move || {
            let s = mia_git::ship::standing(&dir)?;
            let pull_request = match &s.branch {
                Some(b) => mia_git::ship::recorded_pr(&dir, b)?.and_then(|v| parse_link(&v)),
                None => None,
            };
            Ok(BranchStatus {
                branch: s.branch,
                upstream: s.upstream,
                ahead: s.ahead,
                behind: s.behind,
                staged: s.staged,
                unstaged: s.unstaged,
                remotes: s.remotes,
                pull_request,
            })
        })
        .await
    }

    /// Commit what is staged (hooks run). `edit`: the person's editor
    /// opens on the message first (a terminal is needed).
    pub async fn commit(
        &self,
        dir: &Path,
        message: &str,
        edit: bool,
    ) -> Result<CommitResult, CoreError> {
        let dir = self.checkout(dir)?;
        let message = message.to_string();
        self.on_git(move || mia_git::ship::commit(&dir, &message, edit))
            .await
            .map(|c| CommitResult {
                commit: c.commit,
                branch: c.branch,
                summary: c.summary,
                output: c.output,
            })
    }

    /// A commit message for what is staged, by the small model, in the
    /// style of the repository's recent subjects.
    pub async fn draft_commit_message(&self, dir: &Path) -> Result<Draft, CoreError> {
        let dir = self.checkout(dir)?;
        let d = dir.clone();
        let (diff, recent, staged) = self
            .on_git(move || {
                let st = mia_git::ship::standing(&d)?;
                Ok((
                    mia_git::ship::staged_for_draft(&d, DRAFT_DIFF_BYTES)?,
                    mia_git::ship::recent_subjects(&d, 12)?,
                    st.staged,
                ))
            })
            .await?;
        if staged == 0 {
            return Err(CoreError::Invalid(
                "nothing is staged, so there is nothing to describe: stage changes first".into(),
            ));
        }
        let style = if recent.is_empty() {
            "(no commits yet: use a short imperative subject)".to_string()
        } else {
            recent.iter().map(|s| format!("- {s}\n")).collect()
        };
        let ask = format!(
            "Write the git commit message for the staged changes below.\n\nFollow the style of this repository's recent commit subjects:\n{style}\nAnswer with the message only: a subject line of at most 72 characters, then (when it helps) a blank line and a short body. No code fences, no quotes.\n\nStaged changes:\n{diff}"
        );
        let text = self
            .small_completion(
                &dir,
                "You write concise, accurate git commit messages.",
                ask,
            )
            .await?;
        Ok(split_message(&strip_fences(&text)))
    }

    /// Push the checkout's branch with the person's git.
    pub async fn push(
        &self,
        dir: &Path,
        remote: Option<String>,
        interactive: bool,
        mut progress: impl FnMut(&str) + Send + 'static,
    ) -> Result<PushResult, CoreError> {
        let dir = self.checkout(dir)?;
        self.on_git(move || {
            mia_git::ship::push(&dir, remote.as_deref(), interactive, &mut progress)
        })
        .await
        .map(|p| PushResult {
            remote: p.remote,
            branch: p.branch,
            upstream_set: p.upstream_set,
            output: p.output,
        })
    }

    /// The forge, repository and token the checkout's pull requests use.
    async fn pr_target(
        &self,
        dir: &Path,
        remote: Option<String>,
        provider: Option<ForgeKind>,
        require_pushed: bool,
    ) -> Result<Target, CoreError> {
        let config = self.load_config(Some(dir.to_path_buf())).await?;
        let github_api = config
            .merged
            .github
            .as_ref()
            .and_then(|g| g.api_url.clone());
        let gitlab_api = config
            .merged
            .gitlab
            .as_ref()
            .and_then(|g| g.api_url.clone());
        let d = dir.to_path_buf();
        let (remote, url, branch) = self
            .on_git(move || {
                let branch = mia_git::ship::current_branch(&d)?.ok_or_else(|| {
                    mia_git::GitError::Invalid(
                        "HEAD is detached: check out the branch of the pull request".into(),
                    )
                })?;
                let (name, url) = mia_git::ship::pr_remote(&d, remote.as_deref())?;
                Ok((name, url, branch))
            })
            .await?;
        let (host, repo) = mia_git::ship::parse_remote_url(&url).ok_or_else(|| {
            CoreError::Invalid(format!(
                "remote {remote} ({url}) does not name a repository on a forge (owner/repo); pass --remote with a GitHub or GitLab remote"
            ))
        })?;
        let kind = provider
            .or_else(|| mia_forge::detect(&host, github_api.as_deref(), gitlab_api.as_deref()))
            .ok_or_else(|| {
                CoreError::Invalid(format!(
                    "cannot tell whether {host} is GitHub or GitLab: pass --provider github|gitlab, and for a self-hosted one set github.apiURL or gitlab.apiURL in your config"
                ))
            })?;
        let api = match kind {
            ForgeKind::Github => github_api,
            ForgeKind::Gitlab => gitlab_api,
        };
        if require_pushed {
            let (d, r, b) = (dir.to_path_buf(), remote.clone(), branch.clone());
            if !self
                .on_git(move || mia_git::ship::on_remote(&d, &r, &b))
                .await?
            {
                return Err(CoreError::Invalid(format!(
                    "push first: {branch} is not on {remote} (`mia-code push --remote {remote}`)"
                )));
            }
        }
        let token = forge_token(self.options().credentials.clone(), kind).await?;
        let forge = mia_forge::Forge::new(kind, api.as_deref(), &token).map_err(forge_error)?;
        Ok(Target {
            forge,
            repo,
            remote,
            branch,
        })
    }

    /// Open a pull (merge) request for the checkout's branch. It does not
    /// push: a branch the remote does not have is refused ("push first").
    pub async fn pr_create(
        &self,
        dir: &Path,
        req: PrRequest,
    ) -> Result<PullRequestView, CoreError> {
        let dir = self.checkout(dir)?;
        let t = self
            .pr_target(&dir, req.remote.clone(), req.provider, true)
            .await?;
        let base = match req.base.clone() {
            Some(b) => b,
            None => t.forge.default_branch(&t.repo).await.map_err(forge_error)?,
        };
        let draft = match (&req.title, req.generate) {
            (Some(title), _) => Draft {
                title: title.clone(),
                body: req.body.clone().unwrap_or_default(),
            },
            (None, true) => {
                let mut d = self.pr_draft(&dir, req.session, Some(base.clone())).await?;
                if let Some(b) = &req.body {
                    d.body = b.clone();
                }
                d
            }
            (None, false) => {
                let mut d = self.pr_fill(&dir, &t, &base).await?;
                if let Some(b) = &req.body {
                    d.body = b.clone();
                }
                d
            }
        };
        let pr = mia_forge::NewPullRequest {
            title: draft.title,
            body: draft.body,
            head: t.branch.clone(),
            base,
            draft: req.draft,
        };
        let created = t.forge.create(&t.repo, &pr).await.map_err(forge_error)?;
        let value = format!(
            "{} {} {}",
            created.provider.as_str(),
            created.number,
            created.url
        );
        let (d, b) = (dir.clone(), t.branch.clone());
        if let Err(e) = self
            .on_git(move || mia_git::ship::record_pr(&d, &b, &value))
            .await
        {
            tracing::warn!(error = %e, "the pull request could not be recorded on the branch");
        }
        Ok(created)
    }

    /// The pull request of the checkout's branch: state, review decision,
    /// checks. `None`: the branch has none.
    pub async fn pr_status(
        &self,
        dir: &Path,
        remote: Option<String>,
        provider: Option<ForgeKind>,
    ) -> Result<Option<PullRequestView>, CoreError> {
        let dir = self.checkout(dir)?;
        let t = self.pr_target(&dir, remote, provider, false).await?;
        t.forge
            .status(&t.repo, &t.branch)
            .await
            .map_err(forge_error)
    }

    /// "Fill" as `gh pr create --fill` does: one commit gives its subject
    /// and body; several give the branch's name and the list of subjects.
    async fn pr_fill(&self, dir: &Path, t: &Target, base: &str) -> Result<Draft, CoreError> {
        let commits = self.commits_for_pr(dir, &t.remote, base).await?;
        let branch = &t.branch;
        Ok(match commits.as_slice() {
            [(subject, body)] => Draft {
                title: subject.clone(),
                body: body.clone(),
            },
            _ => Draft {
                title: branch.replace(['-', '_'], " "),
                body: commits.iter().map(|(s, _)| format!("- {s}\n")).collect(),
            },
        })
    }

    async fn commits_for_pr(
        &self,
        dir: &Path,
        remote: &str,
        base: &str,
    ) -> Result<Vec<(String, String)>, CoreError> {
        let d = dir.to_path_buf();
        let base_ref = format!("{remote}/{base}");
        let local = base.to_string();
        self.on_git(move || {
            let from =
                mia_git::ship::rev(&d, &base_ref).or_else(|_| mia_git::ship::rev(&d, &local));
            match from {
                Ok(b) => mia_git::ship::commits_between(&d, &b, "HEAD"),
                Err(_) => mia_git::ship::commits_between(&d, "HEAD~1", "HEAD"),
            }
        })
        .await
    }

    /// A pull request's title and body by the small model, from the
    /// branch's commits and the session's request.
    pub async fn pr_draft(
        &self,
        dir: &Path,
        session: Option<SessionId>,
        base: Option<String>,
    ) -> Result<Draft, CoreError> {
        let dir = self.checkout(dir)?;
        let d = dir.clone();
        let (remote, _) = self
            .on_git(move || mia_git::ship::pr_remote(&d, None))
            .await
            .unwrap_or_else(|_| ("origin".into(), String::new()));
        let base = base.unwrap_or_else(|| "main".into());
        let commits = self.commits_for_pr(&dir, &remote, &base).await?;
        let goal = match session {
            Some(s) => self
                .state(s)
                .await
                .ok()
                .map(|st| st.with(|l| l.session.title.clone()))
                .unwrap_or_default(),
            None => String::new(),
        };
        let list: String = commits
            .iter()
            .map(|(s, b)| {
                format!(
                    "- {s}\n{}",
                    if b.is_empty() {
                        String::new()
                    } else {
                        format!("  {}\n", b.replace('\n', "\n  "))
                    }
                )
            })
            .collect();
        let ask = format!(
            "Draft a pull request for these commits.\n\nWhat the work was for: {goal}\n\nCommits:\n{list}\nAnswer with the title on the first line (at most 72 characters), a blank line, then a Markdown body: a short summary and a list of the changes. No code fences around the answer."
        );
        let text = self
            .small_completion(
                &dir,
                "You write clear, factual pull request descriptions.",
                ask,
            )
            .await?;
        Ok(split_message(&strip_fences(&text)))
    }

    /// One completion from `smallModel` (else `model`).
    async fn small_completion(
        &self,
        dir: &Path,
        system: &str,
        ask: String,
    ) -> Result<String, CoreError> {
        let config = self.load_config(Some(dir.to_path_buf())).await?;
        let model_text = config
            .merged
            .small_model
            .clone()
            .or_else(|| config.merged.model.clone())
            .ok_or(CoreError::NoModel)?;
        let model: ModelRef = model_text
            .parse()
            .map_err(|_| CoreError::BadModel(model_text.clone()))?;
        let provider = self.provider(&config, &model.provider_id).await?;
        let catalog = mia_providers::catalog::builtin();
        let mut request = ChatRequest::new(
            catalog.wire_id(&model.provider_id, &model.model_id),
            vec![ChatMessage {
                role: ChatRole::User,
                content: vec![ContentPart::text(ask)],
            }],
        );
        request.system = system.to_string();
        let done = crate::llm::complete_once(&provider, request, &CancellationToken::new())
            .await
            .map_err(|e| {
                CoreError::Failed(format!("the model ({model_text}) could not draft it: {e}"))
            })?;
        let text = done.text.trim().to_string();
        if text.is_empty() {
            return Err(CoreError::Failed(format!(
                "the model ({model_text}) answered nothing; write it yourself or try again"
            )));
        }
        Ok(text)
    }
}

/// A token for the forge: its environment variables (`GH_TOKEN`,
/// `GITHUB_TOKEN` / `GITLAB_TOKEN`), the OS keychain or the credentials
/// file (`mia-code auth set github|gitlab`), else `gh auth token` /
/// `glab auth token`.
async fn forge_token(
    creds: std::sync::Arc<mia_providers::credentials::Credentials>,
    kind: ForgeKind,
) -> Result<String, CoreError> {
    let id = kind.as_str();
    let found = tokio::task::spawn_blocking(move || {
        if let Ok(Some(k)) = creds.resolve(id, None) {
            return Some(k.key);
        }
        let program = match kind {
            ForgeKind::Github => "gh",
            ForgeKind::Gitlab => "glab",
        };
        let out = std::process::Command::new(program)
            .args(["auth", "token"])
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !t.is_empty() && !t.contains(char::is_whitespace)).then_some(t)
    })
    .await
    .map_err(|e| CoreError::Internal(e.to_string()))?;
    found.ok_or_else(|| {
        CoreError::Invalid(match kind {
            ForgeKind::Github => "no GitHub token: set GH_TOKEN or GITHUB_TOKEN, store one with `mia-code auth set github`, or sign in with `gh auth login`".into(),
            ForgeKind::Gitlab => "no GitLab token: set GITLAB_TOKEN, store one with `mia-code auth set gitlab`, or sign in with `glab auth login`".into(),
        })
    })
}

fn forge_error(e: mia_forge::ForgeError) -> CoreError {
    match e {
        mia_forge::ForgeError::Exists(m) => CoreError::Conflict(m),
        e => CoreError::Remote(e.to_string()),
    }
}

/// `github 12 https://…` as recorded on a branch.
fn parse_link(v: &str) -> Option<PullRequestLink> {
    let mut it = v.split_whitespace();
    let provider = match it.next()? {
        "github" => ForgeKind::Github,
        "gitlab" => ForgeKind::Gitlab,
        _ => return None,
    };
    Some(PullRequestLink {
        provider,
        number: it.next()?.parse().ok()?,
        url: it.next()?.to_string(),
    })
}

fn strip_fences(text: &str) -> String {
    let t = text.trim();
    let t = t.strip_prefix("```").map_or(t, |rest| {
        let rest = rest.split_once('\n').map_or("", |(_, r)| r);
        rest.strip_suffix("```").unwrap_or(rest)
    });
    t.trim().to_string()
}

/// First line → title; the rest (after blank lines) → body.
fn split_message(text: &str) -> Draft {
    let (title, body) = text.split_once('\n').unwrap_or((text, ""));
    Draft {
        title: title.trim().trim_start_matches('#').trim().to_string(),
        body: body.trim().to_string(),
    }
}

fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_split_and_unfenced() {
        let d = split_message(&strip_fences(
            "```text\nFix the parser\n\nIt dropped the last line.\n```",
        ));
        assert_eq!(d.title, "Fix the parser");
        assert_eq!(d.body, "It dropped the last line.");
        assert_eq!(split_message("Only a subject").body, "");
    }

    #[test]
    fn recorded_links_parse() {
        let l = parse_link("github 7 https://github.com/a/b/pull/7").unwrap();
        assert_eq!((l.provider, l.number), (ForgeKind::Github, 7));
        assert!(parse_link("bitbucket 1 x").is_none());
        assert_eq!(shell_word("a b'c"), "'a b'\\''c'");
        assert_eq!(shell_word("src/lib.rs"), "src/lib.rs");
    }
}
