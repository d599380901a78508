//! Embeds every `migrations/NNNN_name.sql` file at build time, in order.
//! A gap or duplicate in the numbering fails the build with a clear message.

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let dir = manifest.join("../../migrations").canonicalize()?;
    println!("cargo:rerun-if-changed={}", dir.display());

    let mut files: Vec<(u32, String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("sql") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("migration file name is not UTF-8")?
            .to_string();
        let number: u32 = name
            .split('_')
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                format!("migration {name} must start with a number, e.g. 0002_add_x.sql")
            })?;
        files.push((number, name, path));
    }
    files.sort();
    for (i, (number, name, _)) in files.iter().enumerate() {
        let expected = u32::try_from(i + 1)?;
        if *number != expected {
            return Err(format!(
                "migration {name} has number {number}, expected {expected}: migrations must be numbered 1, 2, 3... without gaps or duplicates"
            )
            .into());
        }
    }

    let mut out = String::from("pub(crate) static MIGRATIONS: &[(&str, &str)] = &[\n");
    for (_, name, path) in &files {
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )?;
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("migrations.rs"), out)?;
    Ok(())
}
