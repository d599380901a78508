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
  // No file changes: the side panel stays closed until asked for.
  await expect(panel).toHaveCount(0);
  await expect(page.locator(".conv-header")).toHaveCSS("flex-wrap", "nowrap");
  await page.getByTestId("toggle-panel").click();
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
  await page.getByTestId("toggle-panel").click();
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

  // The open session's actions are there too: its / commands and the plan/build toggle.
  await expect(page.getByTestId("mode-badge")).toHaveAttribute("data-agent", "build");
  await page.keyboard.press("Control+k");
  await expect(page.getByTestId("palette-input")).toBeFocused();
  await expect(items.filter({ hasText: "Switch between plan and build" })).toContainText("Tab");
  await page.getByTestId("palette-input").fill("plan agent");
  await expect(items.first()).toContainText("Switch to the plan agent");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("mode-badge")).toHaveAttribute("data-agent", "plan");
  await page.keyboard.press("Control+k");
  await page.getByTestId("palette-input").fill("Switch between");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("mode-badge")).toHaveAttribute("data-agent", "build");
  // Stop is offered only while a turn runs.
  await page.keyboard.press("Control+k");
  await expect(page.locator('[data-testid="palette-item"][data-action="mode"]')).toBeVisible();
  await expect(page.locator('[data-testid="palette-item"][data-action="stop"]')).toHaveCount(0);
  await page.keyboard.press("Escape");
});

// At the smallest window, an ask with a long proposed change scrolls inside the dialog while its
// answer keys stay on screen.
test("the permission dialog keeps its answer keys on screen at 1024×700 with a long proposed file", async ({ page }, testInfo) => {
  const content = Array.from({ length: 400 }, (_, i) => `export const line${i} = ${i};`).join("\n") + "\n";
  stack = await startStack(
    testInfo,
    {
      name: "long-ask",
      steps: [
        {
          match: { last_message_contains: "long file" },
          response: { events: [{ tool_call: { id: "toolu_w1", name: "write", arguments: { path: "src/long.ts", content } } }] },
        },
        { match: { has_tool_result: "toolu_w1" }, response: { events: [{ text: "Written." }] } },
      ],
    },
    { permissions: [{ permission: "write", action: "ask" }] },
  );
  // Asks shown as a dialog (Settings → "Show permission asks as a dialog").
  await page.addInitScript(() => localStorage.setItem("mia-code.asksAsDialog", "1"));
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("write a long file");
  await page.getByTestId("prompt-input").press("Enter");
  const dialog = page.getByTestId("permission-dialog");
  await expect(dialog.getByTestId("permission-proposed")).toContainText("+400");
  await expect(dialog.getByTestId("permission-proposed")).toContainText("line0 = 0");
  const body = dialog.locator(".mia-perm-body");
  // The content is far taller than the window: the body scrolls, the dialog fits.
  expect(await body.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
  const box = (await dialog.boundingBox())!;
  expect(box.y + box.height).toBeLessThanOrEqual(700);
  const allow = dialog.getByTestId("permission-allow-once");
  const inView = async () => {
    const b = (await allow.boundingBox())!;
    return b.y >= 0 && b.y + b.height <= 700;
  };
  expect(await inView()).toBe(true);
  // Scrolled to the end of the proposed file: the keys have not moved.
  const before = (await allow.boundingBox())!.y;
  // (the body and the diff inside it both scroll: every scroller of the dialog to its end)
  for (let i = 0; i < 3; i++) {
    await dialog.evaluate((d) => {
      for (const el of [d, ...Array.from(d.querySelectorAll("*"))]) {
        if (el.scrollHeight > el.clientHeight + 1) el.scrollTop = el.scrollHeight;
      }
    });
  }
  await expect(dialog.getByTestId("permission-proposed")).toContainText("line399 = 399");
  expect((await allow.boundingBox())!.y).toBe(before);
  expect(await inView()).toBe(true);
  await shot(page, testInfo, "21-permission-long-1024x700");
  await allow.click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("Written.");
  expect(stack.read("src/long.ts")).toBe(content);
});
