package pictures_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

// pageHeapBound is the figure cmd/printersim's README states for the page's memory: the
// pictures kept (32 MiB), the labels kept to draw them (32 MiB), two drawings of at most
// printersim.MaxPicturePixels (40 MiB of RGBA each, and what the preview and PNG encoder use
// beside it) and the collector's garbage; 157.5 MiB was measured, 2,530 MiB before the bounds.
const pageHeapBound = 256 << 20

// maximalLabel is a label of w x w mm at 300 dpi with a frame and a line of text.
func maximalLabel(mm int) string {
	return fmt.Sprintf(`{"format":3,"width":%d,"height":%d,"objs":[
	{"type":"Rect","x":1,"y":1,"width":%d,"height":%d,"color":"black","lineWidth":2},
	{"type":"Text","x":10,"y":10,"text":"{{SKU}} {YEAR}","font":{"family":"Go","style":"Regular","height":20},"color":"black"}]}`, mm, mm, mm-2, mm-2)
}

// TestPageMemoryBounded: 4 printers print 200 labels each, two at the preview's 64-megapixel cap
// (677 x 677 mm at 300 dpi) and two just under the page's 10 megapixels (267 x 267 mm), and 16
// requests ask for their pictures at once while the renderer draws: the process's heap, sampled
// throughout, stays under pageHeapBound above where it started. The labels at the cap are
// refused by the page's pixel budget with 422; the others are drawn, two at a time.
func TestPageMemoryBounded(t *testing.T) {
	if raceDetector {
		// The drawing slots' concurrency is run under the race detector by printersim's
		// TestPicturesDrawnInBoundedSlots; the figure is the plain build's.
		t.Skip("the heap is measured without the race detector, under which drawing 10-megapixel pictures takes a minute: go test -run TestPageMemoryBounded ./printersim/pictures")
	}
	printers := []string{"line1", "line2", "line3", "line4"}
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithPrinters(printers...))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer func() { client.CloseIdleConnections(); srv.Close() }()
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, string(b)
	}
	must := func(method, path, body string, want int) {
		t.Helper()
		if code, b := do(method, path, body); code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
	}
	must("PUT", "/api/v3/tables/T", `{"columns":["SKU"],"rows":[["S12-342C"]]}`, 204)
	must("PUT", "/api/v3/labels/AtCap", maximalLabel(677), 204)
	must("PUT", "/api/v3/labels/UnderBudget", maximalLabel(267), 204)
	for i, p := range printers {
		name := "AtCap"
		if i%2 == 1 {
			name = "UnderBudget"
		}
		must("POST", "/api/v3/printers/"+p+"/printJob", `{"labelName":"`+name+`","tableName":"T","keyColumn":"SKU","key":"S12-342C"}`, 200)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	for range printersim.KeptPrints {
		for _, p := range printers {
			must("POST", "/api/v3/printers/"+p+"/trigger", "", 200)
		}
	}
	// 16 requests at once, 4 for each printer's newest prints: with the renderer, more than
	// the drawing slots and waiting places, so some may be told to come back (503).
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, p := range printers {
		for k := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/ui/printers/%s/prints/%d.png", srv.URL, p, printersim.KeptPrints-k), nil)
				code := -1
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(stop)
	<-sampled
	growth := int64(peak) - int64(base)
	t.Logf("4 printers x %d prints, 16 pictures asked for at once: answers %v; heap peak %+.1f MiB (bound %d MiB)", printersim.KeptPrints, codes, float64(growth)/(1<<20), pageHeapBound>>20)
	if growth > pageHeapBound {
		t.Errorf("the heap peaked %.1f MiB above where it started, over the stated %d MiB", float64(growth)/(1<<20), pageHeapBound>>20)
	}
	if codes[200] == 0 || codes[422] == 0 || codes[-1] != 0 {
		t.Errorf("answers %v: want pictures (200) of the labels under the budget and 422 for those at the cap", codes)
	}
}
