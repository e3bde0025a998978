import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { ImportPreview, MetricSnapshot, MetricValue, PerfImportParams, Publication, RowPreview } from "../../shared/api/generated";
import { makeCtx, WithAppErrors, WithCtx } from "../../shared/testing/utils";
import { formatMetric } from "./format";
import { PerformancePanel } from "./PerformancePanel";

afterEach(cleanup);

const count = (value: number, raw: string, qualifier: MetricValue["qualifier"] = "exact"): MetricValue => ({ value, unit: "count", qualifier, raw });

function publication(over: Partial<Publication> = {}): Publication {
  return {
    id: "pub_1",
    projectId: "p",
    platform: "x",
    versionNumber: 2,
    versionId: "ver_2",
    accountId: null,
    url: "https://x.com/me/status/1798000000000000001",
    platformPostId: null,
    title: "春天来了",
    publishedAt: "2026-06-05T08:00:00Z",
    timeZone: "UTC",
    format: "post",
    distribution: "organic",
    visibility: "public",
    aiChanges: [{ versionNumber: 2, proposalId: "prp_1", proposalKind: "source_patch", sessionId: "ses_1", runId: null, model: "m", pulledFrom: null }],
    previousVersionNumber: null,
    removedAt: null,
    createdBy: "me",
    createdAt: "2026-06-05T08:00:00Z",
    updatedAt: "2026-06-05T08:00:00Z",
    ...over,
  };
}

function snapshot(id: string, ageHours: number, metrics: Record<string, MetricValue>): MetricSnapshot {
  return {
    id,
    publicationId: "pub_1",
    projectId: "p",
    platform: "x",
    observedAt: new Date(Date.parse("2026-06-05T08:00:00Z") + ageHours * 3600_000).toISOString(),
    ageHours,
    window: { type: "cumulative" },
    source: { type: "manual", author: "me" },
    metrics,
    extras: {},
    createdAt: "2026-06-06T00:00:00Z",
  };
}

describe("numbers as shown", () => {
  it("absent is a dash, never 0; bounds and rounding keep their marks; rates are percents", () => {
    expect(formatMetric("en", undefined)).toBe("—");
    expect(formatMetric("en", count(0, "0"))).toBe("0");
    expect(formatMetric("en", count(100000, "10w+", "lowerBound"))).toBe("100,000+");
    expect(formatMetric("en", count(12000, "1.2万", "rounded"))).toBe("≈12,000");
    expect(formatMetric("en", { value: 0.123, unit: "ratio", qualifier: "exact", raw: "12.3%" })).toBe("12.3%");
    expect(formatMetric("zh", { value: 4150, unit: "fen", qualifier: "exact", raw: "4150" })).toBe("¥41.50");
  });
});

