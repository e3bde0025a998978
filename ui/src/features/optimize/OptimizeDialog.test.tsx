// One-click optimize with no model set up: said before the form is filled, with the
// way to set one up; a profile made meanwhile lifts it. A package left for later is
// listed and reopened; platforms without a saved draft are named before the run.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { LlmProfile, PlatformDraft, Run } from "../../shared/api/generated";
import { profile, view } from "../../shared/testing/fixtures";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { OptimizeDialog, unreviewed } from "./OptimizeDialog";

afterEach(cleanup);

function setup(profiles: LlmProfile[], lang: Lang = "en") {
  const transport = new FakeTransport();
  transport.on("llmProfile.list", () => ({ profiles, envKeyActive: false }));
  transport.on("optimize.list", () => ({ runs: [] }));
  transport.on("platformDraft.list", () => ({ projectId: "prj_1", sourceRevision: 3, drafts: [saved("wechat")], savedFindings: [] }) as never);
  const ctx = makeCtx(transport, lang);
  const onSetUpModel = vi.fn();
  render(
    <WithCtx ctx={ctx}>
      <OptimizeDialog projectId="prj_1" platforms={["wechat"]} flush={async () => undefined} onApplied={() => undefined} onClose={() => undefined} onSetUpModel={onSetUpModel} />
    </WithCtx>,
  );
  return { transport, client: ctx.client, onSetUpModel };
}

