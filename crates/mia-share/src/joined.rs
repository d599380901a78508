//! The line-joined view of a text, where a token wrapped across lines or
//! split by a `\` continuation is whole again.
//!
//! A line break is joined away when:
//! - the line ends with `\` (a shell continuation): the `\`, the break and
//!   the next line's indentation go;
//! - or the line is long enough to have been wrapped ([`WRAP_AT`]
//!   characters or more), it ends with a token character, the next line
//!   starts with one, and the word they make has a digit, a capital or one
//!   of `_+/=` (prose wrapped by hand is left as it is): the break goes.
//!
//! In both cases a diff's `+`/`-`/` ` at the start of both lines, and a read
//! tool's line number (`   12\t`), go with the break. A match found in the
//! view maps back to the pieces of the original text it was made of.

use std::ops::Range;

/// A line shorter than this was not wrapped (wrapping happens at 64, 76 or
/// 80 columns).
pub const WRAP_AT: usize = 60;

/// The widths text is wrapped at (PEM 64, base64 76, terminals 80, …): a
/// line of another length ended where its author ended it, and is not
/// joined to the next (a long token followed by `password = …` must not
/// swallow the word).
const WRAP_WIDTHS: &[usize] = &[60, 64, 70, 72, 76, 78, 79, 80, 100, 120];

/// A text with some of its line breaks removed.
#[derive(Debug)]
pub struct Joined {
    pub text: String,
    /// Where text of the original was removed, as positions in `text`.
    cuts: Vec<usize>,
    /// `sums[i]`: the bytes of the original removed at `cuts[..i]`.
    sums: Vec<usize>,
    /// Ranges of `text` made of lines joined together.
    segments: Vec<Range<usize>>,
}

/// A base64, base64url or token character: what a wrapped token is made of.
fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-')
}

