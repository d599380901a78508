//! Data at rest is the user's alone: `$MIA_CODE_HOME` and its directories
//! are 0700, the database (with its `-wal`, `-shm` and lock files), logs,
//! credentials and the serve token 0600. Created that way, and fixed when an
//! older version (or a umask) left them wider. No-ops off Unix.

use std::path::{Path, PathBuf};

/// Files and directories under `$MIA_CODE_HOME` whose modes matter.
pub fn sensitive_paths(home: &Path) -> Vec<PathBuf> {
    let mut v = vec![home.to_path_buf()];
    let db = home.join("data.db");
    for suffix in ["", "-wal", "-shm", ".lock"] {
        v.push(PathBuf::from(format!("{}{suffix}", db.display())));
    }
    v.push(home.join("credentials.json"));
    v.push(home.join("server.json"));
    let logs = home.join("logs");
    if let Ok(entries) = std::fs::read_dir(&logs) {
        for e in entries.flatten() {
            v.push(e.path());
        }
    }
    v.push(logs);
    v.push(home.join("snapshots"));
    v
}

/// Create `dir` (and missing parents) and make it 0700 if it was wider.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        if !dir.is_dir() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    make_private(dir)
}

/// Remove group and other permission bits of an existing file or directory.
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            return Ok(());
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            let want = if meta.is_dir() { 0o700 } else { 0o600 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(want))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Paths under `home` that others can read or enter, with their modes.
pub fn exposed(home: &Path) -> Vec<(PathBuf, u32)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        sensitive_paths(home)
            .into_iter()
            .filter_map(|p| {
                let m = std::fs::symlink_metadata(&p).ok()?;
                let mode = m.permissions().mode() & 0o777;
                (!m.file_type().is_symlink() && mode & 0o077 != 0).then_some((p, mode))
            })
            .collect()
    }
    #[cfg(not(unix))]
    {
        let _ = home;
        Vec::new()
    }
}

/// Make every sensitive path under `home` private; returns what was changed.
pub fn secure_home(home: &Path) -> std::io::Result<Vec<(PathBuf, u32)>> {
    let before = exposed(home);
    ensure_private_dir(home)?;
    for (p, _) in &before {
        make_private(p)?;
    }
    Ok(before)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_wide_home_is_made_private() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("mia");
        std::fs::create_dir(&home).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(home.join("data.db"), "x").unwrap();
        std::fs::set_permissions(home.join("data.db"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        std::fs::create_dir(home.join("logs")).unwrap();
        std::fs::write(home.join("logs/mia-code.log"), "x").unwrap();
        std::fs::set_permissions(
            home.join("logs/mia-code.log"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        assert_eq!(exposed(&home).len(), 4, "{:?}", exposed(&home));
        let fixed = secure_home(&home).unwrap();
        assert_eq!(fixed.len(), 4);
        assert!(exposed(&home).is_empty());
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&home.join("data.db")), 0o600);
        assert_eq!(mode(&home.join("logs")), 0o700);
        assert_eq!(mode(&home.join("logs/mia-code.log")), 0o600);
        let fresh = dir.path().join("a/b/c");
        ensure_private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
    }
}
