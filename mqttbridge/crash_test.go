package mqttbridge

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// childEnv names the configuration file of a bridge child process.
const childEnv = "MQTTBRIDGE_CHILD_CONFIG"

// childMain runs the bridge when this binary was started as a child by TestCrashRecovery:
// as labelprinter-mqtt does, until SIGTERM.
func childMain() (int, bool) {
	path := os.Getenv(childEnv)
	if path == "" {
		return 0, false
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var opts []Option
	if os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	opts = append(opts, childCrashOptions()...)
	if path := os.Getenv(floodHeapProfileEnv); path != "" {
		heapProfileOnSignal(ctx, path)
	}
	b, err := New(*cfg, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	if err := b.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

// TestCrashRecovery kills a bridge process with SIGKILL at random moments while 200 print
// commands to 4 printers are published throughout, and one more per printer while each killed
// bridge is down, restarting it each time. The kills are placed by the printer's
// progress (the n-th kill once the printer has seen a set number of jobs, then a random few
// milliseconds more), so there are exactly crashKills of them however fast the child runs. At
// the end no command reached the printer twice, every command is in the outbox as sent or
// unknown, and unknown ones are at most one per kill and printer.
func TestCrashRecovery(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, testCrashRecovery)
}

func testCrashRecovery(t *testing.T, bk testBroker) {
	// Against both brokers the commands are published while the kills happen: a command may
	// arrive while no bridge is connected, while the next one takes the session over, or while
	// a bridge holds it unacknowledged.
	const (
		commands   = 200
		crashKills = 5
	)
	printers := []string{"p1", "p2", "p3", "p4"}
	pl := startPlant(t, printers...)
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, "broker: {url: %q, client_id: crash-bridge}\nstate_dir: %q\npoll_interval: 200ms\nprinters:\n", bk.URL(), filepath.Join(dir, "state"))
	for _, p := range printers {
		fmt.Fprintf(&b, "  - {name: %s, url: %q, printer: %s}\n", p, pl.URL, p)
	}
	cfgPath := writeFile(t, dir, "bridge.yml", b.String())

	w := watch(t, bk.URL(), prefix+"/#")
	online := onlineTopic(prefix)
	offlines := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		n := 0
		for _, p := range w.got {
			if p.Topic == online && onlineStateOf(p) == BridgeOffline {
				n++
			}
		}
		return n
	}
	onlines := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		n := 0
		for _, p := range w.got {
			if p.Topic == online && onlineStateOf(p) == BridgeOnline {
				n++
			}
		}
		return n
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+cfgPath)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A test that fails half-way must not leave a bridge running (and holding this
		// process's stderr) after it.
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	distinct := func() int {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		return len(pl.jobs)
	}

	// The first child makes the persistent session; the commands then wait in it whenever
	// no bridge is connected.
	child := start()
	eventually(t, "the first bridge online", func() bool { return onlines() >= 1 })
	s := newSender(t, bk.URL())
	sendDone := make(chan struct{})
	// Every command published, with its printer, for the checks at the end.
	var pubMu sync.Mutex
	var published [][2]string
	publish := func(id, printer string) {
		s.send(cmdTopic(printer, "printJob"), printJobCmd(id))
		pubMu.Lock()
		published = append(published, [2]string{id, printer})
		pubMu.Unlock()
	}
	// down is set from each kill until the next bridge is online; whileDown counts the
	// commands whose publication the broker acknowledged meanwhile.
	var down atomic.Bool
	var whileDown atomic.Int32
	go func() {
		defer close(sendDone)
		for i := range commands {
			// Paced, and at most 40 ahead of the printer, so that publishing goes on
			// through the kills, which follow the printer, however fast either side runs.
			time.Sleep(time.Duration(1+rand.IntN(4)) * time.Millisecond)
			for deadline := time.Now().Add(waitLimit); i > distinct()+40 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			publish(fmt.Sprintf("c%03d", i), printers[i%len(printers)])
			if down.Load() {
				whileDown.Add(1)
			}
		}
	}()
	t.Cleanup(func() { <-sendDone })

	var lastStart time.Time
	for k := range crashKills {
		// Kill k once the printer has seen at least this many distinct jobs: spread over the
		// run and below what the printer sees in the end, whatever the kills left unknown.
		threshold := k*30 + 1 + rand.IntN(25)
		eventually(t, fmt.Sprintf("%d jobs at the printer before kill %d", threshold, k+1), func() bool { return distinct() >= threshold })
		// Every child is killed after it connected, so each kill leaves a Will to check.
		eventually(t, fmt.Sprintf("bridge %d online", k+1), func() bool { return onlines() >= k+1 })
		time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
		down.Store(true)
		_ = child.Process.Kill()
		_ = child.Wait()
		// The broker publishes the Will at once (Will Delay Interval 0).
		eventually(t, "the Will after a kill", func() bool { return offlines() >= k+1 })
		// One command per printer while certainly no bridge is connected.
		for _, p := range printers {
			publish(fmt.Sprintf("k%d-%s", k+1, p), p)
			whileDown.Add(1)
		}
		lastStart = time.Now()
		child = start()
		eventually(t, fmt.Sprintf("bridge %d online", k+2), func() bool { return onlines() >= k+2 })
		down.Store(false)
	}
	<-sendDone
	// One last command per printer: a printer's commands go out in order, so when its
	// marker is sent every command before it is settled.
	for _, p := range printers {
		s.send(cmdTopic(p, "printJob"), printJobCmd("marker-"+p))
	}
	for _, p := range printers {
		eventually(t, "marker of "+p, func() bool { return contains(w.statesOf(resultTopic(p), "marker-"+p), StateSent) })
	}
	_ = child.Process.Signal(syscall.SIGTERM)
	if err := child.Wait(); err != nil {
		t.Fatalf("the last bridge did not stop cleanly on SIGTERM: %v", err)
	}
	if last := w.last(online); last == nil || onlineStateOf(last) != BridgeOffline {
		t.Errorf("after SIGTERM, %s is not offline", online)
	}

	ob, err := outbox.Open(StateFile(filepath.Join(dir, "state"), pl.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	unknown := 0
	for _, c := range published {
		id, printer := c[0], c[1]
		e, err := ob.Get(printer + "/" + id) // outboxKey: ids belong to a printer
		if err != nil {
			t.Errorf("%s: %v (the command was lost)", id, err)
			continue
		}
		n := pl.printed(id)
		switch {
		case n > 1:
			t.Errorf("%s reached the printer %d times", id, n)
		case e.State == outbox.Sent && n != 1:
			t.Errorf("%s is sent but reached the printer %d times", id, n)
		case e.State == outbox.Unknown:
			unknown++
			// Found sending by the last bridge's outbox (which no kill stopped), and
			// published as unknown once connected.
			if e.Updated.After(lastStart) && !contains(w.statesOf(resultTopic(printer), id), StateUnknown) {
				t.Errorf("%s is unknown, but no unknown result was published", id)
			}
		case e.State != outbox.Sent:
			t.Errorf("%s is %s, want sent or unknown", id, e.State)
		}
	}
	if unknown > crashKills*len(printers) {
		t.Errorf("%d unknown, more than %d kills × %d printers", unknown, crashKills, len(printers))
	}
	t.Logf("%d commands (%d published while a bridge was down), %d kills: %d sent, %d unknown",
		len(published), whileDown.Load(), crashKills, len(published)-unknown, unknown)
}
