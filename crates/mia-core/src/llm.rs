//! Providers for turns: resolved from the config's `providers` entry and
//! the credential chain (off the async workers: it may ask the OS
//! keychain), and pooled, so turns of every session reuse one client —
//! and its HTTP connections — per provider configuration. Plus the one-shot
//! completion (no tools, no streaming to a UI) that compaction uses, with
//! the same clients, retries and cancellation as a turn's steps.

use std::sync::Arc;

use mia_config::Config;
use mia_providers::Provider;

use crate::CoreError;
use crate::runtime::{Runtime, lock};

/// At most this many provider clients are kept (distinct configurations).
const POOL_MAX: usize = 16;

impl Runtime {
    /// The client for `provider_id` under `config`.
    pub(crate) async fn provider(
        &self,
        config: &Config,
        provider_id: &str,
    ) -> Result<Arc<dyn Provider>, CoreError> {
        let entry = config
            .merged
            .providers
            .as_ref()
            .and_then(|p| p.get(provider_id))
            .cloned();
        let opts = &self.inner.opts;
        let resolved = {
            let provider_id = provider_id.to_string();
            let credentials = opts.credentials.clone();
            let client = opts.client.clone();
            tokio::task::spawn_blocking(move || {
                mia_providers::settings::resolve_provider(
                    &provider_id,
                    entry.as_ref(),
                    &credentials,
                    client,
                )
            })
            .await
            .map_err(|e| CoreError::Internal(format!("credential lookup failed: {e}")))?
            .map_err(|e| CoreError::Invalid(e.to_string()))?
        };
        // The whole resolved configuration (endpoint, key, headers, options)
        // is the pool key: a changed key or URL gets a new client.
        let key = format!("{:?}", resolved.config);
        if let Some(p) = lock(&self.inner.providers).get(&key) {
            return Ok(p.clone());
        }
        let provider = mia_providers::build_provider(resolved.config)
            .map_err(|e| CoreError::Invalid(e.to_string()))?;
        let mut pool = lock(&self.inner.providers);
        if pool.len() >= POOL_MAX {
            pool.clear();
        }
        Ok(pool.entry(key).or_insert(provider).clone())
    }
}

/// Run one request to its end and return what it produced (text and
/// usage: compaction; later titles and agent generation). Cancelling
/// `cancel` stops it at once.
pub(crate) async fn complete_once(
    provider: &Arc<dyn Provider>,
    request: mia_providers::ChatRequest,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<mia_providers::Completion, mia_providers::ProviderError> {
    use futures_util::StreamExt;
    let mut stream = provider.stream(request, cancel.clone());
    let mut completion = mia_providers::Completion::default();
    while let Some(item) = stream.next().await {
        completion.apply(&item?);
    }
    Ok(completion)
}
