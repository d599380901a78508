//! The OS sandbox shell commands run in: the second wall behind the
//! permission engine.
//!
//! The engine judges what a command *says*; the sandbox enforces what it
//! *does*. A [`SandboxPolicy`] says where a command may write, what it may
//! not read or change, what reaches it of the environment and the network;
//! [`prepare`] builds the process that runs under it:
//!
//! - Linux: bubblewrap (mount, PID, IPC, user and network namespaces, no
//!   capabilities, seccomp), the network only through mia-code's proxy
//!   ([`proxy`]); Landlock and seccomp where user namespaces are off.
//! - macOS: a Seatbelt profile through `sandbox-exec`.
//! - Windows: not available; [`support`] says so and callers fall back to
//!   the permission engine alone.
//!
//! Nothing runs unconfined by accident: when the policy asks for a sandbox
//! and it cannot be applied, [`prepare`] returns an error instead of a
//! command.

#![deny(unsafe_code)]

pub mod env;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
#[cfg(windows)]
pub mod process;
pub mod protect;
pub mod proxy;
pub mod seatbelt;

#[cfg(target_os = "linux")]
pub use linux::trace::{Tracer, WriteSet, Writes};
#[cfg(target_os = "linux")]
pub use linux::{NO_USERNS_ENV, netns::PROXY_PORT};

use std::process::Command;

pub use env::EnvRule;
pub use policy::{
    NetRules, NetworkAccess, PROTECTED_GIT, PROTECTED_HOME, PROTECTED_NAMES, PolicyInputs,
    SandboxMode, SandboxPolicy, package_caches,
};
pub use proxy::REGISTRY_HOSTS;

/// Set to a reason to make [`support`] report the sandbox unavailable
/// (diagnostics, and the tests of the fail-closed path).
pub const FORCE_UNAVAILABLE_ENV: &str = "MIA_CODE_SANDBOX_UNAVAILABLE";

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the OS sandbox is unavailable: {0}")]
    Unavailable(String),
    #[error("the OS sandbox could not be set up ({0}); the command was not run")]
    Build(String),
}

/// How commands are confined on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// Linux with user namespaces: the whole wall.
    Bubblewrap,
    /// Linux without user namespaces: Landlock and seccomp, weaker.
    Landlock,
    /// macOS.
    Seatbelt,
}

impl Mechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bubblewrap => "bubblewrap",
            Self::Landlock => "landlock+seccomp",
            Self::Seatbelt => "seatbelt",
        }
    }

    /// Does it hold every promise of docs/security.md? The fallback does
    /// not: commands the permission engine cannot read ask again under it.
    pub fn is_full(self) -> bool {
        !matches!(self, Self::Landlock)
    }

    /// What it cannot hold, for `doctor`, Settings and the tool card.
    pub fn limits(self) -> &'static [&'static str] {
        match self {
            Self::Bubblewrap => &[],
            Self::Landlock => &[
                "protected paths inside the project (.git/config, .git/hooks, .mcp.json, mia-code's own files) stay writable",
                "file modes and times outside the project can be changed (Landlock has no metadata rights)",
                "other processes of your account are visible in /proc",
                "no per-host network asks: the network is all (sandbox.network \"allow\") or nothing",
                "every Unix socket is refused, also the ones sandbox.unixSockets allows",
                "only $TMPDIR (a private directory) is writable, not /tmp",
            ],
            Self::Seatbelt => &["the macOS profile has not been run by mia-code's own test suite"],
        }
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether this machine can sandbox commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Available {
        mechanism: Mechanism,
        detail: String,
    },
    Unavailable {
        reason: String,
    },
}

impl Support {
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available { .. })
    }

    pub fn mechanism(&self) -> Option<Mechanism> {
        match self {
            Self::Available { mechanism, .. } => Some(*mechanism),
            Self::Unavailable { .. } => None,
        }
    }
}

/// What this OS offers (probed once per process).
pub fn support() -> Support {
    if let Some(reason) = std::env::var(FORCE_UNAVAILABLE_ENV)
        .ok()
        .filter(|r| !r.is_empty())
    {
        return Support::Unavailable {
            reason: format!("{reason} ({FORCE_UNAVAILABLE_ENV} is set)"),
        };
    }
    probe()
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    linux::support()
}

