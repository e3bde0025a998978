import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "./App";
import { ApiClient } from "./api/client";
import { apiError, FakeTransport } from "./api/fake";
import type { Project, ProjectSummary } from "./api/generated";
import type { Lang } from "./i18n";

const NOW = Date.parse("2026-11-22T12:00:00Z");

function proj(id: string, title: string, updatedAt: string, head = 1): Project {
  return {
    id,
    title,
    source: "",
    revision: head,
    head,
    platforms: [],
    brandProfileId: null,
    templateId: null,
    archived: false,
    createdAt: updatedAt,
    updatedAt,
  };
}

function summary(p: Project): ProjectSummary {
  const { source, ...rest } = p;
  return { ...rest, excerpt: source.slice(0, 120), nChars: [...source].length };
}

/** A fake backend holding projects in memory. */
function backend(initial: Project[] = []) {
  const projects = [...initial];
  let n = 0;
  const transport = new FakeTransport()
    .on("project.list", () => ({ projects: projects.map(summary) }))
    .on("project.create", ({ title = "" }) => {
      if (!title.trim()) throw apiError("VALIDATION", "title must not be empty");
      n += 1;
      const p = proj(`new-${n}`, title, new Date(NOW).toISOString());
      projects.push(p);
      return p;
    });
  return { transport, projects };
}

function renderApp(transport: FakeTransport, lang: Lang = "en") {
  return render(<App client={new ApiClient(transport)} lang={lang} now={() => NOW} platform="Linux x86_64" />);
}

const items = () => screen.queryAllByTestId("project-item");
const input = () => screen.getByTestId("new-project-title") as HTMLInputElement;

afterEach(() => cleanup());

