//! Limits on what front ends may send, checked once for every Op and query:
//! lengths, names, and directories that can be opened as projects.

use std::path::{Path, PathBuf};

use mia_protocol::Op;

use crate::CoreError;

/// A session title.
pub const MAX_TITLE: usize = 500;
/// Agent names and provider ids.
pub const MAX_NAME: usize = 64;
/// `provider/model`.
pub const MAX_MODEL: usize = 200;
/// A directory path.
pub const MAX_PATH: usize = 4096;
/// One user message (bytes).
pub const MAX_MESSAGE: usize = 1024 * 1024;

fn too_long(field: &str, len: usize, max: usize) -> CoreError {
    CoreError::Invalid(format!(
        "{field} is {len} bytes long; at most {max} are accepted"
    ))
}

/// `value` is at most `max` bytes.
pub fn check_len(field: &str, value: &str, max: usize) -> Result<(), CoreError> {
    if value.len() > max {
        return Err(too_long(field, value.len(), max));
    }
    Ok(())
}

/// An agent name or provider id: 1-64 of letters, digits, `-`, `_`, `.`.
pub fn check_name(field: &str, value: &str) -> Result<(), CoreError> {
    check_len(field, value, MAX_NAME)?;
    if value.is_empty()
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(CoreError::Invalid(format!(
            "{field} {value:?} is not a valid name: use letters, digits, `-`, `_` and `.`"
        )));
    }
    Ok(())
}

/// The lengths and names of an Op's fields.
pub fn check_op(op: &Op) -> Result<(), CoreError> {
    let model = |m: &Option<String>| match m {
        Some(m) => check_len("model", m, MAX_MODEL),
        None => Ok(()),
    };
    let agent = |a: &Option<String>| match a {
        Some(a) => check_name("agent", a),
        None => Ok(()),
    };
    match op {
        Op::CreateSession {
            directory,
            title,
            agent: a,
            model: m,
        } => {
            check_len("directory", directory, MAX_PATH)?;
            if let Some(t) = title {
                check_len("title", t, MAX_TITLE)?;
            }
            agent(a)?;
            model(m)
        }
        Op::UserMessage {
            text,
            agent: a,
            model: m,
            ..
        } => {
            check_len("message", text, MAX_MESSAGE)?;
            agent(a)?;
            model(m)
        }
        Op::UpdateSession { title: Some(t), .. } => check_len("title", t, MAX_TITLE),
        Op::SwitchAgent { agent: a, .. } => check_name("agent", a),
        Op::SetModel { model: m, .. } => model(m),
        _ => Ok(()),
    }
}

/// System directories: never a project, nor anything inside them.
const SYSTEM_PREFIXES: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    // macOS (where `/etc` is `/private/etc`).
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
];

/// State of the package manager and the init system under `/var/lib`:
/// never a project (a service's workspace there, such as Jenkins', may be).
const VAR_LIB_STATE: &[&str] = &[
    "dpkg",
    "apt",
    "aptitude",
    "rpm",
    "dnf",
    "yum",
    "zypp",
    "pacman",
    "apk",
    "portage",
    "snapd",
    "flatpak",
    "ucf",
    "systemd",
    "polkit-1",
    "sudo",
    "PackageKit",
];

/// Directories that are not projects themselves (what is inside may be:
/// `/home/me/app`, `/srv/site`, `/tmp/scratch`).
const NOT_PROJECTS: &[&str] = &[
    "/var",
    "/var/lib",
    "/run",
    "/srv",
    "/opt",
    "/root",
    "/home",
    "/Users",
    "/private",
    "/private/var",
    "/private/tmp",
    "/Volumes",
    "/mnt",
    "/media",
    "/tmp",
    "/var/tmp",
];

