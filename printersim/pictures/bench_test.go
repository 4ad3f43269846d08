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
	on, onClient := benchSim(b, printersim.WithUI(), printersim.WithPictures(pictures.Draw))
	benchReaders(b, on, 1)
	off, offClient := benchSim(b)
	for b.Loop() {
		mOn, mOff := interleaved(b, on, onClient, off, offClient)
		b.ReportMetric(float64(mOn.Microseconds()), "µs-median-page-on")
		b.ReportMetric(float64(mOff.Microseconds()), "µs-median-page-off")
		b.ReportMetric(float64(mOn)/float64(mOff), "ratio")
	}
}

// BenchmarkTriggerWithTenTabs measures what ten tabs of the page cost a trigger's answer
// against one: the median answer time of 1,000 triggers on a simulator with the page on and
// ten clients reading /ui/events (ten tabs, each holding its stream) against 1,000 on one with
// one client, interleaved as BenchmarkTriggerWithPage does. The goal is a ratio of at most
// 1.10:
//
//	go test ./printersim/pictures -run '^$' -bench TriggerWithTenTabs -benchtime 1x
func BenchmarkTriggerWithTenTabs(b *testing.B) {
	ten, tenClient := benchSim(b, printersim.WithUI(), printersim.WithPictures(pictures.Draw))
	benchReaders(b, ten, 10)
	one, oneClient := benchSim(b, printersim.WithUI(), printersim.WithPictures(pictures.Draw))
	benchReaders(b, one, 1)
	for b.Loop() {
		mTen, mOne := interleaved(b, ten, tenClient, one, oneClient)
		b.ReportMetric(float64(mTen.Microseconds()), "µs-median-ten-readers")
		b.ReportMetric(float64(mOne.Microseconds()), "µs-median-one-reader")
		b.ReportMetric(float64(mTen)/float64(mOne), "ratio")
	}
}

// benchSim starts a simulator with a label, a table and a job on line1.
func benchSim(b *testing.B, opts ...printersim.Option) (*printersim.Server, *http.Client) {
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

// benchReaders opens n clients reading srv's /ui/events to the end of the benchmark.
func benchReaders(b *testing.B, srv *printersim.Server, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	reader := &http.Client{Transport: &http.Transport{}}
	done := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/ui/events", nil)
			resp, err := reader.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
		}()
	}
	b.Cleanup(func() {
		cancel()
		for range n {
			<-done
		}
		reader.CloseIdleConnections()
	})
}

// interleaved times 1,000 triggers on each of a and b in rounds of 100, the side that goes
// first alternating, and returns their median answer times.
func interleaved(tb *testing.B, a *printersim.Server, ac *http.Client, b *printersim.Server, bc *http.Client) (time.Duration, time.Duration) {
	trigger := func(srv *printersim.Server, c *http.Client) time.Duration {
		t0 := time.Now()
		resp, err := c.Post(srv.URL+"/api/v3/printers/line1/trigger", "", nil)
		d := time.Since(t0)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			tb.Fatalf("trigger: %d", resp.StatusCode)
		}
		return d
	}
	var da, db []time.Duration
	for round := range 10 {
		sides := []func(){
			func() {
				for range 100 {
					da = append(da, trigger(a, ac))
				}
			},
			func() {
				for range 100 {
					db = append(db, trigger(b, bc))
				}
			},
		}
		if round%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		sides[0]()
		sides[1]()
	}
	return median(da), median(db)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
