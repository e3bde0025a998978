import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { created, ev, resetSeq, session, sessionView, turnStarted, user } from "../../shared/testing/fixtures";
import { serveLog } from "./testLog";
import { setupPanel } from "./panelHarness";

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});
beforeEach(() => resetSeq());

describe("the session bar", () => {
  it("a session made with + New takes its first task as its title", async () => {
    const { transport } = setupPanel({ log: [ev(created())], sessions: [session({ title: "改写开头" })] });
    await screen.findByTestId("composer-input");
    fireEvent.click(screen.getByTestId("session-new"));
    // The engine names it after the project.
    await waitFor(() => expect(screen.getByTestId("session-title").textContent).toBe("早起写作"));
    expect(transport.callsTo("session.create")).toEqual([{ projectId: "prj_1" }]);
    const input = await screen.findByTestId("composer-input");
    fireEvent.change(input, { target: { value: "结尾加一句行动号召\n语气温和" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(transport.callsTo("session.rename")).toEqual([{ sessionId: "ses_new", title: "结尾加一句行动号召" }]));
    await waitFor(() => expect(screen.getByTestId("session-title").textContent).toBe("结尾加一句行动号召"));
  });

  it("a session someone named, or one with messages, keeps its title", async () => {
    const { transport } = setupPanel({ log: [ev(created()), ev(user("先读一遍")), ev(turnStarted())], sessions: [session({ title: "早起写作" })] });
    const input = await screen.findByTestId("composer-input");
    fireEvent.change(input, { target: { value: "再改" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(transport.callsTo("session.submit")).toHaveLength(1));
    expect(transport.callsTo("session.rename")).toEqual([]);
  });

  it("the list tells sessions apart by when they began, and shows archived ones read-only on request", async () => {
    const sessions = [session({ id: "ses_1", title: "早起写作", createdAt: "2026-11-22T11:54:00Z" }), session({ id: "ses_2", title: "早起写作", createdAt: "2026-11-22T09:00:00Z" })];
    const old = session({ id: "ses_old", title: "旧的会话", archived: true });
    const { transport } = setupPanel({ log: [ev(created())], sessions, lang: "zh" });
    transport.on("session.list", ({ includeArchived }) => ({ sessions: includeArchived ? [...sessions, old] : sessions }));
    transport.on("session.get", ({ sessionId }) => sessionView({ session: [...sessions, old].find((s) => s.id === sessionId) }));
    await screen.findByTestId("composer-input");
    // Archiving is not the hunk's Reject ⌫, and says what it does.
    const archive = screen.getByTestId("session-archive");
    expect(archive.textContent).not.toContain("⌫");
    fireEvent.click(archive);
    expect(screen.getByTestId("archive-confirm").textContent).toContain("不能继续");
    expect(screen.getByTestId("archive-confirm").textContent).toContain("恢复");
    expect(screen.getByTestId("archive-confirm").textContent).not.toContain("备份");
    fireEvent.click(within(screen.getByTestId("archive-confirm")).getByText("取消"));
    fireEvent.click(screen.getByTestId("session-pick"));
    const list = await screen.findByTestId("session-list");
    const started = [...list.querySelectorAll(".session-item-started")].map((e) => e.textContent);
    expect(started).toEqual(["开始于 6分钟前", "开始于 09:00"].map((s) => expect.stringContaining(s.split(" ")[0])));
    expect(new Set(started).size).toBe(2);
    expect(within(list).queryByTestId("session-item-archived")).toBeNull();
    fireEvent.click(within(list).getByTestId("session-show-archived"));
    const item = await within(list).findByTestId("session-item-archived");
    expect(item.textContent).toContain("旧的会话");
    expect(item.textContent).toContain("已归档 · 只读");
    expect(transport.callsTo("session.list")).toContainEqual({ projectId: "prj_1", includeArchived: true });
    fireEvent.click(item);
    await waitFor(() => expect(screen.getByTestId("session-title").textContent).toBe("旧的会话"));
    // Read-only: no rename, no archive.
    expect(screen.queryByTestId("session-archive")).toBeNull();
    expect(screen.queryByTestId("session-rename")).toBeNull();
  });

  it("an archived session is restored from the list, or in place of archive while it is open, and can be continued", async () => {
    const live = session({ id: "ses_1", title: "早起写作" });
    let old = session({ id: "ses_old", title: "旧的会话", archived: true, createdAt: "2026-11-21T09:00:00Z" });
    const { transport } = setupPanel({ log: [ev(created())], sessions: [live], lang: "zh" });
    let archivedLog = [ev(created(), { sequence: 1 }), ev({ kind: "session_archived", payload: {} as Record<symbol, never> }, { sequence: 2 })];
    transport.on("session.list", ({ includeArchived }) => ({ sessions: includeArchived || !old.archived ? [live, old] : [live] }));
    transport.on("session.get", ({ sessionId }) => sessionView({ session: sessionId === old.id ? old : live, status: sessionId === old.id && old.archived ? "archived" : "idle" }));
    transport.on("session.events", ({ sessionId, from = 1 }) =>
      sessionId === old.id ? { events: archivedLog.filter((e) => e.sequence >= from), lastSequence: archivedLog.length } : { events: [], lastSequence: 0 },
    );
    serveLog(transport, (sessionId) => (sessionId === old.id ? archivedLog : []));
    transport.on("session.archive", ({ sessionId, archived }) => {
      expect(sessionId).toBe(old.id);
      old = session({ ...old, archived: archived ?? true });
      archivedLog = [...archivedLog, ev({ kind: "session_unarchived", payload: {} as Record<symbol, never> }, { sequence: archivedLog.length + 1 })];
      return sessionView({ session: old });
    });
    await screen.findByTestId("composer-input");
    // Opened from the list, it is read-only and offers Restore where archive was.
    fireEvent.click(screen.getByTestId("session-pick"));
    fireEvent.click(within(await screen.findByTestId("session-list")).getByTestId("session-show-archived"));
    const row = await screen.findByTestId("session-archived-row");
    expect(within(row).getByTestId("session-restore").textContent).toBe("恢复");
    fireEvent.click(within(row).getByTestId("session-item-archived"));
    await waitFor(() => expect(screen.getByTestId("session-title").textContent).toBe("旧的会话"));
    const restore = await screen.findByTestId("session-unarchive");
    expect(restore.textContent).toBe("恢复");
    expect(screen.queryByTestId("session-archive")).toBeNull();
    await waitFor(() => expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).disabled).toBe(true));
    fireEvent.click(restore);
    await waitFor(() => expect(transport.callsTo("session.archive")).toEqual([{ sessionId: "ses_old", archived: false }]));
    // Back: continued like any session, its log says it came back, the list has it.
    await screen.findByTestId("unarchived-line");
    expect(screen.getByTestId("unarchived-line").textContent).toBe("会话已从归档中恢复");
    await waitFor(() => expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).disabled).toBe(false));
    expect(screen.queryByTestId("session-unarchive")).toBeNull();
    expect(screen.getByTestId("session-archive")).toBeTruthy();
    fireEvent.click(screen.getByTestId("session-pick"));
    const list = await screen.findByTestId("session-list");
    expect(within(list).getAllByTestId("session-item").map((i) => i.dataset.session)).toEqual(["ses_1", "ses_old"]);
  });

  it("Restore in the archived list brings the session back and opens it", async () => {
    const live = session({ id: "ses_1", title: "早起写作" });
    let old = session({ id: "ses_old", title: "旧的会话", archived: true });
    const { transport } = setupPanel({ log: [ev(created())], sessions: [live], lang: "en" });
    transport.on("session.list", ({ includeArchived }) => ({ sessions: includeArchived || !old.archived ? [live, old] : [live] }));
    transport.on("session.get", ({ sessionId }) => sessionView({ session: sessionId === old.id ? old : live }));
    transport.on("session.archive", ({ archived }) => {
      old = session({ ...old, archived: archived ?? true });
      return sessionView({ session: old });
    });
    await screen.findByTestId("composer-input");
    fireEvent.click(screen.getByTestId("session-pick"));
    fireEvent.click(within(await screen.findByTestId("session-list")).getByTestId("session-show-archived"));
    const row = await screen.findByTestId("session-archived-row");
    expect(within(row).getByTestId("session-restore").textContent).toBe("Restore");
    fireEvent.click(within(row).getByTestId("session-restore"));
    await waitFor(() => expect(screen.getByTestId("session-title").textContent).toBe("旧的会话"));
    expect(transport.callsTo("session.archive")).toEqual([{ sessionId: "ses_old", archived: false }]);
    expect(screen.queryByTestId("session-list")).toBeNull();
    expect(screen.getByTestId("session-archive")).toBeTruthy();
  });

  it("Stop takes the place of rename and archive, in the same row", async () => {
    setupPanel({ log: [ev(created()), ev(user("改")), ev(turnStarted())], status: "running" });
    const stop = await screen.findByTestId("stop");
    const row = stop.parentElement!;
    expect(row.className).toBe("session-bar-row");
    expect(within(row).queryByTestId("session-archive")).toBeNull();
    expect(within(row).queryByTestId("session-rename")).toBeNull();
  });
});
