//! Sharing sessions (spec 022): the preview (exactly the payload that would
//! be sent, redacted), publishing to a share server, updating and revoking
//! shares, "My shares", the offline HTML export, and auto mode's sync after
//! each turn.
//!
//! Nothing leaves the machine unredacted: the payload is built
//! (`mia_share::build`), then redacted (`mia_share::Redactor`), and that
//! same value is what the preview shows, what is uploaded and what the
//! export renders. A share's secret is kept like an API key: in the OS
//! keychain when there is one, else in `$MIA_CODE_HOME/share-secrets.json`
//! (0600).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mia_config::{ShareMode, ShareSettings};
use mia_protocol::{
    DiffScope, Event, SessionId, SharePayload, SharePreview, ShareRecord, ShareRequest, SharedDiff,
};
use mia_providers::credentials::{FileStore, SecretStore};
use mia_store::StoredShare;

use crate::CoreError;
use crate::runtime::{Runtime, lock};

/// How long auto mode waits after a turn before syncing (turns in quick
/// succession make one upload).
const AUTO_DEBOUNCE: Duration = Duration::from_secs(2);
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A built, redacted payload and what the user needs to judge it.
struct Prepared {
    preview: SharePreview,
    settings: ShareSettings,
    source: String,
}

/// `https://share.example.com/api/` → `https://share.example.com`.
pub fn normalize_server(url: &str) -> Result<String, CoreError> {
    let mut s = url.trim().trim_end_matches('/').to_string();
    if let Some(base) = s.strip_suffix("/api") {
        s = base.to_string();
    }
    let lower = s.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(char::is_whitespace) => Ok(s),
        _ => Err(CoreError::Invalid(format!(
            "{url:?} is not a share server URL; use http(s)://host[:port], e.g. https://share.example.com"
        ))),
    }
}

fn home_spellings() -> Vec<String> {
    let mut out = Vec::new();
    for var in ["HOME", "USERPROFILE"] {
        if let Some(h) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            let p = PathBuf::from(h);
            out.push(p.display().to_string());
            if let Ok(c) = dunce::canonicalize(&p) {
                out.push(c.display().to_string());
            }
        }
    }
    out.retain(|h| h.len() > 1);
    out.sort();
    out.dedup();
    out
}

fn secret_key(server: &str, id: &str) -> String {
    format!("share:{server}#{id}")
}

/// What a share server answered with an error: its `{"error"}` text.
async fn remote_error(server: &str, what: &str, r: reqwest::Response) -> CoreError {
    let status = r.status();
    let text = r.text().await.unwrap_or_default();
    let msg = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
        .unwrap_or_else(|| text.chars().take(300).collect());
    CoreError::Remote(format!(
        "the share server {server} refused to {what} ({status}): {msg}"
    ))
}

fn unreachable(server: &str, e: reqwest::Error) -> CoreError {
    CoreError::Remote(format!(
        "cannot reach the share server {server}: {e}; check share.endpoint (or --server) and your network"
    ))
}

impl Runtime {
    fn share_secrets(&self) -> FileStore {
        FileStore::new(self.inner.opts.paths.home.join("share-secrets.json"))
    }

    /// Keep a share's secret: the keychain if it takes it, else the file.
    fn keep_secret(&self, key: &str, secret: &str) -> Result<(), CoreError> {
        if let Some(k) = self.inner.opts.credentials.keychain() {
            match k.set(key, secret).and_then(|()| k.get(key)) {
                Ok(Some(back)) if back == secret => return Ok(()),
                Ok(_) => {
                    tracing::info!("the keychain did not keep the share secret; using the file")
                }
                Err(e) => {
                    tracing::info!(error = %e, "keychain unavailable; using the share secrets file")
                }
            }
        }
        self.share_secrets()
            .set(key, secret)
            .map_err(|e| CoreError::Failed(e.to_string()))
    }

