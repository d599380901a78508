// Desktop smoke test: the real Mia Code binary (UI embedded), driven by
// tauri-driver + WebKitWebDriver over plain W3C WebDriver. Run it under
// `dbus-run-session -- xvfb-run -a` (scripts/test does). The window opens,
// the session list renders from the real store (seeded by `mia-code run`),
// one prompt round-trips through the mock model, Settings → Updates
// answers from the app's own updater command, the web process runs with the
// app's JavaScriptCore settings, and the page reported no CSP
// violation or console error. Screenshot and logs in
// target/desktop/. Conditions are polled, never slept on; one retry at most.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root, binDir, until, startMock, startDriver, WEBKIT_ENV, appPid, processTree } from "./lib.mjs";

const app = process.env.MIA_DESKTOP_BIN ?? join(binDir, "mia-code-desktop");
const outDir = join(root, "target/desktop");
mkdirSync(outDir, { recursive: true });

const log = (...a) => console.log("[desktop-smoke]", ...a);

/** The environment of the app's WebKit web process (a descendant of the app's process). */
function webProcessEnv(appPath) {
  const tree = processTree(appPid(appPath));
  const web = tree.find((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim().startsWith("WebKitWebProces");
    } catch {
      return false;
    }
  });
  if (!web) throw new Error(`no WebKit web process under the app (${tree.length} processes)`);
  return readFileSync(`/proc/${web}/environ`, "utf8").split("\0");
}