#[cfg(target_os = "macos")]
fn probe() -> Support {
    if std::path::Path::new(seatbelt::SANDBOX_EXEC).exists() {
        Support::Available {
            mechanism: Mechanism::Seatbelt,
            detail: "sandbox-exec with a generated Seatbelt profile".into(),
        }
    } else {
        Support::Unavailable {
            reason: format!("{} is missing", seatbelt::SANDBOX_EXEC),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe() -> Support {
    Support::Unavailable {
        reason: "this OS has no sandbox for shell commands yet (Linux and macOS do); the permission engine alone decides".into(),
    }
}

/// The default `sandbox.mode` on this OS: workspace-write where a sandbox
/// exists (Linux, macOS), off elsewhere (Windows).
pub fn default_mode() -> SandboxMode {
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        SandboxMode::WorkspaceWrite
    } else {
        SandboxMode::Off
    }
}

/// What the caller keeps while the command runs, and drops after it ended
/// (the placeholders protected paths needed are removed then).
#[derive(Default)]
pub struct Guard {
    mechanism: Option<Mechanism>,
    #[cfg(target_os = "linux")]
    tracer: Option<Tracer>,
    #[cfg(target_os = "linux")]
    bridge: Option<linux::netns::Bridge>,
    /// Placeholders for missing protected paths: released on drop.
    #[cfg(target_os = "linux")]
    #[expect(dead_code, reason = "held for its Drop")]
    held: Option<linux::placeholder::Held>,
    /// A temp dir made for this command alone (removed on drop).
    own_tmp: Option<std::path::PathBuf>,
    /// The variables the sandbox itself sets (proxy, `TMPDIR`), for callers
    /// that give the process an environment of their own.
    env: Vec<(String, String)>,
    /// The proxy's listener, made before the spawn (macOS).
    #[cfg(not(target_os = "linux"))]
    listener: Option<std::net::TcpListener>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("mechanism", &self.mechanism)
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// The mechanism the command runs under (`None`: unconfined).
    pub fn mechanism(&self) -> Option<Mechanism> {
        self.mechanism
    }

    /// The variables the sandbox sets (the proxy's, `TMPDIR`): a caller that
    /// replaces the environment (`env_clear`) adds these back after its own.
    pub fn sandbox_env(&self) -> &[(String, String)] {
        &self.env
    }

    /// The write tracer, to start right after the spawn.
    #[cfg(target_os = "linux")]
    pub fn take_tracer(&mut self) -> Option<Tracer> {
        self.tracer.take()
    }

    /// After the spawn: the socket the command's connections to the proxy
    /// arrive on (`None` when the network is denied or unconfined).
    pub fn take_listener(&mut self) -> Option<std::net::TcpListener> {
        #[cfg(target_os = "linux")]
        {
            self.bridge.take().and_then(linux::netns::Bridge::listener)
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.listener.take()
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(t) = self.own_tmp.take() {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// How a process other than the bash tool runs (worktree scripts, a
/// project's MCP servers and plugins): its policy, and who decides the hosts
/// its connections go to (nobody is asked for these: `None` refuses every
/// host but the registries, or allows all under `sandbox.network: allow`).
#[derive(Clone)]
pub struct Confinement {
    pub policy: SandboxPolicy,
    pub gate: Option<std::sync::Arc<dyn proxy::HostGate>>,
}

impl std::fmt::Debug for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement")
            .field("policy", &self.policy.describe())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Confinement {
    fn eq(&self, other: &Self) -> bool {
        self.policy == other.policy
    }
}

impl Eq for Confinement {}

/// A confined process's sandbox while it runs: its proxy and placeholders
/// (dropping it stops the proxy and releases them).
pub struct Running {
    _guard: Guard,
    proxy: Option<proxy::Proxy>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(p) = self.proxy.take() {
            p.finish();
        }
    }
}

impl Confinement {
    /// `program args...` under the policy (see [`prepare`]).
    pub fn prepare(&self, program: &str, args: &[&str]) -> Result<Prepared, SandboxError> {
        prepare(&self.policy, program, args, false)
    }

    /// After the spawn: serve the process's network through the proxy (on
    /// the current tokio runtime; without one the process has none).
    pub fn started(&self, mut guard: Guard, pid: Option<u32>) -> Running {
        let proxy = guard.take_listener().and_then(|listener| {
            let gate = self.gate.clone().unwrap_or_else(|| {
                std::sync::Arc::new(proxy::FixedGate(match self.policy.network {
                    NetworkAccess::Allow => proxy::Verdict::Allow,
                    _ => proxy::Verdict::Deny(
                        "nobody is asked about the connections of scripts, MCP servers and plugins: allow the host with a `fetch` rule".into(),
                    ),
                }))
            });
            let peer = pid.map(|root| {
                std::sync::Arc::new(move |port: u16| peer_program(root, port))
                    as std::sync::Arc<dyn Fn(u16) -> Option<String> + Send + Sync>
            });
            tokio::runtime::Handle::try_current().ok()?;
            proxy::Proxy::start(
                listener,
                proxy::ProxyConfig {
                    rules: self.policy.net_rules.clone(),
                    gate,
                    peer,
                },
            )
            .map_err(|e| tracing::warn!("the network proxy could not start: {e}"))
            .ok()
        });
        Running {
            _guard: guard,
            proxy,
        }
    }
}

/// A command ready to spawn under its policy.
#[derive(Debug)]
pub struct Prepared {
    /// The process to spawn (its environment is set: see [`EnvRule`]).
    pub command: Command,
    /// Keep it until the command has ended.
    pub guard: Guard,
}

/// `program args...` confined by `policy` (unconfined when its mode is
/// off). `trace`: (Linux) also record which files the command changes
/// ([`Guard::take_tracer`]).
pub fn prepare(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Result<Prepared, SandboxError> {
    if policy.is_off() {
        let mut command = Command::new(program);
        command.args(args);
        let mut guard = Guard::default();
        guard.env = set_env(&mut command, policy, None);
        return Ok(Prepared { command, guard });
    }
    match support() {
        Support::Available { .. } => {}
        Support::Unavailable { reason } => return Err(SandboxError::Unavailable(reason)),
    }
    harden_self();
    platform_prepare(policy, program, args, trace)
}

#[cfg(target_os = "linux")]
fn platform_prepare(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    trace: bool,
) -> Result<Prepared, SandboxError> {
    let (command, guard) = linux::command(policy, program, args, trace)?;
    Ok(Prepared { command, guard })
}

#[cfg(target_os = "macos")]
fn platform_prepare(
    policy: &SandboxPolicy,
    program: &str,
    args: &[&str],
    _trace: bool,
) -> Result<Prepared, SandboxError> {
    let listener = if policy.network.proxied() {
        Some(
            std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| SandboxError::Build(format!("the proxy's socket: {e}")))?,
        )
    } else {
        None
    };
    let port = listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.port());
    let argv = seatbelt::argv(policy, port, program, args);
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    let mut guard = Guard::default();
    guard.env = set_env(&mut command, policy, port);
    guard.mechanism = Some(Mechanism::Seatbelt);
    guard.listener = listener;
    Ok(Prepared { command, guard })
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform_prepare(
    _policy: &SandboxPolicy,
    _program: &str,
    _args: &[&str],
    _trace: bool,
) -> Result<Prepared, SandboxError> {
    Err(SandboxError::Unavailable(
        "this OS has no sandbox for shell commands".into(),
    ))
}

/// mia-code's own process cannot be inspected by the commands it runs
/// (`/proc/<pid>/environ`, `/proc/<pid>/mem`), even where they share its
/// view of the processes (the Landlock fallback).
fn harden_self() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            #[allow(unsafe_code)]
            // SAFETY: prctl with integer arguments.
            unsafe {
                libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            }
        });
    }
}

/// The variables a proxied command gets: the usual proxy variables in both
/// cases, npm's and cargo's own, and git's `http.proxy` (through
/// `GIT_CONFIG_*`; callers adding git config continue after index 0).
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut v = Vec::new();
    for k in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        v.push((k.to_string(), http.clone()));
    }
    for k in ["ALL_PROXY", "all_proxy"] {
        v.push((k.to_string(), socks.clone()));
    }
    for k in ["NO_PROXY", "no_proxy"] {
        v.push((k.to_string(), "localhost,127.0.0.1,::1".to_string()));
    }
    v.push(("npm_config_proxy".into(), http.clone()));
    v.push(("npm_config_https_proxy".into(), http.clone()));
    v.push(("CARGO_HTTP_PROXY".into(), http.clone()));
    v.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
    v.push(("GIT_CONFIG_COUNT".into(), "1".into()));
    v.push(("GIT_CONFIG_KEY_0".into(), "http.proxy".into()));
    v.push(("GIT_CONFIG_VALUE_0".into(), http));
    v
}

