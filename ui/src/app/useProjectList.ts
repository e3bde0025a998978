// The project list the sidebar shows: its first read (main.tsx's early one, see start.ts),
// the reopen of the last open project, a project the desktop shell imported, and the
// list's own copy of a project just saved or created.
import { type Dispatch, type SetStateAction, useCallback, useEffect, useRef, useState } from "react";
import { type ApiClient, onOpenedProject } from "../shared/api/client";
import type { Project, ProjectListResult, ProjectSummary } from "../shared/api/generated";
import type { Lang } from "../shared/i18n";
import { markStartup } from "../shared/lib/startup";
import { byRecent, projectToReopen, withChanged } from "./projects";
import { sampleProject } from "./samples";

type ShowError = (e: unknown, retry?: () => void) => void;

export function useProjectList(
  client: ApiClient,
  firstProjects: Promise<ProjectListResult> | undefined,
  firstList: ProjectListResult | undefined,
  showError: ShowError,
  setSelectedId: Dispatch<SetStateAction<string | null>>,
) {
  const [projects, setProjects] = useState<ProjectSummary[] | null>(() => (firstList ? [...firstList.projects].sort(byRecent) : null));
  /** Until the first project list arrives, the last open project is still to reopen (App
   * reopened it with its first render when the list was already in). */
  const reopenPending = useRef(firstList === undefined);
  const primedProjects = useRef(firstProjects);

  const loadProjects = useCallback(
    function load(quiet = false): Promise<void> {
      const read = () => client.call("project.list", { includeArchived: true });
      const primed = primedProjects.current;
      primedProjects.current = undefined;
      return (primed ? primed.catch(read) : read()).then(
        (r) => {
          markStartup("page.list");
          const list = r.projects.sort(byRecent);
          setProjects(list);
          if (reopenPending.current) {
            reopenPending.current = false;
            const reopen = projectToReopen(list);
            // A project the person opened meanwhile stays open.
            if (reopen) setSelectedId((cur) => cur ?? reopen);
          }
        },
        (e) => {
          setProjects((p) => p ?? []);
          // A background refresh (after sync) that fails waits for the next one.
          if (!quiet) showError(e, () => void load());
        },
      );
    },
    [client, showError, setSelectedId],
  );

  useEffect(() => {
    markStartup("page.mounted");
    void loadProjects();
  }, [client, loadProjects]);

  // A Markdown file given to a later launch became a project (the desktop shell imported
  // it): the list reads itself again and the project opens.
  useEffect(
    () =>
      onOpenedProject((projectId) => {
        void loadProjects(true).then(() => {
          if (projectId) setSelectedId(projectId);
        });
      }),
    [loadProjects, setSelectedId],
  );

  const onProjectChanged = useCallback((p: Project) => setProjects((list) => withChanged(list, p)), []);

  return { projects, loadProjects, onProjectChanged };
}

/** First run: the sample project in the UI's language, created (once at a time) and
 * handed to `onCreated`, which opens it. */
export function useSampleProject(client: ApiClient, lang: Lang, onCreated: (p: Project) => void, showError: ShowError) {
  const sampleBusy = useRef(false);
  return useCallback(() => {
    if (sampleBusy.current) return;
    sampleBusy.current = true;
    client
      .call("project.create", sampleProject(lang))
      .then(onCreated, (e) => showError(e))
      .finally(() => {
        sampleBusy.current = false;
      });
  }, [client, lang, onCreated, showError]);
}
