import { afterEach, describe, expect, it } from "vitest";
import { FIRST_FRAME_TEXT, firstFrame, type FirstFrameInput, showFirstFrame } from "./firstFrame";
import type { ProjectSummary } from "../shared/api/generated";
import type { Lang } from "../shared/i18n";
import { en } from "../shared/i18n/en";
import { zh } from "../shared/i18n/zh";
import { NOW } from "../shared/testing/utils";

function summary(id: string, title: string, updatedAt: string, over: Partial<ProjectSummary> = {}): ProjectSummary {
  return { id, title, revision: 1, head: 0, platforms: [], brandProfileId: null, templateId: null, archived: false, excerpt: "", nChars: 0, createdAt: updatedAt, updatedAt, ...over };
}

function frame(projects: ProjectSummary[], over: Partial<FirstFrameInput> = {}): HTMLElement {
  return firstFrame({ lang: "en", list: { projects }, mod: "Ctrl", now: NOW, lastProject: null, panelTab: null, ...over });
}

const texts = (root: Element, selector: string) => [...root.querySelectorAll(selector)].map((e) => e.textContent);

afterEach(() => {
  document.body.innerHTML = "";
});

describe("the entry's first frame", () => {
  it("words its text as the catalogs do, in both languages", () => {
    const catalogs: Record<Lang, Record<string, string>> = { en, zh };
    for (const lang of ["en", "zh"] as const) {
      for (const [id, text] of Object.entries(FIRST_FRAME_TEXT[lang])) expect(text, `${lang} ${id}`).toBe(catalogs[lang][id]);
    }
  });

  it("shows the list most recent first, without the archived, with each one's time and version", () => {
    const root = frame([
      summary("a", "Older", "2026-11-20T12:00:00Z", { head: 3 }),
      summary("b", "Newer", "2026-11-22T11:57:00Z"),
      summary("c", "Archived", "2026-11-22T11:59:00Z", { archived: true }),
    ]);
    expect(texts(root, ".project-title")).toEqual(["Newer", "Older"]);
    expect(texts(root, ".project-meta")).toEqual(["3 minutes ago · no versions yet", "2 days ago · v3"]);
    expect(root.querySelector(".empty")).toBeNull();
    expect(root.querySelector("main.welcome-wrap h2")?.textContent).toBe(en["welcome.title"]);
    expect(root.querySelector("aside")?.getAttribute("aria-label")).toBe("Projects");
  });

  it("in Chinese", () => {
    const root = frame([summary("a", "发布文案", "2026-11-22T11:57:00Z", { head: 2 })], { lang: "zh" });
    expect(texts(root, ".project-title")).toEqual(["发布文案"]);
    expect(texts(root, ".project-meta")).toEqual(["3分钟前 · 第 2 版"]);
    expect(root.querySelector("h1")?.textContent).toBe("项目");
    expect(root.querySelector("main h2")?.textContent).toBe(zh["welcome.title"]);
  });

  it("shows a title as the text it is, never as markup", () => {
    const title = `<img src=x onerror="window.pwned=1"> & <b>bold</b>`;
    const root = frame([summary("a", title, "2026-11-22T11:57:00Z")]);
    expect(root.querySelector(".project-title")?.textContent).toBe(title);
    expect(root.querySelector("img, b")).toBeNull();
  });

  it("with no projects: the first-run offer, in the UI's language", () => {
    for (const [lang, catalog] of [
      ["en", en],
      ["zh", zh],
    ] as const) {
      const root = frame([], { lang });
      expect(root.querySelectorAll(".project-list li")).toHaveLength(0);
      expect(root.querySelector(".empty-title")?.textContent).toBe(catalog["empty.title"]);
      expect(texts(root, ".empty button")).toEqual([catalog["empty.sample"], catalog["empty.import"], catalog["empty.new"]]);
      expect(root.querySelector(".empty")?.textContent).toContain(catalog["empty.shortcut"].replaceAll("{mod}", "Ctrl"));
    }
  });

  it("shows the project that is reopened as current, and the centre as opening it", () => {
    const root = frame([summary("a", "A", "2026-11-22T11:57:00Z"), summary("b", "B", "2026-11-22T11:58:00Z")], { lastProject: "a", panelTab: "ai" });
    expect(texts(root, '[aria-current="true"] .project-title')).toEqual(["A"]);
    expect(root.className).toContain("has-project");
    expect(root.className).toContain("wide-panel");
    expect(root.querySelector("main")?.textContent).toBe(en["project.opening"]);
  });
});

describe("input while the first frame shows", () => {
  it("a click on a project is held, not acted on, and given to the same project in the shell once it has taken over", () => {
    const root = document.createElement("div");
    document.body.append(root);
    const seen: string[] = [];
    document.addEventListener("click", () => seen.push("document"));
    const takeOver = showFirstFrame(root, frame([summary("a", "A", "2026-11-22T11:57:00Z"), summary("b", "B", "2026-11-22T11:58:00Z")]));
    (root.querySelectorAll<HTMLButtonElement>("button.project")[1] as HTMLButtonElement).click();
    expect(seen).toEqual([]);

    // The shell replaces the frame (as React's commit does): the same list, its own buttons.
    root.innerHTML = `<ul><li data-testid="project-item"><button class="project">B</button></li><li data-testid="project-item"><button class="project">A</button></li></ul>`;
    const clicked: string[] = [];
    root.addEventListener("click", (e) => clicked.push((e.target as Element).textContent ?? ""));
    takeOver();
    expect(clicked).toEqual(["A"]);
  });

  it("a button's click goes to the shell's button, and keys pressed meanwhile reach the shell in order", () => {
    const root = document.createElement("div");
    document.body.append(root);
    const takeOver = showFirstFrame(root, frame([]));
    const keys: string[] = [];
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "k", ctrlKey: true, bubbles: true }));
    window.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    (root.querySelector<HTMLButtonElement>(".empty button.primary") as HTMLButtonElement).click();

    root.innerHTML = `<button data-testid="first-run-sample">sample</button>`;
    const clicked: string[] = [];
    root.addEventListener("click", (e) => clicked.push((e.target as Element).getAttribute("data-testid") ?? ""));
    const onKey = (e: KeyboardEvent) => keys.push(`${e.ctrlKey ? "Ctrl+" : ""}${e.key}`);
    window.addEventListener("keydown", onKey, true);
    takeOver();
    window.removeEventListener("keydown", onKey, true);
    expect(keys).toEqual(["Ctrl+k", "Escape"]);
    expect(clicked).toEqual(["first-run-sample"]);
  });
});
