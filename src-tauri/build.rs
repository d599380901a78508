fn main() {
    // Declares the app's own commands so capabilities can allow each one
    // (`allow-api`, `allow-subscribe`, `allow-unsubscribe`); anything not
    // allowed there is refused at the IPC boundary.
    // The package's root is the repository's top (tauri.conf.json, icons/);
    // the desktop app's own files stay under src-tauri/.
    let attrs = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(&[
            "api",
            "subscribe",
            "unsubscribe",
            "update_status",
            "update_check",
            "update_install",
        ]));
    if let Err(e) = tauri_build::try_build(attrs) {
        println!("cargo:warning=tauri build step failed: {e:#}");
        std::process::exit(1);
    }
}
