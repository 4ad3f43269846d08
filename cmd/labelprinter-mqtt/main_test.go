package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// syncBuffer is safe to write from the command and read from the test.
type syncBuffer = testkit.SyncBuffer

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	_ = os.WriteFile(bad, []byte("broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: \"a/b\", url: \"http://x\"}]\n"), 0o600)
	noURL := filepath.Join(dir, "nourl.yml")
	_ = os.WriteFile(noURL, []byte("broker: {client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--config.file is required"},
		{[]string{"--nope"}, "flag provided but not defined"},
		{[]string{"--config.file", filepath.Join(dir, "missing.yml")}, "config.file"},
		{[]string{"--config.file", bad}, "printers[0].name"},
		{[]string{"--config.file", noURL}, "broker.url"},
		{[]string{"--config.file", bad, "--log-level", "loud"}, "--log-level"},
	} {
		var stderr syncBuffer
		if code := run(context.Background(), c.args, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestEmbeddedBrokerAndStop: --embedded-broker runs a plant in a box; cancelling the context
// (what SIGTERM does) stops it cleanly with exit 0.
func TestEmbeddedBrokerAndStop(t *testing.T) {
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("broker: {client_id: box}\nstate_dir: state\npoll_interval: 50ms\nprinters: [{name: line1, url: %q, printer: line1}]\n", sim.URL)), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--config.file", cfg, "--embedded-broker", addr}, &stderr) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "connected to the broker") {
		if time.Now().After(deadline) {
			t.Fatalf("the bridge did not connect to its embedded broker: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err != nil {
		t.Errorf("state_dir relative to the config file: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after a stop, want 0: %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after the stop")
	}
}
