import { describe, expect, it } from "vitest";
import { regionsOf } from "../../shared/testing/mergeRegions";
import { chosenText, compose, mapRange, segmentsOf, textChange } from "./result";

// Which lines merge and which conflict is the core's fold (its tests in
// src-tauri/core/src/sync/merge.rs hold the cases that were here); these are the result
// text the view makes of the core's regions.
const merge3 = (base: string, mine: string, theirs: string) => segmentsOf(regionsOf(base, mine, theirs));

describe("merge3", () => {
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
