use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::paths::{display, hint_for_missing, resolve};
use crate::{
    MAX_PROPOSED_BYTES, Proposed, Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan,
    ToolSpec, parse_input, schema_of,
};

/// Lines returned when no limit is given.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Longer lines are cut (minified files would otherwise flood the context).
pub const MAX_LINE_CHARS: usize = 2000;
/// Output cap in bytes for one read.
pub const MAX_READ_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// File path, relative to the project root or absolute.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Number of lines to return (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct ReadTool;

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read".into(),
            description:
                "Read a text file. Returns numbered lines; use offset and limit for large files."
                    .into(),
            input_schema: schema_of::<ReadInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: ReadInput = parse_input("read", input)?;
        Ok(ToolPlan {
            permission: "read".into(),
            targets: vec![Target::Path(resolve(ctx, &input.path)?)],
            modifies: Some(Vec::new()),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: ReadInput = parse_input("read", &input)?;
        let path = resolve(ctx, &input.path)?;
        let ctx2 = ctx.clone();
        tokio::task::spawn_blocking(move || read_file(&ctx2, &path, input.offset, input.limit))
            .await
            .map_err(|e| ToolError::Invalid(format!("read task failed: {e}")))?
    }
}

fn read_file(
    ctx: &ToolContext,
    path: &std::path::Path,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let shown = display(ctx, path);
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound {
                path: shown,
                hint: hint_for_missing(ctx, path),
            });
        }
        Err(e) => return Err(ToolError::io("read", path, e)),
    };
    if meta.is_dir() {
        return Err(ToolError::Invalid(format!(
            "{shown} is a directory; use glob to list files in it"
        )));
    }
    let mut file = std::fs::File::open(path).map_err(|e| ToolError::io("read", path, e))?;
    let mut head = [0u8; 8192];
    let n = file
        .read(&mut head)
        .map_err(|e| ToolError::io("read", path, e))?;
    if head[..n].contains(&0) {
        return Err(ToolError::Invalid(format!(
            "{shown} looks like a binary file ({} bytes, NUL byte in the first 8 KB); it cannot be read as text",
            meta.len()
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| ToolError::io("read", path, e))?;
    let start = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_READ_LINES).max(1);
    let mut out = String::new();
    let mut total = 0usize;
    let mut last_shown = 0usize;
    let mut truncated_bytes = false;
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|e| ToolError::io("read", path, e))?;
        let number = i + 1;
        total = number;
        if number < start || number >= start + limit || truncated_bytes {
            continue;
        }
        let mut text = String::from_utf8_lossy(&line).into_owned();
        if text.ends_with('\r') {
            text.pop();
        }
        if text.chars().count() > MAX_LINE_CHARS {
            text = text.chars().take(MAX_LINE_CHARS).collect::<String>() + " … (line cut)";
        }
        if out.len() + text.len() > MAX_READ_BYTES {
            truncated_bytes = true;
            continue;
        }
        out.push_str(&format!("{number:>6}\t{text}\n"));
        last_shown = number;
    }
    if total == 0 {
        return Ok(ToolOutput {
            output: format!("{shown} is empty."),
            metadata: json!({"lines": 0}),
        });
    }
    if start > total {
        return Err(ToolError::Invalid(format!(
            "{shown} has {total} lines; offset {start} is past the end"
        )));
    }
    if last_shown < total {
        out.push_str(&format!(
            "\n(showing lines {start}-{last_shown} of {total}; read again with offset {} to continue)\n",
            last_shown + 1
        ));
    }
    Ok(ToolOutput {
        output: out,
        metadata: json!({"lines": total, "from": start, "to": last_shown}),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// File path, relative to the project root or absolute. Parent directories are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

pub struct WriteTool;

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write".into(),
            description: "Create a file or replace its whole content. Prefer edit for changes to an existing file.".into(),
            input_schema: schema_of::<WriteInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: WriteInput = parse_input("write", input)?;
        let path = resolve(ctx, &input.path)?;
        Ok(ToolPlan {
            permission: "write".into(),
            targets: vec![Target::Path(path.clone())],
            modifies: Some(vec![path]),
        })
    }

    fn proposed(&self, input: &Value, ctx: &ToolContext) -> Option<Proposed> {
        let input: WriteInput = parse_input("write", input).ok()?;
        let path = resolve(ctx, &input.path).ok()?;
        if input.content.len() as u64 > MAX_PROPOSED_BYTES {
            return None;
        }
        let before = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= MAX_PROPOSED_BYTES => {
                Some(std::fs::read(&path).ok()?)
            }
            Ok(_) => return None,
            Err(_) => None,
        };
        let after = keep_line_endings(before.as_deref(), &input.content).into_owned();
        Some(Proposed {
            path: display(ctx, &path),
            before,
            after: after.into_bytes(),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Stopped between the permission answer and now: touch nothing.
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let input: WriteInput = parse_input("write", &input)?;
        let path = resolve(ctx, &input.path)?;
        if path.is_dir() {
            return Err(ToolError::Invalid(format!(
                "{} is a directory; give a file path",
                display(ctx, &path)
            )));
        }
        let existed = path.exists();
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| ToolError::io("create directory", parent, e))?;
        }
        // An existing CRLF file stays CRLF when the model writes LF lines
        // (models write `\n`; a whole-file line-ending change is noise in
        // every diff and review).
        let existing = if existed {
            tokio::fs::read(&path).await.ok()
        } else {
            None
        };
        let content = keep_line_endings(existing.as_deref(), &input.content);
        match &ctx.editor {
            // Through the editor's buffer (it saves the file).
            Some(editor) => editor.0.write_text(&path, &content).await.map_err(|e| {
                ToolError::Invalid(format!(
                    "the editor did not write {}: {e}",
                    display(ctx, &path)
                ))
            })?,
            None => tokio::fs::write(&path, content.as_bytes())
                .await
                .map_err(|e| ToolError::io("write", &path, e))?,
        }
        let lines = content.lines().count();
        Ok(ToolOutput {
            output: format!(
                "{} {} ({} bytes, {lines} lines{}).",
                if existed { "Overwrote" } else { "Created" },
                display(ctx, &path),
                content.len(),
                if matches!(content, std::borrow::Cow::Owned(_)) {
                    ", CRLF line endings kept"
                } else {
                    ""
                }
            ),
            metadata: json!({"created": !existed, "bytes": content.len(), "lines": lines}),
        })
    }
}

