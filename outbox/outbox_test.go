package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
	bolt "go.etcd.io/bbolt"
)

func TestEnqueueIsIdempotent(t *testing.T) { eachStore(t, testEnqueueIsIdempotent) }

func testEnqueueIsIdempotent(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	first := enqueue(t, ob, Intent{ID: "order-1", Printer: "line1", Job: job("first")})
	if first.State != Pending || first.Attempts != 0 || first.Enqueued.IsZero() || first.ExpireAfter != 24*time.Hour {
		t.Fatalf("first entry: %+v", first)
	}
	before := ob.commits.Load()
	again := enqueue(t, ob, Intent{ID: "order-1", Printer: "line1", Job: job("second")})
	if !reflect.DeepEqual(again, first) {
		t.Errorf("second Enqueue returned\n%+v\nwant the first\n%+v", again, first)
	}
	if n := ob.commits.Load() - before; n != 0 && !shared(ob) {
		t.Errorf("a repeated ID cost %d commits", n)
	}
	// Whatever its state: cancelled, then enqueued again.
	if err := ob.Cancel("order-1"); err != nil {
		t.Fatal(err)
	}
	if e := enqueue(t, ob, Intent{ID: "order-1", Printer: "line1", Job: job("third")}); e.State != Cancelled || e.Job.Description != "first" {
		t.Errorf("after Cancel: %s %q", e.State, e.Job.Description)
	}
	gen := enqueue(t, ob, Intent{Job: job("generated")})
	if gen.ID == "" || gen.ID == "order-1" {
		t.Errorf("generated ID %q", gen.ID)
	}
	all, err := ob.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "order-1" || all[1].ID != gen.ID {
		t.Errorf("List: %v", ids(all))
	}
}

// TestEnqueueConcurrentSameID: concurrent Enqueues of one ID, batched into the same commits,
// store it once.
func TestEnqueueConcurrentSameID(t *testing.T) { eachStore(t, testEnqueueConcurrentSameID) }

func testEnqueueConcurrentSameID(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	var wg sync.WaitGroup
	results := make([]Entry, 32)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprintf("id-%d", i%4), Job: job(fmt.Sprint(i))})
			if err != nil {
				t.Error(err)
			}
			results[i] = e
		}()
	}
	wg.Wait()
	all, err := ob.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("%d entries, want 4: %v", len(all), ids(all))
	}
	for _, r := range results {
		e, _ := ob.Get(r.ID)
		if !reflect.DeepEqual(r, e) {
			t.Errorf("Enqueue returned %+v, the file holds %+v", r, e)
		}
	}
}

func TestEnqueueRefusesBadInput(t *testing.T) { eachStore(t, testEnqueueRefusesBadInput) }

