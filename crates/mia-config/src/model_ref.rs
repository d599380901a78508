//! Model references in config (spec 016): `"provider/model"` or
//! `{"providerID": "...", "modelID": "..."}`, checked when the file loads
//! (a bad reference is an error naming the key, not a failed turn later)
//! and kept as the `provider/model` string.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

/// The two spellings, for the JSON Schema.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(crate) enum ModelRefSchema {
    /// `provider/model`, e.g. `anthropic/claude-sonnet-4-5`.
    Text(String),
    Object {
        #[serde(rename = "providerID")]
        provider_id: String,
        #[serde(rename = "modelID")]
        model_id: String,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Text(String),
    Object {
        #[serde(rename = "providerID")]
        provider_id: String,
        #[serde(rename = "modelID")]
        model_id: String,
    },
}

fn check(provider: &str, model: &str, raw: &str) -> Result<String, String> {
    let ok = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
    if ok(provider) && ok(model) && !provider.contains('/') {
        Ok(format!("{provider}/{model}"))
    } else {
        Err(format!(
            "`{raw}` is not a model reference; use provider/model (e.g. anthropic/claude-sonnet-4-5) or {{\"providerID\": ..., \"modelID\": ...}}"
        ))
    }
}

/// Parse one model reference (the string form).
pub fn parse_model_ref(text: &str) -> Result<String, String> {
    match text.split_once('/') {
        Some((p, m)) => check(p, m, text),
        None => check("", text, text),
    }
}

/// `deserialize_with` for `Option<String>` model fields.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let raw = Option::<Raw>::deserialize(d)?;
    raw.map(|r| match r {
        Raw::Text(t) => parse_model_ref(&t),
        Raw::Object {
            provider_id,
            model_id,
        } => check(
            &provider_id,
            &model_id,
            &format!("{provider_id}/{model_id}"),
        ),
    })
    .transpose()
    .map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::parse_model_ref;

    #[test]
    fn references() {
        assert_eq!(parse_model_ref("openai/gpt-5").unwrap(), "openai/gpt-5");
        assert_eq!(
            parse_model_ref("openrouter/meta/llama-3").unwrap(),
            "openrouter/meta/llama-3"
        );
        assert!(parse_model_ref("gpt-5").is_err());
        assert!(parse_model_ref("openai/").is_err());
        assert!(parse_model_ref("open ai/gpt").is_err());
    }
}
