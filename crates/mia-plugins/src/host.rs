//! Running a plugin: a Node program (its package.json says
//! `"mia-code": {"protocol": 1, "main": "…"}`) started with a scrubbed
//! environment in the project directory, spoken to in JSON-RPC 2.0 over
//! stdio, one message per line (docs/plugins.md has the methods). Every
//! request has a timeout; replies are capped; a plugin that exits, times
//! out or writes garbage is marked dead and its calls fail with why.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::oneshot;

use crate::PluginError;

/// The protocol version this build speaks.
pub const PROTOCOL: u64 = 1;
/// A reply longer than this is refused (the plugin is then dead).
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// `package.json` → `"mia-code"`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Manifest {
    pub protocol: u64,
    pub main: String,
}

/// Read and check a plugin's manifest; returns (package name, version, manifest).
pub fn read_manifest(dir: &Path) -> Result<(String, String, Manifest), PluginError> {
    let path = dir.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|e| PluginError::Manifest {
        dir: dir.display().to_string(),
        message: format!("cannot read package.json: {e}"),
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| PluginError::Manifest {
        dir: dir.display().to_string(),
        message: format!("package.json is not JSON: {e}"),
    })?;
    let name = v["name"].as_str().unwrap_or_default().to_string();
    let version = v["version"].as_str().unwrap_or_default().to_string();
    let m: Manifest = serde_json::from_value(v.get("mia-code").cloned().unwrap_or(Value::Null))
        .map_err(|_| PluginError::Manifest {
            dir: dir.display().to_string(),
            message: "package.json has no \"mia-code\": {\"protocol\": 1, \"main\": \"…\"}: it is not a mia-code plugin".into(),
        })?;
    if m.protocol != PROTOCOL {
        return Err(PluginError::Protocol {
            plugin: name,
            found: m.protocol,
            known: PROTOCOL,
        });
    }
    let main = dir.join(&m.main);
    let inside = main
        .canonicalize()
        .ok()
        .zip(dir.canonicalize().ok())
        .is_some_and(|(m, d)| m.starts_with(d));
    if !inside {
        return Err(PluginError::Manifest {
            dir: dir.display().to_string(),
            message: format!("\"main\" ({}) is not a file inside the package", m.main),
        });
    }
    Ok((name, version, m))
}

/// A tool a plugin provides.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PluginToolDef {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "empty_schema", alias = "inputSchema")]
    pub input_schema: Value,
    /// The permission a call is judged under (default: the tool's name).
    #[serde(default)]
    pub permission: Option<String>,
}

fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// What `initialize` returned.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct InitResult {
    pub protocol: u64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub tools: Vec<PluginToolDef>,
    /// `tool.execute.before`, `tool.execute.after`, `chat.params`,
    /// `permission.ask`, `event`, `compaction.context`.
    #[serde(default)]
    pub hooks: Vec<String>,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// A running plugin.
pub struct PluginProcess {
    pub name: String,
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    pending: Pending,
    next: AtomicU64,
    dead: Arc<Mutex<Option<String>>>,
    alive: Arc<AtomicBool>,
    child: Mutex<Option<tokio::process::Child>>,
    pub init: InitResult,
    stderr: Arc<Mutex<Vec<String>>>,
    /// The plugin's sandbox (its proxy, its placeholders) while it runs.
    _running: Option<Mutex<mia_sandbox::Running>>,
}

/// How to start one.
#[derive(Debug, Clone)]
pub struct Launch {
    pub node: PathBuf,
    pub dir: PathBuf,
    pub main: String,
    /// Its working directory (its data directory, or the project for a
    /// project's own plugin).
    pub cwd: PathBuf,
    /// The project it serves (sent in `initialize`).
    pub project: PathBuf,
    /// The whole environment of the process.
    pub env: BTreeMap<String, String>,
    pub init_timeout: Duration,
    /// Sent as `initialize`'s `config` (the plugin's own options).
    pub config: Value,
    /// The OS sandbox it runs in (a plugin a project's config names), or none.
    pub confine: Option<mia_sandbox::Confinement>,
}

