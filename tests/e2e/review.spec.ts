import { test, expect, type Page } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// Review and ship: comments on lines of the session's changes sent to the
// agent as one message (what the model receives is read from the mock's
// record), one hunk staged from the review pane (the index holds exactly
// it), and the direct A↔B diff of a file two worktrees changed.

const APP_BEFORE = 'export function greet(name: string): string {\n  return "hello " + name;\n}\n';
const APP_AFTER = 'export function greet(name: string): string {\n  return "hello, " + name + "!";\n}\n';
const COMMENT = "Use a template literal here";

const scenario = {
  name: "review and ship",
  steps: [
    {
      match: { last_message_contains: "Start reviewing" },
      response: { events: [{ text: "Ready for your review." }] },
    },
    {
      // The review's one message (mia-core review_message).
      match: { last_message_contains: COMMENT },
      response: { events: [{ text: "Switched greet to a template literal." }] },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

const git = (dir: string, ...args: string[]) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" });

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${stack.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A session exists once its first message is sent: send one and wait for the answer. */
async function startSession(page: Page) {
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Start reviewing");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Ready for your review.");
  await expect(page.getByTestId("stop")).toBeHidden();
}

/** The text of the last user message of a recorded Anthropic request. */
function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return (last.content as { type?: string; text?: string }[])
    .map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : ""))
    .join("\n");
}

test("comments on lines of the session diff reach the model as one message", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario);
  await page.setViewportSize({ width: 1500, height: 900 });
  await startSession(page);
  // An uncommitted change to review.
  writeFileSync(join(stack.project, "src/app.ts"), APP_AFTER);

  await page.getByTestId("open-review").click();
  const pane = page.getByTestId("review-pane");
  await expect(pane).toBeVisible();
  const diff = pane.getByTestId("review-diff-uncommitted");
  const file = diff.locator('[data-testid="diff-file"][data-path="src/app.ts"]');
  await expect(file).toContainText('"hello, " + name + "!"');
  // Words that changed are marked inside the changed line.
  await expect(file.locator(".mia-diff-word").first()).toBeVisible();

  // Line 1, then Shift+click line 2: a comment on lines 1–2.
  await file.locator('[data-testid="diff-gutter"][data-line="1"]').click();
  const editor = diff.getByTestId("review-comment-editor");
  await expect(editor).toContainText("src/app.ts:1");
  await file.locator('[data-testid="diff-gutter"][data-line="2"]').click({ modifiers: ["Shift"] });
  await expect(editor).toContainText("src/app.ts:1–2");
  await editor.getByTestId("review-comment-text").fill(COMMENT);
  await editor.getByTestId("review-comment-save").click();

  const comment = pane.getByTestId("review-comment");
  await expect(comment).toHaveCount(1);
  await expect(comment.getByTestId("review-comment-where")).toHaveText("src/app.ts:1–2");
  await expect(comment.getByTestId("review-comment-quote")).toContainText('return "hello, " + name + "!";');
  await expect(comment).toContainText(COMMENT);
  await expect(diff.getByTestId("review-inline-comment")).toContainText(COMMENT);
  await shot(page, testInfo, "30-review-comment");

  await pane.getByTestId("review-send").click();
  await expect(pane.getByTestId("review-comments-empty")).toBeVisible();
  // The turn is in the transcript: the review message and the answer.
  await expect(page.getByTestId("message-user").last()).toContainText(COMMENT);
  await expect(page.getByTestId("message-assistant").last()).toContainText("Switched greet to a template literal.");

  // What the model received: the file, the range, the quoted lines and the comment.
  await stack.stop();
  const record = JSON.parse(readFileSync(join(testInfo.outputDir, "mock-record.json"), "utf8")) as {
    requests: { body: unknown; step: number | null }[];
  };
  const sent = record.requests.map((r) => lastUserText(r.body)).filter((t) => t.includes(COMMENT));
  expect(sent).toHaveLength(1);
  const text = sent[0]!;
  expect(text).toContain("src/app.ts");
  expect(text).toMatch(/lines 1-2/);
  expect(text).toContain("export function greet(name: string): string {");
  expect(text).toContain('return "hello, " + name + "!";');
  expect(text).toContain(COMMENT);
});