describe("PerformancePanel", () => {
  it("lists publications by platform with their latest metrics, and a publication's snapshots by age with '—' for what was not reported", async () => {
    // Observed later but younger: the table orders by age since publishing.
    const older = snapshot("snp_2", 72, { impressions: count(5000, "5000"), likes: count(90, "90") });
    const younger = snapshot("snp_1", 24, { impressions: count(1200, "1.2k", "rounded") });
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [{ publication: publication(), latest: older, snapshotCount: 2 }] }))
      .on("perf.list", () => ({ publicationId: "pub_1", snapshots: [older, younger] }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <PerformancePanel projectId="p" head={2} title="春天来了" platforms={["x"]} />
      </WithCtx>,
    );
    const item = await screen.findByTestId("perf-item");
    expect(screen.getByTestId("perf-group").dataset.platform).toBe("x");
    expect(within(item).getByTestId("perf-ai-changes").textContent).toBe("1 AI change");
    expect(within(item).getByTestId("perf-latest").textContent).toContain("Impressions 5,000");
    fireEvent.click(within(item).getByTestId("perf-toggle"));
    const rows = await screen.findAllByTestId("perf-snapshot");
    expect(rows.map((r) => r.querySelector("td")?.textContent)).toEqual(["24 h", "3 d"]);
    const likes = rows.map((r) => r.querySelector("[data-metric=likes]")?.textContent);
    expect(likes).toEqual(["—", "90"]);
    expect(rows[0].querySelector("[data-metric=impressions]")?.textContent).toBe("≈1,200");
    // A trend for the metric seen twice, none for the one seen once.
    expect(screen.getAllByTestId("perf-trend").map((f) => f.dataset.metric)).toEqual(["impressions"]);
  });

  it("manual entry sends the numbers as typed, leaving empty fields out", async () => {
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [{ publication: publication(), latest: null, snapshotCount: 0 }] }))
      .on("perf.list", () => ({ publicationId: "pub_1", snapshots: [] }))
      .on("perf.add", (p) => snapshot("snp_9", 30, { impressions: count(12000, p.metrics.impressions, "rounded") }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <PerformancePanel projectId="p" head={2} title="t" platforms={["x"]} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("perf-toggle"));
    expect((await screen.findByTestId("perf-no-snapshots")).textContent).toBe("还没有数据。");
    fireEvent.change(screen.getByTestId("perf-entry-impressions"), { target: { value: "1.2万" } });
    fireEvent.change(screen.getByTestId("perf-entry-likes"), { target: { value: "  " } });
    fireEvent.click(screen.getByTestId("perf-entry-save"));
    await waitFor(() => expect(transport.callsTo("perf.add")).toHaveLength(1));
    expect(transport.callsTo("perf.add")[0]).toEqual({ publicationId: "pub_1", metrics: { impressions: "1.2万" } });
  });

  it("a refused publication goes to the app's one banner; the form stays open with what was typed and has no banner of its own", async () => {
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [] }))
      .on("account.list", () => ({ accounts: [] }))
      .on("publication.add", () => {
        throw apiError("VALIDATION", "`url` must be a web address starting with https:// or http://.");
      });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <PerformancePanel projectId="p" head={2} title="春天来了" platforms={["x"]} />
      </WithAppErrors>,
    );
    await screen.findByTestId("perf-empty");
    fireEvent.click(screen.getByTestId("perf-add"));
    const form = await screen.findByTestId("perf-form");
    fireEvent.change(within(form).getByTestId("pub-url"), { target: { value: "x.com/me" } });
    fireEvent.click(within(form).getByTestId("pub-save"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("VALIDATION");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect(screen.getByTestId("perf-form")).toBe(form);
    expect((within(form).getByTestId("pub-url") as HTMLInputElement).value).toBe("x.com/me");
  });

  it("a refused manual entry goes to the app's one banner and keeps the typed numbers", async () => {
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [{ publication: publication(), latest: null, snapshotCount: 0 }] }))
      .on("perf.list", () => ({ publicationId: "pub_1", snapshots: [] }))
      .on("perf.add", () => {
        throw apiError("VALIDATION", "`impressions` is not a number: lots.");
      });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <PerformancePanel projectId="p" head={2} title="t" platforms={["x"]} />
      </WithAppErrors>,
    );
    fireEvent.click(await screen.findByTestId("perf-toggle"));
    fireEvent.change(await screen.findByTestId("perf-entry-impressions"), { target: { value: "lots" } });
    fireEvent.click(screen.getByTestId("perf-entry-save"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("VALIDATION");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect((screen.getByTestId("perf-entry-impressions") as HTMLInputElement).value).toBe("lots");
  });

  it("an empty project teaches; removed publications can be restored or deleted for good after a confirmation", async () => {
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [{ publication: publication({ removedAt: "2026-06-07T00:00:00Z" }), latest: null, snapshotCount: 3 }] }))
      .on("publication.restore", () => publication())
      .on("publication.purge", (p) => ({ id: p.publicationId, deleted: true, snapshotsDeleted: 3 }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <PerformancePanel projectId="p" head={2} title="t" platforms={["x"]} />
      </WithCtx>,
    );
    expect(await screen.findByTestId("perf-empty")).toBeTruthy();
    expect(screen.getByTestId("perf-removed-item").textContent).toContain("3 snapshots");
    fireEvent.click(screen.getByTestId("perf-purge"));
    const confirm = await screen.findByTestId("perf-purge-confirm");
    expect(transport.callsTo("publication.purge")).toEqual([]);
    fireEvent.click(within(confirm).getByTestId("perf-purge-yes"));
    await waitFor(() => expect(transport.callsTo("publication.purge")).toEqual([{ publicationId: "pub_1", confirm: true }]));
    fireEvent.click(screen.getByTestId("perf-restore"));
    await waitFor(() => expect(transport.callsTo("publication.restore")).toEqual([{ publicationId: "pub_1" }]));
  });
});

