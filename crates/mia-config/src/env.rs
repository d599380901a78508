use crate::ConfigError;

/// Resolve environment references in a config value:
/// a whole value `$VAR`, or any number of `{env:VAR}` inside a string.
/// `key` names the config key for the error message.
pub fn resolve_env_refs(value: &str, key: &str) -> Result<String, ConfigError> {
    resolve_with(value, key, |var| std::env::var(var).ok())
}

pub(crate) fn resolve_with(
    value: &str,
    key: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let missing = |var: &str| ConfigError::MissingEnv {
        var: var.to_string(),
        key: key.to_string(),
    };
    if let Some(var) = value.strip_prefix('$')
        && !var.is_empty()
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return lookup(var).ok_or_else(|| missing(var));
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("{env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 5..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let var = after[..end].trim();
        out.push_str(&lookup(var).ok_or_else(|| missing(var))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "KEY" => Some("sk-123".into()),
            "HOST" => Some("example.test".into()),
            _ => None,
        }
    }

    #[test]
    fn forms() {
        assert_eq!(resolve_with("$KEY", "k", env).unwrap(), "sk-123");
        assert_eq!(resolve_with("{env:KEY}", "k", env).unwrap(), "sk-123");
        assert_eq!(
            resolve_with("https://{env:HOST}/v1?k={env: KEY }", "k", env).unwrap(),
            "https://example.test/v1?k=sk-123"
        );
        assert_eq!(
            resolve_with("plain $ text", "k", env).unwrap(),
            "plain $ text"
        );
        assert_eq!(resolve_with("{env:KEY", "k", env).unwrap(), "{env:KEY");
        let err = resolve_with("{env:NOPE}", "providers.openai.apiKey", env).unwrap_err();
        assert!(err.to_string().contains("NOPE"), "{err}");
        assert!(err.to_string().contains("providers.openai.apiKey"), "{err}");
        assert!(resolve_with("$NOPE", "k", env).is_err());
    }
}
