//! A local npm registry for tests: Verdaccio (`tests/registry`), started on
//! a free port, with a user to publish fixture packages as. The public
//! registry is never used.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The repository's root (this crate lives in `crates/mia-testkit`).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Verdaccio's start script, or `None` (skipped outside CI) when the
/// registry's packages are not installed.
pub fn verdaccio_bin() -> Option<PathBuf> {
    let p = repo().join("tests/registry/node_modules/verdaccio/bin/verdaccio");
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "Verdaccio is not installed: scripts/setup --test runs npm ci in tests/registry"
    );
    eprintln!("skipped: Verdaccio is not installed (npm ci in tests/registry)");
    None
}

/// A running Verdaccio.
pub struct Registry {
    child: Option<std::process::Child>,
    pub host: IpAddr,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub token: String,
}

fn free_port(host: IpAddr) -> u16 {
    std::net::TcpListener::bind((host, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Registry {
    pub fn url(&self) -> String {
        format!("http://{}:{}/", self.host, self.port)
    }

    fn spawn(dir: &Path, host: IpAddr, port: u16) -> std::process::Child {
        let bin = verdaccio_bin().unwrap();
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "storage: {storage}\nauth:\n  htpasswd:\n    file: {htpasswd}\n    max_users: 100\nuplinks: {{}}\npackages:\n  '**':\n    access: $all\n    publish: $authenticated\nlogs: {{ type: stdout, format: pretty, level: warn }}\n",
                storage = dir.join("storage").display(),
                htpasswd = dir.join("htpasswd").display()
            ),
        )
        .unwrap();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("verdaccio.log"))
            .unwrap();
        let child = std::process::Command::new("node")
            .arg(&bin)
            .args(["--config"])
            .arg(&config)
            .args(["--listen", &format!("{host}:{port}")])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect((host, port)).is_err() {
            assert!(Instant::now() < deadline, "Verdaccio did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        child
    }

    /// Start on 127.0.0.1 (`None`: Verdaccio is not installed).
    pub fn start() -> Option<Self> {
        Self::start_on(IpAddr::from([127, 0, 0, 1]))
    }

    /// Start listening on `host`.
    pub fn start_on(host: IpAddr) -> Option<Self> {
        verdaccio_bin()?;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port(host);
        let child = Self::spawn(dir.path(), host, port);
        let mut r = Self {
            child: Some(child),
            host,
            port,
            dir,
            token: String::new(),
        };
        // A user, for publishing (npm adduser's API).
        let out = std::process::Command::new("curl")
            .args([
                "-sf",
                "-X",
                "PUT",
                "-H",
                "content-type: application/json",
                "-d",
            ])
            .arg(json!({"name": "tester", "password": "tester-pass-1"}).to_string())
            .arg(format!("{}-/user/org.couchdb.user:tester", r.url()))
            .output()
            .unwrap();
        let v: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("adduser: {out:?}"));
        r.token = v["token"].as_str().unwrap().to_string();
        std::fs::write(
            r.dir.path().join("npmrc"),
            format!(
                "registry={url}\n//{host}:{port}/:_authToken={token}\nfetch-retries=0\nupdate-notifier=false\n",
                url = r.url(),
                host = r.host,
                port = r.port,
                token = r.token
            ),
        )
        .unwrap();
        Some(r)
    }

    /// An npmrc naming this registry, with the publishing user's token.
    pub fn npmrc(&self) -> PathBuf {
        self.dir.path().join("npmrc")
    }

    /// `npm publish` the package in `pkg`.
    pub fn publish(&self, pkg: &Path) {
        let out = std::process::Command::new("npm")
            .args(["publish", "--no-git-checks"])
            .current_dir(pkg)
            .env("npm_config_userconfig", self.npmrc())
            .env(
                "npm_config_cache",
                self.dir.path().join("npm-cache-publish"),
            )
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "publish {}: {}",
            pkg.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.child = Some(Self::spawn(self.dir.path(), self.host, self.port));
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}
