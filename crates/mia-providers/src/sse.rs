//! Incremental Server-Sent Events framing (WHATWG `text/event-stream`).
//!
//! A small hand-written parser rather than `eventsource-stream`: the driver
//! must know whether the connection closed in the middle of an event (to
//! tell a cut stream from a finished one), must apply its idle timeout per
//! network read, and counts bytes for the benchmark. The parser takes bytes
//! in any split and yields complete events.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended with `\r`; a leading `\n` in the next chunk
    /// belongs to the same line break.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    started: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed bytes; complete events are appended to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if bytes.is_empty() {
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while !bytes.is_empty() {
            match bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
                Some(pos) => {
                    let (line_part, rest) = bytes.split_at(pos);
                    let is_cr = rest.first() == Some(&b'\r');
                    let mut rest = rest.get(1..).unwrap_or_default();
                    if is_cr {
                        if rest.is_empty() {
                            self.after_cr = true;
                        } else if let Some(r) = rest.strip_prefix(b"\n") {
                            rest = r;
                        }
                    }
                    if self.line.is_empty() {
                        self.process_line(line_part, out);
                    } else {
                        self.line.extend_from_slice(line_part);
                        let line = std::mem::take(&mut self.line);
                        self.process_line(&line, out);
                        self.line = line;
                        self.line.clear();
                    }
                    bytes = rest;
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    break;
                }
            }
        }
    }

    /// Whether bytes of an event that was never terminated are buffered
    /// (the connection closed mid-event).
    pub fn has_partial(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    fn process_line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix("\u{feff}".as_bytes()) {
                line = rest;
            }
        }
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event = None;
            self.has_data = false;
            self.data.clear();
            return;
        }
        if line.first() == Some(&b':') {
            return; // comment
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let value = line.get(i + 1..).unwrap_or_default();
                let value = value.strip_prefix(b" ").unwrap_or(value);
                (line.get(..i).unwrap_or_default(), value)
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(value.into_owned()),
            // `id` and `retry` are for browser reconnection; model APIs do
            // not resume streams, so they are ignored.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        (out, p.has_partial())
    }

    const SAMPLE: &str = "event: message_start\ndata: {\"a\":1}\n\n: comment\nevent: ping\ndata: {}\n\ndata: line1\ndata: line2\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: Some("ping".into()),
                data: "{}".into(),
            },
            SseEvent {
                event: None,
                data: "line1\nline2".into(),
            },
        ]
    }

    #[test]
    fn parses_whole_input() {
        let (events, partial) = parse_all(&[SAMPLE.as_bytes()]);
        assert_eq!(events, expected());
        assert!(!partial);
    }

    #[test]
    fn any_split_point_gives_the_same_events() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = SAMPLE.replace('\n', eol);
            let bytes = text.as_bytes();
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    let (events, partial) = parse_all(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                    assert_eq!(events, expected(), "eol {eol:?} split at {i},{j}");
                    assert!(!partial);
                }
            }
        }
    }

    #[test]
    fn detects_a_cut_mid_event() {
        let (events, partial) = parse_all(&[b"data: {\"a\":1}\n\ndata: {\"b\""]);
        assert_eq!(events.len(), 1);
        assert!(partial);
        let (_, partial) = parse_all(&[b"data: {}\n"]);
        assert!(partial, "data without the blank line is not dispatched");
    }

    #[test]
    fn strips_bom_and_single_space_only() {
        let (events, _) = parse_all(&["\u{feff}data:  x\n\n".as_bytes()]);
        assert_eq!(events[0].data, " x");
    }
}
