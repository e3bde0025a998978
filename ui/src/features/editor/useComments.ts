// The open project's comments for the comments panel: listed once when the project
// opens, added at the editor's selection, resolved and deleted; their anchors placed in
// the editor's live text, and the ones whose quoted text was deleted marked as lost.
import { useCallback, useMemo } from "react";
import type { Comment, Project } from "../../shared/api/generated";
import { queryKey, useMethod, useQueryCache, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { locateAnchor } from "../../shared/lib/anchors";
import type { AnchorMark, EditorHandle } from "./MarkdownEditor";

export function useComments({
  projectId,
  project,
  saved,
  editor,
  flush,
}: {
  projectId: string;
  project: Project | null;
  saved: { revision: number; source: string } | null;
  /** The editor as mounted now (a stable function). */
  editor: () => EditorHandle | null;
  flush: () => Promise<void>;
}) {
  const { t, toast, showError } = useApp();
  // Read when the project opens; each write below makes it stale (methods.ts) and also
  // shows its answer at once.
  const list = useMethod("comment.list", { projectId });
  const failed = list.isError;
  const comments = useMemo(() => list.data?.comments ?? (failed ? [] : null), [list.data, failed]);
  const cache = useQueryCache();
  const put = useCallback(
    (change: (list: Comment[]) => Comment[]) =>
      cache.setQueryData(queryKey("comment.list", { projectId }), (old: { comments: Comment[] } | undefined) => ({ comments: change(old?.comments ?? []) })),
    [cache, projectId],
  );
  const { write } = useWrites();

  const add = useCallback(
    async (body: string) => {
      try {
        await flush();
      } catch (e) {
        showError(e);
        return false;
      }
      const sel = editor()?.getSelection() ?? { from: 0, to: 0 };
      const params = sel.to > sel.from ? { projectId, body, anchor: { from: sel.from, to: sel.to } } : { projectId, body };
      const c = await write("comment.add", params);
      if (!c) return false;
      put((list) => [...list.filter((x) => x.id !== c.id), c]);
      toast(t("comments.added"));
      return true;
    },
    [write, put, flush, projectId, showError, t, toast, editor],
  );

  const resolve = useCallback(
    async (c: Comment, resolved: boolean) => {
      const nc = await write("comment.resolve", { projectId, commentId: c.id, resolved });
      if (nc) put((list) => list.map((x) => (x.id === nc.id ? nc : x)));
    },
    [write, put, projectId],
  );
  const remove = useCallback(
    async (c: Comment) => {
      if (await write("comment.delete", { projectId, commentId: c.id })) put((list) => list.filter((x) => x.id !== c.id));
    },
    [write, put, projectId],
  );
  const jump = useCallback(
    (c: Comment) => {
      const mapped = editor()?.anchors().find((a) => a.id === c.id);
      const r = mapped ?? c.anchor;
      if (r) editor()?.select(r.from, r.to);
    },
    [editor],
  );

  // Anchors are placed in the editor's live text when the comments change (reading the
  // editor during render, on purpose); edits in between are mapped by the editor itself.
  const anchors = useMemo<AnchorMark[]>(() => {
    const text = editor()?.getText() ?? project?.source ?? "";
    const out: AnchorMark[] = [];
    for (const c of comments ?? []) {
      if (c.resolved || !c.anchor) continue;
      const r = locateAnchor(text, c.anchor, c.quote);
      if (r) out.push({ id: c.id, ...r });
    }
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- not on each save of the source: see above
  }, [comments, project?.id]);

  // Open comments whose quoted text was deleted since: the panel says so rather than
  // offering a jump to nowhere. Checked against the source as saved, once per save.
  const savedText = saved && project && saved.revision >= project.revision ? saved.source : (project?.source ?? "");
  const lost = useMemo<ReadonlySet<string>>(() => {
    const out = new Set<string>();
    for (const c of comments ?? []) {
      if (!c.resolved && c.anchor && c.quote && !locateAnchor(savedText, c.anchor, c.quote)) out.add(c.id);
    }
    return out;
  }, [comments, savedText]);

  return { comments, anchors, lost, add, resolve, remove, jump };
}
