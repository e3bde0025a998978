// A tool call's input in words: what a write would change and where ("Add a comment on
// “…” (paragraph 2): …", "Change the title to …"), and for the common read and check
// tools what they look at. The input as the tool receives it stays one click away,
// under "Details". Used by the permission prompt; the timeline's step detail can use it
// for the same wording.
import { useMethod } from "../../shared/api/query";
import type { Payload, Platform, Project } from "../../shared/api/generated";
import { type T, useApp } from "../../shared/context";
import type { Lang, MessageId } from "../../shared/i18n";

type Input = Record<string, unknown>;

function asRecord(value: unknown): Input {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Input) : {};
}

/** JSON pretty-printed when it is JSON, cut to a preview (as the timeline shows it). */
function pretty(text: string): string {
  let out = text;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: show it as it is.
  }
  return out.length > 4000 ? `${out.slice(0, 4000)}…` : out;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** A quote cut to a readable length. */
function clip(text: string, max = 80): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

export function platformList(t: T, lang: Lang, platforms: readonly unknown[]): string {
  return platforms
    .filter((p): p is string => typeof p === "string")
    .map((p) => t(`platform.${p as Platform}` as MessageId))
    .join(lang === "zh" ? "、" : ", ");
}

/** The paragraph (1-based, headings not counted) a quote sits in, when it occurs once. */
export function paragraphOf(source: string, quote: string): number | null {
  const at = source.indexOf(quote);
  if (at < 0 || source.indexOf(quote, at + 1) >= 0) return null;
  let n = 0;
  let offset = 0;
  for (const block of source.split(/(\n[ \t]*\n)/)) {
    const start = offset;
    offset += block.length;
    if (!block.trim() || /^\n[ \t]*\n$/.test(block)) continue;
    const heading = /^\s*#/.test(block);
    if (!heading) n++;
    if (at < offset) return heading || at < start ? null : n;
  }
  return null;
}

/** What the prompt may look up to say where a write lands. */
interface Lookups {
  project?: Project;
  brandName?: string;
  templateName?: string;
  checklist?: { summary: string; items: Extract<Payload, { type: "checklist" }>["items"] };
}

/** The input in words, or null when the tool has no wording here. */
export function describeInput(t: T, lang: Lang, tool: string, raw: unknown, found: Lookups = {}): string[] | null {
  const input = asRecord(raw);
  const platforms = Array.isArray(input.platforms) ? input.platforms : null;
  switch (tool) {
    case "create_project_comment": {
      const body = str(input.body) ?? "";
      const quote = str(input.quote);
      if (!quote) return [t("ai.input.comment.whole", { body }), t("ai.input.where.comments")];
      const n = found.project ? paragraphOf(found.project.source, quote) : null;
      return [
        n === null ? t("ai.input.comment.quoted", { quote: clip(quote), body }) : t("ai.input.comment.paragraph", { quote: clip(quote), n, body }),
        t("ai.input.where.comments"),
      ];
    }
    case "update_project_metadata": {
      const lines: string[] = [];
      const title = str(input.title);
      if (title) {
        const from = found.project?.title;
        lines.push(from && from !== title ? t("ai.input.meta.titleFrom", { from, title }) : t("ai.input.meta.title", { title }));
      }
      if (platforms) lines.push(platforms.length ? t("ai.input.meta.platforms", { list: platformList(t, lang, platforms) }) : t("ai.input.meta.platformsNone"));
      if ("brandProfileId" in input)
        lines.push(input.brandProfileId === null ? t("ai.input.meta.brandClear") : t("ai.input.meta.brand", { name: found.brandName ?? String(input.brandProfileId) }));
      if ("templateId" in input)
        lines.push(input.templateId === null ? t("ai.input.meta.templateClear") : t("ai.input.meta.template", { name: found.templateName ?? String(input.templateId) }));
      const why = str(input.summary);
      if (why) lines.push(t("ai.input.why", { text: why }));
      lines.push(t("ai.input.where.settings"));
      return lines;
    }
    case "create_checkpoint":
      return [t("ai.input.checkpoint", { label: str(input.label) ?? "" })];
    case "resolve_checklist_item": {
      const itemId = str(input.itemId) ?? "";
      const item = found.checklist?.items.find((i) => i.id === itemId);
      const lines = [
        item && found.checklist ? t("ai.input.checklist", { item: clip(item.text), summary: clip(found.checklist.summary) }) : t("ai.input.checklistItem", { item: itemId }),
      ];
      const note = str(input.note);
      if (note) lines.push(t("ai.input.note", { text: note }));
      return lines;
    }
    case "request_permission": {
      const lines = [t("ai.input.permission", { permission: str(input.permission) ?? "" })];
      const why = str(input.reason);
      if (why) lines.push(t("ai.input.why", { text: why }));
      return lines;
    }
    case "search_project_history":
    case "search_workspace":
    case "find_relevant_examples": {
      const lines: string[] = [];
      const query = str(input.query);
      if (query) lines.push(t("ai.input.search", { query }));
      if (typeof input.platform === "string") lines.push(t("ai.input.platforms", { list: platformList(t, lang, [input.platform]) }));
      return lines.length ? lines : null;
    }
    case "compile_platform_drafts":
    case "run_platform_check":
    case "run_publish_readiness_check":
      return [t("ai.input.platforms", { list: platforms?.length ? platformList(t, lang, platforms) : t("ai.input.allPlatforms") })];
    case "validate_adapted_content":
      return [t("ai.input.validate", { platform: platformList(t, lang, [input.platform]), n: [...(str(input.content) ?? "")].length })];
    case "propose_source_patch":
    case "propose_draft_patch": {
      const summary = str(input.summary) ?? "";
      const lines = [
        Array.isArray(input.edits) ? t("ai.input.edits", { summary, n: input.edits.length }) : str(input.rewrite) ? t("ai.input.rewrite", { summary }) : summary,
      ];
      if (typeof input.platform === "string") lines.push(t("ai.input.platforms", { list: platformList(t, lang, [input.platform]) }));
      return lines;
    }
    case "propose_memory":
      return [t("ai.input.memory", { text: str(input.text) ?? "" })];
    case "read_stored_result":
    case "read_tool_result":
      return str(input.ref) ? [t("ai.input.ref", { ref: String(input.ref) })] : null;
    default:
      return null;
  }
}

