package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// BenchmarkCommands16 sends printJob commands from one MQTT client (QoS 1, up to 64 in
// flight) through the embedded broker to one bridge driving 16 printers, each its own
// simulator on loopback (so 16 controllers, 16 outbox files). The bridge commits every
// command to its outbox (bbolt, fsynced) before it acknowledges it, as it always does.
//
// load=burst publishes b.N commands at once and measures from the first publish to the last
// printJob request a printer received: ns/op is the time per command, cmds/s its inverse,
// and the latencies include the wait in the queue a burst builds.
//
// load=100/s publishes one command every 10 ms, half the 200/s goal, and reports the latency
// a command meets when the bridge keeps up.
//
// Latency is from just before the Publish call to the arrival of that command's printJob
// request at its printer: p50-ms and p99-ms. cpu-ms/cmd is this process's CPU per command
// until the last request arrived; on PostgreSQL, db-cpu-ms/cmd is that of the server's
// processes (when the tests started the server). Every command must reach its printer exactly once, or the
// benchmark fails.
func BenchmarkCommands16(b *testing.B) {
	b.Run("load=burst", func(b *testing.B) { benchCommands(b, 16, 0, false, false) })
	b.Run("load=100/s", func(b *testing.B) { benchCommands(b, 16, 10*time.Millisecond, false, false) })
}

// BenchmarkCommands16Stores is BenchmarkCommands16 with the outbox on each store in one run:
// store=bbolt (16 files, as above) and store=postgres (a pair's bridge: 16 queues in one
// PostgreSQL, the server the tests start, synchronous_commit on, the bridge lease held, every
// command committed there before its acknowledgement). Both meet the same load on a shared
// machine, the order of the stores alternating with -count.
//
//	go test -run '^$' -bench 'Commands16Stores' -benchtime 1000x -count 5 ./mqttbridge
func BenchmarkCommands16Stores(b *testing.B) {
	for _, load := range []struct {
		name  string
		every time.Duration
	}{{"burst", 0}, {"100/s", 10 * time.Millisecond}} {
		for _, store := range []string{"bbolt", "postgres"} {
			b.Run("store="+store+"/load="+load.name, func(b *testing.B) {
				benchCommands(b, 16, load.every, store == "postgres", false)
			})
		}
	}
}

// BenchmarkCommands16OneController is Commands16Stores' burst on PostgreSQL with the 16
// printers on one simulator, so on one controller: one queue, one listening connection and
// one delivery loop instead of 16 of each.
//
//	go test -run '^$' -bench 'Commands16(Stores/store=postgres/load=burst|OneController)' -benchtime 1000x -count 3 ./mqttbridge
func BenchmarkCommands16OneController(b *testing.B) {
	benchCommands(b, 16, 0, true, true)
}

// arrivals records when each print job (keyed by its description) reached a printer.
type arrivals struct {
	mu     sync.Mutex
	at     map[string]time.Time
	dups   []string
	want   int
	filled chan struct{}
}

func (a *arrivals) expect(n int) {
	a.mu.Lock()
	a.at, a.dups, a.want, a.filled = map[string]time.Time{}, nil, n, make(chan struct{})
	a.mu.Unlock()
}

func (a *arrivals) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/printJob") {
			now := time.Now()
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var j struct {
				Description string `json:"description"`
			}
			_ = json.Unmarshal(body, &j)
			a.mu.Lock()
			if _, ok := a.at[j.Description]; ok {
				a.dups = append(a.dups, j.Description)
			} else if a.at != nil {
				a.at[j.Description] = now
				if len(a.at) == a.want {
					close(a.filled)
				}
			}
			a.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// benchCommands runs the benchmark with printers printers, a command every every (0: all at
// once), the outbox in PostgreSQL or in files, and the printers each on a simulator of its
// own or all on one.
func benchCommands(b *testing.B, printers int, every time.Duration, postgres, oneController bool) {
	benchCommandsVia(b, printers, every, postgres, oneController, false, false)
}

