import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";
import { scan } from "./axe";
import { join } from "node:path";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

// Two sessions at once: one waits for an answer in the background while the person works in the
// other. The ask finds them (badge, session marker), is answered from the queue without switching,
// and the file is on disk.
test("an ask in a background session is answered from the attention queue", async ({ page }, testInfo) => {
  stack = await startStack(
    testInfo,
    {
      name: "attention queue",
      steps: [
      {
        match: { last_message_contains: "write the notes" },
        response: {
            // The ask comes while the person is already in the other session.
            headers_delay_ms: 2500,
          events: [
            { text: "Writing the notes." },
            { tool_call: { id: "toolu_bg_write", name: "write", arguments: { path: "notes.md", content: "# Notes\n" } } },
          ],
        },
      },
      { match: { has_tool_result: "toolu_bg_write" }, response: { events: [{ text: "Notes written." }] } },
      { match: { last_message_contains: "second question" }, response: { events: [{ text: "Answer to the second." }] } },
      ],
    },
    { permissions: [{ permission: "write", action: "ask" }] },
  );
  await page.goto(stack.openUrl);

  // Session A starts a turn that will ask (its answer is slow to come).
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Please write the notes");
  await page.getByTestId("prompt-input").press("Enter");
  const first = page.getByTestId("session-item").first();
  await expect(first).toBeVisible();
  const firstId = await first.getAttribute("data-session-id");

  // The person starts session B meanwhile.
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("A second question");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Answer to the second");

  // A needs them: a badge, a marker on A's row (live), running.
  const badge = page.getByTestId("attention-badge");
  await expect(badge).toContainText("1 waiting");
  const rowA = page.locator(`[data-testid="session-item"][data-session-id="${firstId}"]`);
  await expect(rowA.getByTestId("session-needs-you")).toBeVisible();
  await expect(rowA).toHaveAttribute("data-running", "true");
  expect(stack.read("notes.md")).toBeNull();
  await shot(page, testInfo, "12-attention-badge");

  // Answered from the queue, without opening A.
  await badge.click();
  const queue = page.getByTestId("attention-queue");
  await expect(queue.getByTestId("permission-tool")).toContainText("write");
  await expect(queue.getByTestId("permission-session")).toBeVisible();
  await shot(page, testInfo, "13-attention-queue");
  // The queue (a view of its own: asks of other sessions, each labelled) in both themes.
  const problems = [...(await scan(page, "attention-queue-light", join(testInfo.outputDir, "axe")))];
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  problems.push(...(await scan(page, "attention-queue-dark", join(testInfo.outputDir, "axe"))));
  await page.emulateMedia({ colorScheme: "light" });
  expect(problems, problems.join("\n")).toEqual([]);
  await queue.getByTestId("permission-allow-once").click();
  await expect(page.getByTestId("attention-queue")).toHaveCount(0);
  await expect(badge).toHaveCount(0);
  await expect(rowA.getByTestId("session-needs-you")).toHaveCount(0);
  await expect(rowA).not.toHaveAttribute("data-running", "true");
  expect(stack.read("notes.md")).toBe("# Notes\n");
  // B stayed open the whole time.
  await expect(page.getByTestId("message-assistant").last()).toContainText("Answer to the second");
  // A finished while B was on screen: marked new until it is opened.
  await expect(rowA.getByTestId("session-finished")).toContainText("new");
  await expect(rowA).toHaveAttribute("data-finished", "done");
  await rowA.getByRole("button").first().click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("Notes written.");
  await expect(rowA.getByTestId("session-finished")).toHaveCount(0);
});