func testEnqueueRefusesBadInput(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		in   Intent
	}{
		{"empty job", context.Background(), Intent{ID: "a"}},
		{"job without label", context.Background(), Intent{ID: "a", Job: labelprinter.PrintJob{Copies: 2}}},
		{"negative copies", context.Background(), Intent{ID: "a", Job: labelprinter.PrintJob{LabelName: "L", Copies: -1}}},
		{"printer ..", context.Background(), Intent{ID: "a", Printer: "..", Job: job("x")}},
		{"printer with newline", context.Background(), Intent{ID: "a", Printer: "line\n1", Job: job("x")}},
		{"printer not UTF-8", context.Background(), Intent{ID: "a", Printer: "\xff", Job: job("x")}},
		{"ID with control character", context.Background(), Intent{ID: "a\x1b[2J", Job: job("x")}},
		{"ID too long", context.Background(), Intent{ID: strings.Repeat("x", 257), Job: job("x")}},
		{"negative ExpireAfter", context.Background(), Intent{ID: "a", Job: job("x"), ExpireAfter: -time.Second}},
		{"nil context", nil, Intent{ID: "a", Job: job("x")}},
	}
	for _, tc := range cases {
		if _, err := ob.Enqueue(tc.ctx, tc.in); !isInvalid(err) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	if _, err := ob.Enqueue(cancelled, Intent{ID: "a", Job: job("x")}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if all, _ := ob.List(); len(all) != 0 {
		t.Errorf("bad input stored %v", ids(all))
	}
	if _, err := ob.List("bogus"); !isInvalid(err) {
		t.Errorf("List(bogus): %v", err)
	}
}

// TestPrinterNamesAgreeWithSDK holds checkPrinter to the SDK: a name Enqueue accepts is one
// PrintJob accepts, so a job never fails on its printer name when it is due.
func TestPrinterNamesAgreeWithSDK(t *testing.T) {
	srv, _ := startSim(t, nil)
	c := newClient(t, srv.URL)
	before := srv.Sim.TotalRequests()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	j := job("x")
	for _, name := range []string{"line1", "a/b", "a b", "ü", ".", "..", "...", "a\x00b", "a\nb", "\x7f", "\xff\xfe", "a%2Fb", "?#"} {
		_, sdkErr := c.Printers.PrintJob(cancelled, name, &j)
		sdkRefuses := isInvalid(sdkErr)
		if ours := checkPrinter(name) != nil; ours != sdkRefuses {
			t.Errorf("printer %q: outbox refuses %v, SDK refuses %v (%v)", name, ours, sdkRefuses, sdkErr)
		}
	}
	if n := srv.Sim.TotalRequests() - before; n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestJobFields holds the member names decodeJob knows to PrintJob's own JSON tags.
func TestJobFields(t *testing.T) {
	var tags []string
	rt := reflect.TypeFor[labelprinter.PrintJob]()
	for i := range rt.NumField() {
		tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	if !slices.Equal(tags, jobFields) {
		t.Errorf("PrintJob's members %v, decodeJob knows %v", tags, jobFields)
	}
}

// TestJobRoundTrip: what is enqueued comes back from the file, and is sent, byte for byte,
// Extra keys that differ from a field only in case included.
func TestJobRoundTrip(t *testing.T) {
	j := labelprinter.PrintJob{
		TableName: "T", LabelColumn: "Label", KeyColumn: "SKU", Key: "S1", Copies: 3, CopiesColumn: "N",
		Queue: labelprinter.Ptr(false), Freeze: labelprinter.Ptr(true), FirstRow: 1, RowCount: 2,
		PrintedColumn: "P", PrintDelay: 1.5, AutoPrintGap: 1e-7, AutoPrintInterval: 3e21,
		Checkpoint: labelprinter.Ptr(true), Description: "<&>", LabelData: json.RawMessage(`{ "a" : [1, 2] }`),
		Extra: map[string]any{"LABELNAME": "x", "big": uint64(12345678901234567890), "nested": map[string]any{"k": []int{1}}},
	}
	want, err := j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := openOutbox(t, nil)
	enqueue(t, ob, Intent{ID: "j", Job: j})
	e, err := ob.Get("j")
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Job.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("job from the file encodes to\n%s\nwant\n%s", got, want)
	}
}

func TestDeliveryInOrder(t *testing.T) { eachStore(t, testDeliveryInOrder) }

func testDeliveryInOrder(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	for i := range 5 {
		enqueue(t, ob, Intent{ID: fmt.Sprint("a", i), Printer: "line1", Job: job(fmt.Sprint("a", i))})
	}
	enqueue(t, ob, Intent{ID: "single", Job: job("single")}) // the single-printer path
	running(t, ob)
	for i := range 5 {
		e := waitState(t, ob, fmt.Sprint("a", i), Sent)
		if e.Attempts != 1 || e.Error != "" || !strings.Contains(string(e.Response), `"printer":"line1"`) {
			t.Errorf("a%d: attempts %d, error %q, response %s", i, e.Attempts, e.Error, e.Response)
		}
	}
	waitState(t, ob, "single", Sent)
	var line1 []string
	for _, d := range rec.received() {
		if d != "single" {
			line1 = append(line1, d)
		}
	}
	if want := []string{"a0", "a1", "a2", "a3", "a4"}; !slices.Equal(line1, want) {
		t.Errorf("line1 received %v, want %v", line1, want)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printJob"); n != 1 {
		t.Errorf("single-printer path received %d jobs", n)
	}
}

// TestRunWakesOnEnqueue: with a retry interval of an hour, only Enqueue's wake-up can make Run
// send a job enqueued while it sleeps.
func TestRunWakesOnEnqueue(t *testing.T) { eachStore(t, testRunWakesOnEnqueue) }

func testRunWakesOnEnqueue(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL), WithRetryInterval(time.Hour))
	running(t, ob)
	for i := range 3 {
		time.Sleep(5 * time.Millisecond) // let Run go back to sleep
		id := fmt.Sprint("w", i)
		enqueue(t, ob, Intent{ID: id, Printer: "line2", Job: job(id)})
		waitState(t, ob, id, Sent)
	}
}

// TestOfflinePrinterKeepsPending: a refused connection leaves the entry Pending with its
// attempts counted, holds back the later entries of that printer, and the job goes out once
// the printer is back, exactly once.
func TestOfflinePrinterKeepsPending(t *testing.T) { eachStore(t, testOfflinePrinterKeepsPending) }

