//! Compaction (specs 017, 019): when a session's conversation grows past
//! `compaction.threshold` messages or its next request would fill
//! `tokenRatio` of the model's window, the hidden compaction agent
//! summarises everything before the retained tail, and the store archives
//! those messages behind the summary in one transaction (nothing is
//! deleted). Later rounds update the previous summary. Facts the model must
//! not lose — the user's own words, the todo list, the files the session
//! changed — are added from the store, not from the model's memory.

use std::collections::HashMap;
use std::sync::Arc;

use mia_config::Config;
use mia_protocol::{
    CompactResult, Event, Message, MessageId, MessageMetadata, PartContent, Role, SessionId,
    SessionStatus,
};
use mia_providers::{ChatMessage, ChatRequest, ChatRole, ContentPart, ModelRef, ProviderError};
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::runtime::{Runtime, lock};
use crate::session::SessionState;

/// Characters per token for estimates (a conservative average for code and prose).
const CHARS_PER_TOKEN: u64 = 4;
/// Per-message overhead of the wire formats, in tokens.
const MESSAGE_OVERHEAD: u64 = 4;
/// A tool output longer than this is shortened in the compaction transcript.
const TRANSCRIPT_OUTPUT_CHARS: usize = 2_000;
/// The user's own words added verbatim to the summary, at most.
const USER_WORDS_CHARS: usize = 12_000;
/// Compaction attempts before the circuit breaker stops.
const MAX_ATTEMPTS: usize = 2;

/// Why a compaction runs.
pub use mia_protocol::CompactionTrigger as Trigger;

/// `compaction.*` with defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub enabled: bool,
    pub auto: bool,
    pub threshold: usize,
    pub retain: usize,
    pub ratio: f64,
    pub reserved: Option<u64>,
    pub model: Option<String>,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        let c = config.merged.compaction.clone().unwrap_or_default();
        Self {
            enabled: c.enabled.unwrap_or(true),
            auto: c.auto_trigger.unwrap_or(true),
            threshold: c.threshold.unwrap_or(50).max(4) as usize,
            retain: c.retain_count.unwrap_or(20).max(1) as usize,
            ratio: c.token_ratio.unwrap_or(0.8).clamp(0.1, 0.95),
            reserved: c.reserved.map(u64::from),
            model: c.model,
        }
    }

    /// Whether automatic compaction may run (both switches on).
    pub fn automatic(&self) -> bool {
        self.enabled && self.auto
    }
}

/// The window a request may fill: `ratio` × (context window − reserved output).
/// `model`'s context window (the catalog's, else 128k) and the token budget
/// automatic compaction keeps under.
pub fn window_and_budget(settings: &Settings, model: &ModelRef) -> (u64, u64) {
    let (window, max_output) = mia_providers::catalog::builtin()
        .lookup_ref(model)
        .map(|m| (m.context_window, u64::from(m.max_output)))
        .unwrap_or((128_000, 8_192));
    (window, token_budget(settings, window, max_output))
}

pub fn token_budget(settings: &Settings, window: u64, max_output: u64) -> u64 {
    let reserved = settings.reserved.unwrap_or(max_output.min(32_000));
    let usable = window.saturating_sub(reserved);
    (usable as f64 * settings.ratio) as u64
}

/// Token estimates per message, kept across steps so that deciding costs a
/// sum, not a re-serialisation of the whole history.
#[derive(Debug, Default, Clone)]
pub struct Estimates {
    /// Message id → (its number of parts when estimated, tokens).
    per_message: HashMap<MessageId, (usize, u64)>,
}

impl Estimates {
    /// The estimate of one message, computed again only when its parts
    /// changed (tool results are appended to the message that called).
    pub fn of(&mut self, m: &Message) -> u64 {
        if let Some(&(n, t)) = self.per_message.get(&m.id)
            && n == m.parts.len()
        {
            return t;
        }
        let t = estimate_message(m);
        self.per_message.insert(m.id, (m.parts.len(), t));
        t
    }

