package outbox

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// This file holds Counts of a queue in PostgreSQL, which reads no settled history: the open
// entries (pending, sending, unknown) are counted through their partial index, and the final
// ones (sent, rejected, expired, cancelled, not pruned) are kept counted in a table of their
// own, by printer and state, by triggers of every statement that adds, changes or removes
// entries, whichever version of the outbox (or person) wrote it, and whatever its session's
// search_path. A trigger per statement, not per row: a Prune of many entries moves each count
// once, and the counts in one order, so that two statements moving the same counts wait for
// each other rather than deadlock. Entries turn final one at a time per printer (its lane's
// holder delivers them), so the count rows are not where concurrent writes wait for each
// other; new entries, pending, touch none.

// pgCountsTable is the table of final counts, the function of its triggers and the triggers,
// with %s for the schema of the entries: the function reads and writes the tables of that
// schema whatever the search_path of the session whose statement it follows, in statements
// planned once per session.
const pgCountsTable = `CREATE TABLE IF NOT EXISTS labelprinter_outbox_counts (
	queue text NOT NULL,
	printer text NOT NULL,
	state text NOT NULL,
	n bigint NOT NULL,
	PRIMARY KEY (queue, printer, state)
);
CREATE OR REPLACE FUNCTION labelprinter_outbox_count() RETURNS trigger LANGUAGE plpgsql SET search_path = %s AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO labelprinter_outbox_counts AS c (queue, printer, state, n)
			SELECT queue, printer, state, count(*) FROM new_rows WHERE ` + pgFinalUnpruned + `
			GROUP BY queue, printer, state ORDER BY queue, printer, state
			ON CONFLICT (queue, printer, state) DO UPDATE SET n = c.n + EXCLUDED.n;
	ELSIF TG_OP = 'DELETE' THEN
		INSERT INTO labelprinter_outbox_counts AS c (queue, printer, state, n)
			SELECT queue, printer, state, -count(*) FROM old_rows WHERE ` + pgFinalUnpruned + `
			GROUP BY queue, printer, state ORDER BY queue, printer, state
			ON CONFLICT (queue, printer, state) DO UPDATE SET n = c.n + EXCLUDED.n;
	ELSE
		INSERT INTO labelprinter_outbox_counts AS c (queue, printer, state, n)
			SELECT queue, printer, state, sum(d) FROM (
				SELECT queue, printer, state, 1 AS d FROM new_rows WHERE ` + pgFinalUnpruned + `
				UNION ALL SELECT queue, printer, state, -1 FROM old_rows WHERE ` + pgFinalUnpruned + `) AS m
			GROUP BY queue, printer, state HAVING sum(d) <> 0 ORDER BY queue, printer, state
			ON CONFLICT (queue, printer, state) DO UPDATE SET n = c.n + EXCLUDED.n;
	END IF;
	RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS labelprinter_outbox_count_insert ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_count_insert AFTER INSERT ON labelprinter_outbox_entries
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION labelprinter_outbox_count();
DROP TRIGGER IF EXISTS labelprinter_outbox_count_update ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_count_update AFTER UPDATE ON labelprinter_outbox_entries
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION labelprinter_outbox_count();
DROP TRIGGER IF EXISTS labelprinter_outbox_count_delete ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_count_delete AFTER DELETE ON labelprinter_outbox_entries
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION labelprinter_outbox_count()`

// pgFinalUnpruned is the condition of an entry the table counts.
const pgFinalUnpruned = `state IN ('sent', 'rejected', 'expired', 'cancelled') AND pruned IS NULL`

// addCounts adds the table of final counts and its triggers to tables made before them, and
// counts what is there, once, while the entries are locked against writes (reads go on), so
// that no change falls between the count and the triggers. It is looked for first, so an
// open of tables that have it takes no lock.
func (s *pgStore) addCounts(ctx context.Context) error {
	var has bool
	if err := s.db().QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_counts') IS NOT NULL`).Scan(&has); err != nil || has {
		return err
	}
	return pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
			return err
		}
		var schema string
		if err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.oid = 'labelprinter_outbox_entries'::regclass`).Scan(&schema); err != nil {
			return err
		}
		for _, q := range []string{`LOCK TABLE labelprinter_outbox_entries IN SHARE ROW EXCLUSIVE MODE`,
			fmt.Sprintf(pgCountsTable, pgx.Identifier{schema}.Sanitize()),
			`INSERT INTO labelprinter_outbox_counts (queue, printer, state, n)
				SELECT queue, printer, state, count(*) FROM labelprinter_outbox_entries WHERE ` + pgFinalUnpruned + `
				GROUP BY queue, printer, state ON CONFLICT DO NOTHING`} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// pgCounts counts the open entries of queue $1 through their index (its condition, written
// out, is what lets the planner use it) and reads the counts of the final ones.
const pgCounts = `SELECT printer, state, count(*) FROM labelprinter_outbox_entries
		WHERE queue = $1 AND state IN ('pending', 'sending', 'unknown') AND pruned IS NULL GROUP BY printer, state
	UNION ALL SELECT printer, state, n FROM labelprinter_outbox_counts WHERE queue = $1 AND n > 0`

// counts counts the open entries through their index and reads the counts of final ones, in
// one statement: one row per printer and state.
func (s *pgStore) counts(ctx context.Context) (map[string]map[State]int, error) {
	rows, err := s.db().Query(ctx, pgCounts, s.queue)
	if err != nil {
		return nil, s.fail("counting", err)
	}
	out := map[string]map[State]int{}
	var (
		printer, state string
		n              int
	)
	_, err = pgx.ForEachRow(rows, []any{&printer, &state, &n}, func() error {
		if out[printer] == nil {
			out[printer] = map[State]int{}
		}
		out[printer][State(state)] = n
		return nil
	})
	if err != nil {
		return nil, s.fail("counting", err)
	}
	return out, nil
}
