use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use crate::context;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Project directory whose config is checked (default: the current directory).
    #[arg(long)]
    project: Option<std::path::PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Error,
}

#[derive(Debug, Serialize)]
struct Check {
    name: String,
    status: Status,
    detail: String,
}

const PROVIDER_KEYS: [(&str, &[&str]); 3] = [
    ("anthropic", &["ANTHROPIC_API_KEY"]),
    ("openai", &["OPENAI_API_KEY"]),
    ("google", &["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
];

pub fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let mut push = |name: &str, status, detail: String| {
        checks.push(Check {
            name: name.to_string(),
            status,
            detail,
        })
    };

    let paths = context::paths()?;
    push("home", Status::Ok, paths.home.display().to_string());
    // Before anything below opens (and so fixes) them.
    let exposed = mia_core::exposed_files(&paths.home);
    if exposed.is_empty() {
        push(
            "file modes",
            Status::Ok,
            "home 0700; database, logs, credentials and server token 0600".into(),
        );
    } else {
        push(
            "file modes",
            Status::Warn,
            format!(
                "others could read: {} — fixed now (0700 directories, 0600 files)",
                exposed
                    .iter()
                    .map(|(p, m)| format!("{} ({m:o})", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        let _ = mia_core::secure_home(&paths.home);
    }

    match mia_core::ensure_private_dir(&paths.logs_dir()) {
        Ok(()) => push("logs", Status::Ok, paths.logs_dir().display().to_string()),
        Err(e) => push(
            "logs",
            Status::Error,
            format!("cannot create {}: {e}", paths.logs_dir().display()),
        ),
    }

    match mia_core::store_health(&paths) {
        Ok(h) => {
            if let Some(r) = &h.recovery {
                push("database", Status::Warn, r.clone());
            }
            if h.problems.is_empty() {
                push(
                    "database",
                    Status::Ok,
                    format!(
                        "{} (schema v{}, {} sessions, integrity ok)",
                        h.path.display(),
                        h.schema_version,
                        h.sessions
                    ),
                );
            } else {
                push(
                    "database",
                    Status::Error,
                    format!("{}: {}", h.path.display(), h.problems.join("; ")),
                );
            }
        }
        Err(e) => push("database", Status::Error, e.to_string()),
    }

    let sizes = mia_core::storage_sizes(&paths);
    push(
        "storage",
        Status::Ok,
        format!(
            "database {}, snapshots {}, logs {}, plugins {} (`mia-code snapshot gc` and `snapshot.retention` shrink the snapshots)",
            human_bytes(sizes.database),
            human_bytes(sizes.snapshots),
            human_bytes(sizes.logs),
            human_bytes(sizes.plugins)
        ),
    );

    let project = context::project_dir(args.project.as_deref());
    let config = match &project {
        Ok(dir) => match context::load_config(&paths, Some(dir)) {
            Ok(cfg) => {
                let files: Vec<String> = cfg
                    .layers
                    .iter()
                    .filter_map(|l| l.path.as_ref().map(|p| p.display().to_string()))
                    .collect();
                push(
                    "config",
                    Status::Ok,
                    if files.is_empty() {
                        "no config files; built-in defaults".to_string()
                    } else {
                        format!("valid: {}", files.join(", "))
                    },
                );
                Some(cfg)
            }
            Err(e) => {
                push("config", Status::Error, format!("{e:#}"));
                None
            }
        },
        Err(e) => {
            push("config", Status::Error, format!("{e:#}"));
            None
        }
    };

    // Where each provider's key would come from (never the key itself).
    let credentials = mia_core::credentials::Credentials::system();
    let providers: Vec<&str> = PROVIDER_KEYS.iter().map(|(p, _)| *p).collect();
    for found in credentials.list(&providers) {
        let provider = found.provider.as_str();
        let vars = PROVIDER_KEYS
            .iter()
            .find(|(p, _)| *p == provider)
            .map(|(_, v)| v.join(" or "))
            .unwrap_or_default();
        let from_config = config
            .as_ref()
            .and_then(|c| c.merged.providers.as_ref())
            .and_then(|p| p.get(provider))
            .and_then(|p| p.api_key.as_ref());
        let (status, detail) = match (from_config, found.sources.first()) {
            (Some(reference), _) => match mia_config::resolve_env_refs(
                reference,
                &format!("providers.{provider}.apiKey"),
            ) {
                Ok(_) => (Status::Ok, "key set in global config".to_string()),
                Err(e) => (Status::Warn, e.to_string()),
            },
            (None, Some(source)) => (Status::Ok, format!("key present ({source})")),
            (None, None) => (
                Status::Warn,
                format!("no key (set {vars} or run `mia-code auth set {provider}`)"),
            ),
        };
        push(&format!("provider {provider}"), status, detail);
    }

    match std::process::Command::new("git").arg("--version").output() {
        Ok(out) if out.status.success() => push(
            "git",
            Status::Ok,
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ),
        _ => push(
            "git",
            Status::Warn,
            "git not found on PATH; snapshots and worktrees need it".into(),
        ),
    }

    // The shell the bash tool runs commands in (Git Bash or PowerShell on Windows).
    match mia_core::sandbox::shell() {
        Ok((program, name, true)) => {
            match std::process::Command::new(&program)
                .arg("--version")
                .output()
            {
                Ok(out) if out.status.success() => push(
                    "bash",
                    Status::Ok,
                    String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .next()
                        .unwrap_or("bash")
                        .to_string(),
                ),
                _ => push(
                    "bash",
                    Status::Warn,
                    format!("{name} not found; the agent's shell tool needs it"),
                ),
            }
        }
        Ok((_, name, false)) => push(
            "bash",
            Status::Warn,
            format!(
                "commands run in {name}, which the permission engine cannot parse: every command asks; install Git for Windows for bash"
            ),
        ),
        Err(e) => push("bash", Status::Warn, e),
    }

    // The OS sandbox shell commands run in.
    if let Some(cfg) = &config {
        let r = mia_core::sandbox::report(cfg);
        use mia_protocol::SandboxEffect;
        let mechanism = r.mechanism.map_or("?", |m| m.as_str());
        let (status, detail) = match r.effect {
            SandboxEffect::Sandboxed if r.full => (
                Status::Ok,
                format!(
                    "{} via {} ({}); plan and explore run read-only",
                    r.mode, mechanism, r.detail
                ),
            ),
            SandboxEffect::Sandboxed => (
                Status::Warn,
                format!(
                    "{} via {}, the fallback ({}); it cannot hold: {}; so commands that run code the permission engine cannot read ask again",
                    r.mode,
                    mechanism,
                    r.detail,
                    r.limits.join("; ")
                ),
            ),
            SandboxEffect::Unconfined => (
                Status::Warn,
                format!(
                    "off: shell commands run unconfined and the permission engine alone decides ({})",
                    if r.available {
                        format!("a sandbox is available: {}", r.detail)
                    } else {
                        r.detail.clone()
                    }
                ),
            ),
            _ => (
                Status::Warn,
                format!(
                    "{} is configured but unavailable: {}; every shell command asks before it runs unconfined (set sandbox.mode to \"off\" in your global config to stop the asks)",
                    r.mode, r.detail
                ),
            ),
        };
        push("sandbox", status, detail);
        if r.effect == SandboxEffect::Sandboxed {
            push(
                "sandbox network",
                Status::Ok,
                format!(
                    "{}: every connection goes through mia-code's proxy, which asks per host (`fetch` rules apply; the package registries are allowed unless sandbox.registries is false; headless runs refuse what would ask); a program that ignores the proxy has no network",
                    r.network
                ),
            );
            push("sandbox environment", Status::Ok, r.env.clone());
        }
    }

    // Snapshots: where the stores are, and what the file watcher can do.
    let store = paths.home.join("snapshots");
    push(
        "snapshots",
        Status::Ok,
        format!(
            "{} ({} project store(s); outside every work tree)",
            store.display(),
            std::fs::read_dir(&store)
                .map(|rd| rd
                    .flatten()
                    .filter(|e| e.path().join("repo").is_dir())
                    .count())
                .unwrap_or(0)
        ),
    );
    if let Ok(text) = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches") {
        let limit: u64 = text.trim().parse().unwrap_or(0);
        // One watch per directory of each open project.
        let dirs = project
            .as_ref()
            .ok()
            .map(|d| count_dirs(d, 200_000))
            .unwrap_or(0);
        let (status, detail) = if limit == 0 {
            (
                Status::Warn,
                "fs.inotify.max_user_watches is unreadable".to_string(),
            )
        } else if dirs as u64 * 2 > limit {
            (
                Status::Warn,
                format!(
                    "fs.inotify.max_user_watches is {limit} and this project has about {dirs} directories: shell steps will scan instead of using the watcher; raise it with `sudo sysctl fs.inotify.max_user_watches=524288`"
                ),
            )
        } else {
            (
                Status::Ok,
                format!(
                    "fs.inotify.max_user_watches is {limit} (this project: about {dirs} directories)"
                ),
            )
        };
        push("file watcher", status, detail);
    }

    let failed = checks.iter().any(|c| c.status == Status::Error);
    if args.json {
        crate::output::print_json(
            &serde_json::json!({ "ok": !failed, "checks": checks, "storage": sizes }),
        )?;
    } else {
        for c in &checks {
            let mark = match c.status {
                Status::Ok => "✓",
                Status::Warn => "!",
                Status::Error => "✗",
            };
            println!("{mark} {:<18} {}", c.name, c.detail);
        }
        if failed {
            println!("\nSomething is broken: see the ✗ lines above.");
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Directories under `root` a snapshot watcher would watch (gitignored and
/// heavy directories skipped), counting at most `cap`.
fn count_dirs(root: &std::path::Path, cap: usize) -> usize {
    let heavy = mia_core::project_snapshots::DEFAULT_EXCLUDED_DIRS;
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .require_git(false)
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            name != ".git" && !heavy.iter().any(|h| *h == name)
        })
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .take(cap)
        .count()
}

/// `1.2 MB`-style sizes.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
