import { test, expect, type Locator } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

async function width(l: Locator): Promise<number> {
  const box = await l.boundingBox();
  if (!box) throw new Error("not on screen");
  return box.width;
}

// The smallest window the layout is made for: 1024×700, with the sidebar and the side panel
// open, the conversation still has room to read; panels resize by dragging their edge (and by
// keyboard), the sidebar hides with Ctrl+B, and the sizes are remembered.
test.use({ viewport: { width: 1024, height: 700 } });

test("usable at 1024×700: resizable, collapsible panels whose sizes are remembered", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "layout",
    steps: [{ match: { last_message_contains: "hello" }, response: { events: [{ text: "Hello! ".repeat(60) }] } }],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("hello there");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Hello!");

  const sidebar = page.locator("aside.left");
  const conversation = page.getByTestId("conversation");
  const panel = page.locator("aside.right-panel");
  await expect(panel).toBeVisible();
  // Everything fits: nothing wider than the window, and the conversation keeps a readable width.
  const docWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(docWidth).toBeLessThanOrEqual(1024);
  expect(await width(conversation)).toBeGreaterThanOrEqual(380);
  expect(await width(sidebar)).toBeGreaterThanOrEqual(140);
  await shot(page, testInfo, "19-layout-1024x700");

  // Drag the side panel's edge to the right: the panel narrows, the conversation widens.
  const handle = page.locator(".session-layout > [data-panel-resize-handle-id]");
  const before = await width(panel);
  const box = (await handle.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
  await expect.poll(() => width(panel)).toBeLessThan(before - 60);
  const narrowed = await width(panel);

  // The keyboard does it too: the edge is a focusable separator.
  await expect(handle).toHaveAttribute("role", "separator");

  // Ctrl+B hides the sidebar and shows it again.
  const sidebarWidth = await width(sidebar);
  const conv = await width(conversation);
  await page.getByTestId("conversation").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("Control+b");
  await expect.poll(() => sidebar.isVisible().then((v) => (v ? width(sidebar) : 0))).toBeLessThan(5);
  expect(await width(conversation)).toBeGreaterThan(conv + 100);
  await page.keyboard.press("Control+b");
  await expect.poll(() => width(sidebar)).toBeGreaterThan(sidebarWidth - 5);

  // Remembered across a reload.
  await page.reload();
  await page.getByTestId("session-item").first().click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("Hello!");
  await expect.poll(() => width(panel)).toBeLessThan(narrowed + 5);
  expect(await width(panel)).toBeGreaterThan(narrowed - 5);
});

// Ctrl+K lists the window's actions with their shortcuts; typing filters, Enter runs one.
test("the command palette lists the actions with their shortcuts and runs one", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "palette",
    steps: [{ match: { last_message_contains: "hello" }, response: { events: [{ text: "Hi." }] } }],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("hello");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Hi.");

  await page.keyboard.press("Control+k");
  const input = page.getByTestId("palette-input");
  await expect(input).toBeFocused();
  const items = page.getByTestId("palette-item");
  await expect(items.filter({ hasText: "Search in this session" })).toContainText("Ctrl+F");
  await expect(items.filter({ hasText: "Hide or show the sidebar" })).toContainText("Ctrl+B");
  await shot(page, testInfo, "20-command-palette");
  await input.fill("sidebar");
  await expect(items.first()).toContainText("Hide or show the sidebar");
  await page.keyboard.press("Enter");
  await expect(input).toHaveCount(0);
  await expect.poll(() => page.locator("aside.left").boundingBox().then((b) => b?.width ?? 0)).toBeLessThan(5);
  // Esc closes it without running anything.
  await page.keyboard.press("Control+k");
  await expect(page.getByTestId("palette-input")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("palette-input")).toHaveCount(0);
  await expect.poll(() => page.locator("aside.left").boundingBox().then((b) => b?.width ?? 0)).toBeLessThan(5);
});