    /// Drop the estimates of messages no longer in `visible` (archived).
    pub fn retain_only(&mut self, visible: &[&Message]) {
        if self.per_message.len() > visible.len() * 2 + 64 {
            let keep: std::collections::HashSet<MessageId> = visible.iter().map(|m| m.id).collect();
            self.per_message.retain(|id, _| keep.contains(id));
        }
    }
}

/// Characters of what a message sends to the model, as tokens.
pub fn estimate_message(m: &Message) -> u64 {
    let mut chars: u64 = 0;
    for p in &m.parts {
        chars += match &p.content {
            PartContent::Text { text, .. } | PartContent::Reasoning { text, .. } => text.len(),
            PartContent::ToolCall { tool, input, .. } => tool.len() + input.to_string().len(),
            PartContent::ToolResult { output, .. } => output.len() + 16,
            PartContent::CompactionSummary { summary, .. } => summary.len(),
            PartContent::Image { data, .. } => data.len().min(6_000),
            _ => 0,
        } as u64;
    }
    chars / CHARS_PER_TOKEN + MESSAGE_OVERHEAD
}

/// The estimated tokens of the next request: the fixed part (system prompt
/// and tools), the visible history, and — when the provider reported the
/// last request's size — that figure plus what came after it, whichever is
/// larger.
pub fn estimate_request(visible: &[&Message], fixed: u64, est: &mut Estimates) -> u64 {
    let mut total = fixed;
    let mut after_report: u64 = 0;
    let mut reported: Option<u64> = None;
    for m in visible {
        let t = est.of(m);
        total += t;
        if m.message_type == mia_protocol::MessageType::CompactionSummary {
            // What the provider counted before this summary included the
            // messages it replaced: stale.
            reported = None;
            after_report = 0;
            continue;
        }
        if let Some(u) = m
            .metadata
            .tokens
            .as_ref()
            .filter(|_| m.role == Role::Assistant)
        {
            // The request that produced this message, as the provider counted it.
            reported = Some(u.input + u.cache_read + u.cache_write + u.output);
            after_report = 0;
        } else {
            after_report += t;
        }
    }
    match reported {
        Some(r) => total.max(r + after_report),
        None => total,
    }
}

/// Whether to compact before the next request.
pub fn decide(
    settings: &Settings,
    visible: &[&Message],
    fixed: u64,
    budget: u64,
    est: &mut Estimates,
) -> Option<(Trigger, u64)> {
    let tokens = estimate_request(visible, fixed, est);
    if !settings.automatic() {
        return None;
    }
    if tokens > budget {
        return Some((Trigger::Tokens, tokens));
    }
    if visible.len() > settings.threshold {
        return Some((Trigger::Messages, tokens));
    }
    None
}

/// How many of the newest visible messages to keep: `retain`, fewer when
/// they alone would take more than half the budget (none, when even the
/// newest one would: a huge tool output is then summarised too, so the
/// request after compaction fits), and always fewer than all. `None` when
/// there is nothing to compact.
pub fn retained_count(
    visible: &[&Message],
    retain: usize,
    budget: u64,
    est: &mut Estimates,
) -> Option<usize> {
    if visible.len() < 2 {
        return None;
    }
    // Spec 019: everything but the newest `retain`; with no more than
    // that many (a manual `/compact`), the older half.
    let mut keep = if visible.len() > retain {
        retain
    } else {
        (visible.len() / 2).max(1)
    };
    let half = budget / 2;
    while keep > 0 {
        let tail: u64 = visible[visible.len() - keep..]
            .iter()
            .map(|m| est.of(m))
            .sum();
        if tail <= half {
            break;
        }
        keep -= 1;
    }
    Some(keep)
}

