use crate::ConfigError;

/// Resolve environment references in a config value: a whole value `$VAR`,
/// and any number of `{env:VAR}` or `${VAR}` inside a string. `key` names the
/// config key for error messages. An unset or empty variable is an error.
pub fn resolve_env_refs(value: &str, key: &str) -> Result<String, ConfigError> {
    resolve_env_refs_with(value, key, &|var| std::env::var(var).ok())
}

/// [`resolve_env_refs`] with an injectable lookup (tests, other sources).
pub fn resolve_env_refs_with(
    value: &str,
    key: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let bad = || ConfigError::BadEnvRef {
        key: key.to_string(),
        value: value.to_string(),
    };
    let get = |var: &str| -> Result<String, ConfigError> {
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        lookup(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ConfigError::MissingEnv {
                var: var.to_string(),
                key: key.to_string(),
            })
    };
    if let Some(var) = value.strip_prefix('$')
        && !var.starts_with('{')
    {
        return get(var);
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    loop {
        let next = [rest.find("{env:"), rest.find("${")]
            .into_iter()
            .flatten()
            .min();
        let Some(start) = next else {
            out.push_str(rest);
            return Ok(out);
        };
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let skip = if after.starts_with("{env:") { 5 } else { 2 };
        let end = after.find('}').ok_or_else(bad)?;
        out.push_str(&get(after.get(skip..end).ok_or_else(bad)?.trim())?);
        rest = &after[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "KEY" => Some("sk-123".into()),
            "HOST" => Some("example.test".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn forms() {
        let r = |v: &str| resolve_env_refs_with(v, "k", &env);
        assert_eq!(r("$KEY").unwrap(), "sk-123");
        assert_eq!(r("{env:KEY}").unwrap(), "sk-123");
        assert_eq!(r("${KEY}").unwrap(), "sk-123");
        assert_eq!(
            r("https://{env:HOST}/v1?k={env: KEY }").unwrap(),
            "https://example.test/v1?k=sk-123"
        );
        assert_eq!(r("plain text").unwrap(), "plain text");
        let err = resolve_env_refs_with("{env:NOPE}", "providers.openai.apiKey", &env).unwrap_err();
        assert!(err.to_string().contains("NOPE"), "{err}");
        assert!(err.to_string().contains("providers.openai.apiKey"), "{err}");
        assert!(matches!(r("$NOPE"), Err(ConfigError::MissingEnv { .. })));
        assert!(matches!(r("$EMPTY"), Err(ConfigError::MissingEnv { .. })));
        assert!(matches!(r("{env:KEY"), Err(ConfigError::BadEnvRef { .. })));
        assert!(matches!(r("{env:a-b}"), Err(ConfigError::BadEnvRef { .. })));
    }
}
