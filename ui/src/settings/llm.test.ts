import { describe, expect, it } from "vitest";
import { fillDays, formatCost, keyTravelsInClear, maskedFingerprint, monthStart, parseOptionalNumber, windowStart } from "./llm";

describe("llm helpers", () => {
  it("warns about plain HTTP only to another machine (the core's rule)", () => {
    const check = (url: string, expected: boolean) => expect(keyTravelsInClear(url), url).toBe(expected);
    check("http://127.0.0.1:8080/v1", false);
    check("http://127.1.2.3/v1", false);
    check("http://localhost:1234/v1", false);
    check("http://app.localhost/v1", false);
    check("http://[::1]:11434/v1", false);
    check("HTTP://LOCALHOST", false);
    check("https://api.openai.com/v1", false);
    check("http://192.168.1.20:8080/v1", true);
    check("http://api.example.com/v1", true);
    check("http://[fe80::1]:80/v1", true);
    check("http://localhost.evil.com/v1", true);
    check("", false);
  });

  it("masks the stored fingerprint", () => {
    expect(maskedFingerprint("…abcd")).toBe("••••abcd");
    expect(maskedFingerprint("…")).toBe("••••");
  });

  it("fills a window of UTC days, oldest first", () => {
    const now = Date.parse("2026-03-02T23:30:00Z");
    const from = windowStart(now, 3);
    expect(new Date(from).toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(new Date(monthStart(now)).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    const t = { calls: 1, failedCalls: 0, inputTokens: 5, outputTokens: 1, cost: 0, pricedCalls: 0, estimated: false, latencyMsTotal: 1 };
    const days = fillDays([{ key: "2026-03-01", totals: t }], from, 3);
    expect(days.map((d) => [d.key, d.totals.inputTokens])).toEqual([
      ["2026-02-28", 0],
      ["2026-03-01", 5],
      ["2026-03-02", 0],
    ]);
  });

  it("formats costs and parses optional numbers", () => {
    expect(formatCost("en", 0)).toBe("0.00");
    expect(formatCost("en", 1234.5)).toBe("1,234.50");
    expect(formatCost("en", 0.0012)).toBe("0.0012");
    expect(parseOptionalNumber(" ")).toBeUndefined();
    expect(parseOptionalNumber("12.5")).toBe(12.5);
    expect(parseOptionalNumber("-1")).toBeNull();
    expect(parseOptionalNumber("abc")).toBeNull();
  });
});
