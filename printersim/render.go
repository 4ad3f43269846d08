package printersim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The renderer draws the pictures of prints after the trigger has been answered, one at a time
// off the trigger's path. Its queue is bounded: when it is full the picture is skipped (the
// print never is) and drawn when its URL is asked for. Drawn pictures are kept up to a byte
// budget for all printers together; past it the oldest are let go and drawn again when asked
// for. Every drawing, the renderer's and those asked for by URL, takes one of drawSlots; a
// request finding them all taken waits, one of at most drawWaiting, and past those is answered
// 503 with Retry-After. So the memory of drawing is bounded by drawSlots pictures of at most
// MaxPicturePixels each, whatever the labels and however many requests come.
const (
	// renderQueue is how many pictures may wait to be drawn.
	renderQueue = 64
	// pictureBudget is how many bytes of drawn pictures the page keeps, all printers together.
	pictureBudget = 32 << 20
	// drawSlots is how many pictures are drawn at once.
	drawSlots = 2
	// drawWaiting is how many picture requests may wait for a slot.
	drawWaiting = 16
	// renderPause is how many times a drawing's own time the renderer waits after it.
	renderPause = 2
	// maxDrawnLabel is the largest label, in bytes, a print keeps to be drawn: the page's
	// memory must not grow with labels of tens of megabytes.
	maxDrawnLabel = 4 << 20
)

// MaxPicturePixels is the most pixels (width x height) the page draws a picture with: 10
// megapixels, 40 MiB of RGBA, an A4 label at 300 dpi. A label drawn larger gets no picture; its
// URL says why (422). Picture.MaxPixels carries it to the drawer.
const MaxPicturePixels = 10_000_000

// errDrawBusy is a picture asked for while every drawing slot is taken and drawWaiting
// requests already wait.
var errDrawBusy = errors.New("the page is drawing as many pictures as it may and as many wait: ask again")

// errPictureGone is a picture asked for after its print left the kept list.
var errPictureGone = errors.New("print no longer kept")

// errNoPictures is a picture asked of a simulator without WithPictures.
var errNoPictures = errors.New("this simulator draws no pictures: it was started without printersim.WithPictures")

// Picture is one print to draw: the label as it was stored when it printed, and what fills its
// dynamic text as the simulator filled it (label.Expand at Time, "{{Column}}" from Row).
type Picture struct {
	// Label is the label as stored, its dynamic text not filled.
	Label json.RawMessage
	// Row is the job's table row, column name to cell; nil without a table.
	Row map[string]string
	// Time is the simulator's clock when the label printed.
	Time time.Time
	// HDPI and VDPI are the resolution the label is drawn at: its hdpi and vdpi, one set alone used
	// for both, else DefaultDPI.
	HDPI, VDPI float64
	// Image returns the bytes of an image stored on the simulator, as stored (PNG, JPEG or
	// TIFF), for a label that shows one: the drawer decodes them at the size it draws them.
	Image func(ctx context.Context, name string) ([]byte, error)
	// MaxPixels is the most pixels the picture may have (MaxPicturePixels): a drawer refuses
	// a label that would be larger rather than allocate it.
	MaxPixels int64
}

// WithPictures makes the page (WithUI) show each printed label as the picture draw makes of
// it, a PNG: after the trigger has been answered, off the trigger's path, one at a time; a
// picture the renderer's full queue skipped is drawn when its URL is asked for. Package
// printersim/pictures has the drawer the commands use (package label/preview's). ctx ends
// when the picture is no longer wanted.
func WithPictures(draw func(ctx context.Context, p *Picture) (png []byte, err error)) Option {
	return func(c *config) { c.draw = draw }
}

// picture is the drawn label of one print: drawn once by whoever asks first (the renderer or
// a request for its URL); the others wait for that drawing.
type picture struct {
	mu      sync.Mutex
	png     []byte
	err     error
	drawing chan struct{} // closed when the drawing under way ends
	dropped bool          // the renderer's queue was full
	gone    bool          // the print left the kept list
}

func (p *picture) wasDropped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// get returns the picture, drawing it with draw unless it is drawn or being drawn; drawn
// reports whether this call drew it.
func (p *picture) get(ctx context.Context, draw func() ([]byte, error)) (png []byte, drawn bool, err error) {
	p.mu.Lock()
	for {
		switch {
		case p.gone:
			p.mu.Unlock()
			return nil, false, errPictureGone
		case p.png != nil || p.err != nil:
			png, err = p.png, p.err
			p.mu.Unlock()
			return png, false, err
		case p.drawing != nil:
			ch := p.drawing
			p.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
			p.mu.Lock()
			continue
		}
		ch := make(chan struct{})
		p.drawing = ch
		p.mu.Unlock()
		png, err = draw()
		p.mu.Lock()
		p.drawing = nil
		close(ch)
		// A drawing cut short because its asker went away, or that found no slot, is no
		// answer: the next asker draws.
		if p.gone || err != nil && (ctx.Err() != nil || errors.Is(err, errDrawBusy)) {
			p.mu.Unlock()
			return png, true, err
		}
		p.png, p.err = png, err
		p.mu.Unlock()
		return png, true, err
	}
}

// release lets a drawn picture go; it is drawn again when asked for.
func (p *picture) release() {
	p.mu.Lock()
	p.png = nil
	p.mu.Unlock()
}

