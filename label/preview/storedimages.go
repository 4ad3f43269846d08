package preview

import (
	"bytes"
	"errors"
	"image"
	"strconv"
)

// storedBudget is how many times Options.MaxPixels the stored images one render decodes may
// total: a stored image is not in the label's bytes, so a short label naming a large one many
// times would otherwise inflate it for each name.
const storedBudget = 4

// storedImages are the stored images one render has decoded: the pictures of the PNGs, by
// name, size of box and visible part, so that an image placed again at the same size is not
// decoded again (kept up to as many pixels as the render's image has), and the pixels decoded
// in all.
type storedImages struct {
	pics      map[storedKey]*image.RGBA
	picPixels int
	pixels    int64
}

type storedKey struct {
	name string
	size image.Point     // the box's
	vis  image.Rectangle // the visible part, from the box's corner
}

// storedImage draws the image stored under name, read through the image resolver, as a
// StaticBitmap in box prints it (see decodeImage); it returns why not when it cannot: no
// resolver, the resolver's error, an image it cannot read or over the pixel cap, or the
// render's stored images past storedBudget times the pixel cap.
func (r *renderer) storedImage(name string, box, vis image.Rectangle) (image.Image, *image.RGBA, string) {
	if r.opts.Images == nil {
		return nil, nil, "bitmap is not base64 PNG, and no image resolver is given to read a stored image " + quote(name)
	}
	key := storedKey{name, box.Size(), vis.Sub(box.Min)}
	if pic, ok := r.stored.pics[key]; ok {
		// The same picture, placed where this box is.
		return nil, &image.RGBA{Pix: pic.Pix, Stride: pic.Stride, Rect: vis}, ""
	}
	data, err := r.opts.Images(r.ctx, name)
	if err != nil {
		return nil, nil, "stored image " + quote(name) + ": " + err.Error()
	}
	if len(data) == 0 {
		return nil, nil, "stored image " + quote(name) + " not given"
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && !vis.Empty() {
		n := int64(cfg.Width) * int64(cfg.Height)
		if n <= r.maxPixels() && r.stored.pixels+n > storedBudget*r.maxPixels() {
			return nil, nil, "stored image " + quote(name) + ": the stored images of this label total more than " +
				strconv.FormatInt(storedBudget*r.maxPixels(), 10) + " pixels"
		}
		if n <= r.maxPixels() {
			r.stored.pixels += n
		}
	}
	img, pic, err := r.decodeImage(data, box, vis)
	switch {
	case errors.Is(err, errOverCap):
		return nil, nil, "stored image " + quote(name) + " is larger than the pixel cap"
	case err != nil:
		return nil, nil, "stored image " + quote(name) + " is not an image the preview can read (" + err.Error() + ")"
	}
	if pic != nil {
		if n := pic.Rect.Dx() * pic.Rect.Dy(); r.stored.picPixels+n <= r.img.Rect.Dx()*r.img.Rect.Dy() {
			if r.stored.pics == nil {
				r.stored.pics = map[storedKey]*image.RGBA{}
			}
			r.stored.pics[key] = pic
			r.stored.picPixels += n
		}
	}
	return img, pic, ""
}
