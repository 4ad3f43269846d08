package outbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

const pgCrashQueue = "crash"

// pgRunChild is a runner of the PostgreSQL crash test: it delivers the queue until its stdin
// closes. The parent kills it while it holds lanes.
func pgRunChild(dsn, url string) error {
	c, err := labelprinter.NewClient(url, labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ob, err := OpenPostgres(ctx, dsn, pgCrashQueue, c, WithLeaseTTL(time.Second), WithRetryInterval(5*time.Millisecond))
	if err != nil {
		return err
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	fmt.Println("ready")
	err = ob.Run(ctx)
	if cerr := ob.Close(); err == nil {
		err = cerr
	}
	return err
}

// pgRunner is a runner process of the crash test.
type pgRunner struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

func startPGRunner(t *testing.T, dsn, url string) *pgRunner {
	t.Helper()
	cmd := childCommand("pgrun", dsn, url)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &pgRunner{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("runner: %q, %v", line, err)
	}
	go func() { r.done <- cmd.Wait() }()
	return r
}

// TestPostgresCrashRunners: three runner processes deliver one queue of four printers while
// four producers enqueue 300 intents; the runner holding a lane is SIGKILLed at random
// moments, at least six times, and restarted each time. No intent reaches its printer twice,
// every one is settled (Sent, or Unknown: at most one per lane a killed runner held), and
// each printer receives each producer's intents in the order they were enqueued.
func TestPostgresCrashRunners(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	if testing.Short() {
		t.Skip("a crash test of a few seconds")
	}
	const (
		producers   = 4
		perProducer = 75
		minKills    = 6
	)
	dsn := pgtest.DSN(t)
	printers := []string{"p1", "p2", "p3", "p4"}
	srv, rec := startSimWith(t, nil, printers...)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0x7067))
	randN := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }
	// A print takes a moment, so that a kill often finds a request on its way.
	rec.setOnJob(func(_ string, serve func()) bool {
		time.Sleep(time.Duration(randN(3)) * time.Millisecond)
		serve()
		return true
	})
	// The tables exist before the runners start, so their first looks find the queue.
	openPG(t, dsn, pgCrashQueue, nil).Close()

	runners := make([]*pgRunner, 3)
	for i := range runners {
		runners[i] = startPGRunner(t, dsn, srv.URL)
	}
	defer func() {
		for _, r := range runners {
			_ = r.stdin.Close()
			select {
			case err := <-r.done:
				if err != nil {
					t.Errorf("runner: %v", err)
				}
			case <-time.After(15 * time.Second):
				_ = r.cmd.Process.Kill()
				<-r.done
				t.Error("a runner did not stop")
			}
		}
	}()

	var wg sync.WaitGroup
	producing := make(chan struct{})
	for k := range producers {
		ob := openPG(t, dsn, pgCrashQueue, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				p := printers[(k+i)%len(printers)]
				id := fmt.Sprintf("%s-k%d-%03d", p, k, i)
				if _, err := ob.Enqueue(context.Background(), Intent{ID: id, Printer: p, Job: job(id)}); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(20+randN(40)) * time.Millisecond)
			}
		}()
	}
	go func() { wg.Wait(); close(producing) }()

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// holders returns the runners that hold a live lease, and the lanes each holds.
	holders := func() map[int][]string {
		rows, err := conn.Query(ctx, `SELECT owner, printer FROM labelprinter_outbox_lanes
			WHERE queue = $1 AND owner <> '' AND lease_until > now()`, pgCrashQueue)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int][]string{}
		for rows.Next() {
			var owner, printer string
			if err := rows.Scan(&owner, &printer); err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(owner, "/")
			pid, _ := strconv.Atoi(parts[len(parts)-2])
			out[pid] = append(out[pid], printer)
		}
		return out
	}

	kills, heldByKilled := 0, 0
	start := time.Now()
	for done := false; !done || kills < minKills; {
		select {
		case <-producing:
			done = true
		default:
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("only %d kills in a minute", kills)
		}
		time.Sleep(time.Duration(150+randN(350)) * time.Millisecond)
		held := holders()
		var victim int
		for i, r := range runners {
			if len(held[r.cmd.Process.Pid]) > 0 && (victim == 0 || randN(2) == 0) {
				victim = i + 1
			}
		}
		if victim == 0 {
			continue
		}
		r := runners[victim-1]
		heldByKilled += len(held[r.cmd.Process.Pid])
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
		kills++
		runners[victim-1] = startPGRunner(t, dsn, srv.URL)
	}

	watcher := openPG(t, dsn, pgCrashQueue, nil)
	var entries []Entry
	waitFor(t, "every intent settled", func() bool {
		entries, err = watcher.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != producers*perProducer {
			return false
		}
		for _, e := range entries {
			if !e.State.settled() {
				return false
			}
		}
		return true
	})
	received := rec.counts()
	byState := map[State]int{}
	for _, e := range entries {
		byState[e.State]++
		n := received[e.ID]
		switch {
		case n > 1:
			t.Errorf("%s reached its printer %d times", e.ID, n)
		case e.State == Sent && n != 1:
			t.Errorf("%s is Sent but reached its printer %d times", e.ID, n)
		case e.State != Sent && e.State != Unknown:
			t.Errorf("%s ended %s (%s)", e.ID, e.State, e.Error)
		}
	}
	if byState[Unknown] > heldByKilled {
		t.Errorf("%d Unknown, more than the %d lanes the killed runners held", byState[Unknown], heldByKilled)
	}
	// Each printer has each producer's intents in enqueue order.
	last := map[string]string{}
	for _, d := range rec.received() {
		key := d[:strings.LastIndex(d, "-")]
		if d <= last[key] {
			t.Errorf("%s after %s", d, last[key])
		}
		last[key] = d
	}
	keys := make([]string, 0, len(byState))
	for s := range byState {
		keys = append(keys, string(s))
	}
	sort.Strings(keys)
	t.Logf("%d intents from %d producers, 3 runners, %d SIGKILLs of a runner holding lanes (%d lanes held by them), in %v: %d sent, %d unknown, 0 printed twice",
		len(entries), producers, kills, heldByKilled, time.Since(start).Round(time.Millisecond), byState[Sent], byState[Unknown])
}

