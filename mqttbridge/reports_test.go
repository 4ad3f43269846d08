package mqttbridge

import (
	"context"
	"slices"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
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
