package outbox

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	bolt "go.etcd.io/bbolt"
)

// TestKindsInOrder: print jobs, triggers and deselects of one printer go out one at a time in
// enqueue order, each as its own request, and each answer settles its own entry.
func TestKindsInOrder(t *testing.T) { eachStore(t, testKindsInOrder) }

func testKindsInOrder(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	for _, in := range []Intent{
		{ID: "select", Printer: "line1", Job: job("select")},
		{ID: "trigger1", Printer: "line1", Kind: KindTrigger},
		{ID: "deselect", Printer: "line1", Kind: KindDeselect},
		{ID: "trigger2", Printer: "line1", Kind: KindTrigger}, // nothing selected: the printer refuses it
	} {
		if e := enqueue(t, ob, in); e.Kind != in.Kind || e.State != Pending {
			t.Errorf("%s: kind %v, state %s", in.ID, e.Kind, e.State)
		}
	}
	running(t, ob)
	for id, want := range map[string]State{"select": Sent, "trigger1": Sent, "deselect": Sent, "trigger2": Rejected} {
		e, err := ob.Wait(context.Background(), id)
		if err != nil || e.State != want || e.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts (%q), %v; want %s", id, e.State, e.Attempts, e.Error, err, want)
		}
	}
	var line1 []string
	for _, p := range rec.sentPosts() {
		if strings.HasPrefix(p, "printers/line1/") {
			line1 = append(line1, p)
		}
	}
	want := []string{"printers/line1/printJob select", "printers/line1/trigger", "printers/line1/printJob ", "printers/line1/trigger"}
	if !slices.Equal(line1, want) {
		t.Errorf("line1 received %q, want %q", line1, want)
	}
	// The simulator's single-printer path is its first printer, line1: only now, after line1's
	// queue, can its deselect not change what that queue showed.
	enqueue(t, ob, Intent{ID: "deselect-single", Kind: KindDeselect})
	if e, err := ob.Wait(context.Background(), "deselect-single"); err != nil || e.State != Sent {
		t.Errorf("deselect-single: %s (%s), %v", e.State, e.Error, err)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printJob"); n != 1 {
		t.Errorf("the single-printer deselect: %d requests", n)
	}
	c, _ := srv.Sim.Counters("line1")
	if c.Triggers != 2 || c.PrintedLabels != 1 || c.TriggerBounces != 1 {
		t.Errorf("line1 counters %+v: want 2 triggers, 1 printed, 1 bounce", c)
	}
	if e, _ := ob.Get("trigger1"); len(e.Response) == 0 || e.Job.LabelName != "" {
		t.Errorf("trigger1: response %s, job %+v", e.Response, e.Job)
	}
}

func TestKindRules(t *testing.T) { eachStore(t, testKindRules) }