/// One message as transcript text for the compaction agent; tool outputs
/// shortened, or left out (a one-line note) when `drop_outputs`.
fn transcript_of(m: &Message, drop_outputs: bool) -> String {
    let who = match (m.role, &m.message_type) {
        (_, mia_protocol::MessageType::CompactionSummary) => "Earlier summary",
        (Role::User, _) => "User",
        (Role::Assistant, _) => "Assistant",
        (Role::System, _) => "Note",
    };
    let mut out = String::new();
    for p in &m.parts {
        match &p.content {
            PartContent::Text { text, .. } => out.push_str(&format!("{who}: {text}\n")),
            PartContent::CompactionSummary { summary, .. } => {
                out.push_str(&format!("{who}:\n{summary}\n"))
            }
            PartContent::ToolCall { tool, input, .. } => {
                out.push_str(&format!("Assistant called {tool} {input}\n"))
            }
            PartContent::ToolResult {
                tool,
                output,
                is_error,
                ..
            } => {
                let status = if *is_error { "failed" } else { "ok" };
                if drop_outputs {
                    out.push_str(&format!(
                        "{tool} result ({status}, {} lines, output left out)\n",
                        output.lines().count()
                    ));
                } else if output.len() > TRANSCRIPT_OUTPUT_CHARS {
                    let cut: String = output.chars().take(TRANSCRIPT_OUTPUT_CHARS).collect();
                    out.push_str(&format!(
                        "{tool} result ({status}):\n{cut}\n[… {} more characters]\n",
                        output.len() - cut.len()
                    ));
                } else {
                    out.push_str(&format!("{tool} result ({status}):\n{output}\n"));
                }
            }
            PartContent::Revert {
                restored, removed, ..
            } => out.push_str(&format!(
                "Note: the user reverted file changes ({} restored, {} removed)\n",
                restored.len(),
                removed.len()
            )),
            PartContent::Error { message, .. } => out.push_str(&format!("Error: {message}\n")),
            _ => {}
        }
    }
    out
}

/// The instruction the compaction agent gets with the transcript.
fn instructions(update: bool) -> &'static str {
    if update {
        "Update the earlier summary with the conversation that followed it: keep what is still true, drop what is finished or no longer relevant, add what is new. Write the whole updated summary."
    } else {
        "Summarise the conversation above."
    }
}

const STRUCTURE: &str = "Write these sections, in this order, as Markdown headings: \
## Narrative (what happened, briefly), ## Files touched (path — status — what changed), \
## Decisions (with the reason), ## Errors resolved, ## Current state, ## Next steps. \
Mark finished work as finished; list only open work under Next steps.";

impl Runtime {
    /// `/compact`, `mia-code compact`: compact now, whatever the count.
    pub async fn compact(&self, session_id: SessionId) -> Result<CompactResult, CoreError> {
        let state = self.state(session_id).await?;
        self.claim(&state, "compaction").await?;
        let config = self.load_config(Some(state.directory.clone())).await;
        let result = match config {
            Ok(config) => {
                let cancel = CancellationToken::new();
                self.compact_claimed(&state, &config, Trigger::Manual, None, &cancel)
                    .await
            }
            Err(e) => Err(e),
        };
        self.release(&state).await;
        result
    }

    /// Compact a session whose claim the caller holds (a turn, or
    /// [`Runtime::compact`]). The session is `compacting` meanwhile. On
    /// failure nothing is changed and `compaction_failed` says why.
    pub(crate) async fn compact_claimed(
        &self,
        state: &Arc<SessionState>,
        config: &Config,
        trigger: Trigger,
        model_hint: Option<&ModelRef>,
        cancel: &CancellationToken,
    ) -> Result<CompactResult, CoreError> {
        let session_id = state.id;
        self.pre_compact_hooks(state, config, trigger).await;
        self.set_status(state, SessionStatus::Compacting).await?;
        let result = self
            .compact_inner(state, config, trigger, model_hint, cancel)
            .await;
        // Back to busy inside a turn (it goes on), idle after `/compact`.
        let back = if trigger == Trigger::Manual {
            SessionStatus::Idle
        } else {
            SessionStatus::Busy
        };
        if let Err(e) = self.set_status(state, back).await {
            tracing::warn!(session = %session_id, error = %e, "could not restore the session's status after compaction");
        }
        if let Err(e) = &result {
            self.emit(Event::CompactionFailed {
                session_id,
                trigger,
                message: e.to_string(),
            });
        }
        result
    }

