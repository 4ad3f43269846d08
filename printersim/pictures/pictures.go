// Package pictures draws the labels a printersim simulator prints, for its page: package
// label/preview's picture of each label, its dynamic text filled as the simulator filled it.
// It is apart from printersim so that the simulator itself needs neither the SDK nor the
// renderer; the commands (cmd/printersim, labelctl sim) serve it with:
//
//	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw))
package pictures

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"time"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// Draw returns the PNG of a printed label: the label read by label.Parse, its dynamic text
// filled by label.Expand at the moment it printed and from its table row, drawn by
// label/preview at the label's hdpi and vdpi (else 300 dpi), so its size in pixels is its size
// in millimetres at that resolution; a label of more than p.MaxPixels pixels (when above 0) is
// refused before anything is allocated. Stored images it shows come from the simulator. The
// error says why there is no picture (a label that cannot be read, no size, too many pixels);
// what the preview draws only approximately is drawn, as preview does.
func Draw(ctx context.Context, p *printersim.Picture) ([]byte, error) {
	l, err := label.Parse(p.Label)
	if err != nil {
		return nil, err
	}
	t := p.Time
	opts := &preview.Options{Env: &label.Env{Clock: func() time.Time { return t }, Row: p.Row}, MaxPixels: p.MaxPixels}
	if p.Image != nil {
		opts.Images = preview.ImageResolver(p.Image)
	}
	img, _, err := preview.RenderContext(ctx, l, opts)
	if errors.Is(err, preview.ErrTooLarge) && p.MaxPixels > 0 {
		return nil, fmt.Errorf("%w; the page draws a picture of at most %d pixels", err, p.MaxPixels)
	}
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding the picture: %w", err)
	}
	return buf.Bytes(), nil
}
