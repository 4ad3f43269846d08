package mqttbridge

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPairSharedLedger: the active bridge of a pair dies by SIGKILL while it handles an
// abortPrint, after its record and before its request (after-commit), or after its result
// and before its PUBACK (after-result); the standby takes over and gets the abortPrint again
// from the broker. The ledger in the database answers it (duplicate, current unknown or done),
// and the printer receives the abortPrint at most once, which it would not with a ledger file
// of each bridge's own. A printJob after it is sent, once.
func TestPairSharedLedger(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	dsn := pgtest.DSN(t)
	eachBroker(t, func(t *testing.T, bk testBroker) {
		for _, tc := range []struct {
			point, current string
			aborts         int
		}{
			{crashAfterCommit, StateUnknown, 0},
			{crashAfterResult, StateDone, 1},
		} {
			t.Run(tc.point, func(t *testing.T) {
				name := "pair-ledger-" + tc.point
				// lease_ttl 4s: this test times no failover, and a loaded machine under -race
				// may miss a 1 s lease's renewals, which fences the active bridge before the
				// crash point (it then never comes).
				r := newRig(t, bk, name)
				cfg := fmt.Sprintf("broker: {url: %q, client_id: %q}\ntopic_prefix: %q\noutbox: {postgres: {dsn: %q}, lease_ttl: 4s}\npoll_interval: 200ms\nprinters:\n  - {name: %s, url: %q, printer: %s}\n",
					bk.URL(), name+"-"+t.Name(), r.prefix, dsn, r.printer, r.pl.URL, r.printer)
				r.cfg = writeFile(t, r.dir, "bridge.yml", cfg)
				r.start(cmdAbortPrint + ":" + tc.point)
				standby := exec.Command(os.Args[0], "-test.run=^$")
				standby.Env = append(os.Environ(), childEnv+"="+r.cfg)
				standby.Stderr = os.Stderr
				if err := standby.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = standby.Process.Kill(); _ = standby.Wait() })
				time.Sleep(time.Second) // the standby reads the lease, and stands by
				r.send(cmdAbortPrint, map[string]any{"id": "A"})
				r.crash(nil)
				eventually(t, "the standby online", func() bool { return r.onlines() >= 2 })
				eventually(t, "the redelivered abortPrint answered", func() bool {
					return r.has(cmdAbortPrint, "A", StateDuplicate+"("+tc.current+")")
				})
				r.marker("after")
				if n := r.requests("abortPrint"); n != tc.aborts {
					t.Errorf("the printer received %d abortPrints, want %d", n, tc.aborts)
				}
				if n := r.pl.printed("after"); n != 1 {
					t.Errorf("the job after the takeover reached the printer %d times", n)
				}
				t.Logf("abortPrint answers: %v", r.states(cmdAbortPrint, "A"))
			})
		}
	})
}