    async fn compact_inner(
        &self,
        state: &Arc<SessionState>,
        config: &Config,
        trigger: Trigger,
        model_hint: Option<&ModelRef>,
        cancel: &CancellationToken,
    ) -> Result<CompactResult, CoreError> {
        let settings = Settings::from_config(config);
        let session = state.session();
        let session_id = session.id;
        if !settings.enabled {
            return Err(CoreError::Refused(
                "compaction is turned off (`compaction.enabled: false`); turn it on, fork from an earlier message, or start a new session".into(),
            ));
        }
        // The model the session talks to, and the one that summarises.
        let (session_model, compactor) = models(&session, config, &settings, model_hint)?;
        let catalog = mia_providers::catalog::builtin();
        let (window, budget) = window_and_budget(&settings, &session_model);

        // The whole session once: the archive for the user's words, the
        // visible messages for the cut.
        let all = self
            .inner
            .store
            .call(move |db| {
                db.get_messages(
                    &session_id,
                    &mia_store::MessageQuery {
                        include_compacted: true,
                        ..Default::default()
                    },
                )
            })
            .await?;
        let visible = as_the_model_sees(&all);
        let mut est = Estimates::default();
        let (keep, tokens_before) = cut_point(&visible, &settings, budget, &mut est)?;
        let (old, tail) = visible.split_at(visible.len() - keep);
        // How many messages of the conversation the new summary stands for.
        let stands_for = stands_for(old);
        self.emit(Event::CompactionStarted {
            session_id,
            trigger,
            tokens_before,
        });
        tracing::info!(session = %session_id, trigger = trigger.as_str(), compact = old.len(), keep, tokens_before, "compaction");

        // Facts from the store: the user's own words (the archive too, so
        // they survive every round), the todo list, the files changed.
        let user_words = user_words(&all);
        let todos = lock(&state.todos).clone();
        let files = changed_files(&self.step_records(session_id).await?);
        let update = old
            .iter()
            .any(|m| m.message_type == mia_protocol::MessageType::CompactionSummary);

        let provider = self.provider(config, &compactor.provider_id).await?;
        let wire = catalog.wire_id(&compactor.provider_id, &compactor.model_id);
        let compactor_window = catalog
            .lookup_ref(&compactor)
            .map(|m| m.context_window)
            .unwrap_or(window);
        let system = crate::prompt::builtin_template("compaction")
            .unwrap_or_default()
            .to_string();
        // What plugins want the summary to keep (`compaction.context`).
        let plugin_context = self
            .plugin_compaction_context(&state.directory, &session_id.to_string())
            .await;
        let summary = summarise(
            &provider,
            Summarise {
                wire,
                system,
                old,
                update,
                plugin_context,
                compactor_window,
            },
            cancel,
        )
        .await?;

        let usage = summary.usage;
        let text = summary_text(&summary.text, &user_words, &todos, &files);
        let summary_tokens = text.len() as u64 / CHARS_PER_TOKEN;
        let tail_tokens: u64 = tail.iter().map(|m| est.of(m)).sum();
        let tokens_after = summary_tokens + tail_tokens;
        let metadata = Figures {
            compactor: &compactor,
            usage,
            compacted: old.len() as u64,
            summary_tokens,
            trigger,
            tokens_before,
            tokens_after,
            retained: tail.len() as u64,
        }
        .metadata();
        let req = mia_store::CompactRequest {
            session: session_id,
            archive: old.iter().map(|m| m.id).collect(),
            summary: text,
            compacted_messages: u32::try_from(stands_for).unwrap_or(u32::MAX),
            metadata,
        };
        let (stored, archived) = self
            .inner
            .store
            .call(move |db| db.compact_session(req))
            .await?;
        let message_id = stored.id;
        self.emit(Event::MessageStored { message: stored });
        self.emit(Event::CompactionFinished {
            session_id,
            message_id,
            trigger,
            compacted: archived,
            retained: tail.len() as u64,
            tokens_before,
            tokens_after,
        });
        Ok(CompactResult {
            compacted: archived,
            retained: tail.len() as u64,
            tokens_before,
            tokens_after,
            message_id: message_id.to_string(),
        })
    }
}

