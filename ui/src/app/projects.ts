// The project list's plain rules, outside React: a saved project as the list shows it,
// the list's order, and which project to reopen at start.
import type { Project, ProjectSummary } from "../shared/api/generated";
import { lastProject } from "../shared/lib/prefs";

/** A project as the list shows it (the first 120 characters, the length in characters). */
export function summaryOf(p: Project): ProjectSummary {
  const { source, ...rest } = p;
  return { ...rest, excerpt: source.slice(0, 120), nChars: [...source].length };
}

/** Most recently changed first. */
export const byRecent = (a: ProjectSummary, b: ProjectSummary) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt);

/** The list after `p` was saved: its summary first among the others, most recent first. */
export function withChanged(list: readonly ProjectSummary[] | null, p: Project): ProjectSummary[] {
  const rest = (list ?? []).filter((x) => x.id !== p.id);
  return [summaryOf(p), ...rest].sort(byRecent);
}

/** The project to reopen at start: the last open one, if it is still listed and not
 * archived; otherwise none (the normal empty state, no error). */
export function projectToReopen(projects: readonly ProjectSummary[], saved: string | null = lastProject()): string | null {
  if (!saved) return null;
  const p = projects.find((x) => x.id === saved);
  return p && !p.archived ? p.id : null;
}
