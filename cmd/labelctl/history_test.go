package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// TestFillBuckets holds the chart's series to one point per bucket: the buckets the printer
// leaves out come back as zero, a 25-hour day across a clock change is one day, and a span of
// too many buckets, or buckets out of order, are refused instead of built.
func TestFillBuckets(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got, err := fillBuckets([]labelprinter.Bucket{
		{Start: at("2026-11-23T18:26:00Z"), Count: 3},
		{Start: at("2026-11-23T18:28:00Z"), Count: 5},
		{Start: at("2026-11-23T18:31:00Z"), Count: 1},
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, x := range got {
		b.WriteString(x.Start.Format("15:04") + "=" + string(rune('0'+x.Count)) + " ")
	}
	if want := "18:26=3 18:27=0 18:28=5 18:29=0 18:30=0 18:31=1 "; b.String() != want {
		t.Errorf("filled: %s, want %s", b.String(), want)
	}
	days, err := fillBuckets([]labelprinter.Bucket{
		{Start: at("2026-10-24T22:00:00Z"), Count: 1}, {Start: at("2026-10-25T23:00:00Z"), Count: 2},
	}, 24*time.Hour)
	if err != nil || len(days) != 2 {
		t.Errorf("a 25-hour day: %v, %v", days, err)
	}
	if _, err := fillBuckets([]labelprinter.Bucket{{Start: at("2000-01-01T00:00:00Z")}, {Start: at("2026-01-01T00:00:00Z")}}, time.Minute); err == nil {
		t.Error("26 years of minutes were filled")
	}
	// A printer sending times back and forth would otherwise make each gap a fresh span.
	if _, err := fillBuckets([]labelprinter.Bucket{{Start: at("2026-01-01T00:00:00Z")}, {Start: at("2026-03-01T00:00:00Z")}, {Start: at("2026-01-01T00:00:00Z")}, {Start: at("2026-03-01T00:00:00Z")}}, time.Minute); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("buckets back and forth: %v", err)
	}
}

// TestHistoryChart draws a history with gaps from a printer that sends it: the time axis has a
// tick at each bucket (the empty 18:27, 18:29 and 18:30 included), the peak is drawn at its
// value, and the caption gives the bucket size and the range.
func TestHistoryChart(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 18, 26, 0, 0, time.UTC).Unix()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3/printers/line1/printHistory" || r.URL.Query().Get("resolution") != "MINUTES" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"time":[`+itoa(t0)+`,`+itoa(t0+120)+`,`+itoa(t0+300)+`],"count":[4,8,2]}`)
	}))
	defer srv.Close()
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1"}
	r := cli(t, context.Background(), env, "", "history", "--chart", "--resolution", "minutes").ok(t)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("chart:\n%s", r.stdout)
	}
	axis, caption := lines[len(lines)-2], lines[len(lines)-1]
	if !regexp.MustCompile(`^\s*18:26\s+18:27\s+18:28\s+18:29\s+18:30\s+18:31$`).MatchString(axis) {
		t.Errorf("time axis %q\nchart:\n%s", axis, r.stdout)
	}
	if strings.TrimSpace(caption) != "labels printed per minute, 2026-11-23T18:26:00Z to 2026-11-23T18:31:00Z" {
		t.Errorf("caption %q", caption)
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "8.00 ") {
		t.Errorf("the peak of 8 is not the top row:\n%s", r.stdout)
	}
	// The zero buckets pull the line to the bottom: the lowest row of the plot is drawn on.
	bottom := lines[len(lines)-4]
	if !strings.Contains(bottom, " 0.00 ") || strings.Count(bottom, "─")+strings.Count(bottom, "╰")+strings.Count(bottom, "╯") == 0 {
		t.Errorf("no line at zero:\n%s", r.stdout)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// FuzzFillBuckets gives fillBuckets any times a printer could send: it never panics, never
// returns more than maxChartBuckets, keeps every bucket it was given in order, and adds only
// zero buckets.
func FuzzFillBuckets(f *testing.F) {
	f.Add(int64(1795458360), int64(120), int64(180), int64(60), uint8(0))
	f.Add(int64(0), int64(-5), int64(1<<40), int64(1<<40), uint8(2))
	f.Add(int64(1<<50), int64(0), int64(1), int64(86400*7), uint8(3))
	f.Fuzz(func(t *testing.T, t0, d1, d2, d3 int64, res uint8) {
		step, _, _ := bucketStep([]labelprinter.Resolution{labelprinter.ResolutionMinutes, labelprinter.ResolutionHours, labelprinter.ResolutionDays, labelprinter.ResolutionWeeks}[res%4])
		in := []labelprinter.Bucket{{Start: time.Unix(t0, 0).UTC(), Count: 1}}
		for i, d := range []int64{d1, d2, d3} {
			in = append(in, labelprinter.Bucket{Start: in[len(in)-1].Start.Add(time.Duration(d) * time.Second), Count: int64(i + 2)})
		}
		out, err := fillBuckets(in, step)
		if err != nil {
			return
		}
		if len(out) > maxChartBuckets {
			t.Fatalf("%d buckets", len(out))
		}
		next := 0
		for i, b := range out {
			if i > 0 && !b.Start.After(out[i-1].Start) {
				t.Fatalf("bucket %d at %v, after %v", i, b.Start, out[i-1].Start)
			}
			if next < len(in) && b == in[next] {
				next++
			} else if b.Count != 0 {
				t.Fatalf("added bucket %v is not zero", b)
			}
		}
		if next != len(in) {
			t.Fatalf("kept %d of %d buckets", next, len(in))
		}
	})
}
