// Command labelprinter-exporter puts label printers on Prometheus dashboards. Like
// blackbox_exporter and snmp_exporter it keeps no target list of its own: Prometheus asks
// /probe?target=<printer base URL>&printer=<name>[&module=<name>] once per printer and scrape
// interval, and the exporter reads the printer's counters and status with the SDK and answers
// the metrics.
//
//	go run ./cmd/labelprinter-exporter
//	curl 'localhost:9631/probe?target=http://127.0.0.1:8631&printer=line1'
//
// Modules, from --config.file, say how each kind of printer is reached: the HTTP client
// settings (authorization, basic auth, OAuth2, tls_config) Prometheus itself reads, and the
// targets the module may probe. A module that carries a credential must list its targets.
// Without --config.file the flags make one module, "default". SIGHUP or POST /-/reload loads
// the configuration again.
//
// Flags:
//
//	--listen                address to serve on (default :9631)
//	--config.file           YAML file of modules (optional)
//	--timeout               probe timeout when Prometheus sends no scrape timeout (default 10s)
//	--timeout-offset        kept back from Prometheus's scrape timeout (default 0.5s)
//	--cache-size            targets whose connections are kept warm (default 1024)
//	--log-level             debug, info, warn or error (default info); failed probes log at debug
//	--version               print the version, commit, build date, Go version and licence, and exit
//
// Without --config.file, for the default module:
//
//	--bearer-token-file     file holding a bearer token, read again for every request; needs
//	                        --allow-targets
//	--ca-cert               PEM file of the CA(s) that sign HTTPS printers' certificates
//	--insecure-skip-verify  do not verify HTTPS printers' certificates
//	--allow-targets         CIDRs, addresses and host names that may be probed, comma-separated
//	                        (default: loopback and private networks)
package main

import (
	"context"
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

	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/labelprinter/go-labelprinter/internal/suggest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx ends and returns the exit code: 0 after a clean stop, 2 for bad flags or
// a configuration that does not load, 1 when the exporter cannot start. SIGHUP reloads the
// configuration.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, listen, err := parseFlags(args, stderr)
	if errors.Is(err, errVersion) {
		fmt.Fprint(stdout, buildinfo.Get().Print("labelprinter-exporter"))
		return 0
	}
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
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reloads := make(chan struct{})
	go func() {
		defer close(reloads)
		for {
			select {
			case <-hup:
				_ = e.reload() // logged by reload, whichever way it went
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { <-reloads }()

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

// errVersion is parseFlags's answer to --version: print the version and exit 0.
var errVersion = errors.New("--version")

// parseFlags reads the command line into a config and the listen address. The modules are
// loaded later, by newExporter, and again at every reload.
func parseFlags(args []string, stderr io.Writer) (config, string, error) {
	fs := flag.NewFlagSet("labelprinter-exporter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultListen, "address to serve /probe, /metrics, /-/reload and / on")
	configFile := fs.String("config.file", "", "YAML file of modules; without it the flags below make the default module")
	timeout := fs.Duration("timeout", defaultTimeout, "probe timeout when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds")
	offset := fs.Duration("timeout-offset", defaultTimeoutOffset, "kept back from Prometheus's scrape timeout, so the answer arrives in time")
	tokenFile := fs.String("bearer-token-file", "", "file holding a bearer token for the default module, read for every request (never shown); needs --allow-targets")
	caCert := fs.String("ca-cert", "", "PEM file of the CA certificates that sign HTTPS printers' certificates (default module)")
	insecure := fs.Bool("insecure-skip-verify", false, "do not verify HTTPS printers' certificates (default module)")
	var allow []string
	fs.Func("allow-targets", "CIDRs, addresses and host names the default module may probe, comma-separated; replaces the default "+
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
	cacheSize := fs.Int("cache-size", defaultCacheSize, "targets whose connections are kept warm; beyond it, idle connections are closed")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error; failed probes are logged at debug")
	showVersion := buildinfo.VersionFlag(fs)
	if err := suggest.ParseFlags(fs, args, stderr); err != nil {
		return config{}, "", err
	}
	if *showVersion {
		return config{}, "", errVersion
	}
	if fs.NArg() > 0 {
		return config{}, "", fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return config{}, "", fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	cfg := config{
		timeout:       *timeout,
		timeoutOffset: *offset,
		cacheSize:     *cacheSize,
		logger:        slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	if *configFile != "" {
		var moduleFlags []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "bearer-token-file", "ca-cert", "insecure-skip-verify", "allow-targets":
				moduleFlags = append(moduleFlags, "--"+f.Name)
			}
		})
		if len(moduleFlags) > 0 {
			return config{}, "", fmt.Errorf("%s: with --config.file, set these in the file's modules", strings.Join(moduleFlags, ", "))
		}
		path := *configFile
		cfg.modules = func() (map[string]*moduleConfig, error) { return loadConfigFile(path) }
		return cfg, *listen, nil
	}
	tok, ca, skip := *tokenFile, *caCert, *insecure
	cfg.modules = func() (map[string]*moduleConfig, error) {
		m, err := flagModule(tok, ca, skip, allow)
		if err != nil {
			return nil, err
		}
		return map[string]*moduleConfig{defaultModuleName: m}, nil
	}
	return cfg, *listen, nil
}
