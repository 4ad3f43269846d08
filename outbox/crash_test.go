package outbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// The child process modes of this test binary, chosen by childEnv.
const (
	childEnv   = "OUTBOX_TEST_CHILD"
	childDB    = "OUTBOX_TEST_DB"
	childURL   = "OUTBOX_TEST_URL"
	crashTotal = 500
)

// childMain runs the child's job when the binary was started as a child, and reports its exit
// code; ok is false in a normal test run.
func childMain() (code int, ok bool) {
	var err error
	switch os.Getenv(childEnv) {
	case "":
		return 0, false
	case "crash":
		err = crashChild(os.Getenv(childDB), os.Getenv(childURL))
	case "hold":
		err = holdChild(os.Getenv(childDB))
	case "pgrun":
		err = pgRunChild(os.Getenv(childDB), os.Getenv(childURL))
	case "nemrun":
		err = nemesisRunChild(os.Getenv(childDB), os.Getenv(childURL))
	default:
		err = errors.New("unknown child mode")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1, true
	}
	return 0, true
}

// crashIntent is intent i of the crash test: every seventh names a label the printer does not
// have, so some entries end Rejected. All go to one printer, so one job at most is in flight
// when the process is killed.
func crashIntent(i int) Intent {
	id := fmt.Sprintf("i%03d", i)
	j := labelprinter.PrintJob{LabelName: "L", Queue: labelprinter.Ptr(true), Description: id}
	if i%7 == 0 {
		j.LabelName = "missing"
	}
	return Intent{ID: id, Printer: "line1", Job: j}
}

