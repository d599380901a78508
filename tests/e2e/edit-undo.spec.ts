import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// the ask at its tool card → Allow once → file edited on disk; the side-by-side diff
// shows the change; Undo (with its preview) restores the file on disk.
const original = 'export function greet(name: string): string {\n  return "hello " + name;\n}\n';
const scenario = {
  name: "edit with permission",
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

test("allow once edits the file; the diff shows it; undo restores it", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario, {
    permissions: [{ permission: "edit", action: "ask" }],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Make a friendlier greeting");
  await page.getByTestId("prompt-input").press("Enter");

  // The ask shows in the transcript, at the edit's tool card.
  const dialog = page.getByTestId("tool-card").getByTestId("permission-ask");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("permission-tool")).toContainText("edit");
  await expect(dialog.getByTestId("permission-target")).toContainText("src/app.ts");
  await expect(dialog).toHaveAttribute("data-armed", "true");
  await shot(page, testInfo, "03-permission-ask");
  // Nothing is written before the answer.
  expect(stack.read("src/app.ts")).toBe(original);
  await dialog.getByTestId("permission-allow-once").click();
  await expect(dialog).toBeHidden();

  await until("the edit on disk", () => stack.read("src/app.ts")?.includes('"hello there, "'));
  await expect(page.getByTestId("message-assistant").last()).toContainText("hello there");

  // The session's diff: the side panel is narrower than two columns need,
  // so it is unified there (side by side says why it is off).
  await page.getByTestId("tab-diff").click();
  const diff = page.getByTestId("diff-view");
  await expect(diff.getByTestId("diff-summary")).toContainText("1 file changed");
  await expect(diff.getByTestId("diff-mode-split")).toBeDisabled();
  await expect(diff.getByTestId("diff-mode-split")).toHaveAttribute("title", /Too narrow/);
  await expect(diff.getByTestId("diff-line-add").first()).toContainText("hello there");
  await expect(diff.getByTestId("diff-line-del").first()).toContainText('"hello "');
  await shot(page, testInfo, "04-diff-split");
  // The same diff, window-wide, side by side.
  await page.getByTestId("diff-open-wide").click();
  const wide = page.getByTestId("diff-wide");
  await wide.getByTestId("diff-mode-split").click();
  await expect(wide.getByTestId("diff-line-add").first()).toContainText("hello there");
  await expect(wide.getByTestId("diff-line-del").first()).toContainText('"hello "');
  await shot(page, testInfo, "04b-diff-wide");
  await page.keyboard.press("Escape");
  await expect(wide).toBeHidden();

  // Undo from the timeline, with a preview of exactly which file changes.
  await page.getByTestId("tab-changes").click();
  const timeline = page.getByTestId("timeline");
  await expect(timeline.getByTestId("timeline-step")).toHaveCount(1);
  await timeline.getByTestId("timeline-undo-step").first().click();
  const preview = page.getByTestId("timeline-preview");
  await expect(preview.getByTestId("timeline-preview-file")).toHaveCount(1);
  await expect(preview.getByTestId("timeline-preview-file").first()).toContainText("src/app.ts");
  await shot(page, testInfo, "05-undo-preview");
  expect(stack.read("src/app.ts")).toContain("hello there"); // preview changed nothing
  await preview.getByTestId("timeline-apply").click();

  await until("the file restored on disk", () => stack.read("src/app.ts") === original);
  // The revert is recorded in the conversation.
  await expect(page.getByTestId("conversation")).toContainText("Reverted");
  await shot(page, testInfo, "06-after-undo");
});
