import { test, expect } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

// Ship from the review pane: stage the hunk, commit with a drafted message,
// publish the branch to a real smart-HTTP remote, and open a pull request on
// the GitHub stand-in (its wire format checked) whose link then shows.

const APP_AFTER = 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n';

const scenario = {
  name: "ship",
  steps: [
    { match: { last_message_contains: "Ship it" }, response: { events: [{ text: "Ready to ship." }] } },
    {
      match: { last_message_contains: "commit message" },
      response: { events: [{ text: "Greet with a template literal\n\nReads better." }] },
    },
    {
      match: { last_message_contains: "Draft a pull request" },
      response: { events: [{ text: "Greet with a template literal\n\n## Summary\n- greet uses a template literal" }] },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

const git = (...args: string[]) => execFileSync("git", ["-C", stack.project, ...args], { encoding: "utf8" });

test("commit, publish the branch and open a pull request from the review pane", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario, { forge: true });
  git("checkout", "-q", "-b", "feature/greet");
  git("config", "user.email", "person@example.com");
  git("config", "user.name", "A Person");
  await page.setViewportSize({ width: 1500, height: 900 });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Ship it");
  await input.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Ready to ship.");
  await expect(page.getByTestId("stop")).toBeHidden();
  writeFileSync(join(stack.project, "src/app.ts"), APP_AFTER);

  await page.getByTestId("open-review").click();
  const pane = page.getByTestId("review-pane");
  await pane.getByTestId("hunks-unstaged").getByTestId("hunk-stage").first().click();
  await expect(pane.getByTestId("hunks-staged").getByTestId("hunk-unstage")).toHaveCount(1);
  expect(git("diff", "--cached")).toContain("+  return `hello ${name}`;");

  // The small model drafts the message; the person edits it before it is written.
  await expect(pane.getByTestId("git-status")).toContainText("1 staged");
  await pane.getByTestId("commit-draft").click();
  const message = pane.getByTestId("commit-message");
  await expect(message).toHaveValue("Greet with a template literal\n\nReads better.");
  expect(git("log", "-1", "--format=%s").trim()).toBe("initial");
  await message.fill("Greet with a template literal\n\nReads better in the UI.");
  await pane.getByTestId("commit-submit").click();
  await expect(pane.getByTestId("commit-result")).toContainText("Greet with a template literal");
  expect(git("log", "-1", "--format=%B").trim()).toBe("Greet with a template literal\n\nReads better in the UI.");

  // A new branch is published to origin, which it then tracks.
  const push = pane.getByTestId("push");
  await expect(push).toHaveText("Publish to origin");
  await push.click();
  await expect(pane.getByTestId("push-result")).toContainText("Pushed feature/greet to origin");
  const remoteHead = execFileSync("git", ["-C", stack.remoteRepo!, "rev-parse", "refs/heads/feature/greet"], {
    encoding: "utf8",
  }).trim();
  expect(remoteHead).toBe(git("rev-parse", "HEAD").trim());

  // The pull request: drafted, created on the stand-in, its link shown.
  await pane.getByTestId("open-pr-dialog").click();
  await expect(page.getByTestId("pr-title")).toHaveValue("Greet with a template literal");
  await expect(page.getByTestId("pr-body")).toHaveValue("## Summary\n- greet uses a template literal");
  await page.getByTestId("pr-draft").check();
  await shot(page, testInfo, "31-pull-request-dialog");
  await page.getByTestId("pr-create").click();
  const link = page.getByTestId("pr-link");
  await expect(link).toHaveAttribute("href", "https://github.example/acme/widgets/pull/1");
  const post = stack.forgeRequests().find((r) => r.method === "POST");
  expect(post?.target).toBe("/api/v3/repos/acme/widgets/pulls");
  const header = (k: string) => post?.headers.find(([n]) => n === k)?.[1];
  expect(header("authorization")).toBe("Bearer ghp_e2e");
  expect(header("accept")).toBe("application/vnd.github+json");
  expect(header("x-github-api-version")).toBe("2022-11-28");
  expect(post?.body).toMatchObject({
    title: "Greet with a template literal",
    head: "feature/greet",
    base: "main",
    draft: true,
  });
  await shot(page, testInfo, "32-pull-request-created");
});
