package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is written by the server's goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunServesAndLogs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-printers", "line1, line2", "-token", "s3cret-token"}, &stdout, &stderr)
	}()

	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`at (http://\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no URL printed: %q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "line1, line2") {
		t.Errorf("printer names not printed: %q", stdout.String())
	}
	req, _ := http.NewRequest("GET", url+"/api/v3/printers/line2/printCounters", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"printedLabels":0`) {
		t.Fatalf("counters: %d %s", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
	log := stderr.String()
	if !strings.Contains(log, "GET /api/v3/printers/line2/printCounters 200") {
		t.Errorf("request not logged: %q", log)
	}
	if strings.Contains(log, "s3cret-token") {
		t.Errorf("token logged: %q", log)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-printers", " , "}, &out, &out); code != 2 {
		t.Errorf("empty printer list: exit %d", code)
	}
	if code := run(context.Background(), []string{"-nope"}, &out, &out); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-trigger-every", "-1s"}, &out, &out); code != 2 {
		t.Errorf("negative -trigger-every: exit %d", code)
	}
	if code := run(context.Background(), []string{"-addr", "256.0.0.1:1"}, &out, &out); code != 1 {
		t.Errorf("bad address: exit %d", code)
	}
}
