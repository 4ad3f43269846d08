package mqttbridge

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// abortPlant is a simulator whose POST requests are timed, for the tests of abortPrint.
type abortPlant struct {
	*plant
	mu    sync.Mutex
	posts []posted
}

type posted struct {
	path string
	at   time.Time
}

func startAbortPlant(t *testing.T, printers ...string) *abortPlant {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := &abortPlant{plant: &plant{t: t, URL: "http://" + ln.Addr().String(), Sim: printersim.New(printersim.WithPrinters(printers...))}}
	srv := printersim.Serve(ln, ap.Sim, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				ap.mu.Lock()
				ap.posts = append(ap.posts, posted{r.URL.Path, time.Now()})
				ap.mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	})
	t.Cleanup(srv.Close)
	return ap
}

// times returns when the POSTs to printer's endpoint (abortPrint, printJob, trigger) arrived.
func (ap *abortPlant) times(printer, endpoint string) []time.Time {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	var out []time.Time
	for _, p := range ap.posts {
		if p.path == "/api/v3/printers/"+printer+"/"+endpoint {
			out = append(out, p.at)
		}
	}
	return out
}

func (ap *abortPlant) abortTimes() []time.Time { return ap.times("p1", "abortPrint") }

// queuedJobCmd is a printJob whose job goes behind those in the printer's queue.
func queuedJobCmd(id string) map[string]any {
	j := job(id)
	j["queue"] = true
	return map[string]any{"id": id, "job": j}
}

// pgProxy returns a fault proxy to the test's database and the DSN that goes through it.
func pgProxy(t *testing.T, dsn string) (*faultproxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skip("the test's database is not named by a postgres:// URL with a host, which the proxy needs")
	}
	px := faultproxy.Start(t, u.Host)
	u.Host = px.Addr()
	return px, u.String()
}

// pairMember is a bridge of a pair in this process, with its own link to the database.
func pairMember(t *testing.T, bk testBroker, pl *plant, dsn string, ttl time.Duration, log *slog.Logger) (*Bridge, *running) {
	t.Helper()
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.Broker.ClientID = "pair-" + strings.NewReplacer("/", "-", "#", "-").Replace(t.Name())
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: ttl}
	if log == nil && os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var opts []Option
	if log != nil {
		opts = append(opts, WithLogger(log))
	}
	b, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b, runBridge(t, b)
}

// returned waits for r's Run to return and gives its error; r is stopped for good.
func (r *running) returned(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.cancel()
		r.cancel = nil
		return err
	case <-time.After(waitLimit):
		t.Fatal("Run did not return")
		return nil
	}
}

// TestPairFencedAbortPrint: the printer answers abortPrint 503 with Retry-After, which the SDK
// retries; meanwhile the active bridge's link to the database is cut, so it cannot renew its
// lease. It stops at its fence deadline, and its abortPrint with it: no retry of it reaches
// the printer after the deadline. The standby takes the lease, answers the redelivered
// abortPrint duplicate (unknown), and sends the next two jobs; once the partition and the
// printer heal, those jobs are still in the printer's queue.
func TestPairFencedAbortPrint(t *testing.T) {
	dsn := pgtest.DSN(t)
	eachBroker(t, func(t *testing.T, bk testBroker) { testPairFencedAbortPrint(t, bk, dsn) })
}

