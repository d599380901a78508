import { test, expect, type Locator, type Page } from "@playwright/test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scan } from "./axe";
import { startStack, type Stack } from "./harness";

// Visual regression (issue 50): every main screen in light and dark, at the smallest window the
// layout is made for and at a common laptop size, compared against the committed references in
// visual.spec.ts-snapshots/ (Playwright's default place; "-linux" is the platform suffix), plus
// the axe scan of each (serious and critical WCAG 2.1 A/AA violations fail, as in a11y.spec.ts).
//
// Deterministic by construction: what changes between runs is masked (temp paths, relative and
// absolute times, elapsed timers, commit hashes, worktree sizes), toasts are hidden (they leave on
// their own, at a time of their own), carets hidden, animations stopped, the mouse parked where
// nothing shows a tooltip, and each screen is shot once its content has settled (conditions, not
// sleeps).
//
// Regenerate the references (after a deliberate change of the look):
//   cd ui && npm run build && cd ../tests/e2e && npx playwright test visual.spec.ts --update-snapshots
// then run `npx playwright test visual.spec.ts` twice: both runs must pass.

const APP_AFTER = 'export function greet(name: string): string {\n  return "hello there, " + name;\n}\n';
const SHARED = Array.from({ length: 12 }, (_, i) => `shared ${i + 1}`);

const scenario = {
  name: "visual",
  steps: [
    {
      match: { last_message_contains: "friendlier greeting" },
      response: {
        events: [
          { text: "I'll change the **greeting** in `src/app.ts`." },
          {
            tool_call: {
              id: "toolu_edit_1",
              name: "edit",
              arguments: { path: "src/app.ts", old_string: '"hello "', new_string: '"hello there, "' },
            },
          },
        ],
      },
    },
    {
      match: { has_tool_result: "toolu_edit_1" },
      response: { events: [{ text: "Done: the greeting now says **hello there**." }] },
    },
  ],
};

// Hidden in the references (in place: the layout stays, and what an overlay covers stays
// covered): toasts (they come and go on timers of their own), and what changes from one run to
// the next (relative and absolute times, elapsed timers, a tool call's duration, a worktree's
// base commit, age and size).
const STYLE = `
  [data-testid="toast"], .toast,
  time, .session-meta, [data-testid="new-home-session"] .muted,
  [data-testid="running-elapsed"], [data-testid="fork-node-updated"],
  [data-testid="tool-card"] .tool-status + .muted.small,
  [data-testid="worktree-row"] td:nth-child(3), [data-testid="worktree-row"] td:nth-child(4),
  [data-testid="worktree-row"] td:nth-child(5) { visibility: hidden !important; }
`;

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

