//! `adjective-noun` names for experiment worktrees (spec 075).

use rand::seq::IndexedRandom;

pub const ADJECTIVES: &[&str] = &[
    "swift", "bright", "calm", "clear", "crisp", "deep", "fair", "keen", "kind", "lean", "mild",
    "neat", "pure", "rich", "sage", "warm", "wise", "bold", "brave", "cool", "eager", "fresh",
    "glad", "grand", "happy", "jolly", "light", "lively", "lucky", "merry", "noble", "proud",
    "quick", "quiet", "rapid", "ready", "sharp", "shiny", "silent", "smart", "solid", "steady",
    "sunny", "tidy", "true", "vivid", "witty", "young", "zesty", "gentle",
];

pub const NOUNS: &[&str] = &[
    "brook", "cedar", "crane", "dawn", "eagle", "flame", "grove", "hawk", "jade", "lake", "maple",
    "oak", "peak", "ridge", "tide", "vale", "wave", "wolf", "aspen", "birch", "cloud", "coral",
    "creek", "delta", "dune", "falcon", "fern", "field", "fjord", "forest", "frost", "glade",
    "harbor", "heron", "island", "lark", "meadow", "mesa", "moss", "otter", "pine", "prairie",
    "raven", "reef", "river", "sparrow", "spruce", "stone", "willow", "wren",
];

/// A random `adjective-noun`.
pub fn random_name() -> String {
    let mut rng = rand::rng();
    format!(
        "{}-{}",
        ADJECTIVES.choose(&mut rng).copied().unwrap_or("swift"),
        NOUNS.choose(&mut rng).copied().unwrap_or("brook")
    )
}

/// A worktree name: 1-63 lowercase letters, digits and hyphens, not starting with one.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 63 {
        return Err("use 1-63 characters".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err("use lowercase letters, digits and hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err("hyphens go between words".into());
    }
    if name == "main" {
        return Err(
            "`main` names the main checkout in take and compare; choose another name".into(),
        );
    }
    if name == "trash" {
        return Err(
            "`trash` names what forced operations kept (`worktree trash`); choose another name"
                .into(),
        );
    }
    Ok(())
}
