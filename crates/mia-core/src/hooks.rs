//! Hooks (docs/configuration.md#hooks): commands the config runs at points
//! of a session, in Claude Code's format and JSON contract, so hooks
//! written for it work unchanged. Each runs in the OS sandbox of a
//! worktree script (the project writable, its protected paths not), with
//! the project as its working directory and the event's JSON on stdin.
//!
//! The person's own (global) hooks run as configured. A project's run only
//! in a trusted workspace whose hook set (its hash) the person approved
//! (`mia-code permissions trust`, the desktop's trust prompt); a changed set
//! is skipped, with a warning, until approved again.

use std::path::Path;
use std::time::{Duration, Instant};

use mia_config::{Config, HookCommand, HookEvent, LayerKind};
use mia_protocol::{Event, HookRun, SessionId};
use serde_json::{Value, json};
use sha2::Digest as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::runtime::Runtime;

/// Default seconds before a hook is stopped (Claude Code's).
const DEFAULT_TIMEOUT: u32 = 60;
/// Output kept from a hook's stdout and stderr each.
const OUTPUT_CAP: usize = 64 * 1024;
/// A reason or stderr as the card shows it.
const MESSAGE_CAP: usize = 2_000;

/// One hook that may run.
#[derive(Debug, Clone)]
struct Hook {
    event: HookEvent,
    matcher: Matcher,
    command: HookCommand,
}

/// What a group's `matcher` matches.
#[derive(Debug, Clone)]
enum Matcher {
    All,
    Regex(regex::Regex),
    /// Not a regular expression: the group matches nothing (logged).
    Nothing,
}

/// The hooks of a session's directory, as they apply.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hooks {
    list: Vec<Hook>,
    /// Why the project's hooks do not run, when it has some that do not.
    pub(crate) skipped: Option<String>,
}

/// Claude Code's name of a mia-code tool (hooks match and read either).
pub(crate) fn claude_tool_name(tool: &str) -> &str {
    match tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "fetch" => "WebFetch",
        "todo" => "TodoWrite",
        "task" => "Task",
        other => other,
    }
}

/// The hash of a project's hook set (its layers' `hooks`, in order), or
/// `None` when the project has none.
pub(crate) fn project_hooks_hash(config: &Config) -> Option<String> {
    let sets: Vec<(String, &_)> = config
        .layers
        .iter()
        .filter(|l| l.kind == LayerKind::Project)
        .filter_map(|l| l.file.hooks.as_ref().map(|h| (l.source(), h)))
        .filter(|(_, h)| !h.is_empty())
        .collect();
    if sets.is_empty() {
        return None;
    }
    let text = serde_json::to_string(&sets).unwrap_or_default();
    Some(format!("{:x}", sha2::Sha256::digest(text.as_bytes())))
}

/// How many hook commands the project's config layers define.
pub(crate) fn project_hook_count(config: &Config) -> u32 {
    let n: usize = config
        .layers
        .iter()
        .filter(|l| l.kind == LayerKind::Project)
        .flat_map(|l| l.file.hooks.iter().flatten())
        .flat_map(|(_, groups)| groups.iter().map(|g| g.hooks.len()))
        .sum();
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Hooks {
    /// The hooks that apply: every global layer's, and the project's when
    /// `trusted` and its hash is `approved`.
    pub(crate) fn from_config(config: &Config, trusted: bool, approved: Option<&str>) -> Self {
        let project_hash = project_hooks_hash(config);
        let project_runs = trusted && project_hash.is_some() && project_hash.as_deref() == approved;
        let skipped = match (&project_hash, trusted, project_runs) {
            (None, _, _) | (Some(_), _, true) => None,
            (Some(_), false, _) => Some(
                "The project's hooks do not run: the workspace is not trusted (`mia-code permissions trust` approves them)".to_string(),
            ),
            (Some(_), true, false) => Some(
                "The project's hooks changed since you approved them and do not run: `mia-code permissions trust` approves the new set".to_string(),
            ),
        };
        let mut list = Vec::new();
        for layer in &config.layers {
            if layer.kind == LayerKind::Project && !project_runs {
                continue;
            }
            for (event, groups) in layer.file.hooks.iter().flatten() {
                for group in groups {
                    let matcher = match group
                        .matcher
                        .as_deref()
                        .map(str::trim)
                        .filter(|m| !m.is_empty() && *m != "*")
                    {
                        None => Matcher::All,
                        Some(m) => match regex::Regex::new(&format!("^(?:{m})$")) {
                            Ok(r) => Matcher::Regex(r),
                            Err(e) => {
                                tracing::warn!(matcher = m, error = %e, source = %layer.source(), "a hook's matcher is not a regular expression; the group matches nothing");
                                Matcher::Nothing
                            }
                        },
                    };
                    for command in &group.hooks {
                        list.push(Hook {
                            event: *event,
                            matcher: matcher.clone(),
                            command: command.clone(),
                        });
                    }
                }
            }
        }
        Self { list, skipped }
    }

    pub(crate) fn has(&self, event: HookEvent) -> bool {
        self.list.iter().any(|h| h.event == event)
    }

    fn matching<'a>(
        &'a self,
        event: HookEvent,
        subject: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.list.iter().filter(move |h| {
            h.event == event
                && match (&h.matcher, subject) {
                    (Matcher::All, _) | (Matcher::Regex(_), None) => true,
                    (Matcher::Nothing, _) => false,
                    (Matcher::Regex(r), Some(s)) => {
                        r.is_match(s) || r.is_match(claude_tool_name(s))
                    }
                }
        })
    }
}

