use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mia_config::Paths;
use mia_permission::PermissionRule;
use mia_protocol::{Event, Session, SessionId};
use mia_providers::ClientOptions;
use mia_providers::credentials::Credentials;
use mia_tools::ToolRegistry;
use tokio::sync::broadcast;

use crate::session::{ProjectShared, SessionState};
use crate::{CoreError, StoreHandle};

/// How the runtime is set up.
#[derive(Clone)]
pub struct RuntimeOptions {
    pub paths: Paths,
    /// Whether a person can answer permission asks. When false, an ask that
    /// no rule settles is denied and the reason says so.
    pub interactive: bool,
    /// Extra allow rules for every session (`mia-code run --allow`).
    pub allow: Vec<PermissionRule>,
    /// Provider client options (timeouts, retries).
    pub client: ClientOptions,
    pub credentials: Arc<Credentials>,
    /// Add the 🧠/🌸 commentary instructions to primary agents (overrides config when set).
    pub unifier: Option<bool>,
    /// Session state idle this long is dropped from memory (it is all in
    /// the store), and a project none of whose sessions is left closes its
    /// snapshot repository and watcher.
    pub idle_eviction: std::time::Duration,
    /// Never contact a registry for plugins (`--offline`).
    pub offline: bool,
    /// A turn waits for plugin installs to finish (`mia-code run`, which has
    /// no next turn); otherwise installs run in the background.
    pub wait_for_plugins: bool,
    /// Watch the attempts this process compares, so the next comparison of
    /// one re-reads only what changed (a long-lived process: the desktop
    /// app, `serve`). A one-shot command scans: a watcher would outlive
    /// nothing.
    pub watch_attempts: bool,
}

impl RuntimeOptions {
    pub fn new(paths: Paths) -> Self {
        Self {
            paths,
            interactive: true,
            allow: Vec::new(),
            client: ClientOptions::default(),
            credentials: Arc::new(Credentials::system()),
            unifier: None,
            idle_eviction: std::time::Duration::from_secs(600),
            offline: false,
            wait_for_plugins: false,
            watch_attempts: false,
        }
    }
}

/// What an Op returned right away (its effects arrive as Events).
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult {
    Done,
    Session(Session),
    Reverted(mia_protocol::RevertSummary),
    Forked(mia_protocol::ForkResult),
    Compacted(mia_protocol::CompactResult),
}

pub(crate) struct Inner {
    pub(crate) opts: RuntimeOptions,
    pub(crate) store: StoreHandle,
    pub(crate) events: broadcast::Sender<Event>,
    /// Sequence numbers and recent Events per session (events.rs).
    pub(crate) log: Mutex<crate::events::EventLog>,
    pub(crate) sessions: Mutex<HashMap<SessionId, Arc<SessionState>>>,
    pub(crate) projects: Mutex<HashMap<PathBuf, ProjectShared>>,
    pub(crate) tools: ToolRegistry,
    /// Provider clients by resolved configuration (see `llm.rs`).
    pub(crate) providers: Mutex<HashMap<String, Arc<dyn mia_providers::Provider>>>,
    /// When idle state was last swept (Unix ms).
    pub(crate) last_sweep: std::sync::atomic::AtomicI64,
    /// When snapshot expiry last ran (Unix ms).
    pub(crate) last_expiry: std::sync::atomic::AtomicI64,
    /// Watchers on compared attempts (`RuntimeOptions::watch_attempts`).
    pub(crate) attempts: Option<Arc<mia_git::WatchedAttempts>>,
    /// Auto share: sessions with a sync scheduled, and sessions whose last
    /// sync failed (reported once).
    pub(crate) share_pending: Mutex<std::collections::HashSet<SessionId>>,
    pub(crate) share_failed: Mutex<std::collections::HashSet<SessionId>>,
    pub(crate) share_tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// MCP servers, per project directory (mcp.rs).
    pub(crate) mcp: Mutex<crate::mcp::Hubs>,
    /// MCP servers an editor (ACP client) brought, per project directory:
    /// the person's own, as if in their global config.
    pub(crate) client_mcp: Mutex<
        HashMap<
            std::path::PathBuf,
            std::collections::BTreeMap<String, mia_config::McpServerConfig>,
        >,
    >,
    /// Plugins, per project directory (plugins.rs).
    pub(crate) plugins: Mutex<crate::plugins::Hubs>,
}

