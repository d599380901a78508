//! One filtered, resumable event stream for every front end (`mia-code
//! serve`'s SSE and the desktop app's Channels).
//!
//! Every Event of a session gets that session's next sequence number (from
//! 1, per process). The runtime keeps the last [`RING`] Events of each
//! recently active session, so a client that lost its stream says where it
//! was ([`Resume`]: the process's epoch and the last number it saw of each
//! session) and gets exactly what it missed, instead of reloading. When that
//! is no longer possible (another process: the epoch changed; a gap longer
//! than the ring) the stream's first item says which sessions to reload.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use mia_protocol::{Event, SessionId};
use tokio::sync::broadcast;

use crate::runtime::{Runtime, lock};

/// Events kept per session for resuming streams.
pub const RING: usize = 2048;
/// Sessions whose recent Events are kept (the least recently active lose
/// theirs first; their numbers are kept).
pub const RINGS: usize = 64;

/// An Event with its session's sequence number (0: the Event belongs to no
/// session, e.g. a worktree's log line).
#[derive(Debug, Clone)]
pub struct SeqEvent {
    pub seq: u64,
    pub event: Arc<Event>,
}

/// Where a client's view stands: the epoch of the process it came from and
/// the last sequence number it applied of each session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    pub epoch: String,
    pub seqs: HashMap<SessionId, u64>,
}

/// What a client must reload before the Events that follow make sense.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reset {
    /// Nothing: every session it named is resumed where it was.
    None,
    /// Everything: this is another process (or the client named none).
    All,
    /// These sessions (their missed Events are no longer kept).
    Sessions(Vec<SessionId>),
}

/// What a subscriber receives.
#[derive(Debug, Clone, PartialEq)]
pub enum EventItem {
    /// Always first: this process's epoch and what to reload.
    Hello {
        epoch: String,
        reset: Reset,
    },
    Event {
        seq: u64,
        event: Arc<Event>,
    },
    /// This many Events were missed (the subscriber was too slow): reload
    /// what is shown.
    Lagged(u64),
}

#[derive(Default)]
struct SessionLog {
    last: u64,
    ring: VecDeque<(u64, Arc<Event>)>,
    /// When it last got an Event (a counter, for evicting rings).
    touched: u64,
}

/// The sequence numbers and recent Events of every session (runtime.rs
/// emits through it; its lock orders numbering and sending).
pub(crate) struct EventLog {
    pub(crate) epoch: String,
    sessions: HashMap<SessionId, SessionLog>,
    /// How many sessions have Events kept (so evicting is only looked into past RINGS).
    rings: usize,
    clock: u64,
    tx: broadcast::Sender<SeqEvent>,
}

impl EventLog {
    pub(crate) fn new(epoch: String) -> Self {
        let (tx, _) = broadcast::channel(8192);
        Self {
            epoch,
            sessions: HashMap::new(),
            rings: 0,
            clock: 0,
            tx,
        }
    }

    /// Numbers `event`, keeps it and sends it to the streams.
    pub(crate) fn push(&mut self, event: Arc<Event>) {
        let seq = match event.session_id() {
            None => 0,
            Some(id) => {
                self.clock += 1;
                let clock = self.clock;
                let log = self.sessions.entry(id).or_default();
                log.last += 1;
                log.touched = clock;
                let seq = log.last;
                let fresh = log.ring.is_empty();
                if log.ring.len() == RING {
                    log.ring.pop_front();
                }
                log.ring.push_back((seq, Arc::clone(&event)));
                if fresh {
                    self.rings += 1;
                    self.evict();
                }
                seq
            }
        };
        let _ = self.tx.send(SeqEvent { seq, event });
    }

    /// The last number given to `session`'s Events (0: none yet).
    pub(crate) fn last(&self, session: SessionId) -> u64 {
        self.sessions.get(&session).map_or(0, |l| l.last)
    }

