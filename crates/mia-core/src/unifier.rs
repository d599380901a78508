//! The unifier layer's 🧠 Mia / 🌸 Miette commentary is stored as its own
//! part type so UIs can style or hide it (specs 012/014).

/// Split commentary lines out of an assistant's text. Returns the text
/// without them and `(perspective, text)` pairs in order.
pub fn split_commentary(text: &str) -> (String, Vec<(String, String)>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut notes: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match commentary_line(line) {
            Some(note) => notes.push(note),
            None => kept.push(line),
        }
    }
    if notes.is_empty() {
        return (text.to_string(), notes);
    }
    let mut body = kept.join("\n").trim_end().to_string();
    if text.ends_with('\n') && !body.is_empty() {
        body.push('\n');
    }
    (body, notes)
}

fn commentary_line(line: &str) -> Option<(String, String)> {
    let t = line.trim_start().trim_start_matches(['-', '>', ' ']);
    for (emoji, name, perspective) in [("🧠", "mia", "mia"), ("🌸", "miette", "miette")] {
        let Some(rest) = t.strip_prefix(emoji) else {
            continue;
        };
        let rest = rest.trim_start().trim_start_matches('*');
        if rest.len() < name.len() || !rest[..name.len()].eq_ignore_ascii_case(name) {
            continue;
        }
        let rest = rest[name.len()..].trim_start_matches('*').trim_start();
        let Some(body) = rest.strip_prefix(':') else {
            continue;
        };
        let body = body.trim_start_matches('*').trim();
        if body.is_empty() {
            return None;
        }
        return Some((perspective.to_string(), body.to_string()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commentary_is_split_from_the_answer() {
        let (body, notes) = split_commentary(
            "Fixed the bug in auth.rs.\n\n🧠 Mia: The guard now runs before the token check.\n🌸 **Miette**: A small change that closes a door.\n",
        );
        assert_eq!(body, "Fixed the bug in auth.rs.\n");
        assert_eq!(
            notes,
            vec![
                (
                    "mia".to_string(),
                    "The guard now runs before the token check.".to_string()
                ),
                (
                    "miette".to_string(),
                    "A small change that closes a door.".to_string()
                ),
            ]
        );
    }

    #[test]
    fn text_without_commentary_is_untouched() {
        let text = "Mia said 🧠 is a brain emoji.\n🌸 flowers";
        assert_eq!(split_commentary(text), (text.to_string(), vec![]));
    }
}