func testPairFencedAbortPrint(t *testing.T, bk testBroker, dsn string) {
	const ttl = 2 * time.Second
	ap := startAbortPlant(t, "p1")
	pxA, dsnA := pgProxy(t, dsn)
	_, dsnB := pgProxy(t, dsn)
	w := watch(t, bk.URL(), prefix+"/#")
	logA := &logTimes{}
	a, runA := pairMember(t, bk, ap.plant, dsnA, ttl, slog.New(logA))
	w.waitOnline(1)
	_, runB := pairMember(t, bk, ap.plant, dsnB, ttl, nil)
	time.Sleep(300 * time.Millisecond) // the standby has looked at the lease
	s := newSender(t, bk.URL())
	s.send(cmdTopic("p1", "printJob"), queuedJobCmd("q0001"))
	w.waitStates(resultTopic("p1"), "q0001", StateQueued, StateSent)

	// Each abortPrint is answered 503, Retry-After 3 s: the SDK retries it, abortPrint being
	// idempotent.
	ap.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/abortPrint", Status: 503, RetryAfter: "3"})
	s.send(cmdTopic("p1", "abortPrint"), map[string]any{"id": "a0001"})
	eventually(t, "the abortPrint at the printer", func() bool { return len(ap.abortTimes()) > 0 })
	pxA.Set(faultproxy.Blackhole)
	cut := time.Now()

	// The standby takes over once the lease ran out, and the broker hands it the abortPrint
	// the fenced bridge never acknowledged.
	w.waitOnline(2)
	tookOver := time.Now()
	eventually(t, "the standby's answer to the abortPrint", func() bool {
		for _, r := range w.results(resultTopic("p1")) {
			if r.ID == "a0001" && r.State == StateDuplicate {
				return true
			}
		}
		return false
	})
	for _, r := range w.results(resultTopic("p1")) {
		if r.ID == "a0001" && r.State == StateDuplicate && r.Current != StateUnknown {
			t.Errorf("the standby answered the abortPrint duplicate with current %q, want unknown", r.Current)
		}
	}
	for _, id := range []string{"q0002", "q0003"} {
		s.send(cmdTopic("p1", "printJob"), queuedJobCmd(id))
		w.waitStates(resultTopic("p1"), id, StateQueued, StateSent)
	}
	if n := ap.Sim.QueueLength("p1"); n != 3 {
		t.Fatalf("the printer's queue holds %d jobs after the standby sent two, want 3", n)
	}
	// The printer and the partition heal.
	ap.Sim.ClearFaults()
	pxA.Set(faultproxy.Pass)
	healed := time.Now()
	if err := runA.returned(t); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the fenced bridge's Run returned %v, want ErrLeaseLost", err)
	}
	// Past the time of the SDK's next retry; Run has returned, so nothing of the fenced
	// bridge runs any more.
	time.Sleep(time.Until(ap.abortTimes()[0].Add(3500 * time.Millisecond)))
	deadline := a.pair.current().Deadline()
	// The fenced bridge says what became of its abortPrint: one request, written and answered
	// 503; the retry never begun.
	if line, ok := logA.find("the bridge lease ended while an abortPrint was being sent; it is not sent again"); !ok {
		t.Error("the fenced bridge did not log that its abortPrint was cut off")
	} else if got := attrs(line, "requests", "written", "last_request"); got != "1 1 written" {
		t.Errorf("the fenced bridge logged requests, written, last_request = %s; want 1 1 written", got)
	}
	// The fenced bridge answers nothing: a result (failed, with the lease's error) would say
	// less than unknown, and had the command acknowledged, so that the broker could keep it
	// from the standby.
	for _, r := range w.results(resultTopic("p1")) {
		if r.ID == "a0001" && r.State != StateDuplicate {
			t.Errorf("the abortPrint was answered %s (%s); want only the standby's duplicate", r.State, r.Error)
		}
	}
	if n := ap.Sim.QueueLength("p1"); n != 3 {
		t.Errorf("the printer's queue holds %d jobs after the partition healed, want 3: the fenced bridge's abortPrint went out late", n)
	}
	for i, at := range ap.abortTimes() {
		if at.After(deadline) {
			t.Errorf("abortPrint request %d reached the printer %v after the fenced bridge's deadline (%v after the cut; the standby took over %v after it)",
				i+1, at.Sub(deadline).Round(time.Millisecond), at.Sub(cut).Round(time.Millisecond), tookOver.Sub(cut).Round(time.Millisecond))
		}
	}
	t.Logf("database link cut: the fenced bridge's deadline %v later, the standby online %v later, healed %v later; %d abortPrint requests",
		deadline.Sub(cut).Round(time.Millisecond), tookOver.Sub(cut).Round(time.Millisecond), healed.Sub(cut).Round(time.Millisecond), len(ap.abortTimes()))
	runB.stop(t)
}

// logTimes is a slog handler that records when each message was logged.
type logTimes struct {
	mu   sync.Mutex
	msgs []slog.Record
}

func (l *logTimes) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTimes) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Clone())
	l.mu.Unlock()
	if os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		_ = slog.NewTextHandler(os.Stderr, nil).Handle(context.Background(), r)
	}
	return nil
}
func (l *logTimes) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logTimes) WithGroup(string) slog.Handler      { return l }

// find returns the first record of msg.
func (l *logTimes) find(msg string) (slog.Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.msgs {
		if r.Message == msg {
			return r, true
		}
	}
	return slog.Record{}, false
}

// attrs returns the values of the named attributes of r, space separated.
func attrs(r slog.Record, names ...string) string {
	vals := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { vals[a.Key] = a.Value.String(); return true })
	var out []string
	for _, n := range names {
		out = append(out, vals[n])
	}
	return strings.Join(out, " ")
}

// first returns when msg was first logged.
func (l *logTimes) first(msg string) (time.Time, bool) {
	r, ok := l.find(msg)
	return r.Time, ok
}

