import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { AllowRuleView, BrandProfile, ContentTemplate, ExportResult } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { Settings, type SettingsProps, type SettingsSection } from "./Settings";

afterEach(() => cleanup());

const brand: BrandProfile = {
  id: "brd_1",
  name: "墨石",
  voice: "克制",
  targetAudience: "",
  bannedWords: ["最佳"],
  cta: "",
  linkStrategy: "",
  defaultTags: [],
  industry: "",
  createdAt: "",
  updatedAt: "",
};

const template: ContentTemplate = {
  id: "tpl_1",
  name: "新品发布",
  titleTemplate: "{产品} 上新",
  sourceTemplate: "# 标题\n",
  defaultPlatforms: ["wechat", "x"],
  tags: ["上新"],
  createdAt: "",
  updatedAt: "",
};

function renderSettings(transport: FakeTransport, section: SettingsSection, over: Partial<SettingsProps> = {}, lang: Lang = "en") {
  const toasts: string[] = [];
  let changed = 0;
  const props: SettingsProps = {
    section,
    onSection: () => undefined,
    lang: "en",
    theme: "system",
    onLang: () => undefined,
    onTheme: () => undefined,
    brands: [brand],
    templates: [],
    onLibraryChanged: () => changed++,
    onDataChanged: () => undefined,
    onNewFromTemplate: () => undefined,
    onClose: () => undefined,
    ...over,
  };
  render(
    <WithCtx ctx={makeCtx(transport, lang, { toast: (t) => toasts.push(t) })}>
      <Settings {...props} />
    </WithCtx>,
  );
  return { toasts, changed: () => changed };
}

