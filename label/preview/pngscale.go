package preview

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
)

// errInterlaced is a PNG that decodePNGScaled does not read row by row (Adam7 interlacing):
// the caller decodes it whole.
var errInterlaced = errors.New("interlaced")

// decodePNGScaled draws a PNG as a StaticBitmap prints it, without decoding it whole: the
// picture of its visible part vis, the PNG scaled to box by nearest neighbour exactly as
// xdraw.NearestNeighbor.Scale would scale the decoded image, in premultiplied RGBA. The PNG is
// read a row at a time, so it takes two rows of the PNG and the picture of vis, however many
// pixels the PNG has: a PNG is decoded at most at the size it prints. It returns errInterlaced
// for an interlaced PNG.
func decodePNGScaled(data []byte, box, vis image.Rectangle) (*image.RGBA, error) {
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		return nil, errors.New("not a PNG")
	}
	p := data[8:]
	var (
		w, h              int
		depth, ctype      byte
		haveHeader        bool
		palette           []color.Color
		trns              []byte
		idat              []io.Reader
		interlaced        bool
		channels, bitsPer int
	)
	for len(p) >= 12 {
		n := binary.BigEndian.Uint32(p)
		typ := string(p[4:8])
		if uint64(n) > uint64(len(p)-12) {
			return nil, fmt.Errorf("chunk %q is cut short", typ)
		}
		body := p[8 : 8+n]
		p = p[12+n:]
		switch typ {
		case "IHDR":
			if n != 13 {
				return nil, errors.New("bad IHDR")
			}
			w, h = int(binary.BigEndian.Uint32(body)), int(binary.BigEndian.Uint32(body[4:]))
			depth, ctype, interlaced = body[8], body[9], body[12] == 1
			haveHeader = true
		case "PLTE":
			for i := 0; i+2 < len(body); i += 3 {
				palette = append(palette, color.RGBA{body[i], body[i+1], body[i+2], 0xff})
			}
		case "tRNS":
			trns = body
		case "IDAT":
			idat = append(idat, bytes.NewReader(body))
		case "IEND":
			p = nil
		}
	}
	if !haveHeader || w <= 0 || h <= 0 {
		return nil, errors.New("no image header")
	}
	if interlaced {
		return nil, errInterlaced
	}
	switch {
	case ctype == 0 && (depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16):
		channels = 1
	case ctype == 2 && (depth == 8 || depth == 16):
		channels = 3
	case ctype == 3 && (depth == 1 || depth == 2 || depth == 4 || depth == 8):
		channels = 1
	case ctype == 4 && (depth == 8 || depth == 16):
		channels = 2
	case ctype == 6 && (depth == 8 || depth == 16):
		channels = 4
	default:
		return nil, fmt.Errorf("colour type %d at depth %d is not a PNG's", ctype, depth)
	}
	if ctype == 3 {
		for i := 0; i < len(trns) && i < len(palette); i++ {
			c := palette[i].(color.RGBA)
			palette[i] = color.NRGBA{c.R, c.G, c.B, trns[i]}
		}
	}
	bitsPer = channels * int(depth)
	rowBytes := (w*bitsPer + 7) / 8
	bpp := max(1, bitsPer/8) // the distance of the filters' left neighbour

	// The source column and row of each pixel of vis: xdraw's nearest neighbour.
	sxs := make([]int, vis.Dx())
	for i := range sxs {
		dx := uint64(vis.Min.X + i - box.Min.X)
		sxs[i] = int((2*dx + 1) * uint64(w) / (2 * uint64(box.Dx())))
	}
	syOf := func(y int) int {
		return int((2*uint64(y-box.Min.Y) + 1) * uint64(h) / (2 * uint64(box.Dy())))
	}

	zr, err := zlib.NewReader(io.MultiReader(idat...))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := image.NewRGBA(vis)
	cur, prev := make([]byte, 1+rowBytes), make([]byte, 1+rowBytes)
	dy := vis.Min.Y
	for sy := 0; sy < h && dy < vis.Max.Y; sy++ {
		if _, err := io.ReadFull(zr, cur); err != nil {
			return nil, fmt.Errorf("row %d: %w", sy, err)
		}
		if err := unfilter(cur, prev, bpp); err != nil {
			return nil, fmt.Errorf("row %d: %w", sy, err)
		}
		row := cur[1:]
		first := true
		for dy < vis.Max.Y && syOf(dy) == sy {
			o := out.PixOffset(vis.Min.X, dy)
			if first {
				for i, sx := range sxs {
					r, g, b, a := pngPixel(row, sx, ctype, depth, palette, trns)
					out.Pix[o+4*i], out.Pix[o+4*i+1], out.Pix[o+4*i+2], out.Pix[o+4*i+3] = uint8(r>>8), uint8(g>>8), uint8(b>>8), uint8(a>>8)
				}
				first = false
			} else {
				copy(out.Pix[o:o+4*len(sxs)], out.Pix[o-out.Stride:])
			}
			dy++
		}
		cur, prev = prev, cur
	}
	if dy < vis.Max.Y {
		return nil, errors.New("fewer rows than its header says")
	}
	return out, nil
}

