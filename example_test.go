package labelprinter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// exampleClient starts a simulated printer named line1 with one stored label, so the examples
// run anywhere; against a real printer, NewClient("http://printer") is all it takes.
func exampleClient() (*labelprinter.Client, func()) {
	sim, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithProcessingDelay(0))
	if err != nil {
		log.Fatal(err)
	}
	c, err := labelprinter.NewClient(sim.URL)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Labels.Put(context.Background(), "MEDIUM", json.RawMessage(`{"format":3,"width":50,"height":30,"objs":[]}`)); err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); sim.Close() }
}

func ExampleNewClient() {
	c, err := labelprinter.NewClient("http://192.168.1.50:8080",
		labelprinter.WithBearerToken("token-from-the-proxy"),
		labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 3}),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.BaseURL())

	_, err = labelprinter.NewClient("192.168.1.50")
	fmt.Println(errors.Is(err, labelprinter.ErrInvalidArgument))
	// Output:
	// http://192.168.1.50:8080/api/v3
	// true
}

func ExamplePrintersService_PrintJob() {
	c, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	// Select the label, print two copies, then read the counters.
	if _, err := c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{
		LabelName: "MEDIUM",
		Copies:    2,
		Queue:     labelprinter.Ptr(false),
	}); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.Printers.Trigger(ctx, "line1"); err != nil {
			log.Fatal(err)
		}
	}
	counters, err := c.Printers.Counters(ctx, "line1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d labels printed on %d triggers\n", counters.PrintedLabels, counters.Triggers)

	// An empty job is refused before anything is sent: deselecting is its own call.
	_, err = c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{})
	fmt.Println(errors.Is(err, labelprinter.ErrInvalidArgument))
	// Output:
	// 2 labels printed on 2 triggers
	// true
}

func ExampleImagesService_Put() {
	c, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	var logo bytes.Buffer
	if err := png.Encode(&logo, image.NewGray(image.Rect(0, 0, 300, 120))); err != nil {
		log.Fatal(err)
	}
	// A bytes.Reader can be rewound, so a retry re-sends the whole image.
	err := c.Images.Put(ctx, "logo", bytes.NewReader(logo.Bytes()), "image/png",
		&labelprinter.ImagePutOptions{Intent: labelprinter.IntentPerceptual})
	if err != nil {
		log.Fatal(err)
	}
	info, err := c.Images.WaitReady(ctx, "logo")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.State, info.Width, info.Height, info.Format.ColorSpace, info.Intent)
	// Output:
	// READY 300 120 GRAY PERCEPTUAL
}

func ExamplePrintersService_History() {
	c, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	if _, err := c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{LabelName: "MEDIUM"}); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.Printers.Trigger(ctx, "line1"); err != nil {
			log.Fatal(err)
		}
	}
	hist, err := c.Printers.History(ctx, "line1", &labelprinter.HistoryOptions{
		Resolution: labelprinter.ResolutionDays,
		Start:      time.Now().Add(-7 * 24 * time.Hour),
	})
	if err != nil {
		log.Fatal(err)
	}
	buckets, err := hist.Buckets()
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range buckets {
		fmt.Printf("%d labels in the day starting at %s\n", b.Count, b.Start.Format("15:04 MST"))
	}
	// Output:
	// 3 labels in the day starting at 00:00 UTC
}

func ExampleAPIError() {
	c, stop := exampleClient()
	defer stop()

	_, err := c.Labels.Get(context.Background(), "NO-SUCH-LABEL")
	fmt.Println(errors.Is(err, labelprinter.ErrNotFound))
	var apiErr *labelprinter.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Method, apiErr.Path)
	}
	// Output:
	// true
	// 404 GET /api/v3/labels/NO-SUCH-LABEL
}

func ExampleLabelsService_Put() {
	c, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	// Any value that marshals to a JSON object works; json.RawMessage is sent as is.
	label := map[string]any{
		"format": 3, "width": 50.0, "height": 20.0,
		"objs": []any{map[string]any{"type": "Text", "x": 1.0, "y": 1.0, "text": "Batch {{Batch}}",
			"font": map[string]any{"family": "Arial", "style": "Regular", "height": 6.0}, "color": "black"}},
	}
	if err := c.Labels.Put(ctx, "batch label", label); err != nil {
		log.Fatal(err)
	}
	labels, err := c.Labels.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, ok := labels["batch label"]
	fmt.Println(len(labels), ok)
	// Output:
	// 2 true
}

func ExamplePrintersService_ConfirmTriggerWith() {
	srv, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := labelprinter.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	sim := srv.Sim
	if err := c.Labels.Put(ctx, "MEDIUM", json.RawMessage(`{"format":3,"width":50,"height":30,"objs":[]}`)); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{LabelName: "MEDIUM"}); err != nil {
		log.Fatal(err)
	}
	const trigger = "/api/v3/printers/{name}/trigger"

	// The printer prints, then the connection drops before its answer arrives: the counters
	// settle it.
	sim.InjectFault(printersim.Fault{Method: "POST", Route: trigger, Times: 1, Reset: printersim.ResetAfterRead})
	res, err := c.Printers.ConfirmTriggerWith(ctx, "line1", &labelprinter.ConfirmOptions{Settle: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome, errors.Is(res.Err, labelprinter.ErrOutcomeUnknown))

	// A gateway answers 502. The counters did not move, but a gateway may have forwarded the
	// trigger to a printer that prints it late: not "not received", so do not resend blindly.
	sim.InjectFault(printersim.Fault{Method: "POST", Route: trigger, Times: 1, Status: 502})
	res, err = c.Printers.ConfirmTriggerWith(ctx, "line1", &labelprinter.ConfirmOptions{Settle: 300 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome, errors.Is(res.Err, labelprinter.ErrOutcomeUnknown))
	// Output:
	// printed true
	// unknown true
}

// tokenTransport adds a bearer token the Client never sees, as an OAuth2 or
// prometheus/common round tripper does.
type tokenTransport struct{ token string }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

// A printer (here a careless proxy) echoes the Authorization header, JSON-escaped, in its 401.
// The token comes from the caller's own transport, so the Client is told it with
// WithRedactedValues and keeps it out of the error as it would its own.
func ExampleWithRedactedValues() {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.Marshal(map[string]string{"message": "bad " + r.Header.Get("Authorization")})
		w.Write(bytes.ReplaceAll(b, []byte("/"), []byte(`\/`))) // as PHP writes it
	}))
	defer proxy.Close()

	const token = "abc/DEF+ghi/JKL==" // read from the transport's credentials file
	c, err := labelprinter.NewClient(proxy.URL,
		labelprinter.WithHTTPClient(&http.Client{Transport: tokenTransport{token}}),
		labelprinter.WithRedactedValues(token),
		labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Printers.Counters(context.Background(), "line1")
	fmt.Println(err)
	fmt.Println(c.Redact("my transport says: token " + token + " expired"))
	// Output:
	// GET /api/v3/printers/line1/printCounters: 401 Unauthorized: bad Bearer [REDACTED]
	// my transport says: token [REDACTED] expired
}
