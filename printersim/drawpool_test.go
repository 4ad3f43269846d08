package printersim

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestPicturesDrawnInBoundedSlots: with the renderer drawing one picture and 20 requests asking
// for 20 other pictures at once, at most drawSlots are drawn at once, drawWaiting requests wait
// and the rest are answered 503 with Retry-After at once; every waiting request gets its
// picture once the slots free up, and every drawer was told the page's pixel budget.
func TestPicturesDrawnInBoundedSlots(t *testing.T) {
	var (
		mu        sync.Mutex
		cur, most int
		badPx     int64
	)
	started := make(chan struct{}, 64)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	draw := func(ctx context.Context, p *Picture) ([]byte, error) {
		mu.Lock()
		cur++
		most = max(most, cur)
		if p.MaxPixels != MaxPicturePixels {
			badPx = p.MaxPixels
		}
		mu.Unlock()
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		mu.Lock()
		cur--
		mu.Unlock()
		return noisyDrawer(ctx, p)
	}
	s := startSim(t, WithUI(), WithPictures(draw))
	t.Cleanup(free) // before the simulator closes, on a failure too
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":30,"objs":[]}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	const asked = 20
	for range asked + 1 {
		s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	}
	<-started // the renderer draws print 1 and holds its slot

	type answer struct {
		code       int
		retryAfter string
	}
	answers := make(chan answer, asked)
	for i := 2; i <= asked+1; i++ {
		go func() {
			resp, err := s.client.Get(s.srv.URL + "/ui/printers/line1/prints/" + strconv.Itoa(i) + ".png")
			if err != nil {
				answers <- answer{code: -1}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After")}
		}()
	}
	// One request takes the second slot, drawWaiting wait, the others are refused at once.
	busy := asked - 1 - drawWaiting
	timeout := time.After(10 * time.Second)
	for i := 0; i < busy; i++ {
		select {
		case a := <-answers:
			if a.code != http.StatusServiceUnavailable || a.retryAfter != "1" {
				t.Fatalf("while the slots are taken: %d, Retry-After %q; want 503 and 1", a.code, a.retryAfter)
			}
		case <-timeout:
			mu.Lock()
			n := most
			mu.Unlock()
			t.Fatalf("%d of %d requests refused within 10 s; %d drawn at once", i, busy, n)
		}
	}
	mu.Lock()
	if most > drawSlots {
		t.Errorf("%d pictures drawn at once, want at most %d", most, drawSlots)
	}
	mu.Unlock()
	free()
	for range asked - busy {
		if a := <-answers; a.code != http.StatusOK {
			t.Errorf("a waiting request: %d, want 200", a.code)
		}
	}
	s.srv.Sim.ui.render.close() // the renderer's queue is left for the URLs
	mu.Lock()
	defer mu.Unlock()
	if most != drawSlots {
		t.Errorf("%d pictures drawn at once, want %d", most, drawSlots)
	}
	if badPx != 0 {
		t.Errorf("a drawer was told MaxPixels %d, want %d", badPx, MaxPicturePixels)
	}
}
