package mqttbridge

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTriggerExpireAfter: a trigger takes expireAfter as a printJob does, with the same rule,
// so one queued for a printer that is down does not fire a day later.
func TestTriggerExpireAfter(t *testing.T) {
	cmd, err := parseCommand(cmdTrigger, []byte(`{"id":"t1","expireAfter":"90s"}`))
	if err != nil || cmd.expireAfter != 90*time.Second {
		t.Fatalf("trigger with expireAfter 90s: %+v, %v", cmd, err)
	}
	for _, p := range []string{`{"id":"t2","expireAfter":"soon"}`, `{"id":"t3","expireAfter":"-1m"}`, `{"id":"t4","expireAfter":5}`} {
		if _, err := parseCommand(cmdTrigger, []byte(p)); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "expireAfter") {
			t.Errorf("trigger %s: %v, want invalid naming expireAfter", p, err)
		}
	}
	for _, name := range []string{cmdAbortPrint, cmdCancel, cmdResend} {
		if _, err := parseCommand(name, []byte(`{"id":"x","attempts":0,"expireAfter":"1m"}`)); !errors.Is(err, errInvalid) {
			t.Errorf("%s with expireAfter: %v, want invalid", name, err)
		}
	}
}

// TestQueuedCommandsExpire: a trigger and a printJob queued for a printer that is down, each
// with an expireAfter, are answered expired once it passes; the printer back, neither
// reaches it, while a printJob sent after them does. Through each broker.
func TestQueuedCommandsExpire(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		pl.setDown(true)
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		s.send(cmdTopic("line1", "trigger"), `{"id":"exp-trigger","expireAfter":"1s"}`)
		job := printJobCmd("exp-job")
		job["expireAfter"] = "1s"
		s.send(cmdTopic("line1", "printJob"), job)
		w.waitStates(resultTopic("line1"), "exp-trigger", StateQueued, StateExpired)
		w.waitStates(resultTopic("line1"), "exp-job", StateQueued, StateExpired)

		pl.setDown(false)
		s.send(cmdTopic("line1", "printJob"), printJobCmd("exp-after"))
		w.waitStates(resultTopic("line1"), "exp-after", StateQueued, StateSent)
		if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/trigger"); n != 0 {
			t.Errorf("%d trigger POSTs reached the printer, want 0", n)
		}
		if n := pl.printed("exp-job"); n != 0 {
			t.Errorf("the expired printJob reached the printer %d times, want 0", n)
		}
		if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 1 {
			t.Errorf("%d printJob POSTs reached the printer, want 1 (exp-after)", n)
		}
	})
}

// TestLabelDataIsAnObject: labelData, when present and not null, must be an object (a
// label); anything else is invalid before anything is sent. null reads as absent.
func TestLabelDataIsAnObject(t *testing.T) {
	for _, v := range []string{`"<label/>"`, `5`, `true`, `[{"objects":[]}]`, `""`} {
		p := `{"id":"j","job":{"labelName":"L","labelData":` + v + `}}`
		if _, err := parseCommand(cmdPrintJob, []byte(p)); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "labelData") {
			t.Errorf("labelData %s: %v, want invalid naming labelData", v, err)
		}
	}
	cmd, err := parseCommand(cmdPrintJob, []byte(`{"id":"j","job":{"labelName":"L","labelData":null}}`))
	if err != nil || cmd.job == nil || cmd.job.LabelData != nil || cmd.job.LabelName != "L" {
		t.Fatalf("labelData null: %+v, %v; want the job without labelData", cmd.job, err)
	}
	cmd, err = parseCommand(cmdPrintJob, []byte(`{"id":"j","job":{"labelData": {"objects":[]}}}`))
	if err != nil || string(cmd.job.LabelData) != `{"objects":[]}` {
		t.Fatalf("labelData an object: %+v, %v", cmd.job, err)
	}
}

// TestCommandResultTopicNeverCut: the result of a command on a topic whose result topic
// would be longer than a topic name may be goes to the bridge's own result topic, never to a
// cut name.
func TestCommandResultTopicNeverCut(t *testing.T) {
	prefix := "labelprinter"
	if got := commandResultTopic(prefix, "line1"); got != "labelprinter/line1/result" {
		t.Errorf("line1: %q", got)
	}
	// The longest command topic the broker can carry, with a one-letter command.
	segment := strings.Repeat("s", maxTopicLen-len(prefix+"//cmd/x"))
	if got := commandResultTopic(prefix, segment); got != "labelprinter/bridge/result" {
		t.Errorf("a %d-byte segment: result topic of %d bytes, want labelprinter/bridge/result", len(segment), len(got))
	}
	fits := strings.Repeat("s", maxTopicLen-len(prefix+"//result"))
	if got := commandResultTopic(prefix, fits); len(got) != maxTopicLen {
		t.Errorf("a segment whose result topic just fits: %d bytes", len(got))
	}
}

// TestLongCommandTopicAnswered: a command on a 65,535-byte topic, whose result topic would be
// longer than MQTT allows, is answered invalid on the bridge's own result topic, through each
// broker, and the bridge goes on.
func TestLongCommandTopicAnswered(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), "#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		topic := "labelprinter/" + strings.Repeat("s", maxTopicLen-len("labelprinter//cmd/x")) + "/cmd/x"
		s.send(topic, `{"id":"long"}`)
		w.waitStates("labelprinter/bridge/result", "long", StateInvalid)
		s.send(cmdTopic("line1", "printJob"), printJobCmd("after"))
		w.waitStates(resultTopic("line1"), "after", StateQueued, StateSent)
	})
}

// TestEmbeddedBrokerClosesSilentConnections: a connection that sends no CONNECT is closed
// once the wait is over; one that sends it in time stays.
func TestEmbeddedBrokerClosesSilentConnections(t *testing.T) {
	if connectWait != 10*time.Second {
		t.Errorf("connectWait is %v, the documented 10s", connectWait)
	}
	bk, err := startBroker("127.0.0.1:0", nil, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bk.Close() })
	conn, err := net.Dial("tcp", bk.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	start := time.Now()
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a silent connection: read %d bytes, %v; want it closed by the broker", n, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("closed after %v, before the wait of 300ms", d)
	}
	// A client that connects in time keeps its connection past the wait.
	cl := dialMQTT(t, bk.URL(), "in-time", nil)
	time.Sleep(600 * time.Millisecond)
	select {
	case <-cl.Done():
		t.Fatal("a connected client was closed by the CONNECT wait")
	default:
	}
}

// TestEmbeddedBrokerCloseWhileConnecting: the broker closes while connections keep arriving,
// some silent and some sending CONNECT. Close returns, every connection ends, and under the
// race detector nothing races (the library's own listener registered a new connection with the
// broker's wait group while Close was waiting on it).
func TestEmbeddedBrokerCloseWhileConnecting(t *testing.T) {
	for round := range 5 {
		bk, err := startBroker("127.0.0.1:0", nil, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.DialTimeout("tcp", bk.Addr(), time.Second)
					if err != nil {
						continue
					}
					if (i+n)%2 == 0 {
						// An MQTT 3.1.1 CONNECT with client id "c".
						_, _ = c.Write([]byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 2, 0, 60, 0, 1, 'c'})
					}
					_ = c.SetReadDeadline(time.Now().Add(waitLimit))
					_, _ = io.Copy(io.Discard, c)
					_ = c.Close()
				}
			}()
		}
		time.Sleep(time.Duration(20+10*round) * time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- bk.Close() }()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Fatalf("round %d: Close did not return within %v while connections arrived", round, waitLimit)
		}
		close(stop)
		wg.Wait()
	}
}
