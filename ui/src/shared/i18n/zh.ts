// The Simplified Chinese catalog (messages/zh/*.json), one text for every id of the
// English catalog (./en.ts). Chinese has one plural form, so its counts need no plural.

import type { Messages } from "./en";
import app from "../../../../messages/zh/app.json";
import editor from "../../../../messages/zh/editor.json";
import history from "../../../../messages/zh/history.json";
import drafts from "../../../../messages/zh/drafts.json";
import findings from "../../../../messages/zh/findings.json";
import errors from "../../../../messages/zh/errors.json";
import drafting from "../../../../messages/zh/drafting.json";
import optimize from "../../../../messages/zh/optimize.json";
import settings from "../../../../messages/zh/settings.json";
import sync from "../../../../messages/zh/sync.json";
import comments from "../../../../messages/zh/comments.json";
import search from "../../../../messages/zh/search.json";
import usage from "../../../../messages/zh/usage.json";
import review from "../../../../messages/zh/review.json";
import help from "../../../../messages/zh/help.json";
import performance from "../../../../messages/zh/performance.json";
import activity from "../../../../messages/zh/activity.json";
import updates from "../../../../messages/zh/updates.json";

export const zh: Messages = { ...app, ...editor, ...history, ...drafts, ...findings, ...errors, ...drafting, ...optimize, ...settings, ...sync, ...comments, ...search, ...usage, ...review, ...help, ...performance, ...activity, ...updates };