// benchCommandsVia is benchCommands with the bridge's Sparkplug node on when node is set, and
// the commands written as Sparkplug DCMDs (Command/PrintJob, QoS 1) to it when spb is set.
func benchCommandsVia(b *testing.B, printers int, every time.Duration, postgres, oneController, node, spb bool) {
	bk := startTestBroker(b)
	arr := &arrivals{}
	cfg := Config{
		Broker:   BrokerConfig{URL: bk.URL(), ClientID: "bench-bridge"},
		StateDir: b.TempDir(),
	}
	var dbCPU func() (time.Duration, bool)
	if postgres {
		cfg.StateDir = ""
		cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: pgtest.DSN(b)}}
		dbCPU = pgtest.Shared(b).CPU
	}
	var shared *printersim.Server
	for i := range printers {
		remote := "p"
		srv := shared
		if oneController {
			remote = "p" + strconv.Itoa(i)
		}
		if srv == nil {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			names := []string{remote}
			if oneController {
				names = nil
				for j := range printers {
					names = append(names, "p"+strconv.Itoa(j))
				}
			}
			srv = printersim.Serve(ln, printersim.New(printersim.WithPrinters(names...)), arr.wrap)
			b.Cleanup(srv.Close)
			if oneController {
				shared = srv
			}
		}
		cfg.Printers = append(cfg.Printers, PrinterConfig{Name: "line" + strconv.Itoa(i), URL: srv.URL, Printer: remote})
	}
	online := watch(b, bk.URL(), onlineTopic(DefaultTopicPrefix))
	var host *spbHost
	if node || spb {
		cfg.Sparkplug = &SparkplugConfig{GroupID: "bench", EdgeNodeID: "bench1"}
		host = newSpbHost(b, bk.URL(), "bench")
	}
	startBridge(b, cfg)
	online.waitOnline(1)
	if host != nil {
		eventually(b, "the births", func() bool { return host.count("DBIRTH") == printers })
	}
	cli := dialMQTT(b, bk.URL(), "bench-mes", nil)

	b.ResetTimer()
	{
		n := max(b.N, 1)
		arr.expect(n)
		sent := make([]time.Time, n)
		ids := make([]string, n)
		payloads := make([][]byte, n)
		for i := range n {
			ids[i] = fmt.Sprintf("c%d", i)
			payloads[i], _ = json.Marshal(printJobCmd(ids[i]))
			if spb {
				pl := spbPayload(spbCmd(spbPrintJob, string(payloads[i])))
				payloads[i] = pl
			}
		}
		var (
			wg       sync.WaitGroup
			inflight = make(chan struct{}, 64)
			failed   atomic.Value
		)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		start, cpu0 := time.Now(), processCPU()
		var db0 time.Duration
		if dbCPU != nil {
			db0, _ = dbCPU()
		}
		var tick *time.Ticker
		if every > 0 {
			tick = time.NewTicker(every)
		}
		for i := range n {
			if tick != nil && i > 0 {
				<-tick.C
			}
			inflight <- struct{}{}
			wg.Add(1)
			sent[i] = time.Now()
			go func() {
				defer func() { <-inflight; wg.Done() }()
				topic := cmdTopic(cfg.Printers[i%printers].Name, "printJob")
				if spb {
					topic = "spBv1.0/bench/DCMD/bench1/" + cfg.Printers[i%printers].Name
				}
				if _, err := cli.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: payloads[i]}); err != nil {
					failed.Store(err)
				}
			}()
		}
		if tick != nil {
			tick.Stop()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			cancel()
			b.Fatalf("publish: %v", err)
		}
		select {
		case <-arr.filled:
		case <-ctx.Done():
			cancel()
			arr.mu.Lock()
			got := len(arr.at)
			arr.mu.Unlock()
			b.Fatalf("%d of %d print jobs reached the printers within %v", got, n, waitLimit)
		}
		cancel()
		arr.mu.Lock()
		lat := make([]float64, n)
		var last time.Time
		for i, id := range ids {
			at := arr.at[id]
			if at.After(last) {
				last = at
			}
			lat[i] = float64(at.Sub(sent[i])) / float64(time.Millisecond)
		}
		dups := arr.dups
		arr.mu.Unlock()
		if len(dups) > 0 {
			b.Fatalf("print jobs that reached a printer twice: %v", dups)
		}
		elapsed := last.Sub(start)
		cpu := processCPU() - cpu0
		var db time.Duration
		dbOK := false
		if dbCPU != nil {
			db, dbOK = dbCPU()
			db -= db0
		}
		slices.Sort(lat)
		b.ReportMetric(float64(elapsed)/float64(n), "ns/op")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "cmds/s")
		b.ReportMetric(percentile(lat, 0.50), "p50-ms")
		b.ReportMetric(percentile(lat, 0.99), "p99-ms")
		// This process's CPU (bridge, broker, simulators and client; not the database's) per
		// command: on a shared machine it varies far less than the rates.
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/cmd")
		if dbOK {
			// The database's processes (a server the tests started), the same way: with the
			// above, what a command costs the machine.
			b.ReportMetric(float64(db)/float64(time.Millisecond)/float64(n), "db-cpu-ms/cmd")
		}
	}
}

