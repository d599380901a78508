import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// An edit asked at its tool card in the transcript and answered with a key; then "Restore to
// here" on the user message previews exactly which file goes back, and restores it on disk.
const original = 'export function greet(name: string): string {\n  return "hello " + name;\n}\n';
const scenario = {
  name: "inline ask and restore",
  steps: [
    {
      match: { last_message_contains: "friendlier greeting" },
      response: {
        events: [
          { text: "I'll change the greeting." },
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
      response: { events: [{ text: "Done: the greeting now says hello there." }] },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

for (const scheme of ["light", "dark"] as const) {
  test(`an edit asked at its tool card, answered with Enter; Restore to here brings the file back (${scheme})`, async ({
    page,
  }, testInfo) => {
    await page.emulateMedia({ colorScheme: scheme });
    stack = await startStack(testInfo, scenario, { permissions: [{ permission: "edit", action: "ask" }] });
    await page.goto(stack.openUrl);
    await page.getByTestId("new-session").click();
    await page.getByTestId("prompt-input").fill("Make a friendlier greeting");
    await page.getByTestId("prompt-input").press("Enter");

    // The ask is in the transcript, at the edit's card: no dialog over the page.
    const card = page.locator('[data-testid="tool-card"][data-tool="edit"]');
    const ask = card.getByTestId("permission-ask");
    await expect(ask).toBeVisible();
    await expect(page.getByTestId("permission-dialog")).toHaveCount(0);
    await expect(ask.getByTestId("permission-tool")).toHaveText("edit");
    // The reason once, the path relative to the project, the change as a diff.
    await expect(ask.getByTestId("permission-reason")).toHaveCount(1);
    await expect(ask).not.toContainText(stack.project);
    await expect(ask.getByTestId("permission-proposed")).toContainText("hello there");
    await expect(ask.getByTestId("permission-allow-once")).toBeVisible();
    await expect(ask).toHaveAttribute("data-armed", "true");
    await shot(page, testInfo, `40-inline-ask-${scheme}`);
    // The Allow… menu holds the wider answers.
    await ask.getByTestId("permission-allow-more").click();
    await expect(page.getByTestId("permission-allow-session")).toBeVisible();
    await shot(page, testInfo, `41-inline-ask-menu-${scheme}`);
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("permission-allow-session")).toBeHidden();
    expect(stack.read("src/app.ts")).toBe(original);

    // Enter allows once (the ask has the keys while it is the active one; the focus is back on
    // the ask, not on the menu's button, whose own Enter opens the menu again).
    await ask.getByTestId("permission-reason").click();
    await page.keyboard.press("Enter");
    await expect(ask).toBeHidden();
    await until("the edit on disk", () => stack.read("src/app.ts")?.includes('"hello there, "'));
    await expect(page.getByTestId("message-assistant").last()).toContainText("hello there");

    // Restore to here, from the user message: a preview first, nothing changes until Restore.
    const user = page.getByTestId("message-user").first();
    await user.hover();
    await user.getByTestId("checkpoint-restore").click();
    const preview = page.getByTestId("checkpoint-preview");
    await expect(preview.getByTestId("checkpoint-file")).toHaveCount(1);
    await expect(preview.getByTestId("checkpoint-file").first()).toContainText("src/app.ts");
    await expect(preview.getByTestId("checkpoint-file").first()).toContainText("back to how it was");
    await shot(page, testInfo, `42-restore-preview-${scheme}`);
    expect(stack.read("src/app.ts")).toContain("hello there");
    await preview.getByTestId("checkpoint-apply").click();
    await until("the file restored on disk", () => stack.read("src/app.ts") === original);
    await expect(preview).toBeHidden();

    // Said in plain words (no snapshot hashes or ids unless Details is opened); the card is marked.
    const notice = page.getByTestId("message-revert").last();
    await expect(notice).toContainText("Reverted: restored src/app.ts");
    await expect(card.getByTestId("tool-card-undone")).toBeVisible();
    await shot(page, testInfo, `43-after-restore-${scheme}`);
  });
}