func testOfflinePrinterKeepsPending(t *testing.T, st testStore) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now: every dial is refused
	ob := st.open(t, newClient(t, "http://"+addr))
	enqueue(t, ob, Intent{ID: "first", Printer: "line1", Job: job("first")})
	enqueue(t, ob, Intent{ID: "second", Printer: "line1", Job: job("second")})
	running(t, ob)
	waitFor(t, "two failed attempts", func() bool {
		e, _ := ob.Get("first")
		return e.Attempts >= 2
	})
	first, _ := ob.Get("first")
	if first.State != Pending && first.State != Sending {
		t.Fatalf("first: %s", first.State)
	}
	if !strings.Contains(first.Error, "refused") && first.State == Pending {
		t.Errorf("first's error: %q", first.Error)
	}
	if second, _ := ob.Get("second"); second.State != Pending || second.Attempts != 0 {
		t.Errorf("second went out behind an offline first: %s, %d attempts", second.State, second.Attempts)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	srv, rec := startSim(t, ln)
	waitState(t, ob, "first", Sent)
	waitState(t, ob, "second", Sent)
	if got := rec.received(); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("received %v", got)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 2 {
		t.Errorf("%d print jobs reached the printer, want 2", n)
	}
}

func TestNotNowIsRetried(t *testing.T) { eachStore(t, testNotNowIsRetried) }

func testNotNowIsRetried(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 2, Status: 503})
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printJob", Times: 1, Status: 429, RetryAfter: "0"})
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "busy", Printer: "line1", Job: job("busy")})
	enqueue(t, ob, Intent{ID: "limited", Job: job("limited")})
	running(t, ob)
	if e := waitState(t, ob, "busy", Sent); e.Attempts != 3 || e.Error != "" {
		t.Errorf("busy: %d attempts, error %q", e.Attempts, e.Error)
	}
	if e := waitState(t, ob, "limited", Sent); e.Attempts != 2 {
		t.Errorf("limited: %d attempts", e.Attempts)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 3 {
		t.Errorf("%d requests for busy, want 3", n)
	}
	if c := rec.counts(); c["busy"] != 1 || c["limited"] != 1 {
		t.Errorf("served %v", c)
	}
}

func TestRejected(t *testing.T) { eachStore(t, testRejected) }

func testRejected(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 400})
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "bad", Printer: "line1", Job: job("bad")})
	enqueue(t, ob, Intent{ID: "next", Printer: "line1", Job: job("next")})
	running(t, ob)
	if e := waitState(t, ob, "bad", Rejected); e.Attempts != 1 || !strings.Contains(e.Error, "400") {
		t.Errorf("bad: %d attempts, error %q", e.Attempts, e.Error)
	}
	enqueue(t, ob, Intent{ID: "nolabel", Printer: "line2", Job: labelprinter.PrintJob{LabelName: "missing"}})
	enqueue(t, ob, Intent{ID: "noprinter", Printer: "line9", Job: job("noprinter")})
	waitState(t, ob, "next", Sent)
	if e := waitState(t, ob, "nolabel", Rejected); !strings.Contains(e.Error, "404") {
		t.Errorf("nolabel: %q", e.Error)
	}
	waitState(t, ob, "noprinter", Rejected)
	if err := ob.Resend("bad"); !errors.Is(err, ErrWrongState) {
		t.Errorf("Resend of a rejected entry: %v", err)
	}
}

// TestLostAnswerIsUnknown: the printer takes the job and the answer is lost. The entry is
// Unknown after exactly one request, holds back nothing, and moves only by Resend or Cancel.
func TestLostAnswerIsUnknown(t *testing.T) { eachStore(t, testLostAnswerIsUnknown) }

func testLostAnswerIsUnknown(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Reset: printersim.ResetAfterRead})
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "lost", Printer: "line1", Job: job("lost")})
	enqueue(t, ob, Intent{ID: "after", Printer: "line1", Job: job("after")})
	running(t, ob)
	e := waitState(t, ob, "lost", Unknown)
	waitState(t, ob, "after", Sent)
	if e.Attempts != 1 || e.Error == "" {
		t.Errorf("lost: %d attempts, error %q", e.Attempts, e.Error)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 2 {
		t.Errorf("%d print jobs reached the printer, want 2 (lost once, after once)", n)
	}
	if q := srv.Sim.QueueLength("line1"); q != 2 {
		t.Errorf("queue %d: the lost job took effect once, after once", q)
	}
	time.Sleep(50 * time.Millisecond) // five retry intervals: nothing may move it
	if e, _ := ob.Get("lost"); e.State != Unknown || e.Attempts != 1 {
		t.Errorf("lost moved on its own: %s, %d attempts", e.State, e.Attempts)
	}

	if err := ob.Resend("lost"); err != nil {
		t.Fatal(err)
	}
	if e := waitState(t, ob, "lost", Sent); e.Attempts != 2 {
		t.Errorf("resent: %d attempts", e.Attempts)
	}
	if c := rec.counts(); c["lost"] != 2 {
		t.Errorf("after Resend the printer has lost %d times, want 2", c["lost"])
	}
}

func TestServerErrorIsUnknown(t *testing.T) { eachStore(t, testServerErrorIsUnknown) }

