import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { Quotas, UsageReport, UsageTotals } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { Usage } from "./Usage";

afterEach(() => cleanup());

const totals = (over: Partial<UsageTotals> = {}): UsageTotals => ({
  calls: 1,
  failedCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cost: 0,
  estimated: false,
  latencyMsTotal: 100,
  // Priced when the row has a cost (a profile with prices answered).
  pricedCalls: over.cost ? (over.calls ?? 1) : 0,
  ...over,
});

// NOW is 2026-11-22T12:00:00Z (test-utils).
const report = (quotas: Quotas = {}): UsageReport => ({
  byDay: [
    { key: "2026-11-20", totals: totals({ calls: 2, inputTokens: 1000, outputTokens: 200, cost: 0.5, latencyMsTotal: 400 }) },
    { key: "2026-11-22", totals: totals({ calls: 1, inputTokens: 300, outputTokens: 100, cost: 0.25 }) },
  ],
  byProfile: [{ key: "DeepSeek", totals: totals({ calls: 3, inputTokens: 1300, outputTokens: 300, cost: 0.75, latencyMsTotal: 500 }) }],
  byPurpose: [
    { key: "test_connection", totals: totals({ calls: 1, failedCalls: 1, inputTokens: 5, outputTokens: 0 }) },
    { key: "drafting", totals: totals({ calls: 2, inputTokens: 1295, outputTokens: 300, cost: 0.75, latencyMsTotal: 400 }) },
    { key: "brand_new_purpose", totals: totals({ calls: 0 }) },
  ],
  totals: totals({ calls: 3, failedCalls: 1, inputTokens: 1300, outputTokens: 300, cost: 0.75, latencyMsTotal: 500 }),
  quotas,
});

function renderUsage(transport: FakeTransport, lang: Lang = "en") {
  const toasts: string[] = [];
  render(
    <WithCtx ctx={makeCtx(transport, lang, { toast: (t) => toasts.push(t) })}>
      <Usage />
    </WithCtx>,
  );
  return { toasts };
}

