import type { DiffView as DiffViewData, FileDiff } from "../../protocol/generated";

const authBefore = `import { hash } from "./crypto";

export const TTL = 60;

export function login(user: string, password: string) {
  return hash(user + password);
}
`;
const authAfter = `import { hash } from "./crypto";
import { audit } from "./audit";

export const TTL = 3600;

export function login(user: string, password: string) {
  audit("login", user);
  return hash(user + password);
}
`;

/** A modified TypeScript file: one line replaced, two added. */
export const authDiff: FileDiff = {
  file: "src/auth.ts",
  status: "modified",
  before: authBefore,
  after: authAfter,
  additions: 3,
  deletions: 1,
  oldMode: "100644",
  newMode: "100644",
  hunks: [
    {
      startBefore: 1,
      linesBefore: 7,
      startAfter: 1,
      linesAfter: 9,
      lines: [
        { type: "context", content: 'import { hash } from "./crypto";', lineNumber: 1, oldLine: 1, newLine: 1 },
        { type: "add", content: 'import { audit } from "./audit";', lineNumber: 2, newLine: 2 },
        { type: "context", content: "", lineNumber: 3, oldLine: 2, newLine: 3 },
        { type: "delete", content: "export const TTL = 60;", lineNumber: 3, oldLine: 3 },
        { type: "add", content: "export const TTL = 3600;", lineNumber: 4, newLine: 4 },
        { type: "context", content: "", lineNumber: 5, oldLine: 4, newLine: 5 },
        {
          type: "context",
          content: "export function login(user: string, password: string) {",
          lineNumber: 6,
          oldLine: 5,
          newLine: 6,
        },
        { type: "add", content: '  audit("login", user);', lineNumber: 7, newLine: 7 },
        { type: "context", content: "  return hash(user + password);", lineNumber: 8, oldLine: 6, newLine: 8 },
        { type: "context", content: "}", lineNumber: 9, oldLine: 7, newLine: 9 },
      ],
    },
  ],
};

/** A new file. */
export const auditDiff: FileDiff = {
  file: "src/audit.ts",
  status: "added",
  before: "",
  after: 'export function audit(event: string, who: string) {\n  console.log(event, who);\n}',
  additions: 3,
  deletions: 0,
  newMode: "100644",
  hunks: [
    {
      startBefore: 0,
      linesBefore: 0,
      startAfter: 1,
      linesAfter: 3,
      lines: [
        { type: "add", content: "export function audit(event: string, who: string) {", lineNumber: 1, newLine: 1 },
        { type: "add", content: "  console.log(event, who);", lineNumber: 2, newLine: 2 },
        { type: "add", content: "}", lineNumber: 3, newLine: 3, noNewline: true },
      ],
    },
  ],
};

/** A deleted Python file. */
export const oldDiff: FileDiff = {
  file: "scripts/old.py",
  status: "deleted",
  before: "def main():\n    print('bye')\n",
  after: "",
  additions: 0,
  deletions: 2,
  oldMode: "100755",
  hunks: [
    {
      startBefore: 1,
      linesBefore: 2,
      startAfter: 0,
      linesAfter: 0,
      lines: [
        { type: "delete", content: "def main():", lineNumber: 1, oldLine: 1 },
        { type: "delete", content: "    print('bye')", lineNumber: 2, oldLine: 2 },
      ],
    },
  ],
};

export const logoDiff: FileDiff = {
  file: "assets/logo.png",
  status: "modified",
  before: "",
  after: "",
  binary: true,
  additions: 0,
  deletions: 0,
  hunks: [],
};

const PATCH = `diff --git a/src/auth.ts b/src/auth.ts
--- a/src/auth.ts
+++ b/src/auth.ts
@@ -1,7 +1,9 @@
 import { hash } from "./crypto";
+import { audit } from "./audit";
 
-export const TTL = 60;
+export const TTL = 3600;
`;

export const sessionDiff: DiffViewData = {
  scope: { scope: "session" },
  files: [authDiff, auditDiff, oldDiff, logoDiff],
  stats: {
    filesChanged: 4,
    filesAdded: 1,
    filesDeleted: 1,
    filesModified: 2,
    totalAdditions: 6,
    totalDeletions: 3,
    estimatedLOCImpact: 3,
  },
  summary: "4 files changed, 6 insertions(+), 3 deletions(-)",
  patch: PATCH,
};

/** A generated file with `n` added lines (for the large-diff test). */
export function bigFile(n: number): FileDiff {
  const lines = Array.from({ length: n }, (_, i) => `export const value${i} = ${i};`);
  return {
    file: "src/generated/table.ts",
    status: "added",
    before: "",
    after: lines.join("\n") + "\n",
    additions: n,
    deletions: 0,
    hunks: [
      {
        startBefore: 0,
        linesBefore: 0,
        startAfter: 1,
        linesAfter: n,
        lines: lines.map((content, i) => ({ type: "add" as const, content, lineNumber: i + 1, newLine: i + 1 })),
      },
    ],
  };
}
