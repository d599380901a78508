import { describe, expect, it } from "vitest";
import { closeOpenMarkdown, splitBlocks } from "./streaming";

describe("splitBlocks", () => {
  it("splits at blank lines but keeps code fences and indented continuations whole", () => {
    const text =
      "# Title\n\nPara one\nline two\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n1. item\n\n    more of item\n\nend";
    expect(splitBlocks(text)).toEqual([
      "# Title",
      "Para one\nline two",
      "```ts\nconst a = 1;\n\nconst b = 2;\n```",
      "1. item\n\n    more of item",
      "end",
    ]);
  });
});

describe("closeOpenMarkdown", () => {
  it("closes an unterminated code fence", () => {
    expect(closeOpenMarkdown("```py\nprint(1)")).toBe("```py\nprint(1)\n```");
  });
  it("closes bold, inline code and strikethrough", () => {
    expect(closeOpenMarkdown("this is **bol")).toBe("this is **bol**");
    expect(closeOpenMarkdown("run `ls -")).toBe("run `ls -`");
    expect(closeOpenMarkdown("~~gone")).toBe("~~gone~~");
  });
  it("leaves complete text alone and hides a half-written link target", () => {
    expect(closeOpenMarkdown("**done** and `x`")).toBe("**done** and `x`");
    expect(closeOpenMarkdown("see [the docs](https://exa")).toBe("see the docs");
  });
});
