use std::path::{Component, Path, PathBuf};

use crate::{ToolContext, ToolError};

/// Resolve a path argument against the project root and normalise `.`/`..`
/// lexically (symlinks are the permission engine's business: it canonicalises
/// before judging). Rejects NUL and control characters.
pub(crate) fn resolve(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    if raw.trim().is_empty() {
        return Err(ToolError::Invalid("the path is empty".into()));
    }
    if raw.chars().any(|c| c.is_control()) {
        return Err(ToolError::Invalid(format!(
            "the path {raw:?} contains control characters"
        )));
    }
    let expanded = if let Some(rest) = raw.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(rest),
            None => PathBuf::from(raw),
        }
    } else {
        PathBuf::from(raw)
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        ctx.project_root.join(expanded)
    };
    Ok(normalize(&joined))
}

pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Path shown to the model: relative to the project root when inside it,
/// `/`-separated on every system (as the model writes paths, as permission
/// rules and snapshots name them; Windows takes `/` everywhere).
pub(crate) fn display(ctx: &ToolContext, path: &Path) -> String {
    match path.strip_prefix(&ctx.project_root) {
        Ok(rel) => slash(rel),
        Err(_) => path.display().to_string(),
    }
}

/// A relative path's components joined with `/`.
pub(crate) fn slash(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// "Did you mean" for a missing file: siblings with a similar name.
pub(crate) fn hint_for_missing(ctx: &ToolContext, path: &Path) -> String {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return String::new();
    };
    let name = name.to_string_lossy().to_lowercase();
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), Some(e.to_string())),
        _ => (name.clone(), None),
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return format!(
            " (the directory {} does not exist either)",
            display(ctx, parent)
        );
    };
    let mut similar: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            let l = n.to_lowercase();
            let other_stem = l.rsplit_once('.').map_or(l.as_str(), |(s, _)| s);
            let same_ext = ext
                .as_deref()
                .is_some_and(|e| l.rsplit_once('.').is_some_and(|(_, x)| x == e));
            (!other_stem.is_empty() && (l.contains(&stem) || stem.contains(other_stem))) || same_ext
        })
        .take(5)
        .collect();
    similar.sort();
    if similar.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = similar
            .iter()
            .map(|n| display(ctx, &parent.join(n)))
            .collect();
        format!(" (did you mean: {}?)", list.join(", "))
    }
}
