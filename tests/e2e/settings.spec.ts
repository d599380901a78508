import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// "Always for this project" is persisted, listed in Settings with the compiled
// rules and their sources, and revoking it makes the next edit ask again.
const scenario = {
  name: "always for this project",
  steps: [
    {
      match: { last_message_contains: "first edit" },
      response: {
        events: [
          { tool_call: { id: "toolu_e1", name: "edit", arguments: { path: "src/app.ts", old_string: '"hello "', new_string: '"hi "' } } },
        ],
      },
    },
    { match: { has_tool_result: "toolu_e1" }, response: { events: [{ text: "First edit done." }] } },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("an 'always for this project' answer shows in Settings and can be revoked", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario, { permissions: [{ permission: "edit", action: "ask" }] });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Do the first edit");
  await page.getByTestId("prompt-input").press("Enter");
  // The ask at its tool card: the wider answers are in its "Allow…" menu.
  const dialog = page.getByTestId("permission-ask");
  await expect(dialog).toHaveAttribute("data-armed", "true");
  await dialog.getByTestId("permission-allow-more").click();
  await page.getByTestId("permission-allow-project").click();
  await until("the edit on disk", () => stack.read("src/app.ts")?.includes('"hi "'));
  await expect(page.getByTestId("message-assistant").last()).toContainText("First edit done");

  await page.getByTestId("open-settings").click();
  const settings = page.getByTestId("settings");
  await expect(settings).toBeVisible();
  // This machine sandboxes shell commands (bubblewrap, the full wall), and Settings says so.
  await expect(settings.getByTestId("settings-sandbox")).toHaveAttribute("data-effect", "sandboxed");
  await expect(settings.getByTestId("settings-sandbox")).toHaveAttribute("data-full", "true");
  await expect(settings.getByTestId("settings-sandbox")).toContainText("bubblewrap");
  // The compiled rules name their source file.
  await expect(settings.getByTestId("rules-table")).toContainText("config.json");
  const approvals = settings.getByTestId("approvals");
  await expect(approvals).toContainText("edit");
  await shot(page, testInfo, "10-settings");
  await approvals.getByTestId("revoke-approval").first().click();
  await expect(approvals.getByTestId("revoke-approval")).toHaveCount(0);
  // Provider keys are never shown, only where they come from.
  await expect(settings.getByTestId("provider-row").first()).toBeVisible();
  expect(await settings.textContent()).not.toContain("e2e-test-key");
});
