import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { DraftContent, PlatformDraft, PlatformDraftSaveResult } from "../../shared/api/generated";
import { makeCtx, WithAppErrors, WithCtx } from "../../shared/testing/utils";
import { DraftsPanel } from "./DraftsPanel";
import { compiled, finding } from "./drafts.fixture";
import { editableText, editedContent } from "./draftContent";

afterEach(cleanup);

describe("editable text of a draft", () => {
  it("round-trips every kind of content", () => {
    const thread: DraftContent = { type: "thread", posts: [{ text: "一", weightedLength: 2 }, { text: "two", weightedLength: 3 }] };
    expect(editableText(thread)).toBe("一\n---\ntwo");
    expect(editedContent(thread, "a\n---\n\nb\n----\nc", "")).toEqual({
      type: "thread",
      posts: ["a", "b", "c"].map((text) => ({ text, weightedLength: 0 })),
    });
    const card: DraftContent = { type: "card", body: "正文", tags: ["春天"] };
    expect(editedContent(card, "新正文", "#春天， 写作 ,效率")).toEqual({ type: "card", body: "新正文", tags: ["春天", "写作", "效率"] });
    expect(editedContent({ type: "html", html: "<p>a</p>", digest: "d" }, "<p>b</p>", "")).toEqual({ type: "html", html: "<p>b</p>", digest: "d" });
  });
});

/** A small in-memory stand-in for the platformDraft.* methods, enough for the panel's flow. */
function backend() {
  const live = compiled(1);
  const xDraft = live.drafts.find((d) => d.draft.platform === "x")!;
  let saved: PlatformDraft | null = null;
  const make = (revision: number, content: DraftContent, handEdited: boolean): PlatformDraft => ({
    projectId: "p",
    platform: "x",
    revision,
    status: saved?.status ?? "draft",
    profileId: "x@draft-v1",
    sourceRevision: 1,
    sourceVersion: 0,
    title: "标题",
    content,
    handEdited,
    updatedAt: "2026-11-22T00:00:00Z",
    updatedBy: "me",
  });
  const transport = new FakeTransport()
    .on("pipeline.compile", () => live)
    .on("platformDraft.list", () => ({
      projectId: "p",
      sourceRevision: 1,
      drafts: saved ? [saved] : [],
      // The draft's own text's findings, as the core reports them.
      findings: saved ? [{ platform: "x" as const, findings: [finding({ check: "draft.empty", platform: "x", location: "body", message: "own text" })] }] : [],
    }))
    .on("platformDraft.save", (p): PlatformDraftSaveResult => {
      if (saved?.handEdited && p.replaceRevision === undefined) {
        return { outcome: "needsChoice", draft: saved, compiled: xDraft, diff: { identical: false, hunks: [{ oldStart: 1, oldLen: 1, newStart: 1, newLen: 1, lines: [{ kind: "delete", oldLine: 1, newLine: null, segments: [{ text: "mine", emphasized: true }] }, { kind: "insert", oldLine: null, newLine: 1, segments: [{ text: "fresh", emphasized: true }] }] }] } as never };
      }
      saved = make((saved?.revision ?? 0) + 1, xDraft.draft.content, false);
      return { outcome: saved.revision === 1 ? "created" : "updated", draft: saved, compiled: xDraft };
    })
    .on("platformDraft.edit", (p) => {
      if (!saved || p.baseRevision !== saved.revision) throw apiError("CONFLICT", "stale");
      saved = make(saved.revision + 1, { type: "thread", posts: (p.content as Extract<DraftContent, { type: "thread" }>).posts.map((x) => ({ ...x, weightedLength: x.text.length })) }, true);
      return { draft: saved, findings: [] };
    })
    .on("platformDraft.setStatus", (p) => {
      if (!saved) throw apiError("NOT_FOUND", "none");
      saved = { ...saved, status: p.status, revision: saved.revision + 1 };
      return saved;
    });
  return { transport, current: () => saved };
}

