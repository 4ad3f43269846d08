package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// readmeVarying are the metrics of the README's probe whose values depend on when the probe
// runs: the line triggers every 200 ms, and a probe takes what it takes. Their values are
// read as they come, as long as both are numbers.
var readmeVarying = regexp.MustCompile(`(?m)^(labelprinter_probe_duration_seconds|labelprinter_(printed_labels|triggers)_total\{printer="line1"\}) [0-9.e+-]+$`)

// TestREADMEProbeSession runs the README's probe session as written: "go run ./cmd/printersim
// FLAGS &" as a simulator started with those flags, "go run ./cmd/labelprinter-exporter &" as
// the exporter's run with its defaults (at a port of the test's), and each curl as the request
// it makes, whose answer must be the README's.
func TestREADMEProbeSession(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const first = "$ go run ./cmd/printersim "
	var block string
	for _, b := range strings.Split(string(readme), "\n```\n") {
		if strings.HasPrefix(b, first) {
			block = b
		}
	}
	if block == "" {
		t.Fatalf("README.md has no session starting %q", first)
	}
	var steps [][]string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "$ ") {
			steps = append(steps, []string{strings.TrimPrefix(line, "$ ")})
		} else if len(steps) > 0 {
			steps[len(steps)-1] = append(steps[len(steps)-1], line)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := map[string]string{} // the README's host:port to the test's
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	for _, st := range steps {
		cmd, want := st[0], strings.Join(st[1:], "\n")
		args := shellWords(t, cmd)
		switch {
		case len(args) > 2 && args[0] == "go" && args[2] == "./cmd/printersim" && args[len(args)-1] == "&":
			var f printersim.Flags
			fs := flag.NewFlagSet("printersim", flag.ContinueOnError)
			f.Register(fs)
			if err := fs.Parse(args[3 : len(args)-1]); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			opts, printers, err := f.Options()
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			addrs[f.Addr] = strings.TrimPrefix(startSim(t, append(opts, printersim.WithPrinters(printers...))...).URL, "http://")
		case len(args) == 4 && args[0] == "go" && args[2] == "./cmd/labelprinter-exporter" && args[3] == "&":
			var stdout, stderr syncBuffer
			done := make(chan int, 1)
			go func() { done <- run(ctx, []string{"--listen", "127.0.0.1:0"}, &stdout, &stderr) }()
			t.Cleanup(func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("the exporter exited %d: %s", code, stderr.String())
				}
			})
			listening := regexp.MustCompile(`listening on (\S+)`)
			for deadline := time.Now().Add(10 * time.Second); addrs["localhost:9631"] == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if m := listening.FindStringSubmatch(stdout.String()); m != nil {
					addrs["localhost:9631"] = m[1]
				}
			}
			if addrs["localhost:9631"] == "" {
				t.Fatalf("the exporter printed no address: %q %q", stdout.String(), stderr.String())
			}
		case args[0] == "curl":
			method, body, u := "GET", "", ""
			hdr := http.Header{}
			for i := 1; i < len(args); i++ {
				switch args[i] {
				case "-X":
					i++
					method = args[i]
				case "-H":
					i++
					k, v, _ := strings.Cut(args[i], ": ")
					hdr.Set(k, v)
				case "-d":
					i++
					body = args[i]
				default:
					u = args[i]
				}
			}
			for r, a := range addrs {
				u = strings.ReplaceAll(u, r, a)
			}
			if !strings.HasPrefix(u, "http://") {
				u = "http://" + u
			}
			req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = hdr
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSuffix(string(b), "\n")
			for r, a := range addrs {
				got = strings.ReplaceAll(got, a, r)
			}
			if readmeVarying.ReplaceAllString(got, "$1 N") != readmeVarying.ReplaceAllString(want, "$1 N") {
				t.Errorf("%s answered\n%s\nREADME.md says\n%s", cmd, got, want)
			}
		default:
			t.Fatalf("%q: the test runs go run of the simulator and the exporter, and curl", cmd)
		}
	}
}

// shellWords splits a command line as the shell does, for words in single quotes or none.
func shellWords(t *testing.T, line string) []string {
	var words []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'')
			if end < 0 {
				t.Fatalf("unbalanced quote in %q", line)
			}
			words, line = append(words, line[1:end+1]), line[end+2:]
			continue
		}
		end := strings.IndexAny(line, " '")
		if end < 0 {
			end = len(line)
		}
		words, line = append(words, line[:end]), line[end:]
	}
	return words
}
