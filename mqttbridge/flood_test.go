package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// rssOf returns the resident set size of process pid, read from /proc.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// rssSampler samples a process's RSS every 20 ms and keeps the largest.
type rssSampler struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := rssOf(pid); err == nil && n > s.peak.Load() {
				s.peak.Store(n)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) end() int64 {
	close(s.stop)
	<-s.done
	return s.peak.Load()
}

// startChild runs the bridge of the configuration at cfgPath as a process of its own, as
// labelprinter-mqtt does; it is killed when the test ends.
func startChild(t testing.TB, cfgPath string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+cfgPath)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// TestFloodMemoryBounded publishes 10,000 printJobs at once to a printer that is down, each
// with a Response Topic (one for all) and Correlation Data (its own) at their caps: every one
// is answered queued, none is dropped (both brokers). It measures the bridge process's RSS,
// sampled throughout and 5 s after the last answer, against its idle RSS: both stay below
// idle + 64 MiB (floodRSSBound).
func TestFloodMemoryBounded(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("publishes 10,000 commands to a bridge process, 15 to 30 s on a loaded machine; run without -short and -race")
	}
	if _, err := rssOf(os.Getpid()); err != nil {
		t.Skipf("no /proc to read RSS from: %v", err)
	}
	eachBroker(t, testFloodMemoryBounded)
}

