package labelprinter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// e2eSetup starts a simulator and a Client with fast retries, both closed at cleanup.
func e2eSetup(t *testing.T, simOpts []printersim.Option, opts ...labelprinter.Option) (*printersim.Server, *labelprinter.Client) {
	t.Helper()
	srv, err := printersim.Start(simOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	opts = append([]labelprinter.Option{labelprinter.WithRetry(labelprinter.RetryPolicy{MinWait: time.Millisecond, MaxWait: 2 * time.Millisecond}), labelprinter.WithPollInterval(10 * time.Millisecond)}, opts...)
	c, err := labelprinter.NewClient(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

func e2ePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestE2EEveryOperation drives every operation of the SDK against the simulator over HTTP.
func TestE2EEveryOperation(t *testing.T) {
	srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("line1", "line2"), printersim.WithProcessingDelay(20 * time.Millisecond)})
	ctx := t.Context()

	status, err := c.Printers.Status(ctx)
	must(t, err)
	if !strings.Contains(string(status.Raw), `"line2"`) || status.State != labelprinter.StateStarted {
		t.Errorf("status %s", status.Raw)
	}

	// Labels.
	must(t, c.Labels.Put(ctx, "L", map[string]any{"format": 3, "objs": []any{map[string]any{"type": "Text", "text": "{{Name}}"}}}))
	must(t, c.Labels.Put(ctx, "raw", json.RawMessage(`{"format":3}`)))
	labels, err := c.Labels.List(ctx)
	must(t, err)
	if len(labels) != 2 {
		t.Errorf("labels %v", labels)
	}
	got, err := c.Labels.Get(ctx, "raw")
	must(t, err)
	if string(got) != `{"format":3}` {
		t.Errorf("label %s", got)
	}

	// Tables and simulation.
	must(t, c.Tables.Put(ctx, "T", map[string]any{"columns": []string{"SKU", "Name", "Label"}, "rows": [][]string{{"A", "Bolt", "L"}, {"B", "Nut", "raw"}}}))
	tables, err := c.Tables.List(ctx)
	must(t, err)
	if _, ok := tables["T"]; !ok || len(tables) != 1 {
		t.Errorf("tables %v", tables)
	}
	tbl, err := c.Tables.Get(ctx, "T")
	must(t, err)
	if !strings.Contains(string(tbl), `"Bolt"`) {
		t.Errorf("table %s", tbl)
	}
	sim, err := c.Labels.Simulate(ctx, "L", &labelprinter.SimulationOptions{TableName: "T", KeyColumn: "SKU", Key: "B"})
	must(t, err)
	if !strings.Contains(string(sim), `"Nut"`) {
		t.Errorf("simulation %s", sim)
	}
	if _, err := c.Labels.Simulate(ctx, "L", nil); err != nil {
		t.Error(err)
	}

	// Images: raw upload, file upload, JSON form, info, list, download, wait.
	pngData := e2ePNG(t, 40, 10)
	must(t, c.Images.Put(ctx, "logo", bytes.NewReader(pngData), "image/png", &labelprinter.ImagePutOptions{Intent: labelprinter.IntentSpotColor}))
	info, err := c.Images.WaitReady(ctx, "logo")
	must(t, err)
	if info.State != labelprinter.ImageStateReady || info.Width != 40 || info.Height != 10 || info.Intent != labelprinter.IntentSpotColor || info.Format.Channels != 1 || info.Format.ColorSpace != labelprinter.ColorSpaceGray {
		t.Errorf("info %+v", info)
	}
	path := filepath.Join(t.TempDir(), "f.png")
	must(t, os.WriteFile(path, e2ePNG(t, 8, 8), 0o600))
	must(t, c.Images.PutFile(ctx, "file", path, nil))
	must(t, c.Images.PutJSON(ctx, "pbm", labelprinter.ImageUpload{Data: []byte("P1\n2 1\n0 1\n"), Intent: labelprinter.IntentRaw}))
	pbm, err := c.Images.WaitReady(ctx, "pbm")
	must(t, err)
	if pbm.Width != 2 || pbm.Intent != labelprinter.IntentRaw {
		t.Errorf("pbm %+v", pbm)
	}
	must(t, c.Images.Put(ctx, "broken", strings.NewReader("not an image"), "image/png", nil))
	if _, err := c.Images.WaitReady(ctx, "broken"); !errors.Is(err, labelprinter.ErrImageFailed) {
		t.Errorf("broken image: %v, want ErrImageFailed", err)
	}
	list, err := c.Images.List(ctx, &labelprinter.ImageListOptions{Details: true})
	must(t, err)
	var listed labelprinter.ImageInfo
	must(t, json.Unmarshal(list["logo"], &listed))
	if len(list) != 4 || listed.Width != 40 {
		t.Errorf("image list %v", list)
	}
	var dl bytes.Buffer
	ct, err := c.Images.Download(ctx, "logo", &dl)
	must(t, err)
	if ct != "image/png" || !bytes.Equal(dl.Bytes(), pngData) {
		t.Errorf("download: %q, %d bytes", ct, dl.Len())
	}

	// Printing, counters and history on a named printer and on the single-printer paths.
	resp, err := c.Printers.PrintJob(ctx, "line2", &labelprinter.PrintJob{TableName: "T", KeyColumn: "SKU", Key: "A", LabelColumn: "Label", Copies: 2, Queue: labelprinter.Ptr(false)})
	must(t, err)
	if !strings.Contains(string(resp), `"label":"L"`) {
		t.Errorf("printJob answer %s", resp)
	}
	for i := 0; i < 2; i++ {
		_, err := c.Printers.Trigger(ctx, "line2")
		must(t, err)
	}
	if _, err := c.Printers.Trigger(ctx, "line2"); !errors.Is(err, labelprinter.ErrConflict) {
		t.Errorf("trigger with nothing selected: %v", err)
	}
	pc, err := c.Printers.Counters(ctx, "line2")
	must(t, err)
	if *pc != (labelprinter.PrintCounters{Triggers: 3, TriggerBounces: 1, PrintedLabels: 2}) {
		t.Errorf("counters %+v", pc)
	}
	hist, err := c.Printers.History(ctx, "line2", &labelprinter.HistoryOptions{Resolution: labelprinter.ResolutionMinutes, Start: time.Now().Add(-time.Hour), End: time.Now().Add(time.Minute)})
	must(t, err)
	buckets, err := hist.Buckets()
	must(t, err)
	var total int64
	for _, b := range buckets {
		total += b.Count
	}
	if total != 2 {
		t.Errorf("history %+v", buckets)
	}
	_, err = c.Printers.PrintJob(ctx, "", &labelprinter.PrintJob{LabelName: "raw", Extra: map[string]any{"repeatPrint": false}})
	must(t, err)
	if srv.Sim.QueueLength("line1") != 1 {
		t.Error("single-printer printJob did not reach the first printer")
	}
	_, err = c.Printers.AbortPrint(ctx, "line1")
	must(t, err)
	if srv.Sim.QueueLength("line1") != 0 {
		t.Error("abort left a job")
	}
	_, err = c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{LabelName: "raw"})
	must(t, err)
	_, err = c.Printers.DeselectJobs(ctx, "line1")
	must(t, err)
	if srv.Sim.QueueLength("line1") != 0 {
		t.Error("deselect left a job")
	}
	if _, err := c.Printers.DeselectJobs(ctx, ""); err != nil {
		t.Error(err)
	}
	if _, err := c.Printers.Counters(ctx, ""); err != nil {
		t.Error(err)
	}
	if _, err := c.Printers.History(ctx, "", nil); err != nil {
		t.Error(err)
	}
	if _, err := c.Printers.Counters(ctx, "line9"); !errors.Is(err, labelprinter.ErrNotFound) {
		t.Errorf("unknown printer: %v", err)
	}

	// Deletes.
	must(t, c.Labels.Delete(ctx, "L"))
	must(t, c.Tables.Delete(ctx, "T"))
	must(t, c.Images.Delete(ctx, "logo"))
	if err := c.Labels.Delete(ctx, "L"); !errors.Is(err, labelprinter.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	var apiErr *labelprinter.APIError
	if _, err := c.Images.Info(ctx, "logo"); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Message == "" {
		t.Errorf("info of a deleted image: %v", err)
	}
}

// TestE2ENamesRoundTrip checks that awkward names reach the printer as one segment and come
// back unchanged.
func TestE2ENamesRoundTrip(t *testing.T) {
	srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("line/1 ü")})
	ctx := t.Context()
	names := []string{"with space", "a/b", "100%", "what?", "#1", "ümlaut ☃", "a%2Fb", "semi;colon", "plus+sign", "..a", "a.."}
	for _, name := range names {
		must(t, c.Labels.Put(ctx, name, json.RawMessage(`{"n":1}`)))
		must(t, c.Tables.Put(ctx, name, map[string]any{"columns": []string{"k"}, "rows": [][]string{{"v"}}}))
		must(t, c.Images.Put(ctx, name, bytes.NewReader(e2ePNG(t, 2, 2)), "image/png", nil))
		if _, err := c.Labels.Get(ctx, name); err != nil {
			t.Errorf("label %q: %v", name, err)
		}
		if _, err := c.Tables.Get(ctx, name); err != nil {
			t.Errorf("table %q: %v", name, err)
		}
		if _, err := c.Images.Info(ctx, name); err != nil {
			t.Errorf("image %q: %v", name, err)
		}
	}
	for _, list := range [][]string{srv.Sim.LabelNames(), srv.Sim.TableNames(), srv.Sim.ImageNames()} {
		if len(list) != len(names) {
			t.Errorf("stored %q, want %q", list, names)
		}
	}
	for _, name := range names {
		if _, ok := srv.Sim.Label(name); !ok {
			t.Errorf("label %q not stored under its own name", name)
		}
	}
	if _, err := c.Printers.Counters(ctx, "line/1 ü"); err != nil {
		t.Errorf("printer name with a slash: %v", err)
	}
}

