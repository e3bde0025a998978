// The review's reads outside a render. A proposal is read fresh each time (its
// staleness moves with edits that no declared write marks), through the query cache so
// other readers see the same answer; writes go through useCalls (query.ts).
import type { ApiClient } from "../../shared/api/client";
import type { PlatformDraft, ProposalView } from "../../shared/api/generated";
import { readFresh } from "../../shared/api/query";

/** The proposal as it stands, and for a draft target the draft (its status decides
 * whether accepting needs the person's confirmation). */
export async function readProposal(client: ApiClient, proposalId: string): Promise<{ view: ProposalView; draft: PlatformDraft | null }> {
  const view = await readFresh(client, "proposal.get", { proposalId });
  if (view.target.type !== "draft") return { view, draft: null };
  const draft = await readFresh(client, "platformDraft.get", { projectId: view.projectId, platform: view.target.platform });
  return { view, draft };
}

/** The revision a draft target is at now: the base an accept expects. */
export async function draftRevision(client: ApiClient, view: ProposalView): Promise<number | null> {
  if (view.target.type !== "draft") return null;
  return (await readFresh(client, "platformDraft.get", { projectId: view.projectId, platform: view.target.platform })).revision;
}
