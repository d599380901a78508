use std::process::Stdio;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use mia_sandbox::SandboxPolicy;

use crate::{
    ShellSandbox, Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec, Unconfined,
    parse_input, schema_of,
};

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Output kept for the model; beyond it the tail is kept.
pub const MAX_OUTPUT_BYTES: usize = 30_000;
/// After the shell exits, how long to wait for processes it left behind to
/// close their output before the whole process group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line, run by bash in the project root.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// A few words saying what the command does, shown to the user.
    #[serde(default)]
    pub description: Option<String>,
    /// Run outside the OS sandbox, only after the sandbox blocked this
    /// command (the user is asked).
    #[serde(default)]
    pub outside_sandbox: Option<bool>,
}

pub struct BashTool;

#[async_trait::async_trait]
impl Tool for BashTool {
    fn spec(&self) -> ToolSpec {
        // Windows without bash: the model must write PowerShell.
        let powershell = matches!(
            crate::shell::current(),
            Ok(s) if s.kind == crate::shell::ShellKind::PowerShell
        );
        ToolSpec {
            name: "bash".into(),
            description: (if powershell {
                "Run a PowerShell command in the project root (this machine has no bash: write PowerShell, not POSIX shell). Every command is confirmed by the user. Output (stdout and stderr) is capped; the end is kept. Processes it starts are stopped when it finishes."
            } else {
                "Run a shell command in the project root. Output (stdout and stderr) is capped; the end is kept. Processes it starts are stopped when it finishes."
            }).into(),
            input_schema: schema_of::<BashInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: BashInput = parse_input("bash", input)?;
        validate(&input)?;
        if input.outside_sandbox == Some(true)
            && matches!(
                ctx.sandbox,
                ShellSandbox::Confined {
                    escapable: false,
                    ..
                }
            )
        {
            return Err(ToolError::Invalid(
                "outside_sandbox is not available to this agent: it cannot edit, so its shell is read-only by construction. Ask the user to switch to the build agent for commands that write".into(),
            ));
        }
        Ok(ToolPlan {
            permission: "bash".into(),
            targets: vec![Target::Command(input.command)],
            modifies: None,
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: BashInput = parse_input("bash", &input)?;
        let timeout = validate(&input)?;
        let how = Confinement::of(&input, &ctx.sandbox);
        run_command(&input.command, timeout, ctx, &how).await
    }

    fn unconfined(&self, input: &Value, ctx: &ToolContext) -> Option<Unconfined> {
        let input: BashInput = parse_input("bash", input).ok()?;
        match &ctx.sandbox {
            ShellSandbox::Off { .. } => None,
            ShellSandbox::Confined { escapable, .. } => (input.outside_sandbox == Some(true)
                && *escapable)
                .then_some(Unconfined::Escalation),
            ShellSandbox::Unavailable { reason, .. } => {
                Some(Unconfined::Unavailable(reason.clone()))
            }
        }
    }
}

/// How one command runs.
enum Confinement<'a> {
    Sandboxed {
        policy: &'a SandboxPolicy,
        mechanism: mia_sandbox::Mechanism,
        escapable: bool,
    },
    /// Unconfined, and why (`config`, `escalated`, `unavailable`); the
    /// environment rule still applies.
    Unconfined(&'static str, &'a mia_sandbox::EnvRule),
}

impl<'a> Confinement<'a> {
    fn of(input: &BashInput, sandbox: &'a ShellSandbox) -> Self {
        match sandbox {
            ShellSandbox::Off { env } => Self::Unconfined("config", env),
            ShellSandbox::Unavailable { policy, .. } => {
                Self::Unconfined("unavailable", &policy.env)
            }
            ShellSandbox::Confined {
                escapable: true,
                policy,
                ..
            } if input.outside_sandbox == Some(true) => Self::Unconfined("escalated", &policy.env),
            ShellSandbox::Confined {
                policy,
                mechanism,
                escapable,
            } => Self::Sandboxed {
                policy,
                mechanism: *mechanism,
                escapable: *escapable,
            },
        }
    }

    fn policy(&self) -> SandboxPolicy {
        match self {
            Self::Sandboxed { policy, .. } => (*policy).clone(),
            Self::Unconfined(_, env) => SandboxPolicy {
                env: (*env).clone(),
                ..SandboxPolicy::off()
            },
        }
    }

    /// The card's note, with what the sandbox seems to have blocked and the
    /// hosts the command's connections went to.
    fn note(
        &self,
        blocked: Option<mia_sandbox::Blocked>,
        hosts: &[mia_sandbox::proxy::Connection],
    ) -> Value {
        match self {
            Self::Sandboxed {
                policy, mechanism, ..
            } => json!({
                "mode": policy.mode.as_str(),
                "network": policy.network.as_str(),
                "mechanism": mechanism.as_str(),
                "full": mechanism.is_full(),
                "limits": mechanism.limits(),
                "blocked": blocked.map(mia_sandbox::Blocked::as_str),
                "hosts": hosts,
            }),
            Self::Unconfined(why, _) => json!({ "mode": "off", "unconfined": why }),
        }
    }
}

fn validate(input: &BashInput) -> Result<Duration, ToolError> {
    if input.command.trim().is_empty() {
        return Err(ToolError::Invalid("the command is empty".into()));
    }
    if input.command.contains('\0') {
        return Err(ToolError::Invalid("the command contains a NUL byte".into()));
    }
    let ms = input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if ms == 0 || ms > MAX_TIMEOUT_MS {
        return Err(ToolError::Invalid(format!(
            "timeout_ms must be between 1 and {MAX_TIMEOUT_MS} (10 minutes); got {ms}"
        )));
    }
    Ok(Duration::from_millis(ms))
}

/// Output with a byte cap that keeps the tail.
struct Tail {
    buf: Vec<u8>,
    dropped: usize,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
        if self.buf.len() > MAX_OUTPUT_BYTES * 2 {
            self.trim();
        }
    }

    fn trim(&mut self) {
        if self.buf.len() > MAX_OUTPUT_BYTES {
            let cut = self.buf.len() - MAX_OUTPUT_BYTES;
            self.buf.drain(..cut);
            self.dropped += cut;
        }
    }

    fn finish(mut self) -> (String, usize) {
        self.trim();
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        (text, self.dropped)
    }
}

/// Live output shown while a command runs, at most this much (the final
/// result still carries the whole, capped output).
pub const LIVE_OUTPUT_BYTES: usize = 256 * 1024;
/// Live output is sent at most this often (or when this much is pending).
const LIVE_EVERY: Duration = Duration::from_millis(100);
const LIVE_BATCH: usize = 16 * 1024;

/// Output on its way to the live view: whole UTF-8 characters only,
/// batched, capped.
struct Live {
    sink: crate::Progress,
    pending: Vec<u8>,
    sent: usize,
    capped: bool,
}

impl Live {
    fn push(&mut self, chunk: &[u8]) {
        if !self.capped {
            self.pending.extend_from_slice(chunk);
            if self.pending.len() >= LIVE_BATCH {
                self.flush(false);
            }
        }
    }

