import { describe, expect, it } from "vitest";
import { ApiClient, type MethodName } from "./client";
import { FakeTransport } from "./fake";
import type { Project, Version } from "./generated";
import { METHODS } from "./methods";
import { queryClientFor, queryKey } from "./query";

describe("the declared method table", () => {
  it("a write names only reads as what it makes stale", () => {
    const wrong: string[] = [];
    for (const [method, nature] of Object.entries(METHODS)) {
      if (nature.kind !== "write" || nature.invalidates === "all") continue;
      for (const stale of nature.invalidates) if (METHODS[stale].kind !== "read") wrong.push(`${method} → ${stale}`);
    }
    expect(wrong).toEqual([]);
  });

  it("a write through the client makes the cached reads it names stale, and only those", async () => {
    const project = { id: "prj_1", title: "T", source: "", revision: 1, head: 0 } as Project;
    const transport = new FakeTransport()
      .on("version.list", () => ({ versions: [] }))
      .on("comment.list", () => ({ comments: [] }))
      .on("version.create", () => ({ number: 1 }) as Version)
      .on("project.get", () => project);
    const client = new ApiClient(transport);
    const qc = queryClientFor(client);
    const versions = queryKey("version.list", { projectId: "prj_1" });
    const comments = queryKey("comment.list", { projectId: "prj_1" });
    await qc.fetchQuery({ queryKey: versions, queryFn: () => client.call("version.list", { projectId: "prj_1" }) });
    await qc.fetchQuery({ queryKey: comments, queryFn: () => client.call("comment.list", { projectId: "prj_1" }) });
    // A read changes nothing.
    await client.call("project.get", { projectId: "prj_1" });
    expect(qc.getQueryState(versions)?.isInvalidated).toBe(false);
    await client.call("version.create", { projectId: "prj_1" });
    expect(qc.getQueryState(versions)?.isInvalidated).toBe(true);
    expect(qc.getQueryState(comments)?.isInvalidated).toBe(false);
  });

  it("the model profiles' listeners hear of the writes that change the list", async () => {
    const transport = new FakeTransport()
      .on("llmProfile.setDefault", () => ({}) as never)
      .on("project.update", () => ({}) as never);
    const client = new ApiClient(transport);
    const heard: MethodName[] = [];
    client.onProfilesChanged(() => heard.push("llmProfile.setDefault"));
    await client.call("project.update", { projectId: "prj_1", title: "x" });
    expect(heard).toEqual([]);
    await client.call("llmProfile.setDefault", { profile: "llm_1" });
    expect(heard).toHaveLength(1);
  });
});
