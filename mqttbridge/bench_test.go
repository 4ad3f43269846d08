package mqttbridge

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// BenchmarkCommands: one publisher sends printJob commands at QoS 1, through the embedded
// broker, to 16 simulated printers; each is committed (fsynced) to the outbox before it is
// acknowledged. It reports commands per second until the last one is sent, and the latency
// from publish to the printer's printJob request, p50 and p99.
func BenchmarkCommands(b *testing.B) {
	printers := make([]string, 16)
	for i := range printers {
		printers[i] = fmt.Sprintf("p%02d", i)
	}
	pl := startPlant(b, printers...)
	bk := newEmbedded(b)
	w := watch(b, bk.URL(), onlineTopic(prefix))
	cfg := testConfig(b, bk.URL(), pl, printers...)
	cfg.PollInterval = time.Second
	startBridge(b, cfg)
	w.waitOnline(1)
	s := newSender(b, bk.URL())
	published := make(map[string]time.Time, b.N)
	ids := make([]string, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		id := fmt.Sprintf("b%07d", i)
		ids[i] = id
		published[id] = time.Now()
		s.send(cmdTopic(printers[i%len(printers)], "printJob"), printJobCmd(id))
	}
	eventually(b, "every command at the printer", func() bool {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		return len(pl.arrived) >= b.N
	})
	elapsed := time.Since(start)
	b.StopTimer()
	lat := make([]time.Duration, 0, b.N)
	pl.mu.Lock()
	for _, id := range ids {
		lat = append(lat, pl.arrived[id].Sub(published[id]))
	}
	pl.mu.Unlock()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commands/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPoll200: the process's CPU time per counters poll for one bridge watching 200
// printers, next to 200 WatchCounters loops alone (the simulator's share is in both). b.N
// is the number of polls.
func BenchmarkPoll200(b *testing.B) {
	printers := make([]string, 200)
	for i := range printers {
		printers[i] = fmt.Sprintf("p%03d", i)
	}
	const interval = 100 * time.Millisecond
	route := "/api/v3/printers/{name}/printCounters"
	measure := func(b *testing.B, pl *plant) {
		b.Helper()
		// Let the first round (connections, first answers) pass before counting.
		base := pl.Sim.Requests("GET", route)
		eventually(b, "the first round", func() bool { return pl.Sim.Requests("GET", route) >= base+len(printers) })
		b.ResetTimer()
		c0, r0 := cpuTime(), pl.Sim.Requests("GET", route)
		for pl.Sim.Requests("GET", route) < r0+b.N {
			time.Sleep(5 * time.Millisecond)
		}
		polls := pl.Sim.Requests("GET", route) - r0
		b.StopTimer()
		b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(polls), "cpu-µs/poll")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("bridge", func(b *testing.B) {
		pl := startPlant(b, printers...)
		bk := newEmbedded(b)
		w := watch(b, bk.URL(), onlineTopic(prefix))
		cfg := testConfig(b, bk.URL(), pl, printers...)
		cfg.PollInterval = interval
		startBridge(b, cfg)
		w.waitOnline(1)
		measure(b, pl)
	})
	b.Run("watch-only", func(b *testing.B) {
		pl := startPlant(b, printers...)
		c, err := labelprinter.NewClient(pl.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		for _, p := range printers {
			go func() {
				defer func() { done <- struct{}{} }()
				for range c.Printers.WatchCounters(ctx, p, &labelprinter.WatchOptions{Interval: interval}) {
				}
			}()
		}
		measure(b, pl)
		cancel()
		for range printers {
			<-done
		}
	})
}
