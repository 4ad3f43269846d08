// Command labelprinter-exporter puts label printers on Prometheus dashboards. Like
// blackbox_exporter and snmp_exporter it keeps no target list of its own: Prometheus asks
// /probe?target=<printer base URL>&printer=<name> once per printer and scrape interval, and the
// exporter reads the printer's counters and status with the SDK and answers the metrics.
//
//	go run ./cmd/labelprinter-exporter
//	curl 'localhost:9631/probe?target=http://127.0.0.1:8631&printer=line1'
//
// Flags:
//
//	--listen                address to serve on (default :9631)
//	--timeout               probe timeout when Prometheus sends no scrape timeout (default 10s)
//	--bearer-token-file     file holding a bearer token sent to every printer
//	--ca-cert               PEM file of the CA(s) that sign HTTPS printers' certificates
//	--insecure-skip-verify  do not verify HTTPS printers' certificates
//	--allow-targets         CIDRs, addresses and host names that may be probed, comma-separated
//	                        (default: loopback and private networks)
//	--cache-size            targets whose client and connections are kept (default 1024)
//	--log-level             debug, info, warn or error (default info); failed probes log at debug
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit code: 0 after a clean stop, 2 for bad flags,
// 1 when the exporter cannot start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, listen, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "labelprinter-exporter:", err)
		}
		return 2
	}
	e, err := newExporter(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "labelprinter-exporter:", err)
		return 2
	}
	defer e.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(stderr, "labelprinter-exporter:", err)
		return 1
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "labelprinter-exporter: listening on %s\n", ln.Addr())

	select {
	case err := <-done:
		fmt.Fprintln(stderr, "labelprinter-exporter:", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	<-done
	fmt.Fprintln(stdout, "labelprinter-exporter: stopped")
	return 0
}

// parseFlags reads the command line into a config and the listen address.
func parseFlags(args []string, stderr io.Writer) (config, string, error) {
	fs := flag.NewFlagSet("labelprinter-exporter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultListen, "address to serve /probe, /metrics and / on")
	timeout := fs.Duration("timeout", defaultTimeout, "probe timeout when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds")
	tokenFile := fs.String("bearer-token-file", "", "file holding a bearer token sent to every printer (never shown)")
	caCert := fs.String("ca-cert", "", "PEM file of the CA certificates that sign HTTPS printers' certificates")
	insecure := fs.Bool("insecure-skip-verify", false, "do not verify HTTPS printers' certificates")
	var allow []string
	fs.Func("allow-targets", "CIDRs, addresses and host names that may be probed, comma-separated; replaces the default "+
		strings.Join(defaultAllowTargets, ",")+" (and host names resolving only there)", func(v string) error {
		n := len(allow)
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				allow = append(allow, e)
			}
		}
		if len(allow) == n {
			return errors.New("lists nothing")
		}
		return nil
	})
	cacheSize := fs.Int("cache-size", defaultCacheSize, "targets whose client and connections are kept, least recently used out")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error; failed probes are logged at debug")
	if err := fs.Parse(args); err != nil {
		return config{}, "", err
	}
	if fs.NArg() > 0 {
		return config{}, "", fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return config{}, "", fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	cfg := config{
		timeout:      *timeout,
		allowTargets: allow,
		cacheSize:    *cacheSize,
		logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return config{}, "", fmt.Errorf("--bearer-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return config{}, "", errors.New("--bearer-token-file: the file is empty")
		}
		if strings.ContainsFunc(tok, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			// Say what is wrong without echoing any of the token.
			return config{}, "", errors.New("--bearer-token-file: the token holds a line break or control character")
		}
		cfg.token = secret(tok)
	}
	if *caCert != "" || *insecure {
		t := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: *insecure}
		if *caCert != "" {
			pem, err := os.ReadFile(*caCert)
			if err != nil {
				return config{}, "", fmt.Errorf("--ca-cert: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return config{}, "", fmt.Errorf("--ca-cert: %s holds no PEM certificate", *caCert)
			}
			t.RootCAs = pool
		}
		cfg.tls = t
	}
	return cfg, *listen, nil
}
