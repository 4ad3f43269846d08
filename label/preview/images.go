package preview

import (
	"bytes"
	"context"
	_ "image/jpeg" // stored images may be JPEG
	_ "image/png"
	"strconv"
	"sync"

	labelprinter "github.com/labelprinter/go-labelprinter"
	_ "golang.org/x/image/tiff" // and TIFF
)

// ImageResolver gives the bytes of the image stored under a name, as stored (PNG, JPEG or
// TIFF), for a StaticBitmap whose bitmap names a stored image instead of holding a base64 PNG.
// The preview decodes them as it draws: a PNG a row at a time at most at the size it prints,
// as a base64 PNG; an interlaced PNG, a JPEG or a TIFF whole, within Options.MaxPixels. Both
// are refused past Options.MaxPixels before their pixels are allocated.
type ImageResolver func(ctx context.Context, name string) ([]byte, error)

// imageCacheBytes bounds the stored images an ImagesFrom resolver keeps: past it the oldest
// are let go and downloaded again when asked for.
const imageCacheBytes = 32 << 20

// ImagesFrom returns a resolver reading stored images from the printer with
// c.Images.Download (PNG, JPEG or TIFF). It keeps what it downloaded, encoded, up to 32 MiB:
// a name is downloaded once per resolver while it is kept, and an image larger than that
// each time it is drawn. A nil c gives nil, no resolver: a stored image is then a marked box
// and a warning.
func ImagesFrom(c *labelprinter.Client) ImageResolver {
	if c == nil {
		return nil
	}
	return cachedImages(imageCacheBytes, func(ctx context.Context, name string) ([]byte, error) {
		var buf bytes.Buffer
		if _, err := c.Images.Download(ctx, name, &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
}

// cachedImages is download keeping what it gave up to budget bytes, letting the oldest go
// first; an image larger than budget is not kept.
func cachedImages(budget int, download ImageResolver) ImageResolver {
	var (
		mu    sync.Mutex
		cache = map[string][]byte{}
		order []string // the kept names, oldest first
		size  int
	)
	return func(ctx context.Context, name string) ([]byte, error) {
		mu.Lock()
		data, ok := cache[name]
		mu.Unlock()
		if ok {
			return data, nil
		}
		data, err := download(ctx, name)
		if err != nil || len(data) > budget {
			return data, err
		}
		mu.Lock()
		defer mu.Unlock()
		if _, ok := cache[name]; !ok {
			for size+len(data) > budget {
				size -= len(cache[order[0]])
				delete(cache, order[0])
				order = order[1:]
			}
			cache[name] = data
			order = append(order, name)
			size += len(data)
		}
		return data, nil
	}
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}