// TestPostgresPausedRunner: a runner is stopped (SIGSTOP, as a long pause of a VM or the
// collector would) while its request is at the printer; its lease runs out and another Run
// takes the lane, turning that entry Unknown and delivering the next ones. When the paused
// runner goes on, its answer changes nothing and it sends nothing more: every job reaches the
// printer once.
func TestPostgresPausedRunner(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	openPG(t, dsn, pgCrashQueue, nil).Close()
	held := make(chan struct{})
	release := make(chan struct{})
	rec.setOnJob(func(desc string, serve func()) bool {
		if desc == "first" {
			close(held)
			<-release
		}
		serve()
		return true
	})
	producer := openPG(t, dsn, pgCrashQueue, nil)
	for _, id := range []string{"first", "second", "third"} {
		enqueue(t, producer, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	paused := startPGRunner(t, dsn, srv.URL)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the first job did not arrive")
	}
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	other := openPG(t, dsn, pgCrashQueue, newClient(t, srv.URL), WithLeaseTTL(time.Second))
	running(t, other)
	if e, err := other.Wait(context.Background(), "third"); err != nil || e.State != Sent {
		t.Fatalf("third: %v %v", e.State, err)
	}
	t.Logf("the lane was delivered again %v after the pause", time.Since(start).Round(time.Millisecond))
	if e, _ := other.Get("first"); e.State != Unknown {
		t.Errorf("first: %s, want unknown", e.State)
	}
	close(release)
	_ = paused.cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(1500 * time.Millisecond) // the paused runner's answer, and a look at the lanes
	_ = paused.stdin.Close()
	t0 := time.Now()
	if err := <-paused.done; err != nil {
		t.Errorf("paused runner: %v", err)
	}
	t.Logf("stopped in %v", time.Since(t0))
	if e, _ := other.Get("first"); e.State != Unknown {
		t.Errorf("first after the paused runner went on: %s", e.State)
	}
	for d, n := range rec.counts() {
		if n != 1 {
			t.Errorf("%s reached the printer %d times", d, n)
		}
	}
	// In the order they reached the printer (the first one's answer came last).
	if got := rec.sentPosts(); !slices.Equal(got, []string{"printers/line1/printJob first", "printers/line1/printJob second", "printers/line1/printJob third"}) {
		t.Errorf("reached the printer: %q", got)
	}
}
