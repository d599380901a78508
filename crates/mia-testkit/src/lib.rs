//! Test support for mia-code.
//!
//! [`MockServer`] is a mock LLM server that speaks the Anthropic Messages,
//! OpenAI Chat Completions and Gemini `streamGenerateContent` streaming wire
//! formats on their real paths, answers from a [`Scenario`], records every
//! request and checks protocol invariants. The `mia-mock-llm` binary serves
//! the same from a scenario file for scripts and end-to-end tests. The
//! scenario format is documented in this crate's README.

pub mod forge;
pub mod git_http;
pub mod registry;
pub mod render;
pub mod repo;
pub mod request;
pub mod scenario;
mod server;

pub use request::{ApiKind, Item, Msg, RecordedRequest, check_invariants};
pub use scenario::{
    EventSpec, Matcher, Response, Scenario, ScenarioError, Step, StreamError, ToolCallSpec, Usage,
};
pub use server::{MockServer, StalledListener};
