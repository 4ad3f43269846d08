package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/mqttbridge"
	"github.com/labelprinter/go-labelprinter/printersim"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkStartupSettled100k starts the bridge's binary on a state_dir whose outbox holds
// 100,000 expired entries (each a job with a 300-byte label) and measures, per start, the time
// from exec to its online message on the broker (ms/online) and its peak RSS, read at online
// (MiB-RSS-online) and 2 s later (MiB-RSS-peak), when the start's prune has run too. The
// binary is built from this tree; LABELPRINTER_MQTT_BASELINE names another build (the version
// before, built from a clone at its commit), measured the same way in the same run, on a file
// of its own. Each binary starts once before the starts measured: a file of the format before
// is indexed then, once.
//
//	go build -o /tmp/labelprinter-mqtt-before ./cmd/labelprinter-mqtt   # in a clone of the version before
//	LABELPRINTER_MQTT_BASELINE=/tmp/labelprinter-mqtt-before go test -run '^$' -bench 'StartupSettled100k$' -benchtime 5x ./cmd/labelprinter-mqtt
func BenchmarkStartupSettled100k(b *testing.B) {
	bins := map[string]string{"this": filepath.Join(b.TempDir(), "labelprinter-mqtt")}
	if out, err := exec.Command("go", "build", "-o", bins["this"], ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	names := []string{"this"}
	if base := os.Getenv("LABELPRINTER_MQTT_BASELINE"); base != "" {
		bins["baseline"] = base
		names = []string{"baseline", "this"}
	}
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	bk, err := mqttbridge.StartBroker("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	for _, name := range names {
		b.Run("binary="+name, func(b *testing.B) {
			dir := b.TempDir()
			state := filepath.Join(dir, "state")
			if err := os.MkdirAll(state, 0o700); err != nil {
				b.Fatal(err)
			}
			writeSettled(b, mqttbridge.StateFile(state, sim.URL), 100_000)
			cfg := filepath.Join(dir, "bridge.yml")
			if err := os.WriteFile(cfg, fmt.Appendf(nil, "broker: {url: %q, client_id: bench-%s}\nstate_dir: %s\nprinters: [{name: line1, url: %q, printer: line1}]\n",
				bk.URL(), name, state, sim.URL), 0o600); err != nil {
				b.Fatal(err)
			}
			startOnce(b, bins[name], cfg, bk.Addr()) // the first start, not measured
			var online, atOnline, peak float64
			b.ResetTimer()
			for range b.N {
				o, r1, r2 := startOnce(b, bins[name], cfg, bk.Addr())
				online += o.Seconds() * 1000
				atOnline, peak = max(atOnline, r1), max(peak, r2)
			}
			b.StopTimer()
			b.ReportMetric(online/float64(b.N), "ms/online")
			b.ReportMetric(atOnline, "MiB-RSS-online")
			b.ReportMetric(peak, "MiB-RSS-peak")
		})
	}
}

// BenchmarkStartupSettled100kPostgres is BenchmarkStartupSettled100k for a pair's queue in
// PostgreSQL (outbox.postgres): a server of its own, a schema for each binary, and in its
// queue 100,000 expired entries (300-byte labels) whose results the broker took, marked in
// the pair's ledger as a version before marked them. Each binary starts once before the starts
// measured (this one then moves the ledger's marks into the queue, once). It measures exec to
// online and the peak RSS as the file's benchmark does, with LABELPRINTER_MQTT_BASELINE beside
// it in the same run.
//
//	LABELPRINTER_MQTT_BASELINE=/tmp/labelprinter-mqtt-before go test -run '^$' -bench StartupSettled100kPostgres -benchtime 3x ./cmd/labelprinter-mqtt
func BenchmarkStartupSettled100kPostgres(b *testing.B) {
	bins := map[string]string{"this": filepath.Join(b.TempDir(), "labelprinter-mqtt")}
	if out, err := exec.Command("go", "build", "-o", bins["this"], ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	names := []string{"this"}
	if base := os.Getenv("LABELPRINTER_MQTT_BASELINE"); base != "" {
		bins["baseline"] = base
		names = []string{"baseline", "this"}
	}
	srv := pgtest.Own(b)
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	bk, err := mqttbridge.StartBroker("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	for _, name := range names {
		b.Run("binary="+name, func(b *testing.B) {
			dsn := srv.NewSchema(b)
			clientID := "bench-pg-" + name
			cfg := filepath.Join(b.TempDir(), "bridge.yml")
			if err := os.WriteFile(cfg, fmt.Appendf(nil, "broker: {url: %q, client_id: %s}\noutbox: {postgres: {dsn: %q}}\nprinters: [{name: line1, url: %q, printer: line1}]\n",
				bk.URL(), clientID, dsn, sim.URL), 0o600); err != nil {
				b.Fatal(err)
			}
			startOnce(b, bins[name], cfg, bk.Addr()) // makes the tables; the ledger keeps marks from here
			fillSettledPostgres(b, dsn, clientID+" "+mqttbridge.NormalizeURL(sim.URL), 100_000)
			// The first start on them, not measured: this version reads the whole history
			// once then, and moves the ledger's marks into the queue, a statement per 1,000.
			startOnceWithin(b, bins[name], cfg, bk.Addr(), 5*time.Minute)
			var online, atOnline, peak float64
			b.ResetTimer()
			for range b.N {
				o, r1, r2 := startOnce(b, bins[name], cfg, bk.Addr())
				online += o.Seconds() * 1000
				atOnline, peak = max(atOnline, r1), max(peak, r2)
			}
			b.StopTimer()
			b.ReportMetric(online/float64(b.N), "ms/online")
			b.ReportMetric(atOnline, "MiB-RSS-online")
			b.ReportMetric(peak, "MiB-RSS-peak")
		})
	}
}

// fillSettledPostgres adds n expired entries of printer line1 to queue, each with a job of a
// 300-byte label, and marks each result as taken by the broker in the pair's ledger, as a
// version that kept its marks there did; then has the server analyse both tables, as its
// autovacuum would.
func fillSettledPostgres(b *testing.B, dsn, queue string, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	job, _ := json.Marshal(map[string]any{"labelName": "L", "labelData": map[string]any{"text": strings.Repeat("x", 280)}, "copies": 1})
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, job, expire_after, state, attempts, error)
			SELECT $1, 'line1/order-' || lpad(i::text, 6, '0'), 'line1', 'printJob', $2, $3, 'expired', 0, 'not sent before its expireAfter'
			FROM generate_series(1, $4::int) AS i`, []any{queue, string(job), int64(time.Minute), n}},
		{`INSERT INTO labelprinter_mqtt_ledger (queue, kind, printer, id, record)
			SELECT $1, 'report', '', id, jsonb_build_object('mark', 'expired/0') FROM labelprinter_outbox_entries WHERE queue = $1`, []any{queue}},
		{`VACUUM ANALYZE labelprinter_outbox_entries`, nil},
		{`VACUUM ANALYZE labelprinter_mqtt_ledger`, nil},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			b.Fatalf("%s: %v", q.sql, err)
		}
	}
}

// startOnce execs bin with the config file cfg, waits for its online message on the broker
// at addr, reads its peak RSS then and 2 s later, stops it with SIGTERM and waits for it.
func startOnce(b *testing.B, bin, cfg, addr string) (toOnline time.Duration, rssOnline, rssPeak float64) {
	b.Helper()
	return startOnceWithin(b, bin, cfg, addr, 60*time.Second)
}

// startOnceWithin is startOnce with limit for the wait for online.
func startOnceWithin(b *testing.B, bin, cfg, addr string, limit time.Duration) (toOnline time.Duration, rssOnline, rssPeak float64) {
	b.Helper()
	online := make(chan struct{}, 1)
	cli := dialWatch(b, addr, func(p *paho.Publish) {
		var s mqttbridge.OnlineState
		if json.Unmarshal(p.Payload, &s) == nil && s.State == mqttbridge.BridgeOnline && !p.Retain {
			select {
			case online <- struct{}{}:
			default:
			}
		}
	})
	defer func() { _ = cli.Disconnect(&paho.Disconnect{}); <-cli.Done() }()
	cmd := exec.Command(bin, "--config.file", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	select {
	case <-online:
		toOnline = time.Since(start)
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("%s did not come online in %v:\n%s", bin, limit, stderr.String())
	}
	rssOnline = peakRSS(b, cmd.Process.Pid)
	time.Sleep(2 * time.Second)
	rssPeak = peakRSS(b, cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	return toOnline, rssOnline, rssPeak
}

// dialWatch subscribes a new client to the bridge's online topic on the broker at addr.
func dialWatch(b *testing.B, addr string, f func(*paho.Publish)) *paho.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	cli := paho.NewClient(paho.ClientConfig{ClientID: "bench-watch", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			f(pr.Packet)
			return true, nil
		}}})
	if _, err := cli.Connect(ctx, &paho.Connect{ClientID: "bench-watch", CleanStart: true, KeepAlive: 30}); err != nil {
		b.Fatal(err)
	}
	if _, err := cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "labelprinter/bridge/online", QoS: 1}}}); err != nil {
		b.Fatal(err)
	}
	return cli
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func peakRSS(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// writeSettled writes an outbox file of n expired entries of printer line1 at path, in the
// layout of the outbox's format 2 (before its indexes), which both the version before and
// this one read; bbolt directly, to be quick to build.
func writeSettled(b *testing.B, path string, n int) {
	b.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	job, _ := json.Marshal(map[string]any{"labelName": "L", "labelData": map[string]any{"text": strings.Repeat("x", 280)}, "copies": 1})
	when := time.Now().Add(-time.Hour).UTC()
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket([]byte("outbox"))
		if err != nil {
			return err
		}
		if err := meta.Put([]byte("format"), []byte("go-labelprinter outbox 2")); err != nil {
			return err
		}
		for _, name := range []string{"entries", "ids", "pruned"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for start := 1; start <= n; start += 10_000 {
		err := db.Update(func(tx *bolt.Tx) error {
			entries, ids := tx.Bucket([]byte("entries")), tx.Bucket([]byte("ids"))
			for i := start; i < start+10_000 && i <= n; i++ {
				seq, err := entries.NextSequence()
				if err != nil {
					return err
				}
				id := fmt.Sprintf("line1/order-%06d", i)
				v, err := json.Marshal(map[string]any{"seq": seq, "id": id, "printer": "line1", "job": json.RawMessage(job),
					"expireAfter": time.Minute, "state": "expired", "attempts": 0, "enqueued": when, "updated": when,
					"error": "not sent before its expireAfter"})
				if err != nil {
					return err
				}
				key := binary.BigEndian.AppendUint64(nil, seq)
				if err := entries.Put(key, v); err != nil {
					return err
				}
				if err := ids.Put([]byte(id), key); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