    /// What a stream resumed from `resume` must reload, and the kept Events
    /// it missed (of `filter` only, when given).
    fn replay(
        &self,
        session: Option<SessionId>,
        resume: Option<&Resume>,
    ) -> (Reset, VecDeque<SeqEvent>) {
        let mut replay = VecDeque::new();
        let reset = match resume {
            None => Reset::All,
            Some(r) if r.epoch != self.epoch => Reset::All,
            Some(r) => {
                let mut lost = Vec::new();
                let mut from: Vec<(SessionId, u64)> =
                    r.seqs.iter().map(|(id, seq)| (*id, *seq)).collect();
                from.sort();
                for (id, seen) in from {
                    let Some(s) = self.sessions.get(&id) else {
                        // Nothing was numbered here: a client ahead of us is confused.
                        if seen > 0 {
                            lost.push(id);
                        }
                        continue;
                    };
                    if seen >= s.last {
                        if seen > s.last {
                            lost.push(id);
                        }
                        continue;
                    }
                    let first = s.ring.front().map_or(u64::MAX, |(n, _)| *n);
                    if seen + 1 < first {
                        lost.push(id);
                        continue;
                    }
                    for (n, ev) in s.ring.iter().filter(|(n, _)| *n > seen) {
                        if wanted(session, ev) {
                            replay.push_back(SeqEvent {
                                seq: *n,
                                event: Arc::clone(ev),
                            });
                        }
                    }
                }
                if lost.is_empty() {
                    Reset::None
                } else {
                    Reset::Sessions(lost)
                }
            }
        };
        (reset, replay)
    }

    fn evict(&mut self) {
        if self.rings <= RINGS {
            return;
        }
        if let Some(oldest) = self
            .sessions
            .values_mut()
            .filter(|l| !l.ring.is_empty())
            .min_by_key(|l| l.touched)
        {
            oldest.ring = VecDeque::new();
            self.rings -= 1;
        }
    }
}

/// Events of one session (or all), in order, after a [`EventItem::Hello`].
#[derive(Debug)]
pub struct EventStream {
    hello: Option<EventItem>,
    replay: VecDeque<SeqEvent>,
    rx: broadcast::Receiver<SeqEvent>,
    session: Option<SessionId>,
}

