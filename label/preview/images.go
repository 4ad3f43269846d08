package preview

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // stored images may be JPEG
	_ "image/png"
	"strconv"
	"sync"

	labelprinter "github.com/labelprinter/go-labelprinter"
	_ "golang.org/x/image/tiff" // and TIFF
)

// ImageResolver gives the image stored under a name, for a StaticBitmap whose bitmap names a
// stored image instead of holding a base64 PNG.
type ImageResolver func(ctx context.Context, name string) (image.Image, error)

// ImagesFrom returns a resolver reading stored images from the printer with
// c.Images.Download (PNG, JPEG or TIFF). Each name is downloaded once per resolver. A nil c
// gives nil, no resolver: a stored image is then a marked box and a warning.
func ImagesFrom(c *labelprinter.Client) ImageResolver {
	if c == nil {
		return nil
	}
	var mu sync.Mutex
	cache := map[string]image.Image{}
	return func(ctx context.Context, name string) (image.Image, error) {
		mu.Lock()
		img, ok := cache[name]
		mu.Unlock()
		if ok {
			return img, nil
		}
		var buf bytes.Buffer
		if _, err := c.Images.Download(ctx, name, &buf); err != nil {
			return nil, err
		}
		// The size first, so that a huge image is refused before it is decoded.
		cfg, _, err := image.DecodeConfig(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", strconv.Quote(name), err)
		}
		if int64(cfg.Width)*int64(cfg.Height) > DefaultMaxPixels {
			return nil, fmt.Errorf("image %s: %d x %d pixels, over %d", strconv.Quote(name), cfg.Width, cfg.Height, DefaultMaxPixels)
		}
		img, _, err = image.Decode(&buf)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", strconv.Quote(name), err)
		}
		mu.Lock()
		cache[name] = img
		mu.Unlock()
		return img, nil
	}
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}