    fn find_secret(&self, key: &str) -> Result<Option<String>, CoreError> {
        if let Some(k) = self.inner.opts.credentials.keychain()
            && let Ok(Some(s)) = k.get(key)
        {
            return Ok(Some(s));
        }
        self.share_secrets()
            .get(key)
            .map_err(|e| CoreError::Failed(e.to_string()))
    }

    fn forget_secret(&self, key: &str) {
        if let Some(k) = self.inner.opts.credentials.keychain() {
            let _ = k.delete(key);
        }
        let _ = self.share_secrets().delete(key);
    }

    /// Build and redact the payload of `id` as `req` asks.
    async fn prepare_share(
        &self,
        id: SessionId,
        req: &ShareRequest,
    ) -> Result<Prepared, CoreError> {
        let session = self.inner.store.call(move |db| db.get_session(&id)).await?;
        let directory = PathBuf::from(&session.directory);
        let config = self
            .load_config(Some(directory.clone()).filter(|d| d.is_dir()))
            .await?;
        let settings = config.share_settings();
        let source = config
            .origins
            .get("share.mode")
            .cloned()
            .unwrap_or_else(|| "built-in".into());
        let messages = self.session_messages(id, true).await?;
        let diffs = if settings.include_diffs {
            match self.diff(id, DiffScope::Session).await {
                Ok(view) => view
                    .files
                    .iter()
                    .map(|f| SharedDiff {
                        file: f.file.clone(),
                        status: f.status.as_str().to_string(),
                        additions: f.additions,
                        deletions: f.deletions,
                        patch: if f.binary {
                            String::new()
                        } else {
                            mia_snapshot::to_patch(std::slice::from_ref(f))
                        },
                        binary: f.binary,
                    })
                    .collect(),
                Err(e) => {
                    tracing::info!(session = %id, error = %e, "no diffs for the share");
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let project = Path::new(&session.directory)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let opts = mia_share::BuildOptions {
            include_tool_results: settings.include_tool_results,
            include_diffs: settings.include_diffs,
            exclude_messages: req.exclude_messages.iter().cloned().collect(),
            exclude_tool_results: req.exclude_tool_results.iter().cloned().collect(),
        };
        let env_calls = mia_share::env_file_calls(&messages);
        let patterns = settings.redact_patterns.clone();
        let (payload, redactions) = tokio::task::spawn_blocking(move || {
            let mut payload = mia_share::build(&session, &project, &messages, diffs, &opts);
            let redactor = mia_share::Redactor::new(mia_share::RedactOptions {
                patterns,
                home: home_spellings(),
                env_file_calls: env_calls,
            })?;
            let redactions = redactor.redact(&mut payload);
            Ok::<_, mia_share::ShareError>((payload, redactions))
        })
        .await
        .map_err(|e| CoreError::Internal(e.to_string()))?
        .map_err(|e| CoreError::Failed(e.to_string()))?;
        let server = match req.server.as_deref().or(settings.endpoint.as_deref()) {
            Some(s) => Some(normalize_server(s)?),
            None => None,
        };
        let sid = id.to_string();
        let existing = self
            .inner
            .store
            .call(move |db| db.share_of_session(&sid))
            .await?
            .map(|s| s.record);
        let bytes = serde_json::to_vec(&payload).map(|v| v.len()).unwrap_or(0) as u64;
        Ok(Prepared {
            preview: SharePreview {
                payload,
                redactions,
                server,
                mode: settings.mode.as_str().to_string(),
                existing,
                bytes,
            },
            settings,
            source,
        })
    }

    /// Exactly what sharing `id` would send, with every redaction.
    pub async fn share_preview(
        &self,
        id: SessionId,
        req: ShareRequest,
    ) -> Result<SharePreview, CoreError> {
        Ok(self.prepare_share(id, &req).await?.preview)
    }

    /// The offline export: one self-contained HTML file's text, the same
    /// payload and renderer as a share (no network).
    pub async fn share_export(
        &self,
        id: SessionId,
        req: ShareRequest,
    ) -> Result<(String, SharePreview), CoreError> {
        let p = self.prepare_share(id, &req).await?;
        let payload = p.preview.payload.clone();
        let html = tokio::task::spawn_blocking(move || {
            mia_share::page(
                &payload,
                &mia_share::PageMeta {
                    expires_at: None,
                    exported: true,
                },
            )
        })
        .await
        .map_err(|e| CoreError::Internal(e.to_string()))?;
        Ok((html, p.preview))
    }

    /// Share `id` (or update its share): the payload of `req`, redacted.
    pub async fn share_publish(
        &self,
        id: SessionId,
        req: ShareRequest,
    ) -> Result<ShareRecord, CoreError> {
        let p = self.prepare_share(id, &req).await?;
        if p.settings.mode == ShareMode::Disabled {
            return Err(CoreError::Refused(format!(
                "sharing is disabled (share.mode is \"disabled\" in {}); set it to \"ask\" to share",
                p.source
            )));
        }
        let Some(server) = p.preview.server.clone() else {
            let global = self
                .inner
                .opts
                .paths
                .global_configs
                .first()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.mia-code.json".into());
            return Err(CoreError::Invalid(format!(
                "no share server is configured: set share.endpoint in your global config ({global}), or pass --server URL"
            )));
        };
        let title = p.preview.payload.session.title.clone();
        let existing = match &p.preview.existing {
            Some(e) if e.server == server => Some(e.clone()),
            _ => None,
        };
        let record = match existing {
            Some(e) => self.update_share(&e, &p.preview.payload, &title).await?,
            None => {
                self.create_share(id, &server, &p.preview.payload, &title, p.settings.ttl_days)
                    .await?
            }
        };
        Ok(record)
    }

    async fn create_share(
        &self,
        id: SessionId,
        server: &str,
        payload: &SharePayload,
        title: &str,
        ttl_days: u32,
    ) -> Result<ShareRecord, CoreError> {
        #[derive(serde::Deserialize)]
        struct Created {
            id: String,
            url: String,
            secret: String,
            created_at: Option<i64>,
            expires_at: Option<i64>,
        }
        let client = http()?;
        let r = client
            .post(format!("{server}/api/sessions"))
            .query(&[("ttl_days", ttl_days)])
            .json(payload)
            .send()
            .await
            .map_err(|e| unreachable(server, e))?;
        if !r.status().is_success() {
            return Err(remote_error(server, "create the share", r).await);
        }
        let made: Created = r.json().await.map_err(|e| {
            CoreError::Remote(format!(
                "the share server {server} answered something that is not a share: {e}"
            ))
        })?;
        let key = secret_key(server, &made.id);
        let now = mia_protocol::now_ms();
        let record = ShareRecord {
            id: made.id.clone(),
            url: made.url,
            server: server.to_string(),
            session_id: Some(id.to_string()),
            session_title: title.to_string(),
            created_at: made.created_at.unwrap_or(now),
            updated_at: now,
            expires_at: made.expires_at,
            session_deleted: false,
        };
        if let Err(e) = self.keep_secret(&key, &made.secret) {
            // Without the secret the share could never be revoked: take it
            // down now rather than leave it out of the user's control.
            let _ = client
                .delete(format!("{server}/api/sessions/{}", made.id))
                .bearer_auth(&made.secret)
                .send()
                .await;
            return Err(CoreError::Failed(format!(
                "the share's secret could not be kept ({e}); the share was taken down again"
            )));
        }
        let stored = StoredShare {
            record: record.clone(),
            secret_ref: key,
        };
        self.inner
            .store
            .call(move |db| db.put_share(&stored))
            .await?;
        Ok(record)
    }

    async fn update_share(
        &self,
        existing: &ShareRecord,
        payload: &SharePayload,
        title: &str,
    ) -> Result<ShareRecord, CoreError> {
        #[derive(serde::Deserialize)]
        struct Updated {
            url: Option<String>,
            updated_at: Option<i64>,
            expires_at: Option<i64>,
        }
        let server = &existing.server;
        let key = secret_key(server, &existing.id);
        let Some(secret) = self.find_secret(&key)? else {
            return Err(CoreError::Invalid(format!(
                "the secret of share {} is missing from the keychain and {}; it cannot be updated or revoked from here",
                existing.id,
                self.share_secrets().path().display()
            )));
        };
        let r = http()?
            .put(format!("{server}/api/sessions/{}", existing.id))
            .bearer_auth(&secret)
            .json(payload)
            .send()
            .await
            .map_err(|e| unreachable(server, e))?;
        if r.status() == reqwest::StatusCode::GONE || r.status() == reqwest::StatusCode::NOT_FOUND {
            // Revoked elsewhere or expired: forget it, so the next share is new.
            let (srv, id) = (server.clone(), existing.id.clone());
            self.inner
                .store
                .call(move |db| db.delete_share(&srv, &id))
                .await?;
            self.forget_secret(&key);
            return Err(CoreError::Conflict(format!(
                "the share {} is no longer on {server} (revoked or expired); share again to publish a new link",
                existing.url
            )));
        }
        if !r.status().is_success() {
            return Err(remote_error(server, "update the share", r).await);
        }
        let up: Updated = r
            .json()
            .await
            .map_err(|e| CoreError::Remote(format!("the share server {server} answered: {e}")))?;
        let record = ShareRecord {
            url: up.url.unwrap_or_else(|| existing.url.clone()),
            session_title: title.to_string(),
            updated_at: up.updated_at.unwrap_or_else(mia_protocol::now_ms),
            expires_at: up.expires_at.or(existing.expires_at),
            session_deleted: false,
            ..existing.clone()
        };
        let stored = StoredShare {
            record: record.clone(),
            secret_ref: key,
        };
        self.inner
            .store
            .call(move |db| db.put_share(&stored))
            .await?;
        Ok(record)
    }

    /// Revoke a share: `reference` is a share id (as `shares list` shows),
    /// or a session (id, prefix or slug) whose share it is.
    pub async fn revoke_share(&self, reference: &str) -> Result<ShareRecord, CoreError> {
        let r = reference.to_string();
        let mut found = self
            .inner
            .store
            .call(move |db| db.shares_with_id(&r))
            .await?;
        if found.is_empty() {
            let session = self.resolve_session(reference).await.map_err(|_| {
                CoreError::NotFound(format!(
                    "no share or session matches `{reference}`; `mia-code shares list` shows your shares"
                ))
            })?;
            let sid = session.id.to_string();
            match self
                .inner
                .store
                .call(move |db| db.share_of_session(&sid))
                .await?
            {
                Some(s) => found.push(s),
                None => {
                    return Err(CoreError::NotFound(format!(
                        "session {} is not shared",
                        session.id
                    )));
                }
            }
        }
        if found.len() > 1 {
            return Err(CoreError::Invalid(format!(
                "share id {reference} exists on {} servers; revoke it from the UI's My shares",
                found.len()
            )));
        }
        let Some(share) = found.pop() else {
            return Err(CoreError::NotFound(format!(
                "no share matches `{reference}`"
            )));
        };
        self.revoke_stored(share).await
    }

    /// Revoke the share of session `id`.
    pub async fn unshare_session(&self, id: SessionId) -> Result<ShareRecord, CoreError> {
        let sid = id.to_string();
        match self
            .inner
            .store
            .call(move |db| db.share_of_session(&sid))
            .await?
        {
            Some(s) => self.revoke_stored(s).await,
            None => Err(CoreError::NotFound(format!("session {id} is not shared"))),
        }
    }

    async fn revoke_stored(&self, share: StoredShare) -> Result<ShareRecord, CoreError> {
        let rec = share.record.clone();
        let server = rec.server.clone();
        let secret = self.find_secret(&share.secret_ref)?;
        if let Some(secret) = secret {
            let r = http()?
                .delete(format!("{server}/api/sessions/{}", rec.id))
                .bearer_auth(&secret)
                .send()
                .await
                .map_err(|e| unreachable(&server, e))?;
            let s = r.status();
            // Gone already (revoked, expired, purged) is what we wanted.
            if !(s.is_success()
                || s == reqwest::StatusCode::GONE
                || s == reqwest::StatusCode::NOT_FOUND)
            {
                return Err(remote_error(&server, "revoke the share", r).await);
            }
        } else {
            return Err(CoreError::Invalid(format!(
                "the secret of share {} is missing from the keychain and {}; it cannot be revoked from here",
                rec.id,
                self.share_secrets().path().display()
            )));
        }
        let (srv, id) = (server.clone(), rec.id.clone());
        self.inner
            .store
            .call(move |db| db.delete_share(&srv, &id))
            .await?;
        self.forget_secret(&share.secret_ref);
        Ok(rec)
    }

    /// Every share this machine created, newest first.
    pub async fn shares(&self) -> Result<Vec<ShareRecord>, CoreError> {
        Ok(self
            .inner
            .store
            .call(|db| db.shares())
            .await?
            .into_iter()
            .map(|s| s.record)
            .collect())
    }

    /// Auto mode: after a turn, sync the session's share (debounced, best
    /// effort; the first failure per session is reported, later ones only
    /// logged, and nothing here can fail the turn).
    pub(crate) fn share_after_turn(&self, id: SessionId) {
        if !lock(&self.inner.share_pending).insert(id) {
            return;
        }
        let rt = self.clone();
        let task = tokio::spawn(async move {
            let auto = match rt.auto_share_enabled(id).await {
                Ok(a) => a,
                Err(e) => {
                    tracing::debug!(session = %id, error = %e, "auto share skipped");
                    false
                }
            };
            if !auto {
                lock(&rt.inner.share_pending).remove(&id);
                return;
            }
            tokio::time::sleep(AUTO_DEBOUNCE).await;
            lock(&rt.inner.share_pending).remove(&id);
            match rt.share_publish(id, ShareRequest::default()).await {
                Ok(rec) => {
                    lock(&rt.inner.share_failed).remove(&id);
                    tracing::info!(session = %id, url = %rec.url, "share synced");
                }
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "auto share failed");
                    if lock(&rt.inner.share_failed).insert(id) {
                        rt.emit(Event::Error {
                            session_id: Some(id),
                            kind: "share".into(),
                            message: format!(
                                "auto share failed (retried after the next turn): {e}"
                            ),
                            retryable: true,
                        });
                    }
                }
            }
        });
        let mut tasks = lock(&self.inner.share_tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    /// Wait for background work a process must not cut short: scheduled
    /// auto-share syncs and Notification hooks (`mia-code run` and
    /// `mia-code acp` call this before they exit, so the last turn is
    /// synced and every hook has run).
    pub async fn settle_background(&self) {
        let tasks: Vec<_> = std::mem::take(&mut *lock(&self.inner.share_tasks));
        for t in tasks {
            let _ = t.await;
        }
    }

    async fn auto_share_enabled(&self, id: SessionId) -> Result<bool, CoreError> {
        let session = self.inner.store.call(move |db| db.get_session(&id)).await?;
        if session.spawned_by.is_some() {
            // Subagent sessions are part of their parent's conversation.
            return Ok(false);
        }
        let dir = PathBuf::from(&session.directory);
        let config = self.load_config(Some(dir).filter(|d| d.is_dir())).await?;
        let s = config.share_settings();
        Ok(s.mode == ShareMode::Auto && s.endpoint.is_some())
    }
}

fn http() -> Result<reqwest::Client, CoreError> {
    reqwest::Client::builder()
        .timeout(HTTP_TIMEOUT)
        .user_agent(concat!("mia-code/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| CoreError::Internal(format!("HTTP client: {e}")))
}
