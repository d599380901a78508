import { describe, expect, it } from "vitest";
import type { Element, Root } from "hast";
import { highlight, lowlight } from "./highlight";
import { highlightBlock, languageFor } from "../components/diff/highlight";

const classes = (root: Root | null): string[] => {
  const out: string[] = [];
  const walk = (n: Root | Element) => {
    for (const c of n.children) {
      if (c.type === "element") {
        const cls = c.properties.className;
        if (Array.isArray(cls)) out.push(...cls.map(String));
        walk(c);
      }
    }
  };
  if (root) walk(root);
  return out;
};

describe("the one highlighter", () => {
  it("chat and diffs know the same languages: every language a diff picks by extension highlights in chat too", () => {
    for (const path of ["a.ts", "a.rs", "a.py", "a.go", "a.java", "a.c", "a.cpp", "a.sql", "a.toml", "a.yml", "a.sh", "a.html"]) {
      const lang = languageFor(path);
      expect(lang, path).not.toBeNull();
      expect(lowlight.registered(lang!), path).toBe(true);
      expect(highlight("int x = 1;", lang!), path).not.toBeNull();
    }
  });

  it("gives chat and diff the same token classes for the same code", () => {
    const code = "fn main() { let s = \"hi\"; }";
    const chat = classes(highlight(code, "rust"));
    const diff = (highlightBlock(code, "rust") ?? []).flat().flatMap((t) => (t.cls ?? "").split(" ").filter(Boolean));
    expect(chat).toContain("hljs-keyword");
    expect(chat).toContain("hljs-string");
    expect(new Set(diff)).toEqual(new Set(chat));
  });

  it("chat aliases: c++ and tsx", () => {
    expect(highlight("int main() {}", "c++")).not.toBeNull();
    expect(highlight("const a = <div/>;", "tsx")).not.toBeNull();
    expect(highlight("x", "klingon")).toBeNull();
  });
});
