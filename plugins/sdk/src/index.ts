/**
 * The mia-code plugin SDK: declare tools and hooks, then `serve()` them.
 * mia-code starts the plugin with Node and speaks JSON-RPC 2.0 over stdio,
 * one message per line (protocol 1, docs/plugins.md). Anything the plugin
 * wants to log goes to stderr (`ctx.log`), never stdout.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

export const PROTOCOL = 1;

export interface CallContext {
  sessionId?: string;
  callId?: string;
  /** The project directory (also the process's working directory). */
  project: string;
  log(message: string): void;
}

export type ToolResult = string | { output: string; isError?: boolean };

export interface ToolDef<A = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema?: Record<string, unknown>;
  /** The permission a call is judged under (default: the tool's name). */
  permission?: string;
  run(args: A, ctx: CallContext): ToolResult | Promise<ToolResult>;
}

export interface ToolCallInfo {
  tool: string;
  arguments: Record<string, unknown>;
  sessionId?: string;
  callId?: string;
}

/** `veto`: the call does not run and the model is told why. `annotation`: a note added to the result. Arguments cannot be changed. */
export interface BeforeResult {
  veto?: string;
  annotation?: string;
}

export interface Hooks {
  "tool.execute.before"?(call: ToolCallInfo, ctx: CallContext): BeforeResult | void | Promise<BeforeResult | void>;
  "tool.execute.after"?(
    call: ToolCallInfo & { output: string; isError: boolean },
    ctx: CallContext,
  ): { annotation?: string } | void | Promise<{ annotation?: string } | void>;
  /** Adjust the next model request's parameters. */
  "chat.params"?(
    p: { agent: string; model: string; temperature?: number; maxTokens?: number },
    ctx: CallContext,
  ): { temperature?: number; maxTokens?: number } | void | Promise<{ temperature?: number; maxTokens?: number } | void>;
  /** May only tighten: "deny" or "ask"; anything else leaves the decision alone. */
  "permission.ask"?(
    r: { permission: string; target: string; tool: string; decision: "allow" | "ask" },
    ctx: CallContext,
  ): { action?: "deny" | "ask"; reason?: string } | void | Promise<{ action?: "deny" | "ask"; reason?: string } | void>;
  /** Runtime events (turn finished, tool results, ...), fire and forget. */
  event?(event: Record<string, unknown>, ctx: CallContext): void;
  /** Text for the compaction agent to keep in the summary. */
  "compaction.context"?(s: { sessionId: string }, ctx: CallContext): string | void | Promise<string | void>;
}

export interface Plugin {
  name: string;
  version?: string;
  tools?: ToolDef<any>[];
  hooks?: Hooks;
  /** Called once with the project and the plugin's options from the config. */
  setup?(init: { project: string; config: unknown }): void | Promise<void>;
}

export function definePlugin(p: Plugin): Plugin {
  for (const t of p.tools ?? []) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) throw new Error(`tool name ${JSON.stringify(t.name)}: use 1-64 of A-Z a-z 0-9 _ -`);
  }
  return p;
}

interface Message {
  jsonrpc?: string;
  id?: number;
  method?: string;
  params?: any;
}

/** Serve `plugin` on stdin/stdout (or the given streams, for tests). Returns when the input ends. */
export function serve(plugin: Plugin, io: { input?: Readable; output?: Writable; error?: Writable } = {}): Promise<void> {
  const input = io.input ?? process.stdin;
  const output = io.output ?? process.stdout;
  const error = io.error ?? process.stderr;
  let project = process.cwd();
  const log = (m: string) => {
    error.write(`[${plugin.name}] ${m}\n`);
  };
  const ctx = (p: any): CallContext => ({ sessionId: p?.session_id, callId: p?.call_id, project, log });
  const send = (m: Record<string, unknown>) => output.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
  const hooks = plugin.hooks ?? {};

  const handle = async (method: string, p: any): Promise<unknown> => {
    switch (method) {
      case "initialize": {
        if (p?.protocol !== PROTOCOL) throw new Error(`this plugin speaks protocol ${PROTOCOL}, not ${p?.protocol}`);
        project = p.project ?? project;
        await plugin.setup?.({ project, config: p.config ?? null });
        return {
          protocol: PROTOCOL,
          name: plugin.name,
          version: plugin.version,
          tools: (plugin.tools ?? []).map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema ?? { type: "object", properties: {} },
            permission: t.permission,
          })),
          hooks: Object.keys(hooks).filter((k) => typeof (hooks as Record<string, unknown>)[k] === "function"),
        };
      }
      case "tool.call": {
        const tool = (plugin.tools ?? []).find((t) => t.name === p?.name);
        if (!tool) throw new Error(`no tool ${p?.name}`);
        const r = await tool.run(p.arguments ?? {}, ctx(p));
        return typeof r === "string" ? { output: r, is_error: false } : { output: r.output, is_error: !!r.isError };
      }
      case "tool.execute.before": {
        const r = await hooks["tool.execute.before"]?.({ tool: p.tool, arguments: p.arguments, sessionId: p.session_id, callId: p.call_id }, ctx(p));
        return r ?? {};
      }
      case "tool.execute.after": {
        const r = await hooks["tool.execute.after"]?.(
          { tool: p.tool, arguments: p.arguments, sessionId: p.session_id, callId: p.call_id, output: p.output, isError: !!p.is_error },
          ctx(p),
        );
        return r ?? {};
      }
      case "chat.params": {
        const r = await hooks["chat.params"]?.({ agent: p.agent, model: p.model, temperature: p.temperature, maxTokens: p.max_tokens }, ctx(p));
        return r ? { temperature: r.temperature, max_tokens: r.maxTokens } : {};
      }
      case "permission.ask": {
        const r = await hooks["permission.ask"]?.({ permission: p.permission, target: p.target, tool: p.tool, decision: p.decision }, ctx(p));
        return r ?? {};
      }
      case "compaction.context": {
        const r = await hooks["compaction.context"]?.({ sessionId: p.session_id }, ctx(p));
        return { context: typeof r === "string" ? r : null };
      }
      default:
        throw Object.assign(new Error(`unknown method ${method}`), { code: -32601 });
    }
  };

  const rl = createInterface({ input, crlfDelay: Infinity });
  rl.on("line", (line) => {
    if (!line.trim()) return;
    let msg: Message;
    try {
      msg = JSON.parse(line) as Message;
    } catch {
      send({ id: null, error: { code: -32700, message: "parse error" } });
      return;
    }
    if (msg.id === undefined || msg.id === null) {
      if (msg.method === "event") {
        try {
          hooks.event?.(msg.params ?? {}, ctx(msg.params));
        } catch (e) {
          log(`event hook failed: ${String(e)}`);
        }
      }
      return;
    }
    const id = msg.id;
    handle(msg.method ?? "", msg.params).then(
      (result) => send({ id, result }),
      (e: unknown) => {
        const err = e as { message?: string; code?: number };
        send({ id, error: { code: err.code ?? -32000, message: err.message ?? String(e) } });
      },
    );
  });
  return new Promise((resolve) => rl.on("close", () => resolve()));
}
