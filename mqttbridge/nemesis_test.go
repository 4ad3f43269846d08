package mqttbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/nemesis"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// The bridges' nemesis: a pair of bridge processes (one client id, outbox.postgres: one
// active, one standing by) and a single bridge on its outbox file, each with printers of its
// own on one simulator, take commands from a broker while a schedule drawn from a seed
// composes faults on one run:
//
//   - each bridge's links to PostgreSQL, to the printers and to the broker, and each
//     publisher's link to the broker, go through fault proxies that partition (blackhole),
//     freeze, reset and slow them; a bridge's host is isolated (its printer link first);
//   - bridges are paused (SIGSTOP), killed (SIGKILL) and restarted; a bridge that exits on
//     its own (a lost lease) is restarted as a supervisor would;
//   - PostgreSQL restarts.
//
// A publisher (the MES) publishes each printer's printJobs in order and repeats itself at the
// application layer: a publication whose PUBACK does not come is published again as a new
// message (a new packet identifier) on a new connection, and now and then one that was
// acknowledged is published again much later. It sends cancels naming 0 attempts of ids it
// publishes only once the cancel is answered (tombstones), cancels of earlier ids and of ids
// it saw unknown, resends of ids it saw sent, and abortPrints, one per printer at a time. An
// operator resends each unknown id (naming its attempts) only when the printer's journal
// shows it never printed, and repeats that resend later. The printers lose the answer to
// some prints (more often to those of resent ids) and answer half the abortPrints 503 with
// Retry-After, doing nothing. The printers' journal is the ground
// truth; after every step of the schedule, and fully once every fault healed:
//
//   - each (printer, id) is printed at most once, on its own printer;
//   - each printer prints its ids in publication order (ids the operator resent aside);
//   - an id whose cancel was answered done is never printed (a tombstone included);
//   - no abortPrint reaches a printer after its command was answered;
//   - every entry settles once the faults heal: sent and printed once, unknown and printed
//     once, or cancelled, expired or rejected and never printed;
//   - every command the broker acknowledged is answered on its Response Topic.
//
// The broker is the embedded one for even seeds and, when installed, mosquitto for odd ones.
// NEMESIS_SEED=n runs the schedule of seed n (the seed of a failure is in its message);
// NEMESIS_TIME=10m runs schedules of random seeds back to back; NEMESIS_LOGDIR keeps every
// bridge's debug log there.

// bridgeNemesisParams shape one round.
type bridgeNemesisParams struct {
	faults time.Duration // how long the schedule breaks things before everything heals
	ttl    time.Duration // the pair's lease
	settle time.Duration // how long everything has to settle once healed
}

// The link kinds of a bridge, by index.
const (
	linkDatabase = iota
	linkPrinter
	linkBroker
	linkKinds
)

var linkNames = [linkKinds]string{"database", "printer", "broker"}

// A round's bridges: the pair's two and the single one.
const (
	nemPairA = iota
	nemPairB
	nemSingle
	nemBridges
)

var nemBridgeNames = [nemBridges]string{"pair bridge A", "pair bridge B", "single bridge"}

// nemGroups: the pair's printers and publisher, and the single bridge's.
const (
	groupPair = iota
	groupSingle
	nemGroupCount
)

var groupNames = [nemGroupCount]string{"the pair's", "the single bridge's"}

func nemGroupOf(bridge int) int {
	if bridge == nemSingle {
		return groupSingle
	}
	return groupPair
}

// TestNemesisBridges runs the bridges' nemesis on the fixed seeds (or NEMESIS_SEED, or random
// seeds for NEMESIS_TIME).
func TestNemesisBridges(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault schedule of several seconds per seed")
	}
	pg := pgtest.Own(t)
	mosq := mosquittoBin(t)
	if mosq == "" {
		t.Log("mosquitto is not installed: the odd seeds run on the embedded broker too")
	}
	p := bridgeNemesisParams{faults: bridgeNemesisFaults, ttl: time.Second, settle: 45 * time.Second}
	var total bridgeFigures
	start := time.Now()
	nemesis.Seeds(t, bridgeNemesisSeeds, func(seed uint64) bool {
		broker := "embedded"
		if seed%2 == 1 && mosq != "" {
			broker = "mosquitto"
		}
		return t.Run(fmt.Sprintf("seed=%d/%s", seed, broker), func(t *testing.T) {
			var bk testBroker
			if broker == "mosquitto" {
				bk = newMosquitto(t, mosq)
			} else {
				bk = newEmbedded(t)
			}
			total.add(runBridgeNemesis(t, pg, bk, seed, p))
		})
	})
	t.Logf("in all, %v: %s", time.Since(start).Round(time.Second), total.String())
}

// bridgeFigures count what rounds did and saw.
type bridgeFigures struct {
	rounds, steps, checks                            int
	faults                                           map[string]int
	commands, published, repeats, late               int
	printJobs, tombstones, cancels, mesResends       int
	aborts, aborted                                  int
	prints, sent, unknown, cancelled, resends, exits int
	exitKinds                                        map[string]int
	settle                                           time.Duration
}

func (f *bridgeFigures) add(g bridgeFigures) {
	f.rounds += g.rounds
	f.steps += g.steps
	f.checks += g.checks
	f.commands += g.commands
	f.published += g.published
	f.repeats += g.repeats
	f.late += g.late
	f.printJobs += g.printJobs
	f.tombstones += g.tombstones
	f.cancels += g.cancels
	f.mesResends += g.mesResends
	f.aborts += g.aborts
	f.aborted += g.aborted
	f.prints += g.prints
	f.sent += g.sent
	f.unknown += g.unknown
	f.cancelled += g.cancelled
	f.resends += g.resends
	f.exits += g.exits
	f.settle = max(f.settle, g.settle)
	if f.faults == nil {
		f.faults = map[string]int{}
	}
	for k, v := range g.faults {
		f.faults[k] += v
	}
	if f.exitKinds == nil {
		f.exitKinds = map[string]int{}
	}
	for k, v := range g.exitKinds {
		f.exitKinds[k] += v
	}
}

