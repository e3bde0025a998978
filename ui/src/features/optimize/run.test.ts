import { describe, expect, it } from "vitest";
import { hunk, view } from "../../shared/testing/fixtures";
import { keptHunks } from "./run";

describe("optimize run", () => {
  it("sends the kept hunks only of a proposal with a hunk rejected; the others are taken whole", () => {
    const hunks = [hunk("h1", 0, "a\n", "b\n"), hunk("h2", 1, "c\n", "d\n"), hunk("h3", 2, "e\n", "f\n")];
    const proposals = { source: view({ id: "prp_s", hunks }), x: view({ id: "prp_x", hunks }), zhihu: view({ id: "prp_z", hunks }) };
    const decisions = { source: { h2: "rejected" as const, h1: "accepted" as const }, x: { h1: "accepted" as const } };
    expect(keptHunks(proposals, decisions)).toEqual({ prp_s: ["h1", "h3"] });
  });
});
