// The real stack for one browser test: a temp git project, a temp
// MIA_CODE_HOME, `mia-mock-llm` playing a scenario (the only mock: it speaks
// Anthropic's real SSE wire format), and `mia-code serve` serving the built
// UI. Everything listens on OS-assigned ports; logs are kept per test.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestInfo } from "@playwright/test";

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, "../..");
const binDir = process.env.MIA_BIN_DIR ?? join(repoRoot, "target/debug");
const uiDir = process.env.MIA_UI_DIR ?? join(repoRoot, "ui/dist");

export interface Stack {
  root: string;
  project: string;
  home: string;
  url: string;
  token: string;
  /** The page URL that logs the UI in (token in the fragment). */
  openUrl: string;
  /** Stops everything; fails when the mock saw a protocol violation. */
  stop(): Promise<void>;
  /** Reads a project file (for assertions on disk). */
  read(rel: string): string | null;
  /**
   * Stops the server (kill -9 with `hard`) and starts it again on the same port with the same
   * token (`MIA_CODE_SERVE_TOKEN`), as a user restarting `mia-code serve` would; `between` runs
   * while it is down.
   */
  restart(opts?: { hard?: boolean; between?: () => Promise<void> | void }): Promise<void>;
  /** Runs the `mia-code` CLI with the stack's environment (its own process, the same store). */
  cli(args: string[]): string;
  /** With `forge`: the requests the GitHub stand-in received, oldest first. */
  forgeRequests(): ForgeRequest[];
  /** With `forge`: the bare repository `origin` pushes to. */
  remoteRepo: string | null;
}

/** One request the GitHub/GitLab stand-in received (`mia-forge-standin --log`). */
export interface ForgeRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: unknown;
}

export interface StackOptions {
  /** Extra permission rules in the global config (e.g. ask before edits). */
  permissions?: Array<{ permission: string; pattern?: string; action: "allow" | "ask" | "deny" }>;
  /** Files of the sample project (path → content). */
  files?: Record<string, string>;
  /** More keys of the global config (e.g. `editor`). */
  config?: Record<string, unknown>;
  /**
   * A GitHub REST stand-in (`mia-forge-standin`, token in GH_TOKEN, `github.apiURL` set) and a
   * bare `origin` (`acme/widgets.git`) served over git's smart HTTP (`mia-git-http`), `main`
   * pushed to it.
   */
  forge?: boolean;
}

function tool(name: string): string {
  const p = join(binDir, name);
  if (!existsSync(p)) {
    throw new Error(`${p} is missing: build it first (cargo build -p mia-cli -p mia-testkit -p mia-share-server), or set MIA_BIN_DIR`);
  }
  return p;
}

/** Starts `cmd` and resolves with the first stdout line matching `re`. */
function startAndWait(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logPath: string,
  re: RegExp,
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; lines: string[] }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const lines: string[] = [];
    let log = "";
    const flush = () => writeFileSync(logPath, log);
    const timer = setTimeout(() => {
      flush();
      reject(new Error(`${cmd} did not print ${re} within ${timeoutMs} ms; log: ${logPath}`));
    }, timeoutMs);
    child.stderr?.on("data", (d: Buffer) => {
      log += d.toString();
      flush();
    });
    const rl = createInterface({ input: child.stdout! });
    let done = false;
    rl.on("line", (line) => {
      lines.push(line);
      log += line + "\n";
      flush();
      const m = line.match(re);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolvePromise({ child, match: m, lines });
      }
    });
    child.on("exit", (code) => {
      flush();
      if (!done) {
        clearTimeout(timer);
        reject(new Error(`${cmd} exited with ${code} before it was ready; log: ${logPath}`));
      }
    });
  });
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((res) => {
    if (child.exitCode !== null) return res(child.exitCode);
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      res(null);
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(t);
      res(code);
    });
  });
}