describe("saved drafts in the drafts panel", () => {
  it("saves, edits by hand, asks before a recompile replaces the edits, and locks while publishing", async () => {
    const { transport, current } = backend();
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (s) => toasts.push(s) })}>
        <DraftsPanel projectId="p" revision={1} platforms={["x"]} onJump={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("draft-save"));
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("1"));
    expect(toasts).toEqual(["Draft saved (revision 1)"]);

    fireEvent.click(screen.getByTestId("draft-edit"));
    fireEvent.change(screen.getByTestId("draft-edit-text"), { target: { value: "mine\n---\nsecond" } });
    fireEvent.keyDown(screen.getByTestId("draft-edit-text"), { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("2"));
    expect(screen.getByTestId("draft-hand-edited")).toBeTruthy();
    expect(screen.getAllByTestId("x-post").map((p) => p.querySelector(".post-text")?.textContent)).toEqual(["mine", "second"]);
    // The hand-edited draft is listed with its own text's findings, not the compile's.
    await waitFor(() => expect(screen.getByTestId("findings-title").dataset.own).toBe("saved"));
    expect(screen.getByTestId("findings-title").textContent).toBe("Findings of the saved draft (1)");
    expect(screen.getAllByTestId("finding").map((f) => f.dataset.check)).toEqual(["draft.empty"]);

    // A recompile shows the difference; keeping the edits writes nothing.
    fireEvent.click(screen.getByTestId("draft-recompile"));
    const dialog = await screen.findByTestId("draft-choice");
    expect(within(dialog).getByTestId("diff").textContent).toContain("fresh");
    fireEvent.click(within(dialog).getByTestId("draft-keep-edits"));
    expect(current()?.revision).toBe(2);
    // Choosing the compile replaces them, naming the revision it replaces.
    fireEvent.click(screen.getByTestId("draft-recompile"));
    fireEvent.click(within(await screen.findByTestId("draft-choice")).getByTestId("draft-use-compile"));
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("3"));
    expect(transport.callsTo("platformDraft.save").at(-1)).toEqual({ projectId: "p", platform: "x", replaceRevision: 2 });
    expect(screen.queryByTestId("draft-hand-edited")).toBeNull();
    // The fresh compile is what is saved again: its findings and the source's show.
    expect(screen.getByTestId("findings-title").dataset.own).toBe("compile");
    expect(screen.getAllByTestId("finding").map((f) => f.dataset.check)).toContain("limit.post");

    fireEvent.change(screen.getByTestId("draft-status"), { target: { value: "publishing" } });
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.status).toBe("publishing"));
    expect(screen.getByTestId("draft-read-only")).toBeTruthy();
    expect((screen.getByTestId("draft-edit") as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("draft-recompile") as HTMLButtonElement).disabled).toBe(true);
  });
});