/// The command's environment: the person's minus secrets ([`EnvRule`]),
/// the proxy's variables, and (bubblewrap) `TMPDIR=/tmp`.
pub(crate) fn set_env(
    cmd: &mut Command,
    policy: &SandboxPolicy,
    proxy_port: Option<u16>,
) -> Vec<(String, String)> {
    let mut own: Vec<(String, String)> = Vec::new();
    cmd.env_clear();
    cmd.envs(policy.env.apply(std::env::vars_os()));
    if proxy_port.is_some() || !policy.is_off() {
        // Proxy variables of the caller's own would point nowhere inside.
        for (k, _) in proxy_env(0) {
            cmd.env_remove(k);
        }
    }
    if let Some(port) = proxy_port {
        own.extend(proxy_env(port).into_iter().filter(|(k, _)| {
            // With the host's loopback allowed, `localhost` means the host's
            // services (through the proxy), no longer the sandbox's own.
            !(policy.net_rules.allow_localhost && matches!(k.as_str(), "NO_PROXY" | "no_proxy"))
        }));
    }
    #[cfg(target_os = "linux")]
    if !policy.is_off() {
        own.push(("TMPDIR".into(), "/tmp".into()));
    }
    cmd.envs(own.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    own
}

/// Which program in the process tree of `root` (the spawned command) holds
/// the connection to the proxy from `peer_port` (Linux; `None` elsewhere).
pub fn peer_program(root: u32, peer_port: u16) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        linux::peer::program(root, peer_port)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (root, peer_port);
        None
    }
}