describe("project list page", () => {
  it("lists projects most recent first with updated time and head version", async () => {
    const { transport } = backend([
      proj("a", "Old essay", "2026-11-01T08:00:00Z", 3),
      proj("b", "Launch post", "2026-11-22T11:57:00Z", 12),
      proj("c", "Newsletter", "2026-11-22T09:00:00Z", 0),
    ]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(3));
    expect(items().map((li) => li.querySelector(".project-title")?.textContent)).toEqual([
      "Launch post",
      "Newsletter",
      "Old essay",
    ]);
    expect(items()[0].textContent).toContain("3 minutes ago");
    expect(items()[0].textContent).toContain("v12");
    expect(items()[1].textContent).toContain("no versions yet");
    expect(items()[2].querySelector("time")?.getAttribute("datetime")).toBe("2026-11-01T08:00:00Z");
    expect(screen.queryByTestId("empty-state")).toBeNull();
    expect(transport.callsTo("project.list")).toEqual([{}]);
  });

  it("shows a teaching empty state", async () => {
    renderApp(backend().transport);
    const empty = await screen.findByTestId("empty-state");
    expect(empty.textContent).toContain("press Enter");
    expect(empty.textContent).toContain("Ctrl+N");
    expect(screen.getByTestId("project-list")).toBeTruthy();
  });

  it("creates a project with Enter and lists it", async () => {
    const { transport } = backend([proj("a", "Old essay", "2026-11-01T08:00:00Z")]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.change(input(), { target: { value: "  春季上新  " } });
    fireEvent.keyDown(input(), { key: "Enter", code: "Enter", keyCode: 13 });
    await waitFor(() => expect(items()).toHaveLength(2));
    expect(items()[0].textContent).toContain("春季上新");
    expect(transport.callsTo("project.create")).toEqual([{ title: "春季上新" }]);
    expect(input().value).toBe("");
    expect(document.activeElement).toBe(input());
  });

  it("creates with the button", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    const button = screen.getByTestId("create-project") as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    fireEvent.change(input(), { target: { value: "Launch post" } });
    expect(button.disabled).toBe(false);
    fireEvent.click(button);
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(items()[0].textContent).toContain("Launch post");
    expect(screen.queryByTestId("empty-state")).toBeNull();
  });

  it("does not create while an input method is composing", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    fireEvent.change(input(), { target: { value: "chun" } });
    fireEvent.keyDown(input(), { key: "Enter", isComposing: true });
    fireEvent.keyDown(input(), { key: "Enter", keyCode: 229 });
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(transport.callsTo("project.create")).toEqual([]);
    fireEvent.change(input(), { target: { value: "春" } });
    fireEvent.keyDown(input(), { key: "Enter", keyCode: 13 });
    await waitFor(() => expect(transport.callsTo("project.create")).toEqual([{ title: "春" }]));
  });

  it("ignores Enter on an empty title", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    fireEvent.change(input(), { target: { value: "   " } });
    fireEvent.keyDown(input(), { key: "Enter", keyCode: 13 });
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(transport.callsTo("project.create")).toEqual([]);
  });

  it("focuses the title box on Ctrl+N and Cmd+N", async () => {
    renderApp(backend().transport);
    await screen.findByTestId("empty-state");
    (document.activeElement as HTMLElement | null)?.blur();
    expect(document.activeElement).not.toBe(input());
    const e = new KeyboardEvent("keydown", { key: "n", ctrlKey: true, bubbles: true, cancelable: true });
    window.dispatchEvent(e);
    expect(document.activeElement).toBe(input());
    expect(e.defaultPrevented).toBe(true);
    input().blur();
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "N", metaKey: true, bubbles: true }));
    expect(document.activeElement).toBe(input());
  });

  it("shows a create error in English from its code, message and hints", async () => {
    const transport = new FakeTransport()
      .on("project.list", () => ({ projects: [] }))
      .on("project.create", () => {
        throw apiError("STORE_LOCKED", "store is locked by pid 42", [
          { id: "store.unknown_hint", message: "Close the other Inkstone window." },
        ]);
      });
    renderApp(transport);
    await screen.findByTestId("empty-state");
    fireEvent.change(input(), { target: { value: "x" } });
    fireEvent.keyDown(input(), { key: "Enter", keyCode: 13 });
    const banner = await screen.findByTestId("error-banner");
    expect(banner.getAttribute("data-code")).toBe("STORE_LOCKED");
    expect(banner.textContent).toContain("in use by another Inkstone window");
    expect(banner.textContent).toContain("store is locked by pid 42");
    expect(banner.textContent).toContain("Close the other Inkstone window.");
    expect(input().value).toBe("x");
    fireEvent.click(screen.getByText("Dismiss"));
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("shows errors in Chinese, translating known hints and falling back to the English message", async () => {
    const transport = new FakeTransport().on("project.list", () => {
      throw apiError("OFFLINE", "Could not reach the Inkstone backend.", [
        { id: "offline.check_running", message: "Check that Inkstone is still running, then try again." },
      ]);
    });
    renderApp(transport, "zh");
    const banner = await screen.findByTestId("error-banner");
    expect(banner.textContent).toContain("无法连接 Inkstone 后端");
    expect(banner.textContent).toContain("请确认 Inkstone 仍在运行");
    expect(banner.textContent).not.toContain("Could not reach");

    cleanup();
    const t2 = new FakeTransport().on("project.list", () => {
      throw apiError("SOMETHING_NEW" as never, "A brand-new failure.", []);
    });
    renderApp(t2, "zh");
    expect((await screen.findByTestId("error-banner")).textContent).toContain("A brand-new failure.");
  });

  it("retries a failed list load", async () => {
    let fail = true;
    const transport = new FakeTransport().on("project.list", () => {
      if (fail) throw apiError("INTERNAL", "boom");
      return { projects: [summary(proj("a", "Recovered", "2026-11-22T11:00:00Z"))] };
    });
    renderApp(transport);
    await screen.findByTestId("error-banner");
    fail = false;
    fireEvent.click(screen.getByText("Try again"));
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("renders Chinese copy", async () => {
    renderApp(backend([proj("a", "稿件", "2026-11-22T11:00:00Z", 12)]).transport, "zh");
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(items()[0].textContent).toContain("第 12 版");
    expect(screen.getByText("项目")).toBeTruthy();
    expect(input().placeholder).toBe("新项目的标题");
  });
});
