package preview

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/draw"
	"image/png"
	"math/rand"
	"testing"

	xdraw "golang.org/x/image/draw"
)

// writePNG writes a PNG of any colour type and depth from raw rows, each row given the
// filter of its index (0 to 4, in turn), with a palette of 2^depth entries and the tRNS given.
func writePNG(w, h int, ctype, depth byte, rows [][]byte, trns []byte) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, body []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(body)))
		out.Write(n[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(body)
		out.WriteString(typ)
		out.Write(body)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		out.Write(n[:])
	}
	hdr := make([]byte, 13)
	binary.BigEndian.PutUint32(hdr, uint32(w))
	binary.BigEndian.PutUint32(hdr[4:], uint32(h))
	hdr[8], hdr[9] = depth, ctype
	chunk("IHDR", hdr)
	if ctype == 3 {
		pal := make([]byte, 3<<depth)
		for i := range pal {
			pal[i] = byte(i * 37)
		}
		chunk("PLTE", pal)
	}
	if trns != nil {
		chunk("tRNS", trns)
	}
	channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
	bpp := max(1, channels*int(depth)/8)
	var raw bytes.Buffer
	prev := make([]byte, len(rows[0]))
	for y, row := range rows {
		f := byte(y % 5)
		enc := make([]byte, len(row))
		for i := range row {
			var a, b, c int
			if i >= bpp {
				a, c = int(row[i-bpp]), int(prev[i-bpp])
			}
			b = int(prev[i])
			var pred int
			switch f {
			case 1:
				pred = a
			case 2:
				pred = b
			case 3:
				pred = (a + b) / 2
			case 4:
				pa, pb, pc := abs(b-c), abs(a-c), abs(a+b-2*c)
				switch {
				case pa <= pb && pa <= pc:
					pred = a
				case pb <= pc:
					pred = b
				default:
					pred = c
				}
			}
			enc[i] = row[i] - byte(pred)
		}
		raw.WriteByte(f)
		raw.Write(enc)
		prev = row
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	data := z.Bytes()
	chunk("IDAT", data[:len(data)/2]) // two IDAT chunks: the reader joins them
	chunk("IDAT", data[len(data)/2:])
	chunk("IEND", nil)
	return out.Bytes()
}

// TestDecodePNGScaled: the row reader draws every colour type and depth of PNG, with and
// without transparency, scaled up and down and cut by the label's edge, exactly as image/png
// and xdraw's nearest neighbour draw it.
func TestDecodePNGScaled(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	types := []struct{ ctype, depth byte }{
		{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {2, 8}, {2, 16}, {3, 1}, {3, 2}, {3, 4}, {3, 8},
		{4, 8}, {4, 16}, {6, 8}, {6, 16},
	}
	for _, ty := range types {
		for _, withTRNS := range []bool{false, true} {
			w, h := 13+rnd.Intn(20), 11+rnd.Intn(20)
			channels := map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ty.ctype]
			rowBytes := (w*channels*int(ty.depth) + 7) / 8
			rows := make([][]byte, h)
			for y := range rows {
				rows[y] = make([]byte, rowBytes)
				rnd.Read(rows[y])
				if ty.ctype == 3 && ty.depth == 8 {
					for i := range rows[y] {
						rows[y][i] %= 200 // some indexes past a short tRNS, none past the palette
					}
				}
			}
			var trns []byte
			if withTRNS {
				switch ty.ctype {
				case 0:
					trns = []byte{0, rows[0][0]} // the first sample of depth 8
					switch {
					case ty.depth == 16:
						trns = rows[0][:2]
					case ty.depth < 8:
						trns = []byte{0, 1}
					}
				case 2:
					trns = make([]byte, 6)
					if ty.depth == 8 {
						trns = []byte{0, rows[0][0], 0, rows[0][1], 0, rows[0][2]}
					} else {
						copy(trns, rows[0][:6])
					}
				case 3:
					trns = []byte{0, 128, 255, 7}
				default:
					continue // these colour types carry alpha and take no tRNS
				}
			}
			data := writePNG(w, h, ty.ctype, ty.depth, rows, trns)
			want, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("type %d depth %d: image/png: %v", ty.ctype, ty.depth, err)
			}
			for _, box := range []image.Rectangle{
				image.Rect(0, 0, w, h), image.Rect(3, 2, 3+w*3, 2+h*2), image.Rect(-5, -4, 7, 6),
				image.Rect(10, 10, 10+w/3+1, 10+h/2+1), image.Rect(-100, 5, 400, 60),
			} {
				vis := box.Intersect(image.Rect(0, 0, 50, 40))
				if vis.Empty() {
					continue
				}
				exp := image.NewRGBA(vis)
				xdraw.NearestNeighbor.Scale(exp, box, want, want.Bounds(), draw.Src, nil)
				got, err := decodePNGScaled(data, box, vis)
				if err != nil {
					t.Fatalf("type %d depth %d tRNS %v box %v: %v", ty.ctype, ty.depth, withTRNS, box, err)
				}
				if !bytes.Equal(got.Pix, exp.Pix) {
					t.Errorf("type %d depth %d tRNS %v box %v: pixels differ from image/png and xdraw", ty.ctype, ty.depth, withTRNS, box)
				}
			}
		}
	}
}
