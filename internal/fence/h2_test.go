package fence

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTP2SharedConnectionKept: over HTTP/2 one connection carries every call's requests. A
// request the fence stops when it begins or gets its connection (its lease ended, the lease's
// timer not yet run) never reaches the server, and the connection stays up: another call's
// request written on it, waiting for its answer, still gets it. A deadline that passes while
// the headers are encoded cannot stop them, and the call says the request may be written.
func TestHTTP2SharedConnectionKept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stopped atomic.Int64 // requests to /stopped that reached the server
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	answer := sync.OnceFunc(func() { close(release) })
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/stopped" {
			stopped.Add(1)
			return
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	defer func() {
		answer()
		_ = srv.Close()
		wg.Wait()
	}()
	tr := &http.Transport{Protocols: &protos}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	base := "http://" + ln.Addr().String()

	held := Start(time.Hour, time.Now())
	defer held.Lose(errors.New("end of test"))
	hctx, hcall := held.BoundToWrite(context.Background())
	defer hcall.End()
	var protoMajor atomic.Int64
	errc := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(hctx, http.MethodPost, base+"/held", nil)
		if err != nil {
			errc <- err
			return
		}
		resp, err := cl.Do(req)
		if err == nil {
			protoMajor.Store(int64(resp.ProtoMajor))
			_ = resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-arrived:
	case <-time.After(limit):
		t.Fatal("the held request did not arrive")
	}

	for _, at := range []string{"GetConn", "GotConn", "first header field"} {
		c := &clock{}
		l := start(time.Hour, time.Now(), c.now)
		skip := func() { c.skip.Store(int64(2 * time.Hour)) }
		trace := &httptrace.ClientTrace{}
		switch at {
		case "GetConn":
			skip()
		case "GotConn":
			trace.GetConn = func(string) { skip() }
		case "first header field":
			trace.GotConn = func(httptrace.GotConnInfo) { skip() }
		}
		ctx, call := l.Bound(httptrace.WithClientTrace(context.Background(), trace))
		path := "/stopped"
		if at == "first header field" {
			path = "/late" // HTTP/2 writes its headers right after encoding them: nothing stops it
		}
		err := post(t, ctx, cl, base+path)
		call.End()
		_, n, last := call.Attempts()
		switch {
		case at == "first header field" && last == NotWritten:
			t.Errorf("%s: the call says not written (%v), but the request may have been", at, err)
		case at != "first header field" && (err == nil || n != 0 || last != NotWritten):
			t.Errorf("%s: %v, %d written, last %v; want it stopped, none written", at, err, n, last)
		}
	}
	time.Sleep(50 * time.Millisecond) // anything written would have arrived
	if n := stopped.Load(); n != 0 {
		t.Errorf("%d stopped requests reached the server", n)
	}
	answer()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("the held request on the shared connection: %v, want its answer", err)
		}
	case <-time.After(limit):
		t.Fatal("the held request's answer did not come")
	}
	if protoMajor.Load() != 2 {
		t.Fatalf("the held request went over HTTP/%d, not HTTP/2", protoMajor.Load())
	}
}