    /// Send what is pending; a character split across reads waits for its
    /// rest unless this is the end.
    fn flush(&mut self, end: bool) {
        if self.capped || self.pending.is_empty() {
            return;
        }
        let cut = match std::str::from_utf8(&self.pending) {
            Err(e) if !end && e.error_len().is_none() => e.valid_up_to(),
            _ => self.pending.len(),
        };
        if cut == 0 {
            return;
        }
        let bytes: Vec<u8> = self.pending.drain(..cut).collect();
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if self.sent + text.len() > LIVE_OUTPUT_BYTES {
            let mut keep = LIVE_OUTPUT_BYTES.saturating_sub(self.sent);
            while keep > 0 && !text.is_char_boundary(keep) {
                keep -= 1;
            }
            text.truncate(keep);
            text.push_str(
                "\n… (live output stops here; the whole output is shown when the command ends)\n",
            );
            self.capped = true;
            self.pending.clear();
        }
        self.sent += text.len();
        (self.sink.0)(&text);
    }
}

enum End {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

async fn run_command(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    how: &Confinement<'_>,
) -> Result<ToolOutput, ToolError> {
    // Fail closed: a sandbox that cannot be set up runs nothing.
    let policy = how.policy();
    let shell = crate::shell::current().map_err(|e| ToolError::Invalid(e.to_string()))?;
    let program = shell.program.to_str().ok_or_else(|| {
        ToolError::Invalid(format!(
            "the shell's path {} is not valid Unicode; set {} to another path",
            shell.program.display(),
            crate::shell::SHELL_ENV
        ))
    })?;
    let args = shell.args(command);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Under the sandbox (Linux), the kernel also tells which files the
    // command's processes change, so a person's edit made meanwhile is not
    // taken for the command's.
    let sandboxed = matches!(how, Confinement::Sandboxed { .. });
    let mia_sandbox::Prepared {
        command: std_cmd,
        mut guard,
    } = mia_sandbox::prepare(
        &policy,
        program,
        &args,
        sandboxed && cfg!(target_os = "linux"),
    )
    .map_err(|e| ToolError::Invalid(e.to_string()))?;
    let mut cmd = tokio::process::Command::from(std_cmd);
    cmd.current_dir(&ctx.project_root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd.env("MIA_CODE", "1");
    if ctx.read_only_shell {
        // After git's `http.proxy` when the command has a proxy.
        let base = usize::from(policy.network.proxied() && sandboxed);
        cmd.env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_PAGER", "cat")
            .env("PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env(
                "GIT_CONFIG_COUNT",
                (base + crate::READ_ONLY_GIT_CONFIG.len()).to_string(),
            );
        for (i, (k, v)) in crate::READ_ONLY_GIT_CONFIG.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{}", base + i), k)
                .env(format!("GIT_CONFIG_VALUE_{}", base + i), v);
        }
    }
    // The command and everything it starts can be stopped together: a
    // process group on Unix, a job object on Windows.
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    let job = mia_sandbox::process::Job::new()
        .map_err(|e| ToolError::io("create a job object for", ctx.project_root.clone(), e))?;

    let started = std::time::Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        tracing::warn!(shell = %shell.describe(), "could not start the shell: {e}");
        ToolError::io("start the shell for", ctx.project_root.clone(), e)
    })?;
    #[cfg(windows)]
    if let Some(h) = child.raw_handle() {
        // Assigned right after the start: a process the command starts in
        // its first instant could escape the job (documented in
        // docs/platforms.md); the command itself cannot.
        if let Err(e) = job.assign(h) {
            let _ = child.start_kill();
            return Err(ToolError::io("contain", ctx.project_root.clone(), e));
        }
    }
    #[cfg(target_os = "linux")]
    let writes = guard.take_tracer().map(mia_sandbox::Tracer::start);
    let proxy = start_proxy(&mut guard, &policy, ctx, child.id());
    let pid = child.id();
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    for reader in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut reader = reader;
            let mut buf = vec![0u8; 8192];
            loop {
                match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
    drop(tx);

    let mut out = Tail {
        buf: Vec::new(),
        dropped: 0,
    };
    let mut live = ctx.progress.clone().map(|sink| Live {
        sink,
        pending: Vec::new(),
        sent: 0,
        capped: false,
    });
    let mut tick = tokio::time::interval(LIVE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let end = loop {
        tokio::select! {
            status = child.wait() => {
                break match status {
                    Ok(s) => End::Exited(s),
                    Err(e) => return Err(ToolError::io("wait for", ctx.project_root.clone(), e)),
                };
            }
            Some(chunk) = rx.recv() => {
                if let Some(l) = live.as_mut() {
                    l.push(&chunk);
                }
                out.push(&chunk);
            }
            _ = tick.tick(), if live.is_some() => {
                if let Some(l) = live.as_mut() {
                    l.flush(false);
                }
            }
            () = &mut deadline => break End::TimedOut,
            () = ctx.cancel.cancelled() => break End::Cancelled,
        }
    };
    // Stop everything the command started (background jobs included).
    kill_group(pid);
    #[cfg(windows)]
    job.terminate();
    let _ = child.wait().await;
    let hosts = proxy
        .map(mia_sandbox::proxy::Proxy::finish)
        .unwrap_or_default();
    // The command has ended: the placeholders its protected paths needed go.
    drop(guard);
    #[cfg(target_os = "linux")]
    let written = writes.map(|w| {
        let set = w.finish();
        json!({
            "complete": set.complete,
            "paths": set.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        })
    });
    #[cfg(not(target_os = "linux"))]
    let written: Option<Value> = None;
    // Collect what is left in the pipes.
    let grace = tokio::time::sleep(DRAIN_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some(c) => {
                    if let Some(l) = live.as_mut() {
                        l.push(&c);
                    }
                    out.push(&c);
                }
                None => break,
            },
            () = &mut grace => break,
        }
    }
    if let Some(l) = live.as_mut() {
        l.flush(true);
    }
    let elapsed = started.elapsed();
    let (mut text, dropped) = out.finish();
    if dropped > 0 {
        text = format!("(first {dropped} bytes of output omitted)\n{text}");
    }
    let (code, note) = match end {
        End::Exited(s) => match s.code() {
            Some(0) => (Some(0), String::new()),
            Some(c) => (Some(c), format!("\n(exit code {c})")),
            None => (None, "\n(terminated by a signal)".to_string()),
        },
        End::TimedOut => (
            None,
            format!(
                "\n(timed out after {} s; the command and everything it started were stopped)",
                timeout.as_secs_f64()
            ),
        ),
        End::Cancelled => (
            None,
            "\n(cancelled by the user; the command was stopped)".to_string(),
        ),
    };
    if text.trim().is_empty() && note.is_empty() {
        text = "(no output)".into();
    }
    let failed = matches!(end, End::Exited(s) if !s.success());
    let blocked = failed
        .then(|| mia_sandbox::blocked(&policy, &text))
        .flatten();
    text.push_str(&note);
    if let (Some(b), Confinement::Sandboxed { escapable, .. }) = (blocked, how) {
        let what = match b {
            mia_sandbox::Blocked::Write => "a write outside the directories it may change",
            mia_sandbox::Blocked::Network => "a network connection",
        };
        text.push_str(&format!(
            "\n(The command ran in the OS sandbox ({}); the failure looks like the sandbox refused {what}.",
            policy.describe()
        ));
        text.push_str(if *escapable {
            " If the command really needs it, call bash again with the same command and outside_sandbox: true; the user will be asked.)"
        } else {
            " This agent cannot write or connect by construction; ask the user to switch to the build agent if it must.)"
        });
    }
    let refused: Vec<String> = hosts
        .iter()
        .filter(|h| !h.allowed)
        .map(|h| format!("{}:{} ({})", h.host, h.port, h.reason))
        .collect();
    if !refused.is_empty() {
        text.push_str(&format!(
            "\n(mia-code's network proxy refused: {}.)",
            refused.join("; ")
        ));
    }
    Ok(ToolOutput {
        output: text,
        metadata: json!({
            "exit_code": code,
            "timed_out": matches!(end, End::TimedOut),
            "cancelled": matches!(end, End::Cancelled),
            "truncated_bytes": dropped,
            "duration_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            "sandbox": how.note(blocked, &hosts),
            "written": written,
        }),
    })
}

