package printersim

import (
	"encoding/json"
	"math"
)

// labelSize is what the page needs of a printed label before its picture loads: the
// resolution it is drawn at and the picture's size in pixels, so that each picture reserves
// its place and the page does not grow as pictures load. It is worked out once per label
// stored (keptLabels keeps it with the label's count), not at each trigger.
type labelSize struct {
	hdpi, vdpi float64
	// w and h are the picture's size in pixels as the drawing gives it (the label's mm at its
	// resolution, rounded half away from zero, turned by its rotation); 0 when the label has
	// no size that can be drawn or exceeds MaxPicturePixels.
	w, h int
}

// sizeOf reads a label's size, resolution and rotation, the rules of the page's drawing:
// width x hdpi / 25.4 by height x vdpi / 25.4 pixels, a resolution that is set alone used
// for both directions, DefaultDPI when neither is.
func sizeOf(content json.RawMessage) labelSize {
	s := labelSize{hdpi: DefaultDPI, vdpi: DefaultDPI}
	var l struct {
		Width, Height, HDPI, VDPI any
		Rotation                  any
	}
	if json.Unmarshal(content, &l) != nil {
		return s
	}
	hdpi, hok := positive(l.HDPI)
	vdpi, vok := positive(l.VDPI)
	switch {
	case hok && vok:
		s.hdpi, s.vdpi = hdpi, vdpi
	case hok:
		s.hdpi, s.vdpi = hdpi, hdpi
	case vok:
		s.hdpi, s.vdpi = vdpi, vdpi
	}
	w, wok := positive(l.Width)
	h, hok2 := positive(l.Height)
	if !wok || !hok2 || s.hdpi > 10000 || s.vdpi > 10000 {
		return s
	}
	fw, fh := math.Round(w*s.hdpi/25.4), math.Round(h*s.vdpi/25.4)
	if fw < 1 || fh < 1 || fw*fh > MaxPicturePixels {
		return s
	}
	if r, _ := l.Rotation.(string); r == "CW90" || r == "CCW90" {
		fw, fh = fh, fw
	}
	s.w, s.h = int(fw), int(fh)
	return s
}

// positive returns a JSON value that is a finite number above 0.
func positive(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok && f > 0 && !math.IsInf(f, 0)
}