/** Masked: text that differs from one run to the next (temp paths, commit hashes). */
function variable(page: Page): Locator[] {
  return [
    // /tmp/mia-e2e-XXXXXX/…, e.g. where the rules are saved
    page.locator("span.mono").filter({ hasText: tmpdir() }),
    // commit hashes ("Against 47d0e3a02f6f", "common base 47d0e3a")
    page.getByText(/\b(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b/),
  ];
}

for (const [w, h] of [
  [1024, 700],
  [1440, 900],
] as const) {
  test(`every main screen matches its reference at ${w}×${h}, light and dark, with no axe violations`, async ({ page }, testInfo) => {
    test.setTimeout(100_000);
    await page.setViewportSize({ width: w, height: h });
    stack = await startStack(
      testInfo,
      scenario,
      {
        permissions: [{ permission: "edit", action: "ask" }],
        files: {
          "README.md": "# Sample project\n\nA tiny project for trying mia-code.\n",
          "src/app.ts": 'export function greet(name: string): string {\n  return "hello " + name;\n}\n',
          "shared.txt": SHARED.join("\n") + "\n",
        },
      },
    );
    // Two worktrees, each with its own change to the same file: something to list and compare.
    const alpha = await api<{ path: string }>("POST", "/api/worktrees", { directory: stack.project, name: "alpha" });
    const beta = await api<{ path: string }>("POST", "/api/worktrees", { directory: stack.project, name: "beta" });
    const a = [...SHARED];
    a[1] = "shared 2 from alpha";
    const b = [...SHARED];
    b[10] = "shared 11 from beta";
    writeFileSync(join(alpha.path, "shared.txt"), a.join("\n") + "\n");
    writeFileSync(join(beta.path, "shared.txt"), b.join("\n") + "\n");

    const out = join(testInfo.outputDir, "axe");
    const style = join(testInfo.outputDir, "visual.css");
    writeFileSync(style, STYLE);
    const problems: string[] = [];
    const html = page.locator("html");

    /** The screen in light and in dark: compared with its references, and scanned by axe. */
    const check = async (name: string, mask: Locator[] = []) => {
      // The mouse where no tooltip or hover shows (the window's bottom-right corner).
      await page.mouse.move(w - 2, h - 2);
      await expect(page.getByRole("tooltip")).toHaveCount(0);
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await expect(html).toHaveAttribute("data-theme", scheme);
        await expect.soft(page).toHaveScreenshot(`${name}-${w}x${h}-${scheme}.png`, {
          maxDiffPixelRatio: 0.01,
          animations: "disabled",
          caret: "hide",
          scale: "css",
          stylePath: style,
          mask: [...variable(page), ...mask],
        });
        problems.push(...(await scan(page, `${name}-${w}x${h}-${scheme}`, out)));
      }
      await page.emulateMedia({ colorScheme: "light" });
    };
    const palette = async (action: string) => {
      await page.keyboard.press("Control+k");
      const p = page.getByTestId("command-palette");
      await expect(p).toBeVisible();
      await p.locator(`[data-testid="palette-item"][data-action="${action}"]`).click();
      await expect(p).toBeHidden();
    };

    // 1. The project's new-session page.
    await page.goto(stack.openUrl);
    await page.getByTestId("new-session").click();
    await expect(page.getByTestId("new-session-home")).toBeVisible();
    await expect(page.getByTestId("new-home-suggestion").first()).toBeVisible();
    await check("01-new-session");

    // 2. A permission ask at its tool card (armed: the arming delay is over).
    const input = page.getByTestId("prompt-input");
    await input.fill("Make a friendlier greeting");
    await input.press("Enter");
    const ask = page.getByTestId("permission-ask");
    await expect(ask).toHaveAttribute("data-armed", "true");
    await check("02-permission-ask");

    // 3. The conversation with its edit tool card, the turn over.
    await ask.getByTestId("permission-allow-once").click();
    await expect(page.getByTestId("message-assistant").last()).toContainText("Done");
    await expect(page.getByTestId("stop")).toBeHidden();
    await expect(page.locator('[data-testid="tool-card"][data-tool="edit"]')).toBeVisible();
    await expect.poll(() => stack.read("src/app.ts")).toBe(APP_AFTER);
    await check("03-conversation");

    // 4. The command palette.
    await page.keyboard.press("Control+k");
    await expect(page.getByTestId("command-palette")).toBeVisible();
    await expect(page.getByTestId("palette-input")).toBeFocused();
    await check("04-command-palette");
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("command-palette")).toBeHidden();

    // 5. The side panel: the session's changes, then the diff of the edit.
    // (open already when the session has changes)
    const toggle = page.getByTestId("toggle-panel");
    if ((await toggle.getAttribute("aria-pressed")) !== "true") await toggle.click();
    await page.getByTestId("tab-changes").click();
    await expect(page.locator("aside.right-panel")).toBeVisible();
    await expect(page.getByTestId("timeline")).toContainText("app.ts");
    await check("05-side-panel-changes");
    await page.locator('[data-testid="tool-card"][data-tool="edit"]').getByTestId("tool-card-diff").click();
    await expect(page.getByTestId("diff-file").first()).toContainText("hello there");
    await check("06-side-panel-diff");
    await page.keyboard.press("Escape");

    // 6. The review pane: the uncommitted change of the edit.
    await page.getByTestId("open-review").click();
    const pane = page.getByTestId("review-pane");
    await expect(pane.locator('[data-testid="diff-file"][data-path="src/app.ts"]').first()).toContainText("hello there");
    await check("07-review-pane");
    await pane.getByTestId("review-close").click();
    await expect(pane).toBeHidden();

    // 7. The fork tree.
    await palette("fork-tree");
    await expect(page.getByTestId("fork-tree")).toBeVisible();
    await check("08-fork-tree");
    await page.getByTestId("fork-tree-back").click();

    // 8. Worktrees.
    await palette("worktrees");
    await expect(page.getByTestId("worktrees-view")).toBeVisible();
    await expect(page.getByTestId("worktree-row")).toHaveCount(2);
    await check("09-worktrees");

    // 9. Compare: the file both worktrees changed, A against B directly.
    await page.getByTestId("open-compare").click();
    const compare = page.getByTestId("compare");
    await compare.getByTestId("compare-a").selectOption("alpha");
    await compare.getByTestId("compare-b").selectOption("beta");
    const row = compare.locator('[data-testid="between-row"][data-path="shared.txt"]');
    await expect(row).toContainText("both differ");
    await row.click();
    await compare.getByTestId("cmp-view-between").click();
    await expect(compare.getByTestId("between-diff").getByTestId("diff-line-add").filter({ hasText: "shared 11 from beta" })).toHaveCount(1);
    await check("10-compare");
    await page.getByTestId("session-item").first().click();
    await expect(page.getByTestId("message-assistant").last()).toContainText("Done");

    // 10. Settings, at its permission rules.
    await page.getByTestId("open-settings").click();
    await expect(page.getByTestId("settings-nav")).toBeVisible();
    await page.getByTestId("settings-nav-permissions").click();
    await expect(page.getByTestId("rules-editor")).toBeVisible();
    await check("11-settings-permissions");

    expect(problems, problems.join("\n")).toEqual([]);
  });
}
