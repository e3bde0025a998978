import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../api/fake";
import type { VersionSummary } from "../api/generated";
import { makeCtx, WithCtx } from "../test-utils";
import { HistoryPanel } from "./HistoryPanel";

function versions(n: number): VersionSummary[] {
  return Array.from({ length: n }, (_, i) => {
    const number = n - i;
    return {
      id: `ver_${number}`,
      number,
      title: "T",
      author: "Lin",
      message: number === 3 ? "第三稿" : null,
      origin: number === 2 ? { type: "restore", from: 1 } : { type: "manual" },
      contentHash: "sha256:x",
      createdAt: "2026-11-22T11:00:00Z",
      nChars: 10,
    };
  });
}

afterEach(() => cleanup());

describe("HistoryPanel", () => {
  it("shows number, message, author and origin, and wires the actions", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: versions(3) }));
    const seen: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <HistoryPanel
          projectId="p"
          head={3}
          onView={(n) => seen.push(`view ${n}`)}
          onDiff={(f, t) => seen.push(`diff ${f} ${t}`)}
          onRestore={(n) => seen.push(`restore ${n}`)}
        />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(3));
    const first = screen.getAllByTestId("version-item")[0];
    expect(first.textContent).toContain("v3");
    expect(first.textContent).toContain("第三稿");
    expect(first.textContent).toContain("Lin");
    expect(screen.getAllByTestId("version-item")[1].textContent).toContain("restored from v1");
    fireEvent.click(screen.getAllByTestId("version-diff")[0]);
    fireEvent.click(screen.getAllByTestId("version-restore")[1]);
    expect(seen).toEqual(["diff 3 null", "restore 2"]);
  });

  it("virtualises 1,000 versions", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: versions(1000) }));
    render(
      <WithCtx ctx={makeCtx(transport)}>
        <HistoryPanel projectId="p" head={1000} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getAllByTestId("version-item").length).toBeGreaterThan(0));
    const rendered = screen.getAllByTestId("version-item").length;
    expect(rendered).toBeLessThan(30);
    const list = screen.getByTestId("version-list");
    list.scrollTop = 88 * 500;
    fireEvent.scroll(list);
    await waitFor(() => expect(screen.getAllByTestId("version-item").some((e) => e.dataset.number === "500")).toBe(true));
    expect(screen.getAllByTestId("version-item").length).toBeLessThan(30);
  });

  it("teaches when there is no version yet", async () => {
    const transport = new FakeTransport().on("version.list", () => ({ versions: [] }));
    render(
      <WithCtx ctx={makeCtx(transport, "zh")}>
        <HistoryPanel projectId="p" head={0} onView={() => undefined} onDiff={() => undefined} onRestore={() => undefined} />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("history-empty").textContent).toContain("Ctrl+S"));
  });
});