func testFloodMemoryBounded(t *testing.T, bk testBroker) {
	const commands = 10_000
	dir := t.TempDir()
	// A port nothing listens on: the printer is down, so every command waits in the outbox.
	cfgPath := writeFile(t, dir, "bridge.yml", fmt.Sprintf(
		"broker: {url: %q, client_id: flood-bridge}\nstate_dir: %q\npoll_interval: 1s\nprinters:\n  - {name: line1, url: \"http://127.0.0.1:1\", printer: line1}\n",
		bk.URL(), filepath.Join(dir, "state")))

	var queued atomic.Int64
	var lastAnswer atomic.Int64
	// The states each command was answered with, so that a wait that times out says which
	// commands were not answered queued and what they were answered instead.
	var statesMu sync.Mutex
	states := make(map[string][]string, commands)
	sub := dialMQTT(t, bk.URL(), "flood-results", func(pr paho.PublishReceived) (bool, error) {
		if bytes.Contains(pr.Packet.Payload, []byte(`"state":"queued"`)) {
			queued.Add(1)
			lastAnswer.Store(time.Now().UnixNano())
		}
		var r Result
		if json.Unmarshal(pr.Packet.Payload, &r) == nil {
			statesMu.Lock()
			states[r.ID] = append(states[r.ID], r.State)
			statesMu.Unlock()
		}
		return true, nil
	})
	notQueued := func() string {
		statesMu.Lock()
		defer statesMu.Unlock()
		var out []string
		for i := range commands {
			id := fmt.Sprintf("f%05d", i)
			if !slices.Contains(states[id], StateQueued) {
				out = append(out, fmt.Sprintf("%s %v", id, states[id]))
			}
		}
		if len(out) > 20 {
			out = append(out[:20], fmt.Sprintf("and %d more", len(out)-20))
		}
		return strings.Join(out, ", ")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := sub.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: resultTopic("line1"), QoS: 0}}}); err != nil {
		t.Fatal(err)
	}
	w := watch(t, bk.URL(), onlineTopic(prefix))
	child := startChild(t, cfgPath)
	w.waitOnline(1)
	time.Sleep(500 * time.Millisecond)
	idle, err := rssOf(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rss := sampleRSS(child.Process.Pid)

	pub := dialMQTT(t, bk.URL(), "flood-publisher", nil)
	replyTo := "mes/replies/" + strings.Repeat("r", DefaultResponseTopicBytes-len("mes/replies/"))
	// Each command's own Correlation Data, as a caller matching answers to requests sends it:
	// the bridge keeps each until the command's outcome is final.
	corr := func(i int) []byte {
		return append(fmt.Appendf(nil, "%05d", i), bytes.Repeat([]byte("c"), DefaultCorrelationBytes-5)...)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	const publishers = 64
	for g := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < commands; i += publishers {
				payload, _ := json.Marshal(printJobCmd(fmt.Sprintf("f%05d", i)))
				_, err := pub.Publish(ctx, &paho.Publish{Topic: cmdTopic("line1", cmdPrintJob), QoS: 1, Payload: payload,
					Properties: &paho.PublishProperties{ResponseTopic: replyTo, CorrelationData: corr(i)}})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("publish: %v", err)
	default:
	}
	published := time.Since(start)
	// The answers are waited for while they keep coming: on a loaded machine the bridge may
	// take minutes over all of them, and what the test holds it to is that none is dropped, so
	// it fails once waitLimit passed without a new queued answer.
	waitFrom := time.Now()
	for queued.Load() < commands {
		since := time.Unix(0, lastAnswer.Load())
		if since.Before(waitFrom) {
			since = waitFrom
		}
		if time.Since(since) > waitLimit {
			t.Fatalf("%d of %d commands answered queued after %v, none in the last %v; not queued (with the states they were answered): %s",
				queued.Load(), commands, time.Since(start).Round(time.Second), waitLimit, notQueued())
		}
		time.Sleep(10 * time.Millisecond)
	}
	answered := time.Since(start)
	time.Sleep(5 * time.Second)
	peak := rss.end()
	after, err := rssOf(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RSS idle %.1f MiB, peak %.1f MiB (+%.1f), 5 s after the last answer %.1f MiB; %d commands published in %v, all queued in %v",
		mib(idle), mib(peak), mib(peak-idle), mib(after), commands, published.Round(time.Millisecond), answered.Round(time.Millisecond))
	if n := queued.Load(); n != commands {
		t.Errorf("%d queued answers, want %d", n, commands)
	}
	if peak-idle >= floodRSSBound {
		t.Errorf("peak RSS %.1f MiB is %.1f MiB over the idle %.1f MiB, want below %.0f MiB", mib(peak), mib(peak-idle), mib(idle), mib(floodRSSBound))
	}
	if after-idle >= floodRSSBound {
		t.Errorf("RSS 5 s after the last answer %.1f MiB is %.1f MiB over the idle %.1f MiB, want below %.0f MiB", mib(after), mib(after-idle), mib(idle), mib(floodRSSBound))
	}
	if path := os.Getenv(floodHeapProfileEnv); path != "" {
		writeChildHeapProfile(t, child, path)
	}
	_ = child.Process.Signal(syscall.SIGTERM)
	if err := child.Wait(); err != nil {
		t.Errorf("the bridge did not stop cleanly on SIGTERM: %v", err)
	}
}

// floodHeapProfileEnv names the file the flood test's bridge process writes its heap profile
// to, 5 s after the last answer, for go tool pprof (the README's Performance section); the
// file named with ".peak" after it holds the profile at the highest live heap of the run.
const floodHeapProfileEnv = "MQTTBRIDGE_FLOOD_HEAPPROFILE"

// heapProfileOnSignal writes the heap profile of this process, after a collection, to path on
// each SIGUSR1 until ctx ends, and to path+".peak" each time a collection finds more live heap
// than any before.
func heapProfileOnSignal(ctx context.Context, path string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
			}
			runtime.GC()
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}()
	go func() {
		// The profile at the peak: written again each time the live heap, as the last
		// collection found it, is higher than at any collection before.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var high uint64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rtmetrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > high {
				high = live
				if err := writeHeapProfile(path + ".peak"); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}
	}()
}

// writeHeapProfile writes this process's heap profile, as of the last collection, to path.
func writeHeapProfile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = pprof.WriteHeapProfile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	return err
}

// writeChildHeapProfile has child write its heap profile to path and waits for it.
func writeChildHeapProfile(t *testing.T, child *exec.Cmd, path string) {
	_ = os.Remove(path)
	if err := child.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the bridge's heap profile", func() bool { _, err := os.Stat(path); return err == nil })
	t.Logf("heap profile of the bridge process in %s", path)
}

// floodRSSBound is how far above its idle RSS the bridge may go under the flood: the paho
// packets of the commands the broker sent ahead, cut down to what an acknowledgement needs
// (recvpackets.go), and the Response Topic (kept once) and Correlation Data of each command
// waiting in the outbox, with the Go heap's room to grow.
const floodRSSBound = 64 << 20

func mib(n int64) float64 { return float64(n) / (1 << 20) }