test("staging one hunk in the review pane stages exactly that hunk", async ({ page }, testInfo) => {
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  stack = await startStack(testInfo, scenario, {
    files: { "README.md": "# Sample\n", "src/app.ts": APP_BEFORE, "notes.txt": lines.join("\n") + "\n" },
  });
  await page.setViewportSize({ width: 1500, height: 900 });
  await startSession(page);
  // Two changes far apart: two hunks.
  const changed = [...lines];
  changed[1] = "line 2 changed";
  changed[27] = "line 28 changed";
  writeFileSync(join(stack.project, "notes.txt"), changed.join("\n") + "\n");

  await page.getByTestId("open-review").click();
  const pane = page.getByTestId("review-pane");
  const unstaged = pane.getByTestId("hunks-unstaged");
  const stage = unstaged.getByTestId("hunk-stage");
  await expect(stage).toHaveCount(2);
  const first = unstaged.locator('[data-testid="diff-hunk"]').first();
  await expect(first).toContainText("@@ -1,");
  await first.getByTestId("hunk-stage").click();

  const staged = pane.getByTestId("hunks-staged");
  await expect(staged.getByTestId("hunk-unstage")).toHaveCount(1);
  await expect(unstaged.getByTestId("hunk-stage")).toHaveCount(1);
  await expect(staged).toContainText("line 2 changed");
  await expect(pane.getByTestId("git-status")).toContainText("1 staged");
  await shot(page, testInfo, "31-review-staged");

  const cached = git(stack.project, "diff", "--cached", "--", "notes.txt");
  expect(cached).toContain("-line 2\n+line 2 changed");
  expect(cached).not.toContain("line 28 changed");
  expect(cached.match(/^@@/gm)).toHaveLength(1);
  // The other hunk is still in the work tree only.
  expect(git(stack.project, "diff", "--", "notes.txt")).toContain("+line 28 changed");
  expect(git(stack.project, "diff", "--", "notes.txt")).not.toContain("+line 2 changed");
});

test("the direct A↔B diff of a file two worktrees changed", async ({ page }, testInfo) => {
  const base = Array.from({ length: 12 }, (_, i) => `shared ${i + 1}`);
  stack = await startStack(testInfo, { name: "compare (no model calls)", steps: [] }, {
    files: { "README.md": "# Sample\n", "shared.txt": base.join("\n") + "\n" },
  });
  await page.setViewportSize({ width: 1400, height: 900 });
  const alpha = await api<{ name: string; path: string }>("POST", "/api/worktrees", { directory: stack.project, name: "alpha" });
  const beta = await api<{ name: string; path: string }>("POST", "/api/worktrees", { directory: stack.project, name: "beta" });
  const a = [...base];
  a[1] = "shared 2 from alpha";
  const b = [...base];
  b[10] = "shared 11 from beta";
  writeFileSync(join(alpha.path, "shared.txt"), a.join("\n") + "\n");
  writeFileSync(join(beta.path, "shared.txt"), b.join("\n") + "\n");

  await page.goto(stack.openUrl);
  await page.getByTestId("open-worktrees").click();
  await expect(page.getByTestId("worktree-row")).toHaveCount(2);
  await page.getByTestId("open-compare").click();
  const compare = page.getByTestId("compare");
  await compare.getByTestId("compare-a").selectOption("alpha");
  await compare.getByTestId("compare-b").selectOption("beta");
  const row = compare.locator('[data-testid="between-row"][data-path="shared.txt"]');
  await expect(row).toContainText("both differ");
  await row.click();

  // Base: each attempt against the base.
  await expect(compare.getByTestId("cmp-view-base")).toHaveAttribute("aria-pressed", "true");
  await expect(compare.getByTestId("diff-a")).toContainText("shared 2 from alpha");
  // A ↔ B: A's version against B's, directly.
  await compare.getByTestId("cmp-view-between").click();
  const between = compare.getByTestId("between-diff");
  await expect(between.getByTestId("diff-line-del").filter({ hasText: "shared 2 from alpha" })).toHaveCount(1);
  await expect(between.getByTestId("diff-line-add").filter({ hasText: "shared 2" })).toHaveCount(1);
  await expect(between.getByTestId("diff-line-del").filter({ hasText: "shared 11" })).toHaveCount(1);
  await expect(between.getByTestId("diff-line-add").filter({ hasText: "shared 11 from beta" })).toHaveCount(1);
  await shot(page, testInfo, "32-compare-between");

  // One hunk of A taken into B: B keeps its own change and gains A's.
  await compare.getByTestId("cmp-view-base").click();
  await compare.getByTestId("diff-a").getByTestId("take-hunk").first().click();
  const betaFile = join(beta.path, "shared.txt");
  await until("A's hunk in B", () => existsSync(betaFile) && readFileSync(betaFile, "utf8").includes("shared 2 from alpha"));
  const now = readFileSync(betaFile, "utf8");
  expect(now).toContain("shared 11 from beta");
  expect(now.split("\n")).toHaveLength(13);
});