func testServerErrorIsUnknown(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	for _, status := range []int{500, 502} {
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: status})
	}
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Truncate: true})
	ob := st.open(t, newClient(t, srv.URL))
	for _, id := range []string{"e500", "e502", "truncated"} {
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	running(t, ob)
	for _, id := range []string{"e500", "e502", "truncated"} {
		if e := waitState(t, ob, id, Unknown); e.Attempts != 1 {
			t.Errorf("%s: %d attempts", id, e.Attempts)
		}
	}
	if err := ob.Cancel("e500"); err != nil {
		t.Fatal(err)
	}
	if e, _ := ob.Get("e500"); e.State != Cancelled {
		t.Errorf("cancelled unknown: %s", e.State)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 3 {
		t.Errorf("%d requests", n)
	}
}

// TestOtherPrintersGoOn: a printer that says "not now" holds back its own later entries and
// no one else's; when it is back its entries go out in order.
func TestOtherPrintersGoOn(t *testing.T) { eachStore(t, testOtherPrintersGoOn) }

func testOtherPrintersGoOn(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	rec.setDown("line1", true)
	ob := st.open(t, newClient(t, srv.URL))
	for _, id := range []string{"a1", "b1", "a2", "b2", "a3"} {
		p := map[byte]string{'a': "line1", 'b': "line2"}[id[0]]
		enqueue(t, ob, Intent{ID: id, Printer: p, Job: job(id)})
	}
	running(t, ob)
	waitState(t, ob, "b1", Sent)
	waitState(t, ob, "b2", Sent)
	waitFor(t, "a1 to fail twice", func() bool { e, _ := ob.Get("a1"); return e.Attempts >= 2 })
	for _, id := range []string{"a2", "a3"} {
		if e, _ := ob.Get(id); e.State != Pending || e.Attempts != 0 {
			t.Errorf("%s: %s with %d attempts while a1 waits", id, e.State, e.Attempts)
		}
	}
	rec.setDown("line1", false)
	for _, id := range []string{"a1", "a2", "a3"} {
		waitState(t, ob, id, Sent)
	}
	var line1 []string
	for _, d := range rec.received() {
		if d[0] == 'a' {
			line1 = append(line1, d)
		}
	}
	if !slices.Equal(line1, []string{"a1", "a2", "a3"}) {
		t.Errorf("line1 received %v", line1)
	}
}

func TestSendingBecomesUnknownOnOpen(t *testing.T) {
	srv, rec := startSim(t, nil)
	path := filepath.Join(t.TempDir(), "crash.outbox")
	ob, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, ob, Intent{ID: "inflight", Printer: "line1", Job: job("inflight")})
	enqueue(t, ob, Intent{ID: "waiting", Printer: "line1", Job: job("waiting")})
	// What a process that died after committing Sending leaves behind.
	if err := ob.change("inflight", func(r *record) error { r.State, r.Attempts = Sending, 1; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ob, err = Open(path, newClient(t, srv.URL), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	e, _ := ob.Get("inflight")
	if e.State != Unknown || e.Attempts != 1 || !strings.Contains(e.Error, "may or may not") {
		t.Errorf("after Open: %s, %d attempts, %q", e.State, e.Attempts, e.Error)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "id=inflight") {
		t.Errorf("no warning logged: %s", logs.String())
	}
	running(t, ob)
	waitState(t, ob, "waiting", Sent)
	if got := rec.received(); !slices.Equal(got, []string{"waiting"}) {
		t.Errorf("received %v; the Unknown one must not be sent", got)
	}
}

func TestExpiry(t *testing.T) { eachStore(t, testExpiry) }

func testExpiry(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	rec.setDown("line1", true)
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "head", Printer: "line1", Job: job("head")})
	enqueue(t, ob, Intent{ID: "stale", Printer: "line1", Job: job("stale"), ExpireAfter: 100 * time.Millisecond})
	enqueue(t, ob, Intent{ID: "instant", Printer: "line2", Job: job("instant"), ExpireAfter: time.Nanosecond})
	running(t, ob)
	if e := waitState(t, ob, "stale", Expired); e.Attempts != 0 || e.Error == "" {
		t.Errorf("stale: %d attempts, error %q", e.Attempts, e.Error)
	}
	waitState(t, ob, "instant", Expired)
	if e, _ := ob.Get("head"); e.State != Pending && e.State != Sending {
		t.Errorf("head: %s", e.State)
	}
	rec.setDown("line1", false)
	waitState(t, ob, "head", Sent)
	if got := rec.received(); !slices.Equal(got, []string{"head"}) {
		t.Errorf("received %v; expired entries must never be sent", got)
	}
	if err := ob.Cancel("stale"); !errors.Is(err, ErrWrongState) {
		t.Errorf("Cancel of an expired entry: %v", err)
	}
}

func TestCancelResendRules(t *testing.T) { eachStore(t, testCancelResendRules) }

func testCancelResendRules(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "p", Printer: "line1", Job: job("p")})
	if err := ob.Resend("p"); !errors.Is(err, ErrWrongState) {
		t.Errorf("Resend of a pending entry: %v", err)
	}
	if err := ob.Cancel("p"); err != nil {
		t.Fatal(err)
	}
	if err := ob.Cancel("p"); !errors.Is(err, ErrWrongState) {
		t.Errorf("second Cancel: %v", err)
	}
	enqueue(t, ob, Intent{ID: "s", Printer: "line1", Job: job("s")})
	running(t, ob)
	waitState(t, ob, "s", Sent)
	if e, _ := ob.Get("p"); e.State != Cancelled || e.Attempts != 0 {
		t.Errorf("cancelled entry: %s, %d attempts", e.State, e.Attempts)
	}
	for _, f := range []func(string) error{ob.Cancel, ob.Resend} {
		if err := f("s"); !errors.Is(err, ErrWrongState) {
			t.Errorf("on a sent entry: %v", err)
		}
		if err := f("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("on an unknown ID: %v", err)
		}
	}
	if _, err := ob.Get("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unknown ID: %v", err)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 1 {
		t.Errorf("%d requests; the cancelled entry must not be sent", n)
	}
}

