import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { AppInfo, ProblemReport } from "../../shared/api/generated";
import { type Lang, translate } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { HelpDialog, type HelpTab } from "./HelpDialog";
import { SHORTCUTS } from "./shortcuts";

afterEach(() => cleanup());

const info: AppInfo = {
  version: "0.1.0",
  dataDir: "/home/ann/.local/share/Inkstone",
  logDir: "/home/ann/.local/share/studio.inkstone/logs",
  os: "Debian GNU/Linux 12 (bookworm) (linux/x86_64)",
  schemaVersion: 9,
  methods: [],
  streamingMethods: [],
};

const report: ProblemReport = {
  text: "Inkstone 0.1.0\nSystem: Debian\n\nLast 2 log lines:\nINFO store opened\nWARN key [redacted]\n",
  logFile: "/home/ann/.local/share/studio.inkstone/logs/inkstone.2026-11-27.log",
  logLines: 2,
  scrubbedLines: 1,
};

function renderHelp(transport: FakeTransport, tab: HelpTab, lang: Lang = "en") {
  const toasts: string[] = [];
  const tabs: HelpTab[] = [];
  render(
    <WithCtx ctx={makeCtx(transport, lang, { toast: (t) => toasts.push(t) })}>
      <HelpDialog tab={tab} onTab={(t) => tabs.push(t)} onClose={() => undefined} />
    </WithCtx>,
  );
  return { toasts, tabs };
}

describe("Help", () => {
  it("About shows the version, the system and both folders, with a copy button each and no Open outside the desktop app", async () => {
    const transport = new FakeTransport().on("app.info", () => info);
    renderHelp(transport, "about");
    expect((await screen.findByTestId("help-version")).textContent).toContain("0.1.0");
    expect(screen.getByTestId("help-path-data").textContent).toContain(info.dataDir);
    expect(screen.getByTestId("help-path-logs").textContent).toContain(info.logDir!);
    expect(screen.getByText(info.os)).toBeTruthy();
    expect(screen.getByTestId("help-copy-logs")).toBeTruthy();
    // The browser cannot open folders: only the desktop shell offers Open.
    expect(screen.queryByTestId("help-open-data")).toBeNull();
  });

  it("About says where logs go when this process keeps no log file (browser mode)", async () => {
    const transport = new FakeTransport().on("app.info", () => ({ ...info, logDir: undefined }));
    renderHelp(transport, "about", "zh");
    await screen.findByTestId("help-version");
    expect(screen.queryByTestId("help-path-logs")).toBeNull();
    expect(screen.getByText(translate("zh", "help.about.logs.none"))).toBeTruthy();
  });

  it("Report a problem shows the engine's whole text, says how many lines were scrubbed, and copies it only when asked", async () => {
    const transport = new FakeTransport().on("app.report", () => report);
    let copied: string | null = null;
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText: async (text: string) => void (copied = text) } });
    const { toasts } = renderHelp(transport, "report");
    const text = (await screen.findByTestId("help-report-text")) as HTMLTextAreaElement;
    expect(text.value).toBe(report.text);
    expect(text.readOnly).toBe(true);
    expect(screen.getByTestId("help-report-scrubbed").textContent).toContain("1 line had something that looked like a key or token");
    expect(copied).toBeNull();
    fireEvent.click(screen.getByTestId("help-report-copy"));
    await screen.findByTestId("help-report-text");
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toBe(report.text);
    expect(toasts).toEqual([translate("en", "help.report.copied")]);
  });

  it("lists every shortcut group with its keys in the person's language, and arrow keys move between tabs", () => {
    const transport = new FakeTransport();
    const { tabs } = renderHelp(transport, "shortcuts", "zh");
    const body = screen.getByTestId("help-shortcuts-body");
    for (const group of SHORTCUTS) {
      expect(within(body).getByText(translate("zh", group.title))).toBeTruthy();
      for (const s of group.items) expect(within(body).getAllByText(translate("zh", s.what)).length).toBeGreaterThan(0);
    }
    // makeCtx's modifier is Ctrl.
    expect(within(body).getByText("Ctrl+Shift+O")).toBeTruthy();
    fireEvent.keyDown(screen.getByTestId("help-shortcuts"), { key: "ArrowDown" });
    expect(tabs).toEqual(["report"]);
  });
});
