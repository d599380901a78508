//! JavaScriptCore settings for the webview's processes (Linux: WebKitGTK).
//!
//! JavaScriptCore reads its options only from the environment of the process
//! it runs in, and WebKitGTK starts its web process with the app's
//! environment. The app cannot change its own environment once it runs (in
//! Rust 2024 `std::env::set_var` is `unsafe`, which this workspace forbids:
//! other threads may read the environment at the same time), so at the very
//! start, before any thread exists, it executes itself again (same PID, same
//! arguments) with the missing settings added. A setting the user already has
//! in the environment is kept as it is; `MIA_CODE_WEBVIEW_TUNING=off` turns
//! the whole thing off. Measured in docs/benchmarks.md: the web process keeps
//! ~35 MB less after a long streamed answer, and streaming and switching stay
//! within their budgets.

#[cfg(any(target_os = "linux", test))]
use std::ffi::OsString;

/// The variable that turns the settings off (`off` or `0`).
#[cfg(any(target_os = "linux", test))]
pub const OPT_OUT: &str = "MIA_CODE_WEBVIEW_TUNING";

/// What the app adds, unless the environment already names it.
///
/// - `JSC_useDFGJIT=0`: no optimising JIT tiers (DFG, and FTL above it). Their
///   compiled code and profiling data are a large part of what the web process keeps
///   after a long session; the page's work is DOM-bound, where they gain little.
/// - `JSC_thresholdForJITAfterWarmUp`, `JSC_thresholdForJITSoon`: the baseline
///   JIT only for code that stays hot (the streaming path), the rest runs in
///   the interpreter.
/// - `JSC_useGenerationalGC=0`: every collection is a full one. With the
///   generational collector, what survived one young collection (the DOM of a
///   session switched away from, kept alive until then by its JavaScript
///   wrappers) waits for a full collection, which a page like this one, whose
///   live heap stays small, hardly ever triggers: in the benchmark's visits
///   not once in two minutes. Full collections of this heap pause the page
///   3–6 ms (their marking runs beside it).
#[cfg(any(target_os = "linux", test))]
pub const TUNING: &[(&str, &str)] = &[
    ("JSC_useDFGJIT", "0"),
    ("JSC_thresholdForJITAfterWarmUp", "20000"),
    ("JSC_thresholdForJITSoon", "2000"),
    ("JSC_useGenerationalGC", "0"),
];

/// The settings to add to an environment read through `get`: none when the
/// user opted out, else each one the environment does not name yet. Empty
/// once they are all there, which is what stops the app executing itself
/// more than once.
#[cfg(any(target_os = "linux", test))]
pub fn missing(get: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, &'static str)> {
    if get(OPT_OUT).is_some_and(|v| v == "off" || v == "0") {
        return Vec::new();
    }
    TUNING
        .iter()
        .filter(|(name, _)| get(name).is_none())
        .copied()
        .collect()
}

/// Executes the app again with the settings added; returns (and the app goes
/// on with the defaults) when nothing is missing or the exec fails. Call it
/// first thing in `main`, before any thread is started.
#[cfg(target_os = "linux")]
pub fn apply() {
    use std::os::unix::process::CommandExt as _;

    let add = missing(|name| std::env::var_os(name));
    if add.is_empty() {
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!(
                "mia-code: cannot find the app's own executable ({e}); the webview runs with its default settings"
            );
            return;
        }
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    // `exec` returns only on failure.
    let e = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .envs(add)
        .exec();
    eprintln!(
        "mia-code: cannot execute {} again with the webview's settings ({e}); it runs with its default settings",
        exe.display()
    );
}

/// WebKitGTK only: macOS and Windows use the system's engine.
#[cfg(not(target_os = "linux"))]
pub fn apply() {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn an_empty_environment_gets_every_setting() {
        assert_eq!(missing(env(&[])), TUNING.to_vec());
    }

    #[test]
    fn a_setting_the_user_has_is_kept() {
        let add = missing(env(&[("JSC_useDFGJIT", "1")]));
        assert!(add.iter().all(|(name, _)| *name != "JSC_useDFGJIT"));
        assert_eq!(add.len(), TUNING.len() - 1);
    }

    #[test]
    fn once_everything_is_set_nothing_is_added_so_the_app_executes_itself_once() {
        let all: Vec<(&str, &str)> = TUNING.to_vec();
        assert!(missing(env(&all)).is_empty());
    }

    #[test]
    fn the_opt_out_adds_nothing() {
        assert!(missing(env(&[(OPT_OUT, "off")])).is_empty());
        assert!(missing(env(&[(OPT_OUT, "0")])).is_empty());
        assert_eq!(missing(env(&[(OPT_OUT, "on")])), TUNING.to_vec());
    }
}
