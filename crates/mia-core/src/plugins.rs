//! Plugins (docs/plugins.md, spec 073): which plugins a project has (every
//! config layer's `plugin`; a project's own only in a trusted workspace),
//! installed in the background (a turn never waits for a registry, except
//! `mia-code run`, which has no next turn), each run as a Node process per
//! project per process speaking protocol 1. Their tools join the turn's
//! tools; their hooks are asked before and after tool calls (veto or
//! annotate, never rewrite), about permissions (tighten only), about the
//! model request's parameters, for compaction context, and told about
//! events. A plugin that crashes or stops answering is disabled for the
//! process with a message; it never takes the runtime down.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mia_config::{Config, LayerKind};
use mia_plugins::{Installer, Outcome, PluginProcess, PluginRef, PluginToolDef};
use mia_protocol::{Event, PluginState, PluginView};
use mia_tools::{Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec};
use serde_json::{Value, json};

use crate::CoreError;
use crate::runtime::{Runtime, lock};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const INIT_TIMEOUT: Duration = Duration::from_secs(15);
const HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// A directory name for a plugin key (`@scope/name`, a path).
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PluginDef {
    entry: String,
    source: String,
    project_level: bool,
    parsed: Result<PluginRef, String>,
    env: BTreeMap<String, String>,
    /// Where it may write besides its data directory (one of the person's
    /// own: `plugin.writable`).
    writable: Vec<PathBuf>,
}

enum PState {
    Idle,
    Installing,
    Ready(Arc<PluginProcess>),
    Failed(String),
    Skipped(String),
}

struct Slot {
    def: PluginDef,
    state: tokio::sync::Mutex<PState>,
    version: std::sync::Mutex<Option<String>>,
    done: tokio::sync::Notify,
}

pub(crate) struct PluginHub {
    key: (Vec<PluginDef>, bool, u64, u64, Vec<String>),
    slots: Vec<Arc<Slot>>,
    installer: Installer,
    offline: bool,
    timeout: Duration,
}

/// The plugins' part of a turn: their tools, and the processes with hooks.
#[derive(Clone, Default)]
pub(crate) struct TurnPlugins {
    pub(crate) hooked: Vec<Arc<PluginProcess>>,
    pub(crate) timeout: Duration,
}