// unfilter undoes a row's PNG filter (its first byte) in place, against the row above.
func unfilter(cur, prev []byte, bpp int) error {
	c, p := cur[1:], prev[1:]
	switch cur[0] {
	case 0:
	case 1:
		for i := bpp; i < len(c); i++ {
			c[i] += c[i-bpp]
		}
	case 2:
		for i := range c {
			c[i] += p[i]
		}
	case 3:
		for i := range c {
			left := 0
			if i >= bpp {
				left = int(c[i-bpp])
			}
			c[i] += byte((left + int(p[i])) / 2)
		}
	case 4:
		for i := range c {
			var a, cc int
			if i >= bpp {
				a, cc = int(c[i-bpp]), int(p[i-bpp])
			}
			b := int(p[i])
			pa, pb, pc := abs(b-cc), abs(a-cc), abs(a+b-2*cc)
			switch {
			case pa <= pb && pa <= pc:
				c[i] += byte(a)
			case pb <= pc:
				c[i] += byte(b)
			default:
				c[i] += byte(cc)
			}
		}
	default:
		return fmt.Errorf("filter %d is not a PNG's", cur[0])
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// pngPixel is the colour of pixel x of an unfiltered row, as image/png decodes it, in
// premultiplied 16-bit RGBA (color.Color's RGBA), taken of each concrete colour so that no
// pixel is boxed in an interface.
func pngPixel(row []byte, x int, ctype, depth byte, palette []color.Color, trns []byte) (r, g, b, a uint32) {
	u16 := func(i int) uint16 { return uint16(row[i])<<8 | uint16(row[i+1]) }
	switch ctype {
	case 0:
		if depth == 16 {
			v := u16(2 * x)
			if len(trns) >= 2 && v == uint16(trns[0])<<8|uint16(trns[1]) {
				return color.NRGBA64{v, v, v, 0}.RGBA()
			}
			if len(trns) >= 2 {
				return color.NRGBA64{v, v, v, 0xffff}.RGBA()
			}
			return color.Gray16{v}.RGBA()
		}
		v := sub(row, x, depth)
		g := v * (255 / (1<<depth - 1))
		if len(trns) >= 2 {
			a := uint8(0xff)
			if uint16(v) == uint16(trns[0])<<8|uint16(trns[1]) {
				a = 0
			}
			return color.NRGBA{g, g, g, a}.RGBA()
		}
		return color.Gray{g}.RGBA()
	case 2:
		if depth == 16 {
			r, g, b := u16(6*x), u16(6*x+2), u16(6*x+4)
			if len(trns) >= 6 {
				a := uint16(0xffff)
				if r == uint16(trns[0])<<8|uint16(trns[1]) && g == uint16(trns[2])<<8|uint16(trns[3]) && b == uint16(trns[4])<<8|uint16(trns[5]) {
					a = 0
				}
				return color.NRGBA64{r, g, b, a}.RGBA()
			}
			return color.RGBA64{r, g, b, 0xffff}.RGBA()
		}
		r, g, b := row[3*x], row[3*x+1], row[3*x+2]
		if len(trns) >= 6 {
			a := uint8(0xff)
			if r == trns[1] && g == trns[3] && b == trns[5] {
				a = 0
			}
			return color.NRGBA{r, g, b, a}.RGBA()
		}
		return color.RGBA{r, g, b, 0xff}.RGBA()
	case 3:
		i := int(sub(row, x, depth))
		if i < len(palette) {
			return palette[i].RGBA()
		}
		return color.RGBA{0, 0, 0, 0xff}.RGBA() // image/png refuses an index past the palette; drawn black
	case 4:
		if depth == 16 {
			v := u16(4 * x)
			return color.NRGBA64{v, v, v, u16(4*x + 2)}.RGBA()
		}
		v := row[2*x]
		return color.NRGBA{v, v, v, row[2*x+1]}.RGBA()
	default: // 6
		if depth == 16 {
			return color.NRGBA64{u16(8 * x), u16(8*x + 2), u16(8*x + 4), u16(8*x + 6)}.RGBA()
		}
		return color.NRGBA{row[4*x], row[4*x+1], row[4*x+2], row[4*x+3]}.RGBA()
	}
}

// sub is sample x of a row of depth-bit samples (depth 1, 2, 4 or 8).
func sub(row []byte, x int, depth byte) uint8 {
	if depth == 8 {
		return row[x]
	}
	per := 8 / int(depth)
	b := row[x/per]
	shift := 8 - int(depth)*(x%per+1)
	return b >> shift & (1<<depth - 1)
}
