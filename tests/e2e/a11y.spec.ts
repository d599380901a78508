import { test, expect } from "@playwright/test";
import { join } from "node:path";
import { scan } from "./axe";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

for (const scheme of ["light", "dark"] as const) {
  test(`the main views have no serious or critical accessibility violations (${scheme})`, async ({ page }, testInfo) => {
    stack = await startStack(
      testInfo,
      {
        name: "a11y",
        steps: [
          {
            match: { last_message_contains: "friendlier greeting" },
            response: {
              events: [
                { text: "I'll change the **greeting**." },
                {
                  tool_call: {
                    id: "toolu_edit_1",
                    name: "edit",
                    arguments: { path: "src/app.ts", old_string: '"hello "', new_string: '"hello there, "' },
                  },
                },
              ],
            },
          },
          { match: { has_tool_result: "toolu_edit_1" }, response: { events: [{ text: "Done: the greeting now says hello there." }] } },
        ],
      },
      { permissions: [{ permission: "edit", action: "ask" }] },
    );
    await page.emulateMedia({ colorScheme: scheme });
    const out = join(testInfo.outputDir, "axe");
    const problems: string[] = [];
    await page.goto(stack.openUrl);
    await expect(page.getByTestId("new-session")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-project`, out)));

    await page.getByTestId("new-session").click();
    const input = page.getByTestId("prompt-input");
    await input.fill("Make a friendlier greeting");
    await input.press("Enter");
    // The ask at its tool card in the transcript (the dialog is a setting, and the attention queue's).
    const dialog = page.getByTestId("permission-ask");
    await expect(dialog).toHaveAttribute("data-armed", "true");
    problems.push(...(await scan(page, `${scheme}-permission-ask`, out)));
    await dialog.getByTestId("permission-allow-once").click();
    await expect(page.getByTestId("message-assistant").last()).toContainText("Done");
    problems.push(...(await scan(page, `${scheme}-session`, out)));

    // The window's other views, reached as a user would: the palette (Ctrl+K) runs each.
    const palette = async (action: string) => {
      await page.keyboard.press("Control+k");
      const p = page.getByTestId("command-palette");
      await expect(p).toBeVisible();
      await p.locator(`[data-testid="palette-item"][data-action="${action}"]`).click();
      await expect(p).toBeHidden();
    };
    await page.keyboard.press("Control+k");
    await expect(page.getByTestId("command-palette")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-palette`, out)));
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("command-palette")).toBeHidden();
    await palette("shortcuts");
    await expect(page.getByTestId("shortcuts")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-shortcuts`, out)));
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("shortcuts")).toBeHidden();
    await palette("search");
    await page.getByTestId("transcript-search-input").fill("greeting");
    await expect(page.getByTestId("transcript-search-count")).toContainText("1");
    problems.push(...(await scan(page, `${scheme}-search`, out)));
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("transcript-search")).toBeHidden();
    await palette("fork-tree");
    await expect(page.getByTestId("fork-tree")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-fork-tree`, out)));
    await page.getByTestId("fork-tree-back").click();
    await palette("worktrees");
    await expect(page.getByTestId("worktrees-view")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-worktrees`, out)));
    await page.getByTestId("worktrees-back").click();
    await palette("compare");
    await expect(page.getByTestId("compare")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-compare`, out)));
    await page.getByTestId("session-item").first().click();
    await expect(page.getByTestId("message-assistant").last()).toContainText("Done");

    await page.locator('[data-testid="tool-card"][data-tool="edit"]').getByTestId("tool-card-diff").click();
    await expect(page.getByTestId("diff-file").first()).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-diff`, out)));

    await page.keyboard.press("Escape");
    // Icon buttons say what they do in a tooltip, on hover (after a delay) as on focus. (React
    // Aria shows it on hover once the mouse is in use again: a click after the keys above.)
    await page.getByTestId("project-name").click();
    await page.getByTestId("open-settings").hover();
    await expect(page.getByRole("tooltip")).toHaveText("Settings");
    await page.mouse.move(0, 0);
    await expect(page.getByRole("tooltip")).toHaveCount(0);
    await page.getByTestId("open-settings").click();
    await expect(page.getByTestId("settings-updates")).toBeVisible();
    problems.push(...(await scan(page, `${scheme}-settings`, out)));
    await shot(page, testInfo, `17-settings-${scheme}`);
    expect(problems, problems.join("\n")).toEqual([]);

    // The theme overrides the system's, is remembered across a reload, and "Follow the system" follows it again.
    const other = scheme === "light" ? "dark" : "light";
    const html = page.locator("html");
    await expect(html).toHaveAttribute("data-theme", scheme);
    await page.getByTestId(`theme-${other}`).click();
    await expect(html).toHaveAttribute("data-theme", other);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.reload();
    await expect(page.getByTestId("new-session")).toBeVisible();
    await expect(html).toHaveAttribute("data-theme", other);
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(bg);
    await page.getByTestId("open-settings").click();
    await expect(page.getByTestId(`theme-${other}`)).toHaveAttribute("data-selected", "true");
    await page.getByTestId("theme-system").click();
    await expect(html).toHaveAttribute("data-theme", scheme);
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(bg);
  });
}
