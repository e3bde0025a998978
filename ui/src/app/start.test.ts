import { describe, expect, it } from "vitest";
import { inlinedProjects } from "./start";

function page(island: string | null): Document {
  const doc = document.implementation.createHTMLDocument("t");
  if (island !== null) {
    const script = doc.createElement("script");
    script.type = "application/json";
    script.id = "first-projects";
    script.textContent = island;
    doc.head.append(script);
  }
  return doc;
}

describe("inlinedProjects", () => {
  it("reads the list the shell put into index.html", () => {
    const list = { projects: [{ id: "prj_1", title: "草稿 \u003c/script>" }] };
    expect(inlinedProjects(page(JSON.stringify(list).replace(/</g, "\\u003c")))).toEqual(list);
  });

  it("has none without the island, or with one that is not the list's shape", () => {
    expect(inlinedProjects(page(null))).toBeUndefined();
    expect(inlinedProjects(page(""))).toBeUndefined();
    expect(inlinedProjects(page("{not json"))).toBeUndefined();
    expect(inlinedProjects(page('{"projects": 3}'))).toBeUndefined();
  });
});
