package fence_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/fence"
)

// TestSDKSaysNotSent: a trigger whose connection is still being made when the lease's deadline
// passes is stopped there, and the SDK's error says it was not sent (MaybeSent false, not
// ErrOutcomeUnknown), naming the lease's end; the SDK does not retry it.
func TestSDKSaysNotSent(t *testing.T) {
	dials := make(chan struct{}, 8)
	tr := &http.Transport{
		// A dial into a partition: nothing answers until the dial is given up.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			dials <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	defer tr.CloseIdleConnections()
	c, err := labelprinter.NewClient("http://127.0.0.1:9", labelprinter.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := fence.Start(200*time.Millisecond, time.Now())
	defer l.Lose(errors.New("end of test"))
	ctx, call := l.BoundToWrite(context.Background())
	defer call.End()
	_, err = c.Printers.Trigger(ctx, "p1")
	var te *labelprinter.TransportError
	if !errors.As(err, &te) || te.MaybeSent || errors.Is(err, labelprinter.ErrOutcomeUnknown) {
		t.Fatalf("Trigger stopped while dialling: %v (%T); want a TransportError that says it was not sent", err, err)
	}
	if !errors.Is(err, fence.ErrExpired) {
		t.Errorf("Trigger's error %v does not name the lease's end", err)
	}
	if begun, written, last := call.Attempts(); begun != 1 || written != 0 || last != fence.NotWritten {
		t.Errorf("begun %d, written %d, last %v; want 1 attempt, not written", begun, written, last)
	}
	if n := len(dials); n != 1 {
		t.Errorf("%d dials, want 1: no retry after the lease's end", n)
	}
	// A call that begins after the lease's end never dials.
	ctx2, call2 := l.BoundToWrite(context.Background())
	defer call2.End()
	if _, err := c.Printers.Trigger(ctx2, "p1"); !errors.Is(err, fence.ErrExpired) && !errors.Is(err, context.Canceled) {
		t.Errorf("Trigger after the lease's end: %v", err)
	}
	if n := len(dials); n != 1 {
		t.Errorf("a call after the lease's end dialled (%d dials in all)", n)
	}
}
