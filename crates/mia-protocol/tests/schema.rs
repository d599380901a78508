//! The committed protocol schema (source of the UI's TypeScript types) must
//! match the Rust types. `MIA_UPDATE_SCHEMA=1` rewrites it.

#[test]
fn committed_protocol_schema_is_current() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/protocol.schema.json");
    let mut fresh = serde_json::to_string_pretty(&mia_protocol::protocol_schema()).unwrap();
    fresh.push('\n');
    if std::env::var_os("MIA_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "schema/protocol.schema.json is out of date; run `MIA_UPDATE_SCHEMA=1 cargo test -p mia-protocol --test schema` and then `npm run gen:types` in ui/"
    );
}
