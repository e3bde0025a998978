import { describe, expect, it } from "vitest";
import { Latest } from "./latest";

describe("Latest", () => {
  it("drops an answer that arrives after a newer read's answer", () => {
    const latest = new Latest();
    const older = latest.begin();
    const newer = latest.begin();
    expect(latest.accept(newer)).toBe(true);
    expect(latest.accept(older)).toBe(false);
  });
  it("shows answers that arrive in the order their reads started", () => {
    const latest = new Latest();
    const first = latest.begin();
    const second = latest.begin();
    expect(latest.accept(first)).toBe(true);
    expect(latest.accept(second)).toBe(true);
  });
  it("drops reads started before a local change", () => {
    const latest = new Latest();
    const before = latest.begin();
    latest.supersede();
    expect(latest.accept(before)).toBe(false);
    expect(latest.accept(latest.begin())).toBe(true);
  });
});
