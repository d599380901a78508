//! Deciding whether to compact (issue: compaction). Not a test: prints
//! figures and a ratio. Budget: ≤ 1 ms per request at 2,000 messages.
//!
//! Ours: `compaction::decide` over the visible history with the per-message
//! estimates cached across requests (what every step does; one new message
//! per step). Baseline, measured in the same run: estimating by
//! re-serialising the whole history each time (`serde_json::to_string` of
//! every message, length / 4), as a decision without the cache would.
//!
//! Run: `cargo bench -p mia-core --bench compaction`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use mia_core::compaction::{Estimates, Settings, decide};
use mia_protocol::{
    Message, MessageId, MessageMetadata, MessageType, Part, PartContent, PartId, Role, SessionId,
};

const MESSAGES: usize = 2_000;

fn message(n: usize) -> Message {
    let id = MessageId::new();
    let contents = if n.is_multiple_of(2) {
        vec![PartContent::text(format!(
            "Please look at module {n} and fix the failing test."
        ))]
    } else {
        vec![
            PartContent::text("Reading the file first.".to_string()),
            PartContent::ToolCall {
                call_id: format!("c{n}"),
                tool: "read".into(),
                input: serde_json::json!({"path": format!("src/module_{n}.rs")}),
                signature: None,
            },
            PartContent::ToolResult {
                call_id: format!("c{n}"),
                tool: "read".into(),
                output: "fn main() {\n    println!(\"hello\");\n}\n".repeat(20),
                is_error: false,
                duration_ms: Some(3),
                permission: None,
                sandbox: None,
                hooks: Vec::new(),
            },
        ]
    };
    Message {
        id,
        session_id: SessionId::new(),
        role: if n.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        message_type: MessageType::Normal,
        metadata: MessageMetadata::default(),
        created_at: 0,
        compacted_by: None,
        parts: contents
            .into_iter()
            .enumerate()
            .map(|(i, content)| Part {
                id: PartId::new(),
                message_id: id,
                index: i as u32,
                created_at: 0,
                content,
            })
            .collect(),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let settings = Settings {
        enabled: true,
        auto: true,
        threshold: 100_000,
        retain: 20,
        ratio: 0.8,
        reserved: None,
        model: None,
    };
    let mut history: Vec<Message> = (0..MESSAGES).map(message).collect();
    let mut est = Estimates::default();
    let cold = {
        let refs: Vec<&Message> = history.iter().collect();
        let t = Instant::now();
        std::hint::black_box(decide(&settings, &refs, 2_000, u64::MAX, &mut est));
        t.elapsed()
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for n in 0..50 {
        history.push(message(MESSAGES + n));
        let refs: Vec<&Message> = history.iter().collect();
        let t = Instant::now();
        std::hint::black_box(decide(&settings, &refs, 2_000, u64::MAX, &mut est));
        ours.push(t.elapsed());
        let t = Instant::now();
        let chars: usize = history
            .iter()
            .map(|m| serde_json::to_string(m).unwrap().len())
            .sum();
        std::hint::black_box(chars / 4 > 1_000_000);
        theirs.push(t.elapsed());
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!("history: {MESSAGES}+ messages (half with a read call and a 700-byte result)");
    println!("{:<56} {:>10}", "operation (median of 50 requests)", "time");
    println!(
        "{:<56} {:>7.3} ms",
        "decide, estimates cached (one new message per request)",
        ours.as_secs_f64() * 1e3
    );
    println!(
        "{:<56} {:>7.3} ms",
        "  first request of a process (every estimate computed)",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "{:<56} {:>7.3} ms",
        "baseline: re-serialise the whole history",
        theirs.as_secs_f64() * 1e3
    );
    println!(
        "ratio: {:.4}× the baseline ({:.0}× faster); budget 1 ms: {}",
        ours.as_secs_f64() / theirs.as_secs_f64(),
        theirs.as_secs_f64() / ours.as_secs_f64(),
        if ours <= Duration::from_millis(1) {
            "within"
        } else {
            "OVER"
        }
    );
}
