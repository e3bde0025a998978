import { describe, expect, it } from "vitest";
import fixture from "../../shared/testing/merge-regions.json";
import type { MergeRegion } from "../../shared/api/generated";
import { choose, type Draft, entangled, excerpt, typed, undecidedCount } from "./conflictDraft";
import { compose, segmentsOf } from "./result";

// Two places, as the core merges them (merge-regions.json is held to the core's merge).
const twoPlaces = (fixture as unknown as { cases: { name: string; regions?: MergeRegion[] }[] }).cases.find((c) => c.name === "conflict view: two places, one edit each side apart");
const m = segmentsOf(twoPlaces!.regions!);
const start = (): Draft => {
  const { text, ranges } = compose(m, []);
  return { text, ranges, choices: m.overlaps.map(() => undefined), edited: m.overlaps.map(() => false), title: "t", titleEdited: false, showBase: false };
};

describe("conflict draft", () => {
  it("choices write their sides into the result as composing the merge with them does, the places after moving along", () => {
    expect(m.overlaps).toHaveLength(2);
    const d = choose(choose(start(), m.overlaps[0]!, "both"), m.overlaps[1]!, "theirs");
    expect({ text: d.text, ranges: d.ranges }).toEqual(compose(m, ["both", "theirs"]));
    expect(d.choices).toEqual(["both", "theirs"]);
    expect(undecidedCount(d, m, false)).toBe(0);
    expect(undecidedCount(d, m, true)).toBe(1);
    expect(undecidedCount(start(), m, false)).toBe(2);
  });

  it("typing into a place decides it; typing across two entangles them; typing nothing changes nothing", () => {
    const d0 = start();
    const r0 = d0.ranges[0]!;
    const d = typed(d0, d0.text.slice(0, r0.from + 1) + "丙" + d0.text.slice(r0.from + 1));
    expect(d.edited).toEqual([true, false]);
    expect(undecidedCount(d, m, false)).toBe(1);
    const r1 = d0.ranges[1]!;
    const across = typed(d0, d0.text.slice(0, r0.from + 1) + "X" + d0.text.slice(r1.from + 1));
    expect(entangled(across, 0)).toBe(true);
    expect(entangled(d, 0)).toBe(false);
    expect(typed(d, d.text)).toBe(d);
  });

  it("names a place by its first non-empty line, cut at 24 characters", () => {
    expect(excerpt("", "\n  第二行\n")).toBe("第二行");
    expect(excerpt("a".repeat(30))).toBe(`${"a".repeat(24)}…`);
  });
});
