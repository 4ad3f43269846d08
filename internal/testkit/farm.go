package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// Farm is a set of simulators that a child process serves (the test binary itself, running
// the Test function that calls ServeFarm), so that a benchmark counts neither their CPU nor
// their heap as its own.
type Farm struct {
	// Sims are the simulators' base URLs, each with printers p0, p1, ...
	Sims []string
	// Extra holds what the child's extra function announced, by name (a broker's URL, say).
	Extra    map[string]string
	countURL string
	hc       *http.Client
	tb       testing.TB
}

// StartFarm runs the Test function named test of this binary in a child process, with env set
// to sims simulators of perSim printers each, and returns once the child has announced them.
// The child ends when the benchmark does.
func StartFarm(tb testing.TB, test, env string, sims, perSim int) *Farm {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+strconv.Itoa(sims)+"x"+strconv.Itoa(perSim))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	f := &Farm{Extra: map[string]string{}, hc: &http.Client{Transport: &http.Transport{}}, tb: tb}
	tb.Cleanup(f.hc.CloseIdleConnections)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		switch name {
		case "sim":
			f.Sims = append(f.Sims, value)
		case "count":
			f.countURL = value
		default:
			f.Extra[name] = value
		}
		if f.countURL != "" {
			break
		}
	}
	if f.countURL == "" || len(f.Sims) != sims {
		tb.Fatalf("the child process announced %d simulator URLs and no count URL", len(f.Sims))
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return f
}

// Requests returns how many requests the farm's simulators have served so far.
func (f *Farm) Requests() int64 {
	resp, err := f.hc.Get(f.countURL)
	if err != nil {
		f.tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
	if err != nil {
		f.tb.Fatal(err)
	}
	return n
}

// ServeFarm is the child's side of StartFarm: called from a Test function, it skips unless env
// is set; otherwise it starts the simulators, announces them, then what extra returns (name and
// value, one line each; extra may be nil), and serves until its stdin closes.
func ServeFarm(t *testing.T, env string, extra func(t *testing.T) map[string]string) {
	spec := os.Getenv(env)
	if spec == "" {
		t.Skip("the child process of a benchmark")
	}
	var sims, perSim int
	if _, err := fmt.Sscanf(spec, "%dx%d", &sims, &perSim); err != nil {
		t.Fatal(err)
	}
	names := make([]string, perSim)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
	}
	servers := make([]*printersim.Server, sims)
	for i := range servers {
		srv, err := printersim.Start(printersim.WithPrinters(names...))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		servers[i] = srv
		fmt.Printf("sim %s\n", srv.URL)
	}
	if extra != nil {
		for name, value := range extra(t) {
			fmt.Printf("%s %s\n", name, value)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int64
		for _, s := range servers {
			n += int64(s.Sim.TotalRequests())
		}
		fmt.Fprintln(w, n)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Printf("count http://%s/\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}
