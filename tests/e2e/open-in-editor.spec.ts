import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("Open in editor runs the configured editor on the changed file, from the card and the diff", async ({ page }, testInfo) => {
  stack = await startStack(
    testInfo,
    {
      name: "open in editor",
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
        { match: { has_tool_result: "toolu_edit_1" }, response: { events: [{ text: "Done." }] } },
      ],
    },
    {
      // The "editor" appends what it was asked to open to a file in the project.
      config: { editor: { command: ["sh", "-c", "printf '%s\\n' \"$1\" >> opened.log", "sh", "{file}:{line}"] } },
    },
  );
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Make a friendlier greeting");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Done.");

  const card = page.locator('[data-testid="tool-card"][data-tool="edit"]');
  await card.getByTestId("tool-card-open-file").click();
  const first = await until("the editor to run", () => stack.read("opened.log"));
  expect(first.trim()).toMatch(/\/src\/app\.ts:1$/);

  // From the diff: at the first changed line.
  await card.getByTestId("tool-card-diff").click();
  await page.getByTestId("diff-open-file").first().click();
  const both = await until("the editor to run again", () => {
    const t = stack.read("opened.log");
    return t && t.trim().split("\n").length === 2 ? t : null;
  });
  expect(both.trim().split("\n")[1]).toMatch(/\/src\/app\.ts:\d+$/);
  await expect(page.getByText("Opened src/app.ts in the editor").first()).toBeVisible();
});
