-- The tables of a queue in PostgreSQL as versions before acknowledgements made them
-- (schema version 1, without the column acknowledged and its index).

CREATE TABLE IF NOT EXISTS labelprinter_outbox_version (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	version integer NOT NULL
);
CREATE TABLE IF NOT EXISTS labelprinter_outbox_entries (
	queue text NOT NULL,
	seq bigint GENERATED ALWAYS AS IDENTITY,
	id text NOT NULL,
	printer text NOT NULL,
	kind text NOT NULL,
	job text,
	expire_after bigint NOT NULL,
	state text NOT NULL,
	attempts integer NOT NULL DEFAULT 0,
	enqueued timestamptz NOT NULL DEFAULT now(),
	updated timestamptz NOT NULL DEFAULT now(),
	error text NOT NULL DEFAULT '',
	response text,
	pruned timestamptz,
	PRIMARY KEY (queue, seq),
	UNIQUE (queue, id)
);
CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_open ON labelprinter_outbox_entries (queue, printer, seq)
	WHERE state IN ('pending', 'sending');
CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_unsettled ON labelprinter_outbox_entries (queue, seq)
	WHERE state IN ('pending', 'sending', 'unknown') AND pruned IS NULL;
CREATE TABLE IF NOT EXISTS labelprinter_outbox_lanes (
	queue text NOT NULL,
	printer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	lease_until timestamptz NOT NULL DEFAULT '-infinity',
	in_flight bigint,
	PRIMARY KEY (queue, printer)
);
CREATE OR REPLACE FUNCTION labelprinter_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	p text;
BEGIN
	IF NEW.pruned IS NOT NULL THEN
		RETURN NULL;
	END IF;
	p := json_build_object('seq', NEW.seq, 'id', NEW.id, 'printer', NEW.printer,
		'kind', NEW.kind, 'job', NEW.job::json, 'expireAfter', NEW.expire_after, 'state', NEW.state,
		'attempts', NEW.attempts, 'enqueued', NEW.enqueued, 'updated', NEW.updated, 'error', NEW.error,
		'response', NEW.response::json)::text;
	IF octet_length(p) > 7900 THEN
		p := json_build_object('seq', NEW.seq, 'trimmed', true)::text;
	END IF;
	PERFORM pg_notify('lpo_' || md5(NEW.queue || E'\n' || TG_TABLE_SCHEMA), p);
	RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS labelprinter_outbox_notify ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_notify AFTER UPDATE ON labelprinter_outbox_entries
	FOR EACH ROW EXECUTE FUNCTION labelprinter_outbox_notify();
CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_final ON labelprinter_outbox_entries (queue, updated, seq)
	WHERE state IN ('sent', 'rejected', 'expired', 'cancelled') AND pruned IS NULL;
INSERT INTO labelprinter_outbox_version (version) VALUES (1) ON CONFLICT DO NOTHING;
