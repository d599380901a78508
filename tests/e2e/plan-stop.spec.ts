import { test, expect } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

const original = 'export function greet(name: string): string {\n  return "hello " + name;\n}\n';

test("Tab switches to plan; an edit is refused and the file is untouched", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "plan refuses edits",
    steps: [
      {
        match: { last_message_contains: "rename greet" },
        response: {
          events: [
            { text: "Trying to edit." },
            {
              tool_call: {
                id: "toolu_plan_edit",
                name: "edit",
                arguments: { path: "src/app.ts", old_string: "greet", new_string: "welcome" },
              },
            },
          ],
        },
      },
      {
        match: { has_tool_result: "toolu_plan_edit" },
        response: { events: [{ text: "Plan mode cannot edit; here is the plan instead." }] },
      },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const badge = page.getByTestId("mode-badge");
  await expect(badge).toContainText("BUILD");
  await page.getByTestId("prompt-input").focus();
  await page.keyboard.press("Tab");
  await expect(badge).toContainText("PLAN");
  await expect(badge).toHaveAttribute("data-agent", "plan");
  await shot(page, testInfo, "07-plan-mode");

  await page.getByTestId("prompt-input").fill("Please rename greet to welcome");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("here is the plan");
  const card = page.locator('[data-testid="tool-card"][data-tool="edit"]');
  await expect(card).toBeVisible();
  await card.click();
  await expect(card.getByTestId("tool-card-result")).toContainText(/denied|not available|not allowed/i);
  expect(stack.read("src/app.ts")).toBe(original);
});

test("Stop cancels a running bash command", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, {
    name: "long bash",
    steps: [
      {
        match: { last_message_contains: "long job" },
        response: {
          events: [
            { text: "Starting the job." },
            {
              tool_call: {
                id: "toolu_bash_long",
                name: "bash",
                arguments: { command: "sleep 45.5 && touch finished.marker", description: "long job" },
              },
            },
          ],
        },
      },
    ],
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Run the long job");
  await page.getByTestId("prompt-input").press("Enter");
  const card = page.locator('[data-testid="tool-card"][data-tool="bash"]');
  await expect(card).toBeVisible();
  // The command is really running.
  await until("sleep 45.5 running", () => {
    const ps = execFileSync("ps", ["-eo", "args"]).toString();
    return ps.split("\n").some((l) => l.startsWith("sleep 45.5"));
  });
  await shot(page, testInfo, "08-running-bash");
  const started = Date.now();
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("stop")).toBeHidden({ timeout: 10_000 });
  expect(Date.now() - started).toBeLessThan(10_000);
  await until("sleep 45.5 gone", () => {
    const ps = execFileSync("ps", ["-eo", "args"]).toString();
    return !ps.split("\n").some((l) => l.startsWith("sleep 45.5"));
  });
  expect(existsSync(join(stack.project, "finished.marker"))).toBe(false);
  // The stopped command changed no file: the side panel stays closed, and opened, the undo
  // timeline has nothing to offer.
  await expect(page.getByTestId("toggle-panel")).toHaveAttribute("aria-pressed", "false");
  await page.getByTestId("toggle-panel").click();
  await page.getByTestId("tab-changes").click();
  await expect(page.getByTestId("timeline")).toContainText("No file changes");
  await expect(page.getByTestId("timeline-step")).toHaveCount(0);
  await shot(page, testInfo, "09-stopped");
});