describe("one-click optimize without a model", () => {
  it("says so, offers to set one up, and cannot start until one is made", async () => {
    const profiles: LlmProfile[] = [];
    const { transport, client, onSetUpModel } = setup(profiles);
    const notice = await screen.findByTestId("optimize-no-model");
    expect(notice.textContent).toContain("No AI model is set up yet");
    expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("optimize-set-up-model"));
    expect(onSetUpModel).toHaveBeenCalledOnce();
    // A profile made in Settings through the same client.
    transport.on("llmProfile.create", () => {
      profiles.push(profile());
      return { profile: profiles[0], warnings: [] };
    });
    await client.call("llmProfile.create", { name: "local", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen", keyRequired: false });
    await waitFor(() => expect(screen.queryByTestId("optimize-no-model")).toBeNull());
    expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(false);
  });

  it("in Chinese", async () => {
    setup([], "zh");
    expect((await screen.findByTestId("optimize-no-model")).textContent).toContain("还没有设置 AI 模型");
  });

  it("with a model, no notice", async () => {
    setup([profile()]);
    await waitFor(() => expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId("optimize-no-model")).toBeNull();
  });
});

function saved(platform: PlatformDraft["platform"]): PlatformDraft {
  return {
    projectId: "prj_1",
    platform,
    revision: 1,
    status: "draft",
    profileId: `${platform}@draft-v1`,
    sourceRevision: 3,
    sourceVersion: 1,
    title: "周报",
    content: { type: "markdown", markdown: "周报" },
    handEdited: false,
    updatedAt: "2026-11-22T11:30:00Z",
    updatedBy: "me",
  };
}

function run(over: Partial<Run> = {}): Run {
  return {
    id: "run_1",
    projectId: "prj_1",
    profileId: "llm_1",
    model: "fake-model",
    input: { platforms: ["zhihu", "x"], goal: "completion", intensity: "balanced", constraints: { keepVoice: true, keepTitle: false, keepStructure: false, avoidClickbait: true } },
    status: "ready",
    stage: "proposals",
    baseRevision: 3,
    baseHead: 1,
    promptLayers: [],
    titles: ["周报写短的三个办法"],
    targets: [
      { target: { type: "source" }, proposalId: "prp_1", titleProposalId: "prp_2", summary: "Sharper opening.", risks: [], flags: [], outcome: "pending" },
      { target: { type: "draft", platform: "x" }, summary: "Not adapted: there is no saved x draft to change.", risks: [], flags: ["no_saved_draft"], outcome: "unavailable" },
    ],
    resumable: false,
    disclaimer: "",
    timings: { totalMicros: 0, modelMicros: 0, modelCalls: 3 },
    createdAt: "2026-11-22T11:30:00Z",
    updatedAt: "2026-11-22T11:30:00Z",
    ...over,
  };
}

function setupRuns(runs: Run[], lang: Lang = "en", drafts: PlatformDraft[] = [saved("zhihu"), saved("x")]) {
  const transport = new FakeTransport();
  transport.on("llmProfile.list", () => ({ profiles: [profile()], envKeyActive: false }));
  transport.on("optimize.list", () => ({ runs }));
  transport.on("platformDraft.list", () => ({ projectId: "prj_1", sourceRevision: 3, drafts, savedFindings: [] }) as never);
  transport.on("proposal.get", ({ proposalId }) => view({ id: proposalId, summary: "Sharper opening." }));
  const ctx = makeCtx(transport, lang);
  render(
    <WithCtx ctx={ctx}>
      <OptimizeDialog projectId="prj_1" platforms={["zhihu", "x"]} flush={async () => undefined} onApplied={() => undefined} onClose={() => undefined} />
    </WithCtx>,
  );
  return { transport };
}

describe("a package left for later", () => {
  it("is listed when the dialog opens and reopens in the review", async () => {
    const ready = run();
    const applied = run({ id: "run_0", status: "applied", targets: ready.targets.map((x) => ({ ...x, outcome: "applied" as const })) });
    const failed = run({ id: "run_f", status: "failed", targets: [] });
    setupRuns([ready, applied, failed]);
    const list = await screen.findByTestId("optimize-unreviewed");
    expect(list.textContent).toContain("waiting for your review");
    expect(list.textContent).toContain("Zhihu");
    const items = screen.getAllByTestId("optimize-unreviewed-run");
    expect(items.map((i) => i.getAttribute("data-run"))).toEqual(["run_1"]);
    fireEvent.click(screen.getByTestId("optimize-reopen"));
    const review = await screen.findByTestId("optimize-review");
    expect(review.textContent).toContain("Sharper opening.");
    expect(screen.getByTestId("optimize-tab-source")).toBeTruthy();
    expect((screen.getByTestId("optimize-select-source") as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("optimize-title").textContent).toContain("周报写短的三个办法");
  });

  it("names a title candidate the engine dropped, in either language", async () => {
    const dropped = {
      check: "title_candidate",
      severity: "warn" as const,
      platform: null,
      span: null,
      location: "title candidate “周报写短↵的三个办法”",
      matched: null,
      message: "Title candidate “周报写短↵的三个办法” was dropped: a title is one line, and this one has a line break.",
      suggestion: null,
      route: null,
      messageId: "title_candidate.dropped_line",
    };
    const r = run();
    r.targets[0] = { ...r.targets[0], flags: ["dropped_titles"], risks: [dropped] };
    for (const [lang, flag, reason] of [
      ["en", "were dropped", "a title is one line"],
      ["zh", "已被去掉", "标题只能是一行"],
    ] as const) {
      setupRuns([r], lang);
      fireEvent.click(await screen.findByTestId("optimize-reopen"));
      await screen.findByTestId("optimize-review");
      expect(screen.getByTestId("optimize-flags").textContent).toContain(flag);
      expect(screen.getByTestId("optimize-risks").textContent).toContain(reason);
      expect(screen.getByTestId("optimize-risks").textContent).toContain("周报写短↵的三个办法");
      cleanup();
    }
  });

  it("in Chinese", async () => {
    setupRuns([run()], "zh");
    expect((await screen.findByTestId("optimize-unreviewed")).textContent).toContain("等待你审阅的优化");
    expect(screen.getByTestId("optimize-reopen").textContent).toBe("审阅");
  });

  it("a run with nothing left open is not listed", () => {
    const done = run({ status: "partly_applied" });
    done.targets = done.targets.map((x) => ({ ...x, outcome: x.outcome === "pending" ? ("applied" as const) : x.outcome }));
    expect(unreviewed(done)).toBe(false);
    expect(unreviewed(run({ status: "partly_applied" }))).toBe(true);
    expect(unreviewed(run({ status: "rejected" }))).toBe(false);
  });
});

describe("a platform without a saved draft", () => {
  it("is named before the run, and its compiled draft can be saved first", async () => {
    const drafts = [saved("zhihu")];
    const { transport } = setupRuns([], "en", drafts);
    const notice = await screen.findByTestId("optimize-unsaved");
    expect(notice.textContent).toContain("No saved draft for X");
    expect(notice.textContent).toContain("spends no model call");
    transport.on("platformDraft.save", ({ platform }) => {
      drafts.push(saved(platform));
      return { outcome: "saved", draft: saved(platform) } as never;
    });
    fireEvent.click(screen.getByTestId("optimize-save-drafts"));
    await waitFor(() => expect(screen.queryByTestId("optimize-unsaved")).toBeNull());
    expect(transport.callsTo("platformDraft.save")).toEqual([{ projectId: "prj_1", platform: "x" }]);
  });

  it("in Chinese", async () => {
    setupRuns([], "zh", [saved("zhihu")]);
    expect((await screen.findByTestId("optimize-unsaved")).textContent).toContain("还没有已保存的草稿");
  });

  it("leaving the platform out lifts the notice", async () => {
    setupRuns([], "en", [saved("zhihu")]);
    await screen.findByTestId("optimize-unsaved");
    fireEvent.click(screen.getByTestId("optimize-platform-x"));
    await waitFor(() => expect(screen.queryByTestId("optimize-unsaved")).toBeNull());
  });
});

describe("a run whose model kept answering invalid JSON", () => {
  it("gives the real next steps, never restarting Inkstone", async () => {
    for (const [lang, again, fewer] of [
      ["en", "Start the optimization again", "fewer platforms"],
      ["zh", "重新开始一次优化", "少选几个平台"],
    ] as const) {
      const { transport } = setupRuns([], lang);
      const hints = [
        { id: "retry_optimize", message: "Start the optimization again; models often answer correctly on another try." },
        { id: "other_model", message: "Or choose a model that follows JSON instructions more reliably (Settings → AI models)." },
        { id: "smaller_input", message: "Or ask for less at once: fewer platforms per run, or a shorter article." },
      ];
      const message = "The model's strategy is not valid after 2 repairs: the reply holds no JSON value. Nothing was proposed or applied.";
      transport.on("optimize.start", () => run({ status: "failed", targets: [], error: { code: "PROVIDER_BAD_RESPONSE", message, hints } }));
      await waitFor(() => expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(false));
      fireEvent.click(screen.getByTestId("optimize-start"));
      const banner = await screen.findByTestId("error-banner");
      expect(banner.textContent).toContain(again);
      expect(banner.textContent).toContain(fewer);
      expect(banner.textContent).not.toMatch(/restart|重启/i);
      cleanup();
    }
  });
});
