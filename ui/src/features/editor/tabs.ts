export type PanelTab = "drafts" | "ai" | "history" | "comments";
export const TABS: PanelTab[] = ["drafts", "ai", "history", "comments"];