/// The account's home directory from the password database (Linux), which
/// may differ from `$HOME`.
pub fn account_home() -> Option<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        linux::bwrap::account_home()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The private `/tmp` of one session (`key`: its id): a directory only this
/// user can enter, kept between the session's commands, cleared by the OS
/// with the rest of the temp dir. `None` where the sandbox has none (the
/// command gets a fresh one).
pub fn session_tmp(key: &str) -> Option<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let safe: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        linux::placeholder::private_dir("tmp")
            .ok()
            .map(|d| d.join(safe))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = key;
        None
    }
}

/// Remove a session's private `/tmp` (the session was deleted). Its
/// read-only directories (the way to a project under `/tmp`) are made
/// writable first.
pub fn remove_session_tmp(key: &str) {
    let Some(dir) = session_tmp(key) else { return };
    fn open_up(d: &std::path::Path) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(m) = std::fs::symlink_metadata(d)
                && m.is_dir()
            {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700));
                if let Ok(entries) = std::fs::read_dir(d) {
                    for e in entries.flatten() {
                        open_up(&e.path());
                    }
                }
            }
        }
        #[cfg(not(unix))]
        let _ = d;
    }
    open_up(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process-wide counter for unique names.
#[cfg(target_os = "linux")]
pub(crate) fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// What a failed sandboxed command's output suggests the sandbox blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    Write,
    Network,
}

impl Blocked {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Network => "network",
        }
    }
}

/// Read a failed command's output for the marks of a sandbox denial: a
/// refused write ("Permission denied", "Read-only file system",
/// "Operation not permitted") or a refused connection or name lookup (the
/// network is denied, or the proxy said no). A guess from the text (the
/// kernel does not tell the parent why a child's call failed), so it only
/// ever adds advice.
pub fn blocked(policy: &SandboxPolicy, output: &str) -> Option<Blocked> {
    if policy.is_off() {
        return None;
    }
    let o = output.to_ascii_lowercase();
    if [
        "could not resolve host",
        "temporary failure in name resolution",
        "name or service not known",
        "network is unreachable",
        "failed to establish a new connection",
        "couldn't connect to server",
        "failed to connect",
        "getaddrinfo",
        "eai_again",
        "socket: operation not permitted",
        "enotfound",
        "econnrefused",
        "403 forbidden",
        "mia-code's proxy",
        "received http code 403 from proxy",
    ]
    .iter()
    .any(|m| o.contains(m))
    {
        return Some(Blocked::Network);
    }
    if [
        "permission denied",
        "read-only file system",
        "operation not permitted",
        "eacces",
        "eperm",
        "erofs",
    ]
    .iter()
    .any(|m| o.contains(m))
    {
        return Some(Blocked::Write);
    }
    None
}

impl SandboxPolicy {
    /// The homes that are the person's own (never hidden as another's).
    #[cfg(target_os = "linux")]
    pub(crate) fn homes_for_hiding(&self) -> Vec<std::path::PathBuf> {
        let mut v = self.homes.clone();
        v.extend(std::env::var_os("HOME").map(std::path::PathBuf::from));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_reads_denials_and_ignores_plain_failures() {
        let p = SandboxPolicy::build(
            SandboxMode::WorkspaceWrite,
            NetworkAccess::Deny,
            PolicyInputs::default(),
        );
        assert_eq!(
            blocked(&p, "touch: cannot touch '/etc/x': Permission denied"),
            Some(Blocked::Write)
        );
        assert_eq!(
            blocked(&p, "curl: (6) Could not resolve host: example.com"),
            Some(Blocked::Network)
        );
        assert_eq!(blocked(&p, "error: test failed, 2 of 10"), None);
        assert_eq!(blocked(&SandboxPolicy::off(), "Permission denied"), None);
    }

    #[test]
    fn proxy_variables_name_the_port_for_every_client() {
        let v = proxy_env(1023);
        let get = |k: &str| v.iter().find(|(n, _)| n == k).map(|(_, x)| x.as_str());
        assert_eq!(get("https_proxy"), Some("http://127.0.0.1:1023"));
        assert_eq!(get("ALL_PROXY"), Some("socks5h://127.0.0.1:1023"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("http.proxy"));
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
    }
}
