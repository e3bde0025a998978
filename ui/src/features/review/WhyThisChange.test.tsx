import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { ProposalWhyResult } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { WhyThisChange } from "./WhyThisChange";

afterEach(() => cleanup());

const why: ProposalWhyResult = {
  proposalId: "prp_1",
  hunkId: "hk_1",
  sources: [
    {
      source: {
        type: "searchHit",
        tool: "search_workspace",
        toolUseId: "s1",
        reference: "prj_tea@v2:3-7",
        projectId: "prj_tea",
        title: "茶园笔记",
        version: 2,
        span: { from: 3, to: 7 },
        snippet: "明前龙井要在清明前采摘",
      },
      hunkIds: ["hk_1"],
    },
    { source: { type: "memory", memoryId: "mem_1", text: "提到茶叶时写明采摘时节" }, hunkIds: ["hk_1"] },
    { source: { type: "toolResult", tool: "read_project_context", toolUseId: "r1", ownerId: "ses_1", sequence: 7 }, hunkIds: ["hk_1"], content: '{"title":"春茶"}' },
  ],
};

function setup(lang: Lang = "en", answer: () => ProposalWhyResult = () => why) {
  const transport = new FakeTransport();
  const asked: unknown[] = [];
  transport.on("proposal.why", (p) => {
    asked.push(p);
    return answer();
  });
  const onOpenSource = vi.fn();
  const onOpenMemory = vi.fn();
  render(
    <WithCtx ctx={makeCtx(transport, lang)}>
      <WhyThisChange proposalId="prp_1" hunkId="hk_1" onOpenSource={onOpenSource} onOpenMemory={onOpenMemory} />
    </WithCtx>,
  );
  return { asked, onOpenSource, onOpenMemory };
}

describe("Why this change?", () => {
  it("asks nothing until opened, then lists each source and opens it where it came from", async () => {
    const { asked, onOpenSource, onOpenMemory } = setup();
    const toggle = screen.getByRole("button", { name: "Why this change?" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(asked).toEqual([]);
    // Keyboard: the toggle is a real button, so Enter/Space click it.
    toggle.focus();
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    await waitFor(() => expect(screen.getAllByTestId("why-source")).toHaveLength(3));
    expect(asked).toEqual([{ proposalId: "prp_1", hunkId: "hk_1" }]);
    const rows = screen.getAllByTestId("why-source");
    expect(rows.map((r) => r.getAttribute("data-kind"))).toEqual(["searchHit", "memory", "toolResult"]);
    expect(rows[0].textContent).toContain("Search hit");
    expect(rows[0].textContent).toContain("明前龙井要在清明前采摘");

    // The search hit opens its document at the span, in the version it was read in.
    fireEvent.click(rows[0].querySelector("[data-testid=why-open]")!);
    expect(onOpenSource).toHaveBeenCalledWith({ projectId: "prj_tea", span: { from: 3, to: 7 }, version: 2, commentId: null });
    // The memory item opens Memory.
    fireEvent.click(rows[1].querySelector("[data-testid=why-open]")!);
    expect(onOpenMemory).toHaveBeenCalledTimes(1);
    // The tool result shows what the model was sent, and hides it again.
    const show = rows[2].querySelector("[data-testid=why-open]")!;
    fireEvent.click(show);
    expect(screen.getByTestId("why-content").textContent).toBe('{"title":"春茶"}');
    expect(show.getAttribute("aria-expanded")).toBe("true");
    fireEvent.click(show);
    expect(screen.queryByTestId("why-content")).toBeNull();
  });

  it("speaks Chinese, and says when nothing was recorded", async () => {
    setup("zh", () => ({ proposalId: "prp_1", sources: [] }));
    fireEvent.click(screen.getByRole("button", { name: "为什么这样改？" }));
    await waitFor(() => expect(screen.getByTestId("why-none").textContent).toContain("没有记录来源"));
  });

  it("shows an error without a list", async () => {
    setup("en", () => {
      throw apiError("NOT_FOUND", "No proposal prp_1.");
    });
    fireEvent.click(screen.getByRole("button", { name: "Why this change?" }));
    await waitFor(() => expect(screen.getByRole("alert")).toBeTruthy());
    expect(screen.queryByTestId("why-sources")).toBeNull();
  });
});
