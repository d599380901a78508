import { describe, expect, it } from "vitest";
import { closeOpenMarkdown, splitBlocks, splitGrowing, splitRendered, type Split } from "./streaming";

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

describe("splitGrowing", () => {
  // Text that stresses every boundary rule: fences (with blank lines, ~ and longer markers,
  // a fence opened but not closed yet), indented continuations, runs of blank lines,
  // whitespace-only lines, lists and headings.
  const text = [
    "# Title\n\nPara one\nline two\n\n\n\n",
    "```ts\nconst a = 1;\n\n\nconst b = 2;\n```\n\n",
    "1. item\n\n    more of item\n   \n  - nested\n\n",
    "~~~~\ncode ``` not closing\n\n~~~\n~~~~\n\nafter tilde\n\n",
    "- a **bold** point and `code`\n- b\n\n   \n\n> quote\n> more\n\n",
    "````md\n```\ninner\n```\n````\n\nend\n\n\n  trailing indented\n\nlast",
  ].join("");

  it("gives what splitting the whole text gives, however the text grows", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let run = 0; run < 40; run++) {
      let prev: Split | null = null;
      let at = 0;
      while (at < text.length) {
        at = Math.min(text.length, at + 1 + rand(run % 2 ? 3 : 40));
        const now = text.slice(0, at);
        prev = splitGrowing(now, prev);
        expect(prev.blocks, JSON.stringify(now)).toEqual(splitBlocks(now));
      }
    }
  });

  it("splits a text that did not grow from the previous one whole", () => {
    const prev = splitGrowing("first\n\nsecond", null);
    expect(splitGrowing("other\n\ntext", prev).blocks).toEqual(["other", "text"]);
    expect(splitGrowing("first", prev).blocks).toEqual(["first"]);
  });

  it("keeps the finished blocks it had (the same strings, not split again)", () => {
    const prev = splitGrowing("one\n\ntwo\n\nthr", null);
    const next = splitGrowing("one\n\ntwo\n\nthree\n\nfour", prev);
    expect(next.blocks).toEqual(["one", "two", "three", "four"]);
    expect(next.blocks[0]).toBe(prev.blocks[0]);
    expect(next.text.slice(next.lastStart)).toBe("four");
  });
});

describe("splitRendered", () => {
  it("follows several growing texts at once, each from its own last split", () => {
    const a = "# A\n\nfirst para\n\nsecond para that grows";
    const b = "```\ncode\n\nstill code";
    expect(splitRendered(a)).toEqual(splitBlocks(a));
    expect(splitRendered(b)).toEqual(splitBlocks(b));
    const a2 = a + " longer\n\n- a list";
    const b2 = b + "\n```\n\nafter";
    const aBlocks = splitRendered(a);
    expect(splitRendered(a2)).toEqual(splitBlocks(a2));
    // The finished blocks are the very strings of the earlier split.
    expect(splitRendered(a2)[0]).toBe(aBlocks[0]);
    expect(splitRendered(b2)).toEqual(["```\ncode\n\nstill code\n```", "after"]);
    // A text that is no continuation is split whole.
    expect(splitRendered("unrelated\n\ntext")).toEqual(["unrelated", "text"]);
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
