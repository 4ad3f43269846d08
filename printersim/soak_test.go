package printersim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// noisyDrawer draws every picture as 200 x 200 pixels of noise, a PNG of about 160 KiB that
// does not compress, so the picture budget is reached within a few dozen prints.
func noisyDrawer(ctx context.Context, p *Picture) ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 200, 200))
	r := rand.New(rand.NewPCG(uint64(p.Time.UnixNano()), 1))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var buf bytes.Buffer
	err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img)
	return buf.Bytes(), err
}

// TestUISoak: 10,000 prints at full speed from four clients keep the page's memory per printer
// within its bounds (200 prints, the picture budget, the replay ring), and a client reading the
// events through all of it, reconnecting with Last-Event-ID whenever it is let go as a browser
// does, sees every event in order or is told to reload.
func TestUISoak(t *testing.T) {
	n := 10000
	if testing.Short() || raceDetector {
		n = 2000
	}
	s := startSim(t, WithUI(), WithPictures(noisyDrawer))
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":30,"objs":[]}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	// The reader: an EventSource in Go, opening where a list read before any print left off.
	first := uiList(t, s, "line1").LastEvent
	type seen struct{ events, reloads, reconnects int }
	var got seen
	readerDone := make(chan error, 1)
	subscribed, connected := make(chan struct{}), sync.Once{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		last := first
		for {
			// The first time from the list, then from the last event seen, as a browser's
			// EventSource reconnects.
			req, _ := http.NewRequestWithContext(ctx, "GET", s.srv.URL+"/ui/events?after="+strconv.FormatUint(first, 10), nil)
			if got.reconnects > 0 {
				req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
			}
			resp, err := s.client.Do(req)
			if err != nil {
				readerDone <- err
				return
			}
			connected.Do(func() { close(subscribed) })
			rd := bufio.NewReader(resp.Body)
			var id uint64
			var name string
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					break
				}
				line = strings.TrimSuffix(line, "\n")
				switch {
				case strings.HasPrefix(line, "id: "):
					id, _ = strconv.ParseUint(line[4:], 10, 64)
				case strings.HasPrefix(line, "event: "):
					name = line[7:]
				case line == "" && name == "reload":
					got.reloads++
					last, id, name = id, 0, ""
				case line == "" && name == "print":
					if id != last+1 {
						resp.Body.Close()
						readerDone <- fmt.Errorf("event %d after %d with no reload", id, last)
						return
					}
					got.events++
					last, id, name = id, 0, ""
					if last == first+uint64(n) {
						resp.Body.Close()
						readerDone <- nil
						return
					}
				case line == "":
					id, name = 0, ""
				}
			}
			resp.Body.Close()
			if ctx.Err() != nil {
				readerDone <- ctx.Err()
				return
			}
			got.reconnects++
		}
	}()

	<-subscribed
	start := time.Now()
	var wg sync.WaitGroup
	per := n / 4
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				req, _ := http.NewRequest("POST", s.srv.URL+"/api/v3/printers/line1/trigger", nil)
				resp, err := s.client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("trigger: %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	select {
	case err := <-readerDone:
		if err != nil {
			t.Fatalf("the event reader: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the event reader did not reach the last event")
	}

	// A browser opening the page now asks for the 200 kept pictures: 32 MiB of them, twice
	// the budget.
	for i := n - KeptPrints + 1; i <= n; i++ {
		code, _ := s.do("GET", "/ui/printers/line1/prints/"+strconv.Itoa(i)+".png", "", nil)
		if code != 200 {
			t.Fatalf("picture %d: %d", i, code)
		}
	}
	sim := s.srv.Sim
	sim.mu.Lock()
	p := sim.printers["line1"]
	kept, gone, ring := len(p.prints), p.gone, len(sim.ui.ring)
	sim.mu.Unlock()
	pictures := sim.ui.render.keptBytes()
	dropped := uiList(t, s, "line1").Dropped
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d prints in %v (%.0f/s); %d kept, %d gone; %d picture bytes kept, %d pictures dropped by the queue; ring %d; heap %+.1f MiB; the reader saw %d events, %d reloads, %d reconnections",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), kept, gone, pictures, dropped, ring, float64(growth)/(1<<20), got.events, got.reloads, got.reconnects)
	if kept != KeptPrints || gone != int64(n-KeptPrints) {
		t.Errorf("kept %d, gone %d", kept, gone)
	}
	if pictures > pictureBudget || pictures < pictureBudget/2 {
		t.Errorf("%d bytes of pictures kept, for a budget of %d", pictures, pictureBudget)
	}
	if ring > KeptPrints {
		t.Errorf("replay ring of %d events", ring)
	}
	// The bound: the picture budget, one picture being drawn, a full queue's records and the
	// kept prints' records, with room for the runtime's own slack.
	if bound := int64(pictureBudget + 32<<20); growth > bound {
		t.Errorf("the heap grew by %d bytes over %d prints, more than %d", growth, n, bound)
	}
	if got.events+got.reloads == 0 {
		t.Error("the reader saw nothing")
	}
}
