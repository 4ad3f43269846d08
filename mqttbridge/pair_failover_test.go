package mqttbridge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// pairConfig writes the configuration both bridges of a pair read.
func pairConfig(t *testing.T, dir, brokerURL, dsn, clientID string, pl *plant, ttl time.Duration, printers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "broker: {url: %q, client_id: %s}\noutbox: {postgres: {dsn: %q}, lease_ttl: %v}\npoll_interval: 200ms\nprinters:\n",
		brokerURL, clientID, dsn, ttl)
	for _, p := range printers {
		fmt.Fprintf(&b, "  - {name: %s, url: %q, printer: %s}\n", p, pl.URL, p)
	}
	return writeFile(t, dir, "bridge.yml", b.String())
}

// brokerConns counts the TCP connections process pid holds to the broker at brokerURL, from
// /proc: a standby must hold none.
func brokerConns(t *testing.T, pid int, brokerURL string) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(brokerURL, "mqtt://"))
	pn, _ := strconv.Atoi(port)
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot list the sockets of a process here (%v): the test needs Linux's /proc", err)
	}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	tab, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(tab), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || !inodes[f[9]] || f[3] != "01" { // 01: ESTABLISHED
			continue
		}
		if _, rp, ok := strings.Cut(f[2], ":"); ok {
			if v, _ := strconv.ParseInt(rp, 16, 32); int(v) == pn {
				n++
			}
		}
	}
	return n
}

// TestPairFailover runs two bridge processes with one configuration: one is active, the
// other stands by, holding no connection to the broker and publishing nothing. While a PLC
// publishes 100 print commands the active one is killed with SIGKILL; the standby takes the
// lease within lease_ttl, connects with the same client id and persistent session, and
// answers every command: none reaches the printer twice.
func TestPairFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	dsn := pgtest.DSN(t)
	eachBroker(t, func(t *testing.T, bk testBroker) { testPairFailover(t, bk, dsn) })
}

func testPairFailover(t *testing.T, bk testBroker, dsn string) {
	const (
		commands = 100
		ttl      = 2 * time.Second
	)
	printers := []string{"p1", "p2"}
	pl := startPlant(t, printers...)
	dir := t.TempDir()
	clientID := "pair-" + filepath.Base(t.Name())
	cfgPath := pairConfig(t, dir, bk.URL(), dsn, clientID, pl, ttl, printers...)
	w := watch(t, bk.URL(), prefix+"/#")
	online := onlineTopic(prefix)
	count := func(payload string) int {
		w.mu.Lock()
		defer w.mu.Unlock()
		n := 0
		for _, p := range w.got {
			if p.Topic == online && onlineStateOf(p) == payload {
				n++
			}
		}
		return n
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+cfgPath)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	first := start()
	w.waitOnline(1)
	second := start()
	// The second stands by: it has read the lease (the database names it nowhere, so the
	// test gives it time to look more than once) and holds no connection.
	time.Sleep(ttl)
	if n := brokerConns(t, second.Process.Pid, bk.URL()); n != 0 {
		t.Fatalf("the standby holds %d connections to the broker, want none", n)
	}
	if n := brokerConns(t, first.Process.Pid, bk.URL()); n != 1 {
		t.Fatalf("the active bridge holds %d connections to the broker, want 1", n)
	}
	if n := count("online"); n != 1 {
		t.Fatalf("%d online messages with a standby running, want 1 (the standby publishes nothing)", n)
	}

	s := newSender(t, bk.URL())
	var published [][2]string
	var killed time.Time
	var failover time.Duration
	tookOver := make(chan struct{})
	for i := range commands {
		if i == commands/3 {
			// Once the printer has taken some, the active bridge dies mid-stream.
			eventually(t, "printing under way", func() bool { pl.mu.Lock(); defer pl.mu.Unlock(); return len(pl.jobs) >= 5 })
			time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
			_ = first.Process.Kill()
			killed = time.Now()
			go func() {
				defer close(tookOver)
				for deadline := time.Now().Add(waitLimit); w.onlines() < 2 && time.Now().Before(deadline); {
					time.Sleep(2 * time.Millisecond)
				}
				failover = time.Since(killed)
			}()
		}
		p := printers[i%len(printers)]
		id := fmt.Sprintf("c%03d", i)
		s.send(cmdTopic(p, "printJob"), printJobCmd(id))
		published = append(published, [2]string{id, p})
		time.Sleep(time.Duration(1+rand.IntN(3)) * time.Millisecond)
	}
	_ = first.Wait()
	eventually(t, "the Will of the killed bridge", func() bool { return count("offline") >= 1 })
	w.waitOnline(2)
	<-tookOver
	eventually(t, "the standby connected", func() bool { return brokerConns(t, second.Process.Pid, bk.URL()) == 1 })
	// Every command is answered (queued, or duplicate when the broker redelivered one the
	// killed bridge had taken), and its entry settles.
	for _, c := range published {
		eventually(t, "an answer to "+c[0], func() bool { return len(w.statesOf(resultTopic(c[1]), c[0])) > 0 })
	}
	ctx := context.Background()
	ob, err := outbox.OpenPostgres(ctx, dsn, queueName(clientID, NormalizeURL(pl.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	unknown := 0
	for _, c := range published {
		id, printer := c[0], c[1]
		var e outbox.Entry
		eventually(t, id+" settled", func() bool {
			e, err = ob.Get(printer + "/" + id)
			return err == nil && e.State != outbox.Pending && e.State != outbox.Sending
		})
		n := pl.printed(id)
		switch {
		case n > 1:
			t.Errorf("%s reached the printer %d times", id, n)
		case e.State == outbox.Sent && n != 1:
			t.Errorf("%s is sent but reached the printer %d times", id, n)
		case e.State == outbox.Unknown:
			unknown++
		case e.State != outbox.Sent:
			t.Errorf("%s is %s, want sent or unknown", id, e.State)
		}
	}
	if unknown > len(printers) {
		t.Errorf("%d unknown, more than one per printer the killed bridge delivered to", unknown)
	}
	t.Logf("%d commands, active bridge killed after %d: failover (kill to the standby's online) %v with lease_ttl %v; %d sent, %d unknown",
		len(published), commands/3, failover.Round(time.Millisecond), ttl, len(published)-unknown, unknown)
	_ = second.Process.Kill()
	_ = second.Wait()
}