// BenchmarkCommands16Sparkplug is BenchmarkCommands16's burst and 100/s side by side: the
// commands on the bridge's own topics (via=topics) and as Sparkplug DCMDs to its edge node
// (via=sparkplug), with the same outboxes (bbolt files). Both runs have the node on, so the
// bridge's work beside the commands (births, DDATA of the outbox counts and outcomes) is the
// same, and the test's host, which decodes every message the node publishes, subscribes to
// those alone: it hears neither side's commands.
//
//	go test -run '^$' -bench 'Commands16Sparkplug' -benchtime 1000x -count 3 ./mqttbridge
//
// -count runs each side its times in a row, so a machine whose load moves favours one; the
// README's figures come from one test binary running the sides in pairs, each pair's order
// alternating, cpu-ms/cmd (the process's CPU per command) beside the rate:
//
//	go test -c -o /tmp/mqttbridge.test ./mqttbridge
//	for i in 1 2 3 4 5; do o="topics sparkplug"; [ $((i%2)) = 0 ] && o="sparkplug topics"
//	  for v in $o; do /tmp/mqttbridge.test -test.run '^$' -test.bench "Commands16Sparkplug/via=$v/load=burst" -test.benchtime 1000x; done; done
func BenchmarkCommands16Sparkplug(b *testing.B) {
	for _, load := range []struct {
		name  string
		every time.Duration
	}{{"burst", 0}, {"100/s", 10 * time.Millisecond}} {
		for _, via := range []string{"topics", "sparkplug"} {
			b.Run("via="+via+"/load="+load.name, func(b *testing.B) {
				benchCommandsVia(b, 16, load.every, false, false, true, via == "sparkplug")
			})
		}
	}
}

// percentile returns the p-th quantile of sorted (nearest rank).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkWatch200 is the CPU one bridge spends per poll while it watches 200 idle printers
// (impl=bridge), next to 200 labelprinter WatchCounters loops in one process (impl=sdk),
// both polling every 500 ms. The printers are 4 simulators of 50 printers each, and the
// bridge's broker, all served by a child process (this test binary) so that this process's
// CPU is the watchers' alone. The bridge also reads each controller's /status once per
// interval (4 of its 404 polls a round) and keeps an MQTT session; both count.
//
// Reported: ns/op is this process's CPU (user+system) per poll the simulators served, over a
// 4 s window at steady state; polls the polls in the window. LABELPRINTER_BENCH_ORDER=sdk-first
// runs the sdk side first.
func BenchmarkWatch200(b *testing.B) {
	env := benchChild(b, watchSims, watchPerSim)
	bridge := func(b *testing.B) {
		for b.Loop() {
			cpu, polls := measurePolls(b, env.count, func(ctx context.Context) func() { return runBridgeWatch(ctx, b, env) })
			b.ReportMetric(float64(cpu)/float64(polls), "ns/op")
			b.ReportMetric(float64(polls), "polls")
		}
	}
	sdk := func(b *testing.B) {
		for b.Loop() {
			cpu, polls := measurePolls(b, env.count, func(ctx context.Context) func() { return runSDKWatch(ctx, b, env) })
			b.ReportMetric(float64(cpu)/float64(polls), "ns/op")
			b.ReportMetric(float64(polls), "polls")
		}
	}
	if os.Getenv("LABELPRINTER_BENCH_ORDER") == "sdk-first" {
		b.Run("impl=sdk", sdk)
		b.Run("impl=bridge", bridge)
		return
	}
	b.Run("impl=bridge", bridge)
	b.Run("impl=sdk", sdk)
}

