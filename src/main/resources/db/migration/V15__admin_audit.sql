-- Who changed what through the admin API, and who was refused: written before the answer. A row
-- is never changed, and leaves the table only as an identical copy in admin_audit_archive (which
-- keeps it for good): the triggers hold that against every role, the service's own included.
CREATE TABLE admin_audit (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL,
    subject    text        NOT NULL,
    name       text,
    roles      text[]      NOT NULL,
    action     text        NOT NULL,
    target     text,
    parameters jsonb       NOT NULL,
    result     jsonb,
    status     int         NOT NULL
);
CREATE INDEX admin_audit_at ON admin_audit (at);

CREATE TABLE admin_audit_archive (LIKE admin_audit);
ALTER TABLE admin_audit_archive ADD PRIMARY KEY (id);

CREATE FUNCTION admin_audit_written_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'admin_audit' AND EXISTS (
            SELECT 1 FROM admin_audit_archive a WHERE a.id = OLD.id AND (a.*)::text = (OLD.*)::text) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER admin_audit_append_only BEFORE UPDATE OR DELETE ON admin_audit
    FOR EACH ROW EXECUTE FUNCTION admin_audit_written_once();
CREATE TRIGGER admin_audit_archive_append_only BEFORE UPDATE OR DELETE ON admin_audit_archive
    FOR EACH ROW EXECUTE FUNCTION admin_audit_written_once();
CREATE FUNCTION admin_audit_not_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only: TRUNCATE on % refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER admin_audit_not_truncated BEFORE TRUNCATE ON admin_audit
    FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_not_truncated();
CREATE TRIGGER admin_audit_archive_not_truncated BEFORE TRUNCATE ON admin_audit_archive
    FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_not_truncated();
