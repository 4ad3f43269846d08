package mqttbridge

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/outbox"
	bolt "go.etcd.io/bbolt"
)

// TestRepublishReadsUnmarked: at start the bridge reads the outbox's unmarked entries alone.
// Of three cancelled entries of an outbox file, the one the ledger marks (as versions before
// kept marks) and the one settled before the ledger kept marks are not published again and
// are marked in the file; the unmarked one is published once; the ledger's marks are let go
// (a stale one too); and a second start publishes nothing again and leaves no entry unmarked.
func TestRepublishReadsUnmarked(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	cfg := testConfig(t, bk.URL(), pl, "line1")
	file := StateFile(cfg.StateDir, pl.URL)
	ob, err := outbox.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := func(id string) {
		t.Helper()
		if _, err := ob.Enqueue(context.Background(), outbox.Intent{ID: "line1/" + id, Printer: "line1", Job: labelprinter.PrintJob{LabelName: "L"}}); err != nil {
			t.Fatal(err)
		}
		if err := ob.Cancel("line1/" + id); err != nil {
			t.Fatal(err)
		}
	}
	cancelled("old")
	time.Sleep(10 * time.Millisecond)
	led, err := openLedger(ledgerFile(file))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	cancelled("marked")
	cancelled("unmarked")
	if err := led.putReports(map[string]string{"line1/marked": "cancelled/0", "line1/gone": "sent/1"}); err != nil {
		t.Fatal(err)
	}
	_ = led.close()
	_ = ob.Close()

	w := watch(t, bk.URL(), prefix+"/#")
	topic := printerTopic(prefix, "line1", topicResult)
	for start := range 2 {
		b, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := runBridge(t, b)
		w.waitOnline(start + 1)
		if start == 0 {
			w.waitStates(topic, "unmarked", StateCancelled)
		} else {
			time.Sleep(20 * cfg.PollInterval) // what a start would publish, it publishes before online
		}
		r.stop(t)
	}
	for _, id := range []string{"old", "marked", "unmarked"} {
		want := []string(nil)
		if id == "unmarked" {
			want = []string{StateCancelled}
		}
		if got := w.statesOf(topic, id); !slices.Equal(got, want) {
			t.Errorf("%s: published %v, want %v", id, got, want)
		}
	}
	ob, err = outbox.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	if un, err := ob.Unacknowledged(); err != nil || len(un) != 0 {
		t.Errorf("after two starts the outbox holds %d unmarked entries (%v), want none", len(un), err)
	}
	db, err := bolt.Open(ledgerFile(file), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketReports).Stats().KeyN; n != 0 {
			t.Errorf("the ledger still holds %d marks, want none: the outbox keeps them", n)
		}
		return nil
	})
}

// TestPairRepublishReadsUnmarked is TestRepublishReadsUnmarked for a pair's queue in
// PostgreSQL: of three cancelled entries, the one the ledger marks (as versions before kept
// marks in it) and the one settled before the ledger kept marks are not published again and
// are acknowledged in the queue; the unmarked one is published once; the ledger's marks are
// let go (a stale one too); and a second start publishes nothing again, the queue holding no
// entry unacknowledged. Before, a pair's queue kept no acknowledgements: every start read
// every settled entry, and the ledger every mark it ever wrote.
func TestPairRepublishReadsUnmarked(t *testing.T) {
	dsn := pgtest.DSN(t)
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	cfg := testConfig(t, bk.URL(), pl, "line1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}

	w := watch(t, bk.URL(), prefix+"/#")
	topic := printerTopic(prefix, "line1", topicResult)
	run := func(start int) {
		t.Helper()
		b, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := runBridge(t, b)
		w.waitOnline(start)
		if start == 2 {
			w.waitStates(topic, "unmarked", StateCancelled)
		} else {
			time.Sleep(20 * cfg.PollInterval) // what a start would publish, it publishes before online
		}
		r.stop(t)
	}
	run(1) // makes the tables; the ledger keeps marks from here

	q := queueName(cfg.Broker.ClientID, NormalizeURL(pl.URL))
	ob, err := outbox.OpenPostgres(ctx, dsn, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old", "marked", "unmarked"} {
		if _, err := ob.Enqueue(ctx, outbox.Intent{ID: "line1/" + id, Printer: "line1", Job: labelprinter.PrintJob{LabelName: "L"}}); err != nil {
			t.Fatal(err)
		}
		if err := ob.Cancel("line1/" + id); err != nil {
			t.Fatal(err)
		}
	}
	_ = ob.Close()
	// Settled before the ledger kept marks: a day before its first start.
	exec(`UPDATE labelprinter_outbox_entries SET updated = updated - interval '1 day' WHERE queue = $1 AND id = 'line1/old'`, q)
	for id, mark := range map[string]string{"line1/marked": "cancelled/0", "line1/gone": "sent/1"} {
		exec(`INSERT INTO labelprinter_mqtt_ledger (queue, kind, printer, id, record) VALUES ($1, 'report', '', $2, jsonb_build_object('mark', $3::text))`, q, id, mark)
	}

	run(2)
	run(3)
	for _, id := range []string{"old", "marked", "unmarked"} {
		want := []string(nil)
		if id == "unmarked" {
			want = []string{StateCancelled}
		}
		if got := w.statesOf(topic, id); !slices.Equal(got, want) {
			t.Errorf("%s: published %v, want %v", id, got, want)
		}
	}
	ob, err = outbox.OpenPostgres(ctx, dsn, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	if un, err := ob.Unacknowledged(); err != nil || len(un) != 0 {
		t.Errorf("after the starts the queue holds %d unacknowledged entries (%v), want none", len(un), err)
	}
	var marks int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM labelprinter_mqtt_ledger WHERE queue = $1 AND kind = 'report'`, q).Scan(&marks); err != nil {
		t.Fatal(err)
	}
	if marks != 0 {
		t.Errorf("the ledger still holds %d marks, want none: the queue keeps them", marks)
	}
}
