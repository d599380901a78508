import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

const hook = `cat > /dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no shell in this project"}}'`;

test("a project's command from the / menu, its hook held back until the workspace is trusted, then on the card", async ({
  page,
}, testInfo) => {
  const bash = (id: string) => ({
    match: { last_message_contains: "Check greet for ada" },
    response: { events: [{ tool_call: { id, name: "bash", arguments: { command: "ls -a" } } }] },
  });
  stack = await startStack(
    testInfo,
    {
      name: "commands and hooks",
      steps: [
        { match: { has_tool_result: "toolu_setup_2" }, response: { events: [{ text: "The hook stopped me." }] } },
        { match: { has_tool_result: "toolu_setup_1" }, response: { events: [{ text: "Listed the files." }] } },
        bash("toolu_setup_1"),
        bash("toolu_setup_2"),
      ],
    },
    {
      files: {
        ".mia-code/commands/check.md": '---\ndescription: Check the greeting\nargument-hint: "[name]"\n---\nCheck greet for $1\n',
        ".mia-code/commands/undo.md": "not the built-in\n",
        ".mia-code.json": JSON.stringify({
          hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: hook }] }] },
        }),
      },
    },
  );
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("/che");
  const menu = page.getByTestId("command-menu");
  await expect(menu).toContainText("/check");
  await expect(menu).toContainText("[name]");
  await expect(menu).toContainText("Check the greeting");
  await input.press("Enter");
  await expect(input).toHaveValue("/check ");
  await input.pressSequentially("ada");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Listed the files.");
  // The project's hook did not run: the workspace is not trusted.
  const card = page.locator('[data-testid="tool-card"][data-tool="bash"]').first();
  await expect(card.getByTestId("hook-run")).toHaveCount(0);
  const banner = page.getByTestId("trust-banner");
  await expect(banner).toContainText("1 hook");
  await shot(page, testInfo, "40-trust-banner");
  await banner.getByRole("button", { name: "Trust and run hooks" }).click();
  await expect(banner).toHaveCount(0);

  await input.fill("/check ada");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("The hook stopped me.");
  const denied = page.locator('[data-testid="tool-card"][data-tool="bash"]').last();
  await denied.click();
  const run = denied.getByTestId("hook-run");
  await expect(run).toContainText("PreToolUse");
  await expect(run).toContainText("no shell in this project");
  await shot(page, testInfo, "41-hook-on-card");
});
