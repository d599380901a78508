import { test, expect } from "@playwright/test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// The scripted demo (scripts/demo) plays through with the same scenario and
// permission rules: three prompts → read, an edit after Allow once, a shell
// command after Allow once; then the script says it has ended.
const scenario = JSON.parse(readFileSync(join(repoRoot, "crates/mia-testkit/scenarios/demo.json"), "utf8"));

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("the scripted demo plays through", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario, {
    permissions: [
      { permission: "edit", action: "ask" },
      { permission: "write", action: "ask" },
      { permission: "bash", action: "ask" },
    ],
    files: {
      "README.md": "# greeting-lib\n\nA tiny greeting library, used by the Mia Code demo.\n",
      "src/greet.ts": 'export function greet(name: string): string {\n  return "hello " + name;\n}\n',
      "test/greet.test.ts": 'import { greet } from "../src/greet";\n',
    },
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const send = async (text: string) => {
    // The previous turn has ended (its answer may be on screen a moment before).
    await expect(page.getByTestId("stop")).toBeHidden();
    await page.getByTestId("prompt-input").fill(text);
    await page.getByTestId("prompt-input").press("Enter");
  };
  await send("What is this project?");
  await expect(page.getByTestId("message-assistant").last()).toContainText("tiny greeting library");

  await send("Make the greeting friendlier");
  // The ask, at the edit's tool card in the transcript.
  const dialog = page.getByTestId("permission-ask");
  await expect(dialog.getByTestId("permission-tool")).toContainText("edit");
  // It shows the change the edit would make, before anything is written.
  const proposed = dialog.getByTestId("permission-proposed");
  await expect(proposed).toContainText("Welcome to Mia Code");
  await expect(proposed.getByTestId("diff-file")).toHaveAttribute("data-path", "src/greet.ts");
  expect(stack.read("src/greet.ts")).not.toContain("Welcome to Mia Code");
  await shot(page, testInfo, "06b-permission-proposed-diff");
  // Answers count once the ask has been on screen briefly (stray keys are ignored).
  await expect(dialog).toHaveAttribute("data-armed", "true");
  await page.keyboard.press("Enter"); // Allow once
  await until("the edit on disk", () => stack.read("src/greet.ts")?.includes("Welcome to Mia Code"));
  await expect(page.getByTestId("message-assistant").last()).toContainText("Open **Diff**".replace(/\*\*/g, ""));

  await send("Run the tests");
  await expect(dialog.getByTestId("permission-tool")).toContainText("bash");
  await expect(dialog).toHaveAttribute("data-armed", "true");
  await dialog.getByTestId("permission-allow-once").click();
  await expect(page.getByTestId("message-assistant").last()).toContainText("That's the tour");
  // The command ran in the OS sandbox, and its card says so.
  await expect(page.getByTestId("tool-card-sandbox").last()).toContainText("sandboxed · workspace-write");
  await shot(page, testInfo, "11-demo");
});