/// `content` with CRLF line endings when the file it replaces uses them and
/// `content` has only bare LFs; otherwise `content` as given.
pub(crate) fn keep_line_endings<'a>(
    existing: Option<&[u8]>,
    content: &'a str,
) -> std::borrow::Cow<'a, str> {
    let crlf_file = existing.is_some_and(|b| b.windows(2).any(|w| w == b"\r\n"));
    if crlf_file && content.contains('\n') && !content.contains('\r') {
        std::borrow::Cow::Owned(content.replace('\n', "\r\n"))
    } else {
        std::borrow::Cow::Borrowed(content)
    }
}

#[cfg(test)]
mod line_ending_tests {
    use super::keep_line_endings;

    #[test]
    fn a_crlf_file_stays_crlf() {
        assert_eq!(
            keep_line_endings(Some(b"a\r\nb\r\n"), "x\ny\n"),
            "x\r\ny\r\n"
        );
        // LF files, new files and content that already has CR are left alone.
        assert_eq!(keep_line_endings(Some(b"a\nb\n"), "x\ny\n"), "x\ny\n");
        assert_eq!(keep_line_endings(None, "x\ny\n"), "x\ny\n");
        assert_eq!(keep_line_endings(Some(b"a\r\n"), "x\r\ny\n"), "x\r\ny\n");
        assert_eq!(keep_line_endings(Some(b"a\r\n"), "one line"), "one line");
    }
}
