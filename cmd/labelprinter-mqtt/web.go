package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/labelprinter/go-labelprinter/mqttbridge"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// This file holds --web.listen-address: what a plant's monitoring reads of the bridge over
// HTTP. /metrics is Prometheus's text (the bridge's Collector, labelprinter_mqtt_build_info,
// the Go runtime and the process); /healthz answers 200 while the process runs; /readyz 200
// while the bridge is active and connected to the broker, else 503 saying which it is not
// (a standby of a pair is healthy and not ready).

// startWeb listens on addr and serves until stop is called. The listener is made before it
// returns, so an address in use is said at start.
func startWeb(addr string, b *mqttbridge.Bridge, log *slog.Logger) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.Collector(), buildinfo.Get().Collector("labelprinter_mqtt"),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(reg,
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		h := b.Health()
		switch {
		case !h.Active:
			http.Error(w, "not active: standing by, or starting or stopping", http.StatusServiceUnavailable)
		case !h.Connected:
			http.Error(w, "not connected to the broker", http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(w, "ready")
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving --web.listen-address stopped", "err", err)
		}
	}()
	log.Info("serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}