func TestListByState(t *testing.T) { eachStore(t, testListByState) }

func testListByState(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	for _, id := range []string{"c", "a", "b"} {
		enqueue(t, ob, Intent{ID: id, Job: job(id)})
	}
	if err := ob.Cancel("a"); err != nil {
		t.Fatal(err)
	}
	pending, _ := ob.List(Pending)
	cancelled, _ := ob.List(Cancelled)
	both, _ := ob.List(Cancelled, Pending)
	if !slices.Equal(ids(pending), []string{"c", "b"}) || !slices.Equal(ids(cancelled), []string{"a"}) || !slices.Equal(ids(both), []string{"c", "a", "b"}) {
		t.Errorf("pending %v, cancelled %v, both %v", ids(pending), ids(cancelled), ids(both))
	}
	if none, _ := ob.List(Sent); none == nil || len(none) != 0 {
		t.Errorf("List(Sent) = %#v, want an empty slice", none)
	}
}

func TestPrune(t *testing.T) { eachStore(t, testPrune) }

func testPrune(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 500})
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "unknown", Printer: "line1", Job: job("u")})
	enqueue(t, ob, Intent{ID: "sent", Printer: "line1", Job: job("s")})
	enqueue(t, ob, Intent{ID: "rejected", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "missing"}})
	enqueue(t, ob, Intent{ID: "expired", Printer: "line2", Job: job("e"), ExpireAfter: time.Nanosecond})
	enqueue(t, ob, Intent{ID: "cancelled", Job: job("c")})
	if err := ob.Cancel("cancelled"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- ob.Run(ctx) }()
	waitState(t, ob, "unknown", Unknown)
	waitState(t, ob, "sent", Sent)
	waitState(t, ob, "rejected", Rejected)
	waitState(t, ob, "expired", Expired)
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	enqueue(t, ob, Intent{ID: "pending", Job: job("p")})

	if n, err := ob.Prune(time.Hour); err != nil || n != 0 {
		t.Errorf("Prune(1h) right away: %d, %v", n, err)
	}
	st.age(t, ob, 2*time.Hour)
	if n, err := ob.Prune(time.Hour); err != nil || n != 4 {
		t.Errorf("Prune(1h) two hours later: %d, %v; want 4", n, err)
	}
	left, _ := ob.List()
	if !slices.Equal(ids(left), []string{"unknown", "pending"}) {
		t.Errorf("left %v", ids(left))
	}
	if _, err := ob.Get("sent"); !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrPruned) {
		t.Errorf("pruned entry: %v", err)
	}
	if _, err := ob.Prune(-time.Second); !isInvalid(err) {
		t.Errorf("negative Prune: %v", err)
	}
}

// TestPruneKeepsIDs: an ERP re-sends an order whose entry was pruned; it is not printed again
// until ForgetIDs lets go of its ID.
func TestPruneKeepsIDs(t *testing.T) { eachStore(t, testPruneKeepsIDs) }

