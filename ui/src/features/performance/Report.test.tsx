import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { BeforeAfterReport, PerfReportParams } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { ReportDialog } from "./Report";

afterEach(cleanup);

function report(over: Partial<BeforeAfterReport> = {}): BeforeAfterReport {
  return {
    platform: "x",
    projectId: "p",
    metric: "impressions",
    unit: "count",
    bucket: "24h",
    withAi: { n: 3, medianMultiple: 3, p30: 2.6, p70: 3.4 },
    withoutAi: { n: 3, medianMultiple: 1, p30: 0.76, p70: 1.08 },
    enoughData: true,
    excluded: { noBaseline: 3, boosted: 1 },
    afterWeakPost: 1,
    points: [],
    ...over,
  };
}

describe("the before/after report", () => {
  it("says association, not causation; shows multiples with their band and n, what was left out, and the regression-to-the-mean warning", async () => {
    const transport = new FakeTransport().on("perf.report", () => report());
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <ReportDialog projectId="p" platform="x" onClose={() => undefined} />
      </WithCtx>,
    );
    const dialog = await screen.findByTestId("perf-report");
    expect(within(dialog).getByTestId("perf-report-association").textContent).toContain("Association, not causation");
    await waitFor(() => expect(within(dialog).getByTestId("perf-report-with").textContent).toBe("With accepted AI changes33.00×2.60× – 3.40×"));
    expect(within(dialog).getByTestId("perf-report-without").textContent).toBe("Without31.00×0.76× – 1.08×");
    expect(within(dialog).getByTestId("perf-report-weak").textContent).toContain("regression to the mean");
    expect(within(dialog).getByTestId("perf-report-excluded").textContent).toContain("fewer than 3 earlier posts 3");
    expect(transport.callsTo("perf.report")[0]).toEqual({ platform: "x", metric: "impressions", bucket: "24h", projectId: "p" });
    // Another age and the whole account are asked of the engine, not computed here.
    fireEvent.change(within(dialog).getByTestId("perf-report-bucket"), { target: { value: "7d" } });
    fireEvent.click(within(dialog).getByTestId("perf-report-account"));
    await waitFor(() => expect(transport.callsTo("perf.report").at(-1)).toEqual({ platform: "x", metric: "impressions", bucket: "7d" } satisfies PerfReportParams));
  });

  it("under three posts a side it gives no number, in either language", async () => {
    const thin = report({ withAi: { n: 2, medianMultiple: null, p30: null, p70: null }, enoughData: false, afterWeakPost: 0, excluded: {} });
    const transport = new FakeTransport().on("perf.report", () => thin);
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <ReportDialog projectId="p" platform="x" onClose={() => undefined} />
      </WithCtx>,
    );
    const dialog = await screen.findByTestId("perf-report");
    await within(dialog).findByTestId("perf-report-not-enough");
    expect(within(dialog).getByTestId("perf-report-with").textContent).toBe("含已接受的 AI 修改2数据不足—");
    expect(within(dialog).getByTestId("perf-report-not-enough").textContent).toBe("数据不足，无法对比：含 AI 修改 2 篇，不含 3 篇；每边至少需要 3 篇。");
    expect(within(dialog).getByTestId("perf-report-association").textContent).toContain("不代表因果");
    expect(within(dialog).queryByTestId("perf-report-weak")).toBeNull();
  });
});
