import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { PlatformDraft, ProposalView } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { ApiClient } from "../../shared/api/client";
import { hunk, proposal, session, view } from "../../shared/testing/fixtures";
import { SessionStore } from "../drafting";
import { hunkChanges } from "./MergeDiff";
import { ProposalReview } from "./ProposalReview";
import { findingsByHunk } from "./review";

afterEach(() => cleanup());

function savedDraft(over: Partial<PlatformDraft> = {}): PlatformDraft {
  return {
    projectId: "prj_1",
    platform: "x",
    revision: 2,
    status: "draft",
    profileId: "x@draft-v1",
    sourceRevision: 3,
    sourceVersion: 1,
    title: "春天",
    content: { type: "thread", posts: [{ text: "第一条。", weightedLength: 8 }, { text: "第二条。", weightedLength: 8 }] },
    handEdited: false,
    updatedAt: "2026-11-22T11:30:00Z",
    updatedBy: "me",
    ...over,
  };
}

/** A draft_patch of the X thread: the second post gets longer. */
function draftPatch(): ProposalView {
  const baseText = "第一条。\n---\n第二条。";
  const proposedText = "第一条。\n---\n第二条，写长一点。";
  return view({
    kind: "draft_patch",
    target: { type: "draft", platform: "x" },
    hunks: [hunk("h1", 2, "第二条。\n", "第二条，写长一点。\n")],
    payload: { type: "text", baseText, proposedText },
  });
}

function setup(v: ProposalView, lang: Lang = "en", methods: string[] = [], draft: PlatformDraft = savedDraft()) {
  const transport = new FakeTransport();
  transport.on("platformDraft.get", () => draft);
  transport.on("pipeline.measure", (p) => ({ platform: "x", field: "post", unit: "x_weighted", weightedLength: [...p.text].length * 2, limit: 280, valid: true, checks: [] }));
  let current = v;
  // The engine answers for the proposal asked about: after a rebase, the new one.
  let rebased: ProposalView | null = null;
  transport.on("proposal.get", (p) => (rebased && p.proposalId === rebased.id ? rebased : current));
  transport.on("proposal.accept", (p) => {
    current = { ...current, status: p.hunks && p.hunks.length < current.hunks.length ? "partially_accepted" : "accepted", acceptedHunks: p.hunks ?? current.hunks.map((h) => h.id) };
    return { proposal: current };
  });
  transport.on("proposal.reject", (p) => {
    const rejected = [...current.rejectedHunks, ...(p.hunks ?? current.hunks.map((h) => h.id))];
    current = { ...current, rejectedHunks: rejected, status: rejected.length === current.hunks.length ? "rejected" : "proposed", ...(p.reason ? { rejectionReason: p.reason } : {}) };
    return { proposal: current };
  });
  transport.on("proposal.rebase", () => {
    rebased = { ...proposal({ id: "prp_2", origin: { ...current.origin, rebasedFrom: current.id } }), stale: false, basedOnStaged: false };
    return { previous: { ...current, status: "superseded" }, proposal: rebased, conflicts: [], carried: [] };
  });
  const onAccepted = vi.fn();
  const onRegenerate = vi.fn();
  const onClose = vi.fn();
  const flush = vi.fn(async () => undefined);
  const store = methods.length > 0 ? new SessionStore(new ApiClient(transport), session(), "prj_1", new Set(methods)) : null;
  render(
    <WithCtx ctx={makeCtx(transport, lang)}>
      <ProposalReview
        proposalId={v.id}
        store={store}
        flush={flush}
        revision={() => 3}
        currentText={() => "第一段。\n\n第二段，我改的。\n\n第三段。\n"}
        onAccepted={onAccepted}
        onRegenerate={onRegenerate}
        onClose={onClose}
      />
    </WithCtx>,
  );
  return { transport, onAccepted, onRegenerate, flush, onClose };
}

