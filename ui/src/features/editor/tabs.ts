export type PanelTab = "drafts" | "ai" | "history" | "comments" | "performance";
export const TABS: PanelTab[] = ["drafts", "ai", "history", "comments", "performance"];