// exitKind sorts the error a bridge exited with.
func exitKind(stderr string) string {
	switch {
	case strings.Contains(stderr, ErrLeaseLost.Error()):
		return "lease lost"
	case strings.Contains(stderr, ErrSessionTakenOver.Error()):
		return "session taken over"
	case strings.Contains(stderr, ErrAnotherBridgeOnline.Error()):
		return "another bridge online"
	case strings.Contains(stderr, "PostgreSQL"):
		return "database unreachable at start"
	}
	return "other"
}

// sorted returns m's entries as "key n", in key order.
func sorted(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out []string
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

func (f bridgeFigures) String() string {
	return fmt.Sprintf("%d rounds, %d steps (%s); %d commands (%d printJobs, %d tombstones, %d cancels, %d resends of sent ids, %d abortPrints, %d operator resends) in %d publications "+
		"(%d repeated after a lost PUBACK, %d repeated later); %d printed, %d sent, %d unknown and printed once, %d cancelled, %d abortPrints acted on; "+
		"%d bridge exits restarted (%s); %d checks of the journal; longest settling after healing %v",
		f.rounds, f.steps, sorted(f.faults), f.commands, f.printJobs, f.tombstones, f.cancels, f.mesResends, f.aborts, f.resends, f.published,
		f.repeats, f.late, f.prints, f.sent, f.unknown, f.cancelled, f.aborted, f.exits, sorted(f.exitKinds), f.checks, f.settle.Round(time.Millisecond))
}

// bridgeEvent is one step of the schedule: at at, do what desc says.
type bridgeEvent struct {
	at   time.Duration
	desc string
	kind string // counted in the figures; "" for a heal
	do   func(*bridgeWorld)
}

// bridgeSchedule draws the schedule of seed: faults start every 100-400 ms and each heals on
// its own time, so that they overlap and compose. What may start depends only on the schedule
// so far (a link has one fault at a time, a paused bridge is not killed), so a seed gives the
// same schedule on every run; the interleaving with the processes' work is the machine's.
func bridgeSchedule(seed uint64, p bridgeNemesisParams) []bridgeEvent {
	rng := rand.New(rand.NewPCG(seed, 0x627264))
	between := func(lo, hi time.Duration) time.Duration { return nemesis.Between(rng, lo, hi) }
	var ev []bridgeEvent
	add := func(at time.Duration, kind, desc string, do func(*bridgeWorld)) {
		ev = append(ev, bridgeEvent{at: at, kind: kind, desc: desc, do: do})
	}
	type link struct{ bridge, which int }
	linkFree := map[link]time.Duration{}
	procFree := make([]time.Duration, nemBridges)
	mesFree := make([]time.Duration, nemGroupCount)
	pgFree := time.Duration(0)
	links := func(b int) []int {
		if b == nemSingle {
			return []int{linkPrinter, linkBroker}
		}
		return []int{linkDatabase, linkPrinter, linkBroker}
	}
	for at := between(100*time.Millisecond, 300*time.Millisecond); at < p.faults; at += between(100*time.Millisecond, 400*time.Millisecond) {
		b := rng.IntN(nemBridges)
		bname := nemBridgeNames[b]
		switch k := rng.IntN(20); {
		case k < 7: // one link
			ls := links(b)
			l := link{b, ls[rng.IntN(len(ls))]}
			if linkFree[l] > at {
				continue
			}
			mode, d, delay := nemesis.LinkFault(rng, p.ttl, l.which == linkPrinter)
			linkFree[l] = at + d
			name := fmt.Sprintf("%s's %s link", bname, linkNames[l.which])
			if mode == faultproxy.Pass {
				add(at, "slow "+linkNames[l.which], fmt.Sprintf("%s slow (%v a chunk) for %v", name, delay, d), func(w *bridgeWorld) {
					w.link(l.bridge, l.which).SetDelay(delay)
				})
				add(at+d, "", name+" fast again", func(w *bridgeWorld) { w.link(l.bridge, l.which).SetDelay(0) })
				continue
			}
			add(at, mode.String()+" "+linkNames[l.which], fmt.Sprintf("%s %s for %v", name, mode, d), func(w *bridgeWorld) {
				w.link(l.bridge, l.which).Set(mode)
			})
			add(at+d, "", name+" healed", func(w *bridgeWorld) { w.link(l.bridge, l.which).Set(faultproxy.Pass) })
		case k < 9: // the bridge's host loses the network, its printer side first
			ls := links(b)
			busy := false
			for _, which := range ls {
				busy = busy || linkFree[link{b, which}] > at
			}
			if busy {
				continue
			}
			d := between(p.ttl/2, 3*p.ttl)
			lag := between(0, p.ttl/2)
			rest := faultproxy.Blackhole
			if rng.IntN(2) == 0 {
				rest = faultproxy.Freeze
			}
			prMode := faultproxy.Blackhole
			if rng.IntN(2) == 0 {
				prMode = faultproxy.Reset
			}
			for _, which := range ls {
				linkFree[link{b, which}] = at + lag + d
			}
			linkFree[link{b, linkPrinter}] = at + d
			add(at, "isolate", fmt.Sprintf("%s isolated: printer link %s for %v, its other links %s %v later for %v", bname, prMode, d, rest, lag, d),
				func(w *bridgeWorld) { w.link(b, linkPrinter).Set(prMode) })
			add(at+lag, "", fmt.Sprintf("%s's other links %s", bname, rest), func(w *bridgeWorld) {
				for _, which := range ls {
					if which != linkPrinter {
						w.link(b, which).Set(rest)
					}
				}
			})
			add(at+d, "", fmt.Sprintf("%s's printer link back", bname), func(w *bridgeWorld) { w.link(b, linkPrinter).Set(faultproxy.Pass) })
			add(at+lag+d, "", fmt.Sprintf("%s's other links back", bname), func(w *bridgeWorld) {
				for _, which := range ls {
					if which != linkPrinter {
						w.link(b, which).Set(faultproxy.Pass)
					}
				}
			})
		case k < 11: // pause
			if procFree[b] > at {
				continue
			}
			d := between(200*time.Millisecond, 3*p.ttl)
			procFree[b] = at + d
			add(at, "pause", fmt.Sprintf("%s paused (SIGSTOP) for %v", bname, d), func(w *bridgeWorld) { w.signal(b, syscall.SIGSTOP) })
			add(at+d, "", fmt.Sprintf("%s continued", bname), func(w *bridgeWorld) { w.signal(b, syscall.SIGCONT) })
		case k < 14: // kill
			if procFree[b] > at {
				continue
			}
			d := between(0, p.ttl/2)
			procFree[b] = at + d
			add(at, "kill", fmt.Sprintf("%s killed (SIGKILL), restarted after %v", bname, d), func(w *bridgeWorld) { w.kill(b) })
			add(at+d, "", fmt.Sprintf("%s restarted", bname), func(w *bridgeWorld) { w.restart(b) })
		case k < 18: // a publisher's link: PUBACKs lost, the publisher repeats itself
			g := rng.IntN(nemGroupCount)
			if mesFree[g] > at {
				continue
			}
			mode, d := faultproxy.Reset, between(50*time.Millisecond, p.ttl/2)
			if rng.IntN(2) == 0 {
				mode, d = faultproxy.Blackhole, between(200*time.Millisecond, 2*p.ttl)
			}
			mesFree[g] = at + d
			name := fmt.Sprintf("%s publisher's link", groupNames[g])
			add(at, mode.String()+" publisher", fmt.Sprintf("%s %s for %v", name, mode, d), func(w *bridgeWorld) { w.mesLinks[g].Set(mode) })
			add(at+d, "", name+" healed", func(w *bridgeWorld) { w.mesLinks[g].Set(faultproxy.Pass) })
		default: // PostgreSQL restarts
			if pgFree > at {
				continue
			}
			pgFree = at + 2*time.Second
			add(at, "postgres restart", "PostgreSQL restarted (immediate shutdown)", func(w *bridgeWorld) { w.pg.Restart(w.t) })
		}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	return ev
}

// bridgeWorld is one round's processes, links, printers and commands.
type bridgeWorld struct {
	t        *testing.T
	pg       *pgtest.Server
	logDir   string
	links    [nemBridges][linkKinds]*faultproxy.Proxy
	mesLinks [nemGroupCount]*faultproxy.Proxy
	cfgs     [nemBridges]string

	pmu       sync.Mutex
	procs     [nemBridges]*nemProc
	stopping  bool
	exits     int
	exitKinds map[string]int
	exitWhy   []string

	mu         sync.Mutex
	violations []string
}

// nemProc is one process of a bridge.
type nemProc struct {
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
	done   chan struct{}
	err    error
	killed bool // by the schedule or the end of the round: not restarted by the supervisor
}

func (w *bridgeWorld) link(bridge, which int) *faultproxy.Proxy { return w.links[bridge][which] }

func (w *bridgeWorld) violate(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

// start starts bridge i's process; w.pmu is held.
func (w *bridgeWorld) start(i int) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+w.cfgs[i])
	pr := &nemProc{cmd: cmd, stderr: &testkit.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = pr.stderr
	var logFile *os.File
	if w.logDir != "" {
		f, err := os.OpenFile(filepath.Join(w.logDir, fmt.Sprintf("bridge-%d.log", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			w.t.Fatal(err)
		}
		logFile = f
		cmd.Stderr = io.MultiWriter(pr.stderr, f)
		cmd.Env = append(cmd.Env, "MQTTBRIDGE_DEBUG=1")
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.procs[i] = pr
	go func() {
		pr.err = cmd.Wait()
		if logFile != nil {
			_ = logFile.Close()
		}
		close(pr.done)
		w.pmu.Lock()
		defer w.pmu.Unlock()
		if pr.killed || w.stopping || w.procs[i] != pr {
			return
		}
		// It exited on its own (a lost lease, a refused start): a supervisor starts it again.
		w.exits++
		w.exitKinds[exitKind(pr.stderr.String())]++
		why := strings.TrimSpace(pr.stderr.String())
		if j := strings.LastIndex(why, "\n"); j >= 0 {
			why = why[j+1:]
		}
		w.exitWhy = append(w.exitWhy, fmt.Sprintf("%s: %v: %s", nemBridgeNames[i], pr.err, clip(why)))
		time.AfterFunc(100*time.Millisecond, func() {
			w.pmu.Lock()
			defer w.pmu.Unlock()
			if !w.stopping && w.procs[i] == pr {
				w.start(i)
			}
		})
	}()
}

// kill kills bridge i (SIGKILL) and waits for it.
func (w *bridgeWorld) kill(i int) {
	w.pmu.Lock()
	pr := w.procs[i]
	pr.killed = true
	w.pmu.Unlock()
	_ = pr.cmd.Process.Signal(syscall.SIGKILL)
	<-pr.done
}

// restart starts bridge i again after kill.
func (w *bridgeWorld) restart(i int) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if !w.stopping && w.procs[i].killed {
		w.start(i)
	}
}

// signal sends sig to bridge i's process, if it runs.
func (w *bridgeWorld) signal(i int, sig syscall.Signal) {
	w.pmu.Lock()
	pr := w.procs[i]
	w.pmu.Unlock()
	_ = pr.cmd.Process.Signal(sig)
}

// stop asks every bridge to stop (SIGTERM) and waits for them; a bridge that does not stop
// within the limit is a violation.
func (w *bridgeWorld) stop(within time.Duration) {
	w.pmu.Lock()
	w.stopping = true
	procs := w.procs
	w.pmu.Unlock()
	for i, pr := range procs {
		_ = pr.cmd.Process.Signal(syscall.SIGCONT)
		_ = pr.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-pr.done:
		case <-time.After(within):
			_ = pr.cmd.Process.Kill()
			<-pr.done
			w.violate("%s did not stop within %v of SIGTERM: %s", nemBridgeNames[i], within, clip(pr.stderr.String()))
		}
	}
}

// nemCommand is one command of the round, published (and repeated) until the broker
// acknowledged it, and answered on its Response Topic.
type nemCommand struct {
	n        int // its correlation data
	group    int
	printer  string
	kind     string // printJob, cancel, resend
	operator bool   // a resend of the operator's
	id       string
	attempts int
	payload  []byte

	acked    atomic.Bool
	answered chan struct{} // closed on the first answer
	once     sync.Once
	mu       sync.Mutex
	answers  []Result
	first    time.Time // its first publication began
	firstAns time.Time // its first answer arrived
}

func (c *nemCommand) answer(r Result) {
	c.mu.Lock()
	c.answers = append(c.answers, r)
	if c.firstAns.IsZero() {
		c.firstAns = time.Now()
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.answered) })
}

// window is when the command was published first and answered first (zero: not yet).
func (c *nemCommand) window() (first, answered time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first, c.firstAns
}

// states returns the states of its answers so far.
func (c *nemCommand) states() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.answers {
		out = append(out, r.State)
	}
	return out
}

