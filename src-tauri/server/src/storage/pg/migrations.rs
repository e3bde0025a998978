//! The PostgreSQL schema, one numbered step per version, run at start in order.

/// The schema, one step per version. Never edit a step that has shipped: add one.
pub const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        r#"
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- The last change cursor given out in this workspace.
    cursor BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE members (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    PRIMARY KEY (workspace_id, id)
);
CREATE TABLE tokens (
    -- sha256 hex of the token; the token itself is never stored.
    hash TEXT PRIMARY KEY,
    token_id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    revoked BOOLEAN NOT NULL DEFAULT FALSE,
    FOREIGN KEY (workspace_id, member_id) REFERENCES members (workspace_id, id)
);
CREATE TABLE projects (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id TEXT NOT NULL,
    head INTEGER NOT NULL,
    title TEXT NOT NULL,
    PRIMARY KEY (workspace_id, project_id)
);
CREATE TABLE versions (
    workspace_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    number INTEGER NOT NULL CHECK (number > 0),
    cursor BIGINT NOT NULL CHECK (cursor > 0),
    client_id TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    PRIMARY KEY (workspace_id, project_id, number),
    UNIQUE (workspace_id, cursor),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, project_id)
);
CREATE TABLE dedupe (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    -- Unix milliseconds of the push.
    at BIGINT NOT NULL,
    -- The push's result (JSON of PushResponse).
    response TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX dedupe_at ON dedupe (at);
"#,
    ),
    (
        2,
        r#"
-- Unix milliseconds of the invite, for the membership list (NULL for older tokens).
ALTER TABLE tokens ADD COLUMN issued_at BIGINT;
"#,
    ),
    (
        3,
        r#"
-- How the pushing client made the version (manual, syncResolution, ...): a kind, never
-- ids or names. NULL for versions of older clients.
ALTER TABLE versions ADD COLUMN origin TEXT;
"#,
    ),
    (
        4,
        r#"
-- A push that reuses a version id the workspace holds is refused: found by this index.
-- (Not UNIQUE: a database of an older server may hold an id twice already.)
CREATE INDEX versions_client_id ON versions (workspace_id, client_id);
"#,
    ),
    (
        5,
        r#"
-- The workspace's policy as its owners last set it (JSON of PolicyRecord: the policy,
-- who set it and when). No row: never set.
CREATE TABLE policies (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    record TEXT NOT NULL
);
"#,
    ),
    (
        6,
        r#"
-- The workspace's performance data (accounts, publications, metric snapshots): one
-- row per record, its latest write, at its own cursor (taken under the workspace row's
-- lock, like the versions' cursors). `body` is the app's record as JSON text, NULL for
-- a deleted account or publication (kept, so an older write cannot bring it back).
ALTER TABLE workspaces ADD COLUMN perf_cursor BIGINT NOT NULL DEFAULT 0;
CREATE TABLE perf_records (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    kind TEXT NOT NULL CHECK (kind IN ('account', 'publication', 'snapshot')),
    id TEXT NOT NULL,
    project_id TEXT,
    publication_id TEXT,
    updated_at BIGINT NOT NULL,
    edit_id TEXT NOT NULL,
    deleted BOOLEAN NOT NULL,
    body TEXT,
    created_by TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    cursor BIGINT NOT NULL CHECK (cursor > 0),
    PRIMARY KEY (workspace_id, kind, id),
    UNIQUE (workspace_id, cursor)
);
CREATE INDEX perf_records_snapshots ON perf_records (workspace_id, publication_id) WHERE kind = 'snapshot';
"#,
    ),
    (
        7,
        r#"
-- The AI origin detail of an accepted AI version, pushed while the workspace shares AI
-- activity (JSON of AiOrigin: who accepted, model, provider host, prompt layers,
-- proposal, hunks, through what; never prompts or transcripts). Kept apart from the
-- version: a pull never carries it.
CREATE TABLE ai_activity (
    workspace_id TEXT NOT NULL,
    cursor BIGINT NOT NULL,
    project_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    client_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    model TEXT NOT NULL,
    -- Unix milliseconds of the accept.
    accepted_at BIGINT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (workspace_id, cursor),
    FOREIGN KEY (workspace_id, project_id, number) REFERENCES versions (workspace_id, project_id, number)
);
CREATE INDEX ai_activity_at ON ai_activity (workspace_id, accepted_at DESC, cursor DESC);
"#,
    ),
    (
        8,
        r#"
-- Accounts' days (`accountSnapshots`): a fourth kind of performance record, append-only
-- like a metric snapshot, naming its account (NULL for the other kinds). Rows of the
-- first three kinds are unchanged.
ALTER TABLE perf_records DROP CONSTRAINT perf_records_kind_check;
ALTER TABLE perf_records ADD CONSTRAINT perf_records_kind_check CHECK (kind IN ('account', 'publication', 'snapshot', 'accountSnapshot'));
ALTER TABLE perf_records ADD COLUMN account_id TEXT;
"#,
    ),
];