/// Why `canon` (a canonical directory) can never be a project, if it
/// cannot: the filesystem root, a system directory or something inside
/// one, the home directory, a credential store or something inside one,
/// or mia-code's own data. No option lifts these.
pub fn not_a_project(canon: &Path, home: Option<&Path>, mia_home: &Path) -> Option<String> {
    if canon.parent().is_none() {
        return Some("the filesystem root".into());
    }
    if let Some(prefix) = SYSTEM_PREFIXES
        .iter()
        .find(|p| canon.starts_with(Path::new(p)))
    {
        return Some(format!("inside {prefix}, a system directory"));
    }
    // `/lib`, `/lib32`, `/lib64`, `/libx32`, `/libexec`: every `/lib*`.
    let mut parts = canon.components();
    if let (Some(std::path::Component::RootDir), Some(first)) = (parts.next(), parts.next())
        && first.as_os_str().to_string_lossy().starts_with("lib")
    {
        return Some("inside a system library directory".into());
    }
    if let Ok(rest) = canon.strip_prefix("/var/lib")
        && let Some(first) = rest.components().next()
        && VAR_LIB_STATE
            .iter()
            .any(|s| first.as_os_str() == std::ffi::OsStr::new(s))
    {
        return Some("the package manager's or the init system's state".into());
    }
    if NOT_PROJECTS.iter().any(|p| canon == Path::new(p)) {
        return Some("a system directory".into());
    }
    if let Some(why) = windows_system(canon) {
        return Some(why);
    }
    if let Some(home) = home {
        if canon == home {
            return Some("your home directory".into());
        }
        for store in mia_permission::agents::credential_store_paths(home) {
            let real = dunce::canonicalize(&store).unwrap_or_else(|_| store.clone());
            if canon.starts_with(&store) || canon.starts_with(&real) {
                let shown = store
                    .strip_prefix(home)
                    .map(|r| format!("~/{}", r.display()))
                    .unwrap_or_else(|_| store.display().to_string());
                return Some(format!(
                    "inside {shown}, a credential store (mia-code never works there)"
                ));
            }
        }
    }
    let mia = dunce::canonicalize(mia_home).unwrap_or_else(|_| mia_home.to_path_buf());
    if canon.starts_with(&mia) {
        return Some("mia-code's data directory".into());
    }
    None
}

