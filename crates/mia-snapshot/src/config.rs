use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Directory names never snapshotted (in addition to `.gitignore`).
pub const DEFAULT_EXCLUDED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".gradle",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".turbo",
    ".parcel-cache",
    ".cache",
    "bower_components",
];

/// Tunables of the snapshot engine. Defaults follow issue 7.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SnapshotConfig {
    /// Files larger than this are noted as excluded, not stored (binary
    /// files included: they are stored up to the cap).
    pub max_file_size: u64,
    /// A capture that runs longer than this gives up (the step proceeds
    /// without undo).
    #[serde(with = "duration_ms")]
    pub time_budget: Duration,
    /// Snapshots kept per session (plus its baseline).
    pub keep_per_session: usize,
    /// Directory names skipped everywhere in the tree.
    pub excluded_dirs: Vec<String>,
    /// At most this many excluded files are listed in one snapshot's
    /// metadata (the total is always counted).
    pub max_listed_exclusions: usize,
    /// gc is skipped when the disk holding the project has less free space
    /// than this.
    pub min_free_disk_bytes: u64,
    /// Where stores live (`<store_root>/<project key>/`); `None`:
    /// [`crate::default_store_root`] (`$MIA_CODE_HOME/snapshots`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_root: Option<std::path::PathBuf>,
    /// How long a step with unknown paths (bash) waits for another one on
    /// the same work tree to finish before it gives up without running.
    #[serde(with = "duration_ms")]
    pub step_wait: Duration,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        Self {
            max_file_size: 10 * 1024 * 1024,
            time_budget: Duration::from_secs(2),
            keep_per_session: 100,
            excluded_dirs: DEFAULT_EXCLUDED_DIRS
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            max_listed_exclusions: 200,
            min_free_disk_bytes: 512 * 1024 * 1024,
            store_root: None,
            step_wait: Duration::from_secs(120),
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}