// TestPairStalledDatabase: with a 2 s lease, the database stops answering both bridges for
// 4 s. The active one cannot renew and stops at its fence deadline (Run returns
// ErrLeaseLost). The standby's acquire, sent during the stall, is answered after it: the
// lease is its own by then, but the answer is too late to be certain of, so it renews at once
// and acts only after that; it does not give up and exit. It becomes active after the first
// bridge's deadline, and it answers commands.
func TestPairStalledDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	eachBroker(t, func(t *testing.T, bk testBroker) { testPairStalledDatabase(t, bk, dsn) })
}

func testPairStalledDatabase(t *testing.T, bk testBroker, dsn string) {
	const (
		ttl   = 2 * time.Second
		stall = 4 * time.Second
	)
	pl := startPlant(t, "p1")
	px, dsnP := pgProxy(t, dsn)
	w := watch(t, bk.URL(), prefix+"/#")
	a, runA := pairMember(t, bk, pl, dsnP, ttl, nil)
	w.waitOnline(1)
	logB := &logTimes{}
	_, runB := pairMember(t, bk, pl, dsnP, ttl, slog.New(logB))
	time.Sleep(300 * time.Millisecond) // the standby has looked at the lease
	s := newSender(t, bk.URL())
	s.send(cmdTopic("p1", "printJob"), printJobCmd("before"))
	w.waitStates(resultTopic("p1"), "before", StateQueued, StateSent)

	px.Set(faultproxy.Freeze)
	frozen := time.Now()
	time.Sleep(stall)
	px.Set(faultproxy.Pass)
	if err := runA.returned(t); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the bridge whose renewals stalled: Run returned %v, want ErrLeaseLost", err)
	}
	deadlineA := a.pair.current().Deadline()
	eventually(t, "the standby online", func() bool {
		select {
		case err := <-runB.done:
			runB.cancel = nil
			t.Fatalf("the bridge that took the lease during the stall exited: %v", err)
		default:
		}
		return w.onlines() >= 2
	})
	activeB, ok := logB.first("took the bridge lease; active")
	if !ok {
		t.Fatal("the standby is online without having logged that it took the lease")
	}
	if _, late := logB.first("took the bridge lease from a late answer; renewing it before acting"); !late {
		t.Log("the standby's acquire was not answered late this time: the stall did not reach it")
	}
	if !activeB.After(deadlineA) {
		t.Errorf("the standby became active %v before the first bridge's fence deadline: both acted at once",
			deadlineA.Sub(activeB))
	}
	// It stays: a lease of 2 s is renewed four times over, and commands are answered.
	time.Sleep(2 * ttl)
	select {
	case err := <-runB.done:
		runB.cancel = nil
		t.Fatalf("the bridge that took the lease during the stall exited: %v", err)
	default:
	}
	s.send(cmdTopic("p1", "printJob"), printJobCmd("after"))
	w.waitStates(resultTopic("p1"), "after", StateQueued, StateSent)
	t.Logf("database stalled %v: the first bridge's deadline %v after the stall began, the standby active %v after it",
		stall, deadlineA.Sub(frozen).Round(time.Millisecond), activeB.Sub(frozen).Round(time.Millisecond))
	runB.stop(t)
}

// TestPairLeaseTakenCutsAbortPrint: while the printer answers the active bridge's abortPrint
// 503 with Retry-After 3 s, another owner takes the lease row (as a standby does once the
// lease ran out). The bridge's next renewal finds it gone: the abortPrint ends at once with
// the lease, its retry never reaches the printer, and Run returns ErrLeaseLost without
// waiting for it.
func TestPairLeaseTakenCutsAbortPrint(t *testing.T) {
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	ap := startAbortPlant(t, "p1")
	w := watch(t, bk.URL(), prefix+"/#")
	b, run := pairMember(t, bk, ap.plant, dsn, 2*time.Second, nil)
	w.waitOnline(1)
	ap.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/abortPrint", Status: 503, RetryAfter: "3"})
	newSender(t, bk.URL()).send(cmdTopic("p1", "abortPrint"), map[string]any{"id": "a0001"})
	eventually(t, "the abortPrint at the printer", func() bool { return len(ap.abortTimes()) > 0 })
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE labelprinter_mqtt_bridges SET owner = 'another', lease_until = now() + interval '1 hour'
		WHERE client_id = $1`, b.cfg.Broker.ClientID); err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	if err := run.returned(t); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Run returned %v, want ErrLeaseLost", err)
	}
	returned := time.Since(taken)
	ap.Sim.ClearFaults()
	// Past the time of the SDK's retry.
	time.Sleep(time.Until(ap.abortTimes()[0].Add(3500 * time.Millisecond)))
	if n := len(ap.abortTimes()); n != 1 {
		t.Errorf("%d abortPrint requests reached the printer, want 1: the retry went out after the lease was taken", n)
	}
	t.Logf("lease taken: Run returned %v later", returned.Round(time.Millisecond))
}