pub(crate) fn plugin_defs(
    config: &Config,
    project: &Path,
    home: &Path,
) -> (Vec<PluginDef>, mia_config::PluginOptions) {
    let mut by_entry: BTreeMap<String, PluginDef> = BTreeMap::new();
    let mut bases: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut opts = mia_config::PluginOptions::default();
    for layer in &config.layers {
        let Some(setting) = &layer.file.plugin else {
            continue;
        };
        // Options (scripts, environment, timeouts) come from your own
        // config only: a repository may list plugins, not widen what they get.
        if let Some(o) = setting
            .options()
            .filter(|_| layer.kind != LayerKind::Project)
        {
            opts.allow_scripts = o.allow_scripts.clone().or(opts.allow_scripts.take());
            opts.allow_git = o.allow_git.or(opts.allow_git);
            opts.install_timeout = o.install_timeout.or(opts.install_timeout);
            opts.timeout = o.timeout.or(opts.timeout);
            opts.offline = o.offline.or(opts.offline);
            let mut env = opts.env.take().unwrap_or_default();
            env.extend(o.env.clone().unwrap_or_default());
            opts.env = Some(env);
            let mut writable = opts.writable.take().unwrap_or_default();
            writable.extend(o.writable.clone().unwrap_or_default());
            opts.writable = Some(writable);
        }
        let base = match layer.kind {
            LayerKind::Project => project.to_path_buf(),
            _ => layer
                .path
                .as_ref()
                .and_then(|p| p.parent())
                .map(Path::to_path_buf)
                .unwrap_or_else(|| project.to_path_buf()),
        };
        for entry in setting.packages() {
            // A project adds plugins; it never replaces or switches off one
            // of the person's own by naming the same entry.
            if layer.kind == LayerKind::Project
                && by_entry.get(entry).is_some_and(|d| !d.project_level)
            {
                tracing::warn!(plugin = %entry, source = %layer.source(), "a project's config names one of your own plugins; yours stands");
                continue;
            }
            by_entry.insert(
                entry.clone(),
                PluginDef {
                    entry: entry.clone(),
                    source: layer.source(),
                    project_level: layer.kind == LayerKind::Project,
                    parsed: Err(String::new()),
                    env: BTreeMap::new(),
                    writable: Vec::new(),
                },
            );
            bases.insert(entry.clone(), base.clone());
        }
    }
    let allow_git = opts.allow_git == Some(true);
    let envs = opts.env.clone().unwrap_or_default();
    let grants = opts.writable.clone().unwrap_or_default();
    let lookup = |k: &str| std::env::var(k).ok();
    let canonical = dunce::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let outside = crate::external::Outside {
        project: &canonical,
        home,
    };
    let defs: Vec<PluginDef> = by_entry
        .into_values()
        .map(|mut d| {
            let base = bases
                .get(&d.entry)
                .cloned()
                .unwrap_or_else(|| project.to_path_buf());
            d.parsed = mia_plugins::parse(&d.entry, &base, allow_git).map_err(|e| e.to_string());
            let key = match &d.parsed {
                Ok(PluginRef::Npm { name, .. }) => name.clone(),
                _ => d.entry.clone(),
            };
            let mut env = crate::external::base_env(&["NODE_EXTRA_CA_CERTS"], &lookup);
            for (k, v) in envs.get(&key).into_iter().flatten() {
                match mia_config::resolve_env_refs_with(
                    v,
                    &format!("plugin.env.{key}.{k}"),
                    &lookup,
                ) {
                    Ok(v) => {
                        env.insert(k.clone(), outside.expand(&v));
                    }
                    Err(e) => d.parsed = Err(e.to_string()),
                }
            }
            if !d.project_level
                && let Some(path) = env.get_mut("PATH")
            {
                *path = outside.path(path);
            }
            d.env = env;
            d.writable = grants
                .get(&key)
                .into_iter()
                .flatten()
                .map(|w| {
                    let w = outside.expand(w);
                    match w.strip_prefix("~/") {
                        Some(rest) => home.join(rest),
                        None => PathBuf::from(w),
                    }
                })
                .collect();
            d
        })
        .collect();
    // The same package from a project and from the person: theirs only.
    let own: Vec<String> = defs
        .iter()
        .filter(|d| !d.project_level)
        .map(PluginHub::slot_name)
        .collect();
    let defs = defs
        .into_iter()
        .filter(|d| !d.project_level || !own.contains(&PluginHub::slot_name(d)))
        .collect();
    (defs, opts)
}

/// Node.js (`MIA_CODE_NODE`, else `node` on PATH), as an absolute path
/// outside the project.
fn node_binary(outside: &crate::external::Outside<'_>, path: &str) -> Result<PathBuf, String> {
    let node = std::env::var("MIA_CODE_NODE").unwrap_or_else(|_| "node".into());
    outside
        .program(&node, path)
        .map_err(|e| format!("{e} (Node.js is needed for plugins)"))
}

impl PluginHub {
    fn slot_name(def: &PluginDef) -> String {
        match &def.parsed {
            Ok(r) => r.key(),
            Err(_) => def.entry.clone(),
        }
    }

