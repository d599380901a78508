//! Which of the rules' keywords a text has, in one pass: the filter that
//! keeps a rule's regular expressions off texts that cannot match them.
//!
//! A plain loop over the bytes with a table of the keywords' first two
//! letters: transcripts are redacted by unoptimized builds too (tests, the
//! debug app), where the regex engine's vectorised searches are slow.

/// The keywords, by their first two bytes (lower-cased).
#[derive(Clone)]
pub struct Keywords {
    /// For each pair of lower-cased bytes `a << 8 | b`: 0, or 1 + the index
    /// in `lists` of the keywords starting with them.
    slots: Vec<u16>,
    lists: Vec<Vec<&'static str>>,
}

/// ASCII lower-casing as a table (a lookup, not a call, in unoptimized code).
const LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).to_ascii_lowercase();
        i += 1;
    }
    t
};

fn pair(a: u8, b: u8) -> usize {
    usize::from(LOWER[usize::from(a)]) << 8 | usize::from(LOWER[usize::from(b)])
}

impl Keywords {
    /// The set of `words` (lower-case ASCII, two bytes or more; a shorter
    /// one would never be found, so none is given).
    pub fn new(words: impl IntoIterator<Item = &'static str>) -> Self {
        let mut slots = vec![0u16; 1 << 16];
        let mut lists: Vec<Vec<&'static str>> = Vec::new();
        for w in words {
            let b = w.as_bytes();
            if b.len() < 2 {
                continue;
            }
            let key = pair(b[0], b[1]);
            if slots[key] == 0 {
                lists.push(Vec::new());
                slots[key] = u16::try_from(lists.len()).unwrap_or(u16::MAX);
            }
            if let Some(list) = lists.get_mut(usize::from(slots[key]) - 1)
                && !list.contains(&w)
            {
                list.push(w);
            }
        }
        Self { slots, lists }
    }

    /// The keywords `s` contains, ignoring ASCII case.
    pub fn find(&self, s: &str) -> Vec<&'static str> {
        let b = s.as_bytes();
        let mut found: Vec<&'static str> = Vec::new();
        let Some(first) = b.first() else {
            return found;
        };
        let mut prev = usize::from(LOWER[usize::from(*first)]);
        for i in 1..b.len() {
            let cur = usize::from(LOWER[usize::from(b[i])]);
            let slot = self.slots[prev << 8 | cur];
            prev = cur;
            if slot == 0 {
                continue;
            }
            let Some(words) = self.lists.get(usize::from(slot) - 1) else {
                continue;
            };
            let rest = &b[i - 1..];
            for w in words {
                let n = w.len();
                if rest.len() >= n
                    && rest[..n].eq_ignore_ascii_case(w.as_bytes())
                    && !found.contains(w)
                {
                    found.push(w);
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keywords_in_any_case_and_overlapping() {
        let k = Keywords::new(["token", "sk-", "sk-ant-", "kenny", "://"]);
        let mut f = k.find("A TOKENNY at sk-ant-x, https://x");
        f.sort_unstable();
        assert_eq!(f, ["://", "kenny", "sk-", "sk-ant-", "token"]);
        assert!(k.find("nothing here").is_empty());
    }
}
