// Shared by the desktop smoke test and the desktop benchmark: free ports,
// polling, the mock model, a minimal W3C WebDriver client for tauri-driver,
// a tauri-driver launcher, and the app's processes (Linux /proc).
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { writeFileSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const binDir = process.env.MIA_BIN_DIR ?? join(root, "target/debug");

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

export async function until(what, fn, timeoutMs = 30_000) {
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

export function startMock(scenarioPath, logPath) {
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

export class WebDriver {
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
  execAsync(script, args = []) {
    return this.req("POST", this.s("/execute/async"), { script, args });
  }
  setTimeouts(t) {
    return this.req("POST", this.s("/timeouts"), t);
  }
  async screenshot(path) {
    const b64 = await this.req("GET", this.s("/screenshot"));
    writeFileSync(path, Buffer.from(b64, "base64"));
  }
  async quit() {
    if (this.sid) await this.req("DELETE", this.s("")).catch(() => {});
  }
}


/** Starts tauri-driver on free ports with `env`; resolves once it answers. */
export async function startDriver(env, logPath) {
  const port = await freePort();
  const nativePort = await freePort();
  const driver = spawn(
    process.env.TAURI_DRIVER ?? "tauri-driver",
    ["--port", String(port), "--native-port", String(nativePort), "--native-driver", process.env.WEBKIT_WEBDRIVER ?? "/usr/bin/WebKitWebDriver"],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  const keep = (d) => {
    text += d;
    writeFileSync(logPath, text);
  };
  driver.stdout.on("data", keep);
  driver.stderr.on("data", keep);
  await until("tauri-driver", async () => (await fetch(`http://127.0.0.1:${port}/status`)).ok, 20_000);
  return { driver, wd: new WebDriver(`http://127.0.0.1:${port}`) };
}

/** The WebKitGTK settings that keep windows from rendering blank under Xvfb. */
export const WEBKIT_ENV = {
  WEBKIT_DISABLE_COMPOSITING_MODE: "1",
  WEBKIT_DISABLE_DMABUF_RENDERER: "1",
  LIBGL_ALWAYS_SOFTWARE: "1",
  NO_AT_BRIDGE: "1",
};

/** The newest process running the app binary at `appPath` (pgrep on its command line). */
export function appPid(appPath) {
  const r = spawnSync("pgrep", ["-n", "-f", `^${appPath}`], { encoding: "utf8" });
  const pid = Number(r.stdout.trim());
  if (!pid) throw new Error(`the app's process (${appPath}) was not found`);
  return pid;
}

/** A pid and every descendant (the app: WebKit's web and network processes). */
export function processTree(rootPid) {
  const parent = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const pp = readFileSync(`/proc/${d}/status`, "utf8").match(/^PPid:\s+(\d+)/m);
      if (pp) parent.set(Number(d), Number(pp[1]));
    } catch {
      /* gone */
    }
  }
  const tree = [rootPid];
  for (let k = 0; k < tree.length; k++) for (const [p, pp] of parent) if (pp === tree[k]) tree.push(p);
  return tree;
}
