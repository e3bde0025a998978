import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { UpdateCheck } from "../../shared/api/generated";
import { type Lang, translate } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { UpdateNotice, UpdateSection } from "./Updates";

afterEach(() => {
  cleanup();
  window.localStorage.removeItem("inkstone.updateNoticeDismissed");
});

const available = (how: Extract<UpdateCheck, { type: "available" }>["how"]): UpdateCheck => ({
  type: "available",
  currentVersion: "0.1.0",
  version: "0.2.0",
  notes: "Faster start.\nA sample project on first run.",
  pubDate: "2026-11-20T09:00:00Z",
  how,
});

function show(node: React.ReactNode, transport: FakeTransport, lang: Lang = "en") {
  render(<WithCtx ctx={makeCtx(transport, lang)}>{node}</WithCtx>);
}

describe("the update notice", () => {
  it("asks the feed only after the first screen, shows a newer version, and stays dismissed for that version", async () => {
    const transport = new FakeTransport().on("update.check", () => available({ type: "install" }));
    let details = 0;
    show(<UpdateNotice delayMs={30} onDetails={() => (details += 1)} />, transport, "zh");
    expect(transport.callsTo("update.check")).toHaveLength(0);
    expect((await screen.findByTestId("update-notice")).textContent).toContain(translate("zh", "update.notice.title", { version: "0.2.0" }));
    expect(transport.callsTo("update.check")).toHaveLength(1);
    fireEvent.click(screen.getByTestId("update-notice-details"));
    expect(details).toBe(1);
    expect(screen.queryByTestId("update-notice")).toBeNull();
    cleanup();
    show(<UpdateNotice delayMs={0} onDetails={() => undefined} />, new FakeTransport().on("update.check", () => available({ type: "install" })));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId("update-notice")).toBeNull();
  });

  it("shows nothing when the feed is down, updates are off, or the version is current", async () => {
    const answers: (() => UpdateCheck)[] = [
      () => {
        throw apiError("TIMEOUT", "The update feed did not answer within 4 s.");
      },
      () => ({ type: "off" }),
      () => ({ type: "upToDate", currentVersion: "0.1.0", latestVersion: "0.1.0" }),
    ];
    for (const answer of answers) {
      const transport = new FakeTransport().on("update.check", answer);
      show(<UpdateNotice delayMs={0} onDetails={() => undefined} />, transport);
      await new Promise((r) => setTimeout(r, 50));
      expect(transport.callsTo("update.check")).toHaveLength(1);
      expect(screen.queryByTestId("update-notice")).toBeNull();
      expect(screen.queryByRole("alert")).toBeNull();
      cleanup();
    }
  });
});

describe("Help → About's updates", () => {
  it("shows what changed and installs an AppImage update when asked", async () => {
    const transport = new FakeTransport()
      .on("update.check", () => available({ type: "install" }))
      .on("update.install", ({ version }) => ({ version, path: "/home/ann/Inkstone.AppImage", bytes: 1, restartNeeded: true }));
    show(<UpdateSection />, transport);
    expect((await screen.findByTestId("update-notes")).textContent).toBe("Faster start.\nA sample project on first run.");
    expect(screen.getByTestId("update-available").textContent).toContain(translate("en", "update.about.available", { version: "0.2.0", current: "0.1.0" }));
    expect(transport.callsTo("update.install")).toHaveLength(0);
    fireEvent.click(screen.getByTestId("update-install"));
    expect((await screen.findByTestId("update-installed")).textContent).toContain(translate("en", "update.about.installed", { version: "0.2.0" }));
    expect(transport.callsTo("update.install")).toEqual([{ version: "0.2.0" }]);
    // Outside the desktop app there is nothing to restart: it says when the update starts.
    expect(screen.queryByTestId("update-restart")).toBeNull();
  });

  it("says a refused signature in the person's language and shows nothing installed", async () => {
    const transport = new FakeTransport()
      .on("update.check", () => available({ type: "install" }))
      .on("update.install", () => {
        throw { ...apiError("SIGNATURE_INVALID", "The update was refused: the signature does not match the file; nothing was changed."), messageId: "update.bad_signature" };
      });
    show(<UpdateSection />, transport, "zh");
    fireEvent.click(await screen.findByTestId("update-install"));
    expect(await screen.findByText(translate("zh", "problem.update.bad_signature"))).toBeTruthy();
    expect(screen.queryByTestId("update-installed")).toBeNull();
  });

  it("tells a .deb installation how to get the new version and offers no install", async () => {
    const transport = new FakeTransport().on("update.check", () =>
      available({ type: "packageManager", package: "deb", url: "https://downloads.example.com/inkstone_0.2.0_amd64.deb" }),
    );
    show(<UpdateSection />, transport);
    const how = await screen.findByTestId("update-package-manager");
    expect(how.textContent).toContain(translate("en", "update.about.deb"));
    expect(how.textContent).toContain("sudo apt install ./inkstone_0.2.0_amd64.deb");
    expect(screen.getByTestId("update-download").getAttribute("href")).toBe("https://downloads.example.com/inkstone_0.2.0_amd64.deb");
    expect(screen.queryByTestId("update-install")).toBeNull();
  });

  it("says when updates are off", async () => {
    show(<UpdateSection />, new FakeTransport().on("update.check", () => ({ type: "off" })), "zh");
    expect((await screen.findByTestId("update-off")).textContent).toBe(translate("zh", "update.about.off"));
  });
});