/// A `permissionDecision` a `PreToolUse` hook gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HookPermission {
    Allow,
    Ask,
    Deny,
}

/// What the hooks of one event said together.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) runs: Vec<HookRun>,
    /// Exit 2 (stderr) or `decision: "block"` (reason).
    pub(crate) block: Option<String>,
    /// The strictest `permissionDecision`, with its reason.
    pub(crate) permission: Option<(HookPermission, String)>,
    /// `additionalContext`, and for `UserPromptSubmit`/`SessionStart` plain stdout.
    pub(crate) context: Vec<String>,
    /// `continue: false`: stop, with `stopReason`.
    pub(crate) stop: Option<String>,
}

/// Where a hook runs and what it reports to.
pub(crate) struct HookSite<'a> {
    pub(crate) config: &'a Config,
    pub(crate) dir: &'a Path,
    pub(crate) session_id: SessionId,
    pub(crate) call_id: Option<&'a str>,
}

impl Runtime {
    /// The hooks of `dir` as they apply now (trust and the approved set read
    /// from the store).
    pub(crate) async fn hooks_for(&self, config: &Config, dir: &Path) -> Hooks {
        let key = crate::worktrees::project_key(dir);
        let state = self
            .inner
            .store
            .call(move |db| Ok((db.is_workspace_trusted(&key)?, db.approved_hooks(&key)?)))
            .await;
        match state {
            Ok((trusted, approved)) => Hooks::from_config(config, trusted, approved.as_deref()),
            Err(e) => {
                tracing::warn!(error = %e, "could not read the workspace's trust; the project's hooks do not run");
                Hooks::from_config(config, false, None)
            }
        }
    }

    /// Run the hooks of `event` matching `subject` (a tool name, a source),
    /// one after the other; each run is an Event and a log line.
    pub(crate) async fn run_hooks(
        &self,
        hooks: &Hooks,
        site: &HookSite<'_>,
        event: HookEvent,
        subject: Option<&str>,
        mut input: Value,
    ) -> Verdict {
        let mut verdict = Verdict::default();
        let matching: Vec<&Hook> = hooks.matching(event, subject).collect();
        if matching.is_empty() {
            return verdict;
        }
        if let Value::Object(o) = &mut input {
            o.insert("session_id".into(), json!(site.session_id.to_string()));
            o.insert("transcript_path".into(), Value::Null);
            o.insert("cwd".into(), json!(site.dir.display().to_string()));
            o.insert("hook_event_name".into(), json!(event.as_str()));
        }
        let stdin = serde_json::to_vec(&input).unwrap_or_default();
        for hook in matching {
            let ran = self.run_one(site, &hook.command, &stdin).await;
            let run = apply(event, &ran, &mut verdict);
            tracing::info!(
                session = %site.session_id,
                event = event.as_str(),
                command = %hook.command.command,
                exit = ?run.exit_code,
                ms = run.duration_ms,
                outcome = ?run.outcome,
                "hook ran"
            );
            self.emit(Event::HookRan {
                session_id: site.session_id,
                call_id: site.call_id.map(str::to_string),
                run: run.clone(),
            });
            verdict.runs.push(run);
        }
        verdict
    }

