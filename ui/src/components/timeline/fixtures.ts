import type { FileDiff, RevertPreview, RevertSummary, TimelineStep } from "../../protocol/generated";

/** Local time on the test machine, so `HH:MM:SS` is predictable in any time zone. */
const at = (h: number, m: number, s: number) => new Date(2026, 10, 29, h, m, s).getTime();

const MSG_1 = "0193a1b2-0001-7000-8000-000000000001";
const MSG_2 = "0193a1b2-0003-7000-8000-000000000003";
const MSG_3 = "0193a1b2-0007-7000-8000-000000000007";

export const steps: TimelineStep[] = [
  {
    index: 1,
    id: "step-1",
    message_id: MSG_1,
    tool_call_id: "call-1",
    tool: "edit",
    kind: "tool",
    before: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    after: "a1b2c3d4e5f60718293a4b5c6d7e8f9011121314",
    changes: [{ path: "src/auth.ts", kind: "modified", additions: 15, deletions: 3 }],
    undone: false,
    created_at: at(10, 5, 3),
  },
  {
    index: 2,
    id: "step-2",
    message_id: MSG_2,
    tool_call_id: "call-2",
    tool: "write",
    kind: "tool",
    before: "a1b2c3d4e5f60718293a4b5c6d7e8f9011121314",
    after: "b2c3d4e5f60718293a4b5c6d7e8f901112131415",
    changes: [
      { path: "src/types.ts", kind: "added", additions: 22, deletions: 0 },
      { path: "src/utils.ts", kind: "modified", additions: 4, deletions: 1 },
    ],
    undone: false,
    created_at: at(10, 12, 45),
  },
  {
    index: 3,
    id: "step-3",
    message_id: MSG_3,
    tool_call_id: "call-3",
    tool: "bash",
    kind: "tool",
    before: "b2c3d4e5f60718293a4b5c6d7e8f901112131415",
    after: "c3d4e5f60718293a4b5c6d7e8f90111213141516",
    changes: [{ path: "src/old.ts", kind: "deleted", additions: 0, deletions: 40 }],
    uncaptured: ["assets/logo.bin"],
    undone: true,
    created_at: at(10, 30, 9),
  },
  {
    index: 4,
    id: "step-4",
    message_id: MSG_3,
    kind: "revert",
    before: "c3d4e5f60718293a4b5c6d7e8f90111213141516",
    after: "b2c3d4e5f60718293a4b5c6d7e8f901112131415",
    changes: [{ path: "src/old.ts", kind: "added", additions: 40, deletions: 0 }],
    undone: false,
    created_at: at(10, 31, 0),
  },
];

const typesDiff: FileDiff = {
  file: "src/types.ts",
  status: "deleted",
  before: "export type Id = string;\n",
  after: "",
  additions: 0,
  deletions: 1,
  hunks: [
    {
      startBefore: 1,
      linesBefore: 1,
      startAfter: 0,
      linesAfter: 0,
      lines: [{ type: "delete", content: "export type Id = string;", lineNumber: 1, oldLine: 1 }],
    },
  ],
};

/** Undoing step 2: a created file is removed, a modified one restored. */
export const undoStep2Preview: RevertPreview = {
  action: { action: "undo", step: "step-2" },
  steps: ["step-2"],
  files: [
    { path: "src/types.ts", action: "remove", was: "added" },
    { path: "src/utils.ts", action: "restore", was: "modified" },
  ],
  additions: 1,
  deletions: 23,
  diff: [typesDiff],
  unrestorable: [],
};

/** Reverting to before message 1, with a file edited by hand since. */
export const revertToMsg1Preview: RevertPreview = {
  action: { action: "revert", message_id: MSG_1 },
  steps: ["step-1", "step-2"],
  files: [
    { path: "src/auth.ts", action: "restore", was: "modified", conflict: "modified outside mia-code at 10:40:12" },
    { path: "src/types.ts", action: "remove", was: "added" },
    { path: "src/utils.ts", action: "restore", was: "modified" },
  ],
  additions: 4,
  deletions: 41,
  diff: [typesDiff],
  unrestorable: ["assets/logo.bin"],
};

export const undoStep2Summary: RevertSummary = {
  applied: true,
  conflicts: [],
  message:
    "Reverted to snapshot a1b2c3d (before message msg-003):\n  - src/types.ts: removed (was created)\n  - src/utils.ts: restored (was modified)",
  removed: ["src/types.ts"],
  restored: ["src/utils.ts"],
};

/** What a 409 answer carries: nothing changed. */
export const refusedSummary: RevertSummary = {
  applied: false,
  conflicts: [{ path: "src/utils.ts", reason: "changed outside mia-code since step #2" }],
  message: "Nothing was reverted: 1 file changed outside mia-code.",
  removed: [],
  restored: [],
};

export const forcedSummary: RevertSummary = {
  applied: true,
  conflicts: [
    {
      path: "src/auth.ts",
      reason: "modified outside mia-code at 10:40:12",
      backup: ".mia-code/backups/20261129-104500/src/auth.ts",
    },
  ],
  message: "Reverted 3 files to snapshot 4b825dc (before message msg-001).",
  removed: ["src/types.ts"],
  restored: ["src/auth.ts", "src/utils.ts"],
};

export { MSG_1, MSG_2, MSG_3 };
