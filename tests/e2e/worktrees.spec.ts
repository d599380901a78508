import { test, expect } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// Two attempts at the same change, compared in the UI: the files between them,
// one file taken into the main tree, one attempt promoted (merged into main),
// the other removed after the confirmation that says what it would lose.
const scenario = { name: "worktrees (no model calls)", steps: [] };

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

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

function write(root: string, files: Record<string, string>) {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

const git = (...args: string[]) => execFileSync("git", ["-C", stack.project, ...args], { encoding: "utf8" });

test("compare two worktrees, take a file into main, promote one and remove the other", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario);
  await page.setViewportSize({ width: 1280, height: 800 });
  const mainBefore = git("rev-parse", "main").trim();

  await page.goto(stack.openUrl);
  await page.getByTestId("open-worktrees").click();
  await expect(page.getByTestId("worktrees-empty")).toBeVisible();

  // One attempt made in the UI, one through the API.
  await page.getByTestId("worktree-name").fill("alpha");
  await page.getByTestId("worktree-create-submit").click();
  await expect(page.getByTestId("worktree-result")).toContainText("Created alpha");
  const beta = await api<{ name: string; path: string }>("POST", "/api/worktrees", { directory: stack.project, name: "beta" });
  const list = await api<{ name: string; path: string }[]>(
    "GET",
    `/api/worktrees?directory=${encodeURIComponent(stack.project)}`,
  );
  const alpha = list.find((w) => w.name === "alpha")!;
  expect(alpha).toBeTruthy();

  write(alpha.path, { "shared.txt": "from alpha\n", "src/only-a.ts": "export const a = 1;\n", "same.txt": "same\n" });
  write(beta.path, { "shared.txt": "from beta\n", "src/only-b.ts": "export const b = 2;\n", "same.txt": "same\n" });

  await page.getByRole("button", { name: "Refresh the list" }).click();
  await expect(page.getByTestId("worktree-row")).toHaveCount(2);
  await expect(page.locator('[data-testid="worktree-row"][data-name="beta"]')).toContainText("uncommitted");
  await shot(page, testInfo, "21-worktrees");

  await page.getByTestId("open-compare").click();
  const compare = page.getByTestId("compare");
  await compare.getByTestId("compare-a").selectOption("alpha");
  await compare.getByTestId("compare-b").selectOption("beta");
  const rows = compare.getByTestId("between-row");
  await expect(rows).toHaveCount(4);
  const row = (path: string) => compare.locator(`[data-testid="between-row"][data-path="${path}"]`);
  await expect(row("same.txt")).toContainText("same in both");
  await expect(row("src/only-a.ts")).toContainText("only in A");
  await expect(row("src/only-b.ts")).toContainText("only in B");
  await expect(row("shared.txt")).toContainText("both differ");
  await expect(compare.getByTestId("attempt-a")).toContainText("alpha");

  await row("shared.txt").click();
  await expect(compare.getByTestId("diff-a")).toContainText("from alpha");
  await expect(compare.getByTestId("diff-b")).toContainText("from beta");
  // Fits the window: nothing scrolls the page sideways.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, testInfo, "20-compare");

  // Keyboard: the list moves with the arrows.
  await compare.getByTestId("between").focus();
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowUp");
  await expect(row("src/only-a.ts")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowDown");
  await expect(row("src/only-b.ts")).toHaveAttribute("aria-selected", "true");
  await expect(compare.getByTestId("take-main-from")).toHaveValue("b");
  await compare.getByTestId("take-into-main").click();
  await until("B's file in the project", () => stack.read("src/only-b.ts") === "export const b = 2;\n");

  await compare.getByTestId("promote-a").click();
  await page.getByTestId("promote-confirm").click();
  const result = page.getByTestId("promote-result");
  await expect(result).toContainText("merged into main");
  expect(git("log", "--format=%s", "main")).toContain("mia-code: attempt alpha");
  const mainAfter = git("rev-parse", "main").trim();
  expect(mainAfter).not.toBe(mainBefore);
  expect(git("show", "main:shared.txt")).toBe("from alpha\n");
  expect(stack.read("shared.txt")).toBe("from alpha\n");

  // beta has uncommitted work: removing it asks first, saying so.
  await result.locator('[data-testid="promote-other"][data-name="beta"]').getByTestId("remove-other").click();
  const confirm = page.getByTestId("worktree-remove-confirm");
  await expect(confirm).toContainText("would lose 3 untracked file(s) (same.txt, shared.txt, src/only-b.ts)");
  await shot(page, testInfo, "22-promoted");
  await confirm.getByTestId("worktree-remove-force").click();
  await expect(result.locator('[data-testid="promote-other"][data-name="beta"]')).toContainText("removed");
  await until("beta gone", () => !git("worktree", "list").includes(beta.path));

  // What the forced remove dropped is in the trash, and comes back.
  await page.getByTestId("promote-back").click();
  const trash = page.getByTestId("worktree-trash");
  await trash.getByText("Trash", { exact: true }).click();
  const entry = trash.getByTestId("worktree-trash-entry");
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText("beta removed");
  const into = join(stack.root, "beta-restored");
  await trash.getByTestId("worktree-trash-into").fill(into);
  await entry.getByTestId("worktree-trash-restore").click();
  await until("beta's files restored", () => {
    try {
      return readFileSync(join(into, "shared.txt"), "utf8") === "from beta\n";
    } catch {
      return false;
    }
  });
  await shot(page, testInfo, "23-worktree-trash");
});
