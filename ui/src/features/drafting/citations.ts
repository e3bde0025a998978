// An answer's citations, outside React: where a source points, and the answer as HTML
// with each citation mark made a marker (the first mention of a source a button).
import type { Answer, Source } from "../../shared/api/generated";
import { renderAssistantMarkdown } from "./Markdown";

/** Where a citation or source points: a project, and in it a version, a comment or a span. */
export interface SourceTarget {
  projectId: string;
  span: { from: number; to: number } | null;
  version: number | null;
  commentId: string | null;
}

const SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹";
/** Citation marks as the engine reads them: [1], [ 1 ], [1, 2], 【2】, ¹, ¹². */
const CITATION = /\[\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*\]|【\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*】|([⁰¹²³⁴⁵⁶⁷⁸⁹]+)/g;

function escapeAttr(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * The answer as HTML (markdown-it, raw HTML off) with every citation mark made a
 * marker: the first mention of a resolved source a button that opens it, later
 * mentions plain marks, and a number that names no source marked as failed.
 * Only text outside tags is touched.
 */
export function answerHtml(answer: Answer, labels: { open: (n: number, title: string) => string; failed: (n: number) => string }): string {
  const html = renderAssistantMarkdown(answer.answer);
  const resolved = new Map(answer.citations.map((c) => [c.n, c]));
  const titles = new Map(answer.sources.map((s) => [s.n, s.projectTitle]));
  const linked = new Set<number>();
  const mark = (n: number): string => {
    if (!resolved.has(n)) {
      return `<span class="cite cite-failed" data-testid="cite-failed" data-cite="${n}" title="${escapeAttr(labels.failed(n))}">[${n}]</span>`;
    }
    if (linked.has(n)) return `<span class="cite" data-cite-again="${n}">[${n}]</span>`;
    linked.add(n);
    const label = escapeAttr(labels.open(n, titles.get(n) ?? ""));
    return `<button type="button" class="cite" data-testid="cite" data-cite="${n}" aria-label="${label}" title="${label}">[${n}]</button>`;
  };
  // Split into tags and text; rewrite only the text.
  return html
    .split(/(<[^>]*>)/)
    .map((part) =>
      part.startsWith("<")
        ? part
        : part.replace(CITATION, (_m, square?: string, corner?: string, sup?: string) => {
            if (sup) return mark(Number([...sup].map((c) => SUPERSCRIPTS.indexOf(c)).join("")));
            const list = (square ?? corner ?? "").split(/\s*[,，、]\s*/).map(Number);
            return list.map(mark).join("");
          }),
    )
    .join("");
}

/** The place of a source in its project, for a citation's target. */
export function targetOf(source: { projectId: string; kind: Source["kind"]; version: number | null; commentId: string | null }, span: { from: number; to: number }): SourceTarget {
  return {
    projectId: source.projectId,
    // A comment's span is in its own body, not in the project's text: open the comment.
    span: source.kind === "comment" ? null : span,
    version: source.kind === "version" ? source.version : null,
    commentId: source.kind === "comment" ? source.commentId : null,
  };
}