// TestE2ERetryRules checks the retry rules against injected faults over real sockets.
func TestE2ERetryRules(t *testing.T) {
	const printJob = "/api/v3/printers/{name}/printJob"
	t.Run("GET meets two 503s and succeeds on the third attempt", func(t *testing.T) {
		srv, c := e2eSetup(t, nil)
		srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: "/api/v3/printCounters", Times: 2, Status: 503})
		if _, err := c.Printers.Counters(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
		if n := srv.Sim.Requests("GET", "/api/v3/printCounters"); n != 3 {
			t.Errorf("requests %d, want 3", n)
		}
	})
	t.Run("printJob that meets a reset after it was read is sent once", func(t *testing.T) {
		srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("p")})
		must(t, c.Labels.Put(t.Context(), "L", json.RawMessage(`{}`)))
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: printJob, Times: 1, Reset: printersim.ResetAfterRead})
		_, err := c.Printers.PrintJob(t.Context(), "p", &labelprinter.PrintJob{LabelName: "L", Queue: labelprinter.Ptr(true)})
		if !errors.Is(err, labelprinter.ErrOutcomeUnknown) {
			t.Errorf("err = %v, want ErrOutcomeUnknown", err)
		}
		if n := srv.Sim.Requests("POST", printJob); n != 1 {
			t.Errorf("printJob sent %d times, want 1", n)
		}
		if q := srv.Sim.QueueLength("p"); q != 1 {
			t.Errorf("queue %d, want the one job the printer did get", q)
		}
	})
	t.Run("printJob answered 503 is sent once", func(t *testing.T) {
		srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("p")})
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: printJob, Times: 3, Status: 503, RetryAfter: "0"})
		_, err := c.Printers.PrintJob(t.Context(), "p", &labelprinter.PrintJob{LabelName: "L"})
		var apiErr *labelprinter.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Attempts != 1 {
			t.Errorf("err = %v", err)
		}
		if n := srv.Sim.Requests("POST", printJob); n != 1 {
			t.Errorf("printJob sent %d times, want 1", n)
		}
	})
	t.Run("trigger that meets a reset is sent once", func(t *testing.T) {
		srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("p")})
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/trigger", Times: 1, Reset: printersim.ResetBeforeRead})
		if _, err := c.Printers.Trigger(t.Context(), "p"); !errors.Is(err, labelprinter.ErrOutcomeUnknown) {
			t.Errorf("err = %v", err)
		}
		if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/trigger"); n != 1 {
			t.Errorf("trigger sent %d times, want 1", n)
		}
	})
	t.Run("abortPrint is retried", func(t *testing.T) {
		srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("p")})
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/abortPrint", Times: 1, Reset: printersim.ResetBeforeRead})
		if _, err := c.Printers.AbortPrint(t.Context(), "p"); err != nil {
			t.Fatal(err)
		}
		if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/abortPrint"); n != 2 {
			t.Errorf("abortPrint sent %d times, want 2", n)
		}
	})
	t.Run("PUT from a seeker is re-sent whole after a 503", func(t *testing.T) {
		srv, c := e2eSetup(t, nil)
		srv.Sim.InjectFault(printersim.Fault{Method: "PUT", Route: "/api/v3/images/{name}", Times: 1, Status: 503})
		data := e2ePNG(t, 16, 16)
		must(t, c.Images.Put(t.Context(), "img", bytes.NewReader(data), "image/png", nil))
		var back bytes.Buffer
		if _, err := c.Images.Download(t.Context(), "img", &back); err != nil || !bytes.Equal(back.Bytes(), data) {
			t.Errorf("stored image differs after a retried upload: %v", err)
		}
		if n := srv.Sim.Requests("PUT", "/api/v3/images/{name}"); n != 2 {
			t.Errorf("PUT sent %d times, want 2", n)
		}
	})
	t.Run("a truncated answer is an error, not a short result", func(t *testing.T) {
		srv, c := e2eSetup(t, nil, labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}))
		srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: "/api/v3/printCounters", Times: 1, Truncate: true})
		if pc, err := c.Printers.Counters(t.Context(), ""); err == nil {
			t.Errorf("truncated counters decoded as %+v", pc)
		}
	})
}