describe("Settings → Usage", () => {
  it("asks for the last 30 days and this month, and draws one bar slot per day with accessible labels", async () => {
    const transport = new FakeTransport().on("usage.report", () => report());
    renderUsage(transport);
    const chart = await screen.findByTestId("chart-tokens");
    expect(transport.callsTo("usage.report")).toEqual([{ from: "2026-10-24T00:00:00.000Z" }, { from: "2026-11-01T00:00:00.000Z" }]);
    const svg = chart.querySelector("svg")!;
    expect(svg.getAttribute("role")).toBe("img");
    const labelledBy = svg.getAttribute("aria-labelledby")!.split(" ");
    const label = labelledBy.map((id) => document.getElementById(id)?.textContent).join(" ");
    expect(label).toBe("Tokens per day, last 30 days Total 1,600; highest 1,200 on 2026-11-20.");
    const days = svg.querySelectorAll("g[data-day]");
    expect(days).toHaveLength(30);
    expect(days[0].getAttribute("data-day")).toBe("2026-10-24");
    expect(days[29].getAttribute("data-day")).toBe("2026-11-22");
    const nov20 = svg.querySelector("g[data-day='2026-11-20']")!;
    expect(nov20.querySelector("title")!.textContent).toBe("2026-11-20: Input tokens 1,000, Output tokens 200");
    expect(nov20.querySelectorAll("rect.bar-in, rect.bar-out")).toHaveLength(2);
    expect(svg.querySelector("g[data-day='2026-11-21'] rect.bar-in")).toBeNull();
    const cost = screen.getByTestId("chart-cost").querySelector("svg g[data-day='2026-11-22'] title")!;
    expect(cost.textContent).toBe("2026-11-22: Cost 0.25");
    expect(screen.getByTestId("usage-totals").textContent).toContain("1 failed");
    expect(screen.queryByTestId("cost-none")).toBeNull();
  });

  it("explains a missing cost chart when no profile has prices", async () => {
    const free = report();
    free.totals = { ...free.totals, cost: 0, pricedCalls: 0 };
    free.byDay = free.byDay.map((d) => ({ ...d, totals: { ...d.totals, cost: 0, pricedCalls: 0 } }));
    const transport = new FakeTransport().on("usage.report", () => free);
    renderUsage(transport);
    expect((await screen.findByTestId("cost-none")).textContent).toContain("set prices per million tokens");
    expect(screen.queryByTestId("chart-cost")).toBeNull();
    // Unknown, not free.
    expect(screen.getByTestId("usage-totals").textContent).toContain("Cost—");
  });

  it("tables usage by purpose (translated, most tokens first) and by profile", async () => {
    const transport = new FakeTransport().on("usage.report", () => report());
    renderUsage(transport, "zh");
    const table = await screen.findByTestId("usage-by-purpose");
    const rows = within(table)
      .getAllByRole("row")
      .slice(1)
      .map((r) => Array.from(r.children).map((c) => c.textContent));
    expect(rows).toEqual([
      ["起草", "2", "1,295", "300", "0.75", "200 毫秒"],
      ["连接测试", "1 (1 次失败)", "5", "0", "—", "100 毫秒"],
      ["brand_new_purpose", "0", "0", "0", "—", "—"],
    ]);
    expect(within(screen.getByTestId("usage-by-profile")).getByRole("rowheader").textContent).toBe("DeepSeek");
  });

  it("switches the period", async () => {
    const transport = new FakeTransport().on("usage.report", () => report());
    renderUsage(transport);
    await screen.findByTestId("chart-tokens");
    fireEvent.click(screen.getByText("7 days"));
    await waitFor(() => expect(screen.getByTestId("chart-tokens").querySelectorAll("g[data-day]")).toHaveLength(7));
    expect(transport.callsTo("usage.report")[2]).toEqual({ from: "2026-11-16T00:00:00.000Z" });
  });

  it("says so when nothing was used", async () => {
    const empty: UsageReport = { byDay: [], byProfile: [], byPurpose: [], totals: totals({ calls: 0, latencyMsTotal: 0 }), quotas: {} };
    const transport = new FakeTransport().on("usage.report", () => empty);
    renderUsage(transport);
    expect((await screen.findByTestId("usage-empty")).textContent).toBe("No model calls in this period. Usage appears here after the first call.");
    expect(screen.queryByTestId("chart-tokens")).toBeNull();
  });

  it("edits the quotas: shows today's and this month's use against them, saves numbers, blank removes a limit", async () => {
    let quotas: Quotas = { dailyTokens: 50_000 };
    const transport = new FakeTransport()
      .on("usage.report", () => report(quotas))
      .on("usage.setQuotas", (q) => {
        quotas = q;
        return q;
      });
    const r = renderUsage(transport);
    await waitFor(() => expect((screen.getByTestId("quota-daily") as HTMLInputElement).value).toBe("50000"));
    const form = screen.getByTestId("quotas");
    expect(form.textContent).toContain("Today: 400 of 50,000 tokens");
    expect(form.textContent).toContain("This month: 0.75");
    expect(screen.getByTestId("quota-save").hasAttribute("disabled")).toBe(true);
    fireEvent.change(screen.getByTestId("quota-daily"), { target: { value: "" } });
    fireEvent.change(screen.getByTestId("quota-monthly"), { target: { value: "12.5" } });
    fireEvent.click(screen.getByTestId("quota-save"));
    await waitFor(() => expect(r.toasts).toEqual(["Limits saved"]));
    expect(transport.callsTo("usage.setQuotas")).toEqual([{ monthlyCost: 12.5 }]);
    await waitFor(() => expect(screen.getByTestId("quotas").textContent).toContain("This month: 0.75 of 12.50"));
    fireEvent.change(screen.getByTestId("quota-daily"), { target: { value: "1.5" } });
    expect(screen.getByTestId("quota-save").hasAttribute("disabled")).toBe(true);
  });
});