describe("Settings", () => {
  it("words the brand form's call to action and the app's data format in the person's language", async () => {
    const transport = new FakeTransport()
      .on("workspace.get", () => ({ id: "ws_1", displayName: "墨石", members: [] }) as never)
      .on("app.info", () => ({ version: "0.1.0", dataDir: "/data/ink", os: "Linux", schemaVersion: 2, methods: [], streamingMethods: [] }));
    renderSettings(transport, "general", {}, "zh");
    await waitFor(() => expect(screen.getByTestId("app-about").textContent).toBe("Inkstone 0.1.0 · 数据格式第 2 版"));
    expect(document.body.textContent).not.toContain("schema");
    cleanup();
    renderSettings(new FakeTransport(), "brands", {}, "zh");
    fireEvent.click(screen.getByTestId("brand-new"));
    const labels = Array.from(screen.getByTestId("brand-form").querySelectorAll(".field > span")).map((s) => s.textContent);
    expect(labels).toContain("行动号召");
    expect(labels).not.toContain("CTA");
  });

  it("creates a brand profile and deletes one only after confirming", async () => {
    const transport = new FakeTransport()
      .on("brandProfile.create", (p) => ({ ...brand, id: "brd_2", ...p }) as BrandProfile)
      .on("brandProfile.delete", ({ id }) => ({ id, deleted: true }));
    const r = renderSettings(transport, "brands");
    fireEvent.click(screen.getByTestId("brand-new"));
    fireEvent.change(screen.getByTestId("brand-name"), { target: { value: "青山" } });
    fireEvent.click(screen.getByTestId("brand-save"));
    await waitFor(() => expect(r.changed()).toBe(1));
    expect(transport.callsTo("brandProfile.create")).toEqual([
      { name: "青山", voice: "", targetAudience: "", bannedWords: [], cta: "" },
    ]);
    const row = within(screen.getByTestId("brand-list")).getByText("墨石").closest("li")!;
    fireEvent.click(within(row).getByText("Delete"));
    expect(transport.callsTo("brandProfile.delete")).toHaveLength(0);
    expect(row.textContent).toContain("Delete “墨石”?");
    fireEvent.click(within(row).getAllByText("Delete").at(-1)!);
    await waitFor(() => expect(transport.callsTo("brandProfile.delete")).toEqual([{ id: "brd_1" }]));
  });

  it("edits a brand profile, keeping the fields the form does not show", async () => {
    const stored = { ...brand, linkStrategy: "end", defaultTags: ["品牌"], industry: "茶" };
    const transport = new FakeTransport().on("brandProfile.update", ({ id, profile }) => ({ ...stored, id, ...profile }));
    const r = renderSettings(transport, "brands", { brands: [stored] });
    const row = within(screen.getByTestId("brand-list")).getByText("墨石").closest("li")!;
    fireEvent.click(within(row).getByText("Edit"));
    expect((screen.getByTestId("brand-name") as HTMLInputElement).value).toBe("墨石");
    const form = screen.getByTestId("brand-form");
    fireEvent.change(within(form).getByDisplayValue("最佳"), { target: { value: "最佳，第一, 顶级" } });
    fireEvent.click(screen.getByTestId("brand-save"));
    await waitFor(() => expect(r.changed()).toBe(1));
    expect(transport.callsTo("brandProfile.update")).toEqual([
      {
        id: "brd_1",
        profile: {
          name: "墨石",
          voice: "克制",
          targetAudience: "",
          bannedWords: ["最佳", "第一", "顶级"],
          cta: "",
          linkStrategy: "end",
          defaultTags: ["品牌"],
          industry: "茶",
        },
      },
    ]);
    expect(r.toasts).toEqual(["Saved"]);
  });

  it("creates, edits and uses templates", async () => {
    const used: string[] = [];
    const transport = new FakeTransport()
      .on("template.create", (p) => ({ ...template, id: "tpl_2", ...p }) as ContentTemplate)
      .on("template.update", ({ id, template: input }) => ({ ...template, id, ...input }) as ContentTemplate);
    const r = renderSettings(transport, "templates", { templates: [template], onNewFromTemplate: (id) => used.push(id) });
    const row = () => within(screen.getByTestId("template-list")).getByText("新品发布").closest("li")!;
    expect(row().textContent).toContain("{产品} 上新");
    fireEvent.click(within(row()).getByText("New project"));
    expect(used).toEqual(["tpl_1"]);

    fireEvent.click(screen.getByTestId("template-new"));
    expect(screen.getByTestId("template-save").hasAttribute("disabled")).toBe(true);
    fireEvent.change(screen.getByTestId("template-name"), { target: { value: " 周报 " } });
    fireEvent.change(screen.getByTestId("template-title"), { target: { value: "第 {n} 周" } });
    fireEvent.change(screen.getByTestId("template-source"), { target: { value: "## 本周\n" } });
    fireEvent.click(screen.getByTestId("template-save"));
    await waitFor(() => expect(r.changed()).toBe(1));
    expect(transport.callsTo("template.create")).toEqual([{ name: "周报", titleTemplate: "第 {n} 周", sourceTemplate: "## 本周\n" }]);

    fireEvent.click(within(row()).getByText("Edit"));
    expect((screen.getByTestId("template-source") as HTMLTextAreaElement).value).toBe("# 标题\n");
    fireEvent.change(screen.getByTestId("template-title"), { target: { value: "{产品} 首发" } });
    fireEvent.click(screen.getByTestId("template-save"));
    await waitFor(() => expect(r.changed()).toBe(2));
    expect(transport.callsTo("template.update")).toEqual([
      {
        id: "tpl_1",
        template: {
          name: "新品发布",
          titleTemplate: "{产品} 首发",
          sourceTemplate: "# 标题\n",
          defaultPlatforms: ["wechat", "x"],
          tags: ["上新"],
        },
      },
    ]);
  });

  it("has AI models and Usage sections", async () => {
    const transport = new FakeTransport()
      .on("llmProfile.list", () => ({ profiles: [], envKeyActive: true }))
      .on("llmProfile.presets", () => ({ presets: [] }))
      .on("llmProfile.detectLocal", () => ({ found: [] }));
    const sections: string[] = [];
    renderSettings(transport, "models", { onSection: (s) => sections.push(s) });
    expect(screen.getByTestId("settings-models").getAttribute("aria-selected")).toBe("true");
    await waitFor(() => expect(screen.getByTestId("models-empty")).toBeTruthy());
    expect(screen.getByTestId("env-key-active").textContent).toContain("INKSTONE_LLM_API_KEY");
    fireEvent.click(screen.getByTestId("settings-usage"));
    expect(sections).toEqual(["usage"]);
    expect(screen.getAllByRole("tab").map((b) => b.textContent)).toEqual([
      "General",
      "Workspace",
      "Accounts",
      "Performance",
      "AI models",
      "Usage",
      "AI activity",
      "Memory",
      "Permissions",
      "Data & backups",
      "Brand profiles",
      "Templates",
    ]);
  });

  it("Performance switches performance history in AI context, and is read-only when the workspace policy turns it off", async () => {
    let enabled = true;
    const sets: boolean[] = [];
    const transport = new FakeTransport()
      .on("perf.contextSetting", () => ({ enabled, setting: enabled, decidedByPolicy: false }))
      .on("perf.setContextSetting", (p) => {
        sets.push(p.enabled);
        enabled = p.enabled;
        return { enabled, setting: enabled, decidedByPolicy: false };
      });
    renderSettings(transport, "performance");
    const toggle = (await screen.findByTestId("perf-context-toggle")) as HTMLInputElement;
    await waitFor(() => expect(toggle.checked).toBe(true));
    expect(screen.getByTestId("perf-context").textContent).toContain("Use performance history in AI context");
    fireEvent.click(toggle);
    await waitFor(() => expect(sets).toEqual([false]));
    await waitFor(() => expect((screen.getByTestId("perf-context-toggle") as HTMLInputElement).checked).toBe(false));
    cleanup();

    const byPolicy = new FakeTransport().on("perf.contextSetting", () => ({
      enabled: false,
      setting: true,
      decidedByPolicy: true,
      policyWorkspace: "团队",
      policySetBy: "Olga",
    }));
    renderSettings(byPolicy, "performance", {}, "zh");
    await waitFor(() => expect(screen.getByTestId("perf-context-policy").textContent).toContain("团队"));
    const locked = screen.getByTestId("perf-context-toggle") as HTMLInputElement;
    expect(locked.disabled).toBe(true);
    expect(locked.checked).toBe(false);
    expect(screen.getByTestId("perf-context").textContent).toContain("在 AI 上下文中使用表现数据");
  });

  it("Permissions lists each rule with its scope and use, narrows it and removes it", async () => {
    const rule: AllowRuleView = {
      id: "rul_1",
      workspaceId: "wsp_1",
      tool: "create_checkpoint",
      scope: "project",
      pattern: {},
      projectId: "prj_1",
      projectTitle: "春晓",
      ownerId: "ses_1",
      requestId: "apr_1",
      createdBy: "me",
      createdAt: "2026-01-01T00:00:00Z",
      allowedCount: 3,
      lastAllowedAt: "2026-01-02T00:00:00Z",
    };
    let rules = [rule];
    const written: unknown[] = [];
    const transport = new FakeTransport()
      .on("allowRule.list", () => ({ rules }))
      .on("allowRule.narrow", (p) => {
        written.push(p);
        rules = [{ ...rule, scope: p.scope ?? rule.scope }];
        return rules[0]!;
      })
      .on("allowRule.remove", (p) => {
        written.push(p);
        rules = [];
        return { id: p.ruleId, deleted: true };
      });
    renderSettings(transport, "permissions", {}, "zh");
    const row = await screen.findByTestId("permission-rule");
    expect(row.textContent).toContain("本项目 · 位于 春晓");
    expect(row.textContent).toContain("任意输入");
    expect(within(row).getByTestId("permission-used").textContent).toMatch(/^3 次，最近一次 /);
    fireEvent.change(within(row).getByTestId("permission-narrow"), { target: { value: "session" } });
    await waitFor(() => expect(screen.getByTestId("permission-rule").getAttribute("data-scope")).toBe("session"));
    expect(screen.queryByTestId("permission-narrow")).toBeNull();
    fireEvent.click(screen.getByTestId("permission-remove"));
    await screen.findByTestId("permissions-none");
    expect(written).toEqual([
      { ruleId: "rul_1", scope: "session" },
      { ruleId: "rul_1" },
    ]);
  });

  it("exports with progress from the stream", async () => {
    let finish: (r: ExportResult) => void = () => undefined;
    const transport = new FakeTransport()
      .on("backup.list", () => ({ backups: [], folder: "/data/backups" }))
      .on("export.run", ({ path }, onProgress) => {
        onProgress({ phase: "export.projects", done: 2, total: 5 });
        return new Promise<ExportResult>((resolve) => {
          finish = resolve;
          void path;
        });
      });
    const r = renderSettings(transport, "data");
    await waitFor(() => expect(screen.getByText(/No backups yet/)).toBeTruthy());
    fireEvent.change(screen.getByTestId("export-path"), { target: { value: "/tmp/out" } });
    fireEvent.click(screen.getByTestId("export-run"));
    await waitFor(() => expect(screen.getByTestId("progress").textContent).toContain("Exporting… projects 2/5"));
    finish({ path: "/tmp/out", manifest: {} as ExportResult["manifest"] });
    await waitFor(() => expect(r.toasts).toEqual(["Exported to /tmp/out"]));
    expect(screen.queryByTestId("progress")).toBeNull();
  });
});
