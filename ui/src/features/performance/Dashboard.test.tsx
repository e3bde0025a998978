import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { Dashboard, DashboardRow, PerfDashboardParams, Publication } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { PerformanceDashboard } from "./Dashboard";
import { NO_FILTERS, toParams } from "./dashboardFilters";

afterEach(cleanup);
beforeEach(() => {
  URL.createObjectURL = vi.fn(() => "blob:csv");
  URL.revokeObjectURL = vi.fn();
});

function publication(id: string, over: Partial<Publication> = {}): Publication {
  return {
    id,
    projectId: "p",
    platform: "wechat",
    versionNumber: 1,
    versionId: "ver_1",
    accountId: "acc_w",
    url: null,
    platformPostId: null,
    title: `标题 ${id}`,
    publishedAt: "2026-03-02T12:30:00Z",
    timeZone: "Asia/Shanghai",
    format: "article",
    distribution: "notified",
    visibility: "public",
    aiChanges: [],
    previousVersionNumber: null,
    removedAt: null,
    createdBy: "me",
    createdAt: "2026-03-02T12:30:00Z",
    updatedAt: "2026-03-02T12:30:00Z",
    ...over,
  };
}

function row(id: string, latest: DashboardRow["latest"], over: Partial<Publication> = {}): DashboardRow {
  return { publication: publication(id, over), accountName: over.accountId === null ? null : "墨砚官方号", latest, snapshotCount: Object.keys(latest).length };
}

const reading = (value: number, raw: string, qualifier: "exact" | "lowerBound" = "exact") => ({
  value,
  unit: "count" as const,
  qualifier,
  raw,
  snapshotId: "snp",
  observedAt: "2026-03-04T12:30:00Z",
  ageHours: 48,
});

function board(over: Partial<Dashboard> = {}): Dashboard {
  return {
    rows: [
      row("pub_1", { readers: reading(1500, "1500") }),
      row("pub_2", { readers: reading(100000, "10w+", "lowerBound") }),
      row("pub_3", {}, { accountId: null }),
      row("pub_4", { impressions: reading(5000, "5000") }, { platform: "x", timeZone: "UTC", accountId: "acc_x" }),
    ],
    total: 4,
    metricKeys: ["impressions", "readers"],
    groupedByPlatform: false,
    interval: "week",
    age: null,
    medians: [
      {
        platform: "wechat",
        metric: "readers",
        unit: "count",
        withoutValue: 1,
        points: [
          { period: "2026-03-02", n: 2, median: 2250 },
          { period: "2026-03-09", n: 1, median: 100000 },
        ],
      },
      { platform: "x", metric: "readers", unit: "count", withoutValue: 1, points: [] },
    ],
    postingTimes: [
      { weekday: 0, hour: 20, count: 2 },
      { weekday: 2, hour: 9, count: 1 },
    ],
    ...over,
  };
}

