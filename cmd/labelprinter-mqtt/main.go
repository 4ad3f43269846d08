// Command labelprinter-mqtt puts label printers on a plant's MQTT broker: it publishes their
// status and counters (retained) and takes print commands, each printed at most once through
// an outbox file, or through an outbox in PostgreSQL shared by a pair of bridges of which one
// is active (see package mqttbridge and this directory's README).
//
//	labelprinter-mqtt --config.file bridge.yml
//	labelprinter-mqtt --config.file bridge.yml --embedded-broker 127.0.0.1:1883
//
// Flags:
//
//	--config.file      the YAML configuration (required)
//	--embedded-broker  run an MQTT broker in this process on this address (loopback unless the
//	                   address names another host) and connect to it instead of broker.url
//	--log-level        debug, info, warn or error (default info)
//	--web.listen-address ADDR
//	                   serve /metrics (Prometheus), /healthz and /readyz on ADDR, such as :9632
//	                   (default: none); ready means active and connected to the broker, so a
//	                   standby of a pair is healthy and not ready
//	--version          print the version, commit, build date, Go version and licence, and exit
//	--adopt-orphaned-outbox URL|ignore
//	                   what to do with an outbox file in state_dir that no configured printer
//	                   owns and that still holds pending or unknown entries: URL (a configured
//	                   controller, whose outbox it becomes) or ignore (start anyway, leaving it)
//
// Exit codes: 0 after a clean stop (SIGTERM or SIGINT), 2 for a bad flag or configuration (the
// message names the field) and for an orphaned outbox with work left (the message names the
// file, its URL and its counts), 1 when the bridge cannot start (another bridge is online
// under its topic_prefix, not one of its pair: the message names it), when another process
// took its broker session (the same broker.client_id; logged at error level, naming it) or,
// one of a pair, lost its lease (it left the broker and executed nothing after; started
// again, it stands by).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/labelprinter/go-labelprinter/internal/suggest"
	"github.com/labelprinter/go-labelprinter/mqttbridge"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run bridges until ctx ends and returns the exit code. Only --version writes to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("labelprinter-mqtt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config.file", "", "the YAML configuration")
	embedded := fs.String("embedded-broker", "", "run an MQTT broker in this process on this address and use it")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	adopt := fs.String("adopt-orphaned-outbox", "", "`URL` of a configured controller to take over an orphaned outbox, or ignore")
	web := fs.String("web.listen-address", "", "`address` to serve /metrics, /healthz and /readyz on, such as :9632 (default: none)")
	showVersion := buildinfo.VersionFlag(fs)
	if err := suggest.ParseFlags(fs, args, stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
		}
		return 2
	}
	if *showVersion {
		fmt.Fprint(stdout, buildinfo.Get().Print("labelprinter-mqtt"))
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "labelprinter-mqtt: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *web != "" {
		if _, _, err := net.SplitHostPort(*web); err != nil {
			fmt.Fprintf(stderr, "labelprinter-mqtt: --web.listen-address %q: want host:port, such as :9632 or 127.0.0.1:9632\n", *web)
			return 2
		}
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "labelprinter-mqtt: --log-level: %q is not debug, info, warn or error\n", *level)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	if *configFile == "" {
		fmt.Fprintln(stderr, "labelprinter-mqtt: --config.file is required")
		return 2
	}
	cfg, err := mqttbridge.LoadConfig(*configFile)
	if err != nil {
		fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
		return 2
	}
	if err := checkAdopt(*adopt, cfg); err != nil {
		fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
		return 2
	}
	if *embedded != "" {
		broker, err := mqttbridge.StartBroker(*embedded, nil)
		if err != nil {
			fmt.Fprintln(stderr, "labelprinter-mqtt: --embedded-broker:", err)
			return 1
		}
		defer broker.Close()
		cfg.Broker.URL = broker.URL()
		cfg.Broker.TLSConfig = nil
		log.Info("embedded broker listening", "addr", broker.Addr())
	} else if cfg.Broker.URL == "" {
		fmt.Fprintln(stderr, "labelprinter-mqtt: config: broker.url: required (or pass --embedded-broker)")
		return 2
	}
	var policy mqttbridge.OrphanPolicy
	switch *adopt {
	case "":
	case "ignore":
		policy.Ignore = true
	default:
		policy.AdoptInto = *adopt
	}
	b, err := mqttbridge.New(*cfg, mqttbridge.WithLogger(log), mqttbridge.WithOrphanedOutbox(policy))
	if err != nil {
		fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
		var ce *mqttbridge.ConfigError
		var oe *mqttbridge.OrphanedOutboxError
		if errors.As(err, &ce) || errors.As(err, &oe) {
			return 2
		}
		return 1
	}
	if *web != "" {
		stopWeb, err := startWeb(*web, b, log)
		if err != nil {
			_ = b.Close()
			fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
			return 1
		}
		defer stopWeb()
	}
	log.Info("bridging", "printers", len(cfg.Printers), "topic_prefix", cfg.TopicPrefix)
	if err := b.Run(ctx); err != nil {
		fmt.Fprintln(stderr, "labelprinter-mqtt:", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// checkAdopt refuses an --adopt-orphaned-outbox that is neither ignore nor the URL (any
// spelling) of a configured controller, whether or not an outbox is orphaned, so a typo is
// said at once instead of when a file is orphaned one day.
func checkAdopt(adopt string, cfg *mqttbridge.Config) error {
	if adopt == "" || adopt == "ignore" {
		return nil
	}
	words := []string{"ignore"}
	for _, p := range cfg.Printers {
		if mqttbridge.NormalizeURL(adopt) == p.URL {
			return nil
		}
		words = append(words, p.URL)
	}
	msg := fmt.Sprintf("--adopt-orphaned-outbox: %q is neither ignore nor the url of a configured printer", adopt)
	if c := suggest.Closest(adopt, words); c != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", c)
	}
	return errors.New(msg)
}