describe("setting a draft to published", () => {
  it("a failed save and a refused hand edit go to the app's one banner; the editor stays open with the typed text", async () => {
    const { transport } = backend();
    const save = transport.handlers["platformDraft.save"]!;
    let saveFails = true;
    transport.on("platformDraft.save", (p, emit) => {
      if (saveFails) throw apiError("STORE_LOCKED", "The data folder is open in another Inkstone.");
      return save(p, emit);
    });
    transport.on("platformDraft.edit", () => {
      throw apiError("CONFLICT", "The draft changed since it was opened.");
    });
    render(
      <WithAppErrors ctx={makeCtx(transport)}>
        <DraftsPanel projectId="p" revision={1} platforms={["x"]} onJump={() => undefined} />
      </WithAppErrors>,
    );
    const appBanner = () => within(screen.getByTestId("app-error")).findByTestId("error-banner");
    const ownBanner = () => within(screen.getByTestId("under-test")).queryByTestId("error-banner");
    fireEvent.click(await screen.findByTestId("draft-save"));
    expect((await appBanner()).dataset.code).toBe("STORE_LOCKED");
    expect(ownBanner()).toBeNull();
    expect(screen.getByTestId("saved-draft").dataset.revision).toBe("");

    saveFails = false;
    fireEvent.click(screen.getByTestId("draft-save"));
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("1"));
    fireEvent.click(screen.getByTestId("draft-edit"));
    fireEvent.change(screen.getByTestId("draft-edit-text"), { target: { value: "mine" } });
    fireEvent.click(screen.getByTestId("draft-edit-save"));
    await waitFor(async () => expect((await appBanner()).dataset.code).toBe("CONFLICT"));
    expect(ownBanner()).toBeNull();
    expect((screen.getByTestId("draft-edit-text") as HTMLTextAreaElement).value).toBe("mine");
  });

  it("asks for the publication's details, defaults filled, and records it in the same write", async () => {
    const { transport, current } = backend();
    transport.on("account.list", () => ({ accounts: [] }));
    const toasts: string[] = [];
    render(
      <WithCtx ctx={makeCtx(transport, "en", { toast: (s) => toasts.push(s) })}>
        <DraftsPanel projectId="p" revision={1} platforms={["x"]} onJump={() => undefined} />
      </WithCtx>,
    );
    fireEvent.click(await screen.findByTestId("draft-save"));
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("1"));
    fireEvent.change(screen.getByTestId("draft-status"), { target: { value: "published" } });
    const dialog = await screen.findByTestId("publish-dialog");
    // Nothing is written until the person confirms.
    expect(transport.callsTo("platformDraft.setStatus")).toEqual([]);
    expect((within(dialog).getByTestId("pub-title") as HTMLInputElement).value).toBe("标题");
    // Now (2026-11-22T12:00Z) in X's zone, UTC.
    expect((within(dialog).getByTestId("pub-time") as HTMLInputElement).value).toBe("2026-11-22 12:00");
    expect((within(dialog).getByTestId("pub-zone") as HTMLInputElement).value).toBe("UTC");
    fireEvent.change(within(dialog).getByTestId("pub-url"), { target: { value: "https://x.com/me/status/1" } });
    fireEvent.click(within(dialog).getByTestId("pub-save"));
    await waitFor(() => expect(transport.calls.map((c) => c.method)).toContain("platformDraft.setStatus"));
    await waitFor(() => expect(screen.queryByTestId("publish-dialog")).toBeNull());
    const call = transport.callsTo("platformDraft.setStatus")[0] as { status: string; publication: Record<string, unknown> };
    expect(call.status).toBe("published");
    expect(call.publication).toMatchObject({ url: "https://x.com/me/status/1", title: "标题", publishedAt: "2026-11-22 12:00", timeZone: "UTC", format: "post", distribution: "organic", visibility: "public" });
    expect(current()?.status).toBe("published");
    expect(toasts.at(-1)).toBe("Marked published; the publication is recorded.");
  });

  it("a refused publication keeps the dialog open, its error in the app's one banner and the status unchanged; skipping sets the status only", async () => {
    const { transport, current } = backend();
    transport.on("account.list", () => ({ accounts: [] }));
    const real = transport.handlers["platformDraft.setStatus"]!;
    transport.on("platformDraft.setStatus", (p, emit) => {
      if (p.publication) throw apiError("VALIDATION", "`url` must be a web address starting with https:// or http://.");
      return real(p, emit);
    });
    render(
      <WithAppErrors ctx={makeCtx(transport)}>
        <DraftsPanel projectId="p" revision={1} platforms={["x"]} onJump={() => undefined} />
      </WithAppErrors>,
    );
    fireEvent.click(await screen.findByTestId("draft-save"));
    await waitFor(() => expect(screen.getByTestId("saved-draft").dataset.revision).toBe("1"));
    fireEvent.change(screen.getByTestId("draft-status"), { target: { value: "published" } });
    const dialog = await screen.findByTestId("publish-dialog");
    fireEvent.click(within(dialog).getByTestId("pub-save"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("VALIDATION");
    expect(within(dialog).queryByRole("alert")).toBeNull();
    expect(screen.getByTestId("publish-dialog")).toBe(dialog);
    expect(current()?.status).toBe("draft");
    fireEvent.click(within(dialog).getByTestId("pub-skip"));
    await waitFor(() => expect(current()?.status).toBe("published"));
    expect(transport.callsTo("platformDraft.setStatus").at(-1)).toEqual({ projectId: "p", platform: "x", status: "published", baseRevision: 1 });
  });
});