    async fn run_one(&self, site: &HookSite<'_>, hook: &HookCommand, stdin: &[u8]) -> Ran {
        let start = Instant::now();
        let timeout = Duration::from_secs(u64::from(hook.timeout.unwrap_or(DEFAULT_TIMEOUT)));
        let paths = &self.inner.opts.paths;
        let confinement = crate::sandbox::script_confinement(site.config, site.dir, paths);
        let (mut cmd, guard) = match &confinement {
            Some(c) => match c.prepare("sh", &["-c", &hook.command]) {
                Ok(p) => (p.command, Some(p.guard)),
                Err(e) => {
                    return Ran::failed(
                        start,
                        &hook.command,
                        format!("did not run: the sandbox could not be set up ({e})"),
                    );
                }
            },
            None => {
                let mut c = std::process::Command::new("sh");
                c.args(["-c", &hook.command]);
                (c, None)
            }
        };
        cmd.current_dir(site.dir)
            .env("MIA_CODE_PROJECT_DIR", site.dir)
            .env("CLAUDE_PROJECT_DIR", site.dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Ran::failed(start, &hook.command, format!("did not start: {e}")),
        };
        let _running = match (&confinement, guard) {
            (Some(c), Some(g)) => Some(c.started(g, child.id())),
            _ => None,
        };
        let pid = child.id();
        if let Some(mut input) = child.stdin.take() {
            let bytes = stdin.to_vec();
            tokio::spawn(async move {
                // A hook that does not read its stdin is fine.
                let _ = input.write_all(&bytes).await;
            });
        }
        let out = child.stdout.take().map(read_capped);
        let err = child.stderr.take().map(read_capped);
        let status = tokio::time::timeout(timeout, child.wait()).await;
        let timed_out = status.is_err();
        if timed_out {
            kill_group(pid);
            let _ = child.kill().await;
        }
        let stdout = match out {
            Some(h) => h.await.unwrap_or_default(),
            None => String::new(),
        };
        let stderr = match err {
            Some(h) => h.await.unwrap_or_default(),
            None => String::new(),
        };
        Ran {
            exit_code: match status {
                Ok(Ok(s)) => s.code(),
                _ => None,
            },
            timed_out,
            stdout,
            stderr,
            started: start,
            failure: None,
            command: hook.command.clone(),
        }
    }
}

fn read_capped<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    mut r: R,
) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if buf.len() < OUTPUT_CAP {
                        buf.extend_from_slice(&chunk[..n.min(OUTPUT_CAP - buf.len())]);
                    }
                }
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// What one hook process did.
struct Ran {
    command: String,
    exit_code: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    started: Instant,
    failure: Option<String>,
}

impl Ran {
    fn failed(started: Instant, command: &str, why: String) -> Self {
        Self {
            command: command.to_string(),
            exit_code: None,
            timed_out: false,
            stdout: String::new(),
            stderr: String::new(),
            started,
            failure: Some(why),
        }
    }
}

fn short(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MESSAGE_CAP {
        return s.to_string();
    }
    let mut end = MESSAGE_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Read one run's result into the verdict (Claude Code's contract) and