async function attempt(n) {
  const tmp = mkdtempSync(join(tmpdir(), "mia-desktop-"));
  const project = join(tmp, "project");
  const home = join(tmp, "home");
  const miaHome = join(tmp, "mia-home");
  const xdg = join(home, ".config");
  for (const d of [project, home, miaHome, join(xdg, "mia-code")]) mkdirSync(d, { recursive: true });
  writeFileSync(join(project, "README.md"), "# Desktop smoke\n");
  // A repository with a commit, for the review pane.
  const git = (...args) => {
    const r = spawnSync("git", ["-c", "user.email=smoke@example.com", "-c", "user.name=smoke", ...args], { cwd: project, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  const scenario = {
    name: "desktop smoke",
    steps: [
      { match: { last_message_contains: "seeded session" }, response: { events: [{ text: "Seeded answer." }] } },
      {
        match: { last_message_contains: "desktop round trip" },
        response: { chunk_delay_ms: 10, events: [{ text: "Hello from the mock model " }, { text: "in the desktop app." }] },
      },
    ],
  };
  const scenarioPath = join(tmp, "scenario.json");
  writeFileSync(scenarioPath, JSON.stringify(scenario));
  const mock = await startMock(scenarioPath, join(outDir, `mock-${n}.log`));
  writeFileSync(
    join(xdg, "mia-code", "config.json"),
    JSON.stringify({
      model: "anthropic/claude-sonnet-4-5",
      providers: { anthropic: { baseURL: mock.url, apiKey: "smoke-key" } },
    }),
  );
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: xdg,
    MIA_CODE_HOME: miaHome,
    ANTHROPIC_API_KEY: "",
    ...WEBKIT_ENV,
  };
  // The real store gets a session the way a user makes one: `mia-code run`.
  const seeded = spawnSync(join(binDir, "mia-code"), ["run", "Start a seeded session"], { cwd: project, env, encoding: "utf8" });
  if (seeded.status !== 0) throw new Error(`mia-code run failed (status ${seeded.status}, signal ${seeded.signal}, ${seeded.error ?? "no spawn error"}): ${seeded.stderr}`);

  const { driver, wd } = await startDriver(env, join(outDir, `tauri-driver-${n}.log`));
  try {
    const t0 = Date.now();
    await wd.start({ "tauri:options": { application: app, args: ["--project", project] } });
    const list = await until("the session list", () => wd.find("session-list"), 60_000);
    const items = await until("a listed session", async () => {
      const all = await wd.findAll("session-item");
      return all.length > 0 ? all : null;
    });
    log(`window up, session list rendered in ${Date.now() - t0} ms with ${items.length} session(s)`);
    if (items.length !== 1) throw new Error(`expected the 1 seeded session, found ${items.length}`);
    // The title comes from the store (named after the session's first message).
    const listed = await wd.exec("return arguments[0].textContent", [{ "element-6066-11e4-a52e-4f735466cecf": list }]);
    if (!/seeded session/i.test(listed)) throw new Error(`the seeded session is not listed by title: ${listed}`);
    await wd.click(items[0]);
    const input = await until("the prompt input", () => wd.find("prompt-input"));
    await wd.type(input, "Please do a desktop round trip");
    await wd.click(await wd.find("send"));
    await until(
      "the streamed answer",
      async () => {
        const msgs = await wd.findAll("message-assistant");
        for (const m of msgs) if ((await wd.text(m)).includes("in the desktop app.")) return true;
        return false;
      },
      30_000,
    );
    // The turn ends: no Stop, and the sidebar no longer says the session is running.
    await until(
      "the turn's end (no Stop, the session no longer running in the sidebar)",
      () =>
        wd.exec(
          "return !document.querySelector('[data-testid=stop]') && !document.querySelector('[data-testid=session-item][data-running=true]')",
        ),
      15_000,
    );
    const shotPath = join(outDir, "desktop-smoke.png");
    await wd.screenshot(shotPath);
    log(`round trip ok; screenshot ${shotPath}`);
    // The review pane on screen: an uncommitted change listed as a hunk,
    // staged with one click (the index then holds it).
    writeFileSync(join(project, "README.md"), "# Desktop smoke\n\nReviewed in the desktop app.\n");
    await wd.click(await wd.find("open-review"));
    await until("the review pane", () => wd.find("review-pane"), 15_000);
    await wd.click(await until("a hunk to stage", () => wd.find("hunk-stage"), 15_000));
    await until("the staged hunk", () => wd.find("hunk-unstage"), 15_000);
    const cached = git("diff", "--cached");
    if (!cached.includes("+Reviewed in the desktop app.")) throw new Error(`the hunk was not staged: ${cached}`);
    await wd.screenshot(join(outDir, "desktop-review.png"));
    log("review pane: a hunk staged from the desktop app");
    await wd.click(await wd.find("review-close"));
    // The web process runs with the app's JavaScriptCore settings (the app executed itself
    // again with them: src-tauri/src/webview_env.rs), under the same PID WebDriver started.
    if (process.platform === "linux") {
      const web = webProcessEnv(app);
      for (const want of ["JSC_useDFGJIT=0", "JSC_thresholdForJITAfterWarmUp=20000", "JSC_thresholdForJITSoon=2000", "JSC_useGenerationalGC=0"]) {
        if (!web.includes(want)) {
          const jsc = web.filter((v) => v.startsWith("JSC_")).join(" ") || "no JSC_ variable";
          throw new Error(`the web process's environment lacks ${want}: ${jsc}`);
        }
      }
      log("the web process has the app's JavaScriptCore settings");
    }
    // Settings → Updates asks the app itself (the update_status command,
    // allowed by the capabilities): a build without the release key has no
    // update channel and says so, and nothing was contacted.
    await wd.click(await wd.find("open-settings"));
    const state = await until("the update state", () => wd.find("update-state"), 15_000);
    const which = await wd.exec("return arguments[0].getAttribute('data-state')", [
      { "element-6066-11e4-a52e-4f735466cecf": state },
    ]);
    if (which !== "no-channel") throw new Error(`expected no update channel in a source build, got ${which}`);
    log("Settings → Updates: no update channel (source build)");
    // No CSP violation, uncaught error or console error anywhere in the run
    // (the page records them from its first line: ui/src/lib/diagnostics.ts).
    const problems = await wd.exec("return window.__miaDiagnostics ?? null");
    if (!Array.isArray(problems)) throw new Error("the page did not install its diagnostics");
    if (problems.length > 0) throw new Error(`the page reported problems:\n  ${problems.join("\n  ")}`);
    log("no CSP violations or console errors");
  } catch (e) {
    await wd.screenshot(join(outDir, `desktop-smoke-failure-${n}.png`)).catch(() => {});
    throw e;
  } finally {
    await wd.quit();
    driver.kill("SIGTERM");
    mock.child.stdin.end();
    const appLog = join(miaHome, "logs", "desktop.log");
    if (existsSync(appLog)) writeFileSync(join(outDir, `desktop-${n}.log`), readFileSync(appLog));
  }
}

try {
  await attempt(1);
} catch (e) {
  log(`attempt 1 failed: ${e.message}; retrying once`);
  try {
    await attempt(2);
  } catch (e2) {
    log(`attempt 2 failed: ${e2.message}`);
    log(`logs and screenshots: ${outDir}`);
    process.exit(1);
  }
}
process.exit(0);