/** Looks up what makes a write's statement exact: the project (its title, the quoted
 * paragraph), the brand profile's and template's names, the checklist item's text. */
function useLookups(tool: string, raw: unknown, projectId: string | undefined): Lookups {
  const input = asRecord(raw);
  const brandId = str(input.brandProfileId);
  const templateId = str(input.templateId);
  const proposalId = tool === "resolve_checklist_item" ? str(input.proposalId) : null;
  const needsProject = !!projectId && (tool === "update_project_metadata" ? !!str(input.title) : tool === "create_project_comment" && !!str(input.quote));
  const metadata = tool === "update_project_metadata";
  // Cached reads; one that fails leaves the statement with what the input says.
  const project = useMethod("project.get", { projectId: projectId ?? "" }, { enabled: needsProject, refetchOnMount: false }).data;
  const brand = useMethod("brandProfile.get", { id: brandId ?? "" }, { enabled: metadata && !!brandId, refetchOnMount: false }).data;
  const template = useMethod("template.get", { id: templateId ?? "" }, { enabled: metadata && !!templateId, refetchOnMount: false }).data;
  const proposal = useMethod("proposal.get", { proposalId: proposalId ?? "" }, { enabled: !!proposalId, refetchOnMount: false }).data;
  const found: Lookups = {};
  if (needsProject && project) found.project = project;
  if (metadata && brandId && brand) found.brandName = brand.name;
  if (metadata && templateId && template) found.templateName = template.name;
  if (proposal?.payload.type === "checklist") found.checklist = { summary: proposal.summary, items: proposal.payload.items };
  return found;
}

/** A tool call's input: in words when the tool has a wording, the raw input under
 * Details; a tool without one shows its input as it is. */
export function ToolInput({ tool, input, projectId, asks = false }: { tool: string; input: unknown; projectId?: string; /** In a permission prompt: a tool without a wording says so and shows its input. */ asks?: boolean }) {
  const { t, lang } = useApp();
  const found = useLookups(tool, input, projectId);
  const worded = describeInput(t, lang, tool, input, found);
  const lines = worded ?? (asks ? [t("ai.input.unknown")] : null);
  const raw = pretty(typeof input === "string" ? input : JSON.stringify(input ?? {}));
  if (!lines) {
    return (
      <div className="tool-input" data-testid="tool-input">
        <pre className="prompt-input">{raw}</pre>
      </div>
    );
  }
  return (
    <div className="tool-input" data-testid="tool-input">
      {lines.map((line, i) => (
        <p key={i} className={i === 0 ? "tool-input-what" : "small muted"} data-testid={i === 0 ? "tool-input-what" : undefined}>
          {line}
        </p>
      ))}
      <details className="tool-input-details" data-testid="tool-input-details" open={!worded}>
        <summary className="small muted">{t("ai.input.details")}</summary>
        <pre className="prompt-input">{raw}</pre>
      </details>
    </div>
  );
}

/** A step's arguments as the model sent them (JSON text, possibly broken). */
export function ToolArgs({ tool, args, projectId }: { tool: string; args: string; projectId?: string }) {
  let input: unknown = args;
  try {
    input = JSON.parse(args);
  } catch {
    // Broken arguments are shown as they came.
  }
  return <ToolInput tool={tool} input={input} projectId={projectId} />;
}
