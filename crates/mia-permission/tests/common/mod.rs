//! Shared fixture: a real project directory with real files and symlinks,
//! a sibling "evil" directory and a fake home.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use mia_permission::{
    Answerer, Checker, Decision, PathContext, PermissionAction, PermissionRule, Policy,
    PolicyInput, Request, RuleList,
};

pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub evil: PathBuf,
    pub home: PathBuf,
    /// The fixture's symlinks exist. Not where the system cannot make them:
    /// Windows without Developer Mode, and Wine 8, whose
    /// `CreateSymbolicLinkW` reports success and creates nothing.
    pub symlinks: bool,
}

pub fn write(p: &Path, s: &str) {
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(p, s).unwrap();
}

impl Fixture {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        // `dunce`: on Windows the plain form (`C:\...`), as a person spells it, not `\\?\C:\...`.
        let base = dunce::canonicalize(tmp.path()).unwrap();
        let root = base.join("proj");
        let evil = base.join("proj_evil");
        let home = base.join("home");
        for f in [
            ".env",
            "config/prod.env",
            "src/main.rs",
            "src/a.ts",
            "Cargo.lock",
            "secrets/key.pem",
            ".git/config",
            ".git/hooks/pre-commit.sample",
            "mia-code.json",
            ".mia-code/plugin-lock.json",
            "README.md",
            "notes.md",
            "caf\u{e9}.txt",
        ] {
            write(&root.join(f), "x");
        }
        write(&evil.join("secret.txt"), "s");
        write(&home.join(".bashrc"), "");
        write(&home.join(".ssh/id_rsa"), "k");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(root.join(".env"), root.join("link_env")).unwrap();
            symlink(&evil, root.join("linkdir")).unwrap();
            symlink(root.join(".git"), root.join("src/link_to_git")).unwrap();
            symlink("../secrets", root.join("src/sec")).unwrap();
        }
        #[cfg(windows)]
        {
            use std::os::windows::fs::{symlink_dir, symlink_file};
            // Errors are read below: no link, no symlink cases.
            let _ = symlink_file(root.join(".env"), root.join("link_env"));
            let _ = symlink_dir(&evil, root.join("linkdir"));
            let _ = symlink_dir(root.join(".git"), root.join("src/link_to_git"));
            let _ = symlink_dir("..\\secrets", root.join("src/sec"));
        }
        let symlinks = fs::symlink_metadata(root.join("link_env")).is_ok();
        if !symlinks {
            eprintln!("this system made no symlinks: the symlink cases are not run here");
        }
        Self {
            _tmp: tmp,
            root,
            evil,
            home,
            symlinks,
        }
    }

    pub fn ctx(&self) -> PathContext {
        PathContext::new(&self.root, Some(self.home.clone())).unwrap()
    }

    /// Replace `{ROOT}`, `{EVIL}`, `{HOME}` placeholders.
    /// The placeholders as a person writes them in a command: with `/` on
    /// Windows too (bash reads `\\` as an escape; every Windows API takes `/`).
    pub fn expand(&self, s: &str) -> String {
        let slash = |p: &Path| p.to_string_lossy().replace('\\', "/");
        s.replace("{ROOT}", &slash(&self.root))
            .replace("{EVIL}", &slash(&self.evil))
            .replace("{HOME}", &slash(&self.home))
    }
}

/// Parse `"deny write *.lock"` / `"allow bash git status *"` / `"ask fetch"`.
pub fn rule(s: &str) -> PermissionRule {
    let mut it = s.splitn(3, ' ');
    let action = match it.next().unwrap() {
        "allow" => PermissionAction::Allow,
        "ask" => PermissionAction::Ask,
        "deny" => PermissionAction::Deny,
        a => panic!("bad action {a}"),
    };
    let permission = it.next().unwrap().to_string();
    let pattern = it.next().map(str::to_string);
    PermissionRule {
        permission,
        pattern,
        action,
    }
}

pub fn rules(v: &[&str]) -> Vec<PermissionRule> {
    v.iter().map(|s| rule(s)).collect()
}

pub const GLOBAL_SRC: &str = "/home/user/.config/mia-code/config.json";
pub const PROJECT_SRC: &str = ".mia-code.json";

#[derive(Default, Clone)]
pub struct Setup<'a> {
    pub agent: &'a str,
    pub global: &'a [&'a str],
    pub project: &'a [&'a str],
    pub agent_rules: &'a [&'a str],
    pub session: &'a [&'a str],
    pub untrusted: bool,
    pub headless: bool,
    pub parent: Option<&'a str>,
    pub case_insensitive: bool,
    /// Shell commands run in the OS sandbox.
    pub sandboxed: bool,
    /// ... in the weaker fallback sandbox (Landlock).
    pub weak_sandbox: bool,
    /// mia-code's private files (reads ask), besides the built-in ones.
    pub private: &'a [&'a str],
    /// The shell's language (PowerShell on Windows without bash).
    pub dialect: mia_permission::ShellDialect,
}

impl Setup<'_> {
    pub fn input(&self, fx: &Fixture, agent: &str) -> PolicyInput {
        PolicyInput {
            agent: agent.to_string(),
            global: vec![RuleList::new(GLOBAL_SRC, rules(self.global))],
            project: vec![RuleList::new(PROJECT_SRC, rules(self.project))],
            agent_global: vec![],
            agent_project: vec![RuleList::new(
                format!("{PROJECT_SRC} (agent.{agent})"),
                rules(self.agent_rules),
            )],
            session: rules(self.session),
            project_approvals: vec![],
            workspace_trusted: !self.untrusted,
            home: Some(fx.home.to_string_lossy().to_string()),
            extra_protected: vec![fx.root.join("state").to_string_lossy().to_string() + "/**"],
            secrets: vec![],
            private: self.private.iter().map(|p| fx.expand(p)).collect(),
        }
    }

    pub fn check(&self, fx: &Fixture, req: &Request) -> Decision {
        let agent = if self.agent.is_empty() {
            "build"
        } else {
            self.agent
        };
        let policy = Policy::compile(&self.input(fx, agent));
        let parent = self.parent.map(|p| {
            let mut s = self.clone();
            s.agent_rules = &[];
            Policy::compile(&s.input(fx, p))
        });
        let ctx = fx.ctx().with_case_insensitive(self.case_insensitive);
        let mut c = Checker::new(&policy, &ctx);
        if let Some(p) = &parent {
            c = c.with_parent(p);
        }
        if self.headless {
            c = c.with_answerer(Answerer::Headless);
        }
        c = c
            .with_sandboxed_shell(self.sandboxed)
            .with_weak_sandbox(self.weak_sandbox)
            .with_shell_dialect(self.dialect);
        c.check(req)
    }
}

/// `"read .env"`, `"bash: git status && ls"`, `"fetch https://x"`, `"plan_exit"`.
pub fn request(fx: &Fixture, s: &str) -> Request {
    let s = fx.expand(s);
    if let Some(cmd) = s.strip_prefix("bash: ") {
        return Request::command(cmd);
    }
    match s.split_once(' ') {
        Some((p, t)) if matches!(p, "fetch" | "web_fetch") => Request::url(p, t),
        Some((p, t)) => Request::path(p, t),
        None => Request::bare(&s),
    }
}
