// Performance data: a project's publications and their metrics, imports of platform
// exports, the workspace's accounts, and the dialog that records a publication when a
// draft is set to published; the workspace dashboard (all publications, medians over
// time, posting times) and the CSV export of every performance table.
// This face is the only module other features and the app import (see boundary.test.ts).
import { lazy } from "react";
export { PerformancePanel } from "./PerformancePanel";
export { PublishDialog } from "./PublicationForm";
export { Accounts } from "./Accounts";
export { PerformanceContextSetting } from "./ContextSetting";
// The dashboard loads on demand: the app imports this face, and the dashboard (its charts,
// tables and CSV export) is not on the first screen.
export const loadPerformanceDashboard = () => import("./Dashboard");
export const PerformanceDashboard = lazy(() => loadPerformanceDashboard().then((m) => ({ default: m.PerformanceDashboard })));
