// Command printersim serves a simulated label printer that speaks the v3 HTTP control
// contract, for pointing your own code, curl or a browser at a printer that is not there.
//
//	go run ./cmd/printersim -addr 127.0.0.1:8631 -printers line1,line2
//	go run ./cmd/printersim -trigger-every 1s   # a running line: printers with a job print
//	go run ./cmd/printersim -ui=false           # no page at /: only the API
//	curl http://127.0.0.1:8631/api/v3/printers/line1/printCounters
//
// Its flags and defaults (printer line1 at 127.0.0.1:8631) are those of labelctl sim: both
// register printersim.Flags. -token is kept as the older name of -require-token. -version prints
// the version, commit, build date, Go version and licence, and exits.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit code: 0 after a clean stop, 2 for bad flags,
// 1 when the address cannot be served.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("printersim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f printersim.Flags
	f.Register(fs)
	fs.StringVar(&f.Token, "token", "", "older name of -require-token")
	showVersion := buildinfo.VersionFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprint(stdout, buildinfo.Get().Print("printersim"))
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "printersim: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	opts, names, err := f.Options()
	if err != nil {
		fmt.Fprintln(stderr, "printersim:", err)
		return 2
	}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "printersim:", err)
		return 1
	}
	opts = append(opts, printersim.WithPictures(pictures.Draw)) // the page's pictures of the labels printed
	srv := printersim.Serve(ln, printersim.New(opts...), func(h http.Handler) http.Handler { return logRequests(h, stderr) })
	fmt.Fprintf(stdout, "printersim: serving printers %s at %s\n", strings.Join(names, ", "), srv.URL)
	if f.UI {
		fmt.Fprintf(stdout, "printersim: the labels it prints, live: open %s/ in a browser\n", srv.URL)
	}
	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(stdout, "printersim: stopped")
	return 0
}

// statusWriter remembers the status a handler answered, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection for injected resets.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack passes through so injected connection resets still work behind the log.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// logRequests writes one line per request: method, path, status, duration. Headers and query
// strings, and so credentials put in either, are never logged.
func logRequests(h http.Handler, out io.Writer) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s %s %s %d %s\n", start.Format("15:04:05.000"), r.Method, r.URL.EscapedPath(), status, time.Since(start).Round(time.Microsecond))
	})
}
