// Desktop smoke test: the real Mia Code binary (UI embedded), driven by
// tauri-driver + WebKitWebDriver over plain W3C WebDriver. Run it under
// `dbus-run-session -- xvfb-run -a` (scripts/test does). The window opens,
// the session list renders from the real store (seeded by `mia-code run`),
// and one prompt round-trips through the mock model. Screenshot and logs in
// target/desktop/. Conditions are polled, never slept on; one retry at most.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binDir = process.env.MIA_BIN_DIR ?? join(root, "target/debug");
const app = process.env.MIA_DESKTOP_BIN ?? join(binDir, "mia-code-desktop");
const outDir = join(root, "target/desktop");
mkdirSync(outDir, { recursive: true });

const log = (...a) => console.log("[desktop-smoke]", ...a);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function until(what, fn, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message ?? last}` : ""}`);
}

function startMock(scenarioPath, logPath) {
  return new Promise((res, rej) => {
    const child = spawn(join(binDir, "mia-mock-llm"), ["--scenario", scenarioPath, "--exit-on-stdin-eof"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let text = "";
    child.stderr.on("data", (d) => {
      text += d;
      writeFileSync(logPath, text);
    });
    const rl = createInterface({ input: child.stdout });
    rl.once("line", (line) => {
      const m = line.match(/^listening on (http:\/\/\S+)/);
      if (m) res({ child, url: m[1] });
      else rej(new Error(`unexpected mock output: ${line}`));
    });
    child.once("exit", (code) => rej(new Error(`mia-mock-llm exited with ${code}`)));
  });
}

class WebDriver {
  constructor(base) {
    this.base = base;
  }
  async req(method, path, body) {
    const r = await fetch(this.base + path, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j).slice(0, 400)}`);
    return j.value;
  }
  async start(capabilities) {
    const v = await this.req("POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    this.sid = v.sessionId;
  }
  s(path) {
    return `/session/${this.sid}${path}`;
  }
  async find(testid) {
    const v = await this.req("POST", this.s("/element"), {
      using: "css selector",
      value: `[data-testid="${testid}"]`,
    });
    return Object.values(v)[0];
  }
  async findAll(testid) {
    const v = await this.req("POST", this.s("/elements"), {
      using: "css selector",
      value: `[data-testid="${testid}"]`,
    });
    return v.map((e) => Object.values(e)[0]);
  }
  text(el) {
    return this.req("GET", this.s(`/element/${el}/text`));
  }
  click(el) {
    return this.req("POST", this.s(`/element/${el}/click`), {});
  }
  type(el, text) {
    return this.req("POST", this.s(`/element/${el}/value`), { text });
  }
  exec(script, args = []) {
    return this.req("POST", this.s("/execute/sync"), { script, args });
  }
  async screenshot(path) {
    const b64 = await this.req("GET", this.s("/screenshot"));
    writeFileSync(path, Buffer.from(b64, "base64"));
  }
  async quit() {
    if (this.sid) await this.req("DELETE", this.s("")).catch(() => {});
  }
}

async function attempt(n) {
  const tmp = mkdtempSync(join(tmpdir(), "mia-desktop-"));
  const project = join(tmp, "project");
  const home = join(tmp, "home");
  const miaHome = join(tmp, "mia-home");
  const xdg = join(home, ".config");
  for (const d of [project, home, miaHome, join(xdg, "mia-code")]) mkdirSync(d, { recursive: true });
  writeFileSync(join(project, "README.md"), "# Desktop smoke\n");
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
    WEBKIT_DISABLE_COMPOSITING_MODE: "1",
    WEBKIT_DISABLE_DMABUF_RENDERER: "1",
    LIBGL_ALWAYS_SOFTWARE: "1",
    NO_AT_BRIDGE: "1",
  };
  // The real store gets a session the way a user makes one: `mia-code run`.
  const seeded = spawnSync(join(binDir, "mia-code"), ["run", "Start a seeded session"], { cwd: project, env, encoding: "utf8" });
  if (seeded.status !== 0) throw new Error(`mia-code run failed: ${seeded.stderr}`);

  const port = await freePort();
  const nativePort = await freePort();
  const driverLog = join(outDir, `tauri-driver-${n}.log`);
  const driver = spawn(
    process.env.TAURI_DRIVER ?? "tauri-driver",
    ["--port", String(port), "--native-port", String(nativePort), "--native-driver", process.env.WEBKIT_WEBDRIVER ?? "/usr/bin/WebKitWebDriver"],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let dlog = "";
  const keep = (d) => {
    dlog += d;
    writeFileSync(driverLog, dlog);
  };
  driver.stdout.on("data", keep);
  driver.stderr.on("data", keep);
  const wd = new WebDriver(`http://127.0.0.1:${port}`);
  try {
    await until("tauri-driver", async () => (await fetch(`http://127.0.0.1:${port}/status`)).ok, 20_000);
    const t0 = Date.now();
    await wd.start({ "tauri:options": { application: app, args: ["--project", project] } });
    const list = await until("the session list", () => wd.find("session-list"), 60_000);
    const items = await until("a listed session", async () => {
      const all = await wd.findAll("session-item");
      return all.length > 0 ? all : null;
    });
    log(`window up, session list rendered in ${Date.now() - t0} ms with ${items.length} session(s)`);
    if (items.length !== 1) throw new Error(`expected the 1 seeded session, found ${items.length}`);
    const listText = await wd.text(list);
    if (!/seeded session/i.test(listText)) log(`note: session list text: ${listText.slice(0, 200)}`);
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
    const shotPath = join(outDir, "desktop-smoke.png");
    await wd.screenshot(shotPath);
    log(`round trip ok; screenshot ${shotPath}`);
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