// forget marks the picture of a print that left the kept list.
func (p *picture) forget() {
	p.mu.Lock()
	p.gone, p.png, p.err = true, nil, nil
	p.mu.Unlock()
}

// renderer draws pictures in its own goroutine, started when there is work and ended when the
// queue is empty, so an idle simulator runs no goroutine.
type renderer struct {
	draw  func(context.Context, *Picture) ([]byte, error) // nil: no pictures
	image func(context.Context, string) ([]byte, error)
	queue chan *printRecord

	stop    chan struct{} // closed by close
	mu      sync.Mutex
	running bool
	closed  bool
	wg      sync.WaitGroup
	kept    []*printRecord // drawn pictures counted in the budget, oldest first
	bytes   int            // their total size

	slots   chan struct{} // one element per drawing under way
	waiting atomic.Int32  // requests waiting for a slot
}

func newRenderer(draw func(context.Context, *Picture) ([]byte, error), images func(context.Context, string) ([]byte, error)) *renderer {
	return &renderer{draw: draw, image: images, stop: make(chan struct{}), queue: make(chan *printRecord, renderQueue), slots: make(chan struct{}, drawSlots)}
}

// enqueue asks for r's picture to be drawn; when the queue is full the picture is marked
// dropped and left for its URL. It never blocks.
func (rd *renderer) enqueue(r *printRecord) {
	if rd.draw == nil {
		return
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.closed {
		return
	}
	select {
	case rd.queue <- r:
		if !rd.running {
			rd.running = true
			rd.wg.Add(1)
			go rd.work()
		}
	default:
		r.pic.mu.Lock()
		r.pic.dropped = true
		r.pic.mu.Unlock()
	}
}

func (rd *renderer) work() {
	defer rd.wg.Done()
	for {
		select {
		case r := <-rd.queue:
			rd.mu.Lock()
			closed := rd.closed
			rd.mu.Unlock()
			if closed {
				continue
			}
			t0 := time.Now()
			_, _ = rd.draws(context.Background(), r, false)
			// Pace the drawing so that it takes at most a third of a core from the API;
			// a picture asked for meanwhile is drawn by its request.
			pause := time.NewTimer(renderPause * time.Since(t0))
			select {
			case <-pause.C:
			case <-rd.stop:
				pause.Stop()
			}
		default:
			rd.mu.Lock()
			if len(rd.queue) > 0 {
				rd.mu.Unlock()
				continue
			}
			rd.running = false
			rd.mu.Unlock()
			return
		}
	}
}

// picture returns r's picture for a request, drawing it now unless it is drawn or being drawn;
// errDrawBusy when it would have to wait behind drawWaiting others.
func (rd *renderer) picture(ctx context.Context, r *printRecord) ([]byte, error) {
	return rd.draws(ctx, r, true)
}

// acquire takes a drawing slot, waiting for one; a request (not the renderer) waits only if
// fewer than drawWaiting others do. The renderer gives up when the renderer is closed.
func (rd *renderer) acquire(ctx context.Context, request bool) error {
	select {
	case rd.slots <- struct{}{}:
		return nil
	default:
	}
	if request {
		if rd.waiting.Add(1) > drawWaiting {
			rd.waiting.Add(-1)
			return errDrawBusy
		}
		defer rd.waiting.Add(-1)
	}
	select {
	case rd.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-rd.stop:
		return errDrawBusy
	}
}

// draws returns r's picture, drawing it in a slot unless it is drawn or being drawn.
func (rd *renderer) draws(ctx context.Context, r *printRecord, request bool) ([]byte, error) {
	if rd.draw == nil {
		return nil, errNoPictures
	}
	if r.tooLarge > 0 {
		return nil, fmt.Errorf("the label of %d bytes is over the %d bytes the page keeps to draw", r.tooLarge, maxDrawnLabel)
	}
	png, drawn, err := r.pic.get(ctx, func() ([]byte, error) {
		if content, _ := r.drawn(); content == nil {
			return nil, errLabelShed
		}
		if err := rd.acquire(ctx, request); err != nil {
			return nil, err
		}
		defer func() { <-rd.slots }()
		content, row := r.drawn()
		if content == nil {
			return nil, errLabelShed
		}
		return rd.draw(ctx, &Picture{Label: content, Row: row, Time: r.time, HDPI: r.hdpi, VDPI: r.vdpi, Image: rd.image, MaxPixels: MaxPicturePixels})
	})
	if drawn && err == nil {
		rd.keep(r, len(png))
	}
	return png, err
}

// keep counts a newly drawn picture against the budget, letting the oldest go past it, and
// the pictures of prints that left the kept list.
func (rd *renderer) keep(r *printRecord, size int) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	r.counted = size
	rd.kept = append(rd.kept, r)
	rd.bytes += size
	for len(rd.kept) > 0 && (rd.bytes > pictureBudget || rd.kept[0].pic.isGone()) {
		old := rd.kept[0]
		old.pic.release()
		rd.bytes -= old.counted
		old.counted = 0
		rd.kept[0] = nil
		rd.kept = rd.kept[1:]
	}
}

func (p *picture) isGone() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

// keptBytes returns the bytes of pictures the page keeps.
func (rd *renderer) keptBytes() int {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.bytes
}

// close stops drawing (what is queued is left for its URL) and waits for the goroutine.
func (rd *renderer) close() {
	rd.mu.Lock()
	if !rd.closed {
		rd.closed = true
		close(rd.stop)
	}
	rd.mu.Unlock()
	rd.wg.Wait()
}