// TestE2EConcurrentClient shares one Client between 100 goroutines.
func TestE2EConcurrentClient(t *testing.T) {
	srv, c := e2eSetup(t, []printersim.Option{printersim.WithPrinters("p")})
	ctx := t.Context()
	must(t, c.Labels.Put(ctx, "L", json.RawMessage(`{}`)))
	_, err := c.Printers.PrintJob(ctx, "p", &labelprinter.PrintJob{LabelName: "L"})
	must(t, err)
	const goroutines, calls = 100, 5
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if _, err := c.Printers.Trigger(ctx, "p"); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.Printers.Counters(ctx, "p"); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.Labels.Get(ctx, "L"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	counters, _ := srv.Sim.Counters("p")
	if counters.PrintedLabels != goroutines*calls {
		t.Errorf("printed %d labels, want %d (no duplicate, no loss)", counters.PrintedLabels, goroutines*calls)
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/trigger"); n != goroutines*calls {
		t.Errorf("trigger requests %d, want %d", n, goroutines*calls)
	}
}

// TestE2EBearerToken checks that a printer requiring a token refuses a client without it.
func TestE2EBearerToken(t *testing.T) {
	srv, err := printersim.Start(printersim.WithToken("CANARY-TOKEN-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	anon, err := labelprinter.NewClient(srv.URL)
	must(t, err)
	defer anon.Close()
	_, err = anon.Labels.List(t.Context())
	if !errors.Is(err, labelprinter.ErrUnauthorized) {
		t.Fatalf("without token: %v", err)
	}
	if n := srv.Sim.Requests("GET", "/api/v3/labels"); n != 1 {
		t.Errorf("401 retried: %d requests", n)
	}
	authed, err := labelprinter.NewClient(srv.URL, labelprinter.WithBearerToken("CANARY-TOKEN-e2e"))
	must(t, err)
	defer authed.Close()
	if _, err := authed.Labels.List(t.Context()); err != nil {
		t.Fatalf("with token: %v", err)
	}
	wrong, err := labelprinter.NewClient(srv.URL, labelprinter.WithBearerToken("wrong-token"))
	must(t, err)
	defer wrong.Close()
	_, err = wrong.Labels.List(context.Background())
	if !errors.Is(err, labelprinter.ErrUnauthorized) || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("wrong token: %v", err)
	}
	var apiErr *labelprinter.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d", apiErr.StatusCode)
	}
}
