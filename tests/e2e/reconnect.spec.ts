import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

// The window keeps one stream of every session's Events. The server is killed (-9) while a
// session is open; while it is down the CLI, in its own process, continues that session. The
// server comes back on the same port: the window says it lost the connection, reconnects by
// itself asking for what it missed, sees another process answered (a new epoch) and loads
// again: every message exactly once, none lost, and the stream is live afterwards.
test("reconnects after the server restarts: nothing lost, nothing twice, one stream per window", async ({
  page,
}, testInfo) => {
  stack = await startStack(testInfo, {
    name: "reconnect",
    steps: [
      { match: { last_message_contains: "first question" }, response: { events: [{ text: "First answer." }] } },
      { match: { last_message_contains: "other session" }, response: { events: [{ text: "Other answer." }] } },
      { match: { last_message_contains: "second question" }, response: { events: [{ text: "Second answer." }] } },
      { match: { last_message_contains: "third question" }, response: { events: [{ text: "Third answer." }] } },
    ],
  });
  const streams: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/events")) streams.push(r.url());
  });
  await page.goto(stack.openUrl);

  // Two sessions, each with a turn, in one window.
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("A first question");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("First answer.");
  const rowA = page.getByTestId("session-item").first();
  const idA = await rowA.getAttribute("data-session-id");
  expect(idA).toBeTruthy();
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("The other session");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Other answer.");
  await page.locator(`[data-testid="session-item"][data-session-id="${idA}"]`).click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("First answer.");
  // Every view (both sessions, the sidebar, the attention queue) listens on one stream.
  expect(streams).toHaveLength(1);

  const banner = page.getByTestId("connection-banner");
  await stack.restart({
    hard: true,
    between: async () => {
      await expect(banner).toBeVisible();
      await expect(banner).toContainText("reconnecting");
      await shot(page, testInfo, "18-connection-lost");
      // Another process continues the session while the window is cut off.
      const out = stack.cli(["run", "--session", idA!, "--project", stack.project, "The second question"]);
      expect(out).toContain("Second answer.");
    },
  });

  // Back by itself (no reload of the page), asking for what it missed.
  await expect(banner).toHaveCount(0, { timeout: 20_000 });
  expect(streams.length).toBeGreaterThanOrEqual(2);
  const resumed = new URL(streams.at(-1)!);
  expect(resumed.searchParams.get("epoch")).toBeTruthy();
  expect(resumed.searchParams.get("since")).toContain(`${idA}:`);

  const users = page.getByTestId("message-user");
  const answers = page.getByTestId("message-assistant");
  await expect(answers.last()).toContainText("Second answer.");
  await expect(users).toHaveCount(2);
  await expect(answers).toHaveCount(2);
  await expect(users.nth(0)).toContainText("A first question");
  await expect(users.nth(1)).toContainText("The second question");
  await expect(answers.nth(0)).toContainText("First answer.");

  // The stream is live again: a new turn streams in, once.
  await page.getByTestId("prompt-input").fill("A third question");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(answers.last()).toContainText("Third answer.");
  await expect(users).toHaveCount(3);
  await expect(answers).toHaveCount(3);
  // The other session is intact too.
  await page.getByTestId("session-item").filter({ hasText: "other session" }).first().click();
  await expect(page.getByTestId("message-assistant")).toHaveCount(1);
  await expect(page.getByTestId("message-assistant").first()).toContainText("Other answer.");
});
