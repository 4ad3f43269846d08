package outbox

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// BenchmarkEnqueue measures durable Enqueue throughput: every intent is committed and fsynced
// before its Enqueue returns, to a file in the test's temporary directory. Concurrent
// producers share commits through bbolt's Batch.
//
//	go test -run '^$' -bench Enqueue -benchtime 2s -count 6 ./outbox
func BenchmarkEnqueue(b *testing.B) {
	for _, producers := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			ob, _ := openOutbox(b, nil)
			j := labelprinter.PrintJob{LabelName: "L", Copies: 1, Description: "benchmark"}
			var next atomic.Int64
			var wg sync.WaitGroup
			commits := ob.commits.Load()
			b.ResetTimer()
			start := time.Now()
			for range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						if _, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("b", i), Printer: "line1", Job: j}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "intents/s")
			b.ReportMetric(float64(ob.commits.Load()-commits)/float64(b.N), "commits/op")
		})
	}
}

// BenchmarkDelivery compares a bare PrintJob loop with the outbox delivering the same jobs to
// the same simulator, one printer, one job at a time: the difference is the two commits the
// outbox makes around each job (Sending, then the outcome).
//
//	go test -run '^$' -bench Delivery -benchtime 2000x -count 6 ./outbox
func BenchmarkDelivery(b *testing.B) {
	srv, _ := startSim(b, nil)
	j := labelprinter.PrintJob{LabelName: "L", Queue: labelprinter.Ptr(false), Description: "benchmark"}
	b.Run("impl=bare", func(b *testing.B) {
		c := newClient(b, srv.URL)
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			if _, err := c.Printers.PrintJob(ctx, "line1", &j); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=outbox", func(b *testing.B) {
		ob, _ := openOutbox(b, newClient(b, srv.URL))
		for i := range b.N {
			if _, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("d", i), Printer: "line1", Job: j}); err != nil {
				b.Fatal(err)
			}
		}
		commits := ob.commits.Load()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		b.ResetTimer()
		go func() { errc <- ob.Run(ctx) }()
		for {
			ob.mu.Lock()
			left := len(ob.items)
			ob.mu.Unlock()
			if left == 0 {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		b.StopTimer()
		cancel()
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ob.commits.Load()-commits)/float64(b.N), "commits/op")
		if sent, _ := ob.List(Sent); len(sent) != b.N {
			b.Fatalf("%d of %d sent", len(sent), b.N)
		}
	})
}
