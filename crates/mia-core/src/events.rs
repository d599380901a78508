//! One filtered event stream for every front end (`mia-code serve`'s SSE
//! and the desktop app's Channels): the Events of one session, or all, with
//! a `Lagged` notice when a slow subscriber missed some (it then reloads).

use mia_protocol::{Event, SessionId};
use tokio::sync::broadcast;

use crate::runtime::Runtime;

/// What a subscriber receives.
#[derive(Debug, Clone, PartialEq)]
pub enum EventItem {
    Event(Box<Event>),
    /// This many Events were missed: reload what is shown.
    Lagged(u64),
}

/// Events of one session (or all), in order.
#[derive(Debug)]
pub struct EventStream {
    rx: broadcast::Receiver<Event>,
    session: Option<SessionId>,
}

impl EventStream {
    /// The next item; `None` once the runtime is gone.
    pub async fn next(&mut self) -> Option<EventItem> {
        loop {
            match self.rx.recv().await {
                Ok(ev) => {
                    if self
                        .session
                        .is_some_and(|s| ev.session_id() != Some(s) && ev.also_for() != Some(s))
                    {
                        continue;
                    }
                    return Some(EventItem::Event(Box::new(ev)));
                }
                Err(broadcast::error::RecvError::Lagged(n)) => return Some(EventItem::Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl Runtime {
    /// Events from now on, of `session` only when given.
    pub fn events(&self, session: Option<SessionId>) -> EventStream {
        EventStream {
            rx: self.subscribe(),
            session,
        }
    }
}
