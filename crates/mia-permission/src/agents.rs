//! Built-in rulesets: invariants, per-agent rulesets (spec 011) and defaults (spec 074).

use mia_protocol::{PermissionAction, PermissionRule};

use crate::rules::{NOT_READ_ONLY_MARKER, READ_ONLY_MARKER};

/// Source label of every built-in rule.
pub const BUILT_IN: &str = "built-in";

/// The built-in agents.
pub const BUILT_IN_AGENTS: [&str; 5] = ["build", "plan", "explore", "general", "compaction"];

fn r(action: PermissionAction, permission: &str, pattern: Option<&str>) -> PermissionRule {
    PermissionRule {
        permission: permission.to_string(),
        pattern: pattern.map(str::to_string),
        action,
    }
}

use PermissionAction::{Allow, Ask, Deny};

/// Path patterns no rule can make writable without a person confirming.
/// Component patterns (no `/`) match any path component, inside or outside the project.
pub const PROTECTED_WRITE_PATTERNS: &[&str] = &[
    // mia-code's own config, permission files and internals
    "mia-code.json",
    ".mia-code.json",
    ".mia-code",
    "~/.config/mia-code/**",
    // git internals (hooks, config) and git config
    ".git",
    ".gitconfig",
    ".gitmodules",
    // what other tools run or load from a project (the OS sandbox keeps
    // them read-only for commands too)
    ".mcp.json",
    ".vscode",
    ".idea",
    ".envrc",
    ".claude",
    // shell rc / login files
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    "~/.config/fish/**",
    // ssh keys and config
    ".ssh",
];

/// mia-code's own secrets: API keys (when there is no keychain) and the
/// serve token. No agent reads them, whatever the rules say.
pub const SECRET_FILES: &[&str] = &["~/.mia-code/credentials.json", "~/.mia-code/server.json"];

/// mia-code's own data and config: reading them always asks (the store with
/// every transcript, the global config with its API keys). The secrets
/// among them ([`SECRET_FILES`]) are denied outright.
pub const PRIVATE_FILES: &[&str] = &[
    "~/.mia-code/**",
    "~/.config/mia-code/config.json",
    "~/.mia-code.json",
];

