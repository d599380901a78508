import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("Ctrl+F searches the transcript and walks through the matches", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "transcript search",
    steps: [
      { match: { last_message_contains: "Tell me one thing" }, response: { events: [{ text: "The first answer mentions zebras." }] } },
      { match: { last_message_contains: "And another" }, response: { events: [{ text: "The second answer mentions Zebras too." }] } },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Tell me one thing");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("first answer");
  await input.fill("And another");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("second answer");

  await page.keyboard.press("ControlOrMeta+f");
  const search = page.getByTestId("transcript-search-input");
  await expect(search).toBeFocused();
  await search.fill("zebras");
  const count = page.getByTestId("transcript-search-count");
  await expect(count).toHaveText("1 of 2");
  const marked = page.locator('[data-highlighted="true"]');
  await expect(marked).toContainText("first answer");
  // The word itself is marked in the current match (CSS Custom Highlight API).
  const highlighted = () =>
    page.evaluate(() => {
      const h = (CSS as unknown as { highlights?: Map<string, Set<Range>> }).highlights?.get("mia-search");
      return h ? [...h].map((r) => r.toString()) : [];
    });
  await expect.poll(highlighted).toEqual(["zebras"]);
  // The row's text drawn again (as React does when a block renders anew, e.g. code highlighted
  // once its grammar loads): the word is marked in the new text, not left on a removed node.
  await page.evaluate(() => {
    const row = document.querySelector('[data-testid="conversation"] [data-highlighted="true"]');
    const walker = document.createTreeWalker(row ?? document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.textContent?.includes("zebras")) {
        n.parentNode?.replaceChild(n.cloneNode(), n);
        break;
      }
    }
  });
  await expect.poll(highlighted).toEqual(["zebras"]);
  await shot(page, testInfo, "16-transcript-search");
  await search.press("Enter");
  await expect(count).toHaveText("2 of 2");
  await expect(marked).toContainText("second answer");
  await expect.poll(highlighted).toEqual(["Zebras"]);
  await search.press("Shift+Enter");
  await expect(count).toHaveText("1 of 2");
  await search.fill("giraffes");
  await expect(count).toHaveText("No matches");
  await expect(marked).toHaveCount(0);
  await expect.poll(highlighted).toEqual([]);
  // Esc closes the search and does not stop anything.
  await search.press("Escape");
  await expect(page.getByTestId("transcript-search")).toHaveCount(0);
});