// crashChild is the line controller of the crash test: it enqueues all the intents (again:
// Enqueue is idempotent, as a controller that re-reads its orders after a restart relies on),
// then delivers until nothing is Pending, and exits. The parent kills it at random moments.
func crashChild(path, url string) error {
	c, err := labelprinter.NewClient(url, labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		return err
	}
	defer c.Close()
	ob, err := Open(path, c, WithRetryInterval(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer ob.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- ob.Run(ctx) }()

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < crashTotal; i += 8 {
				if _, err := ob.Enqueue(ctx, crashIntent(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	for {
		ob.mu.Lock()
		left := len(ob.items)
		ob.mu.Unlock()
		if left == 0 {
			break
		}
		select {
		case err := <-errc:
			return fmt.Errorf("Run stopped: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	return <-errc
}

// holdChild opens the outbox, says so on stdout, and keeps it open until stdin closes.
func holdChild(path string) error {
	ob, err := Open(path, nil)
	if err != nil {
		return err
	}
	defer ob.Close()
	fmt.Println("open")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

func childCommand(mode, path, url string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childDB+"="+path, childURL+"="+url)
	return cmd
}

// TestLockedAcrossProcesses: a file another process has open gives ErrLocked, not a hang.
func TestLockedAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.outbox")
	cmd := childCommand("hold", path, "")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "open\n" {
		t.Fatalf("child said %q, %v; stderr: %s", line, err, stderr.String())
	}
	start := time.Now()
	_, err = Open(path, nil)
	t.Logf("Open of a file held by another process returned after %v", time.Since(start).Round(time.Millisecond))
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Open: %v, want ErrLocked", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v; %s", err, stderr.String())
	}
	ob, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open after the other process let go: %v", err)
	}
	ob.Close()
}

// killPlan kills the current child at the moment the parent chose: after a delay, or inside
// the printer's handler when the child's k-th print job of this run arrives, either after the
// printer acted on it (its answer is then lost) or before (it never takes effect).
type killPlan struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	left   int  // print jobs to let through before the kill; 0 = not armed
	before bool // kill before the printer sees the k-th job
}

func (p *killPlan) arm(cmd *exec.Cmd, k int, before bool) {
	p.mu.Lock()
	p.cmd, p.left, p.before = cmd, k, before
	p.mu.Unlock()
}

// setCmd names the process to kill, once it has started; print jobs that arrive before are
// counted all the same (there are none: the child has not started).
func (p *killPlan) setCmd(cmd *exec.Cmd) {
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

func (p *killPlan) disarm() { p.arm(nil, 0, false) }

// onJob is the recorder's hook. When it kills, it also hangs up, so the child cannot read an
// answer in the moment before it dies.
func (p *killPlan) onJob(_ string, serve func()) bool {
	p.mu.Lock()
	cmd := p.cmd
	fire := false
	if p.left > 0 {
		p.left--
		fire = p.left == 0 && cmd != nil
	}
	before := p.before
	p.mu.Unlock()
	if !fire {
		serve()
		return true
	}
	if !before {
		serve()
	}
	_ = cmd.Process.Kill()
	return false
}

// TestCrashRecovery kills a delivering process with SIGKILL at random moments, exactly
// crashKills times, then lets it finish. No intent may be lost, none may reach the printer
// twice, and every intent left Unknown must be owed to a kill.
//
// Every kill is certain, however fast or slow the child: each killing run arms a kill at the
// k-th request of that run, with k no larger than the requests the child still has to make
// before it can finish (every intent not yet received, less one per kill that may have left
// one Unknown without it reaching the printer). A third of the runs also start a timer that
// may kill sooner, at a random moment (during Open, Enqueue, a commit).
func TestCrashRecovery(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	const crashKills = 24
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x6f7574626f78))
	t.Logf("seed %d", seed)

	srv, rec := startSim(t, nil)
	plan := &killPlan{}
	rec.setOnJob(plan.onJob)
	path := filepath.Join(t.TempDir(), "crash.outbox")

	start := time.Now()
	var runs, kills, timerKills, afterKills, beforeKills, faults int
	for {
		runs++
		if runs > crashKills+50 {
			t.Fatalf("still Pending after %d runs", runs)
		}
		killing := kills < crashKills
		if rng.IntN(5) == 0 {
			faults++
			srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1 + rng.IntN(3), Status: 503})
		}
		cmd := childCommand("crash", path, srv.URL)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var timer *time.Timer
		var timerFired atomic.Bool
		mode := -1
		if killing {
			// Requests the child must still make: each intent not yet received by the printer
			// is sent at least once more, unless a kill left it Unknown unsent (at most one per
			// kill). Spread what is left over the kills still to come.
			owed := crashTotal - len(rec.counts()) - kills
			k := 1 + rng.IntN(max(1, min(20, owed/(crashKills-kills+1))))
			if owed < 1 {
				t.Fatalf("run %d: no request left to kill at (%d received, %d kills)", runs, len(rec.counts()), kills)
			}
			mode = rng.IntN(3)
			plan.arm(nil, k, mode == 2)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if killing {
			plan.setCmd(cmd)
			if mode == 0 {
				timer = time.AfterFunc(time.Duration(rng.IntN(150))*time.Millisecond, func() {
					timerFired.Store(true)
					_ = cmd.Process.Kill()
				})
			}
		}
		err := cmd.Wait()
		if timer != nil {
			timer.Stop()
		}
		plan.disarm()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			if !killing {
				t.Fatalf("run %d: killed unasked", runs)
			}
			kills++
			switch {
			case mode == 0 && timerFired.Load():
				timerKills++
			case mode == 2:
				beforeKills++
			default:
				afterKills++
			}
			continue
		}
		if err != nil {
			t.Fatalf("run %d: %v\n%s", runs, err, stderr.String())
		}
		if killing {
			t.Fatalf("run %d: the child finished before its kill at a request it had to make (%d kills so far)", runs, kills)
		}
		break
	}
	elapsed := time.Since(start)
	srv.Sim.ClearFaults()

	ob, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	entries, err := ob.List()
	if err != nil {
		t.Fatal(err)
	}
	received := rec.counts()
	byState := map[State]int{}
	var unknownReceived, attempts, twice int
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.ID] = true
		byState[e.State]++
		attempts += e.Attempts
		n := received[e.ID]
		if n > 1 {
			twice++
			t.Errorf("%s reached the printer %d times", e.ID, n)
		}
		switch e.State {
		case Sent:
			if n != 1 {
				t.Errorf("%s is Sent but reached the printer %d times", e.ID, n)
			}
			if e.Job.LabelName == "missing" {
				t.Errorf("%s names a missing label and is Sent", e.ID)
			}
		case Rejected:
			if n != 1 || e.Job.LabelName != "missing" {
				t.Errorf("%s is Rejected (%s) after %d receipts", e.ID, e.Error, n)
			}
		case Unknown:
			unknownReceived += n
		default:
			t.Errorf("%s ended %s", e.ID, e.State)
		}
	}
	for i := range crashTotal {
		if id := crashIntent(i).ID; !seen[id] {
			t.Errorf("%s was lost", id)
		}
	}
	if len(entries) != crashTotal {
		t.Errorf("%d entries, want %d", len(entries), crashTotal)
	}
	if kills != crashKills {
		t.Errorf("%d kills, want %d", kills, crashKills)
	}
	if byState[Unknown] > kills {
		t.Errorf("%d Unknown after %d kills", byState[Unknown], kills)
	}
	t.Logf("%d intents, %d runs, %d SIGKILLs (%d at a random time, %d after the printer acted on the k-th job, %d before), %d injected 503 faults, %v",
		crashTotal, runs, kills, timerKills, afterKills, beforeKills, faults, elapsed.Round(time.Millisecond))
	t.Logf("ended: %d sent, %d rejected, %d unknown (%d of them reached the printer); %d print jobs received, %d attempts recorded; %d received twice",
		byState[Sent], byState[Rejected], byState[Unknown], unknownReceived, len(rec.received()), attempts, twice)
}