impl PluginProcess {
    pub async fn start(name: &str, l: &Launch) -> Result<Self, PluginError> {
        let script = l.dir.join(&l.main);
        let (mut cmd, guard) = match &l.confine {
            Some(c) => {
                let node = l.node.to_string_lossy();
                let script = script.to_string_lossy();
                let p = c
                    .prepare(&node, &[&script])
                    .map_err(|e| PluginError::Start {
                        plugin: name.to_string(),
                        message: e.to_string(),
                    })?;
                (tokio::process::Command::from(p.command), Some(p.guard))
            }
            None => {
                let mut cmd = tokio::process::Command::new(&l.node);
                cmd.arg(&script);
                (cmd, None)
            }
        };
        cmd.env_clear().envs(&l.env);
        // The sandbox's own variables (its proxy, its /tmp) after the plugin's.
        if let Some(g) = &guard {
            cmd.envs(
                g.sandbox_env()
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
        }
        cmd.current_dir(&l.cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| PluginError::Start {
            plugin: name.to_string(),
            message: format!(
                "cannot run {}: {e} (Node.js is needed for plugins)",
                l.node.display()
            ),
        })?;
        let running = match (&l.confine, guard) {
            (Some(c), Some(g)) => Some(Mutex::new(c.started(g, child.id()))),
            _ => None,
        };
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(PluginError::Start {
                plugin: name.to_string(),
                message: "no stdio".into(),
            });
        };
        let pending: Pending = Arc::default();
        let dead: Arc<Mutex<Option<String>>> = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let tail: Arc<Mutex<Vec<String>>> = Arc::default();
        {
            let tail = tail.clone();
            let plugin = name.to_string();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "mia_plugins::stderr", plugin = %plugin, "{line}");
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.len() >= 20 {
                        t.remove(0);
                    }
                    t.push(line);
                }
            });
        }
        {
            let pending = pending.clone();
            let dead = dead.clone();
            let alive = alive.clone();
            let plugin = name.to_string();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(stdout);
                let mut buf = Vec::new();
                let why = loop {
                    buf.clear();
                    match (&mut reader)
                        .take(MAX_LINE as u64 + 1)
                        .read_until(b'\n', &mut buf)
                        .await
                    {
                        Ok(0) => break "the plugin exited".to_string(),
                        Ok(n) if n > MAX_LINE => {
                            break format!("the plugin wrote a message over {MAX_LINE} bytes");
                        }
                        Ok(_) => {}
                        Err(e) => break format!("reading from the plugin failed: {e}"),
                    }
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim();
                    if line.is_empty() {
                        continue;
                    }
                    let Ok(msg) = serde_json::from_str::<Value>(line) else {
                        // Not a message: a plugin printing to stdout by mistake.
                        tracing::warn!(plugin = %plugin, "not JSON-RPC on stdout: {line}");
                        continue;
                    };
                    let Some(id) = msg.get("id").and_then(Value::as_u64) else {
                        continue; // a notification from the plugin: none defined yet
                    };
                    let reply = match (msg.get("result"), msg.get("error")) {
                        (Some(r), _) => Ok(r.clone()),
                        (None, Some(e)) => Err(e
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("error")
                            .to_string()),
                        _ => Err("a reply without result or error".into()),
                    };
                    if let Some(tx) = pending
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&id)
                    {
                        let _ = tx.send(reply);
                    }
                };
                alive.store(false, Ordering::SeqCst);
                *dead.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
                for (_, tx) in pending.lock().unwrap_or_else(|p| p.into_inner()).drain() {
                    let _ = tx.send(Err(why.clone()));
                }
            });
        }
        let mut p = Self {
            name: name.to_string(),
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next: AtomicU64::new(1),
            dead,
            alive,
            child: Mutex::new(Some(child)),
            init: InitResult {
                protocol: PROTOCOL,
                name: None,
                version: None,
                tools: Vec::new(),
                hooks: Vec::new(),
            },
            stderr: tail,
            _running: running,
        };
        let init = p
            .request(
                "initialize",
                json!({
                    "protocol": PROTOCOL,
                    "client": {"name": "mia-code", "version": env!("CARGO_PKG_VERSION")},
                    "project": l.project.display().to_string(),
                    "config": l.config,
                }),
                l.init_timeout,
            )
            .await
            .map_err(|e| PluginError::Start {
                plugin: name.to_string(),
                message: format!("initialize failed: {e}"),
            })?;
        let init: InitResult = serde_json::from_value(init).map_err(|e| PluginError::Start {
            plugin: name.to_string(),
            message: format!("initialize answered something unexpected: {e}"),
        })?;
        if init.protocol != PROTOCOL {
            return Err(PluginError::Protocol {
                plugin: name.to_string(),
                found: init.protocol,
                known: PROTOCOL,
            });
        }
        p.init = init;
        Ok(p)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Why it stopped, if it did.
    pub fn death(&self) -> Option<String> {
        self.dead.lock().ok().and_then(|d| d.clone())
    }

    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().map(|t| t.clone()).unwrap_or_default()
    }

    pub fn has_hook(&self, hook: &str) -> bool {
        self.init.hooks.iter().any(|h| h == hook)
    }

    /// One request; a timeout kills the plugin (it is then dead for the
    /// session: a plugin that stops answering cannot be trusted to resume).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        if let Some(why) = self.death() {
            return Err(why);
        }
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        {
            let mut stdin = self.stdin.lock().await;
            if stdin.write_all(line.as_bytes()).await.is_err()
                || stdin.write_all(b"\n").await.is_err()
                || stdin.flush().await.is_err()
            {
                return Err(self.death().unwrap_or_else(|| "the plugin exited".into()));
            }
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(self.death().unwrap_or_else(|| "the plugin exited".into())),
            Err(_) => {
                let why = format!("{method} did not answer within {} s", timeout.as_secs());
                self.kill(&why);
                Err(why)
            }
        }
    }

    /// A notification (no reply).
    pub async fn notify(&self, method: &str, params: Value) {
        if !self.is_alive() {
            return;
        }
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        let mut stdin = self.stdin.lock().await;
        let _ = stdin.write_all(line.as_bytes()).await;
        let _ = stdin.write_all(b"\n").await;
        let _ = stdin.flush().await;
    }

    pub fn kill(&self, why: &str) {
        self.alive.store(false, Ordering::SeqCst);
        *self.dead.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.to_string());
        if let Some(mut c) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = c.start_kill();
        }
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        if let Ok(mut c) = self.child.lock()
            && let Some(mut c) = c.take()
        {
            let _ = c.start_kill();
        }
    }
}