/// The runtime. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runtime {
    pub fn new(opts: RuntimeOptions, store: StoreHandle) -> Self {
        let (events, _) = broadcast::channel(8192);
        let attempts = opts
            .watch_attempts
            .then(|| Arc::new(mia_git::WatchedAttempts::new()));
        let rt = Self {
            inner: Arc::new(Inner {
                opts,
                store,
                events,
                log: Mutex::new(crate::events::EventLog::new(
                    uuid::Uuid::now_v7().simple().to_string(),
                )),
                sessions: Mutex::new(HashMap::new()),
                projects: Mutex::new(HashMap::new()),
                tools: ToolRegistry::builtin(),
                last_expiry: std::sync::atomic::AtomicI64::new(0),
                attempts,
                providers: Mutex::new(HashMap::new()),
                last_sweep: std::sync::atomic::AtomicI64::new(mia_protocol::now_ms()),
                share_pending: Mutex::new(std::collections::HashSet::new()),
                share_failed: Mutex::new(std::collections::HashSet::new()),
                share_tasks: Mutex::new(Vec::new()),
                mcp: Mutex::new(HashMap::new()),
                client_mcp: Mutex::new(HashMap::new()),
                plugins: Mutex::new(HashMap::new()),
            }),
        };
        rt.recover_dead_claims();
        rt
    }

    /// Open the session store under `opts.paths` (creating it, recovering a
    /// damaged file, importing legacy sessions once) on its own thread, and
    /// the runtime over it. Returns what the user should be told about the
    /// opening (a recovery, an import).
    pub fn open(opts: RuntimeOptions) -> Result<(Self, Vec<String>), CoreError> {
        let paths = &opts.paths;
        // Files only the user can read: $MIA_CODE_HOME 0700, the database,
        // logs, credentials and the serve token 0600 (fixed if wider).
        let fixed = mia_store::private::secure_home(&paths.home).map_err(|e| {
            CoreError::Failed(format!(
                "cannot make {} private (mode 0700): {e}",
                paths.home.display()
            ))
        })?;
        let db = mia_store::SessionDb::open_with(
            mia_store::OpenOptions::new(paths.data_db()).legacy_json(paths.legacy_sessions()),
        )?;
        let mut notices = Vec::new();
        if !fixed.is_empty() {
            notices.push(format!(
                "made private (others could read them): {}",
                fixed
                    .iter()
                    .map(|(p, m)| format!("{} (was {m:o})", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(r) = db.recovery() {
            notices.push(r.to_string());
        }
        if let Some(i) = db.legacy_import() {
            notices.push(i.to_string());
        }
        let store = StoreHandle::spawn(db)?;
        Ok((Self::new(opts, store), notices))
    }

    /// The layered config for `directory` (global only when `None`), read
    /// off the async workers (it reads files).
    pub(crate) async fn load_config(
        &self,
        directory: Option<PathBuf>,
    ) -> Result<mia_config::Config, CoreError> {
        let paths = self.inner.opts.paths.clone();
        tokio::task::spawn_blocking(move || mia_config::Config::load(&paths, directory.as_deref()))
            .await
            .map_err(|e| CoreError::Internal(format!("reading the config failed: {e}")))?
            .map_err(CoreError::from)
    }

    /// Every Event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.inner.opts
    }

    pub(crate) fn emit(&self, event: Event) {
        let mut log = lock(&self.inner.log);
        log.push(Arc::new(event.clone()));
        let _ = self.inner.events.send(event);
    }
}