impl EventStream {
    /// The next item; `None` once the runtime is gone.
    pub async fn next(&mut self) -> Option<EventItem> {
        if let Some(hello) = self.hello.take() {
            return Some(hello);
        }
        if let Some(e) = self.replay.pop_front() {
            return Some(EventItem::Event {
                seq: e.seq,
                event: e.event,
            });
        }
        loop {
            match self.rx.recv().await {
                Ok(e) => {
                    if !wanted(self.session, &e.event) {
                        continue;
                    }
                    return Some(EventItem::Event {
                        seq: e.seq,
                        event: e.event,
                    });
                }
                Err(broadcast::error::RecvError::Lagged(n)) => return Some(EventItem::Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

fn wanted(filter: Option<SessionId>, ev: &Event) -> bool {
    filter.is_none_or(|s| ev.session_id() == Some(s) || ev.also_for() == Some(s))
}

impl Runtime {
    /// Events from now on, of `session` only when given.
    pub fn events(&self, session: Option<SessionId>) -> EventStream {
        self.events_since(session, None)
    }

    /// Events of `session` (or all), resumed from `resume` when given: the
    /// Events each named session had after the number given come first
    /// (those still kept), then live ones. The first item says what could
    /// not be resumed.
    pub fn events_since(&self, session: Option<SessionId>, resume: Option<&Resume>) -> EventStream {
        let log = lock(&self.inner.log);
        // Subscribing and copying under the lock that numbers and sends:
        // every Event is either copied here or received, never both.
        let rx = log.tx.subscribe();
        let (reset, replay) = log.replay(session, resume);
        let hello = EventItem::Hello {
            epoch: log.epoch.clone(),
            reset,
        };
        EventStream {
            hello: Some(hello),
            replay,
            rx,
            session,
        }
    }

    /// This process's epoch: resuming a stream works only within it.
    pub fn epoch(&self) -> String {
        lock(&self.inner.log).epoch.clone()
    }

    /// The last sequence number of `session`'s Events (0: none yet in this
    /// process). Read before a session is loaded, it tells a client which
    /// Events the load may already contain.
    pub fn event_seq(&self, session: SessionId) -> u64 {
        lock(&self.inner.log).last(session)
    }
}

/// A `since` that is not `SESSION:SEQ[,SESSION:SEQ...]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`since` must be SESSION:SEQ pairs separated by commas ({0})")]
pub struct ResumeParseError(String);

impl Resume {
    /// `epoch` plus `since` as `SESSION:SEQ,SESSION:SEQ` (the form the
    /// Events stream's query takes).
    pub fn parse(epoch: &str, since: &str) -> Result<Self, ResumeParseError> {
        let mut seqs = HashMap::new();
        for pair in since.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (id, seq) = pair
                .split_once(':')
                .ok_or_else(|| ResumeParseError(format!("`{pair}` has no `:`")))?;
            let id: SessionId = id
                .parse()
                .map_err(|e| ResumeParseError(format!("`{id}`: {e}")))?;
            let seq: u64 = seq
                .parse()
                .map_err(|_| ResumeParseError(format!("`{seq}` is not a number")))?;
            seqs.insert(id, seq);
        }
        Ok(Self {
            epoch: epoch.to_string(),
            seqs,
        })
    }
}

impl Reset {
    /// How front ends send it: `"none"`, `"all"` or the session ids.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::None => serde_json::Value::from("none"),
            Self::All => serde_json::Value::from("all"),
            Self::Sessions(ids) => ids.iter().map(|id| id.to_string()).collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn delta(id: SessionId, n: usize) -> Arc<Event> {
        Arc::new(Event::TextDelta {
            session_id: id,
            message_id: mia_protocol::MessageId::new(),
            text: n.to_string(),
        })
    }

    fn resume(log: &EventLog, id: SessionId, seen: u64) -> Resume {
        Resume {
            epoch: log.epoch.clone(),
            seqs: HashMap::from([(id, seen)]),
        }
    }

    #[test]
    fn a_gap_longer_than_the_ring_or_another_epoch_is_a_reload() {
        let mut log = EventLog::new("e1".into());
        let (a, b) = (SessionId::new(), SessionId::new());
        for n in 0..RING + 10 {
            log.push(delta(a, n));
        }
        log.push(delta(b, 0));
        assert_eq!(log.last(a), (RING + 10) as u64);
        assert_eq!(log.last(b), 1);
        // Within the ring: the missed ones, in order, of that session only.
        let (reset, replay) = log.replay(None, Some(&resume(&log, a, (RING + 5) as u64)));
        assert_eq!(reset, Reset::None);
        let seqs: Vec<u64> = replay.iter().map(|e| e.seq).collect();
        assert_eq!(
            seqs,
            ((RING + 6) as u64..=(RING + 10) as u64).collect::<Vec<_>>()
        );
        // The oldest kept one is RING + 10 - RING + 1 = 11: from 10 on it resumes, before not.
        assert_eq!(log.replay(None, Some(&resume(&log, a, 10))).0, Reset::None);
        assert_eq!(
            log.replay(None, Some(&resume(&log, a, 9))).0,
            Reset::Sessions(vec![a])
        );
        // Up to date: nothing to send.
        let (reset, replay) = log.replay(None, Some(&resume(&log, b, 1)));
        assert_eq!((reset, replay.len()), (Reset::None, 0));
        // A filter keeps the other session's Events out.
        let mut both = resume(&log, a, (RING + 9) as u64);
        both.seqs.insert(b, 0);
        let (_, replay) = log.replay(Some(b), Some(&both));
        assert_eq!(replay.len(), 1);
        assert_eq!(replay[0].event.session_id(), Some(b));
        // Another process, or none named: everything.
        let mut other = resume(&log, a, 5);
        other.epoch = "e0".into();
        assert_eq!(log.replay(None, Some(&other)).0, Reset::All);
        assert_eq!(log.replay(None, None).0, Reset::All);
    }

    #[test]
    fn only_the_most_recently_active_sessions_keep_their_events_but_all_keep_their_numbers() {
        let mut log = EventLog::new("e".into());
        let ids: Vec<SessionId> = (0..RINGS + 3).map(|_| SessionId::new()).collect();
        for id in &ids {
            log.push(delta(*id, 0));
            log.push(delta(*id, 1));
        }
        let kept = log.sessions.values().filter(|l| !l.ring.is_empty()).count();
        assert_eq!(kept, RINGS);
        // The first sessions lost their Events: resuming them is a reload, and
        // their numbers go on where they were.
        assert_eq!(
            log.replay(None, Some(&resume(&log, ids[0], 1))).0,
            Reset::Sessions(vec![ids[0]])
        );
        log.push(delta(ids[0], 2));
        assert_eq!(log.last(ids[0]), 3);
        let last = *ids.last().unwrap();
        assert_eq!(log.replay(None, Some(&resume(&log, last, 0))).1.len(), 2);
    }

    #[test]
    fn since_is_parsed_or_refused_with_the_reason() {
        let id = SessionId::new();
        let r = Resume::parse("e", &format!("{id}:4, ")).unwrap();
        assert_eq!(r.seqs[&id], 4);
        assert!(Resume::parse("e", "").unwrap().seqs.is_empty());
        let e = Resume::parse("e", &format!("{id}=4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no `:`"), "{e}");
        let e = Resume::parse("e", &format!("{id}:x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a number"), "{e}");
        assert!(Resume::parse("e", "nope:1").is_err());
    }
}
