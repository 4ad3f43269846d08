package mqttbridge

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testBroker is a broker the end-to-end tests run against: the embedded one always, and a
// real mosquitto when one is installed (MQTTBRIDGE_MOSQUITTO=required makes its absence a
// failure, which CI sets).
type testBroker interface {
	URL() string
	// restart stops the broker and starts it again on the same port, sessions and retained
	// messages lost.
	restart(t testing.TB)
	// stop closes the broker and its port: clients' connections are refused until start.
	stop()
	// start starts the stopped broker again on the same port.
	start(t testing.TB)
}

type embeddedBroker struct {
	b    *Broker
	addr string
}

func (e *embeddedBroker) URL() string { return "mqtt://" + e.addr }

func (e *embeddedBroker) restart(t testing.TB) {
	t.Helper()
	e.stop()
	e.start(t)
}

func (e *embeddedBroker) stop() { _ = e.b.Close() }

func (e *embeddedBroker) start(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		b, err := StartBroker(e.addr, nil)
		if err == nil {
			e.b = b
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("starting the broker again on %s: %v", e.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newEmbedded(t testing.TB) *embeddedBroker {
	b := startTestBroker(t)
	e := &embeddedBroker{b: b, addr: b.Addr()}
	t.Cleanup(func() { _ = e.b.Close() })
	return e
}

// mosquitto is a mosquitto process of the test's own, on a free loopback port.
type mosquitto struct {
	bin, conf, addr string
	cmd             *exec.Cmd
	out             io.Writer // its stdout and stderr; nil is the test's stderr
}

func (m *mosquitto) URL() string { return "mqtt://" + m.addr }

func (m *mosquitto) start(t testing.TB) {
	t.Helper()
	m.cmd = exec.Command(m.bin, "-c", m.conf)
	m.cmd.Stdout, m.cmd.Stderr = os.Stderr, os.Stderr
	if m.out != nil {
		m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("starting mosquitto: %v", err)
	}
	eventually(t, "mosquitto listening", func() bool {
		c, err := net.Dial("tcp", m.addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
}

func (m *mosquitto) stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

func (m *mosquitto) restart(t testing.TB) {
	t.Helper()
	m.stop()
	m.start(t)
}

// mosquittoBin finds mosquitto, or says why the mosquitto runs are skipped.
func mosquittoBin(t testing.TB) string {
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
			if _, serr := os.Stat(p); serr == nil {
				return p
			}
		}
		if os.Getenv("MQTTBRIDGE_MOSQUITTO") == "required" {
			t.Fatal("MQTTBRIDGE_MOSQUITTO=required, but no mosquitto binary is installed")
		}
		return ""
	}
	return bin
}

func newMosquitto(t testing.TB, bin string) *mosquitto {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	conf := strings.Join([]string{
		"listener " + port + " 127.0.0.1",
		"allow_anonymous true",
		"persistence false",
		"max_queued_messages 10000",
		"log_dest stderr",
		"log_type error",
	}, "\n") + "\n"
	m := &mosquitto{bin: bin, conf: writeFile(t, dir, "mosquitto.conf", conf), addr: addr}
	m.start(t)
	t.Cleanup(m.stop)
	return m
}

// eachBroker runs f against the embedded broker and, when installed, against mosquitto.
func eachBroker(t *testing.T, f func(t *testing.T, bk testBroker)) {
	t.Run("embedded", func(t *testing.T) { f(t, newEmbedded(t)) })
	if bin := mosquittoBin(t); bin != "" {
		t.Run("mosquitto", func(t *testing.T) { f(t, newMosquitto(t, bin)) })
	} else {
		t.Log("mosquitto is not installed: the runs against a real mosquitto are skipped")
	}
}

var _ = fmt.Sprint