// answeredDone reports whether the command took effect: done, or a duplicate of itself done.
func (c *nemCommand) answeredDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.answers {
		if r.State == StateDone || r.State == StateDuplicate && r.Current == StateDone {
			return true
		}
	}
	return false
}

// mes is a publisher on one link to the broker: a publication whose PUBACK does not come
// within a second is published again, as a new message on a new connection, until one is
// acknowledged.
type mes struct {
	addr     string // its link
	id       string
	stop     chan struct{}
	respond  string
	mu       sync.Mutex
	conn     net.Conn
	cli      *paho.Client
	repeats  atomic.Int64 // publications again, after a lost PUBACK or later
	late     atomic.Int64 // publications again of an acknowledged command, later
	publishs atomic.Int64
}

// client returns the connection, making one if there is none.
func (m *mes) client() (*paho.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cli != nil {
		return m.cli, nil
	}
	conn, err := net.DialTimeout("tcp", m.addr, time.Second)
	if err != nil {
		return nil, err
	}
	cli := paho.NewClient(paho.ClientConfig{ClientID: m.id, Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ca, err := cli.Connect(ctx, &paho.Connect{ClientID: m.id, CleanStart: true, KeepAlive: 30})
	if err == nil && ca.ReasonCode != 0 {
		err = fmt.Errorf("connect: reason %d", ca.ReasonCode)
	}
	if err != nil {
		_ = conn.Close()
		waitClient(cli)
		return nil, err
	}
	m.conn, m.cli = conn, cli
	return cli, nil
}

// drop closes the connection cli, if it is still the publisher's.
func (m *mes) drop(cli *paho.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cli != cli {
		return
	}
	_ = m.conn.Close()
	waitClient(cli)
	m.cli, m.conn = nil, nil
}

func (m *mes) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cli != nil {
		_ = m.conn.Close()
		waitClient(m.cli)
		m.cli, m.conn = nil, nil
	}
}

// waitClient waits for a paho client whose connection was closed to end its goroutines.
func waitClient(cli *paho.Client) {
	select {
	case <-cli.Done():
	case <-time.After(10 * time.Second):
	}
}

// publish publishes c until the broker acknowledges one of its publications, or the
// publisher stops (false).
func (m *mes) publish(c *nemCommand) bool {
	c.mu.Lock()
	if c.first.IsZero() {
		c.first = time.Now()
	}
	c.mu.Unlock()
	for first := true; ; first = false {
		select {
		case <-m.stop:
			return false
		default:
		}
		if !first {
			m.repeats.Add(1)
		}
		cli, err := m.client()
		if err != nil {
			select {
			case <-m.stop:
				return false
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		m.publishs.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = cli.Publish(ctx, &paho.Publish{Topic: cmdTopicOf(c), QoS: 1, Payload: c.payload,
			Properties: &paho.PublishProperties{ResponseTopic: m.respond, CorrelationData: []byte(fmt.Sprint(c.n))}})
		cancel()
		if err == nil {
			c.acked.Store(true)
			return true
		}
		m.drop(cli)
	}
}

func cmdTopicOf(c *nemCommand) string {
	return printerTopic(nemPrefix(c.group), c.printer, topicCmd+"/"+c.kind)
}

func nemPrefix(group int) string {
	if group == groupSingle {
		return "nem-single"
	}
	return "nem-pair"
}

// nemRound is the round's commands and what the watcher saw.
type nemRound struct {
	mu       sync.Mutex
	commands []*nemCommand
	next     int
	// unknown holds, per group, the unknown (id, attempts) seen on result topics and on
	// P/outbox, for the operator.
	unknown [nemGroupCount]map[[2]string]int
	sentIDs [nemGroupCount]map[string]string // id -> printer, seen sent
	outbox  map[string]OutboxState           // the last P/outbox of each printer
	online  [nemGroupCount]int
}

func (r *nemRound) command(group int, printer, kind, id string, attempts int) *nemCommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	c := &nemCommand{n: r.next, group: group, printer: printer, kind: kind, id: id, attempts: attempts, answered: make(chan struct{})}
	switch kind {
	case cmdPrintJob:
		c.payload, _ = json.Marshal(printJobCmd(id))
	case cmdAbortPrint:
		c.payload, _ = json.Marshal(map[string]any{"id": id})
	default:
		c.payload, _ = json.Marshal(map[string]any{"id": id, "attempts": attempts})
	}
	r.commands = append(r.commands, c)
	return c
}

func (r *nemRound) byN(n int) *nemCommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 || n > len(r.commands) {
		return nil
	}
	return r.commands[n-1]
}

func (r *nemRound) all() []*nemCommand {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.commands)
}

