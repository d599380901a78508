import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("a shell command's output streams into its card while it runs", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "live bash output",
    steps: [
      {
        match: { last_message_contains: "count slowly" },
        response: {
          events: [
            { text: "Counting." },
            {
              tool_call: {
                id: "toolu_count",
                name: "bash",
                arguments: { command: 'for i in 1 2 3 4 5; do echo "live line $i"; sleep 0.6; done' },
              },
            },
          ],
        },
      },
      { match: { last_message_contains: "live line 5" }, response: { events: [{ text: "Counted to five." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Please count slowly");
  await input.press("Enter");
  const card = page.locator('[data-testid="tool-card"][data-tool="bash"]');
  const live = card.getByTestId("tool-card-live");
  // The second line is there while the command still runs (three more lines, 1.8 s, to go).
  await expect(live).toContainText("live line 2");
  expect(await card.getByTestId("tool-card-result").count()).toBe(0);
  await expect(live).not.toContainText("live line 5");
  // The composer's context meter: the runtime's estimate of the request against the window.
  await expect(page.getByTestId("context-meter")).toContainText(/ \/ 200k \(\d+%\)/);
  await shot(page, testInfo, "15-live-bash-output");
  // Finished: the result replaces the live view and has every line once.
  const result = card.getByTestId("tool-card-result");
  await expect(result).toContainText("live line 5");
  await expect(live).toHaveCount(0);
  await card.locator(".tool-head").click();
  const text = (await result.textContent()) ?? "";
  expect(text.match(/live line \d/g)).toEqual(["live line 1", "live line 2", "live line 3", "live line 4", "live line 5"]);
  await expect(page.getByTestId("message-assistant").last()).toContainText("Counted to five.");
});
