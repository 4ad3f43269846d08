package outbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresEnqueueServerSilent: a server that stops answering without closing its
// connections (a frozen process here; a host gone without a word behaves alike) fails an
// Enqueue within the outbox's bound, not at its context's deadline, and the error says whether
// the entry may have been stored.
func TestPostgresEnqueueServerSilent(t *testing.T) {
	srvPG := pgtest.Own(t)
	ob := openPG(t, srvPG.AdminDSN(), "q", nil)
	enqueue(t, ob, Intent{ID: "before", Printer: "line1", Job: job("before")})
	defer freezeServer(t, ob)()
	time.Sleep(1100 * time.Millisecond) // the pool's connections idle, as between two orders
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := ob.Enqueue(ctx, Intent{ID: "during", Printer: "line1", Job: job("during")})
	took := time.Since(start)
	if err == nil || errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		t.Fatalf("Enqueue with the server silent: %v after %v", err, took)
	}
	if took > 2*pgEnqueueTimeout {
		t.Errorf("Enqueue with the server silent took %v: %v", took, err)
	}
	if !strings.Contains(err.Error(), "no answer") {
		t.Errorf("the error does not say the database did not answer: %v", err)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))
}

// freezeServer stops (SIGSTOP) the PostgreSQL server ob is connected to, postmaster and
// backends, without closing a connection: a server that no longer answers. The function it
// returns lets the server go on.
func freezeServer(t *testing.T, ob *Outbox) (thaw func()) {
	t.Helper()
	var dir string
	if err := ob.store.(*pgStore).db().QueryRow(context.Background(), `SELECT setting FROM pg_settings WHERE name = 'data_directory'`).Scan(&dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/postmaster.pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output()
	pids := []int{pid}
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
	}
}
