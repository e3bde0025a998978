import { describe, expect, it } from "vitest";
import { chosenText, compose, mapRange, merge3, splitLines, textChange } from "./merge3";

const clean = (base: string, mine: string, theirs: string) => {
  const m = merge3(base, mine, theirs);
  return m.overlaps.length === 0 ? compose(m, []).text : null;
};

describe("merge3", () => {
  it("splits lines keeping their ends", () => {
    expect(splitLines("a\nb")).toEqual(["a\n", "b"]);
    expect(splitLines("a\n\n")).toEqual(["a\n", "\n"]);
    expect(splitLines("")).toEqual([]);
  });

  it("merges edits apart and never edits that touch (the core's cases)", () => {
    const base = "一\n二\n三\n四\n五\n";
    expect(clean(base, "一改\n二\n三\n四\n五\n", "一\n二\n三\n四\n五改\n")).toBe("一改\n二\n三\n四\n五改\n");
    expect(clean(base, "一\n二\n三\n四改\n五\n", "前\n前\n一\n二\n三\n四\n五\n")).toBe("前\n前\n一\n二\n三\n四改\n五\n");
    expect(clean(base, "一\n二甲\n三\n四\n五\n", "一\n二乙\n三\n四\n五\n")).toBeNull();
    // Adjacent lines touch: not guessed apart.
    expect(clean(base, "一\n二甲\n三\n四\n五\n", "一\n二\n三乙\n四\n五\n")).toBeNull();
    // The same edit on both sides is taken once.
    expect(clean(base, "一\n二甲\n三\n四\n五改\n", "一\n二甲\n三\n四\n五\n")).toBe("一\n二甲\n三\n四\n五改\n");
    // One side only: that side.
    expect(clean(base, base, "x\n")).toBe("x\n");
  });

  it("cuts an overlapping merge into places with both sides and the base", () => {
    const m = merge3("一\n二\n三\n四\n五\n", "一改\n二甲\n三\n四\n五\n", "一\n二乙\n三\n四\n五改\n");
    expect(m.overlaps).toEqual([{ kind: "overlap", index: 0, baseStart: 0, baseEnd: 2, mineLine: 0, base: "一\n二\n", mine: "一改\n二甲\n", theirs: "一\n二乙\n" }]);
    expect(m.segments.map((s) => s.kind)).toEqual(["overlap", "same", "auto"]);
    expect(compose(m, ["theirs"]).text).toBe("一\n二乙\n三\n四\n五改\n");
    expect(compose(m, ["both"])).toEqual({ text: "一改\n二甲\n一\n二乙\n三\n四\n五改\n", ranges: [{ from: 0, to: 11 }] });
  });

  it("puts both sides on their own lines, also at the end of a text without a final newline", () => {
    expect(chosenText({ mine: "甲", theirs: "乙" }, "both")).toBe("甲\n乙");
    expect(chosenText({ mine: "", theirs: "乙\n" }, "both")).toBe("乙\n");
  });

  it("maps a place's range through typing", () => {
    const r = { from: 10, to: 20 };
    // Before it: shifted. After it (from its end on, the next line): untouched.
    expect(mapRange(r, { from: 2, oldTo: 4, newTo: 7 }, 30)).toEqual({ range: { from: 13, to: 23 }, touched: false });
    expect(mapRange(r, { from: 20, oldTo: 20, newTo: 22 }, 30)).toEqual({ range: r, touched: false });
    // At its start or inside: the place's own text now.
    expect(mapRange(r, { from: 10, oldTo: 10, newTo: 12 }, 30)).toEqual({ range: { from: 10, to: 22 }, touched: true });
    expect(mapRange(r, { from: 5, oldTo: 15, newTo: 6 }, 30)).toEqual({ range: { from: 5, to: 11 }, touched: true });
    expect(textChange("abc", "abXc")).toEqual({ from: 2, oldTo: 2, newTo: 3 });
    expect(textChange("aaa", "aa")).toEqual({ from: 2, oldTo: 3, newTo: 2 });
  });
});