    /// Install (in the background) and start what may run. With `wait`,
    /// return only when every install and start has finished.
    async fn start(self: &Arc<Self>, project: &Path, trusted: bool, wait: bool, rt: &Runtime) {
        let mut waits = Vec::new();
        for slot in &self.slots {
            if slot.def.project_level && !trusted {
                continue;
            }
            let mut st = slot.state.lock().await;
            match &*st {
                PState::Idle => {}
                PState::Installing => {
                    if wait {
                        waits.push(slot.clone());
                    }
                    continue;
                }
                _ => continue,
            }
            let parsed = match &slot.def.parsed {
                Ok(p) => p.clone(),
                Err(e) => {
                    *st = PState::Failed(e.clone());
                    continue;
                }
            };
            *st = PState::Installing;
            drop(st);
            let hub = self.clone();
            let slot2 = slot.clone();
            let project = project.to_path_buf();
            let rt = rt.clone();
            let task = tokio::spawn(async move {
                let next = hub.install_and_load(&slot2, &parsed, &project, &rt).await;
                *slot2.state.lock().await = next;
                slot2.done.notify_waiters();
            });
            if wait {
                let _ = task.await;
            }
        }
        for s in waits {
            loop {
                let notified = s.done.notified();
                if !matches!(&*s.state.lock().await, PState::Installing) {
                    break;
                }
                notified.await;
            }
        }
    }

    async fn install_and_load(
        &self,
        slot: &Slot,
        r: &PluginRef,
        project: &Path,
        rt: &Runtime,
    ) -> PState {
        let name = Self::slot_name(&slot.def);
        let dir = match r {
            PluginRef::Npm { name, range } => {
                let progress = |line: String| {
                    tracing::info!(plugin = %name, "{line}");
                    rt.emit(Event::Notice {
                        session_id: None,
                        message: line,
                    });
                };
                match self
                    .installer
                    .ensure(name, range, self.offline, false, &progress)
                    .await
                {
                    Ok(Outcome::Cached { version } | Outcome::Installed { version }) => {
                        *lock(&slot.version) = Some(version);
                        self.installer.package_dir(name)
                    }
                    Ok(Outcome::Skipped { reason }) => {
                        progress(reason.clone());
                        return PState::Skipped(reason);
                    }
                    Err(e) => {
                        progress(e.to_string());
                        return PState::Failed(e.to_string());
                    }
                }
            }
            PluginRef::Local { path } => path.clone(),
            PluginRef::Git { url } => {
                let progress = |line: String| {
                    tracing::info!(plugin = %url, "{line}");
                    rt.emit(Event::Notice {
                        session_id: None,
                        message: line,
                    });
                };
                match self
                    .installer
                    .ensure_git(url, self.offline, false, &progress)
                    .await
                {
                    Ok((pkg, Outcome::Cached { version } | Outcome::Installed { version })) => {
                        *lock(&slot.version) = Some(version);
                        self.installer.package_dir(&pkg)
                    }
                    Ok((_, Outcome::Skipped { reason })) => {
                        progress(reason.clone());
                        return PState::Skipped(reason);
                    }
                    Err(e) => {
                        progress(e.to_string());
                        return PState::Failed(e.to_string());
                    }
                }
            }
        };
        let (pkg, version, manifest) = match mia_plugins::read_manifest(&dir) {
            Ok(m) => m,
            Err(e) => return PState::Failed(e.to_string()),
        };
        if lock(&slot.version).is_none() {
            *lock(&slot.version) = Some(version);
        }
        // Every plugin runs in the OS sandbox: a project's read-only in the
        // project; a person's own in its data directory, outside the project.
        let config = match rt.load_config(Some(project.to_path_buf())).await {
            Ok(c) => c,
            Err(e) => return PState::Failed(e.to_string()),
        };
        let paths = &rt.options().paths;
        let canonical = dunce::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let outside = crate::external::Outside {
            project: &canonical,
            home: &paths.user_home,
        };
        let path = slot.def.env.get("PATH").cloned().unwrap_or_default();
        let node = match node_binary(&outside, &path) {
            Ok(n) => n,
            Err(e) => return PState::Failed(e),
        };
        let (cwd, confine) = if slot.def.project_level {
            let c = crate::sandbox::server_confinement(&config, project, paths, true);
            (project.to_path_buf(), c)
        } else {
            let data = paths.home.join("plugin-data").join(sanitize(&name));
            if let Err(e) = std::fs::create_dir_all(&data) {
                return PState::Failed(format!("cannot create {}: {e}", data.display()));
            }
            let mut visible = vec![paths.plugins_dir(), dir.clone()];
            visible.extend(crate::external::named_paths(
                &node.display().to_string(),
                &[],
            ));
            let c = crate::sandbox::own_server_confinement(
                &config,
                &data,
                &canonical,
                &slot.def.writable,
                paths,
                visible,
            );
            (data, c)
        };
        let launch = mia_plugins::Launch {
            node,
            dir,
            main: manifest.main,
            cwd,
            project: project.to_path_buf(),
            env: slot.def.env.clone(),
            init_timeout: INIT_TIMEOUT,
            config: Value::Null,
            confine,
        };
        // Messages name the plugin by its package name.
        let display = if pkg.is_empty() { name.clone() } else { pkg };
        match PluginProcess::start(&display, &launch).await {
            Ok(p) => {
                tracing::info!(plugin = %name, tools = p.init.tools.len(), "plugin loaded");
                PState::Ready(Arc::new(p))
            }
            Err(e) => PState::Failed(e.to_string()),
        }
    }

