import { describe, expect, it } from "vitest";
import { Lru } from "./lru";

describe("Lru", () => {
  it("drops the least recently used first when over its size, and counts a hit as a use", () => {
    const c = new Lru<string, number>(10);
    c.set("a", 1, 4);
    c.set("b", 2, 4);
    expect(c.get("a")).toBe(1); // a is now the most recently used
    c.set("c", 3, 4); // 12 > 10: b goes
    expect(c.get("b")).toBeUndefined();
    expect(c.get("a")).toBe(1);
    expect(c.get("c")).toBe(3);
    expect(c.weight).toBe(8);
  });

  it("bounds the number of entries, replaces a key's size, and never keeps what is bigger than the whole", () => {
    const c = new Lru<string, string>(100, 2);
    c.set("a", "A", 1);
    c.set("b", "B", 1);
    c.set("c", "C", 1);
    expect(c.size).toBe(2);
    expect(c.get("a")).toBeUndefined();
    c.set("b", "B2", 50);
    expect(c.weight).toBe(51);
    c.set("huge", "H", 101);
    expect(c.get("huge")).toBeUndefined();
    expect(c.get("b")).toBe("B2");
  });

  it("makes a value once per key", () => {
    const c = new Lru<string, object>(100);
    let made = 0;
    const make = () => ({ n: ++made });
    const first = c.getOrMake("k", 1, make);
    expect(c.getOrMake("k", 1, make)).toBe(first);
    expect(made).toBe(1);
    c.clear();
    expect(c.getOrMake("k", 1, make)).not.toBe(first);
  });
});
