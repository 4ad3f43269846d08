package labelprinter

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

// BenchmarkWatch1000 watches 1,000 printers from one process: 1,000 WatchCounters ("sdk")
// next to 1,000 polling loops written by hand with net/http ("raw"), against 20 simulators of
// 50 printers each, served on loopback by a child process so that this process's CPU and heap
// are the watchers' alone. Each side gets one Client (or http.Client with the same transport)
// per simulator, as an integrator would have one per printer host, and polls every 500 ms.
//
// Reported: ns/op is the watchers' CPU (user+system) per poll, measured over a 4 s window at
// steady state; heap-B/watch is the live heap the running watches hold, over what the clients
// held before they started; stack-B/watch the same for goroutine stacks; polls the polls
// counted by the simulators in the window.
func BenchmarkWatch1000(b *testing.B) {
	const (
		sims, perSim = 20, 50
		interval     = 500 * time.Millisecond
		window       = 4 * time.Second
	)
	farm := testkit.StartFarm(b, "TestBenchSimProcess", benchSimsEnv, sims, perSim)
	urls, count := farm.Sims, farm.Requests
	runPair(b, "", func(b *testing.B) {
		clients := map[string]*Client{}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		benchWatchSide(b, urls, perSim, interval, window, count, func(ctx context.Context, url, printer string, wg *sync.WaitGroup) func() {
			c := clients[url]
			if c == nil {
				var err error
				if c, err = NewClient(url); err != nil {
					b.Fatal(err)
				}
				clients[url] = c
			}
			return func() {
				defer wg.Done()
				for _, err := range c.Printers.WatchCounters(ctx, printer, &WatchOptions{Interval: interval}) {
					if err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
	}, func(b *testing.B) {
		clients := map[string]*http.Client{}
		defer func() {
			for _, hc := range clients {
				hc.CloseIdleConnections()
			}
		}()
		benchWatchSide(b, urls, perSim, interval, window, count, func(ctx context.Context, url, printer string, wg *sync.WaitGroup) func() {
			hc := clients[url]
			if hc == nil {
				hc = &http.Client{Transport: DefaultTransport()}
				clients[url] = hc
			}
			return func() {
				defer wg.Done()
				rawWatch(ctx, hc, url+"/api/v3/printers/"+printer+"/printCounters", interval, func(pc PrintCounters) {}, func(err error) { b.Error(err) })
			}
		})
	})
}

// rawWatch is the polling loop an integrator writes by hand: poll, report a change, wait.
func rawWatch(ctx context.Context, hc *http.Client, url string, interval time.Duration, changed func(PrintCounters), failed func(error)) {
	var last PrintCounters
	first := true
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pc, err := rawCountersURL(ctx, hc, url)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failed(err)
		case first || *pc != last:
			first, last = false, *pc
			changed(*pc)
		}
		t.Reset(interval)
	}
}

// rawCountersURL is rawCounters for any printer's URL.
func rawCountersURL(ctx context.Context, hc *http.Client, url string) (*PrintCounters, error) {
	resp, err := rawGet(ctx, hc, url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out PrintCounters
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return &out, nil
}

// benchWatchSide starts one watch per printer (start returns the goroutine's body, the client
// made outside it so the baseline heap holds the clients), lets them settle, and measures a
// window.
func benchWatchSide(b *testing.B, urls []string, perSim int, interval, window time.Duration, count func() int64,
	start func(ctx context.Context, url, printer string, wg *sync.WaitGroup) func()) {
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		bodies := make([]func(), 0, len(urls)*perSim)
		for _, u := range urls {
			for p := range perSim {
				wg.Add(1)
				bodies = append(bodies, start(ctx, u, "p"+strconv.Itoa(p), &wg))
			}
		}
		heap0, stack0 := liveMem()
		for _, f := range bodies {
			go f()
		}
		// Two intervals for every watch to connect and settle into its rhythm.
		time.Sleep(2*interval + 200*time.Millisecond)
		heap1, stack1 := liveMem()
		polls0, cpu0 := count(), cpuTime()
		time.Sleep(window)
		polls1, cpu1 := count(), cpuTime()
		cancel()
		wg.Wait()
		n := float64(len(bodies))
		polls := polls1 - polls0
		b.ReportMetric(float64(cpu1-cpu0)/float64(polls), "ns/op")
		b.ReportMetric(float64(heap1-heap0)/n, "heap-B/watch")
		b.ReportMetric(float64(stack1-stack0)/n, "stack-B/watch")
		b.ReportMetric(float64(polls), "polls")
		bodies = nil
		runtime.GC()
	}
}

// liveMem returns the live heap and the goroutine stacks in use, after a full collection.
func liveMem() (heap, stack int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc), int64(m.StackInuse)
}

// cpuTime is this process's user and system CPU time, in nanoseconds (children excluded).
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestBenchSimProcess is the child process of BenchmarkWatch1000: it serves the simulators
// until its stdin closes. Run any other way, it does nothing.
func TestBenchSimProcess(t *testing.T) { testkit.ServeFarm(t, benchSimsEnv, nil) }

const benchSimsEnv = "LABELPRINTER_BENCH_SIMS"
