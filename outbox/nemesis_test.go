package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/nemesis"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// The nemesis: runner processes deliver one queue in PostgreSQL to a few printers while a
// schedule drawn from a seed composes faults on one run (each runner's links to PostgreSQL and
// to the printers are partitioned, frozen, reset and slowed through fault proxies; runners are
// paused, killed and restarted; PostgreSQL restarts), enqueuers add each printer's IDs in
// order and repeat themselves, and an operator resends the Unknown entries the printer's
// journal shows it never printed. A checker reads the printer's journal after every step of
// the schedule and, once every fault is healed, the outbox too:
//
//   - each ID is printed at most once, on its own printer;
//   - each printer prints its IDs in enqueue order (an ID the operator resent aside);
//   - every entry settles once the faults heal: Sent and printed once, or Unknown and printed
//     once (an Unknown the printer never printed is resent until it is Sent);
//   - every Enqueue and Resend returns, every ID enqueued is in the outbox once, and every
//     runner stops when asked.
//
// NEMESIS_SEED=n runs the schedule of seed n (the seed of a failure is in its message);
// NEMESIS_TIME=10m runs schedules of random seeds back to back for that long; NEMESIS_LOGDIR
// keeps each runner's log of its entries there.

const (
	nemesisQueue = "nemesis"
	childTTL     = "OUTBOX_TEST_TTL"
	childVia     = "OUTBOX_TEST_VIA" // the address a nemesis runner reaches the printers' URL at
)

// nemesisParams shape one round of the nemesis.
type nemesisParams struct {
	runners  int
	printers int
	faults   time.Duration // how long the schedule breaks things before everything heals
	ttl      time.Duration // the runners' lease
	settle   time.Duration // how long every entry has to settle once everything healed
}

func defaultNemesisParams() nemesisParams {
	return nemesisParams{runners: 3, printers: 6, faults: nemesisFaults, ttl: time.Second, settle: 45 * time.Second}
}

// TestNemesisPostgres runs the nemesis on the fixed seeds (or NEMESIS_SEED, or random seeds
// for NEMESIS_TIME).
func TestNemesisPostgres(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	if testing.Short() {
		t.Skip("a fault schedule of several seconds per seed")
	}
	pg := pgtest.Own(t)
	p := defaultNemesisParams()
	var total nemesisFigures
	start := time.Now()
	nemesis.Seeds(t, nemesisSeeds, func(seed uint64) bool {
		return t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			f := runNemesis(t, pg, seed, p)
			total.add(f)
		})
	})
	t.Logf("in all, %v: %s", time.Since(start).Round(time.Second), total.String())
}

// nemesisFigures count what a round did and saw.
type nemesisFigures struct {
	rounds, ids, enqueueCalls, enqueueErrors, repeats, prints, sent, unknown, resends int
	steps, checks                                                                     int
	stalls, timedStalls                                                               int
	faults                                                                            map[string]int
	settle                                                                            time.Duration // the longest wait for every entry to settle
}

func (f *nemesisFigures) add(g nemesisFigures) {
	f.rounds += g.rounds
	f.ids += g.ids
	f.enqueueCalls += g.enqueueCalls
	f.enqueueErrors += g.enqueueErrors
	f.repeats += g.repeats
	f.prints += g.prints
	f.sent += g.sent
	f.unknown += g.unknown
	f.resends += g.resends
	f.steps += g.steps
	f.stalls += g.stalls
	f.timedStalls += g.timedStalls
	f.checks += g.checks
	f.settle = max(f.settle, g.settle)
	if f.faults == nil {
		f.faults = map[string]int{}
	}
	for k, v := range g.faults {
		f.faults[k] += v
	}
}