/// The proxy for a sandboxed command with network: the session's gate
/// decides, or (nobody to ask) the rules the gate would apply alone.
fn start_proxy(
    guard: &mut mia_sandbox::Guard,
    policy: &SandboxPolicy,
    ctx: &ToolContext,
    pid: Option<u32>,
) -> Option<mia_sandbox::proxy::Proxy> {
    use mia_sandbox::proxy::{FixedGate, Proxy, ProxyConfig, Verdict};
    let listener = guard.take_listener()?;
    let gate = match &ctx.network {
        Some(g) => g.0.clone(),
        None if policy.network == mia_sandbox::NetworkAccess::Allow => {
            std::sync::Arc::new(FixedGate(Verdict::Allow))
        }
        None => std::sync::Arc::new(FixedGate(Verdict::Deny(
            "nobody can answer a network ask here".into(),
        ))),
    };
    let peer = pid.map(|root| {
        std::sync::Arc::new(move |port: u16| mia_sandbox::peer_program(root, port))
            as std::sync::Arc<dyn Fn(u16) -> Option<String> + Send + Sync>
    });
    match Proxy::start(
        listener,
        ProxyConfig {
            rules: policy.net_rules.clone(),
            gate,
            peer,
        },
    ) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("the network proxy could not start: {e}");
            None
        }
    }
}

fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        // ESRCH (already gone) is fine.
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(test)]
mod live_tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn live() -> (Live, Arc<Mutex<Vec<String>>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        let sink = crate::Progress(Arc::new(move |t: &str| {
            g.lock().unwrap().push(t.to_string())
        }));
        (
            Live {
                sink,
                pending: Vec::new(),
                sent: 0,
                capped: false,
            },
            got,
        )
    }

    #[test]
    fn a_character_split_across_reads_is_sent_whole() {
        let (mut l, got) = live();
        let e = "é".as_bytes();
        l.push(&[b'a', e[0]]);
        l.flush(false);
        l.push(&[e[1], b'b']);
        l.flush(false);
        assert_eq!(*got.lock().unwrap(), ["a", "éb"]);
        // At the end, a broken tail is sent as a replacement character.
        l.push(&[0xC3]);
        l.flush(true);
        assert_eq!(got.lock().unwrap().last().unwrap(), "\u{FFFD}");
    }

    #[test]
    fn live_output_is_capped_with_a_note() {
        let (mut l, got) = live();
        for _ in 0..(LIVE_OUTPUT_BYTES / LIVE_BATCH + 2) {
            l.push(&vec![b'x'; LIVE_BATCH]);
        }
        l.flush(true);
        let all: String = got.lock().unwrap().concat();
        assert!(
            all.ends_with("the whole output is shown when the command ends)\n"),
            "{}",
            &all[all.len() - 100..]
        );
        assert_eq!(all.matches('x').count(), LIVE_OUTPUT_BYTES);
        let n = got.lock().unwrap().len();
        l.push(b"more");
        l.flush(true);
        assert_eq!(got.lock().unwrap().len(), n, "nothing after the cap");
    }
}
