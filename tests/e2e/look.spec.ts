import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

// A finished look (issue 50): the main screens in light and dark at the smallest window the
// layout is made for and at a common laptop size; the header stays on one row, the side panel
// stays closed with nothing to show, toasts sit in their own strip.
for (const [w, h] of [
  [1024, 700],
  [1440, 900],
] as const) {
  test(`the main screens at ${w}×${h}, light and dark`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: w, height: h });
    stack = await startStack(testInfo, {
      name: `look-${w}`,
      steps: [{ match: { last_message_contains: "hello" }, response: { events: [{ text: "Hello! Here is a short answer." }] } }],
    });
    await page.goto(stack.openUrl);
    await page.getByTestId("new-session").click();
    await expect(page.getByTestId("new-session-home")).toBeVisible();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, testInfo, `60-new-session-${w}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.getByTestId("new-home-suggestion").first().click();
    await expect(page.getByTestId("prompt-input")).toHaveValue(/Explain how this project/);
    await page.getByTestId("prompt-input").fill("hello there");
    await page.getByTestId("prompt-input").press("Enter");
    await expect(page.getByTestId("message-assistant").last()).toContainText("Hello!");
    // One header row, no side panel with nothing in it.
    const header = page.locator(".main-col > .conv-header");
    const box = (await header.boundingBox())!;
    expect(box.height).toBeLessThan(50);
    await expect(page.locator("aside.right-panel")).toHaveCount(0);
    await page.getByTestId("message-assistant").last().hover();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, testInfo, `61-conversation-${w}-${scheme}`);
    }
    await page.getByTestId("session-more").click();
    await expect(page.getByRole("menu")).toBeVisible();
    await shot(page, testInfo, `62-header-menu-${w}-dark`);
    await page.keyboard.press("Escape");
    await page.getByTestId("open-settings").click();
    await expect(page.getByTestId("settings-nav")).toBeVisible();
    await expect(page.getByTestId("rules-editor")).toBeVisible();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, testInfo, `63-settings-${w}-${scheme}`);
    }
    await page.getByTestId("settings-nav-permissions").click();
    await shot(page, testInfo, `64-settings-permissions-${w}-dark`);
    // The "Create an agent…" button is whole.
    await page.getByTestId("settings-nav-agents").click();
    const create = page.getByTestId("settings-create-agent");
    await expect(create).toBeInViewport({ ratio: 1 });
  });
}
