package labelprinter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
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
	urls, count := benchSimProcess(b, sims, perSim)
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

// benchSimProcess starts the simulators in a child process (this test binary, running
// TestBenchSimProcess) and returns their URLs and a function that reads how many requests
// they have served.
func benchSimProcess(b *testing.B, sims, perSim int) ([]string, func() int64) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchSimProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LABELPRINTER_BENCH_SIMS="+strconv.Itoa(sims)+"x"+strconv.Itoa(perSim))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	var urls []string
	countURL := ""
	for sc.Scan() {
		line := sc.Text()
		if u, ok := strings.CutPrefix(line, "sim "); ok {
			urls = append(urls, u)
		} else if u, ok := strings.CutPrefix(line, "count "); ok {
			countURL = u
			break
		}
	}
	if countURL == "" || len(urls) != sims {
		b.Fatalf("the simulator process printed %d URLs and no count URL", len(urls))
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	hc := &http.Client{Transport: &http.Transport{}}
	b.Cleanup(hc.CloseIdleConnections)
	return urls, func() int64 {
		resp, err := hc.Get(countURL)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		n, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
}

// TestBenchSimProcess is the child process of BenchmarkWatch1000: it serves the simulators
// until its stdin closes. Run any other way, it does nothing.
func TestBenchSimProcess(t *testing.T) {
	spec := os.Getenv("LABELPRINTER_BENCH_SIMS")
	if spec == "" {
		t.Skip("the simulator process of BenchmarkWatch1000")
	}
	var sims, perSim int
	if _, err := fmt.Sscanf(spec, "%dx%d", &sims, &perSim); err != nil {
		t.Fatal(err)
	}
	names := make([]string, perSim)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
	}
	servers := make([]*printersim.Server, sims)
	for i := range servers {
		srv, err := printersim.Start(printersim.WithPrinters(names...))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		servers[i] = srv
		fmt.Printf("sim %s\n", srv.URL)
	}
	var total atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int64
		for _, s := range servers {
			n += int64(s.Sim.TotalRequests())
		}
		total.Store(n)
		fmt.Fprintln(w, n)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Printf("count http://%s/\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}