    async fn ready(&self) -> Vec<(Arc<Slot>, Arc<PluginProcess>)> {
        let mut out = Vec::new();
        for s in &self.slots {
            let mut st = s.state.lock().await;
            if let PState::Ready(p) = &*st {
                if p.is_alive() {
                    out.push((s.clone(), p.clone()));
                } else {
                    let why = p.death().unwrap_or_else(|| "it stopped".into());
                    *st = PState::Failed(format!("disabled for this session: {why}"));
                }
            }
        }
        out
    }
}

/// A plugin's tool, as a tool of the turn.
struct PluginTool {
    plugin: Arc<PluginProcess>,
    def: PluginToolDef,
    timeout: Duration,
}

#[async_trait::async_trait]
impl Tool for PluginTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.def.name.clone().into(),
            description: format!(
                "{} (plugin {})",
                self.def.description.trim(),
                self.plugin.name
            )
            .into(),
            input_schema: self.def.input_schema.clone(),
        }
    }

    fn offered_under(&self) -> Option<String> {
        Some(
            self.def
                .permission
                .clone()
                .unwrap_or_else(|| self.def.name.clone()),
        )
    }

    fn plan(&self, input: &Value, _ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        if !(input.is_object() || input.is_null()) {
            return Err(ToolError::InvalidInput {
                tool: self.def.name.clone(),
                message: "the arguments must be a JSON object".into(),
            });
        }
        Ok(ToolPlan {
            permission: self
                .def
                .permission
                .clone()
                .unwrap_or_else(|| self.def.name.clone()),
            targets: vec![Target::None],
            modifies: None,
        })
    }

    fn origin(&self) -> Option<String> {
        Some(format!("plugin {}", self.plugin.name))
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let call = self.plugin.request(
            "tool.call",
            json!({"name": self.def.name, "arguments": input}),
            self.timeout,
        );
        let reply = tokio::select! {
            r = call => r,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Invalid("cancelled".into())),
        };
        let reply = reply.map_err(|e| {
            if self.plugin.is_alive() {
                ToolError::Invalid(format!("plugin {}: {e}", self.plugin.name))
            } else {
                ToolError::Invalid(format!(
                    "plugin {} is disabled for this session: {e}",
                    self.plugin.name
                ))
            }
        })?;
        let mut output = reply["output"].as_str().unwrap_or_default().to_string();
        crate::external::cap_output(&mut output, |_| "\n… [plugin output cut at 100 KB]".into());
        if reply["is_error"].as_bool() == Some(true) {
            return Err(ToolError::Invalid(output));
        }
        Ok(ToolOutput {
            output,
            metadata: json!({"plugin": self.plugin.name}),
        })
    }
}