// seen records a message the watcher got.
func (r *nemRound) seen(pb *paho.Publish) {
	for g := range nemGroupCount {
		prefix := nemPrefix(g) + "/"
		rest, ok := strings.CutPrefix(pb.Topic, prefix)
		if !ok {
			continue
		}
		printer, leaf, _ := strings.Cut(rest, "/")
		switch leaf {
		case topicResult:
			var res Result
			if json.Unmarshal(pb.Payload, &res) != nil {
				return
			}
			r.mu.Lock()
			switch res.State {
			case StateUnknown:
				r.unknown[g][[2]string{printer, res.ID}] = res.Attempts
			case StateSent:
				r.sentIDs[g][res.ID] = printer
			}
			r.mu.Unlock()
		case topicOutbox:
			var st OutboxState
			if json.Unmarshal(pb.Payload, &st) != nil {
				return
			}
			r.mu.Lock()
			r.outbox[nemPrefix(g)+"/"+printer] = st
			for _, e := range st.Unknown {
				r.unknown[g][[2]string{printer, e.ID}] = e.Attempts
			}
			r.mu.Unlock()
		case "online":
			if printer == bridgeSegment && onlineStateOf(pb) == BridgeOnline {
				r.mu.Lock()
				r.online[g]++
				r.mu.Unlock()
			}
		}
		return
	}
	if strings.HasPrefix(pb.Topic, "nemesis/answers/") && pb.Properties != nil {
		var n int
		if _, err := fmt.Sscan(string(pb.Properties.CorrelationData), &n); err != nil {
			return
		}
		var res Result
		if c := r.byN(n); c != nil && json.Unmarshal(pb.Payload, &res) == nil {
			c.answer(res)
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// checkAborts returns the abortPrints that reached a printer outside the window of every
// abortPrint command of that printer: after it was first published and before it was first
// answered. The publisher sends a printer's next abortPrint only once the last one was
// answered, so an abortPrint that arrives after its answer (a bridge that lost its lease
// sending it late, wiping the jobs the next bridge sent) falls outside every window.
func checkAborts(aborts []nemesis.Abort, commands []*nemCommand) []string {
	var out []string
	for _, a := range aborts {
		ok := false
		var last string
		for _, c := range commands {
			if c.kind != cmdAbortPrint || c.printer != a.Printer {
				continue
			}
			first, answered := c.window()
			if first.IsZero() || a.At.Before(first) {
				continue
			}
			if answered.IsZero() || !a.At.After(answered) {
				ok = true
				break
			}
			last = fmt.Sprintf("%s answered %v %v before", c.id, c.states(), a.At.Sub(answered).Round(time.Millisecond))
		}
		if !ok {
			out = append(out, fmt.Sprintf("an abortPrint reached %s after %d of its jobs, outside every abortPrint's window (%s)", a.Printer, a.After, last))
		}
	}
	return out
}

// nemBridgeConfig writes bridge i's configuration: its links to the broker, the database and
// the printers are its own proxies; the pair's two share a client id, a queue and a lease.
func nemBridgeConfig(t *testing.T, dir string, i int, brokerAddr, dsn, simURL, proxyAddr string, printers []string, ttl time.Duration) string {
	var b strings.Builder
	g := nemGroupOf(i)
	fmt.Fprintf(&b, "broker: {url: %q, client_id: nemesis-%d}\ntopic_prefix: %s\npoll_interval: 200ms\n", "mqtt://"+brokerAddr, g, nemPrefix(g))
	if g == groupPair {
		fmt.Fprintf(&b, "outbox: {postgres: {dsn: %q}, lease_ttl: %v}\n", dsn, ttl)
	} else {
		fmt.Fprintf(&b, "state_dir: %q\n", filepath.Join(dir, "single-state"))
	}
	b.WriteString("printers:\n")
	for _, p := range printers {
		// The printers' URL is the simulator's own (it names the outbox queue, one for the
		// pair), reached through the bridge's own link as through an HTTP proxy.
		fmt.Fprintf(&b, "  - {name: %s, url: %q, printer: %s, http_client_config: {proxy_url: %q}}\n", p, simURL, p, "http://"+proxyAddr)
	}
	return writeFile(t, dir, fmt.Sprintf("bridge-%d.yml", i), b.String())
}

// runBridgeNemesis runs one round: the schedule of seed, then the healing and the final check.
func runBridgeNemesis(t *testing.T, pg *pgtest.Server, bk testBroker, seed uint64, p bridgeNemesisParams) bridgeFigures {
	fig := bridgeFigures{rounds: 1, faults: map[string]int{}}
	schedule := bridgeSchedule(seed, p)
	reproduce := fmt.Sprintf("NEMESIS_SEED=%d go test -run 'TestNemesisBridges' ./mqttbridge", seed)
	w := &bridgeWorld{t: t, pg: pg, logDir: nemesis.LogDir(t, seed), exitKinds: map[string]int{}}
	dsn := pg.NewSchema(t)
	dir := t.TempDir()
	brokerAddr := strings.TrimPrefix(bk.URL(), "mqtt://")

	groupPrinters := [nemGroupCount][]string{{"p1", "p2", "p3"}, {"q1", "q2"}}
	var allPrinters []string
	for _, ps := range groupPrinters {
		allPrinters = append(allPrinters, ps...)
	}
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0x6a6f62))
	randN := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }
	var resentMu sync.Mutex
	resent := map[string]bool{}
	isResent := func(id string) bool { resentMu.Lock(); defer resentMu.Unlock(); return resent[id] }
	journal := &nemesis.Journal{
		Delay: func() time.Duration { return time.Duration(randN(3)) * time.Millisecond },
		// The printer's answer is lost for one print in 50, and for every other print of an
		// id the operator resent: it printed, and is unknown again, so the operator's resend
		// repeated later must find its attempts changed.
		LoseAnswer: func(p nemesis.Print) bool {
			if isResent(p.ID) {
				return randN(2) == 0
			}
			return randN(50) == 0
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A busy printer answers half the abortPrints 503 with Retry-After: 1 and does nothing: the
	// SDK sends the abortPrint again a second later, which a bridge that lost its lease
	// meanwhile must not do.
	busy := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/abortPrint") && randN(2) == 0 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	sim := printersim.Serve(ln, printersim.New(printersim.WithPrinters(allPrinters...)), func(next http.Handler) http.Handler {
		return journal.Wrap(busy(next))
	})
	t.Cleanup(sim.Close)
	pgURL, err := url.Parse(pg.AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	for i := range nemBridges {
		w.links[i] = [linkKinds]*faultproxy.Proxy{faultproxy.Start(t, pgURL.Host), faultproxy.Start(t, strings.TrimPrefix(sim.URL, "http://")), faultproxy.Start(t, brokerAddr)}
		bdsn, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		bdsn.Host = w.links[i][linkDatabase].Addr()
		w.cfgs[i] = nemBridgeConfig(t, dir, i, w.links[i][linkBroker].Addr(), bdsn.String(), sim.URL, w.links[i][linkPrinter].Addr(), groupPrinters[nemGroupOf(i)], p.ttl)
	}

	// The watcher, on the broker directly: results, P/outbox, online and the answers.
	round := &nemRound{outbox: map[string]OutboxState{}}
	for g := range nemGroupCount {
		round.unknown[g] = map[[2]string]int{}
		round.sentIDs[g] = map[string]string{}
	}
	wcli := dialMQTT(t, bk.URL(), fmt.Sprintf("nemesis-watch-%d", seed), func(pr paho.PublishReceived) (bool, error) {
		round.seen(pr.Packet)
		return true, nil
	})
	{
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		var subs []paho.SubscribeOptions
		for g := range nemGroupCount {
			subs = append(subs, paho.SubscribeOptions{Topic: nemPrefix(g) + "/#", QoS: 1})
		}
		subs = append(subs, paho.SubscribeOptions{Topic: "nemesis/answers/#", QoS: 1})
		_, err := wcli.Subscribe(ctx, &paho.Subscribe{Subscriptions: subs})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}

	w.pmu.Lock()
	for i := range nemBridges {
		w.start(i)
	}
	w.pmu.Unlock()
	t.Cleanup(func() {
		w.pmu.Lock()
		w.stopping = true
		procs := w.procs
		w.pmu.Unlock()
		for _, pr := range procs {
			_ = pr.cmd.Process.Kill()
			<-pr.done
		}
	})
	for g := range nemGroupCount {
		eventually(t, groupNames[g]+" bridge online", func() bool { round.mu.Lock(); defer round.mu.Unlock(); return round.online[g] > 0 })
	}

	// The publishers, one per group, each on its own link.
	stop := make(chan struct{})
	var mess [nemGroupCount]*mes
	for g := range nemGroupCount {
		w.mesLinks[g] = faultproxy.Start(t, brokerAddr)
		mess[g] = &mes{addr: w.mesLinks[g].Addr(), id: fmt.Sprintf("nemesis-mes-%d-%d", seed, g), stop: stop, respond: fmt.Sprintf("nemesis/answers/%d", g)}
		t.Cleanup(mess[g].close)
	}
	stopOperator := make(chan struct{})
	var ops [nemGroupCount]*mes
	for g := range nemGroupCount {
		ops[g] = &mes{addr: w.mesLinks[g].Addr(), id: fmt.Sprintf("nemesis-operator-%d-%d", seed, g), stop: stopOperator, respond: fmt.Sprintf("nemesis/answers/%d", g)}
		t.Cleanup(ops[g].close)
	}

	// The operator: resends an unknown id only when the printer's journal says it never
	// printed it, naming the attempts it saw.
	handled := map[[3]string]bool{}
	var opWG sync.WaitGroup
	opWG.Add(1)
	go func() {
		defer opWG.Done()
		for {
			select {
			case <-stopOperator:
				return
			case <-time.After(time.Duration(30+randN(70)) * time.Millisecond):
			}
			for g := range nemGroupCount {
				round.mu.Lock()
				type cand struct {
					printer, id string
					attempts    int
				}
				var cands []cand
				for k, n := range round.unknown[g] {
					cands = append(cands, cand{k[0], k[1], n})
				}
				round.mu.Unlock()
				sort.Slice(cands, func(i, j int) bool { return cands[i].id < cands[j].id })
				for _, c := range cands {
					key := [3]string{c.printer, c.id, fmt.Sprint(c.attempts)}
					if handled[key] || journal.Printed(c.id) > 0 {
						continue
					}
					handled[key] = true
					resentMu.Lock()
					resent[c.id] = true
					resentMu.Unlock()
					cmd := round.command(g, c.printer, cmdResend, c.id, c.attempts)
					cmd.operator = true
					// The operator's resend goes again, twice, as new messages: a second
					// look at the same screen, a client that repeats after a lost PUBACK.
					again := []time.Duration{time.Duration(100+randN(900)) * time.Millisecond, time.Duration(1000+randN(2000)) * time.Millisecond}
					opWG.Add(1)
					go func() {
						defer opWG.Done()
						if !ops[g].publish(cmd) {
							return
						}
						t0 := time.Now()
						for _, d := range again {
							select {
							case <-stopOperator:
								return
							case <-time.After(time.Until(t0.Add(d))):
							}
							ops[g].repeats.Add(1)
							ops[g].late.Add(1)
							ops[g].publish(cmd)
						}
					}()
				}
			}
		}
	}()

	// The publishers' printers: each publishes its printer's printJobs in order, one once the
	// one before was acknowledged, with now and then a tombstone, a cancel or a resend.
	var pubWG sync.WaitGroup
	var tombMu sync.Mutex
	tombstones := map[string]*nemCommand{} // id -> its cancel naming 0 attempts
	for g := range nemGroupCount {
		for k, printer := range groupPrinters[g] {
			m := mess[g]
			prng := rand.New(rand.NewPCG(seed, uint64(g*16+k)))
			pubWG.Add(1)
			go func() {
				defer pubWG.Done()
				later := func(c *nemCommand) {
					// The same command again, much later, as a new message.
					d := time.Duration(200+prng.IntN(2800)) * time.Millisecond
					pubWG.Add(1)
					go func() {
						defer pubWG.Done()
						select {
						case <-stop:
						case <-time.After(d):
							m.repeats.Add(1)
							m.late.Add(1)
							m.publish(c)
						}
					}()
				}
				var abort *nemCommand // the last abortPrint, answered before the next is sent
				for n := 1; ; n++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(10+prng.IntN(50)) * time.Millisecond):
					}
					id := nemesis.ID(printer, n)
					switch r := prng.IntN(24); {
					case r == 0: // a tombstone: the cancel first, the printJob once it is answered
						c := round.command(g, printer, cmdCancel, id, 0)
						tombMu.Lock()
						tombstones[id] = c
						tombMu.Unlock()
						if !m.publish(c) {
							return
						}
						pubWG.Add(1)
						go func() {
							defer pubWG.Done()
							select {
							case <-stop:
								return
							case <-c.answered:
							}
							m.publish(round.command(g, printer, cmdPrintJob, id, 0))
						}()
						continue
					case (r == 1 || r == 3) && n > 3:
						// A cancel naming 0 attempts, as the publisher last saw the id: one of
						// the last few, or one it has since seen unknown (its cancel must then
						// find the attempts changed and do nothing).
						cid := nemesis.ID(printer, n-1-prng.IntN(3))
						if r == 3 {
							round.mu.Lock()
							var unknown []string
							for k := range round.unknown[g] {
								if k[0] == printer {
									unknown = append(unknown, k[1])
								}
							}
							round.mu.Unlock()
							if len(unknown) == 0 {
								break
							}
							slices.Sort(unknown)
							cid = unknown[prng.IntN(len(unknown))]
						}
						if !m.publish(round.command(g, printer, cmdCancel, cid, 0)) {
							return
						}
					case r == 4: // an abortPrint, when the last one was answered
						if abort != nil && !isClosed(abort.answered) {
							break
						}
						abort = round.command(g, printer, cmdAbortPrint, fmt.Sprintf("abort-%s-%d", printer, n), 0)
						if !m.publish(abort) {
							return
						}
					case r == 2: // a resend of an id seen sent: it must not print again
						round.mu.Lock()
						var sent []string
						for sid, sp := range round.sentIDs[g] {
							if sp == printer {
								sent = append(sent, sid)
							}
						}
						round.mu.Unlock()
						if len(sent) > 0 {
							slices.Sort(sent)
							if !m.publish(round.command(g, printer, cmdResend, sent[prng.IntN(len(sent))], 1)) {
								return
							}
						}
					}
					c := round.command(g, printer, cmdPrintJob, id, 0)
					if !m.publish(c) {
						return
					}
					if prng.IntN(8) == 0 {
						later(c)
					}
				}
			}()
		}
	}

	// The schedule, checking the journal after every step.
	var reported []string
	check := func(step string) {
		fig.checks++
		vs := nemesis.Check(journal.Snapshot(), func(id string) bool {
			tombMu.Lock()
			_, tomb := tombstones[id]
			tombMu.Unlock()
			return tomb || isResent(id)
		})
		for _, c := range round.all() {
			if c.kind == cmdCancel && c.answeredDone() && journal.Printed(c.id) > 0 {
				vs = append(vs, fmt.Sprintf("%s printed %d times, but its cancel naming %d attempts was answered %v", c.id, journal.Printed(c.id), c.attempts, c.states()))
			}
		}
		vs = append(vs, checkAborts(journal.Aborts(), round.all())...)
		for _, v := range vs {
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

	// Everything heals; the publishers stop once what they are publishing is acknowledged.
	for i := range nemBridges {
		for _, l := range w.links[i] {
			l.Set(faultproxy.Pass)
			l.SetDelay(0)
		}
	}
	for _, l := range w.mesLinks {
		l.Set(faultproxy.Pass)
	}
	for i := range nemBridges {
		w.restart(i)
		w.signal(i, syscall.SIGCONT)
	}
	healed := time.Now()
	check("everything healed")
	// The publishers finish the command each is on, then stop.
	time.Sleep(100 * time.Millisecond)
	close(stop)
	pubWG.Wait()

	// Every entry settles, and every command the broker took is answered.
	queue := queueName("nemesis-0", NormalizeURL(sim.URL))
	var pairEntries []outbox.Entry
	readPair := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ob, err := outbox.OpenPostgres(ctx, dsn, queue, nil)
		if err != nil {
			return err
		}
		defer ob.Close()
		pairEntries, err = ob.List()
		return err
	}
	open := func() []string {
		var out []string
		if err := readPair(); err != nil {
			return []string{"the pair's outbox: " + err.Error()}
		}
		for _, e := range pairEntries {
			if e.State == outbox.Pending || e.State == outbox.Sending || (e.State == outbox.Unknown && journal.Printed(callerID(e)) == 0) {
				out = append(out, fmt.Sprintf("%s %s (attempts %d, %q)", e.ID, e.State, e.Attempts, e.Error))
			}
		}
		round.mu.Lock()
		for _, printer := range groupPrinters[groupSingle] {
			st, ok := round.outbox[nemPrefix(groupSingle)+"/"+printer]
			switch {
			case !ok:
				out = append(out, printer+": no P/outbox")
			case st.Counts[string(outbox.Pending)]+st.Counts[string(outbox.Sending)] > 0:
				out = append(out, fmt.Sprintf("%s: P/outbox %v at %v", printer, st.Counts, st.Time.Format(time.TimeOnly)))
			default:
				for _, e := range st.Unknown {
					if journal.Printed(e.ID) == 0 {
						out = append(out, fmt.Sprintf("%s/%s unknown (attempts %d) on P/outbox", printer, e.ID, e.Attempts))
					}
				}
			}
		}
		round.mu.Unlock()
		for _, c := range round.all() {
			select {
			case <-c.answered:
			default:
				if c.acked.Load() {
					out = append(out, fmt.Sprintf("%s %s of %s (attempts %d) unanswered", c.kind, c.id, c.printer, c.attempts))
				}
			}
		}
		return out
	}
	for {
		left := open()
		if len(left) == 0 {
			break
		}
		if time.Since(healed) > p.settle {
			w.violate("%d not settled %v after every fault healed: %s", len(left), p.settle, strings.Join(left[:min(len(left), 10)], "; "))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fig.settle = time.Since(healed)
	close(stopOperator)
	opWG.Wait()
	w.stop(20 * time.Second)

	// The final check, once no bridge is left to print late. The pair's outbox is read again:
	// a command the broker took just before the last read while settling may have been
	// enqueued, answered and printed after it.
	check("every bridge stopped")
	if err := readPair(); err != nil {
		t.Fatalf("the pair's outbox: %v", err)
	}
	single, err := outbox.Open(StateFile(filepath.Join(dir, "single-state"), NormalizeURL(sim.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	singleEntries, err := single.List()
	_ = single.Close()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]outbox.Entry{}
	for _, e := range append(pairEntries, singleEntries...) {
		byKey[e.ID] = e
		n := journal.Printed(callerID(e))
		switch {
		case e.State == outbox.Sent && n == 1:
			fig.sent++
		case e.State == outbox.Unknown && n == 1:
			fig.unknown++
		case (e.State == outbox.Cancelled || e.State == outbox.Expired || e.State == outbox.Rejected) && n == 0:
			if e.State == outbox.Cancelled {
				fig.cancelled++
			}
		default:
			w.violate("%s ended %s (%q, attempts %d), printed %d times", e.ID, e.State, e.Error, e.Attempts, n)
		}
	}
	for _, c := range round.all() {
		fig.commands++
		switch c.kind {
		case cmdPrintJob:
			fig.printJobs++
			if _, ok := byKey[c.printer+"/"+c.id]; !ok && c.acked.Load() {
				if st := c.states(); !slices.Contains(st, StateCancelled) {
					w.violate("printJob %s of %s was acknowledged by the broker and answered %v, but is not in the outbox", c.id, c.printer, st)
				}
			}
		case cmdCancel:
			fig.cancels++
		case cmdAbortPrint:
			fig.aborts++
		case cmdResend:
			if c.operator {
				fig.resends++
			} else {
				fig.mesResends++
			}
		}
		if c.kind == cmdResend && !c.operator && slices.Contains(c.states(), StateDone) {
			w.violate("%s: a resend of it, seen sent, was answered done", c.id)
		}
	}
	tombMu.Lock()
	fig.tombstones = len(tombstones)
	tombMu.Unlock()
	for _, pr := range journal.Snapshot() {
		if _, ok := byKey[pr.Printer+"/"+pr.ID]; !ok {
			w.violate("%s printed, but it is in no outbox", pr.ID)
		}
	}
	fig.prints = len(journal.Snapshot())
	fig.aborted = len(journal.Aborts())
	for _, m := range append(mess[:], ops[:]...) {
		fig.repeats += int(m.repeats.Load() - m.late.Load())
		fig.late += int(m.late.Load())
		fig.published += int(m.publishs.Load())
	}
	w.pmu.Lock()
	fig.exits = w.exits
	fig.exitKinds = maps.Clone(w.exitKinds)
	exits := slices.Clone(w.exitWhy)
	w.pmu.Unlock()

	w.mu.Lock()
	violations := slices.Clone(w.violations)
	w.mu.Unlock()
	if len(violations) > 0 {
		t.Errorf("seed %d broke the bridges' promise (%s reproduces the schedule):\n  %s\nthe schedule:\n  %s\nbridges that exited on their own:\n  %s",
			seed, reproduce, strings.Join(violations, "\n  "), strings.Join(done, "\n  "), strings.Join(exits, "\n  "))
	}
	t.Logf("seed %d: %s", seed, fig.String())
	return fig
}
