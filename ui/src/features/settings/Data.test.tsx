import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { BackupInfo, ImportMarkdownResult } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { Data } from "./Data";

afterEach(() => cleanup());

const backup = (name: string, beforeRestore: boolean): BackupInfo => ({
  name,
  path: `/data/backups/${name}`,
  beforeRestore,
  manifest: {
    format: "inkstone-export",
    formatVersion: 1,
    schemaVersion: 1,
    exportedAt: "2026-11-20T10:00:00Z",
    changeMarker: "",
    counts: { projects: 2, versions: 3, comments: 0, activities: 0, brandProfiles: 0, templates: 0, media: 0, llmProfiles: 0, usageRecords: 0, platformDrafts: 0, sessions: 0, sessionEvents: 0 },
  },
});

function renderData(transport: FakeTransport, lang: Lang = "en") {
  const toasts: string[] = [];
  const ctx = makeCtx(transport, lang, { toast: (m: string) => toasts.push(m) });
  render(
    <WithCtx ctx={ctx}>
      <Data onDataChanged={() => undefined} />
    </WithCtx>,
  );
  return { toasts };
}

describe("Data", () => {
  it("marks the backup made before a restore as kept, in both languages", async () => {
    const list = { backups: [backup("20261120T100001.000Z-before-restore", true), backup("20261120T100000.000Z", false)], folder: "/data/backups" };
    for (const [lang, words] of [
      ["en", "made before a restore · kept until you delete it"],
      ["zh", "恢复前的备份 · 会一直保留，直到你手动删除"],
    ] as const) {
      renderData(new FakeTransport().on("backup.list", () => list), lang);
      const items = await waitFor(() => within(screen.getByTestId("backup-list")).getAllByRole("listitem"));
      expect(items[0].textContent).toContain(words);
      expect(items[1].textContent).not.toContain(words);
      expect(screen.getAllByTestId("backup-before-restore")).toHaveLength(1);
      cleanup();
    }
  });

  it("says how many symbolic links a Markdown import skipped", async () => {
    const transport = new FakeTransport()
      .on("backup.list", () => ({ backups: [], folder: "/data/backups" }))
      .on("import.markdown", (): ImportMarkdownResult => ({ projects: [], skippedLinks: ["/notes/a.md", "/notes/b.md"], skipped: [] }));
    const r = renderData(transport);
    fireEvent.change(screen.getByTestId("import-md-path"), { target: { value: "/notes" } });
    fireEvent.click(screen.getByTestId("import-md-run"));
    await waitFor(() => expect(r.toasts).toEqual(["Imported 0 projects; skipped 2 symbolic links (import what they point to by its own path)"]));
  });
});