describe("reviewing a proposal", () => {
  it("gives CodeMirror the proposal's own hunks, refined per character", () => {
    const p = proposal();
    if (p.payload.type !== "text") throw new Error("text payload");
    const changes = hunkChanges(p.payload.baseText, p.payload.proposedText, p.hunks);
    // Two hunks, each marking only what changed inside its line.
    expect(changes.map((c) => p.payload.type === "text" && p.payload.proposedText.slice(c.fromB, c.toB))).toEqual(["，改了", "，也改了"]);
    expect(changes.map((c) => p.payload.type === "text" && p.payload.baseText.slice(c.fromA, c.toA))).toEqual(["", ""]);
  });

  it("puts each new finding beside the hunk it falls in", () => {
    const finding = { check: "ad_law", severity: "warn" as const, platform: null, span: { from: 19, to: 21 }, location: null, matched: "也改", message: "绝对化用语", suggestion: null, route: null };
    const { byHunk, other } = findingsByHunk(view({ newFindings: [finding] }));
    expect(byHunk.get("h2")).toEqual([finding]);
    expect(other).toEqual([]);
  });

  it("accepts the whole proposal against the revision on screen, saving typing first", async () => {
    const { transport, onAccepted, flush } = setup(view());
    fireEvent.click(await screen.findByTestId("review-accept-all"));
    await waitFor(() => expect(transport.callsTo("proposal.accept")).toEqual([{ proposalId: "prp_1", expectedBase: 3 }]));
    expect(flush).toHaveBeenCalled();
    expect(onAccepted).toHaveBeenCalledOnce();
    expect((await screen.findByTestId("proposal-review")).dataset.status).toBe("accepted");
  });

  it("a proposal whose edits a newer one carries says so and opens the newer one", async () => {
    const { transport } = setup(view({ status: "superseded", supersededBy: "prp_2", supersededReason: "merged" }), "zh");
    const note = await screen.findByTestId("superseded-note");
    expect(note.dataset.reason).toBe("merged");
    expect(note.textContent).toContain("较新的建议");
    fireEvent.click(screen.getByTestId("open-successor"));
    await waitFor(() => expect(transport.callsTo("proposal.get").at(-1)).toEqual({ proposalId: "prp_2" }));
  });

  it("a proposal that carries an earlier one's edits names them", async () => {
    setup(view({ carries: [{ proposalId: "prp_0", summary: "开头更有力", hunkIds: ["h9"] }] }));
    expect((await screen.findByTestId("carries")).textContent).toBe("Also carries: 开头更有力");
  });

  it("rejects everything with a reason", async () => {
    const { transport } = setup(view());
    fireEvent.click(await screen.findByTestId("review-reject-all"));
    fireEvent.change(screen.getByTestId("reject-reason"), { target: { value: "语气太硬" } });
    fireEvent.click(screen.getByTestId("reject-confirm"));
    await waitFor(() => expect(transport.callsTo("proposal.reject")).toEqual([{ proposalId: "prp_1", reason: "语气太硬" }]));
  });

  it("a stale proposal says the source changed, cannot be accepted, and rebases or regenerates", async () => {
    const { transport, onRegenerate } = setup(view({ stale: true, staleReason: "the source changed" }), "zh");
    const banner = await screen.findByTestId("stale-banner");
    expect(banner.textContent).toContain("写下这个建议之后，正文已经改变。");
    expect((screen.getByTestId("review-accept-all") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("review-regenerate"));
    expect(onRegenerate).not.toHaveBeenCalled(); // no session to ask: the button is disabled
    fireEvent.click(screen.getByTestId("review-rebase"));
    await waitFor(() => expect(screen.getByTestId("proposal-review").dataset.proposal).toBe("prp_2"));
    expect(screen.queryByTestId("stale-banner")).toBeNull();
    expect(transport.callsTo("proposal.rebase")).toEqual([{ proposalId: "prp_1" }]);
  });

  it("a stale proposal accepts no hunk either: Accept and Enter are off, Reject stays, Rebase is the way on", async () => {
    const { transport } = setup(view({ stale: true, staleReason: "the source changed" }));
    await screen.findByTestId("stale-banner");
    const bars = await waitFor(() => {
      const found = [...document.querySelectorAll<HTMLElement>("[data-testid=hunk]")];
      expect(found).toHaveLength(2);
      return found;
    });
    const acceptAll = screen.getByTestId("review-accept-all") as HTMLButtonElement;
    expect(acceptAll.disabled).toBe(true);
    for (const bar of bars) {
      const accept = bar.querySelector<HTMLButtonElement>("[data-act=accept]")!;
      expect(accept.disabled).toBe(true);
      expect(accept.title).toBe("The source changed since this was written: rebase it onto the current text first.");
      expect(bar.querySelector<HTMLButtonElement>("[data-act=reject]")!.disabled).toBe(false);
    }
    // Neither a click nor Enter marks a hunk accepted or sends anything.
    fireEvent.click(bars[0].querySelector<HTMLButtonElement>("[data-act=accept]")!);
    fireEvent.keyDown(bars[0], { key: "Enter" });
    fireEvent.keyDown(bars[1], { key: "Enter" });
    await new Promise((r) => setTimeout(r, 30));
    expect([...document.querySelectorAll<HTMLElement>("[data-testid=hunk]")].map((b) => b.dataset.decision)).toEqual(["pending", "pending"]);
    expect(transport.callsTo("proposal.accept")).toEqual([]);
    expect(screen.queryByTestId("review-apply")).toBeNull();
    // Rejecting a hunk of a stale proposal still works.
    fireEvent.keyDown(bars[0], { key: "Backspace" });
    expect(await screen.findByTestId("reject-form")).toBeTruthy();
    // After a rebase the proposal is current again and its hunks can be accepted.
    fireEvent.click(screen.getByText("Cancel"));
    fireEvent.click(screen.getByTestId("review-rebase"));
    await waitFor(() => expect(screen.getByTestId("proposal-review").dataset.proposal).toBe("prp_2"));
    await waitFor(() => {
      const accept = document.querySelector<HTMLButtonElement>("[data-testid=hunk] [data-act=accept]");
      expect(accept?.disabled).toBe(false);
    });
  });

  it("title candidates are choices: one is picked and accepted", async () => {
    const v = view({ kind: "title_candidates", hunks: [], payload: { type: "candidates", candidates: [{ text: "春天写作", rationale: "短" }, { text: "每天三百字", rationale: "具体" }] } });
    const { transport } = setup(v);
    const accept = (await screen.findByTestId("review-accept-all")) as HTMLButtonElement;
    expect(accept.disabled).toBe(true);
    fireEvent.click(screen.getByLabelText(/每天三百字/));
    fireEvent.click(accept);
    await waitFor(() => expect(transport.callsTo("proposal.accept")).toEqual([{ proposalId: "prp_1", expectedBase: 3, choices: ["每天三百字"] }]));
  });

  it("a conflict on accept shows the code's text and reloads the proposal", async () => {
    const { transport } = setup(view());
    transport.on("proposal.accept", () => {
      throw { ...apiError("CONFLICT", "Proposal prp_1 is stale", [{ id: "reload_and_merge", message: "x" }]), messageId: "proposal.stale" };
    });
    fireEvent.click(await screen.findByTestId("review-accept-all"));
    const banner = await screen.findByTestId("error-banner");
    expect(banner.dataset.code).toBe("CONFLICT");
    expect(banner.textContent).toContain("The text changed since this proposal was made; nothing was overwritten.");
    await waitFor(() => expect(transport.callsTo("proposal.get").length).toBeGreaterThanOrEqual(2));
  });

  it("stages the proposal into the session's working copy instead of applying it", async () => {
    const v = view();
    const { transport, onClose, onAccepted } = setup(v, "en", ["session.stage", "session.staging"]);
    const staged: unknown[] = [];
    transport.on("session.stage", (p) => (staged.push(p), { staging: null, proposals: [], baseSource: "", effectiveSource: "", diff: { hunks: [], nInsertions: 0, nDeletions: 0, identical: true }, baselineMoved: false }));
    transport.on("session.staging", () => ({ staging: null, proposals: [], baseSource: "", effectiveSource: "", diff: { hunks: [], nInsertions: 0, nDeletions: 0, identical: true }, baselineMoved: false }));
    fireEvent.click(await screen.findByTestId("review-stage"));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(staged).toEqual([{ sessionId: v.origin.sessionId, proposalId: v.id }]);
    expect(onAccepted).not.toHaveBeenCalled();
  });

  it("a platform draft proposal shows beside its diff as the platform will, counted as X counts", async () => {
    setup(draftPatch(), "zh");
    const preview = await screen.findByTestId("review-draft-preview");
    expect(preview.dataset.platform).toBe("x");
    expect(preview.textContent).toContain("在X中的样子");
    const posts = await screen.findAllByTestId("x-post");
    expect(posts.map((p) => p.querySelector(".post-text")?.textContent)).toEqual(["第一条。", "第二条，写长一点。"]);
    // The engine measures each proposed post (here: two per character).
    await waitFor(() => expect(screen.getAllByTestId("x-count").map((c) => c.textContent)).toEqual(["8/280", "18/280"]));
  });

  it("a proposal for a ready draft needs the explicit confirmation, and sends it", async () => {
    const { transport } = setup(draftPatch(), "en", [], savedDraft({ status: "ready" }));
    const accept = (await screen.findByTestId("review-accept-all")) as HTMLButtonElement;
    const confirm = (await screen.findByTestId("review-confirm-final")) as HTMLInputElement;
    expect(accept.disabled).toBe(true);
    fireEvent.click(confirm);
    expect(accept.disabled).toBe(false);
    fireEvent.click(accept);
    await waitFor(() => expect(transport.callsTo("proposal.accept")).toEqual([{ proposalId: "prp_1", expectedBase: 2, confirmFinal: true }]));
  });

  it("shows findings in the UI language from their wording, English when they have none", async () => {
    const worded = {
      check: "ad_law",
      severity: "warn" as const,
      platform: null,
      span: null,
      location: null,
      matched: "最佳",
      message: "“最佳” is an absolute term restricted in advertising (China's Advertising Law, Art. 9; list ad-law-zh@v2).",
      suggestion: "Add scope and evidence.",
      route: null,
      messageId: "ad_law",
      params: { term: "最佳", list: "ad-law-zh@v2" },
      suggestionId: "ad_law",
    };
    const plain = { ...worded, messageId: undefined, params: undefined, suggestionId: undefined, message: "Something new.", suggestion: null };
    setup(view({ newFindings: [worded, plain] }), "zh");
    const items = await screen.findAllByTestId("review-finding");
    expect(items.map((i) => i.textContent)).toEqual([
      "“最佳”是广告中受限的绝对化用语（《广告法》第九条；广告法用语表 v2）。 — 补充范围和依据（谁测的、何时、与什么相比），或改用事实描述代替绝对化用语。",
      "Something new.",
    ]);
  });

  it("offers no staging when the backend has none", async () => {
    setup(view());
    await screen.findByTestId("review-accept-all");
    expect(screen.queryByTestId("review-stage")).toBeNull();
  });
});
