package outbox

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// This file holds Counts of a queue in PostgreSQL, which reads no settled history: the open
// entries (pending, sending, unknown) are counted through their partial index, and the final
// ones (sent, rejected, expired, cancelled, not pruned) are kept counted in a table of their
// own, by printer and state, by row triggers on the entries, whichever version of the outbox
// (or person) wrote them, and whatever its session's search_path.
//
// A trigger per row whose WHEN condition names the rows that move a count, so that the
// statements of the hot path pay nothing: a new entry is pending, a claim moves pending to
// sending and an acknowledgement changes neither state nor pruning, and for them PostgreSQL
// evaluates the condition and calls no function and builds no transition table (statement
// triggers did both for every statement). An outcome moves one count, once.
//
// Deadlocks: a row's count moves when its statement ends, after the statement has locked
// every entry it changes. An outcome or a cancel moves one count row and locks nothing else
// after it. Two statements that each move several count rows (two Prunes of one queue) would
// have to change disjoint entries of the same printers and states at once; a Prune locks the
// final unpruned entries older than its cut-off, so two Prunes of one queue want the same
// entries and the second waits for the first's commit, then finds them pruned. Expiring
// entries moves them one lane at a time. Were it ever to happen, PostgreSQL breaks the cycle
// by failing one statement: no count is wrong, the caller gets an error.

// pgCountsTable is the table of final counts, the function of its triggers and the triggers,
// with %s for the schema of the entries: the function reads and writes the tables of that
// schema whatever the search_path of the session whose statement it follows. The statement
// triggers of the version before are dropped.
const pgCountsTable = `CREATE TABLE IF NOT EXISTS labelprinter_outbox_counts (
	queue text NOT NULL,
	printer text NOT NULL,
	state text NOT NULL,
	n bigint NOT NULL,
	PRIMARY KEY (queue, printer, state)
);
DROP TRIGGER IF EXISTS labelprinter_outbox_count_insert ON labelprinter_outbox_entries;
DROP TRIGGER IF EXISTS labelprinter_outbox_count_update ON labelprinter_outbox_entries;
DROP TRIGGER IF EXISTS labelprinter_outbox_count_delete ON labelprinter_outbox_entries;
DROP FUNCTION IF EXISTS labelprinter_outbox_count();
CREATE OR REPLACE FUNCTION labelprinter_outbox_count_row() RETURNS trigger LANGUAGE plpgsql SET search_path = %s AS $$
BEGIN
	IF TG_OP <> 'INSERT' AND ` + pgOldCounted + ` THEN
		INSERT INTO labelprinter_outbox_counts AS c (queue, printer, state, n) VALUES (OLD.queue, OLD.printer, OLD.state, -1)
			ON CONFLICT (queue, printer, state) DO UPDATE SET n = c.n - 1;
	END IF;
	IF TG_OP <> 'DELETE' AND ` + pgNewCounted + ` THEN
		INSERT INTO labelprinter_outbox_counts AS c (queue, printer, state, n) VALUES (NEW.queue, NEW.printer, NEW.state, 1)
			ON CONFLICT (queue, printer, state) DO UPDATE SET n = c.n + 1;
	END IF;
	RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS labelprinter_outbox_counted_insert ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_counted_insert AFTER INSERT ON labelprinter_outbox_entries
	FOR EACH ROW WHEN (` + pgNewCounted + `) EXECUTE FUNCTION labelprinter_outbox_count_row();
DROP TRIGGER IF EXISTS labelprinter_outbox_counted_update ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_counted_update AFTER UPDATE ON labelprinter_outbox_entries
	FOR EACH ROW WHEN ((` + pgOldCounted + ` OR ` + pgNewCounted + `)
		AND (OLD.queue, OLD.printer, OLD.state, OLD.pruned IS NULL) IS DISTINCT FROM (NEW.queue, NEW.printer, NEW.state, NEW.pruned IS NULL))
	EXECUTE FUNCTION labelprinter_outbox_count_row();
DROP TRIGGER IF EXISTS labelprinter_outbox_counted_delete ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_counted_delete AFTER DELETE ON labelprinter_outbox_entries
	FOR EACH ROW WHEN (` + pgOldCounted + `) EXECUTE FUNCTION labelprinter_outbox_count_row()`

// pgFinalUnpruned is the condition of an entry the table counts; pgOldCounted and
// pgNewCounted are the same of a trigger's old and new row.
const (
	pgFinalUnpruned = `state IN ('sent', 'rejected', 'expired', 'cancelled') AND pruned IS NULL`
	pgOldCounted    = `(OLD.state IN ('sent', 'rejected', 'expired', 'cancelled') AND OLD.pruned IS NULL)`
	pgNewCounted    = `(NEW.state IN ('sent', 'rejected', 'expired', 'cancelled') AND NEW.pruned IS NULL)`
)

// addCounts adds the table of final counts and its row triggers to tables made before them
// (without counts, or with the statement triggers of the version before), and counts what is
// there anew, once, while the entries are locked against writes (reads go on), so that no
// change falls between the count and the triggers. The update trigger is looked for first,
// so an open of tables that have it takes no lock.
func (s *pgStore) addCounts(ctx context.Context) error {
	var has bool
	if err := s.db().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_trigger
		WHERE tgrelid = 'labelprinter_outbox_entries'::regclass AND tgname = 'labelprinter_outbox_counted_update')`).Scan(&has); err != nil || has {
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
			`DELETE FROM labelprinter_outbox_counts`,
			`INSERT INTO labelprinter_outbox_counts (queue, printer, state, n)
				SELECT queue, printer, state, count(*) FROM labelprinter_outbox_entries WHERE ` + pgFinalUnpruned + `
				GROUP BY queue, printer, state`} {
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