func testPruneKeepsIDs(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	running(t, ob)
	ctx := context.Background()
	enqueue(t, ob, Intent{ID: "order-4711/1", Printer: "line1", Job: job("order-4711/1")})
	if e, err := ob.Wait(ctx, "order-4711/1"); err != nil || e.State != Sent {
		t.Fatalf("%s, %v", e.State, err)
	}
	enqueue(t, ob, Intent{ID: "order-4711/2", Printer: "line1", Job: job("order-4711/2")})
	if _, err := ob.Wait(ctx, "order-4711/2"); err != nil {
		t.Fatal(err)
	}
	if n, err := ob.Prune(0); err != nil || n != 2 {
		t.Fatalf("Prune: %d, %v", n, err)
	}
	before := ob.commits.Load()
	_, err := ob.Enqueue(ctx, Intent{ID: "order-4711/1", Printer: "line1", Job: job("order-4711/1")})
	if !errors.Is(err, ErrPruned) || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "sent") {
		t.Errorf("Enqueue of a pruned ID: %v", err)
	}
	if n := ob.commits.Load() - before; n != 0 && !shared(ob) {
		t.Errorf("the refused Enqueue cost %d commits", n)
	}
	for _, f := range []func(string) error{ob.Cancel, ob.Resend} {
		if err := f("order-4711/1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Cancel/Resend of a pruned ID: %v", err)
		}
	}
	if _, err := ob.Wait(ctx, "order-4711/1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Wait on a pruned ID: %v", err)
	}
	if all, _ := ob.List(); len(all) != 0 {
		t.Errorf("List sees pruned entries: %v", ids(all))
	}

	// The IDs are in the file: they survive a restart.
	ob = st.reopen(t, ob, newClient(t, srv.URL))
	running(t, ob)
	if _, err := ob.Enqueue(ctx, Intent{ID: "order-4711/2", Printer: "line1", Job: job("order-4711/2")}); !errors.Is(err, ErrPruned) {
		t.Errorf("after reopening: %v", err)
	}

	if n, err := ob.ForgetIDs(time.Hour); err != nil || n != 0 {
		t.Errorf("ForgetIDs(1h) right away: %d, %v", n, err)
	}
	if _, err := ob.ForgetIDs(-time.Second); !isInvalid(err) {
		t.Errorf("negative ForgetIDs: %v", err)
	}
	time.Sleep(time.Millisecond) // the clock must move past the prune's time
	if n, err := ob.ForgetIDs(0); err != nil || n != 2 {
		t.Errorf("ForgetIDs(0): %d, %v", n, err)
	}
	// Forgotten: the same ID is a new order and is sent again, as ForgetIDs says.
	enqueue(t, ob, Intent{ID: "order-4711/1", Printer: "line1", Job: job("order-4711/1")})
	if e, err := ob.Wait(ctx, "order-4711/1"); err != nil || e.State != Sent {
		t.Errorf("after ForgetIDs: %s, %v", e.State, err)
	}
	if c := rec.counts(); c["order-4711/1"] != 2 || c["order-4711/2"] != 1 {
		t.Errorf("printed %v", c)
	}
}

