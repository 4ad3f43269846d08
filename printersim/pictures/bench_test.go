package pictures_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

// BenchmarkTriggerWithPage measures what the page costs a trigger's answer: the median answer
// time of 1,000 triggers on a simulator with the page on (pictures drawn by package
// label/preview, one client reading /ui/events) against 1,000 on one without it, interleaved
// in rounds of 100 in one run, the side that goes first alternating. It reports both medians
// and their ratio (the goal is at most 1.10):
//
//	go test ./printersim/pictures -run '^$' -bench TriggerWithPage -benchtime 1x
func BenchmarkTriggerWithPage(b *testing.B) {
	start := func(opts ...printersim.Option) (*printersim.Server, *http.Client) {
		srv, err := printersim.Start(opts...)
		if err != nil {
			b.Fatal(err)
		}
		c := &http.Client{Transport: &http.Transport{}}
		b.Cleanup(func() { c.CloseIdleConnections(); srv.Close() })
		for _, r := range []struct{ method, path, body string }{
			{"PUT", "/api/v3/labels/Carton", pageLabel},
			{"PUT", "/api/v3/tables/Products", `{"columns":["SKU","Name"],"rows":[["S12-342C","Hex bolt M8"]]}`},
			{"POST", "/api/v3/printers/line1/printJob", `{"labelName":"Carton","tableName":"Products","keyColumn":"SKU","key":"S12-342C"}`},
		} {
			req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		return srv, c
	}
	on, onClient := start(printersim.WithUI(), printersim.WithPictures(pictures.Draw))
	off, offClient := start()

	ctx, cancel := context.WithCancel(context.Background())
	reader := &http.Client{Transport: &http.Transport{}}
	read := make(chan struct{})
	go func() {
		defer close(read)
		req, _ := http.NewRequestWithContext(ctx, "GET", on.URL+"/ui/events", nil)
		resp, err := reader.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
	}()
	defer func() { cancel(); <-read; reader.CloseIdleConnections() }()

	trigger := func(srv *printersim.Server, c *http.Client) time.Duration {
		t0 := time.Now()
		resp, err := c.Post(srv.URL+"/api/v3/printers/line1/trigger", "", nil)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("trigger: %d", resp.StatusCode)
		}
		return d
	}
	for b.Loop() {
		var withPage, without []time.Duration
		for round := range 10 {
			sides := []func(){
				func() {
					for range 100 {
						withPage = append(withPage, trigger(on, onClient))
					}
				},
				func() {
					for range 100 {
						without = append(without, trigger(off, offClient))
					}
				},
			}
			if round%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			sides[0]()
			sides[1]()
		}
		mOn, mOff := median(withPage), median(without)
		b.ReportMetric(float64(mOn.Microseconds()), "µs-median-page-on")
		b.ReportMetric(float64(mOff.Microseconds()), "µs-median-page-off")
		b.ReportMetric(float64(mOn)/float64(mOff), "ratio")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
