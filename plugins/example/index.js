// An example mia-code plugin (protocol 1), written with the SDK.
const { definePlugin, serve } = require("@mia-code/plugin-sdk");
const { version } = require("./package.json");

const plugin = definePlugin({
  name: "example",
  version,
  tools: [
    {
      name: "word_count",
      description: "Count the words, lines and characters of a text.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", description: "The text to count" } },
        required: ["text"],
      },
      permission: "word_count",
      run({ text }) {
        const words = String(text).split(/\s+/).filter(Boolean).length;
        const lines = String(text).split("\n").length;
        return `${words} words, ${lines} lines, ${String(text).length} characters (example plugin ${version})`;
      },
    },
  ],
  hooks: {
    "tool.execute.before"({ tool, arguments: args }) {
      if (tool === "bash" && /\brm\s+-[a-zA-Z]*r[a-zA-Z]*f|\brm\s+-[a-zA-Z]*f[a-zA-Z]*r/.test(String(args.command ?? ""))) {
        return { veto: "the example plugin does not let the agent run rm -rf" };
      }
      return undefined;
    },
  },
});

serve(plugin);