/// describe it for the card.
fn apply(event: HookEvent, ran: &Ran, v: &mut Verdict) -> HookRun {
    let mut run = HookRun {
        event: event.as_str().to_string(),
        command: ran.command.clone(),
        exit_code: ran.exit_code,
        duration_ms: u64::try_from(ran.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        outcome: None,
        message: String::new(),
    };
    if let Some(why) = &ran.failure {
        run.outcome = Some("error".into());
        run.message = why.clone();
        return run;
    }
    if ran.timed_out {
        run.outcome = Some("timeout".into());
        run.message = "stopped: it ran past its timeout".into();
        return run;
    }
    match ran.exit_code {
        Some(0) => {}
        Some(2) => {
            let reason = short(&ran.stderr);
            let reason = if reason.is_empty() {
                format!("blocked by the {} hook `{}`", event.as_str(), ran.command)
            } else {
                reason
            };
            run.outcome = Some("block".into());
            run.message = reason.clone();
            v.block.get_or_insert(reason);
            return run;
        }
        _ => {
            run.outcome = Some("error".into());
            run.message = short(&ran.stderr);
            return run;
        }
    }
    let out = ran.stdout.trim();
    let parsed: Option<serde_json::Map<String, Value>> = out
        .starts_with('{')
        .then(|| serde_json::from_str(out).ok())
        .flatten();
    let Some(o) = parsed else {
        if !out.is_empty() && matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
        {
            v.context.push(short(out));
        }
        return run;
    };
    let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let specific = o.get("hookSpecificOutput").and_then(Value::as_object);
    let reason = text("reason").unwrap_or_default();
    if o.get("continue").and_then(Value::as_bool) == Some(false) {
        let why = text("stopReason").unwrap_or_else(|| "a hook stopped the turn".into());
        run.outcome = Some("stop".into());
        run.message = short(&why);
        v.stop.get_or_insert(why);
    }
    match text("decision").as_deref() {
        Some("block") => {
            let why = if reason.is_empty() {
                format!("blocked by the {} hook", event.as_str())
            } else {
                reason.clone()
            };
            run.outcome = Some("block".into());
            run.message = short(&why);
            v.block.get_or_insert(why);
        }
        // The older form of a PreToolUse allow.
        Some("approve") if event == HookEvent::PreToolUse => {
            set_permission(v, HookPermission::Allow, reason.clone(), &mut run);
        }
        _ => {}
    }
    if let Some(s) = specific {
        let pd = s.get("permissionDecision").and_then(Value::as_str);
        let pr = s
            .get("permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let p = match pd {
            Some("allow") => Some(HookPermission::Allow),
            Some("ask") => Some(HookPermission::Ask),
            Some("deny") => Some(HookPermission::Deny),
            _ => None,
        };
        if let (Some(p), HookEvent::PreToolUse) = (p, event) {
            set_permission(v, p, pr, &mut run);
        }
        if let Some(ctx) = s.get("additionalContext").and_then(Value::as_str)
            && !ctx.trim().is_empty()
        {
            v.context.push(short(ctx));
        }
    }
    run
}

fn set_permission(v: &mut Verdict, p: HookPermission, reason: String, run: &mut HookRun) {
    run.outcome = Some(
        match p {
            HookPermission::Allow => "allow",
            HookPermission::Ask => "ask",
            HookPermission::Deny => "deny",
        }
        .into(),
    );
    run.message = short(&reason);
    // The strictest answer of the event's hooks wins.
    if v.permission.as_ref().is_none_or(|(q, _)| p > *q) {
        v.permission = Some((p, reason));
    }
}

/// The tool input as a hook reads it: mia-code's arguments, plus Claude
/// Code's `file_path` (absolute) for the file tools.
pub(crate) fn hook_tool_input(tool: &str, input: &Value, root: &Path) -> Value {
    let mut v = input.clone();
    if let Value::Object(o) = &mut v
        && matches!(tool, "read" | "write" | "edit")
        && let Some(p) = o.get("path").and_then(Value::as_str)
    {
        let abs = if Path::new(p).is_absolute() {
            p.to_string()
        } else {
            root.join(p).display().to_string()
        };
        o.insert("file_path".into(), json!(abs));
    }
    v
}

impl Runtime {
    /// The hooks of one event outside a turn's steps (they read the config
    /// and the trust themselves).
    async fn session_hooks(
        &self,
        session_id: SessionId,
        dir: &Path,
        config: Option<&Config>,
        event: HookEvent,
        subject: Option<&str>,
        input: Value,
    ) {
        let loaded;
        let config = match config {
            Some(c) => c,
            None => match self.load_config(Some(dir.to_path_buf())).await {
                Ok(c) => {
                    loaded = c;
                    &loaded
                }
                Err(e) => {
                    tracing::warn!(error = %e, event = event.as_str(), "hooks not run: the config does not load");
                    return;
                }
            },
        };
        let hooks = self.hooks_for(config, dir).await;
        if !hooks.has(event) {
            return;
        }
        let site = HookSite {
            config,
            dir,
            session_id,
            call_id: None,
        };
        self.run_hooks(&hooks, &site, event, subject, input).await;
    }

    /// `PreCompact`, before a compaction (`manual` or `auto`).
    pub(crate) async fn pre_compact_hooks(
        &self,
        state: &crate::session::SessionState,
        config: &Config,
        trigger: crate::compaction::Trigger,
    ) {
        let trigger = if trigger == crate::compaction::Trigger::Manual {
            "manual"
        } else {
            "auto"
        };
        self.session_hooks(
            state.id,
            &state.directory,
            Some(config),
            HookEvent::PreCompact,
            Some(trigger),
            json!({ "trigger": trigger, "custom_instructions": "" }),
        )
        .await;
    }

    /// `Notification`: mia-code waits for the person (a permission ask).
    /// Runs beside the ask, never delaying it.
    pub(crate) fn notification_hooks(&self, session_id: SessionId, dir: &Path, message: String) {
        let rt = self.clone();
        let dir = dir.to_path_buf();
        let task = tokio::spawn(async move {
            rt.session_hooks(
                session_id,
                &dir,
                None,
                HookEvent::Notification,
                None,
                json!({ "message": message }),
            )
            .await;
        });
        // Kept so a process that ends right after the ask (`mia-code acp`,
        // `run`) lets the hook finish first (`settle_background`).
        let mut tasks = crate::runtime::lock(&self.inner.share_tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    /// `SessionEnd`: `mia-code run` finished with the session, or it is
    /// deleted (`reason`: `other`, `delete`).
    pub async fn end_session(&self, session_id: SessionId, reason: &str) {
        let Ok(dir) = self.session_directory(session_id).await else {
            return;
        };
        self.session_hooks(
            session_id,
            &dir,
            None,
            HookEvent::SessionEnd,
            Some(reason),
            json!({ "reason": reason }),
        )
        .await;
    }
}
