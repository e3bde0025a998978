// Reviewing a proposal: the hunk-by-hunk diff and the accept flow.
// This face is the only module other features and the app import (see boundary.test.ts).
export { hunkBars, useBarLabels } from "./bars";
export { type BarLabels, type HunkAction, type HunkBarState, type HunkDecision, MergeDiff } from "./MergeDiff";
/** The review dialog, loaded on demand. */
export const loadProposalReview = () => import("./ProposalReview");
export { WhyThisChange, type WhyThisChangeProps } from "./WhyThisChange";