func (f nemesisFigures) String() string {
	kinds := make([]string, 0, len(f.faults))
	for k := range f.faults {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var fs []string
	for _, k := range kinds {
		fs = append(fs, fmt.Sprintf("%s %d", k, f.faults[k]))
	}
	return fmt.Sprintf("%d rounds, %d steps (%s; %d of %d stalls timed at a Sending commit); %d IDs enqueued in %d calls (%d repeated, %d failed and retried); "+
		"%d printed, %d sent, %d unknown and printed once, %d resent by the operator; %d checks of the journal; "+
		"longest settling after healing %v",
		f.rounds, f.steps, strings.Join(fs, ", "), f.timedStalls, f.stalls, f.ids, f.enqueueCalls, f.repeats, f.enqueueErrors,
		f.prints, f.sent, f.unknown, f.resends, f.checks, f.settle.Round(time.Millisecond))
}

// nemesisEvent is one step of the schedule: at at, do what desc says.
type nemesisEvent struct {
	at   time.Duration
	desc string
	kind string // counted in the figures; "" for a heal
	do   func(*nemesisWorld)
}

// nemesisSchedule draws the schedule of seed: faults start every 100-400 ms at random and
// each heals on its own time, so that they overlap and compose. Which fault may start depends
// only on the schedule so far (a paused runner is not killed, a link has one fault at a time),
// so the seed gives the same schedule on every run; the interleaving with the processes'
// work is the machine's.
func nemesisSchedule(seed uint64, p nemesisParams) []nemesisEvent {
	rng := rand.New(rand.NewPCG(seed, 0x6e656d))
	between := func(lo, hi time.Duration) time.Duration { return nemesis.Between(rng, lo, hi) }
	var ev []nemesisEvent
	add := func(at time.Duration, kind, desc string, do func(*nemesisWorld)) {
		ev = append(ev, nemesisEvent{at: at, kind: kind, desc: desc, do: do})
	}
	type link struct{ runner, which int } // which: 0 PostgreSQL, 1 the printers
	linkFree := map[link]time.Duration{}
	procFree := make([]time.Duration, p.runners) // paused or dead until then
	pgFree := time.Duration(0)
	linkName := [2]string{"database", "printer"}
	for at := between(100*time.Millisecond, 300*time.Millisecond); at < p.faults; at += between(100*time.Millisecond, 400*time.Millisecond) {
		r := rng.IntN(p.runners)
		switch k := rng.IntN(20); {
		case k < 8: // one link
			l := link{r, rng.IntN(2)}
			if linkFree[l] > at {
				continue
			}
			mode, d, delay := nemesis.LinkFault(rng, p.ttl, l.which == 1)
			linkFree[l] = at + d
			name := fmt.Sprintf("runner %d's %s link", l.runner, linkName[l.which])
			if mode == faultproxy.Pass {
				add(at, "slow "+linkName[l.which], fmt.Sprintf("%s slow (%v a chunk) for %v", name, delay, d), func(w *nemesisWorld) {
					w.proxy(l.runner, l.which).SetDelay(delay)
				})
				add(at+d, "", name+" fast again", func(w *nemesisWorld) { w.proxy(l.runner, l.which).SetDelay(0) })
				continue
			}
			add(at, mode.String()+" "+linkName[l.which], fmt.Sprintf("%s %s for %v", name, mode, d), func(w *nemesisWorld) {
				w.proxy(l.runner, l.which).Set(mode)
			})
			add(at+d, "", name+" healed", func(w *nemesisWorld) { w.proxy(l.runner, l.which).Set(faultproxy.Pass) })
		case k < 10: // a runner's host loses the network, its printer side first (a flapping port)
			ld, lp := link{r, 0}, link{r, 1}
			if linkFree[ld] > at || linkFree[lp] > at {
				continue
			}
			d := between(p.ttl/2, 3*p.ttl)
			lag := between(0, p.ttl/2)
			dbMode := faultproxy.Blackhole
			if rng.IntN(2) == 0 {
				dbMode = faultproxy.Freeze
			}
			// Blackhole: connections hang; Reset: the interface is down, every connection fails
			// at once (and the SDK dials again).
			prMode := faultproxy.Blackhole
			if rng.IntN(2) == 0 {
				prMode = faultproxy.Reset
			}
			linkFree[ld], linkFree[lp] = at+lag+d, at+d
			add(at, "isolate", fmt.Sprintf("runner %d isolated: printer link %s for %v, database link %s %v later for %v", r, prMode, d, dbMode, lag, d),
				func(w *nemesisWorld) { w.proxy(r, 1).Set(prMode) })
			add(at+lag, "", fmt.Sprintf("runner %d's database link %s", r, dbMode), func(w *nemesisWorld) { w.proxy(r, 0).Set(dbMode) })
			add(at+d, "", fmt.Sprintf("runner %d's printer link back", r), func(w *nemesisWorld) { w.proxy(r, 1).Set(faultproxy.Pass) })
			add(at+lag+d, "", fmt.Sprintf("runner %d's database link back", r), func(w *nemesisWorld) { w.proxy(r, 0).Set(faultproxy.Pass) })
		case k < 13: // the busiest runner's host slows down, then stalls (swapping, a VM starved of CPU)
			// The stall is timed as a nemesis times a leader's pause: it takes the runner that
			// holds the most lanes when it starts, and pauses it the moment it commits an entry
			// Sending (the database's answer still on its slow way to it), or at the end of the
			// slow phase if it commits none. Which runner that is is known only then, so the
			// stall keeps every runner's process and database link to itself.
			busy := false
			for i := range p.runners {
				busy = busy || procFree[i] > at || linkFree[link{i, 0}] > at
			}
			if busy {
				continue
			}
			delay := between(p.ttl/100, p.ttl/30) // slow enough to time, not so slow that the runner loses its lanes
			slow := between(p.ttl/2, 2*p.ttl)
			stall := between(p.ttl+p.ttl/5, 2*p.ttl)
			for i := range p.runners {
				procFree[i], linkFree[link{i, 0}] = at+slow+stall, at+slow+stall
			}
			target := make(chan int, 1)
			add(at, "stall", fmt.Sprintf("the runner holding the most lanes: its database link slow (%v a chunk), the runner paused (SIGSTOP) when it next commits Sending (within %v) until %v later",
				delay, slow, slow+stall), func(w *nemesisWorld) {
				r := w.busiest()
				w.proxy(r, 0).SetDelay(delay)
				go func() {
					w.pauseAtSending(r, time.Now().Add(slow))
					target <- r
				}()
			})
			add(at+slow+stall, "", "the stalled runner continued, its database link fast again", func(w *nemesisWorld) {
				r := <-target
				w.proxy(r, 0).SetDelay(0)
				w.signal(r, syscall.SIGCONT)
			})
		case k < 15: // pause
			if procFree[r] > at {
				continue
			}
			d := between(200*time.Millisecond, 3*p.ttl)
			procFree[r] = at + d
			add(at, "pause", fmt.Sprintf("runner %d paused (SIGSTOP) for %v", r, d), func(w *nemesisWorld) { w.signal(r, syscall.SIGSTOP) })
			add(at+d, "", fmt.Sprintf("runner %d continued", r), func(w *nemesisWorld) { w.signal(r, syscall.SIGCONT) })
		case k < 18: // kill
			if procFree[r] > at {
				continue
			}
			d := between(0, p.ttl/2)
			procFree[r] = at + d
			add(at, "kill", fmt.Sprintf("runner %d killed (SIGKILL), restarted after %v", r, d), func(w *nemesisWorld) { w.kill(r) })
			add(at+d, "", fmt.Sprintf("runner %d restarted", r), func(w *nemesisWorld) { w.start(r) })
		default: // PostgreSQL restarts
			if pgFree > at {
				continue
			}
			pgFree = at + 2*time.Second
			add(at, "postgres restart", "PostgreSQL restarted (immediate shutdown)", func(w *nemesisWorld) { w.pg.Restart(w.t) })
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	return ev
}

// nemesisWorld is one round's processes, links and printers.
type nemesisWorld struct {
	t       *testing.T
	pg      *pgtest.Server
	dsn     string // the round's schema, direct
	printer string // the printers' URL, direct
	ttl     time.Duration
	links   [][2]*faultproxy.Proxy // per runner: to PostgreSQL, to the printers
	runners []*nemesisRunner
	logDir  string

	mu         sync.Mutex
	violations []string

	stalls, timedStalls atomic.Int64 // stalls, and those timed at a Sending commit
}

// nemesisRunner is a runner process.
type nemesisRunner struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	done   chan error
	killed bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (w *nemesisWorld) proxy(runner, which int) *faultproxy.Proxy { return w.links[runner][which] }

func (w *nemesisWorld) violate(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

// viaProxy is dsn with its host replaced by the proxy's address.
func viaProxy(t testing.TB, dsn, addr string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// start starts runner i, through its links.
func (w *nemesisWorld) start(i int) {
	// Every runner's client names the printers' own URL (the queue belongs to one controller)
	// and reaches it through its own link.
	cmd := childCommand("nemrun", viaProxy(w.t, w.dsn, w.links[i][0].Addr()), w.printer)
	cmd.Env = append(cmd.Env, childTTL+"="+w.ttl.String(), childVia+"="+w.links[i][1].Addr(), "NEMESIS_LOGDIR="+w.logDir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	r := &nemesisRunner{cmd: cmd, stdin: stdin, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { r.done <- cmd.Wait() }()
	w.runners[i] = r
}

// kill kills runner i and waits for it.
func (w *nemesisWorld) kill(i int) {
	r := w.runners[i]
	r.killed = true
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

func (w *nemesisWorld) signal(i int, sig syscall.Signal) {
	if err := w.runners[i].cmd.Process.Signal(sig); err != nil {
		w.violate("runner %d: %v: %v (it exited: %s)", i, sig, err, w.runners[i].stderr.String())
	}
}

// busiest returns the runner that holds the most lanes (the first one when the database does
// not answer).
func (w *nemesisWorld) busiest() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	best, most := 0, 0
	conn, err := pgx.Connect(ctx, w.dsn)
	if err != nil {
		return best
	}
	defer conn.Close(context.Background())
	for i, r := range w.runners {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM labelprinter_outbox_lanes
			WHERE queue = $1 AND split_part(owner, '/', 2) = $2 AND lease_until > now()`, nemesisQueue, strconv.Itoa(r.cmd.Process.Pid)).Scan(&n)
		if err == nil && n > most {
			best, most = i, n
		}
	}
	return best
}

// pauseAtSending pauses runner i (SIGSTOP) as soon as an entry of a lane it holds is newly
// Sending, looking every few milliseconds, or at until if none is.
func (w *nemesisWorld) pauseAtSending(i int, until time.Time) {
	defer w.signal(i, syscall.SIGSTOP)
	w.stalls.Add(1)
	pid := strconv.Itoa(w.runners[i].cmd.Process.Pid)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	seen := map[string]bool{}
	first := true
	for time.Now().Before(until) {
		ctx, cancel := context.WithDeadline(context.Background(), until)
		if conn == nil {
			c, err := pgx.Connect(ctx, w.dsn)
			if err != nil {
				cancel()
				time.Sleep(10 * time.Millisecond) // the database restarts
				continue
			}
			conn = c
		}
		rows, err := conn.Query(ctx, `SELECT e.id || '/' || e.attempts FROM labelprinter_outbox_entries e
			JOIN labelprinter_outbox_lanes l ON l.queue = e.queue AND l.printer = e.printer
			WHERE e.queue = $1 AND e.state = 'sending' AND split_part(l.owner, '/', 2) = $2`, nemesisQueue, pid)
		var sending []string
		if err == nil {
			sending, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		cancel()
		if err != nil {
			_ = conn.Close(context.Background())
			conn = nil
			continue
		}
		fresh := false
		for _, k := range sending {
			fresh = fresh || (!seen[k] && !first)
			seen[k] = true
		}
		if fresh {
			w.timedStalls.Add(1)
			return
		}
		first = false
		time.Sleep(2 * time.Millisecond)
	}
}

// stop asks runner i to stop (its stdin closes) and waits for it.
func (w *nemesisWorld) stop(i int, within time.Duration) {
	r := w.runners[i]
	_ = r.stdin.Close()
	select {
	case err := <-r.done:
		if err != nil {
			w.violate("runner %d ended with %v: %s", i, err, r.stderr.String())
		}
	case <-time.After(within):
		_ = r.cmd.Process.Kill()
		<-r.done
		w.violate("runner %d did not stop within %v of being asked", i, within)
	}
}

// runNemesis runs one round: the schedule of seed, then the healing and the final check.
func runNemesis(t *testing.T, pg *pgtest.Server, seed uint64, p nemesisParams) nemesisFigures {
	fig := nemesisFigures{rounds: 1, faults: map[string]int{}}
	schedule := nemesisSchedule(seed, p)
	reproduce := fmt.Sprintf("NEMESIS_SEED=%d go test -run 'TestNemesisPostgres' ./outbox", seed)
	w := &nemesisWorld{t: t, pg: pg, dsn: pg.NewSchema(t), ttl: p.ttl, logDir: nemesis.LogDir(t, seed)}

	// The printers and their journal.
	printers := make([]string, p.printers)
	for i := range printers {
		printers[i] = fmt.Sprintf("p%d", i+1)
	}
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0x6a6f62))
	randN := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }
	journal := &nemesis.Journal{Delay: func() time.Duration { return time.Duration(randN(3)) * time.Millisecond }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sim := printersim.Serve(ln, printersim.New(printersim.WithPrinters(printers...)), journal.Wrap)
	t.Cleanup(sim.Close)
	if err := newClient(t, sim.URL).Labels.Put(context.Background(), "L", json.RawMessage(`{"format":3}`)); err != nil {
		t.Fatal(err)
	}
	w.printer = sim.URL
	pgURL, err := url.Parse(pg.AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	w.links = make([][2]*faultproxy.Proxy, p.runners)
	for i := range w.links {
		w.links[i] = [2]*faultproxy.Proxy{faultproxy.Start(t, pgURL.Host), faultproxy.Start(t, strings.TrimPrefix(sim.URL, "http://"))}
	}
	openPG(t, w.dsn, nemesisQueue, nil).Close() // the tables, before the runners look
	w.runners = make([]*nemesisRunner, p.runners)
	for i := range w.runners {
		w.start(i)
	}

	// The operator: resends an Unknown entry only when the printer's journal says it never
	// printed it.
	var resentMu sync.Mutex
	resent := map[string]bool{}
	isResent := func(id string) bool { resentMu.Lock(); defer resentMu.Unlock(); return resent[id] }
	operator := openPG(t, w.dsn, nemesisQueue, nil)
	stopOperator := make(chan struct{})
	operatorDone := make(chan struct{})
	go func() {
		defer close(operatorDone)
		for {
			select {
			case <-stopOperator:
				return
			case <-time.After(time.Duration(30+randN(70)) * time.Millisecond):
			}
			unknown, err := operator.List(Unknown)
			if err != nil {
				continue // the database is restarting; look again
			}
			for _, e := range unknown {
				if journal.Printed(e.ID) > 0 {
					continue
				}
				resentMu.Lock()
				resent[e.ID] = true
				fig.resends++
				resentMu.Unlock()
				if err := operator.Resend(e.ID); err != nil && !errors.Is(err, ErrWrongState) {
					continue // it stays Unknown, and is looked at again
				}
			}
		}
	}()

	// The enqueuers: one per printer, each adding its printer's IDs in order, repeating an
	// Enqueue that failed until it succeeds, and now and then one that succeeded.
	stopEnqueue := make(chan struct{})
	var enqWG sync.WaitGroup
	var enqMu sync.Mutex
	enqueued := map[string]int{} // printer: IDs 1..n are in
	for k, printer := range printers {
		producer := openPG(t, w.dsn, nemesisQueue, nil)
		erng := rand.New(rand.NewPCG(seed, uint64(k)))
		enqWG.Add(1)
		go func() {
			defer enqWG.Done()
			put := func(n int) bool {
				id := nemesis.ID(printer, n)
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					e, err := producer.Enqueue(ctx, Intent{ID: id, Printer: printer, Job: job(id)})
					cancel()
					enqMu.Lock()
					fig.enqueueCalls++
					if err != nil {
						fig.enqueueErrors++
					}
					enqMu.Unlock()
					if err == nil {
						if e.ID != id || e.Printer != printer {
							w.violate("Enqueue %s answered the entry %s of printer %s", id, e.ID, e.Printer)
						}
						return true
					}
					select {
					case <-stopEnqueue:
						return false
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			for n := 1; ; n++ {
				select {
				case <-stopEnqueue:
					return
				case <-time.After(time.Duration(5+erng.IntN(40)) * time.Millisecond):
				}
				if !put(n) {
					return
				}
				enqMu.Lock()
				enqueued[printer] = n
				enqMu.Unlock()
				if erng.IntN(6) == 0 {
					enqMu.Lock()
					fig.repeats++
					enqMu.Unlock()
					if !put(1 + erng.IntN(n)) {
						return
					}
				}
			}
		}()
	}

	// The schedule, checking the journal after every step.
	var reported []string
	check := func(step string) {
		fig.checks++
		for _, v := range nemesis.Check(journal.Snapshot(), isResent) {
			if !slices.Contains(reported, v) {
				reported = append(reported, v)
				w.violate("%s, seen after step %q", v, step)
			}
		}
	}
	var done []string
	t0 := time.Now()
	for _, ev := range schedule {
		time.Sleep(time.Until(t0.Add(ev.at)))
		ev.do(w)
		if ev.kind != "" {
			fig.steps++
			fig.faults[ev.kind]++
		}
		done = append(done, fmt.Sprintf("%7.3fs %s", ev.at.Seconds(), ev.desc))
		check(ev.desc)
	}
	time.Sleep(time.Until(t0.Add(p.faults)))

	// Everything heals; the enqueuers stop.
	close(stopEnqueue)
	enqDone := make(chan struct{})
	go func() { enqWG.Wait(); close(enqDone) }()
	for i := range w.runners {
		w.links[i][0].Set(faultproxy.Pass)
		w.links[i][1].Set(faultproxy.Pass)
		w.links[i][0].SetDelay(0)
		w.links[i][1].SetDelay(0)
		if w.runners[i].killed {
			w.start(i)
		} else {
			_ = w.runners[i].cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	select {
	case <-enqDone:
	case <-time.After(40 * time.Second):
		t.Fatalf("an Enqueue did not return within 40 s of the healing")
	}
	healed := time.Now()
	check("everything healed")

	// Every entry settles: Sent, or Unknown and printed once (the operator resends the others).
	watcher := openPG(t, w.dsn, nemesisQueue, nil)
	var entries []Entry
	settled := func() bool {
		entries, err = watcher.List()
		if err != nil {
			return false
		}
		for _, e := range entries {
			if e.State == Pending || e.State == Sending || (e.State == Unknown && journal.Printed(e.ID) == 0) {
				return false
			}
		}
		return true
	}
	for !settled() {
		if time.Since(healed) > p.settle {
			var open []string
			for _, e := range entries {
				if e.State == Pending || e.State == Sending || (e.State == Unknown && journal.Printed(e.ID) == 0) {
					open = append(open, fmt.Sprintf("%s %s (attempts %d, %q)", e.ID, e.State, e.Attempts, e.Error))
				}
			}
			w.violate("%d entries not settled %v after every fault healed: %s", len(open), p.settle, strings.Join(open[:min(len(open), 10)], "; "))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fig.settle = time.Since(healed)
	fig.stalls, fig.timedStalls = int(w.stalls.Load()), int(w.timedStalls.Load())
	close(stopOperator)
	<-operatorDone
	for i := range w.runners {
		w.stop(i, 20*time.Second)
	}

	// The final check, once no runner is left to print late.
	check("every runner stopped")
	byID := map[string]Entry{}
	for _, e := range entries {
		if _, dup := byID[e.ID]; dup {
			w.violate("%s is in the outbox twice", e.ID)
		}
		byID[e.ID] = e
	}
	for _, printer := range printers {
		for n := 1; n <= enqueued[printer]; n++ {
			if _, ok := byID[nemesis.ID(printer, n)]; !ok {
				w.violate("%s was enqueued but is not in the outbox", nemesis.ID(printer, n))
			}
		}
	}
	fig.ids = len(entries)
	fig.prints = len(journal.Snapshot())
	for _, e := range entries {
		n := journal.Printed(e.ID)
		switch {
		case e.State == Sent && n == 1:
			fig.sent++
		case e.State == Unknown && n == 1:
			fig.unknown++
		case e.State == Sent || e.State == Unknown:
			w.violate("%s is %s and was printed %d times", e.ID, e.State, n)
		default:
			w.violate("%s ended %s (%q), printed %d times", e.ID, e.State, e.Error, n)
		}
	}
	for _, pr := range journal.Snapshot() {
		if _, ok := byID[pr.ID]; !ok {
			w.violate("%s printed, but it was never enqueued", pr.ID)
		}
	}

	w.mu.Lock()
	violations := slices.Clone(w.violations)
	w.mu.Unlock()
	if len(violations) > 0 {
		t.Errorf("seed %d broke the outbox's promise (%s reproduces the schedule):\n  %s\nthe schedule:\n  %s",
			seed, reproduce, strings.Join(violations, "\n  "), strings.Join(done, "\n  "))
	}
	t.Logf("seed %d: %s", seed, fig.String())
	return fig
}

// nemesisRunChild is a runner of the nemesis: it opens the queue (again and again while the
// database cannot be reached, as a supervisor would restart it) and delivers it until its
// stdin closes. Its client is the SDK's default but for shorter timeouts, so that a request
// into a dead link fails within the round, and for its route: it reaches the printers' URL
// through its own link.
func nemesisRunChild(dsn, url string) error {
	ttl, err := time.ParseDuration(os.Getenv(childTTL))
	if err != nil {
		return err
	}
	via := os.Getenv(childVia)
	tr := labelprinter.DefaultTransport()
	dialer := &net.Dialer{Timeout: time.Second}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, via)
	}
	tr.ResponseHeaderTimeout = 2 * time.Second
	c, err := labelprinter.NewClient(url, labelprinter.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	opts := []Option{WithLeaseTTL(ttl), WithRetryInterval(20 * time.Millisecond)}
	if dir := os.Getenv("NEMESIS_LOGDIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("runner-%d.log", os.Getpid())))
		if err != nil {
			return err
		}
		defer f.Close()
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	var ob *Outbox
	for {
		octx, ocancel := context.WithTimeout(ctx, 5*time.Second)
		ob, err = OpenPostgres(octx, dsn, nemesisQueue, c, opts...)
		ocancel()
		if err == nil {
			break
		}
		if errors.Is(err, labelprinter.ErrInvalidArgument) {
			return err // not the faults: this runner would never deliver
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	err = ob.Run(ctx)
	if cerr := ob.Close(); err == nil {
		err = cerr
	}
	return err
}