describe("the performance dashboard", () => {
  it("shows latest values with absent as a dash, one median chart per platform, and the posting grid with counts", async () => {
    const transport = new FakeTransport().on("perf.dashboard", () => board()).on("account.list", () => ({ accounts: [] }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <PerformanceDashboard onClose={() => undefined} />
      </WithCtx>,
    );
    const view = await screen.findByTestId("perf-dashboard");
    await within(view).findByTestId("perf-dash-table");
    const cells = (id: string, metric: string) => within(view).getByTestId("perf-dash-table").querySelector(`[data-id=${id}] [data-metric=${metric}]`)?.textContent;
    expect(cells("pub_1", "readers")).toBe("1,500");
    expect(cells("pub_2", "readers")).toBe("100,000+");
    // Never reported: a dash, not 0.
    expect(cells("pub_3", "readers")).toBe("—");
    expect(cells("pub_1", "impressions")).toBe("—");
    // Times in the publication's own zone.
    expect(within(view).getByTestId("perf-dash-table").querySelector("[data-id=pub_1] td")?.textContent).toBe("2026-03-02 20:30");
    // One chart per platform; a platform without values says so instead of drawing zeros.
    const charts = within(view).getAllByTestId("perf-dash-chart");
    expect(charts.map((c) => [c.dataset.platform, c.dataset.points])).toEqual([
      ["wechat", "2"],
      ["x", "0"],
    ]);
    expect(charts[0].querySelector("desc")?.textContent).toBe("2 periods from 2026-03-02 to 2026-03-09: median 2,250 at first, 100,000 at last; highest 100,000.");
    expect(charts[1].textContent).toContain("1 publication, none reports this metric");
    expect(within(view).getAllByTestId("perf-dash-point")[0].textContent).toBe("2026-03-02: median 2,250 of 2 publications");
    // The posting grid: counts in their slots (Monday 20:00, Wednesday 09:00).
    const slots = within(view).getAllByTestId("perf-dash-slot");
    expect(slots.map((s) => [s.dataset.slot, s.textContent])).toEqual([
      ["0-20", "2"],
      ["2-9", "1"],
    ]);
    expect(within(view).getByTestId("perf-dash-count").textContent).toBe("4 of 4 publications");
  });

  it("asks the engine for filters, sorts and the medians' metric and age, and exports what is filtered", async () => {
    const transport = new FakeTransport()
      .on("perf.dashboard", () => board({ groupedByPlatform: true }))
      .on("account.list", () => ({ accounts: [{ id: "acc_w", platform: "wechat", name: "墨砚官方号", handle: null, createdAt: "", updatedAt: "" }] }))
      .on("perf.export", () => ({ csv: "\ufeffpublished_at\n", nRows: 4, table: "dashboard" }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <PerformanceDashboard onClose={() => undefined} />
      </WithCtx>,
    );
    const view = await screen.findByTestId("perf-dashboard");
    await within(view).findByTestId("perf-dash-table");
    expect(transport.callsTo("perf.dashboard")[0]).toEqual({ sort: "publishedAt", descending: true, limit: 200 });
    fireEvent.change(within(view).getByTestId("perf-dash-platform"), { target: { value: "wechat" } });
    fireEvent.change(within(view).getByTestId("perf-dash-account"), { target: { value: "acc_w" } });
    fireEvent.change(within(view).getByTestId("perf-dash-format"), { target: { value: "article" } });
    await waitFor(() => expect(transport.callsTo("perf.dashboard").at(-1)).toMatchObject({ format: "article" }));
    fireEvent.click(within(view).getByTestId("perf-dash-sort-metric:readers"));
    fireEvent.change(within(view).getByTestId("perf-dash-metric"), { target: { value: "views" } });
    fireEvent.change(within(view).getByTestId("perf-dash-age"), { target: { value: "24h" } });
    await waitFor(() =>
      expect(transport.callsTo("perf.dashboard").at(-1)).toEqual({
        sort: "metric:readers",
        descending: true,
        platform: "wechat",
        accountId: "acc_w",
        format: "article",
        limit: 200,
        metric: "views",
        age: "24h",
      } satisfies PerfDashboardParams),
    );
    expect(within(view).getByTestId("perf-dash-grouped").textContent).toContain("within each platform");
    // The same header again turns the order around.
    fireEvent.click(within(view).getByTestId("perf-dash-sort-metric:readers"));
    await waitFor(() => expect((transport.callsTo("perf.dashboard").at(-1) as PerfDashboardParams).descending).toBe(false));
    fireEvent.click(within(view).getByTestId("perf-dash-export"));
    await waitFor(() => expect(transport.callsTo("perf.export")).toHaveLength(1));
    expect(transport.callsTo("perf.export")[0]).toEqual({
      dashboard: { sort: "metric:readers", descending: false, platform: "wechat", accountId: "acc_w", format: "article" },
    });
  });

  it("a date range includes its last day, in local days", () => {
    const params = toParams({ ...NO_FILTERS, from: "2026-03-01", to: "2026-03-31" }, "publishedAt", true);
    expect(params.from).toBe(new Date("2026-03-01T00:00:00").toISOString());
    expect(params.to).toBe(new Date("2026-04-01T00:00:00").toISOString());
  });

  it("reads in Chinese", async () => {
    const transport = new FakeTransport().on("perf.dashboard", () => board()).on("account.list", () => ({ accounts: [] }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <PerformanceDashboard onClose={() => undefined} />
      </WithCtx>,
    );
    const view = await screen.findByTestId("perf-dashboard");
    await within(view).findByTestId("perf-dash-table");
    expect(within(view).getByRole("heading", { level: 2 }).textContent).toBe("数据看板");
    expect(within(view).getByTestId("perf-dash-count").textContent).toBe("显示 4 条，共 4 条发布记录");
    expect(within(view).getByTestId("perf-dash-posting").textContent).toContain("周一");
  });
});