func testKindRules(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	for name, in := range map[string]Intent{
		"print job without a job":       {ID: "a", Printer: "line1"},
		"deselect with a job":           {ID: "a", Printer: "line1", Kind: KindDeselect, Job: job("x")},
		"deselect with only Queue set":  {ID: "a", Kind: KindDeselect, Job: labelprinter.PrintJob{Queue: labelprinter.Ptr(false)}},
		"trigger with a job":            {ID: "a", Printer: "line1", Kind: KindTrigger, Job: labelprinter.PrintJob{Description: "x"}},
		"trigger without a printer":     {ID: "a", Kind: KindTrigger},
		"trigger with Extra":            {ID: "a", Printer: "line1", Kind: KindTrigger, Job: labelprinter.PrintJob{Extra: map[string]any{"k": 1}}},
		"a kind that does not exist":    {ID: "a", Printer: "line1", Kind: 7},
		"trigger with a bad printer":    {ID: "a", Printer: "..", Kind: KindTrigger},
		"deselect with a negative wait": {ID: "a", Kind: KindDeselect, ExpireAfter: -1},
	} {
		if _, err := ob.Enqueue(context.Background(), in); !isInvalid(err) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if all, _ := ob.List(); len(all) != 0 {
		t.Errorf("refused intents stored: %v", ids(all))
	}
	if n := srv.Sim.TotalRequests(); n > 1 { // the label's PUT
		t.Errorf("%d requests sent", n)
	}
	// An empty Extra map is still an empty job.
	if _, err := ob.Enqueue(context.Background(), Intent{ID: "t", Printer: "line1", Kind: KindTrigger, Job: labelprinter.PrintJob{Extra: map[string]any{}}}); err != nil {
		t.Errorf("trigger with an empty Extra: %v", err)
	}
	for k, want := range map[Kind]string{KindPrintJob: "printJob", KindDeselect: "deselect", KindTrigger: "trigger", 9: "Kind(9)"} {
		if k.String() != want {
			t.Errorf("Kind %d: %q", k, k.String())
		}
	}
}

// TestKindsSurviveReopen: the kind is stored, and an entry of each kind comes back from the
// file as it went in.
func TestKindsSurviveReopen(t *testing.T) { eachStore(t, testKindsSurviveReopen) }

func testKindsSurviveReopen(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	enqueue(t, ob, Intent{ID: "p", Printer: "line1", Job: job("p")})
	enqueue(t, ob, Intent{ID: "d", Kind: KindDeselect})
	enqueue(t, ob, Intent{ID: "t", Printer: "line1", Kind: KindTrigger})
	ob = st.reopen(t, ob, nil)
	all, err := ob.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Kind != KindPrintJob || all[0].Job.Description != "p" ||
		all[1].Kind != KindDeselect || all[1].Printer != "" || all[2].Kind != KindTrigger || all[2].Printer != "line1" {
		t.Errorf("after reopening: %+v", all)
	}
}

// TestOpensFirstFormat opens a file written by the outbox before kinds and pruned IDs existed
// (testdata/v1.outbox: a sent, a rejected, an unknown, a cancelled entry, one left sending by
// a crash, and three pending), reads it unchanged, and delivers what it holds.
func TestOpensFirstFormat(t *testing.T) {
	path := copyFile(t, "testdata/v1.outbox")
	srv, rec := startSim(t, nil)
	// The stored jobs carry an Extra member "LABELNAME": "x", which the simulator, decoding
	// as encoding/json does, takes for the label's name.
	if err := newClient(t, srv.URL).Labels.Put(context.Background(), "x", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	var changes changeLog
	ob, err := Open(path, newClient(t, srv.URL), WithRetryInterval(10*time.Millisecond), WithStateChange(changes.add))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	all, err := ob.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]State{
		"v1-sent": Sent, "v1-rejected": Rejected, "v1-unknown": Unknown, "v1-sending": Unknown,
		"v1-cancelled": Cancelled, "v1-pending1": Pending, "v1-pending2": Pending, "v1-pending3": Pending,
	}
	if len(all) != len(want) {
		t.Errorf("%d entries: %v", len(all), ids(all))
	}
	for _, e := range all {
		if e.State != want[e.ID] || e.Kind != KindPrintJob || e.Job.LabelName != "L" || e.Job.Extra["LABELNAME"] == nil {
			t.Errorf("%s: %s, kind %v, job %+v", e.ID, e.State, e.Kind, e.Job)
		}
	}
	if e, _ := ob.Get("v1-sent"); string(e.Response) != `{"printer":"line1"}` || e.Attempts != 1 {
		t.Errorf("v1-sent: %s, %d attempts", e.Response, e.Attempts)
	}
	running(t, ob)
	for _, id := range []string{"v1-pending1", "v1-pending2", "v1-pending3"} {
		if e, err := ob.Wait(context.Background(), id); err != nil || e.State != Sent {
			t.Errorf("%s: %s (%s), %v", id, e.State, e.Error, err)
		}
	}
	// pending2 takes the single-printer path, beside line1's queue.
	got := slices.DeleteFunc(rec.received(), func(d string) bool { return d == "pending2" })
	if !slices.Equal(got, []string{"pending1", "pending3"}) {
		t.Errorf("line1 received %v", got)
	}
	if c := rec.counts(); len(c) != 3 || c["pending2"] != 1 {
		t.Errorf("received %v; only the three pending ones may go out, once each", c)
	}
	// The entry Open turned Unknown is told to the owner, first of all.
	waitFor(t, "the changes", func() bool { return len(changes.get()) >= 7 })
	if first := changes.get()[0]; first.ID != "v1-sending" || first.State != Unknown {
		t.Errorf("first change: %s %s", first.ID, first.State)
	}
	if f := format(t, ob); f != formatVersion {
		t.Errorf("format after opening: %q", f)
	}
	// A new entry of another kind, in the upgraded file.
	enqueue(t, ob, Intent{ID: "new-deselect", Printer: "line1", Kind: KindDeselect})
	if e, err := ob.Wait(context.Background(), "new-deselect"); err != nil || e.State != Sent {
		t.Errorf("new-deselect: %s, %v", e.State, err)
	}
}

func copyFile(t *testing.T, from string) string {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), filepath.Base(from))
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// format reads the file's format mark.
func format(t *testing.T, ob *Outbox) string {
	t.Helper()
	var f string
	if err := ob.store.(*boltStore).db.View(func(tx *bolt.Tx) error {
		f = string(tx.Bucket(bucketMeta).Get(keyFormat))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}
