//! Building clients from the `providers` section of mia-config.
//!
//! mia-config already refuses `apiKey`, `baseURL` and `headers` in project
//! config, so everything read here comes from global config or defaults.

use std::collections::BTreeMap;

use crate::credentials::{CredentialError, CredentialSource, Credentials};
use crate::{ClientOptions, ProviderConfig, ProviderError, ProviderKind, default_base_url};

/// Why a provider could not be set up from config.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("provider {0} is disabled in the config (`providers.{0}.disabled`)")]
    Disabled(String),
    #[error(
        "provider {provider}: unknown `api` value {api:?}; use \"anthropic\", \"openai\" or \"google\""
    )]
    UnknownApi { provider: String, api: String },
    #[error(transparent)]
    Config(#[from] mia_config::ConfigError),
    #[error(transparent)]
    Credentials(#[from] CredentialError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// A provider ready to build, and where its key came from.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub config: ProviderConfig,
    /// `None` when no key was found (fine for local servers; a hosted API
    /// will answer with an auth error that says how to add one).
    pub key_source: Option<CredentialSource>,
}

/// Turn the `providers.<id>` entry (if any) into a [`ProviderConfig`]:
/// wire format from `api` (or the id), base URL and headers with
/// `{env:VAR}`/`$VAR` expanded, and the API key from the credential chain.
pub fn resolve_provider(
    id: &str,
    entry: Option<&mia_config::ProviderConfig>,
    credentials: &Credentials,
    options: ClientOptions,
) -> Result<ResolvedProvider, SetupError> {
    let empty = mia_config::ProviderConfig::default();
    let entry = entry.unwrap_or(&empty);
    if entry.disabled == Some(true) {
        return Err(SetupError::Disabled(id.to_string()));
    }
    let kind = match entry.api.as_deref() {
        Some(api) => ProviderKind::parse(api).ok_or_else(|| SetupError::UnknownApi {
            provider: id.to_string(),
            api: api.to_string(),
        })?,
        None => ProviderKind::for_provider_id(id),
    };
    let base_url = entry
        .base_url
        .as_deref()
        .map(|u| mia_config::resolve_env_refs(u, &format!("providers.{id}.baseURL")))
        .transpose()?;
    if base_url.is_none() && default_base_url(id).is_none() {
        return Err(ProviderError::Config {
            provider: id.to_string(),
            message: "no base URL is known for this provider; set `baseURL` in its `providers` entry of the global config".into(),
        }
        .into());
    }
    let mut extra_headers = Vec::new();
    for (name, value) in entry.headers.iter().flat_map(BTreeMap::iter) {
        let value = mia_config::resolve_env_refs(value, &format!("providers.{id}.headers.{name}"))?;
        extra_headers.push((name.to_ascii_lowercase(), value));
    }
    let key = credentials.resolve(id, entry.api_key.as_deref())?;
    let mut config = ProviderConfig::new(id)
        .with_kind(kind)
        .with_options(options);
    config.base_url = base_url;
    config.extra_headers = extra_headers;
    let key_source = key.as_ref().map(|k| k.source.clone());
    config.api_key = key.map(|k| k.key);
    Ok(ResolvedProvider { config, key_source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::FileStore;
    use std::sync::Arc;

    fn creds(dir: &std::path::Path) -> Credentials {
        Credentials::new(
            Arc::new(|k: &str| (k == "OPENROUTER_API_KEY").then(|| "or-key".to_string())),
            None,
            FileStore::in_home(dir),
        )
    }

    #[test]
    fn custom_provider_from_config() {
        let dir = tempfile::tempdir().unwrap();
        let entry: mia_config::ProviderConfig = serde_json::from_value(serde_json::json!({
            "baseURL": "http://localhost:1234/v1",
            "headers": {"X-Title": "mia"}
        }))
        .unwrap();
        let r = resolve_provider(
            "lmstudio",
            Some(&entry),
            &creds(dir.path()),
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(r.config.kind, ProviderKind::OpenAi);
        assert_eq!(
            r.config.base_url.as_deref(),
            Some("http://localhost:1234/v1")
        );
        assert_eq!(
            r.config.extra_headers,
            vec![("x-title".to_string(), "mia".to_string())]
        );
        assert!(r.config.api_key.is_none());
        assert!(r.key_source.is_none());

        let r = resolve_provider(
            "openrouter",
            None,
            &creds(dir.path()),
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(r.config.api_key.as_deref(), Some("or-key"));
        assert!(matches!(r.key_source, Some(CredentialSource::Env(_))));
        assert!(crate::build_provider(r.config).is_ok());
    }

    #[test]
    fn api_field_disabled_and_unknown_ids() {
        let dir = tempfile::tempdir().unwrap();
        let entry: mia_config::ProviderConfig = serde_json::from_value(serde_json::json!({
            "api": "anthropic", "baseURL": "https://proxy.example/anthropic"
        }))
        .unwrap();
        let r = resolve_provider(
            "corp-claude",
            Some(&entry),
            &creds(dir.path()),
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(r.config.kind, ProviderKind::Anthropic);

        let off: mia_config::ProviderConfig =
            serde_json::from_value(serde_json::json!({"disabled": true})).unwrap();
        assert!(matches!(
            resolve_provider(
                "openai",
                Some(&off),
                &creds(dir.path()),
                ClientOptions::default()
            ),
            Err(SetupError::Disabled(_))
        ));
        let bad: mia_config::ProviderConfig =
            serde_json::from_value(serde_json::json!({"api": "cohere"})).unwrap();
        assert!(matches!(
            resolve_provider(
                "x",
                Some(&bad),
                &creds(dir.path()),
                ClientOptions::default()
            ),
            Err(SetupError::UnknownApi { .. })
        ));
        let err = resolve_provider(
            "mystery",
            None,
            &creds(dir.path()),
            ClientOptions::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("baseURL"), "{err}");
    }
}
