// Generates src/protocol/generated.ts from ../schema/protocol.schema.json
// (written from the Rust types by `MIA_UPDATE_SCHEMA=1 cargo test -p mia-protocol --test schema`).
// `--check` fails when the committed file is not what the schema gives.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = join(here, "../../schema/protocol.schema.json");
const outPath = join(here, "../src/protocol/generated.ts");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));

const ts = await compile(schema, "Protocol", {
  bannerComment:
    "/* Generated from schema/protocol.schema.json (the Rust types in crates/mia-protocol) by `npm run gen:types`. Do not edit. */",
  additionalProperties: false,
  unreachableDefinitions: true,
  strictIndexSignatures: true,
  format: true,
  style: { singleQuote: false, semi: true, printWidth: 100 },
});

if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(outPath, "utf8");
  } catch {
    /* missing counts as stale */
  }
  if (current !== ts) {
    console.error(
      "ui/src/protocol/generated.ts is out of date with schema/protocol.schema.json: run `npm run gen:types` in ui/ and commit it.",
    );
    process.exit(1);
  }
  console.log("protocol types are current");
} else {
  writeFileSync(outPath, ts);
  console.log(`wrote ${outPath}`);
}
