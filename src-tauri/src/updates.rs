//! Updates of the desktop app (docs/platforms.md, "Updates").
//!
//! tauri-plugin-updater checks a signed static manifest. A build has an
//! update channel only when it was built with the release's public key
//! (`plugins.updater` merged into tauri.conf.json by the release workflow);
//! without one the plugin is not even loaded and nothing is contacted.
//! Checking happens at start (unless `updates.check` is false) and when the
//! user asks; installing happens only when the user presses the button.

use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Runtime};
use tauri_plugin_updater::UpdaterExt as _;

/// How this copy of the app gets a new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Installer {
    /// AppImage, `.app`, MSI, NSIS: the updater replaces the app.
    SelfUpdate,
    /// `.deb`, `.rpm`: the system's package manager does.
    PackageManager,
    /// Built from source (not bundled): nothing to replace.
    None,
}

impl Installer {
    pub fn of(bundle: Option<tauri::utils::config::BundleType>) -> Self {
        use tauri::utils::config::BundleType as B;
        match bundle {
            Some(B::Deb | B::Rpm) => Self::PackageManager,
            Some(_) => Self::SelfUpdate,
            None => Self::None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Idle,
    Checking,
    UpToDate,
    Available,
    Installing,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct Available {
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

/// What Settings shows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub current: String,
    /// Built with the release key and manifest URL.
    pub channel: bool,
    pub installer: Installer,
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Available>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub struct Updates {
    status: Mutex<Status>,
}

/// Does this build's config name an update channel (a public key and at
/// least one manifest URL)?
pub fn has_channel(config: &tauri::Config) -> bool {
    config.plugins.0.get("updater").is_some_and(|u| {
        let key = u.get("pubkey").and_then(|k| k.as_str()).unwrap_or("");
        let endpoints = u
            .get("endpoints")
            .and_then(|e| e.as_array())
            .is_some_and(|e| !e.is_empty());
        !key.trim().is_empty() && endpoints
    })
}

impl Updates {
    pub fn new(current: String, channel: bool) -> Self {
        Self {
            status: Mutex::new(Status {
                current,
                channel,
                installer: Installer::of(tauri::utils::platform::bundle_type()),
                state: State::Idle,
                available: None,
                error: None,
            }),
        }
    }

    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, f: impl FnOnce(&mut Status)) -> Status {
        let mut s = self
            .status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut s);
        s.clone()
    }

    /// Ask the manifest whether a newer version exists.
    pub async fn check<R: Runtime>(&self, app: &AppHandle<R>) -> Status {
        if !self.status().channel {
            return self.status();
        }
        self.set(|s| {
            s.state = State::Checking;
            s.error = None;
        });
        let found = async {
            let updater = app.updater().map_err(|e| e.to_string())?;
            updater.check().await.map_err(|e| e.to_string())
        }
        .await;
        self.set(|s| match found {
            Ok(Some(u)) => {
                s.state = State::Available;
                s.available = Some(Available {
                    version: u.version.clone(),
                    notes: u.body.clone(),
                    date: u.date.map(|d| d.to_string()),
                });
            }
            Ok(None) => {
                s.state = State::UpToDate;
                s.available = None;
            }
            Err(e) => {
                tracing::warn!(error = %e, "update check failed");
                s.state = State::Failed;
                s.error = Some(format!("the update check failed: {e}"));
            }
        })
    }

    /// Download, verify and install the available version, then restart.
    pub async fn install<R: Runtime>(&self, app: &AppHandle<R>) -> Result<(), String> {
        let status = self.status();
        if !status.channel {
            return Err("this build has no update channel; install a release of Mia Code".into());
        }
        if status.installer == Installer::PackageManager {
            return Err(
                "Mia Code was installed with your package manager: update it there (apt, dnf)"
                    .into(),
            );
        }
        self.set(|s| s.state = State::Installing);
        let done = async {
            let updater = app.updater().map_err(|e| e.to_string())?;
            let update = updater
                .check()
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| "no newer version is available any more".to_string())?;
            tracing::info!(version = %update.version, "installing the update the user asked for");
            update
                .download_and_install(|_, _| {}, || {})
                .await
                .map_err(|e| e.to_string())
        }
        .await;
        match done {
            Ok(()) => app.restart(),
            Err(e) => {
                tracing::warn!(error = %e, "installing the update failed");
                self.set(|s| {
                    s.state = State::Failed;
                    s.error = Some(format!("installing the update failed: {e}"));
                });
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tauri::utils::config::BundleType as B;

    #[test]
    fn package_manager_installs_are_not_replaced_by_the_updater() {
        assert_eq!(Installer::of(Some(B::Deb)), Installer::PackageManager);
        assert_eq!(Installer::of(Some(B::Rpm)), Installer::PackageManager);
        assert_eq!(Installer::of(Some(B::AppImage)), Installer::SelfUpdate);
        assert_eq!(Installer::of(Some(B::Msi)), Installer::SelfUpdate);
        assert_eq!(Installer::of(Some(B::Nsis)), Installer::SelfUpdate);
        assert_eq!(Installer::of(None), Installer::None);
    }

    fn config(updater: serde_json::Value) -> tauri::Config {
        let mut c: tauri::Config = serde_json::from_value(serde_json::json!({
            "identifier": "dev.mia-code.test",
        }))
        .unwrap();
        if !updater.is_null() {
            c.plugins.0.insert("updater".into(), updater);
        }
        c
    }

    #[test]
    fn a_channel_needs_a_key_and_a_manifest() {
        assert!(!has_channel(&config(serde_json::Value::Null)));
        assert!(!has_channel(&config(
            serde_json::json!({"pubkey": "", "endpoints": ["https://x/latest.json"]})
        )));
        assert!(!has_channel(&config(
            serde_json::json!({"pubkey": "KEY", "endpoints": []})
        )));
        assert!(has_channel(&config(
            serde_json::json!({"pubkey": "KEY", "endpoints": ["https://x/latest.json"]})
        )));
    }

    #[test]
    fn a_build_without_a_channel_reports_so() {
        let u = Updates::new("0.1.0".into(), false);
        let s = u.status();
        assert!(!s.channel);
        assert_eq!(s.state, State::Idle);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["channel"], false);
        assert_eq!(json["state"], "idle");
    }
}
