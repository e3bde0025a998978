import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../api/fake";
import type { MemoryItem, MemoryListResult } from "../api/generated";
import { makeCtx, WithCtx } from "../test-utils";
import { BoundaryLine } from "./LongSession";
import { MemoryList } from "./MemoryList";
import { fold, emptyTimeline } from "./timeline";
import type { HarnessEvent } from "../api/client";

afterEach(() => cleanup());

const item = (id: string, status: MemoryItem["status"], text: string): MemoryItem => ({
  id,
  scope: { type: "workspace" },
  scopeId: "wsp_1",
  text,
  status,
  origin: status === "proposed" ? { type: "model", sessionId: "ses_1", toolUseId: "c1" } : { type: "person" },
  createdAt: "",
  updatedAt: "",
});

describe("MemoryList", () => {
  it("confirms what the assistant proposed, shows habits with their sources, and removes them", async () => {
    let list: MemoryListResult = {
      items: [item("mem_1", "proposed", "这个品牌不用标题党")],
      habits: [{ id: "rejected:abc", kind: "rejected_style", text: "The person rejected work because: 太吵", sources: ["prp_9"] }],
      budgetTokens: 800,
      usedTokens: 20,
    };
    const transport = new FakeTransport()
      .on("memory.list", () => list)
      .on("memory.confirm", () => {
        list = { ...list, items: [item("mem_1", "confirmed", "这个品牌不用标题党")] };
        return list.items[0];
      })
      .on("memory.dismissHabit", () => {
        list = { ...list, habits: [] };
        return { id: "rejected:abc", deleted: true };
      });
    render(
      <WithCtx ctx={makeCtx(transport, "en")}>
        <MemoryList projectId="prj_1" />
      </WithCtx>,
    );
    await waitFor(() => expect(screen.getByTestId("memory-item").getAttribute("data-status")).toBe("proposed"));
    expect(screen.getByTestId("memory-item").textContent).toContain("suggested by the assistant");
    expect(screen.getByTestId("habit").textContent).toContain("from prp_9");
    fireEvent.click(screen.getByTestId("memory-confirm"));
    await waitFor(() => expect(screen.getByTestId("memory-item").getAttribute("data-status")).toBe("confirmed"));
    expect(transport.callsTo("memory.confirm")).toEqual([{ memoryId: "mem_1" }]);
    fireEvent.click(screen.getByTestId("habit-remove"));
    await waitFor(() => expect(screen.queryByTestId("habit")).toBeNull());
    expect(transport.callsTo("memory.dismissHabit")).toEqual([{ habitId: "rejected:abc" }]);
  });
});

describe("compact boundaries", () => {
  it("fold into a line that expands to the summary, and a truncation raises the banner flag", () => {
    const boundary = (sequence: number, mode: "summarized" | "truncated") =>
      ({
        eventId: `evt_${sequence}`,
        sequence,
        createdAt: "",
        modelVisible: true,
        kind: "compact_boundary",
        payload: {
          trigger: "auto",
          mode,
          summaryText: "# Earlier conversation (summarised; the full log is kept)\nDrafted the intro.",
          keptMessages: 2,
          compactedMessages: 40,
          pinnedInstructions: [],
          tokensBefore: 5000,
          tokensAfter: 900,
          note: mode === "truncated" ? "40 earlier messages were removed without a summary" : "Earlier conversation summarised",
          inputTokens: mode === "truncated" ? 0 : 4200,
          outputTokens: mode === "truncated" ? 0 : 180,
        },
      }) as HarnessEvent;
    const s = fold(emptyTimeline, boundary(1, "summarized"));
    expect(s.truncated).toBe(false);
    const it0 = s.items[0];
    if (it0?.kind !== "boundary") throw new Error("no boundary item");
    render(
      <WithCtx ctx={makeCtx(new FakeTransport(), "en")}>
        <BoundaryLine item={it0} />
      </WithCtx>,
    );
    expect(screen.getByTestId("compact-boundary-toggle").textContent).toBe("Earlier conversation summarised (40 messages)");
    expect(screen.queryByTestId("compact-boundary-summary")).toBeNull();
    fireEvent.click(screen.getByTestId("compact-boundary-toggle"));
    expect(screen.getByTestId("compact-boundary-summary").textContent).toContain("Drafted the intro.");
    expect(fold(s, boundary(2, "truncated")).truncated).toBe(true);
  });
});
