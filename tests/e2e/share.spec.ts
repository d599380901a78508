import { test, expect, type Request } from "@playwright/test";
import { readFileSync, existsSync } from "node:fs";
import { startStack, startShareServer, until, type Stack, type ShareServer } from "./harness";
import { shot } from "./screens";

// Share from the UI to a real mia-share-server, open the link in Chromium:
// the transcript, a tool call and a diff are shown; a hostile transcript
// (scripts, handlers, javascript: links, SVG, a remote image, CSS) stays
// inert — no script runs, no request leaves the share server's origin —;
// the planted secret never reaches the server; unsharing makes the link 410.

const SECRET = "ghp_E2ePLANTEDtokenABCDEFGHIJ0123456789xyz";
const HOSTILE = [
  "Here is the result.",
  "<script>window.__xss = 'script'</script>",
  '<img src="https://evil.example/pixel.png" onerror="window.__xss = \'img\'">',
  "[click me](javascript:window.__xss='link')",
  '<svg onload="window.__xss = \'svg\'"><circle r="4"/></svg>',
  "![tracker](https://evil.example/tracker.png)",
  "<style>body { background: url(https://evil.example/css.png) }</style>",
  '<a href="https://evil.example/x" onclick="window.__xss=\'a\'">a link</a>',
  `The token was ${SECRET}.`,
].join("\n\n");

const scenario = {
  name: "share a hostile session",
  steps: [
    {
      match: { last_message_contains: "greeting" },
      response: {
        events: [
          {
            tool_call: {
              id: "toolu_s1",
              name: "edit",
              arguments: { path: "src/app.ts", old_string: '"hello "', new_string: '"hi there "' },
            },
          },
        ],
      },
    },
    { match: { has_tool_result: "toolu_s1" }, response: { events: [{ text: HOSTILE }] } },
  ],
};

let stack: Stack | undefined;
let share: ShareServer | undefined;
test.afterEach(async () => {
  await stack?.stop();
  await share?.stop();
});

test("a shared session renders inertly and a revoked one is gone", async ({ page, context }, testInfo) => {
  share = await startShareServer(testInfo);
  stack = await startStack(testInfo, scenario, {
    permissions: [{ permission: "edit", action: "allow" }],
    config: { share: { endpoint: share.url } },
  });
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Change the greeting");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Here is the result.");
  await until("the edit on disk", () => stack!.read("src/app.ts")?.includes("hi there"));

  // The preview: the payload as it will be sent, the secret redacted and listed.
  await page.getByRole("button", { name: "Share", exact: true }).click();
  const dialog = page.getByTestId("share-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("share-redactions")).toContainText("github-pat");
  await expect(dialog.locator("mark.redaction").first()).toBeVisible();
  expect(await dialog.textContent()).not.toContain(SECRET);
  await shot(page, testInfo, "40-share-preview");
  await dialog.getByTestId("share-submit").click();
  const urlField = dialog.getByTestId("share-url");
  await expect(urlField).toHaveValue(new RegExp(`^${share.url}/s/[A-Za-z0-9_-]{22}$`));
  const shareUrl = await urlField.inputValue();

  // The viewer, in a fresh page that records every request and any script effect.
  const viewer = await context.newPage();
  const requests: Request[] = [];
  viewer.on("request", (r) => requests.push(r));
  const dialogs: string[] = [];
  viewer.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const res = await viewer.goto(shareUrl);
  expect(res?.status()).toBe(200);
  expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");
  expect(res?.headers()["x-robots-tag"]).toContain("noindex");
  await expect(viewer.locator("article.msg.user")).toContainText("Change the greeting");
  await expect(viewer.locator("article.msg.assistant").last()).toContainText("Here is the result.");
  // The hostile markup is shown as text.
  await expect(viewer.locator("body")).toContainText("<script>window.__xss = 'script'</script>");
  // A tool call: collapsible, with its arguments.
  const tool = viewer.locator("details.tool").first();
  await expect(tool.locator("summary")).toContainText("edit");
  await tool.locator("summary").click();
  await expect(tool).toContainText('"new_string": "\\"hi there \\""');
  // The diff, highlighted.
  const diff = viewer.locator("details.diff").first();
  await expect(diff.locator("summary")).toContainText("src/app.ts");
  await expect(diff.locator("tr.add")).toContainText('return "hi there " + name;');
  expect(await diff.locator("[class*='s-']").count()).toBeGreaterThan(0);
  // Click the javascript: link's text and the external link: nothing runs.
  await viewer.getByText("click me").click();
  await shot(viewer, testInfo, "41-share-viewer");
  expect(await viewer.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
  expect(dialogs).toEqual([]);
  expect(await viewer.locator("script, img, svg, iframe, object, embed").count()).toBe(0);
  const external = viewer.locator("a.external");
  await expect(external.first()).toHaveAttribute("rel", "noopener noreferrer nofollow ugc");
  const origin = new URL(share.url).origin;
  const foreign = requests.map((r) => r.url()).filter((u) => new URL(u).origin !== origin);
  expect(foreign).toEqual([]);
  // The secret is not on the page, nor anywhere the server keeps data.
  expect(await viewer.content()).not.toContain(SECRET);
  await expect(viewer.locator("body")).toContainText("[REDACTED:github-pat]");
  for (const f of [share.db, `${share.db}-wal`]) {
    if (existsSync(f)) expect(readFileSync(f).includes(SECRET)).toBe(false);
  }

  // My shares lists it; "Stop sharing" revokes it: the link answers 410.
  await dialog.getByRole("button", { name: /stop sharing/i }).click();
  const confirm = page.getByRole("button", { name: /stop sharing|revoke|yes/i }).last();
  if (await confirm.isVisible().catch(() => false)) await confirm.click();
  await until("the share revoked", async () => (await viewer.request.get(shareUrl)).status() === 410);
  const gone = await viewer.goto(shareUrl);
  expect(gone?.status()).toBe(410);
  await expect(viewer.locator("h1")).toContainText("no longer available");
});