// TestPruneFirstFormat: a file of the first format is pruned like any other and keeps the IDs.
func TestPruneFirstFormat(t *testing.T) {
	ob, err := Open(copyFile(t, "testdata/v1.outbox"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	if n, err := ob.Prune(0); err != nil || n != 3 { // sent, rejected, cancelled
		t.Fatalf("Prune: %d, %v", n, err)
	}
	for _, id := range []string{"v1-sent", "v1-rejected", "v1-cancelled"} {
		if _, err := ob.Enqueue(context.Background(), Intent{ID: id, Job: job(id)}); !errors.Is(err, ErrPruned) {
			t.Errorf("%s: %v", id, err)
		}
	}
	left, _ := ob.List()
	if !slices.Equal(ids(left), []string{"v1-unknown", "v1-sending", "v1-pending1", "v1-pending2", "v1-pending3"}) {
		t.Errorf("left %v", ids(left))
	}
}

func TestLockedInProcess(t *testing.T) {
	ob, path := openOutbox(t, nil)
	_, err := Open(path, nil)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error does not name the file: %v", err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

func TestNotAnOutbox(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	content := bytes.Repeat([]byte("not a database\n"), 1000)
	if err := os.WriteFile(text, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(text, nil); err == nil || !strings.Contains(err.Error(), "not an outbox file") {
		t.Errorf("text file: %v", err)
	}
	if got, _ := os.ReadFile(text); !bytes.Equal(got, content) {
		t.Error("Open changed a file that is not an outbox")
	}

	other := filepath.Join(dir, "other.db")
	db, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("users")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(other, nil); err == nil || !strings.Contains(err.Error(), "not an outbox file") {
		t.Errorf("another bbolt database: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "no", "such", "dir", "x"), nil); err == nil {
		t.Error("a path in a missing directory opened")
	}
	if _, err := Open("", nil); !isInvalid(err) {
		t.Errorf("empty path: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "x"), nil, WithRetryInterval(0)); !isInvalid(err) {
		t.Errorf("zero retry interval: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "x"), nil, WithLogger(nil)); !isInvalid(err) {
		t.Errorf("nil logger: %v", err)
	}
}

func TestRunNeedsClientAndRunsOnce(t *testing.T) { eachStore(t, testRunNeedsClientAndRunsOnce) }

func testRunNeedsClientAndRunsOnce(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	if err := ob.Run(context.Background()); !isInvalid(err) {
		t.Errorf("Run without a Client: %v", err)
	}
	srv, _ := startSim(t, nil)
	ob2 := st.open(t, newClient(t, srv.URL))
	running(t, ob2)
	waitFor(t, "Run to start", func() bool { ob2.mu.Lock(); defer ob2.mu.Unlock(); return ob2.running })
	if err := ob2.Run(context.Background()); err == nil {
		t.Error("a second Run started")
	}
}

// TestRunWithEndedContext sends nothing: a Run whose context has ended only returns.
func TestRunWithEndedContext(t *testing.T) { eachStore(t, testRunWithEndedContext) }

func testRunWithEndedContext(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "x", Printer: "line1", Job: job("x")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ob.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _ := ob.Get("x"); e.State != Pending || e.Attempts != 0 {
		t.Errorf("x: %s, %d attempts", e.State, e.Attempts)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 0 {
		t.Errorf("%d print jobs sent", n)
	}
}

// TestCloseStopsRun: Close ends Run, waits for it, and every later call fails cleanly.
func TestCloseStopsRun(t *testing.T) { eachStore(t, testCloseStopsRun) }

func testCloseStopsRun(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	ob := st.open(t, newClient(t, srv.URL))
	errc := make(chan error, 1)
	go func() { errc <- ob.Run(context.Background()) }()
	enqueue(t, ob, Intent{ID: "x", Printer: "line1", Job: job("x")})
	waitState(t, ob, "x", Sent)
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Errorf("Run after Close: %v", err)
	}
	if _, err := ob.Enqueue(context.Background(), Intent{Job: job("y")}); err == nil {
		t.Error("Enqueue after Close succeeded")
	}
	if _, err := ob.Get("x"); err == nil {
		t.Error("Get after Close succeeded")
	}
	if err := ob.Run(context.Background()); err == nil {
		t.Error("Run after Close succeeded")
	}
	if err := ob.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCommitsPerDelivery: Enqueue costs one commit, and delivery two (Sending, then the
// outcome), on top of the printJob itself.
func TestCommitsPerDelivery(t *testing.T) {
	srv, _ := startSim(t, nil)
	ob, _ := openOutbox(t, newClient(t, srv.URL))
	const n = 20
	start := ob.commits.Load()
	for i := range n {
		enqueue(t, ob, Intent{ID: fmt.Sprint(i), Printer: "line1", Job: job(fmt.Sprint(i))})
	}
	enqueued := ob.commits.Load()
	if got := enqueued - start; got != n {
		t.Errorf("%d sequential Enqueues made %d commits", n, got)
	}
	running(t, ob)
	for i := range n {
		waitState(t, ob, fmt.Sprint(i), Sent)
	}
	delivered := ob.commits.Load() - enqueued
	t.Logf("commits: %d to enqueue %d intents, %d to deliver them", enqueued-start, n, delivered)
	if delivered > 2*n {
		t.Errorf("delivering %d intents made %d commits, more than 2 each", n, delivered)
	}
	if got := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); got != n {
		t.Errorf("%d print jobs", got)
	}
}

func TestLogsEveryChange(t *testing.T) { eachStore(t, testLogsEveryChange) }

func testLogsEveryChange(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 503})
	var mu sync.Mutex
	var logs bytes.Buffer
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug})
	ob := st.open(t, newClient(t, srv.URL), WithLogger(slog.New(h)))
	enqueue(t, ob, Intent{ID: "x", Printer: "line1", Job: job("x")})
	running(t, ob)
	waitState(t, ob, "x", Sent)
	read := func() string { mu.Lock(); defer mu.Unlock(); return logs.String() }
	// The change is logged just after it is committed, so Get may see it first.
	waitFor(t, "the sent line", func() bool { return strings.Contains(read(), "outbox: sent") })
	out := read()
	for _, want := range []string{
		`msg="outbox: sending" id=x printer=line1 state=sending attempts=1`,
		`msg="outbox: pending" id=x printer=line1 state=pending attempts=1 error=`,
		`msg="outbox: sent" id=x printer=line1 state=sent attempts=2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestBackoff(t *testing.T) {
	o := &Outbox{retry: time.Second}
	for _, tc := range []struct {
		n          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, time.Second}, {2, 0, 2 * time.Second}, {3, 0, 4 * time.Second}, {7, 0, time.Minute},
		{100, 0, time.Minute}, {1, 10 * time.Second, 10 * time.Second}, {1, time.Hour, time.Minute},
	} {
		if got := o.backoff(tc.n, tc.retryAfter); got != tc.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", tc.n, tc.retryAfter, got, tc.want)
		}
	}
	long := &Outbox{retry: 2 * time.Minute}
	if got := long.backoff(3, 0); got != 2*time.Minute {
		t.Errorf("a 2 min interval backs off to %v", got)
	}
}

func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// TestRequestTimeoutIsRetried: 408 says the printer did not process the request, so the entry
// goes back to Pending and is sent again, like 429 and 503; 504, from a proxy that gave up
// waiting, leaves the outcome open.
func TestRequestTimeoutIsRetried(t *testing.T) { eachStore(t, testRequestTimeoutIsRetried) }

func testRequestTimeoutIsRetried(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 2, Status: 408})
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "slow", Printer: "line1", Job: job("slow")})
	running(t, ob)
	if e, err := ob.Wait(context.Background(), "slow"); err != nil || e.State != Sent || e.Attempts != 3 {
		t.Errorf("slow: %s after %d attempts, %v", e.State, e.Attempts, err)
	}
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/trigger", Times: 1, Status: 408})
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 504})
	enqueue(t, ob, Intent{ID: "t", Printer: "line1", Kind: KindTrigger})
	enqueue(t, ob, Intent{ID: "gateway", Printer: "line1", Job: job("gateway")})
	if e, err := ob.Wait(context.Background(), "t"); err != nil || e.State != Sent || e.Attempts != 2 {
		t.Errorf("trigger after a 408: %s after %d attempts (%s), %v", e.State, e.Attempts, e.Error, err)
	}
	if e, err := ob.Wait(context.Background(), "gateway"); err != nil || e.State != Unknown || e.Attempts != 1 {
		t.Errorf("504: %s after %d attempts, %v", e.State, e.Attempts, err)
	}
	if c := rec.counts(); c["slow"] != 1 {
		t.Errorf("served %v", c)
	}
}

// outcomeServerError is an error of the kind the SDK returns for a printJob answered 500, 502
// or 504: it matches both ErrOutcomeUnknown and ErrServer.
type outcomeServerError struct{ status int }

func (e outcomeServerError) Error() string { return fmt.Sprint("status ", e.status) }
func (e outcomeServerError) Is(target error) bool {
	return target == labelprinter.ErrOutcomeUnknown || target == labelprinter.ErrServer
}

func TestClassify(t *testing.T) {
	api := func(status int) error { return &labelprinter.APIError{StatusCode: status, Method: "POST", Path: "/p"} }
	for _, tc := range []struct {
		err  error
		want State
	}{
		{nil, Sent},
		{api(400), Rejected}, {api(404), Rejected}, {api(409), Rejected},
		{api(408), Pending}, {api(429), Pending}, {api(503), Pending},
		{api(500), Unknown}, {api(502), Unknown}, {api(504), Unknown}, {api(302), Unknown},
		{fmt.Errorf("wrapped: %w", api(408)), Pending},
		{outcomeServerError{500}, Unknown}, {fmt.Errorf("wrapped: %w", outcomeServerError{504}), Unknown},
		{&labelprinter.TransportError{Method: "POST", Path: "/p", MaybeSent: true, Err: errors.New("reset")}, Unknown},
		{&labelprinter.TransportError{Method: "POST", Path: "/p", Err: errors.New("refused")}, Pending},
		{&labelprinter.DecodeError{StatusCode: 200, Err: errors.New("bad")}, Sent},
		{&labelprinter.RedirectError{StatusCode: 307}, Unknown},
		{fmt.Errorf("%w: x", labelprinter.ErrInvalidArgument), Rejected},
	} {
		if got, _ := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

// TestDrain: Drain sends what is due and returns once nothing is in flight; a printer that
// is not there keeps its head Pending, and what is behind it, for the next run.
func TestDrain(t *testing.T) { eachStore(t, testDrain) }

func testDrain(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	rec.setDown("line2", true)
	ob := st.open(t, newClient(t, srv.URL), WithRetryInterval(time.Hour))
	ctx := context.Background()
	if err := ob.Drain(ctx); err != nil {
		t.Fatalf("Drain of an empty outbox: %v", err)
	}
	for _, id := range []string{"a1", "b1", "a2", "a3", "b2"} {
		p := map[byte]string{'a': "line1", 'b': "line2"}[id[0]]
		enqueue(t, ob, Intent{ID: id, Printer: p, Job: job(id)})
	}
	if err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		state    State
		attempts int
	}{"a1": {Sent, 1}, "a2": {Sent, 1}, "a3": {Sent, 1}, "b1": {Pending, 1}, "b2": {Pending, 0}}
	for id, w := range want {
		if e, _ := ob.Get(id); e.State != w.state || e.Attempts != w.attempts {
			t.Errorf("%s: %s after %d attempts, want %s after %d", id, e.State, e.Attempts, w.state, w.attempts)
		}
	}
	// Drained: another Drain right away finds nothing due (b1 waits out its hour) and sends nothing.
	before := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob")
	if err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob") - before; n != 0 {
		t.Errorf("a second Drain sent %d", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := ob.Drain(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Drain with an ended context: %v", err)
	}
	//lint:ignore SA1012 a nil context on purpose
	if err := ob.Drain(nil); !isInvalid(err) {
		t.Errorf("nil context: %v", err)
	}
}