/// How many of the visible messages stay verbatim, and the request's
/// estimate before; an error when there is nothing (new) to compact.
fn cut_point(
    visible: &[&Message],
    settings: &Settings,
    budget: u64,
    est: &mut Estimates,
) -> Result<(usize, u64), CoreError> {
    let tokens_before = estimate_request(visible, 0, est);
    let Some(keep) = retained_count(visible, settings.retain, budget, est) else {
        return Err(CoreError::Invalid(
            "there is nothing to compact yet: the session has fewer than two messages".into(),
        ));
    };
    let old = &visible[..visible.len() - keep];
    if old
        .iter()
        .all(|m| m.message_type == mia_protocol::MessageType::CompactionSummary)
    {
        return Err(CoreError::Invalid(
            "there is nothing new to compact: everything before the kept messages is already in the summary".into(),
        ));
    }
    Ok((keep, tokens_before))
}

/// The messages as the model sees them: the summary first, then the rest
/// in order (archived ones left out).
fn as_the_model_sees(all: &[Message]) -> Vec<&Message> {
    let is_summary = |m: &&Message| m.message_type == mia_protocol::MessageType::CompactionSummary;
    let shown = || all.iter().filter(|m| m.compacted_by.is_none());
    shown()
        .filter(is_summary)
        .chain(shown().filter(|m| !is_summary(m)))
        .collect()
}

/// How many messages of the conversation `old` stands for (a summary
/// among them counts as those it stood for).
fn stands_for(old: &[&Message]) -> u64 {
    old.iter()
        .map(|m| {
            m.parts
                .iter()
                .find_map(|p| match &p.content {
                    PartContent::CompactionSummary {
                        compacted_messages, ..
                    } => Some(u64::from(*compacted_messages)),
                    _ => None,
                })
                .unwrap_or(1)
        })
        .sum()
}

/// The figures of one compaction, recorded on the summary message.
struct Figures<'a> {
    compactor: &'a ModelRef,
    usage: Option<mia_protocol::TokenUsage>,
    compacted: u64,
    summary_tokens: u64,
    trigger: Trigger,
    tokens_before: u64,
    tokens_after: u64,
    retained: u64,
}

impl Figures<'_> {
    /// What the compaction call itself cost, on its own message.
    fn metadata(&self) -> MessageMetadata {
        let catalog = mia_providers::catalog::builtin();
        let mut metadata = MessageMetadata {
            agent: Some("compaction".into()),
            model: Some(self.compactor.to_string()),
            tokens: self.usage,
            cost_usd: self.usage.and_then(|u| catalog.cost(self.compactor, &u)),
            ..Default::default()
        };
        let extra = &mut metadata.extra;
        extra.insert("original_message_count".into(), self.compacted.into());
        extra.insert("compacted_at".into(), mia_protocol::now_ms().into());
        extra.insert("summary_token_count".into(), self.summary_tokens.into());
        extra.insert("trigger".into(), self.trigger.as_str().into());
        extra.insert("tokens_before".into(), self.tokens_before.into());
        extra.insert("tokens_after".into(), self.tokens_after.into());
        extra.insert("retained".into(), self.retained.into());
        metadata
    }
}

/// The model the session talks to (this turn's, else the session's or the
/// config's) and the one that summarises (the compaction agent's, else
/// `compaction.model`, else the provider's fast model).
fn models(
    session: &mia_protocol::Session,
    config: &Config,
    settings: &Settings,
    model_hint: Option<&ModelRef>,
) -> Result<(ModelRef, ModelRef), CoreError> {
    let agents = crate::agents::Agents::from_config(config);
    let session_model: ModelRef = match model_hint {
        Some(m) => m.clone(),
        None => {
            let text = session
                .model
                .clone()
                .or_else(|| config.merged.model.clone())
                .ok_or(CoreError::NoModel)?;
            text.parse()
                .map_err(|_| CoreError::BadModel(text.clone()))?
        }
    };
    let catalog = mia_providers::catalog::builtin();
    let compactor: ModelRef = match agents
        .get("compaction")
        .ok()
        .and_then(|a| a.model.clone())
        .or_else(|| settings.model.clone())
    {
        Some(text) => text
            .parse()
            .map_err(|_| CoreError::BadModel(text.clone()))?,
        None => catalog
            .fast_model(&session_model.provider_id)
            .filter(|m| m.provider_id == session_model.provider_id)
            .unwrap_or_else(|| session_model.clone()),
    };
    Ok((session_model, compactor))
}

