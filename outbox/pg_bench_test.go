package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// BenchmarkEnqueueStores puts the stores side by side in one run: durable Enqueue with 1 and
// 16 producers to the bbolt file, to a queue in PostgreSQL (a local server the test starts,
// synchronous_commit on), and a hand-written loop of INSERT ... ON CONFLICT DO NOTHING on the
// same server, which is the most any store there can do one entry at a time; insert-group is
// that loop with the rows of the producers waiting at the same time inserted in one statement
// and one commit (group commit), the most sharing commits could save. cpu-ms/op and
// db-cpu-ms/op are the CPU per Enqueue (per row) of this process and of the server's
// processes.
//
//	go test -run '^$' -bench EnqueueStores -benchtime 2s -count 6 ./outbox
func BenchmarkEnqueueStores(b *testing.B) {
	j := labelprinter.PrintJob{LabelName: "L", Copies: 1, Description: "benchmark"}
	body, err := j.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	for _, producers := range []int{1, 16} {
		b.Run(fmt.Sprintf("store=bbolt/producers=%d", producers), func(b *testing.B) {
			ob, _ := openOutbox(b, nil)
			benchProducers(b, producers, nil, func(i int64) error {
				_, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("b", i), Printer: "line1", Job: j})
				return err
			})
		})
		b.Run(fmt.Sprintf("store=postgres/producers=%d", producers), func(b *testing.B) {
			ob := openPG(b, pgtest.DSN(b), "bench", nil)
			benchProducers(b, producers, pgtest.Shared(b).CPU, func(i int64) error {
				_, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("b", i), Printer: "line1", Job: j})
				return err
			})
		})
		b.Run(fmt.Sprintf("store=insert-loop/producers=%d", producers), func(b *testing.B) {
			pool := benchTable(b)
			benchProducers(b, producers, pgtest.Shared(b).CPU, func(i int64) error {
				_, err := pool.Exec(context.Background(), `INSERT INTO bench (queue, id, printer, job) VALUES ($1, $2, $3, $4)
					ON CONFLICT DO NOTHING`, "bench", fmt.Sprint("b", i), "line1", string(body))
				return err
			})
		})
		b.Run(fmt.Sprintf("store=insert-group/producers=%d", producers), func(b *testing.B) {
			// Group commit at its simplest: one committer inserts, in one statement and one
			// transaction, every row handed to it while its last statement ran.
			pool := benchTable(b)
			type row struct {
				id   string
				done chan error
			}
			rows := make(chan row, 64)
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				for r := range rows {
					group := []row{r}
				more:
					for len(group) < 64 {
						select {
						case r, ok := <-rows:
							if !ok {
								break more
							}
							group = append(group, r)
						default:
							break more
						}
					}
					ids := make([]string, len(group))
					for i, r := range group {
						ids[i] = r.id
					}
					_, err := pool.Exec(context.Background(), `INSERT INTO bench (queue, id, printer, job)
						SELECT 'bench', u.id, 'line1', $2 FROM unnest($1::text[]) AS u(id) ON CONFLICT DO NOTHING`, ids, string(body))
					for _, r := range group {
						r.done <- err
					}
				}
			}()
			benchProducers(b, producers, pgtest.Shared(b).CPU, func(i int64) error {
				done := make(chan error, 1)
				rows <- row{fmt.Sprint("b", i), done}
				return <-done
			})
			close(rows)
			<-stopped
		})
	}
}

