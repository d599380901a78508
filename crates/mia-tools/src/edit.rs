use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::paths::{display, hint_for_missing, resolve};
use crate::{
    MAX_PROPOSED_BYTES, Proposed, Target, Tool, ToolContext, ToolError, ToolOutput, ToolPlan,
    ToolSpec, parse_input, schema_of,
};

/// One exact-string replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditOp {
    /// Text to find, exactly as in the file (including indentation). Must match once unless replace_all.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of requiring a unique match.
    #[serde(default)]
    pub replace_all: bool,
}

/// Either one replacement (`old_string`/`new_string`) or several (`edits`),
/// applied in order; the file is written only if all of them apply.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// File path, relative to the project root or absolute.
    pub path: String,
    #[serde(default)]
    pub old_string: Option<String>,
    #[serde(default)]
    pub new_string: Option<String>,
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// Several replacements, applied in order.
    #[serde(default)]
    pub edits: Option<Vec<EditOp>>,
}

impl EditInput {
    fn ops(self) -> Result<(String, Vec<EditOp>), ToolError> {
        let single = match (self.old_string, self.new_string) {
            (Some(old_string), Some(new_string)) => Some(EditOp {
                old_string,
                new_string,
                replace_all: self.replace_all.unwrap_or(false),
            }),
            (None, None) => None,
            _ => {
                return Err(ToolError::Invalid(
                    "give both old_string and new_string (or an edits list)".into(),
                ));
            }
        };
        match (single, self.edits) {
            (Some(op), None) => Ok((self.path, vec![op])),
            (None, Some(ops)) if !ops.is_empty() => Ok((self.path, ops)),
            (None, Some(_)) => Err(ToolError::Invalid(
                "edits is empty; nothing to change".into(),
            )),
            (None, None) => Err(ToolError::Invalid(
                "give old_string and new_string, or an edits list".into(),
            )),
            (Some(_), Some(_)) => Err(ToolError::Invalid(
                "give either old_string/new_string or edits, not both".into(),
            )),
        }
    }
}

pub struct EditTool;

#[async_trait::async_trait]
impl Tool for EditTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "edit".into(),
            description: "Replace exact text in a file. old_string must match exactly once (or set replace_all). Several edits can be given at once; they all apply or none does.".into(),
            input_schema: schema_of::<EditInput>(),
        }
    }

    fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolPlan, ToolError> {
        let input: EditInput = parse_input("edit", input)?;
        let (path, _) = input.ops()?;
        let path = resolve(ctx, &path)?;
        Ok(ToolPlan {
            permission: "edit".into(),
            targets: vec![Target::Path(path.clone())],
            modifies: Some(vec![path]),
        })
    }

    fn proposed(&self, input: &Value, ctx: &ToolContext) -> Option<Proposed> {
        let input: EditInput = parse_input("edit", input).ok()?;
        let (raw, ops) = input.ops().ok()?;
        let path = resolve(ctx, &raw).ok()?;
        if std::fs::metadata(&path).ok()?.len() > MAX_PROPOSED_BYTES {
            return None;
        }
        let shown = display(ctx, &path);
        let before = std::fs::read(&path).ok()?;
        let text = std::str::from_utf8(&before).ok()?;
        let (after, _, _) = apply_edits(&shown, text, &ops).ok()?;
        Some(Proposed {
            path: shown,
            before: Some(before),
            after: after.into_bytes(),
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Stopped between the permission answer and now: touch nothing.
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let input: EditInput = parse_input("edit", &input)?;
        let (raw_path, ops) = input.ops()?;
        let path = resolve(ctx, &raw_path)?;
        let shown = display(ctx, &path);
        // An editor's buffer (unsaved changes included) when there is one.
        let from_editor = match &ctx.editor {
            Some(editor) if path.exists() => editor.0.read_text(&path).await.ok(),
            _ => None,
        };
        let read = match from_editor {
            Some(text) => Ok(text.into_bytes()),
            None => tokio::fs::read(&path).await,
        };
        let content = match read {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                ToolError::Invalid(format!("{shown} is not UTF-8 text; edit cannot change it"))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::NotFound {
                    hint: hint_for_missing(ctx, &path),
                    path: shown,
                });
            }
            Err(e) => return Err(ToolError::io("read", &path, e)),
        };
        let (updated, added, removed) = apply_edits(&shown, &content, &ops)?;
        match &ctx.editor {
            Some(editor) => editor.0.write_text(&path, &updated).await.map_err(|e| {
                ToolError::Invalid(format!("the editor did not write {shown}: {e}"))
            })?,
            None => tokio::fs::write(&path, updated.as_bytes())
                .await
                .map_err(|e| ToolError::io("write", &path, e))?,
        }
        Ok(ToolOutput {
            output: format!(
                "Edited {shown}: {} applied (+{added} −{removed} lines).",
                if ops.len() == 1 {
                    "1 edit".to_string()
                } else {
                    format!("{} edits", ops.len())
                }
            ),
            metadata: json!({"edits": ops.len(), "added": added, "removed": removed}),
        })
    }
}

