use std::time::Duration;

use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan, ToolSpec, parse_input, schema_of,
};

/// Bytes downloaded at most.
pub const MAX_DOWNLOAD: usize = 5 * 1024 * 1024;
/// Characters of converted text returned at most.
pub const MAX_FETCH_OUTPUT: usize = 100_000;
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    /// An http:// or https:// URL.
    pub url: String,
    /// `markdown` (default: HTML converted to Markdown), `text` (tags stripped) or `raw`.
    #[serde(default)]
    pub format: Option<String>,
}

pub struct FetchTool;

fn parse_url(raw: &str) -> Result<reqwest::Url, ToolError> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|e| ToolError::Invalid(format!("`{raw}` is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::Invalid(format!(
            "only http and https URLs can be fetched, not {}:",
            url.scheme()
        )));
    }
    Ok(url)
}

#[async_trait::async_trait]
impl Tool for FetchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "fetch".into(),
            description: "Fetch a web page with HTTP GET and return it as Markdown (or text/raw). Redirects are reported, not followed: fetch the new URL if it is the one you want.".into(),
            input_schema: schema_of::<FetchInput>(),
        }
    }

    fn plan(&self, input: &Value, _ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: FetchInput = parse_input("fetch", input)?;
        let url = parse_url(&input.url)?;
        Ok(ToolPlan {
            permission: "fetch".into(),
            targets: vec![Target::Url(url.to_string())],
            modifies: Some(Vec::new()),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: FetchInput = parse_input("fetch", &input)?;
        let url = parse_url(&input.url)?;
        let format = input.format.as_deref().unwrap_or("markdown");
        if !matches!(format, "markdown" | "text" | "raw") {
            return Err(ToolError::Invalid(format!(
                "format must be markdown, text or raw, not {format}"
            )));
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .user_agent(concat!("mia-code/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ToolError::Invalid(format!("cannot start an HTTP client: {e}")))?;
        let request = client.get(url.clone()).send();
        let response = tokio::select! {
            r = request => r.map_err(|e| ToolError::Invalid(format!("fetching {url} failed: {e}")))?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .map(|u| u.to_string())
                .unwrap_or_else(|| "(no location)".into());
            return Ok(ToolOutput {
                output: format!(
                    "{url} redirects ({status}) to {to}. Fetch that URL if it is the one you want."
                ),
                metadata: json!({"status": status.as_u16(), "redirect": to}),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let textual = content_type.is_empty()
            || content_type.starts_with("text/")
            || content_type.contains("json")
            || content_type.contains("xml")
            || content_type.contains("javascript");
        if !textual {
            return Err(ToolError::Invalid(format!(
                "{url} returned {content_type}, which is not text; binary content is not fetched"
            )));
        }
        let mut body: Vec<u8> = Vec::new();
        let mut truncated = false;
        let mut stream = response.bytes_stream();
        loop {
            let chunk = tokio::select! {
                c = stream.next() => c,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            let Some(chunk) = chunk else { break };
            let chunk =
                chunk.map_err(|e| ToolError::Invalid(format!("reading {url} failed: {e}")))?;
            let room = MAX_DOWNLOAD.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                truncated = true;
                break;
            }
        }
        let raw = String::from_utf8_lossy(&body).into_owned();
        let is_html = content_type.contains("html") || raw.trim_start().starts_with('<');
        let mut text = match (format, is_html) {
            ("raw", _) | (_, false) => raw,
            ("text", true) => strip_tags(&raw),
            _ => htmd::convert(&raw).unwrap_or_else(|_| strip_tags(&raw)),
        };
        if text.chars().count() > MAX_FETCH_OUTPUT {
            text = text.chars().take(MAX_FETCH_OUTPUT).collect();
            truncated = true;
        }
        if truncated {
            text.push_str("\n\n(content truncated)");
        }
        let header = if status.is_success() {
            String::new()
        } else {
            format!("HTTP {status} from {url}\n\n")
        };
        Ok(ToolOutput {
            output: format!("{header}{text}"),
            metadata: json!({"status": status.as_u16(), "content_type": content_type, "bytes": body.len(), "truncated": truncated}),
        })
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