// BenchmarkWatch200Interleaved is BenchmarkWatch200 with both sides in one run: each of the
// b.N rounds measures a window of the bridge and one of the sdk, which goes first alternating
// between rounds, so both meet the same load on a shared machine. Reported: bridge-ns/poll
// and sdk-ns/poll over all rounds, and bridge/sdk, their ratio.
func BenchmarkWatch200Interleaved(b *testing.B) {
	env := benchChild(b, watchSims, watchPerSim)
	var cpu, polls [2]int64 // 0: bridge, 1: sdk
	sides := [2]func(ctx context.Context) func(){
		func(ctx context.Context) func() { return runBridgeWatch(ctx, b, env) },
		func(ctx context.Context) func() { return runSDKWatch(ctx, b, env) },
	}
	round := 0
	for b.Loop() {
		for k := range 2 {
			side := (k + round) % 2
			c, p := measurePolls(b, env.count, sides[side])
			cpu[side] += c
			polls[side] += p
		}
		round++
	}
	bridge := float64(cpu[0]) / float64(polls[0])
	sdk := float64(cpu[1]) / float64(polls[1])
	b.ReportMetric(bridge, "bridge-ns/poll")
	b.ReportMetric(sdk, "sdk-ns/poll")
	b.ReportMetric(bridge/sdk, "bridge/sdk")
}

// The printers of the CPU benchmarks: 4 simulators of 50, polled every 500 ms.
const (
	watchSims, watchPerSim = 4, 50
	watchInterval          = 500 * time.Millisecond
	watchWindow            = 4 * time.Second
)

// runBridgeWatch runs one bridge watching every printer of env until ctx ends; the function
// it returns waits until Run has returned.
func runBridgeWatch(ctx context.Context, b *testing.B, env benchEnv) func() {
	cfg := Config{
		Broker:       BrokerConfig{URL: env.broker, ClientID: "bench-watch"},
		StateDir:     b.TempDir(),
		PollInterval: watchInterval,
	}
	for s, u := range env.sims {
		for p := range watchPerSim {
			cfg.Printers = append(cfg.Printers, PrinterConfig{Name: fmt.Sprintf("s%d-p%d", s, p), URL: u, Printer: "p" + strconv.Itoa(p)})
		}
	}
	br, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- br.Run(ctx) }()
	return func() {
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}
}

// runSDKWatch runs one WatchCounters per printer of env, one Client per simulator, until ctx
// ends; the function it returns waits until they have stopped.
func runSDKWatch(ctx context.Context, b *testing.B, env benchEnv) func() {
	var wg sync.WaitGroup
	var clients []*labelprinter.Client
	for _, u := range env.sims {
		c, err := labelprinter.NewClient(u)
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, c)
		for p := range watchPerSim {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, err := range c.Printers.WatchCounters(ctx, "p"+strconv.Itoa(p), &labelprinter.WatchOptions{Interval: watchInterval}) {
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
	}
	return func() {
		wg.Wait()
		for _, c := range clients {
			c.Close()
		}
	}
}

// measurePolls starts the watchers (start returns a function that waits until they have
// stopped after ctx ends), lets them settle, and returns this process's CPU time and the
// simulators' requests over a window.
func measurePolls(b *testing.B, count func() int64, start func(ctx context.Context) (wait func())) (cpu, polls int64) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := start(ctx)
	// Three intervals for every watch to connect and settle into its rhythm (and the
	// bridge to reach its broker and publish the first retained state).
	time.Sleep(3*watchInterval + 200*time.Millisecond)
	polls0, cpu0 := count(), processCPU()
	time.Sleep(watchWindow)
	polls1, cpu1 := count(), processCPU()
	cancel()
	wait()
	runtime.GC()
	if polls1 <= polls0 {
		b.Fatal("no polls in the window")
	}
	return cpu1 - cpu0, polls1 - polls0
}

// processCPU is this process's user and system CPU time in nanoseconds (children excluded).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchEnv is what the child process of BenchmarkWatch200 serves.
type benchEnv struct {
	sims   []string
	broker string
	count  func() int64
}

const benchChildEnv = "MQTTBRIDGE_BENCH_SIMS"

// benchChild starts the simulators and a broker in a child process (this test binary,
// running TestBenchChild) and returns their URLs and a function that reads how many requests
// the simulators have served.
func benchChild(b *testing.B, sims, perSim int) benchEnv {
	farm := testkit.StartFarm(b, "TestBenchChild", benchChildEnv, sims, perSim)
	if farm.Extra["broker"] == "" {
		b.Fatal("the child process announced no broker")
	}
	return benchEnv{sims: farm.Sims, broker: farm.Extra["broker"], count: farm.Requests}
}

// TestBenchChild is the child process of BenchmarkWatch200: it serves the simulators and a
// broker until its stdin closes. Run any other way, it does nothing.
func TestBenchChild(t *testing.T) {
	testkit.ServeFarm(t, benchChildEnv, func(t *testing.T) map[string]string {
		return map[string]string{"broker": startTestBroker(t).URL()}
	})
}
