import { describe, expect, it } from "vitest";
import { locateAnchor } from "./anchors";

describe("locateAnchor", () => {
  it("keeps an anchor whose text is unchanged", () => {
    expect(locateAnchor("春眠不觉晓", { from: 0, to: 2 }, "春眠")).toEqual({ from: 0, to: 2 });
  });
  it("finds the quote again, nearest to where it was", () => {
    expect(locateAnchor("新的开头。春眠不觉晓", { from: 0, to: 2 }, "春眠")).toEqual({ from: 5, to: 7 });
    expect(locateAnchor("ab ab ab", { from: 5, to: 7 }, "ab")).toEqual({ from: 6, to: 8 });
  });
  it("gives up when the quote is gone or the range is empty", () => {
    expect(locateAnchor("夜来风雨声", { from: 0, to: 2 }, "春眠")).toBeNull();
    expect(locateAnchor("abc", { from: 1, to: 1 }, null)).toBeNull();
  });
});
