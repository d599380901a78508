//! The environment a sandboxed command gets: the person's own, minus
//! secrets.
//!
//! Dropped: the provider keys mia-code knows and every variable whose name
//! contains `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD` or `CREDENTIAL`
//! (any case), unless `sandbox.env.keep` names it; `sandbox.env.set` adds
//! variables (and wins). Nothing else is changed.

use std::ffi::{OsStr, OsString};

/// Provider keys mia-code reads (most also match a secret word; listed so
/// the rule does not depend on their spelling).
pub const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "MIA_CODE_SHARE_TOKEN",
];

/// Words that make a variable's name a secret's.
pub const SECRET_WORDS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// `sandbox.env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvRule {
    /// Names kept although they look like secrets (`sandbox.env.keep`). A
    /// trailing `*` keeps every name with that prefix.
    pub keep: Vec<String>,
    /// Variables added (`sandbox.env.set`).
    pub set: Vec<(String, String)>,
}

/// Names that contain a secret word but hold none (git's config through
/// the environment, the tokenizers library's switch, zsh's key timeout).
const NOT_SECRETS: &[&str] = &["GIT_CONFIG_KEY_", "TOKENIZERS_PARALLELISM", "KEYTIMEOUT"];

/// Does this name carry a secret by the rule above?
pub fn is_secret_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    if NOT_SECRETS.iter().any(|n| upper.starts_with(n)) {
        return false;
    }
    PROVIDER_KEYS.contains(&upper.as_str()) || SECRET_WORDS.iter().any(|w| upper.contains(w))
}

impl EnvRule {
    fn keeps(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        self.keep.iter().any(|k| match k.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *k == name,
        })
    }

    /// The environment for a command, from `vars` (the process's own).
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> = vars
            .into_iter()
            .filter(|(k, _)| !is_secret_name(k) || self.keeps(k))
            .filter(|(k, _)| !self.set.iter().any(|(s, _)| OsStr::new(s) == k))
            .collect();
        out.extend(
            self.set
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        out
    }

    /// What `doctor` shows.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "your environment minus secrets: the provider keys ({}) and names containing {} (any case)",
            PROVIDER_KEYS.join(", "),
            SECRET_WORDS.join(", ")
        );
        if !self.keep.is_empty() {
            s.push_str(&format!(
                "; kept by sandbox.env.keep: {}",
                self.keep.join(", ")
            ));
        }
        if !self.set.is_empty() {
            let names: Vec<&str> = self.set.iter().map(|(k, _)| k.as_str()).collect();
            s.push_str(&format!("; set by sandbox.env.set: {}", names.join(", ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(v: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        v.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn secrets_are_dropped_and_the_rest_kept() {
        let rule = EnvRule::default();
        let got = rule.apply(vars(&[
            ("PATH", "/bin"),
            ("ANTHROPIC_API_KEY", "sk"),
            ("GITHUB_TOKEN", "gh"),
            ("aws_secret_access_key", "x"),
            ("DB_PASSWORD", "p"),
            ("MY_CREDENTIALS", "c"),
            ("JAVA_HOME", "/j"),
            ("VIRTUAL_ENV", "/v"),
        ]));
        let names: Vec<String> = got
            .iter()
            .map(|(k, _)| k.to_string_lossy().into())
            .collect();
        assert_eq!(names, vec!["PATH", "JAVA_HOME", "VIRTUAL_ENV"]);
    }

    #[test]
    fn keep_and_set_are_honoured() {
        let rule = EnvRule {
            keep: vec!["NPM_TOKEN".into(), "CI_JOB_*".into()],
            set: vec![("FOO".into(), "bar".into()), ("PATH".into(), "/x".into())],
        };
        let got = rule.apply(vars(&[
            ("PATH", "/bin"),
            ("NPM_TOKEN", "n"),
            ("CI_JOB_TOKEN", "c"),
            ("GH_TOKEN", "g"),
        ]));
        let mut got: Vec<(String, String)> = got
            .into_iter()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("CI_JOB_TOKEN".into(), "c".into()),
                ("FOO".into(), "bar".into()),
                ("NPM_TOKEN".into(), "n".into()),
                ("PATH".into(), "/x".into()),
            ]
        );
        assert!(rule.describe().contains("NPM_TOKEN"));
    }
}