/// `C:\Windows` and `C:\Program Files` (and where the environment says
/// they are), on any drive, in any case.
fn windows_system(canon: &Path) -> Option<String> {
    let s = canon.to_string_lossy().replace('/', "\\").to_lowercase();
    let s = s.strip_prefix(r"\\?\").unwrap_or(&s);
    let mut roots: Vec<String> = ["windows", "program files", "program files (x86)"]
        .iter()
        .map(|d| format!(":\\{d}"))
        .collect();
    for var in ["SystemRoot", "ProgramFiles", "ProgramFiles(x86)"] {
        if let Some(v) = std::env::var_os(var) {
            let v = v.to_string_lossy().replace('/', "\\").to_lowercase();
            if let Some(rest) = v.get(1..) {
                roots.push(rest.to_string());
            }
        }
    }
    let after_drive = s.get(1..)?;
    let hit = roots
        .iter()
        .any(|r| after_drive == r.as_str() || after_drive.starts_with(&format!("{r}\\")));
    (s.chars().next()?.is_ascii_alphabetic() && hit)
        .then(|| "inside a Windows system directory".to_string())
}

/// A directory a front end may open as a project: it exists, is a
/// directory, and is not one [`not_a_project`] refuses.
pub fn project_dir(dir: &Path, paths: &mia_config::Paths) -> Result<PathBuf, CoreError> {
    check_len("directory", &dir.to_string_lossy(), MAX_PATH)?;
    let canon = dunce::canonicalize(dir).map_err(|e| {
        CoreError::Invalid(format!(
            "project directory {} is not accessible: {e}",
            dir.display()
        ))
    })?;
    if !canon.is_dir() {
        return Err(CoreError::Invalid(format!(
            "{} is not a directory: open the project folder",
            canon.display()
        )));
    }
    let home = dunce::canonicalize(&paths.user_home).unwrap_or_else(|_| paths.user_home.clone());
    if let Some(why) = not_a_project(&canon, Some(&home), &paths.home) {
        return Err(CoreError::Refused(format!(
            "{} is {why}, not a project: open a project folder instead",
            canon.display()
        )));
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn not_projects_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let user_home = dir.path().join("me");
        std::fs::create_dir_all(user_home.join(".ssh/keys")).unwrap();
        let paths = mia_config::Paths::new(
            dir.path().join("mia"),
            user_home.clone(),
            &dir.path().join("cfg"),
        );
        let mia = paths.home.clone();
        std::fs::create_dir_all(mia.join("logs")).unwrap();
        let proj = dir.path().join("proj");
        std::fs::create_dir(&proj).unwrap();
        assert!(project_dir(&proj, &paths).is_ok());
        // Each system's own: on Windows `/etc` is `C:\\etc`, a plain folder
        // (under Wine the Unix root is drive Z:, which a Windows user does not have).
        #[cfg(unix)]
        let system = [
            "/",
            "/etc",
            "/proc",
            "/proc/self",
            "/usr",
            "/usr/bin",
            "/usr/lib",
        ];
        #[cfg(windows)]
        let system = [
            "C:\\",
            "C:\\Windows",
            "C:\\Windows\\System32",
            "C:\\Program Files",
        ];
        for bad in system {
            let e = project_dir(Path::new(bad), &paths).unwrap_err().to_string();
            assert!(e.contains("not a project"), "{bad}: {e}");
        }
        assert!(project_dir(&mia, &paths).is_err());
        assert!(project_dir(&mia.join("logs"), &paths).is_err());
        assert!(project_dir(&user_home, &paths).is_err());
        let e = project_dir(&user_home.join(".ssh"), &paths)
            .unwrap_err()
            .to_string();
        assert!(e.contains("~/.ssh, a credential store"), "{e}");
        assert!(project_dir(&user_home.join(".ssh/keys"), &paths).is_err());
        let file = proj.join("f");
        std::fs::write(&file, "").unwrap();
        assert!(
            project_dir(&file, &paths)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        let long = "a".repeat(MAX_PATH + 1);
        assert!(
            project_dir(Path::new(&long), &paths)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
        assert!(check_name("agent", "build").is_ok());
        assert!(check_name("agent", "../x").is_err());
        assert!(check_name("agent", &"a".repeat(65)).is_err());
    }

    /// The rules by prefix, for paths that need not exist here.
    #[test]
    fn system_directories_and_what_is_inside_them() {
        let home = Path::new("/home/me");
        let mia = Path::new("/home/me/.mia-code");
        let refused = |p: &str| not_a_project(Path::new(p), Some(home), mia);
        for bad in [
            "/",
            "/etc/cron.d",
            "/usr/bin",
            "/usr/lib",
            "/usr/local/src/x",
            "/bin",
            "/sbin/x",
            "/lib/modules",
            "/lib64",
            "/libx32/x",
            "/boot/efi",
            "/sys/kernel",
            "/dev/shm",
            "/var/lib",
            "/var/lib/dpkg",
            "/var/lib/apt/lists",
            "/var/lib/systemd/x",
            "/System/Library",
            "/Library/Preferences",
            "/private/etc/ssh",
            "/var",
            "/tmp",
            "/home",
            "/home/me",
            "/home/me/.ssh",
            "/home/me/.aws/sso",
            "/home/me/.gnupg",
            "/home/me/.kube/x",
            "/home/me/.mia-code/logs",
        ] {
            assert!(refused(bad).is_some(), "{bad} should not be a project");
        }
        for good in [
            "/var/lib/jenkins/workspace/x",
            "/srv/app",
            "/opt/project",
            "/tmp/scratch",
            "/home/me/src/app",
            "/home/me/.sshx",
            "/etcetera",
            "/usrx/y",
            "/Users/me/code",
        ] {
            assert_eq!(refused(good), None, "{good} is a project");
        }
        assert!(windows_system(Path::new(r"C:\Windows\System32")).is_some());
        assert!(windows_system(Path::new(r"d:\program files\App")).is_some());
        assert!(windows_system(Path::new(r"\\?\C:\Program Files (x86)")).is_some());
        assert!(windows_system(Path::new(r"C:\Users\me\code")).is_none());
        assert!(windows_system(Path::new(r"C:\WindowsApps2")).is_none());
    }
}