export async function startStack(
  testInfo: TestInfo,
  scenario: unknown,
  opts: StackOptions = {},
): Promise<Stack> {
  const root = mkdtempSync(join(tmpdir(), "mia-e2e-"));
  const project = join(root, "project");
  const home = join(root, "home");
  const miaHome = join(root, "mia-home");
  const xdg = join(home, ".config");
  const logs = testInfo.outputDir;
  mkdirSync(logs, { recursive: true });
  for (const d of [project, home, miaHome, join(xdg, "mia-code")]) mkdirSync(d, { recursive: true });

  const files = opts.files ?? {
    "README.md": "# Sample project\n\nA tiny project for trying mia-code.\n",
    "src/app.ts": 'export function greet(name: string): string {\n  return "hello " + name;\n}\n',
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(project, rel)), { recursive: true });
    writeFileSync(join(project, rel), content);
  }
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: project,
      env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  git("-c", "user.email=e2e@example.com", "-c", "user.name=e2e", "add", "-A");
  git("-c", "user.email=e2e@example.com", "-c", "user.name=e2e", "commit", "-q", "-m", "initial");

  const helpers: ChildProcess[] = [];
  const forgeLog = join(logs, "forge-requests.jsonl");
  let forgeApi: string | null = null;
  let remoteRepo: string | null = null;
  if (opts.forge) {
    const standin = await startAndWait(
      tool("mia-forge-standin"),
      ["--token", "ghp_e2e", "--log", forgeLog],
      process.env,
      join(logs, "forge.log"),
      /^listening on (http:\/\/\S+)/,
    );
    helpers.push(standin.child);
    forgeApi = `${standin.match[1]!}/api/v3`;
    const srv = join(root, "srv");
    remoteRepo = join(srv, "acme", "widgets.git");
    mkdirSync(remoteRepo, { recursive: true });
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", remoteRepo], { stdio: "ignore" });
    execFileSync("git", ["-C", remoteRepo, "config", "http.receivepack", "true"], { stdio: "ignore" });
    const http = await startAndWait(tool("mia-git-http"), [srv], process.env, join(logs, "git-http.log"), /^listening on (http:\/\/\S+)/);
    helpers.push(http.child);
    git("remote", "add", "origin", `${http.match[1]!}/acme/widgets.git`);
    git("push", "-q", "origin", "main");
  }

  const scenarioPath = join(root, "scenario.json");
  writeFileSync(scenarioPath, JSON.stringify(scenario, null, 2));
  const recordPath = join(logs, "mock-record.json");
  const mock = await startAndWait(
    tool("mia-mock-llm"),
    ["--scenario", scenarioPath, "--exit-on-stdin-eof", "--record", recordPath],
    process.env,
    join(logs, "mock.log"),
    /^listening on (http:\/\/\S+)/,
  );
  const mockUrl = mock.match[1]!;

  writeFileSync(
    join(xdg, "mia-code", "config.json"),
    JSON.stringify(
      {
        model: "anthropic/claude-sonnet-4-5",
        providers: { anthropic: { baseURL: mockUrl, apiKey: "e2e-test-key" } },
        permissions: opts.permissions ?? [],
        ...(forgeApi ? { github: { apiURL: forgeApi } } : {}),
        ...(opts.config ?? {}),
      },
      null,
      2,
    ),
  );

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: xdg,
    MIA_CODE_HOME: miaHome,
    MIA_LOG: "debug",
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    GEMINI_API_KEY: "",
    GOOGLE_API_KEY: "",
    GH_TOKEN: opts.forge ? "ghp_e2e" : "",
    GITHUB_TOKEN: "",
    GITLAB_TOKEN: "",
  };
  let server: Awaited<ReturnType<typeof startAndWait>>;
  try {
    server = await startAndWait(
      tool("mia-code"),
      ["serve", "--port", "0", "--ui", uiDir, "--project", project],
      env,
      join(logs, "server.log"),
      /^open: (http:\/\/[^/]+)\/#token=([0-9a-f]+)/,
    );
  } catch (e) {
    mock.child.stdin?.end();
    for (const h of helpers) h.stdin?.end();
    throw e;
  }
  const url = server.match[1]!;
  const token = server.match[2]!;
  let restarts = 0;

  let stopped = false;
  return {
    root,
    project,
    home: miaHome,
    url,
    token,
    openUrl: `${url}/#token=${token}`,
    read(rel: string) {
      const p = join(project, rel);
      return existsSync(p) ? readFileSync(p, "utf8") : null;
    },
    async restart(o = {}) {
      server.child.kill(o.hard ? "SIGKILL" : "SIGINT");
      await waitExit(server.child, 10_000);
      await o.between?.();
      restarts += 1;
      const port = new URL(url).port;
      server = await startAndWait(
        tool("mia-code"),
        ["serve", "--port", port, "--ui", uiDir, "--project", project],
        { ...env, MIA_CODE_SERVE_TOKEN: token },
        join(logs, `server-${restarts}.log`),
        /^open: (http:\/\/[^/]+)\/#token=([0-9a-f]+)/,
      );
    },
    cli(args: string[]) {
      return execFileSync(tool("mia-code"), args, { cwd: project, env, encoding: "utf8", timeout: 60_000 });
    },
    forgeRequests() {
      if (!existsSync(forgeLog)) return [];
      return readFileSync(forgeLog, "utf8")
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as ForgeRequest);
    },
    remoteRepo,
    async stop() {
      if (stopped) return;
      stopped = true;
      server.child.kill("SIGINT");
      await waitExit(server.child, 10_000);
      mock.child.stdin?.end();
      for (const h of helpers) {
        h.stdin?.end();
        await waitExit(h, 5_000);
      }
      const code = await waitExit(mock.child, 10_000);
      const serverLog = join(miaHome, "logs", "mia-code.log");
      if (existsSync(serverLog)) writeFileSync(join(logs, "mia-code.log"), readFileSync(serverLog));
      if (code === 3) {
        const rec = existsSync(recordPath) ? readFileSync(recordPath, "utf8") : "";
        throw new Error(`the mock LLM saw protocol violations:\n${rec.slice(0, 4000)}`);
      }
    },
  };
}

export interface ShareServer {
  url: string;
  db: string;
  stop(): Promise<void>;
}

/** A real `mia-share-server` on a free port, its shares in a SQLite file. */
export async function startShareServer(testInfo: TestInfo): Promise<ShareServer> {
  const root = mkdtempSync(join(tmpdir(), "mia-share-"));
  const db = join(root, "shares.db");
  mkdirSync(testInfo.outputDir, { recursive: true });
  const s = await startAndWait(
    tool("mia-share-server"),
    ["--host", "127.0.0.1", "--port", "0", "--db", db],
    process.env,
    join(testInfo.outputDir, "share-server.log"),
    /^listening on (http:\/\/\S+)/,
  );
  return {
    url: s.match[1]!,
    db,
    async stop() {
      s.child.kill("SIGTERM");
      await waitExit(s.child, 10_000);
    },
  };
}

/** Polls `fn` until it returns a truthy value (conditions, not sleeps). */
export async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}
