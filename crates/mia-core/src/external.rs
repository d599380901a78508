//! What MCP servers and plugins — programs mia-code starts and talks to —
//! share: the minimal environment they get, and the cap on what their
//! tools hand to the model.

use std::collections::BTreeMap;

/// Tool output handed to the model (the rest is cut, and said so).
pub(crate) const MAX_OUTPUT: usize = 100 * 1024;

/// Environment variables every started program gets (when set) besides
/// its configured `env`: enough to run, no keys or tokens.
const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "SystemRoot",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "PATHEXT",
    "COMSPEC",
    "WINDIR",
];

/// [`BASE_ENV`] plus `extra`, with the values `lookup` has.
pub(crate) fn base_env(
    extra: &[&str],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    BASE_ENV
        .iter()
        .chain(extra)
        .filter_map(|k| lookup(k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Cut `text` to [`MAX_OUTPUT`] bytes (on a character boundary), then add
/// `note(total bytes)`. Returns whether it was cut.
pub(crate) fn cap_output(text: &mut String, note: impl FnOnce(usize) -> String) -> bool {
    if text.len() <= MAX_OUTPUT {
        return false;
    }
    let total = text.len();
    let mut cut = MAX_OUTPUT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&note(total));
    true
}