/// Apply `ops` in order to `content`. All-or-nothing; errors name the edit.
pub fn apply_edits(
    shown: &str,
    content: &str,
    ops: &[EditOp],
) -> Result<(String, usize, usize), ToolError> {
    let crlf = content.contains("\r\n");
    let mut text = content.to_string();
    let (mut added, mut removed) = (0, 0);
    for (i, op) in ops.iter().enumerate() {
        let which = if ops.len() > 1 {
            format!(" (edit {} of {})", i + 1, ops.len())
        } else {
            String::new()
        };
        if op.old_string.is_empty() {
            return Err(ToolError::Invalid(format!(
                "old_string is empty{which}; to create or replace a whole file use write"
            )));
        }
        if op.old_string == op.new_string {
            return Err(ToolError::Invalid(format!(
                "old_string and new_string are identical{which}; nothing would change"
            )));
        }
        let (old, new) = if crlf && !op.old_string.contains("\r\n") && op.old_string.contains('\n')
        {
            (
                op.old_string.replace('\n', "\r\n"),
                op.new_string.replace('\n', "\r\n"),
            )
        } else {
            (op.old_string.clone(), op.new_string.clone())
        };
        let starts: Vec<usize> = text.match_indices(&old).map(|(at, _)| at).collect();
        match starts.len() {
            0 => return Err(not_found(shown, &text, &op.old_string, &which)),
            1 => {}
            n if !op.replace_all => {
                let lines: Vec<String> = starts
                    .iter()
                    .take(10)
                    .map(|at| (text[..*at].matches('\n').count() + 1).to_string())
                    .collect();
                return Err(ToolError::Invalid(format!(
                    "old_string matches {n} places in {shown}{which} (lines {}); include more surrounding lines to make it unique, or set replace_all to change every one",
                    lines.join(", ")
                )));
            }
            _ => {}
        }
        let count = starts.len();
        removed += count * old.lines().count().max(1);
        added += count * new.lines().count();
        text = text.replace(&old, &new);
    }
    Ok((text, added, removed))
}

fn not_found(shown: &str, text: &str, old: &str, which: &str) -> ToolError {
    // Help the model: is there a match when leading/trailing whitespace on each line is ignored?
    let wanted: Vec<&str> = old
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let mut near = None;
    if let Some(first) = wanted.first() {
        for (i, line) in lines.iter().enumerate() {
            if line.trim() == *first {
                let window: Vec<&str> = lines[i..]
                    .iter()
                    .map(|l| l.trim())
                    .filter(|l| !l.is_empty())
                    .take(wanted.len())
                    .collect();
                if window == wanted {
                    near = Some(i + 1);
                    break;
                }
            }
        }
    }
    match near {
        Some(line) => ToolError::Invalid(format!(
            "old_string was not found in {shown}{which}, but the same text with different indentation or spacing starts at line {line}; read the file and copy the exact text"
        )),
        None => ToolError::Invalid(format!(
            "old_string was not found in {shown}{which}; read the file again and copy the exact text, including whitespace"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(old: &str, new: &str) -> EditOp {
        EditOp {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: false,
        }
    }

    #[test]
    fn unique_match_is_replaced() {
        let (t, added, removed) = apply_edits("f", "a\nb\nc\n", &[op("b\n", "B\nB2\n")]).unwrap();
        assert_eq!(t, "a\nB\nB2\nc\n");
        assert_eq!((added, removed), (2, 1));
    }

    #[test]
    fn several_edits_apply_in_order_or_not_at_all() {
        let (t, ..) = apply_edits(
            "f",
            "x = 1\ny = 2\n",
            &[op("x = 1", "x = 10"), op("x = 10\ny", "x = 10\nz")],
        )
        .unwrap();
        assert_eq!(t, "x = 10\nz = 2\n");
        let err =
            apply_edits("f", "x = 1\n", &[op("x = 1", "x = 2"), op("nope", "y")]).unwrap_err();
        assert!(err.to_string().contains("edit 2 of 2"), "{err}");
    }

    #[test]
    fn ambiguous_match_names_lines() {
        let err = apply_edits("src/a.rs", "foo\nbar\nfoo\n", &[op("foo", "baz")]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("matches 2 places") && msg.contains("lines 1, 3"),
            "{msg}"
        );
        let mut all = op("foo", "baz");
        all.replace_all = true;
        assert_eq!(
            apply_edits("f", "foo\nbar\nfoo\n", &[all]).unwrap().0,
            "baz\nbar\nbaz\n"
        );
    }

    #[test]
    fn whitespace_near_miss_is_pointed_out() {
        let err = apply_edits(
            "f",
            "fn a() {\n    let x = 1;\n}\n",
            &[op("fn a() {\nlet x = 1;", "z")],
        )
        .unwrap_err();
        assert!(err.to_string().contains("starts at line 1"), "{err}");
        let err = apply_edits("f", "abc", &[op("zzz", "y")]).unwrap_err();
        assert!(err.to_string().contains("copy the exact text"), "{err}");
    }

    #[test]
    fn crlf_files_match_lf_arguments() {
        let (t, ..) = apply_edits("f", "a\r\nb\r\nc\r\n", &[op("a\nb", "a\nB")]).unwrap();
        assert_eq!(t, "a\r\nB\r\nc\r\n");
    }

    #[test]
    fn degenerate_edits_are_refused() {
        assert!(
            apply_edits("f", "a", &[op("", "b")])
                .unwrap_err()
                .to_string()
                .contains("use write")
        );
        assert!(
            apply_edits("f", "a", &[op("a", "a")])
                .unwrap_err()
                .to_string()
                .contains("identical")
        );
    }
}
