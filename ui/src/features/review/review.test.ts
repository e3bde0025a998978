import { describe, expect, it } from "vitest";
import { hunk, view } from "../../shared/testing/fixtures";
import { initialDecisions, pendingCount, readyToApply, withRejected } from "./review";

describe("review decisions", () => {
  it("start from the engine's: rejected beats accepted, the rest pending", () => {
    const v = view({ hunks: [hunk("h1", 0, "a\n", "b\n"), hunk("h2", 1, "c\n", "d\n"), hunk("h3", 2, "e\n", "f\n")], acceptedHunks: ["h1", "h2"], rejectedHunks: ["h2"] });
    expect(initialDecisions(v)).toEqual({ h1: "accepted", h2: "rejected", h3: "pending" });
  });

  it("apply the accepted hunks together only once none is pending and one is accepted", () => {
    expect(readyToApply({ h1: "accepted", h2: "pending" })).toBeNull();
    expect(readyToApply({ h1: "rejected", h2: "rejected" })).toBeNull();
    expect(readyToApply({ h1: "accepted", h2: "rejected", h3: "accepted" })).toEqual(["h1", "h3"]);
    expect(readyToApply(withRejected({ h1: "accepted", h2: "pending" }, ["h2"]))).toEqual(["h1"]);
    expect(pendingCount({ h1: "accepted", h2: "pending", h3: "pending" })).toBe(2);
  });
});