impl Runtime {
    fn plugin_hub(&self, project: &Path, config: &Config) -> Arc<PluginHub> {
        let (defs, opts) = plugin_defs(config, project, &self.inner.opts.paths.user_home);
        let offline = opts.offline == Some(true) || self.inner.opts.offline;
        let install_timeout = opts.install_timeout.unwrap_or(30);
        let timeout = opts.timeout.unwrap_or(DEFAULT_TIMEOUT.as_secs());
        let allow_scripts = opts.allow_scripts.clone().unwrap_or_default();
        let key = (
            defs.clone(),
            offline,
            install_timeout,
            timeout,
            allow_scripts.clone(),
        );
        let mut hubs = lock(&self.inner.plugins);
        if let Some(h) = hubs.get(project)
            && h.key == key
        {
            return h.clone();
        }
        let mut installer = Installer::new(&self.inner.opts.paths.home);
        installer.attempt_timeout = Duration::from_secs(install_timeout);
        installer.allow_scripts = allow_scripts;
        let slots = defs
            .iter()
            .cloned()
            .map(|def| {
                Arc::new(Slot {
                    def,
                    state: tokio::sync::Mutex::new(PState::Idle),
                    version: std::sync::Mutex::new(None),
                    done: tokio::sync::Notify::new(),
                })
            })
            .collect();
        let hub = Arc::new(PluginHub {
            key,
            slots,
            installer,
            offline,
            timeout: Duration::from_secs(timeout),
        });
        hubs.insert(project.to_path_buf(), hub.clone());
        hub
    }

    /// The plugins' tools and hooks for a step in `project`.
    pub(crate) async fn plugin_tools(
        &self,
        project: &Path,
        config: &Config,
        trusted: bool,
    ) -> (BTreeMap<String, Arc<dyn Tool>>, TurnPlugins) {
        let hub = self.plugin_hub(project, config);
        if hub.slots.is_empty() {
            return (BTreeMap::new(), TurnPlugins::default());
        }
        hub.start(project, trusted, self.inner.opts.wait_for_plugins, self)
            .await;
        let builtin: Vec<String> = self
            .inner
            .tools
            .specs()
            .into_iter()
            .map(|s| s.name.into_owned())
            .collect();
        let mut tools: BTreeMap<String, Arc<dyn Tool>> = BTreeMap::new();
        let mut hooked = Vec::new();
        for (_, p) in hub.ready().await {
            for def in &p.init.tools {
                if builtin.contains(&def.name)
                    || def.name.starts_with("mcp__")
                    || tools.contains_key(&def.name)
                {
                    tracing::warn!(plugin = %p.name, tool = %def.name, "a plugin tool with a name already taken is left out");
                    continue;
                }
                tools.insert(
                    def.name.clone(),
                    Arc::new(PluginTool {
                        plugin: p.clone(),
                        def: def.clone(),
                        timeout: hub.timeout,
                    }),
                );
            }
            if !p.init.hooks.is_empty() {
                hooked.push(p.clone());
            }
        }
        (
            tools,
            TurnPlugins {
                hooked,
                timeout: HOOK_TIMEOUT.min(hub.timeout),
            },
        )
    }