/// Well-known credential stores: reading them asks by default (every agent).
pub const CREDENTIAL_STORES: &[&str] = &[
    "~/.ssh/**",
    "~/.aws/**",
    "~/.azure/**",
    "~/.config/gcloud/**",
    "~/.config/gh/**",
    "~/.config/hub",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.kube/**",
    "~/.gnupg/**",
    "~/.password-store/**",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.local/share/keyrings/**",
    "~/.local/share/kwalletd/**",
    "~/Library/Keychains/**",
    "~/Library/Cookies/**",
    "~/.mozilla/**",
    "~/.config/google-chrome/**",
    "~/.config/chromium/**",
    "~/.config/BraveSoftware/**",
    "~/.config/microsoft-edge/**",
    "~/snap/firefox/**",
    "~/Library/Application Support/Google/Chrome/**",
    "~/Library/Application Support/Firefox/**",
    "~/Library/Application Support/BraveSoftware/**",
    "~/Library/Application Support/Microsoft Edge/**",
    "~/Library/Safari/**",
    "~/AppData/Local/Google/Chrome/User Data/**",
    "~/AppData/Roaming/Mozilla/Firefox/**",
    "~/AppData/Local/Microsoft/Edge/User Data/**",
    "~/AppData/Roaming/Microsoft/Credentials/**",
    "~/AppData/Local/Microsoft/Credentials/**",
    // Windows: DPAPI master keys, the credential vault, and the tools above
    // that keep their tokens under %APPDATA% / %LOCALAPPDATA% there.
    "~/AppData/Roaming/Microsoft/Protect/**",
    "~/AppData/Roaming/Microsoft/Vault/**",
    "~/AppData/Local/Microsoft/Vault/**",
    "~/AppData/Roaming/GitHub CLI/**",
    "~/AppData/Roaming/gcloud/**",
    "~/AppData/Roaming/gnupg/**",
    "~/AppData/Roaming/terraform.d/credentials.tfrc.json",
    "~/AppData/Local/BraveSoftware/Brave-Browser/User Data/**",
];

/// The credential stores as paths under `home` (their `/**` dropped), for
/// the OS sandbox to hide from commands: what the engine cannot see a
/// command read (a name built at run time), the kernel refuses.
pub fn credential_store_paths(home: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = Vec::new();
    for p in CREDENTIAL_STORES {
        let Some(rel) = p.strip_prefix("~/") else {
            continue;
        };
        let rel = rel.strip_suffix("/**").unwrap_or(rel);
        if rel.contains(['*', '?', '[', '{']) {
            continue;
        }
        let path = home.join(rel);
        if !v.contains(&path) {
            v.push(path);
        }
    }
    v
}

/// The safe-default layer (every agent; user config and answers can lift it):
/// reading credential stores asks, and so does the first fetch of each host.
pub fn safe_default_rules() -> Vec<PermissionRule> {
    let mut v = Vec::new();
    for p in CREDENTIAL_STORES {
        v.push(r(Ask, "read", Some(p)));
    }
    v.push(r(Ask, "fetch", None));
    v.push(r(Ask, "web_fetch", None));
    v
}

/// Layer 1: invariants. Writes and edits to protected paths always ask.
pub fn invariant_rules() -> Vec<PermissionRule> {
    let mut v = Vec::new();
    for p in PROTECTED_WRITE_PATTERNS {
        v.push(r(Ask, "write", Some(p)));
        v.push(r(Ask, "edit", Some(p)));
    }
    // A shell command that would run outside the configured OS sandbox
    // (the agent asked to, or this machine has none) always asks a person.
    v.push(r(Ask, SANDBOX_ESCAPE, None));
    v
}

/// The permission checked before a shell command runs outside the
/// configured OS sandbox; an invariant ask (no rule or answer lifts it).
pub const SANDBOX_ESCAPE: &str = "sandbox_escape";

/// Layer 8: built-in defaults (spec 074): allow reads, ask for writes and bash.
pub fn default_rules() -> Vec<PermissionRule> {
    vec![
        r(Allow, "read", None),
        r(Allow, "glob", None),
        r(Allow, "grep", None),
        r(Allow, "list", None),
        r(Ask, "write", None),
        r(Ask, "edit", None),
        r(Ask, "bash", None),
    ]
}

/// An agent's built-in ruleset split into the rules that survive user allow
/// rules (restrictions, layer 4) and the rest (grants and the final catch-all, layer 7).
#[derive(Debug, Clone, Default)]
pub struct BuiltinRuleset {
    pub restrictions: Vec<PermissionRule>,
    pub grants: Vec<PermissionRule>,
}

/// The built-in ruleset of a built-in agent, `None` for custom agents.
pub fn builtin_agent(name: &str) -> Option<BuiltinRuleset> {
    let read_grants = || {
        vec![
            r(Allow, "read", None),
            r(Allow, "glob", None),
            r(Allow, "grep", None),
            r(Allow, "list", None),
            // Global Agent Skills are read from outside the project.
            r(
                Allow,
                "external_directory",
                Some("~/.config/mia-code/skills/**"),
            ),
        ]
    };
    Some(match name {
        "build" => BuiltinRuleset {
            restrictions: vec![],
            // Tools of MCP servers and plugins do what their authors wrote:
            // asked about until a rule allows them.
            grants: vec![r(Ask, "mcp__*", None), r(Allow, "*", None)],
        },
        "plan" => {
            let mut grants = vec![r(Allow, "bash", Some(READ_ONLY_MARKER))];
            grants.extend(read_grants());
            for p in [
                "question",
                "plan_exit",
                "todo_create",
                "todo_update",
                "todo_delete",
            ] {
                grants.push(r(Allow, p, None));
            }
            grants.push(r(Deny, "*", None));
            BuiltinRuleset {
                restrictions: vec![
                    r(Deny, "write", None),
                    r(Deny, "edit", None),
                    r(Ask, "bash", Some(NOT_READ_ONLY_MARKER)),
                ],
                grants,
            }
        }
        "explore" => {
            let mut grants = vec![r(Allow, "bash", Some(READ_ONLY_MARKER))];
            grants.extend(read_grants());
            grants.push(r(Deny, "*", None));
            BuiltinRuleset {
                restrictions: vec![
                    r(Deny, "write", None),
                    r(Deny, "edit", None),
                    r(Deny, "bash", Some(NOT_READ_ONLY_MARKER)),
                ],
                grants,
            }
        }
        "general" => {
            let mut grants = read_grants();
            grants.push(r(Deny, "*", None));
            BuiltinRuleset {
                restrictions: vec![
                    r(Ask, "bash", None),
                    r(Ask, "edit", None),
                    r(Ask, "write", None),
                ],
                grants,
            }
        }
        "compaction" => BuiltinRuleset {
            restrictions: vec![r(Deny, "*", None)],
            grants: vec![],
        },
        _ => return None,
    })
}
