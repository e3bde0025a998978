// The English catalog: one JSON file per feature under messages/en/ at the repository
// root, read by the UI here, by the core (crate inkstone-messages) for its English
// `message` fields and by the CLI. English defines the message ids: every other
// language's table is typed against `Messages`, so a missing id there fails to compile
// (and the catalog test in core's tidy suite fails on an extra one). A count is worded
// with an ICU plural (`{n, plural, one {…} other {# …}}`), see ./format.ts.

import app from "../../../../messages/en/app.json";
import editor from "../../../../messages/en/editor.json";
import history from "../../../../messages/en/history.json";
import drafts from "../../../../messages/en/drafts.json";
import findings from "../../../../messages/en/findings.json";
import errors from "../../../../messages/en/errors.json";
import drafting from "../../../../messages/en/drafting.json";
import optimize from "../../../../messages/en/optimize.json";
import settings from "../../../../messages/en/settings.json";
import sync from "../../../../messages/en/sync.json";
import comments from "../../../../messages/en/comments.json";
import search from "../../../../messages/en/search.json";
import usage from "../../../../messages/en/usage.json";
import review from "../../../../messages/en/review.json";
import help from "../../../../messages/en/help.json";
import performance from "../../../../messages/en/performance.json";
import activity from "../../../../messages/en/activity.json";
import updates from "../../../../messages/en/updates.json";

export const en = { ...app, ...editor, ...history, ...drafts, ...findings, ...errors, ...drafting, ...optimize, ...settings, ...sync, ...comments, ...search, ...usage, ...review, ...help, ...performance, ...activity, ...updates };

export type MessageId = keyof typeof en;

/** A complete message table: one text for every id English defines. */
export type Messages = Record<MessageId, string>;
