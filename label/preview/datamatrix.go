package preview

import (
	"fmt"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/internal/dmcap"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/datamatrix/encoder"
)

// A Data Matrix is built here from gozxing's exported pieces (symbol table, error correction,
// module placement) because no library writes both FNC1 (GS1) and a chosen size: gozxing's
// writer chooses sizes but has no FNC1, boombuler's has FNC1 but no size or rectangle. Plain
// data goes through gozxing's high-level encoder; GS1 data is encoded here in ASCII mode with
// FNC1 (codeword 232) first and in place of each GS.

const dmFNC1 = 232

// dmGS1Codewords encodes a GS1 element string (GS ends a variable-length value) in ASCII
// mode: FNC1, digit pairs as one codeword, GS as FNC1.
func dmGS1Codewords(s string) ([]byte, error) {
	if err := gs1ASCII(s); err != nil {
		return nil, err
	}
	out := []byte{dmFNC1}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			out = append(out, byte((c-'0')*10+(s[i+1]-'0')+130))
			i += 2
			continue
		case c == gs:
			out = append(out, dmFNC1)
		default:
			out = append(out, c+1)
		}
		i++
	}
	return out, nil
}

// dmPad fills codewords up to capacity: 129, then 129 scrambled by position (ISO/IEC 16022
// 5.2.3, the 253-state algorithm).
func dmPad(cw []byte, capacity int) []byte {
	if len(cw) < capacity {
		cw = append(cw, 129)
	}
	for len(cw) < capacity {
		pos := len(cw) + 1
		v := 129 + (149*pos)%253 + 1
		if v > 254 {
			v -= 254
		}
		cw = append(cw, byte(v))
	}
	return cw
}

func (r *renderer) dataMatrix(path, text string, gs1 bool, size *label.Size, rect bool) (m *matrix, err error) {
	defer func() {
		if p := recover(); p != nil { // a library's bug must not end the render
			m, err = nil, fmt.Errorf("encoder failed: %v", p)
		}
	}()
	if text == "" {
		return nil, fmt.Errorf("no data")
	}
	shape := encoder.SymbolShapeHint_FORCE_SQUARE
	if rect {
		shape = encoder.SymbolShapeHint_FORCE_RECTANGLE
	}
	var dim *gozxing.Dimension
	if size != nil && size.Width != nil && size.Height != nil {
		d, e := gozxing.NewDimension(*size.Width, *size.Height)
		if e == nil {
			dim = d
			shape = encoder.SymbolShapeHint_FORCE_NONE
		}
	}
	if !gs1 && dmcap.MinCodewords(text) > dmcap.MaxCodewords {
		return nil, fmt.Errorf("%d bytes of data do not fit any Data Matrix", len(text))
	}
	var cw []byte
	if gs1 {
		cw, err = dmGS1Codewords(text)
	} else {
		cw, err = encoder.EncodeHighLevel(text, shape, dim, dim)
		if dim != nil && (err != nil || len(cw) < dmcap.MinCodewords(text)) {
			// The size asked for cannot hold the data (the encoder says so or gives short
			// codewords of other data): warned and drawn the smallest that fits below.
			cw, err = nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if !gs1 && cw != nil && len(cw) < dmcap.MinCodewords(text) {
		return nil, fmt.Errorf("%d bytes of data do not fit any Data Matrix", len(text))
	}
	var info *encoder.SymbolInfo
	if cw != nil {
		info, _ = encoder.SymbolInfo_Lookup(len(cw), shape, dim, dim, false)
	}
	if info == nil && dim != nil {
		r.warn(path+".size", "size %d x %d is not a Data Matrix size that holds the data; drawn the smallest that fits", *size.Width, *size.Height)
		dim = nil
		if rect {
			shape = encoder.SymbolShapeHint_FORCE_RECTANGLE
		} else {
			shape = encoder.SymbolShapeHint_FORCE_SQUARE
		}
		if !gs1 {
			if cw, err = encoder.EncodeHighLevel(text, shape, nil, nil); err != nil {
				return nil, err
			}
			if len(cw) < dmcap.MinCodewords(text) {
				return nil, fmt.Errorf("%d bytes of data do not fit any Data Matrix", len(text))
			}
		}
		info, _ = encoder.SymbolInfo_Lookup(len(cw), shape, nil, nil, false)
	}
	if info == nil && rect {
		r.warn(path+".rectangular", "the data does not fit a rectangular symbol; drawn square")
		info, _ = encoder.SymbolInfo_Lookup(len(cw), encoder.SymbolShapeHint_FORCE_SQUARE, nil, nil, false)
	}
	if info == nil {
		return nil, fmt.Errorf("%d codewords do not fit any Data Matrix", len(cw))
	}
	cw = dmPad(cw, info.GetDataCapacity())
	all, err := encoder.ErrorCorrection_EncodeECC200(cw, info)
	if err != nil {
		return nil, err
	}
	pl := encoder.NewDefaultPlacement(all, info.GetSymbolDataWidth(), info.GetSymbolDataHeight())
	pl.Place()
	return dmLayout(pl, info), nil
}

// dmLayout adds the finder (solid left and bottom edges) and the clock track (alternating top
// and right edges) around each data region, as gozxing's writer does.
func dmLayout(pl *encoder.DefaultPlacement, info *encoder.SymbolInfo) *matrix {
	m := &matrix{w: info.GetSymbolWidth(), h: info.GetSymbolHeight(), quiet: 1}
	m.dark = make([]bool, m.w*m.h)
	set := func(x, y int, v bool) {
		if x < m.w && y < m.h {
			m.dark[y*m.w+x] = v
		}
	}
	mw, mh := info.GetMatrixWidth(), info.GetMatrixHeight()
	my := 0
	for y := 0; y < info.GetSymbolDataHeight(); y++ {
		if y%mh == 0 {
			for x := 0; x < m.w; x++ {
				set(x, my, x%2 == 0)
			}
			my++
		}
		mx := 0
		for x := 0; x < info.GetSymbolDataWidth(); x++ {
			if x%mw == 0 {
				set(mx, my, true)
				mx++
			}
			set(mx, my, pl.GetBit(x, y))
			mx++
			if x%mw == mw-1 {
				set(mx, my, y%2 == 0)
				mx++
			}
		}
		my++
		if y%mh == mh-1 {
			for x := 0; x < m.w; x++ {
				set(x, my, true)
			}
			my++
		}
	}
	return m
}