    /// Every plugin of `directory` with its state (installs and starts
    /// what may run; `update`: newest versions in range first).
    pub async fn plugins(
        &self,
        directory: PathBuf,
        update: bool,
    ) -> Result<Vec<PluginView>, CoreError> {
        let project = self.project_dir(&directory)?;
        let config = self.load_config(Some(project.clone())).await?;
        let key = crate::worktrees::project_key(&project);
        let trusted = self
            .inner
            .store
            .call(move |db| db.is_workspace_trusted(&key))
            .await?;
        if update {
            // Drop the hub so the processes restart on the new versions.
            lock(&self.inner.plugins).remove(&project);
        }
        let hub = self.plugin_hub(&project, &config);
        if update {
            for s in &hub.slots {
                if s.def.project_level && !trusted {
                    continue;
                }
                let progress = |line: String| tracing::info!("{line}");
                let result = match &s.def.parsed {
                    Ok(PluginRef::Npm { name, range }) => hub
                        .installer
                        .ensure(name, range, hub.offline, true, &progress)
                        .await
                        .map(|_| ()),
                    Ok(PluginRef::Git { url }) => hub
                        .installer
                        .ensure_git(url, hub.offline, true, &progress)
                        .await
                        .map(|_| ()),
                    _ => Ok(()),
                };
                if let Err(e) = result {
                    *s.state.lock().await = PState::Failed(e.to_string());
                }
            }
        }
        hub.start(&project, trusted, true, self).await;
        let mut out = Vec::new();
        for s in &hub.slots {
            let mut v = PluginView {
                entry: s.def.entry.clone(),
                name: PluginHub::slot_name(&s.def),
                source: s.def.source.clone(),
                state: PluginState::NotLoaded,
                version: lock(&s.version).clone(),
                error: None,
                tools: Vec::new(),
                hooks: Vec::new(),
            };
            if s.def.project_level && !trusted {
                v.state = PluginState::Untrusted;
                v.error = Some("a project's plugins load once you trust the workspace (`mia-code permissions trust`)".into());
            } else {
                match &*s.state.lock().await {
                    PState::Idle => v.state = PluginState::NotLoaded,
                    PState::Installing => v.state = PluginState::Installing,
                    PState::Ready(p) if p.is_alive() => {
                        v.state = PluginState::Loaded;
                        v.tools = p.init.tools.iter().map(|t| t.name.clone()).collect();
                        v.hooks = p.init.hooks.clone();
                    }
                    PState::Ready(p) => {
                        v.state = PluginState::Failed;
                        v.error = p.death();
                    }
                    PState::Failed(e) => {
                        v.state = if s.def.parsed.is_err() {
                            PluginState::Refused
                        } else {
                            PluginState::Failed
                        };
                        v.error = Some(e.clone());
                    }
                    PState::Skipped(e) => {
                        v.state = PluginState::Skipped;
                        v.error = Some(e.clone());
                    }
                }
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Uninstall an npm plugin and forget its lock entry.
    pub async fn remove_plugin(&self, name: &str) -> Result<bool, CoreError> {
        let installer = Installer::new(&self.inner.opts.paths.home);
        lock(&self.inner.plugins).clear();
        installer
            .remove(name)
            .await
            .map_err(|e| CoreError::Failed(e.to_string()))
    }

    /// `tool.execute.before`: a veto (the first) or annotations.
    pub(crate) async fn plugin_before(
        &self,
        plugins: &TurnPlugins,
        tool: &str,
        args: &Value,
        session: &str,
        call_id: &str,
    ) -> (Option<String>, Vec<String>) {
        let mut notes = Vec::new();
        for p in plugins
            .hooked
            .iter()
            .filter(|p| p.has_hook("tool.execute.before"))
        {
            let r = p
                .request(
                    "tool.execute.before",
                    json!({"tool": tool, "arguments": args, "session_id": session, "call_id": call_id}),
                    plugins.timeout,
                )
                .await;
            match r {
                Ok(v) => {
                    if let Some(why) = v["veto"].as_str().filter(|s| !s.is_empty()) {
                        return (Some(format!("Vetoed by plugin {}: {why}", p.name)), notes);
                    }
                    if let Some(a) = v["annotation"].as_str().filter(|s| !s.is_empty()) {
                        notes.push(format!("[plugin {}] {a}", p.name));
                    }
                }
                Err(e) => self.plugin_failed(p, &e),
            }
        }
        (None, notes)
    }

    /// `tool.execute.after`: annotations.
    pub(crate) async fn plugin_after(
        &self,
        plugins: &TurnPlugins,
        tool: &str,
        args: &Value,
        output: &str,
        is_error: bool,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for p in plugins
            .hooked
            .iter()
            .filter(|p| p.has_hook("tool.execute.after"))
        {
            match p
                .request(
                    "tool.execute.after",
                    json!({"tool": tool, "arguments": args, "output": output, "is_error": is_error}),
                    plugins.timeout,
                )
                .await
            {
                Ok(v) => {
                    if let Some(a) = v["annotation"].as_str().filter(|s| !s.is_empty()) {
                        notes.push(format!("[plugin {}] {a}", p.name));
                    }
                }
                Err(e) => self.plugin_failed(p, &e),
            }
        }
        notes
    }

    /// `permission.ask`: a plugin may turn an allow or an ask into an ask
    /// or a deny, never the other way. Returns (action, plugin, reason).
    pub(crate) async fn plugin_permission(
        &self,
        plugins: &TurnPlugins,
        permission: &str,
        target: &str,
        tool: &str,
        decision: &str,
    ) -> Option<(String, String, String)> {
        let mut out: Option<(String, String, String)> = None;
        for p in plugins
            .hooked
            .iter()
            .filter(|p| p.has_hook("permission.ask"))
        {
            match p
                .request(
                    "permission.ask",
                    json!({"permission": permission, "target": target, "tool": tool, "decision": decision}),
                    plugins.timeout,
                )
                .await
            {
                Ok(v) => {
                    let reason = v["reason"].as_str().unwrap_or_default().to_string();
                    match v["action"].as_str() {
                        Some("deny") => return Some(("deny".into(), p.name.clone(), reason)),
                        Some("ask") if decision == "allow" => {
                            out = Some(("ask".into(), p.name.clone(), reason));
                        }
                        _ => {}
                    }
                }
                Err(e) => self.plugin_failed(p, &e),
            }
        }
        out
    }

    /// `chat.params`: temperature and max tokens of the next request.
    pub(crate) async fn plugin_chat_params(
        &self,
        plugins: &TurnPlugins,
        agent: &str,
        request: &mut mia_providers::ChatRequest,
    ) {
        for p in plugins.hooked.iter().filter(|p| p.has_hook("chat.params")) {
            match p
                .request(
                    "chat.params",
                    json!({"agent": agent, "model": request.model, "temperature": request.temperature, "max_tokens": request.max_tokens}),
                    plugins.timeout,
                )
                .await
            {
                Ok(v) => {
                    if let Some(t) = v["temperature"].as_f64().filter(|t| (0.0..=2.0).contains(t)) {
                        request.temperature = Some(t as f32);
                    }
                    if let Some(m) = v["max_tokens"].as_u64().filter(|m| *m > 0) {
                        request.max_tokens = Some(u32::try_from(m).unwrap_or(u32::MAX));
                    }
                }
                Err(e) => self.plugin_failed(p, &e),
            }
        }
    }

    /// `event`: tell the plugins of `project` about an event (fire and forget).
    pub(crate) fn plugin_event(&self, project: &Path, event: &Event) {
        let Some(hub) = lock(&self.inner.plugins).get(project).cloned() else {
            return;
        };
        let Ok(value) = serde_json::to_value(event) else {
            return;
        };
        tokio::spawn(async move {
            for (_, p) in hub.ready().await {
                if p.has_hook("event") {
                    p.notify("event", value.clone()).await;
                }
            }
        });
    }

    /// `compaction.context`: what plugins want kept in a summary.
    pub(crate) async fn plugin_compaction_context(
        &self,
        project: &Path,
        session: &str,
    ) -> Vec<String> {
        let Some(hub) = lock(&self.inner.plugins).get(project).cloned() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (_, p) in hub.ready().await {
            if !p.has_hook("compaction.context") {
                continue;
            }
            match p
                .request(
                    "compaction.context",
                    json!({"session_id": session}),
                    HOOK_TIMEOUT,
                )
                .await
            {
                Ok(v) => {
                    if let Some(c) = v["context"].as_str().filter(|c| !c.trim().is_empty()) {
                        out.push(format!("[plugin {}] {c}", p.name));
                    }
                }
                Err(e) => self.plugin_failed(&p, &e),
            }
        }
        out
    }

    fn plugin_failed(&self, p: &PluginProcess, e: &str) {
        tracing::warn!(plugin = %p.name, error = %e, "plugin hook failed");
        if !p.is_alive() {
            self.emit(Event::Notice {
                session_id: None,
                message: format!("plugin {} is disabled for this session: {e}", p.name),
            });
        }
    }
}

/// Hubs by project directory (for `Inner`).
pub(crate) type Hubs = HashMap<PathBuf, Arc<PluginHub>>;