// benchTable makes the table of the insert loops and returns a pool of the store's size.
func benchTable(b *testing.B) *pgxpool.Pool {
	dsn := pgtest.DSN(b)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = pgMaxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE bench (queue text, id text, printer text, job text,
		enqueued timestamptz DEFAULT now(), PRIMARY KEY (queue, id))`); err != nil {
		b.Fatal(err)
	}
	return pool
}

// benchProducers runs b.N calls of enqueue from producers goroutines and reports intents/s,
// and the CPU per call of this process (cpu-ms/op) and of the server's processes when the
// tests started the server (db-cpu-ms/op): on a shared machine they vary far less than the
// rate.
func benchProducers(b *testing.B, producers int, dbCPU func() (time.Duration, bool), enqueue func(i int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	if dbCPU == nil {
		dbCPU = func() (time.Duration, bool) { return 0, false }
	}
	b.ResetTimer()
	start := time.Now()
	cpu0 := processCPU()
	db0, dbOK := dbCPU()
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := enqueue(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "intents/s")
	b.ReportMetric(float64(processCPU()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	if db1, ok := dbCPU(); ok && dbOK {
		b.ReportMetric(float64(db1-db0)/float64(time.Millisecond)/float64(b.N), "db-cpu-ms/op")
	}
}

// processCPU is this process's user and system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkDeliveryPostgres is BenchmarkDelivery's outbox on a queue in PostgreSQL: b.N
// entries of one printer, all due, delivered by Drain one after the other. cpu-ms/op and
// db-cpu-ms/op are the CPU per entry of this process (the simulator's included) and of the
// server's processes, when the tests started the server.
//
//	go test -run '^$' -bench 'DeliveryPostgres' -benchtime 2000x -count 6 ./outbox
func BenchmarkDeliveryPostgres(b *testing.B) {
	srv, _ := startSim(b, nil)
	j := labelprinter.PrintJob{LabelName: "L", Queue: labelprinter.Ptr(false), Description: "benchmark"}
	ob := openPG(b, pgtest.DSN(b), "bench", newClient(b, srv.URL))
	for i := range b.N {
		if _, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("d", i), Printer: "line1", Job: j}); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dbCPU := pgtest.Shared(b).CPU
	b.ResetTimer()
	cpu0 := processCPU()
	db0, dbOK := dbCPU()
	if err := ob.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	if db1, ok := dbCPU(); ok && dbOK {
		b.ReportMetric(float64(db1-db0)/float64(time.Millisecond)/float64(b.N), "db-cpu-ms/op")
	}
	if sent, _ := ob.List(Sent); len(sent) != b.N {
		b.Fatalf("%d of %d sent", len(sent), b.N)
	}
}

// BenchmarkReadTwoIDsPostgres is what a bridge's printJob reads of its outbox before it
// enqueues: two IDs (its key, and its bare id of older versions), neither of them there for
// a new command, by 16 commands at once. reads=get-at-once makes two Gets at once, as the
// bridge did; reads=get-each one GetEach, one statement. cpu-ms/op and db-cpu-ms/op are the
// CPU of a pair of reads in this process and in the server's processes.
//
//	go test -run '^$' -bench 'ReadTwoIDsPostgres' -benchtime 4000x -count 6 ./outbox
func BenchmarkReadTwoIDsPostgres(b *testing.B) {
	ob := openPG(b, pgtest.DSN(b), "bench", nil)
	j := labelprinter.PrintJob{LabelName: "L", Copies: 1, Description: "benchmark"}
	for i := range 1000 {
		if _, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint("line1/e", i), Printer: "line1", Job: j}); err != nil {
			b.Fatal(err)
		}
	}
	check := func(errs ...error) error {
		for _, err := range errs {
			if !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
		}
		return nil
	}
	b.Run("reads=get-at-once", func(b *testing.B) {
		benchProducers(b, 16, pgtest.Shared(b).CPU, func(i int64) error {
			other := make(chan error, 1)
			go func() {
				_, err := ob.Get(fmt.Sprint("n", i))
				other <- err
			}()
			_, err := ob.Get(fmt.Sprint("line1/n", i))
			return check(err, <-other)
		})
	})
	b.Run("reads=get-each", func(b *testing.B) {
		benchProducers(b, 16, pgtest.Shared(b).CPU, func(i int64) error {
			_, errs := ob.GetEach(fmt.Sprint("line1/n", i), fmt.Sprint("n", i))
			return check(errs...)
		})
	})
}
