-- The pipeline's own tables. A repeatable migration: it runs after a service's versioned ones,
-- again whenever this text changes, and must therefore leave a database that already has these
-- tables as it is. So every statement is "if not exists", and every later change of these tables
-- is added below in the same way. Versions would have had to fit into each service's own
-- sequence of versions; this script needs none.

-- "already exists, skipping" is what this script says of every table it finds: not worth a warning
-- in a service's log (Flyway logs the server's notices as warnings). Local to the script's
-- transaction, which Flyway and the extension both run it in.
SET LOCAL client_min_messages = warning;

-- One row per (scope, key): the unique primary key is what makes a concurrent second delivery
-- wait for the first transaction and then see its outcome. Key first and in the "C" collation:
-- every delivery searches this index, and scope takes few values, so comparing key first by its
-- bytes is the cheapest order (equality is byte for byte either way).
CREATE TABLE IF NOT EXISTS dedup_record (
    scope        text COLLATE "C" NOT NULL,
    key          text COLLATE "C" NOT NULL,
    fingerprint  text        NOT NULL,
    status       text        NOT NULL,
    result       jsonb,
    attempts     integer     NOT NULL DEFAULT 1,
    lease_until  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    -- two-phase records only: the request of an unfinished record, so that whoever takes it over
    -- can run its effect again (cleared when DONE, kept when FAILED), and why its last attempt failed
    payload      jsonb,
    last_error   text,
    CONSTRAINT dedup_record_one_per_scope_key PRIMARY KEY (key, scope),
    CONSTRAINT dedup_record_status_known CHECK (status IN ('PROCESSING', 'DONE', 'FAILED')),
    CONSTRAINT dedup_record_done_has_result CHECK (status <> 'DONE' OR result IS NOT NULL),
    CONSTRAINT dedup_record_processing_has_lease CHECK (status <> 'PROCESSING' OR lease_until IS NOT NULL)
);

-- Archiving: the records past their retention, oldest first.
CREATE INDEX IF NOT EXISTS dedup_record_expiry ON dedup_record (expires_at);

-- Exactly the unfinished two-phase records (in flight, hanging, FAILED): what recovery and
-- reconciliation look through. One-phase records never enter it.
CREATE INDEX IF NOT EXISTS dedup_record_unfinished_two_phase ON dedup_record (created_at) WHERE payload IS NOT NULL;

-- Records moved out of the hot table once their retention passed. A key can come back after
-- archiving (a very late duplicate) and be archived again, hence created_at in the key.
CREATE TABLE IF NOT EXISTS dedup_record_archive (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    fingerprint  text        NOT NULL,
    status       text        NOT NULL,
    result       jsonb,
    attempts     integer     NOT NULL,
    lease_until  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    archived_at  timestamptz NOT NULL,
    CONSTRAINT dedup_record_archive_pk PRIMARY KEY (scope, key, created_at)
);