/// The length of a read tool's line-number prefix (`   12\t`) at the start
/// of `line`, if it has one.
fn numbered(line: &[u8]) -> usize {
    let spaces = line
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    let digits = line[spaces..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits > 0 && line.get(spaces + digits) == Some(&b'\t') {
        spaces + digits + 1
    } else {
        0
    }
}

/// A diff's `+`/`-` marker at the start of a line (its width: 0 or 1).
fn marker(line: &[u8]) -> usize {
    usize::from(matches!(line.first(), Some(b'+' | b'-')))
}

/// How much of the start of `next` goes with a break after `line`: the same
/// diff marker, or a line number when `line` has one too.
fn prefix(line: &[u8], next: &[u8]) -> usize {
    if numbered(line) > 0 {
        return numbered(next);
    }
    match (line.first(), next.first()) {
        (Some(a), Some(b)) if a == b && matches!(a, b'+' | b'-' | b' ') => 1,
        _ => 0,
    }
}

/// The byte range to cut after `line` (its range in `s`, without the `\n`)
/// when the break is to be joined away; `next` is the following line.
fn cut_after(s: &str, line: Range<usize>, next: Range<usize>) -> Option<Range<usize>> {
    let bytes = s.as_bytes();
    let mut end = line.end;
    if end > line.start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    let text = &bytes[line.start..end];
    let next_text = &bytes[next.clone()];
    let skip = prefix(text, next_text);
    let after = next.start + skip;
    if text.last() == Some(&b'\\') {
        let indent = bytes[after..next.end]
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        let resume = after + indent;
        return (resume < next.end).then_some(end - 1..resume);
    }
    // The line's own width: without a read tool's number or a diff marker.
    let own = s[line.start..end]
        .get(numbered(text).max(marker(text))..)
        .unwrap_or("");
    if after >= next.end
        || text.len() < WRAP_AT
        || !text.last().copied().is_some_and(token_byte)
        || !bytes.get(after).copied().is_some_and(token_byte)
        || !WRAP_WIDTHS.contains(&own.chars().count())
    {
        return None;
    }
    // The word the break would make: the end of this line and the start of
    // the next. Prose wrapped by hand makes lower-case words; a token has a
    // digit, a capital or a symbol.
    let mut tail = text.iter().rev().take_while(|b| token_byte(**b));
    let mut head = bytes[after..next.end]
        .iter()
        .take_while(|b| token_byte(**b));
    let symbol = |b: &u8| b.is_ascii_digit() || b"_+/=".contains(b);
    // A capital starting the next line starts a sentence, not a token.
    let joins = tail.any(|b| symbol(b) || b.is_ascii_uppercase())
        || head.next().is_some_and(symbol)
        || head.any(|b| symbol(b) || b.is_ascii_uppercase());
    joins.then_some(end..after)
}

impl Joined {
    /// The view of `s`, or `None` when no break is joined away.
    pub fn of(s: &str) -> Option<Joined> {
        let bytes = s.as_bytes();
        let mut text = String::new();
        let mut cuts = Vec::new();
        let mut sums = vec![0];
        let mut segments = Vec::new();
        let mut segment: Option<usize> = None;
        let mut copied = 0;
        let mut line = 0..0;
        for (i, b) in bytes.iter().enumerate() {
            if *b != b'\n' {
                continue;
            }
            let next_end = bytes[i + 1..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |p| i + 1 + p);
            line.end = i;
            let next = i + 1..next_end;
            // Where an original position is in the view.
            let view_at = |text: &String, x: usize| text.len() + x - copied;
            match cut_after(s, line.clone(), next.clone()) {
                Some(cut) => {
                    if segment.is_none() {
                        segment = Some(view_at(&text, line.start));
                    }
                    text.push_str(&s[copied..cut.start]);
                    cuts.push(text.len());
                    sums.push(sums.last().copied().unwrap_or(0) + cut.end - cut.start);
                    copied = cut.end;
                }
                None => {
                    if let Some(start) = segment.take() {
                        segments.push(start..view_at(&text, line.end));
                    }
                }
            }
            line = next;
        }
        if cuts.is_empty() {
            return None;
        }
        if let Some(start) = segment {
            segments.push(start..text.len() + bytes.len() - copied);
        }
        text.push_str(&s[copied..]);
        Some(Joined {
            text,
            cuts,
            sums,
            segments,
        })
    }

    /// The parts of the view made of joined lines (a match that spans a
    /// joined break is inside one of them: no token or command rule spans
    /// a line break that stays).
    pub fn segments(&self) -> &[Range<usize>] {
        &self.segments
    }

    /// Whether the view's range `a..b` spans a joined break (so it is not
    /// whole in the original).
    pub fn crosses(&self, a: usize, b: usize) -> bool {
        let i = self.cuts.partition_point(|c| *c <= a);
        self.cuts.get(i).is_some_and(|c| *c < b)
    }

    /// Where the view's range `a..b` is in the original: one range per
    /// piece, in order.
    pub fn pieces(&self, a: usize, b: usize) -> Vec<Range<usize>> {
        // A piece starting at a cut starts after it; one ending at a cut
        // ends before it.
        let start = |j: usize| j + self.sums[self.cuts.partition_point(|c| *c <= j)];
        let end = |j: usize| j + self.sums[self.cuts.partition_point(|c| *c < j)];
        let mut out = Vec::new();
        let mut from = a;
        let first = self.cuts.partition_point(|c| *c <= a);
        for c in self.cuts[first..].iter().take_while(|c| **c < b) {
            out.push(start(from)..end(*c));
            from = *c;
        }
        out.push(start(from)..end(b));
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A long line that ends where its author ended it (not at a wrap
    /// width) keeps its break: the next line's first word is its own.
    #[test]
    fn a_long_line_of_another_width_is_not_joined() {
        let token = format!("TOKEN=xapp-1-A0B1-{}", "0a1b2c3d4e".repeat(9));
        assert!(!WRAP_WIDTHS.contains(&token.chars().count()));
        let s = format!("{token}\npassword = \"p@ss w0rd$x\"\n");
        assert!(Joined::of(&s).is_none());
        let numbered = format!("     6\t{token}\n     7\tpassword = \"x\"\n");
        assert!(Joined::of(&numbered).is_none());
    }

    #[test]
    fn a_continuation_and_a_wrap_are_joined_and_map_back() {
        // `   tok…AB` is 64 characters: PEM's width.
        let long = "x".repeat(56);
        let s = format!("a \\\n   tok{long}AB\nCD rest\nshort\nnot joined");
        let j = Joined::of(&s).unwrap();
        assert_eq!(j.text, format!("a tok{long}ABCD rest\nshort\nnot joined"));
        let a = j.text.find("tok").unwrap();
        let b = j.text.find(" rest").unwrap();
        assert!(j.crosses(a, b));
        assert!(!j.crosses(a, a + 3));
        let pieces: Vec<&str> = j.pieces(a, b).iter().map(|r| &s[r.clone()]).collect();
        assert_eq!(pieces, [format!("tok{long}AB").as_str(), "CD"]);
        let pieces: Vec<&str> = j.pieces(0, b).iter().map(|r| &s[r.clone()]).collect();
        assert_eq!(pieces, ["a ", format!("tok{long}AB").as_str(), "CD"]);
    }

    #[test]
    fn diff_markers_and_line_numbers_go_with_the_break() {
        let long = "y1".repeat(32);
        let s = format!("+{long}\n+zz\n     1\t{long}\n     2\tww\n");
        let j = Joined::of(&s).unwrap();
        assert_eq!(j.text, format!("+{long}zz\n     1\t{long}ww\n"));
        assert!(Joined::of("short\nlines\n").is_none());
    }

    #[test]
    fn prose_wrapped_by_hand_is_not_joined() {
        let s = format!(
            "{} wrapped\nhere and {} ends\nThe next sentence",
            "a".repeat(60),
            "b".repeat(60)
        );
        assert!(Joined::of(&s).is_none());
    }
}
