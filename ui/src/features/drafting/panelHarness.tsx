// A test harness for the AI panel: the panel on a FakeTransport with a session log,
// its working copy recorded. Shared by the prompt, session bar and checkpoint tests.
import { render } from "@testing-library/react";
import { vi } from "vitest";
import type { HarnessEvent } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import type { LlmProfile, Project, ProposalView, Session } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { AiPanel } from "./AiPanel";
import { profile, session, sessionView } from "../../shared/testing/fixtures";
import type { Selection } from "./scope";
import { Drafting } from "./store";
import { serveLog } from "./testLog";

export interface PanelSetup {
  profiles?: LlmProfile[];
  log?: HarnessEvent[];
  status?: "idle" | "running" | "waitingForApproval" | "waitingForAnswer";
  methods?: string[];
  lang?: Lang;
  selection?: Selection | null;
  proposals?: ProposalView[];
  sessions?: Session[];
  project?: Partial<Project>;
  /** A local model server answering on its usual port (the setup offer names it). */
  localServer?: boolean;
  toast?: (message: string) => void;
  /** The clock (default: a fixed instant). */
  now?: () => number;
}

export function testProject(over: Partial<Project> = {}): Project {
  return {
    id: "prj_1",
    title: "早起写作",
    source: "# 早起写作\n\n第一段。\n\n第二段，讲习惯。\n\n第三段。\n",
    revision: 3,
    head: 2,
    platforms: ["wechat"],
    brandProfileId: null,
    templateId: null,
    archived: false,
    createdAt: "2026-11-22T10:00:00Z",
    updatedAt: "2026-11-22T11:00:00Z",
    ...over,
  };
}

export const toolCall = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

export function setupPanel({
  profiles = [profile()],
  log = [],
  status = "idle",
  methods = [],
  lang = "en",
  selection = null,
  proposals = [],
  sessions,
  project,
  localServer = false,
  toast,
  now,
}: PanelSetup = {}) {
  const transport = new FakeTransport();
  transport.on("app.info", () => ({ version: "0.1.0", dataDir: "/d", os: "Linux", schemaVersion: 3, methods, streamingMethods: [] }));
  transport.on("llmProfile.list", () => ({ profiles, envKeyActive: false }));
  transport.on("llmProfile.detectLocal", () => ({
    found: localServer
      ? [{ preset: { id: "ollama", label: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", exampleModel: "qwen", keyRequired: false, local: true, supportsJsonSchema: true, schemaForm: "responseFormat", toolLoading: "onDemand" }, models: ["qwen"] }]
      : [],
  }));
  transport.on("session.list", () => ({ sessions: sessions ?? (log.length ? [session()] : []) }));
  const made: Session[] = [];
  transport.on("session.get", ({ sessionId }) => sessionView({ session: [...made, ...(sessions ?? [])].find((s) => s.id === sessionId) ?? session(), status, lastSequence: log.length }));
  transport.on("session.events", ({ from = 1 }) => ({ events: log.filter((e) => e.sequence >= from), lastSequence: log.length }));
  serveLog(transport, log);
  transport.on("proposal.list", () => ({ proposals }));
  transport.on("usage.list", () => ({ records: [] }));
  transport.on("session.interrupt", () => ({ interrupted: true }));
  transport.on("project.get", () => testProject(project));
  const done = (sessionId: string) => ({ queued: false, reason: "completed" as const, session: sessionView({ session: [...made, ...(sessions ?? [])].find((s) => s.id === sessionId) ?? session() }) });
  transport.on("session.resolveApproval", ({ sessionId }) => done(sessionId));
  transport.on("session.answerQuestion", ({ sessionId }) => done(sessionId));
  transport.on("session.submit", ({ sessionId }) => done(sessionId));
  transport.on("session.create", (p) => {
    const s = session({ id: "ses_new", title: p.title ?? testProject(project).title });
    made.push(s);
    return sessionView({ session: s, mode: p.mode ?? "default" });
  });
  transport.on("session.rename", ({ sessionId, title }) => sessionView({ session: session({ id: sessionId, title }) }));
  const ctx = makeCtx(transport, lang, { ...(toast ? { toast } : {}), ...(now ? { now } : {}) });
  const drafting = new Drafting(ctx.client, "prj_1");
  const onSetUp = vi.fn();
  const flush = vi.fn(async () => undefined);
  const replace = vi.fn();
  const onRestoreProject = vi.fn();
  const utils = render(
    <WithCtx ctx={ctx}>
      <AiPanel
        drafting={drafting}
        selectionText={selection?.text ?? ""}
        getSelection={() => selection}
        onReview={() => undefined}
        onSetUpModel={onSetUp}
        workingCopy={{ flush, revision: () => 3, replace }}
        projectArchived={project?.archived === true}
        onRestoreProject={onRestoreProject}
      />
    </WithCtx>,
  );
  return { transport, client: ctx.client, flush, replace, drafting, onSetUp, onRestoreProject, ...utils };
}
