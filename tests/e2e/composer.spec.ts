import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("a follow-up typed during a turn is queued and goes out when the turn completes", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "queued follow-up",
    steps: [
      {
        match: { last_message_contains: "first task" },
        response: { headers_delay_ms: 2000, events: [{ text: "First task done." }] },
      },
      { match: { last_message_contains: "And then this" }, response: { events: [{ text: "The follow-up answered." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Please do the first task");
  await input.press("Enter");
  await expect(page.getByTestId("stop")).toBeVisible();
  // Typed while the turn runs: queued, shown, the input stays focused and empty.
  await input.fill("And then this, please");
  await expect(page.getByTestId("send")).toHaveText("Queue");
  await input.press("Enter");
  const queued = page.getByTestId("queued-message");
  await expect(queued).toContainText("And then this, please");
  await expect(input).toHaveValue("");
  await expect(input).toBeFocused();
  await shot(page, testInfo, "14-queued-follow-up");
  // The turn completes; the follow-up is sent by itself and answered.
  await expect(page.getByTestId("message-assistant").last()).toContainText("The follow-up answered.");
  await expect(queued).toHaveCount(0);
  await expect(page.getByTestId("message-user")).toHaveCount(2);
});

test("Esc stops a running turn; a queued follow-up then waits for Send now", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "esc stop",
    steps: [
      {
        match: { last_message_contains: "long job" },
        response: {
          events: [
            { text: "Starting the job." },
            { tool_call: { id: "toolu_long", name: "bash", arguments: { command: "sleep 40 && touch finished.marker" } } },
          ],
        },
      },
      { match: { last_message_contains: "Then something else" }, response: { events: [{ text: "Something else, done." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Run the long job");
  await input.press("Enter");
  await expect(page.locator('[data-testid="tool-card"][data-tool="bash"]')).toBeVisible();
  await input.fill("Then something else");
  await input.press("Enter");
  await expect(page.getByTestId("queued-message")).toContainText("Then something else");
  // Esc with an empty input stops the turn (the command too).
  await input.press("Escape");
  await expect(page.getByTestId("stop")).toBeHidden();
  expect(stack.read("finished.marker")).toBeNull();
  // Stopped, so the follow-up was not sent behind the person's back.
  const queued = page.getByTestId("queued-message");
  await expect(queued).toContainText("Then something else");
  await queued.getByTestId("queued-send").click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("Something else, done.");
  await expect(queued).toHaveCount(0);
});
