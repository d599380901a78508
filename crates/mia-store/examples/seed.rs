//! Fills a store with a long session, for UI benchmarks and manual checks:
//! `cargo run -p mia-store --example seed -- DATA_DB PROJECT_DIR MESSAGES [TITLE]`
//! Messages alternate user / assistant; assistant messages carry markdown,
//! a code block, a tool call and its result, tokens and cost, like real turns.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mia_protocol::{MessageMetadata, NewMessage, PartContent, Role, TokenUsage};
use mia_store::{NewSession, OpenOptions, SessionDb};

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: seed DATA_DB PROJECT_DIR MESSAGES [TITLE]";
    let db_path = args.next().expect(usage);
    let dir = args.next().expect(usage);
    let n: usize = args
        .next()
        .expect(usage)
        .parse()
        .expect("MESSAGES is a number");
    let title = args
        .next()
        .unwrap_or_else(|| format!("Long session ({n} messages)"));
    let mut db = SessionDb::open_with(OpenOptions::new(db_path)).unwrap();
    let dir = std::path::Path::new(&dir)
        .canonicalize()
        .unwrap()
        .display()
        .to_string();
    let session = db
        .create_session(NewSession {
            directory: dir,
            title,
            agent: Some("build".into()),
            ..Default::default()
        })
        .unwrap();
    for i in 0..n {
        let msg = if i % 2 == 0 {
            NewMessage::new(
                Role::User,
                vec![PartContent::Text {
                    text: format!("Question {i}: how does `module_{i}` handle errors?"),
                    synthetic: false,
                }],
            )
        } else {
            let call_id = format!("call_{i}");
            let mut m = NewMessage::new(
                Role::Assistant,
                vec![
                    PartContent::Text {
                        text: format!(
                            "Answer {i}: `module_{i}` returns a **typed error**.\n\n- it wraps I/O errors\n- it names the file\n\n```rust\nfn load_{i}() -> Result<Config, Error> {{\n    let text = std::fs::read_to_string(path)?;\n    parse(&text)\n}}\n```\n"
                        ),
                        synthetic: false,
                    },
                    PartContent::ToolCall {
                        call_id: call_id.clone(),
                        tool: "read".into(),
                        input: serde_json::json!({ "path": format!("src/module_{i}.rs") }),
                        signature: None,
                    },
                    PartContent::ToolResult {
                        call_id,
                        tool: "read".into(),
                        output: format!("fn load_{i}() {{}}\n"),
                        is_error: false,
                        duration_ms: Some(3),
                        permission: None,
                        sandbox: None,
                        hooks: Vec::new(),
                    },
                ],
            );
            m.metadata = MessageMetadata {
                model: Some("anthropic/claude-sonnet-4-5".into()),
                agent: Some("build".into()),
                tokens: Some(TokenUsage {
                    input: 1200,
                    output: 180,
                    ..Default::default()
                }),
                cost_usd: Some(0.0063),
                ..Default::default()
            };
            m
        };
        db.add_message(&session.id, msg).unwrap();
    }
    println!("{}", session.id);
}
