//! Wire and domain types shared by every mia-code crate.
//!
//! This crate holds data only: no I/O, no async runtime. Everything here is
//! `serde`-serialisable and is what the store persists, the runtime emits and
//! the UI renders.

mod event;
mod ids;
mod message;
mod permission;
mod session;

pub use event::{
    CommandSegment, Event, Op, PermissionReplyKind, PermissionRequest, RevertConflict,
    RevertSummary, TurnEnd,
};
pub use ids::{IdParseError, MessageId, PartId, SessionId, now_ms};
pub use message::{
    CONTENT_VERSION, FileChange, FileChangeKind, Message, MessageMetadata, MessageType, NewMessage,
    Part, PartContent, Role, TokenUsage,
};
pub use permission::{PermissionAction, PermissionRule};
pub use session::{ForkInfo, Session, SessionStatus};