describe("importing an export", () => {
  const row = (n: number, outcome: RowPreview["outcome"]): RowPreview => ({
    row: n,
    title: `post ${n}`,
    postId: null,
    publishedAt: "2026-06-05T00:00:00Z",
    outcome,
    metrics: { impressions: count(100 * n, String(100 * n)) },
    private: false,
  });
  const previewOf = (assign: Record<string, string>, already: string | null): ImportPreview => {
    const second: RowPreview["outcome"] = assign["3"] === "skip" ? { status: "skipped" } : { status: "unmatched" };
    const rows = [row(2, { status: "matched", publicationId: "pub_1", by: "postId" }), row(3, second)];
    return {
      fileSha256: "sha256:ab",
      importer: "x-content@v1",
      importerName: "X content export",
      platform: "x",
      target: "posts",
      accountId: null,
      encoding: "UTF-8",
      alreadyImported: already,
      rows,
      matched: 1,
      unmatched: second.status === "unmatched" ? 1 : 0,
      ambiguous: 0,
      skipped: second.status === "skipped" ? 1 : 0,
      notUnderstood: 0,
    };
  };

  it("previews, asks for the open rows, commits once; a re-import says it was imported already", async () => {
    let imported: string | null = null;
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [{ publication: publication(), latest: null, snapshotCount: 0 }] }))
      .on("perf.import", (p: PerfImportParams) => {
        const preview = previewOf(p.assign ?? {}, imported);
        if (p.commit && !imported) {
          imported = "imp_1";
          return { preview, committed: true, snapshots: ["snp_1"] };
        }
        return { preview, committed: false, snapshots: [] };
      });
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (s) => toasts.push(s) })}>
        <PerformancePanel projectId="p" head={2} title="t" platforms={["x"]} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("perf-import-open-dialog"));
    const dialog = await screen.findByTestId("perf-import");
    const file = new File(["Post id,Date\n"], "account_analytics_content.csv", { type: "text/csv" });
    fireEvent.change(within(dialog).getByTestId("perf-import-file"), { target: { files: [file] } });
    await within(dialog).findByTestId("perf-import-summary");
    expect(transport.callsTo("perf.import")[0]).toMatchObject({ fileName: "account_analytics_content.csv", assign: {}, commit: false });
    expect(within(dialog).getAllByTestId("perf-import-row").map((r) => r.dataset.status)).toEqual(["matched", "unmatched"]);
    const commit = within(dialog).getByTestId("perf-import-commit") as HTMLButtonElement;
    expect(commit.disabled).toBe(true);
    expect(within(dialog).getByTestId("perf-import-open").textContent).toBe("1 row needs a choice");
    fireEvent.change(within(dialog).getAllByTestId("perf-import-choice")[1], { target: { value: "skip" } });
    await waitFor(() => expect(within(dialog).getAllByTestId("perf-import-row")[1].dataset.status).toBe("skipped"));
    expect(commit.disabled).toBe(false);
    expect(commit.textContent).toBe("Import 1 row");
    fireEvent.click(commit);
    await waitFor(() => expect(screen.queryByTestId("perf-import")).toBeNull());
    expect(transport.callsTo("perf.import").at(-1)).toMatchObject({ assign: { "3": "skip" }, commit: true });
    expect(toasts).toEqual(["Imported 1 snapshot"]);

    // The same file again: the preview says so and offers no commit.
    fireEvent.click(screen.getByTestId("perf-import-open-dialog"));
    const again = await screen.findByTestId("perf-import");
    fireEvent.change(within(again).getByTestId("perf-import-file"), { target: { files: [file] } });
    expect((await within(again).findByTestId("perf-import-already")).textContent).toBe("This file was imported before. Importing it again changes nothing.");
    expect(within(again).queryByTestId("perf-import-commit")).toBeNull();
  });

  it("an account's daily export asks for the account, shows days, and commits them", async () => {
    const day = (n: number, accountId: string | null): RowPreview => ({
      row: n,
      title: "",
      postId: null,
      publishedAt: `2026-03-0${n - 2}T16:00:00Z`,
      outcome: accountId ? { status: "accountDay", accountId, date: `2026-03-0${n - 1}` } : { status: "unmatched" },
      metrics: { followers_total: count(1200 + n, String(1200 + n)) },
      private: false,
    });
    const transport = new FakeTransport()
      .on("publication.list", () => ({ publications: [] }))
      .on("account.list", () => ({
        accounts: [
          { id: "acc_w", platform: "wechat", name: "墨砚官方号", handle: null, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" },
          { id: "acc_x", platform: "x", name: "@inkstone", handle: null, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" },
        ],
      }))
      .on("perf.import", (p: PerfImportParams) => {
        const accountId = p.accountId ?? null;
        const rows = [day(3, accountId), day(4, accountId)];
        const preview: ImportPreview = {
          fileSha256: "sha256:cd",
          importer: "wechat-user-analysis@v1",
          importerName: "公众号 用户分析",
          platform: "wechat",
          target: "account",
          accountId,
          encoding: "UTF-8",
          alreadyImported: null,
          rows,
          matched: accountId ? 2 : 0,
          unmatched: accountId ? 0 : 2,
          ambiguous: 0,
          skipped: 0,
          notUnderstood: 0,
        };
        return { preview, committed: Boolean(p.commit), snapshots: p.commit ? ["asn_1", "asn_2"] : [] };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <PerformancePanel projectId="p" head={2} title="t" platforms={["wechat"]} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("perf-import-open-dialog"));
    const dialog = await screen.findByTestId("perf-import");
    const file = new File(["<html><table></table></html>"], "user_analysis.xls");
    fireEvent.change(within(dialog).getByTestId("perf-import-file"), { target: { files: [file] } });
    await within(dialog).findByTestId("perf-import-summary");
    expect(within(dialog).getByTestId("perf-import-open").textContent).toBe("Pick the account these days belong to");
    expect(within(dialog).queryAllByTestId("perf-import-choice")).toEqual([]);
    expect(within(dialog).queryByTestId("perf-import-skip-open")).toBeNull();
    const picker = within(dialog).getByTestId("perf-import-account") as HTMLSelectElement;
    await waitFor(() => expect([...picker.options].map((o) => o.value)).toEqual(["", "acc_w"]));
    fireEvent.change(picker, { target: { value: "acc_w" } });
    await waitFor(() => expect(within(dialog).getAllByTestId("perf-import-row").map((r) => r.dataset.status)).toEqual(["accountDay", "accountDay"]));
    expect(within(dialog).getAllByTestId("perf-import-row")[0].textContent).toContain("2026-03-02");
    const commit = within(dialog).getByTestId("perf-import-commit") as HTMLButtonElement;
    expect(commit.disabled).toBe(false);
    fireEvent.click(commit);
    await waitFor(() => expect(screen.queryByTestId("perf-import")).toBeNull());
    expect(transport.callsTo("perf.import").at(-1)).toMatchObject({ accountId: "acc_w", commit: true });
  });
});
