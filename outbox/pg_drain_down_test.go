package outbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresDrainDatabaseDown: Drain is for a batch job, which must end: with the database
// down it returns the database's error (without the password) once nothing is in flight,
// instead of waiting for the database until its context ends, as Run does.
func TestPostgresDrainDatabaseDown(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	srvPG := pgtest.Own(t)
	const pw = "Drain-pw-7"
	srv, rec := startSim(t, nil)
	ob := openPG(t, pgtest.WithParam(srvPG.AdminDSN(), "password", pw), "q", newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	srvPG.StopServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := ob.Drain(ctx)
	took := time.Since(start)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain with the database down: %v after %v", err, took)
	}
	if took > 15*time.Second {
		t.Errorf("Drain took %v", took)
	}
	if strings.Contains(err.Error(), pw) {
		t.Errorf("the password is in Drain's error: %v", err)
	}
	if got := rec.received(); len(got) != 0 {
		t.Errorf("received %v with the database down", got)
	}
	// Once it is back, the next Drain delivers.
	srvPG.StartServer(t)
	if err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := ob.Get("a"); err != nil || e.State != Sent {
		t.Errorf("a after the database came back: %s, %v", e.State, err)
	}
}
