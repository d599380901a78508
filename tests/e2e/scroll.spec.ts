import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

const long = Array.from({ length: 120 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n\n");

test("a session scrolled up is where the reader left it after switching away and back; a tool card stays expanded", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "scroll memory",
    steps: [
      {
        match: { last_message_contains: "long answer" },
        response: {
          events: [
            { text: "Looking first." },
            { tool_call: { id: "toolu_ls", name: "bash", arguments: { command: "ls" } } },
          ],
        },
      },
      { match: { has_tool_result: "toolu_ls" }, response: { events: [{ text: long }] } },
      { match: { last_message_contains: "Something short" }, response: { events: [{ text: "Short." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Give me a long answer");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Line 120 of a long answer.");
  const conv = page.getByTestId("conversation");
  // Up to the start; open the tool card there.
  await conv.evaluate((el) => (el.scrollTop = 0));
  const card = page.locator('[data-testid="tool-card"][data-tool="bash"]');
  await card.locator(".tool-head").click();
  await expect(card.getByLabel("Arguments")).toBeVisible();

  // Another session, then back.
  await page.getByTestId("new-session").click();
  await input.fill("Something short");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Short.");
  await page.getByTestId("session-item").filter({ hasText: "Give me a long answer" }).click();
  await expect(page.getByTestId("message-user").first()).toContainText("Give me a long answer");
  // Not at the bottom: the start of the session is in view, with the card still expanded.
  await expect(card.getByLabel("Arguments")).toBeVisible();
  const far = await conv.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
  expect(far).toBeGreaterThan(500);
});
