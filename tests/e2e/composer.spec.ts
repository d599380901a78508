import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
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

test("queued follow-ups can be cancelled and edited, and go out after the turn even with another session on screen", async ({
  page,
}, testInfo) => {
  stack = await startStack(testInfo, {
    name: "queued follow-up away",
    steps: [
      {
        match: { last_message_contains: "slow task" },
        response: { headers_delay_ms: 4000, events: [{ text: "Slow task done." }] },
      },
      { match: { last_message_contains: "Edited follow-up" }, response: { events: [{ text: "The edited follow-up answered." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Please do the slow task");
  await input.press("Enter");
  await expect(page.getByTestId("stop")).toBeVisible();
  const sessionId = await page.locator(".session-item.active").getAttribute("data-session-id");
  expect(sessionId).toBeTruthy();
  for (const text of ["Drop me", "Edit me"]) {
    await input.fill(text);
    await input.press("Enter");
  }
  const queued = page.getByTestId("queued-message");
  await expect(queued).toHaveCount(2);
  // Cancel the first; edit the second (it goes back into the input, out of the queue).
  await queued.filter({ hasText: "Drop me" }).getByTestId("queued-cancel").click();
  await queued.filter({ hasText: "Edit me" }).getByTestId("queued-edit").click();
  await expect(queued).toHaveCount(0);
  await expect(input).toHaveValue("Edit me");
  await input.fill("Edited follow-up");
  await input.press("Enter");
  await expect(queued).toHaveCount(1);
  await expect(queued).toContainText("Edited follow-up");
  // Another session on screen while the turn ends: the follow-up still goes out.
  await page.getByTestId("new-session").click();
  await expect(page.getByTestId("queued-message")).toHaveCount(0);
  const texts = async () => {
    const r = await fetch(`${stack.url}/api/sessions/${sessionId}`, { headers: { Authorization: `Bearer ${stack.token}` } });
    const d = (await r.json()) as { messages: { role: string; parts: { content: { type: string; text?: string } }[] }[] };
    return d.messages.flatMap((m) => m.parts.map((p) => `${m.role}:${p.content.text ?? ""}`));
  };
  await until("the follow-up answered while away", async () =>
    (await texts()).includes("assistant:The edited follow-up answered.") ? true : null,
  );
  const users = (await texts()).filter((t) => t.startsWith("user:"));
  expect(users).toEqual(["user:Please do the slow task", "user:Edited follow-up"]);
  // Back in the session: both answers, nothing queued.
  await page.locator(`[data-testid="session-item"][data-session-id="${sessionId}"]`).click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("The edited follow-up answered.");
  await expect(page.getByTestId("queued-message")).toHaveCount(0);
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