/// The files the session's (not undone) tool steps changed, each with how
/// it last changed.
fn changed_files(records: &[mia_snapshot::StepRecord]) -> Vec<(String, String)> {
    let undone = mia_snapshot::undone_steps(records);
    let mut files: Vec<(String, String)> = Vec::new();
    for r in records {
        if undone.contains(&r.id) || r.kind != mia_snapshot::StepKind::Tool {
            continue;
        }
        for c in &r.changes {
            let kind = format!("{:?}", c.kind).to_lowercase();
            match files.iter_mut().find(|(p, _)| *p == c.path) {
                Some(f) => f.1 = kind,
                None => files.push((c.path.clone(), kind)),
            }
        }
    }
    files
}

/// What the compaction model is asked to summarise.
struct Summarise<'a> {
    wire: String,
    system: String,
    old: &'a [&'a Message],
    /// An earlier summary is among `old`: the new one updates it.
    update: bool,
    plugin_context: Vec<String>,
    compactor_window: u64,
}

/// Ask the compaction model, up to [`MAX_ATTEMPTS`] times; tool outputs
/// are left out when the transcript is too big for it.
async fn summarise(
    provider: &Arc<dyn mia_providers::Provider>,
    s: Summarise<'_>,
    cancel: &CancellationToken,
) -> Result<mia_providers::Completion, CoreError> {
    let mut drop_outputs = false;
    let mut failures: Vec<String> = Vec::new();
    loop {
        if failures.len() >= MAX_ATTEMPTS {
            return Err(CoreError::Failed(format!(
                "compaction failed {MAX_ATTEMPTS} times ({}); nothing was changed. Try /compact again later, fork from an earlier message, or start a new session",
                failures.join("; ")
            )));
        }
        let mut transcript = String::new();
        for m in s.old {
            transcript.push_str(&transcript_of(m, drop_outputs));
        }
        // Too big for the compaction model: leave tool outputs out first.
        if !drop_outputs
            && (transcript.len() as u64 / CHARS_PER_TOKEN) > s.compactor_window * 6 / 10
        {
            drop_outputs = true;
            continue;
        }
        let mut text = format!("{transcript}\n---\n{}\n{STRUCTURE}", instructions(s.update));
        if !s.plugin_context.is_empty() {
            text.push_str("\n\nAlso keep in the summary (from the project's plugins):\n");
            text.push_str(&s.plugin_context.join("\n"));
        }
        let mut request = ChatRequest::new(
            s.wire.clone(),
            vec![ChatMessage {
                role: ChatRole::User,
                content: vec![ContentPart::text(text)],
            }],
        );
        request.system = s.system.clone();
        match crate::llm::complete_once(provider, request, cancel).await {
            Ok(c) if !c.text.trim().is_empty() => return Ok(c),
            Ok(_) => failures.push("the compaction model answered with nothing".into()),
            Err(ProviderError::Cancelled) => {
                return Err(CoreError::Stopped(
                    "compaction was stopped; nothing was changed".into(),
                ));
            }
            Err(e @ ProviderError::ContextTooLong { .. }) => {
                failures.push(e.to_string());
                drop_outputs = true;
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
}

/// The summary as stored: the model's text, then the facts from the store
/// (the user's words, the todo list, the files changed).
fn summary_text(
    summary: &str,
    user_words: &str,
    todos: &mia_tools::TodoList,
    files: &[(String, String)],
) -> String {
    let mut text = summary.trim().to_string();
    text.push_str("\n\n## The user's words (verbatim)\n");
    text.push_str(user_words);
    if !todos.items.is_empty() {
        text.push_str("\n\n## Todo list (as it stands)\n");
        for t in &todos.items {
            text.push_str(&format!("- [{:?}] #{} {}\n", t.status, t.id, t.content));
        }
    }
    if !files.is_empty() {
        text.push_str("\n\n## Files changed in this session (from its snapshot steps)\n");
        for (p, k) in files {
            text.push_str(&format!("- {p} ({k})\n"));
        }
    }
    text
}

/// Every user message's own text, oldest first, verbatim (shortened in the
/// middle past [`USER_WORDS_CHARS`], the first one always whole).
fn user_words(all: &[Message]) -> String {
    let said: Vec<String> = all
        .iter()
        .filter(|m| m.role == Role::User)
        .filter_map(|m| {
            let t: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match &p.content {
                    PartContent::Text {
                        text,
                        synthetic: false,
                    } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            (!t.is_empty()).then(|| t.join("\n"))
        })
        .collect();
    let mut out = String::new();
    let mut skipped = 0usize;
    for (i, s) in said.iter().enumerate() {
        let line = format!("{}. {}\n", i + 1, s.trim());
        // The first request always; later ones while they fit, newest kept last.
        if i == 0 || out.len() + line.len() <= USER_WORDS_CHARS || i + 3 >= said.len() {
            out.push_str(&line);
        } else {
            skipped += 1;
        }
    }
    if skipped > 0 {
        out.push_str(&format!(
            "({skipped} more messages of the user are in the archive)\n"
        ));
    }
    out
}

/// What to tell the user when the conversation does not fit.
pub(crate) fn overflow_advice(settings: &Settings, session_id: SessionId) -> String {
    let off = if !settings.enabled {
        "Compaction is off (`compaction.enabled: false`). "
    } else if !settings.auto {
        "Automatic compaction is off (`compaction.autoTrigger: false`). "
    } else {
        ""
    };
    format!(
        "The conversation no longer fits the model's context window. {off}Run /compact (`mia-code compact --session {session_id}`), fork from an earlier message, or start a new session."
    )
}

/// How full `model`'s context is with `visible` plus `fixed` tokens (the
/// composer's context meter).
pub(crate) fn context_usage(
    config: &Config,
    model: &ModelRef,
    visible: &[&Message],
    fixed: Option<u64>,
    est: &mut Estimates,
) -> mia_protocol::ContextUsage {
    let (window, budget) = window_and_budget(&Settings::from_config(config), model);
    mia_protocol::ContextUsage {
        tokens: estimate_request(visible, fixed.unwrap_or(0), est),
        window,
        budget,
        model: model.to_string(),
        complete: fixed.is_some(),
    }
}

impl Runtime {
    /// Before a request of a turn: compact when the visible messages are
    /// over the threshold or the request would fill the budget. Returns the
    /// history to send (reloaded after a compaction).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn compact_before_request(
        &self,
        state: &Arc<SessionState>,
        config: &Config,
        model: &ModelRef,
        failed: &mut bool,
        fixed: u64,
        messages: Vec<Message>,
        cancel: &CancellationToken,
    ) -> Result<Vec<Message>, CoreError> {
        if *failed {
            return Ok(messages);
        }
        let settings = Settings::from_config(config);
        let (_, budget) = window_and_budget(&settings, model);
        let decision = {
            let visible: Vec<&Message> = messages.iter().collect();
            state.with(|l| {
                l.estimates.retain_only(&visible);
                decide(&settings, &visible, fixed, budget, &mut l.estimates)
            })
        };
        let Some((trigger, tokens)) = decision else {
            return Ok(messages);
        };
        tracing::info!(session = %state.id, trigger = trigger.as_str(), tokens, budget, "compacting before the next request");
        match self
            .compact_claimed(state, config, trigger, Some(model), cancel)
            .await
        {
            Ok(_) => {
                let id = state.id;
                Ok(self
                    .inner
                    .store
                    .call(move |db| db.get_messages(&id, &mia_store::MessageQuery::default()))
                    .await?)
            }
            Err(e) => {
                // The circuit breaker: no more automatic attempts this turn.
                tracing::warn!(error = %e, "compaction failed; the turn goes on without it");
                *failed = true;
                Ok(messages)
            }
        }
    }

    /// At the end of a turn: over the message threshold, compact now, so the
    /// next turn starts small; the agent then waits for the user.
    pub(crate) async fn compact_at_turn_end(
        &self,
        state: &Arc<SessionState>,
        t: &mut crate::turn::TurnSetup,
        cancel: &CancellationToken,
    ) {
        let settings = Settings::from_config(&t.config);
        if !settings.automatic() || t.compaction_failed {
            return;
        }
        let id = state.id;
        let Ok(visible) = self
            .inner
            .store
            .call(move |db| db.visible_message_count(&id))
            .await
        else {
            return;
        };
        if visible > settings.threshold as u64
            && let Err(e) = self
                .compact_claimed(state, &t.config, Trigger::Messages, Some(&t.model), cancel)
                .await
        {
            tracing::warn!(session = %id, error = %e, "compaction at the end of the turn failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mia_protocol::{MessageType, Part, PartId, TokenUsage};

    fn msg(role: Role, text: &str, tokens: Option<u64>, kind: MessageType) -> Message {
        let id = MessageId::new();
        Message {
            id,
            session_id: SessionId::new(),
            role,
            message_type: kind,
            metadata: MessageMetadata {
                tokens: tokens.map(|t| TokenUsage {
                    input: t,
                    output: 0,
                    cache_read: 0,
                    cache_write: 0,
                }),
                ..Default::default()
            },
            created_at: 0,
            compacted_by: None,
            parts: vec![Part {
                id: PartId::new(),
                message_id: id,
                index: 0,
                created_at: 0,
                content: PartContent::text(text),
            }],
        }
    }

    #[test]
    fn reported_usage_calibrates_until_a_summary_makes_it_stale() {
        let settings = Settings {
            enabled: true,
            auto: true,
            threshold: 50,
            retain: 20,
            ratio: 0.8,
            reserved: None,
            model: None,
        };
        let a = msg(Role::User, "hi", None, MessageType::Normal);
        let b = msg(Role::Assistant, "hello", Some(150_000), MessageType::Normal);
        let mut est = Estimates::default();
        // The provider said the last request was 150k tokens: over budget.
        assert_eq!(
            decide(&settings, &[&a, &b], 0, 100_000, &mut est).map(|d| d.0),
            Some(Trigger::Tokens)
        );
        // After a summary, that figure counted messages now archived.
        let s = msg(
            Role::System,
            "summary",
            None,
            MessageType::CompactionSummary,
        );
        assert_eq!(decide(&settings, &[&b, &s], 0, 100_000, &mut est), None);
        // Count trigger.
        let many: Vec<Message> = (0..51)
            .map(|i| msg(Role::User, &format!("m{i}"), None, MessageType::Normal))
            .collect();
        let refs: Vec<&Message> = many.iter().collect();
        assert_eq!(
            decide(&settings, &refs, 0, 100_000, &mut est).map(|d| d.0),
            Some(Trigger::Messages)
        );
        // Off: never.
        let off = Settings {
            auto: false,
            ..settings.clone()
        };
        assert_eq!(decide(&off, &refs, 0, 1, &mut est), None);
    }

    #[test]
    fn the_tail_is_bounded_by_tokens() {
        let mut est = Estimates::default();
        let small: Vec<Message> = (0..30)
            .map(|i| msg(Role::User, &format!("m{i}"), None, MessageType::Normal))
            .collect();
        let refs: Vec<&Message> = small.iter().collect();
        assert_eq!(retained_count(&refs, 20, 100_000, &mut est), Some(20));
        // Few messages: half are kept.
        assert_eq!(retained_count(&refs[..6], 20, 100_000, &mut est), Some(3));
        assert_eq!(retained_count(&refs[..1], 20, 100_000, &mut est), None);
        // A huge newest message: nothing of the tail fits half the budget.
        let mut big = small.clone();
        big.push(msg(
            Role::Assistant,
            &"x".repeat(40_000),
            None,
            MessageType::Normal,
        ));
        let refs: Vec<&Message> = big.iter().collect();
        assert_eq!(retained_count(&refs, 20, 4_000, &mut est), Some(0));
        assert_eq!(
            token_budget(
                &Settings {
                    reserved: Some(0),
                    ..Settings {
                        enabled: true,
                        auto: true,
                        threshold: 50,
                        retain: 20,
                        ratio: 0.5,
                        reserved: None,
                        model: None
                    }
                },
                1000,
                100
            ),
            500
        );
    }
}
