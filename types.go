package labelprinter

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
)

// ImageState is the processing state of an image on the printer. Values the SDK does not know
// are kept as they came.
type ImageState string

// The image states of the contract.
const (
	ImageStateProcessing ImageState = "PROCESSING"
	ImageStateReady      ImageState = "READY"
	ImageStateError      ImageState = "ERROR"
)

// Alpha says how an image stores its alpha channel.
type Alpha string

// The alpha modes of the contract.
const (
	AlphaNone          Alpha = "NONE"
	AlphaStraight      Alpha = "STRAIGHT"
	AlphaPremultiplied Alpha = "PREMULTIPLIED"
)

// ColorSpace is an image's color space; "" when the printer does not report one.
type ColorSpace string

// The color spaces of the contract.
const (
	ColorSpaceGray ColorSpace = "GRAY"
	ColorSpaceRGB  ColorSpace = "RGB"
	ColorSpaceCMYK ColorSpace = "CMYK"
)

// Intent is an image's render intent. The maker documents the six constants below; any other
// string is sent and received unchanged.
type Intent string

// The render intents on the maker's image page.
const (
	IntentRaw                  Intent = "RAW"
	IntentSpotColor            Intent = "SPOT_COLOR"
	IntentPerceptual           Intent = "PERCEPTUAL"
	IntentRelativeColorimetric Intent = "RELATIVE_COLORIMETRIC"
	IntentSaturation           Intent = "SATURATION"
	IntentAbsoluteColorimetric Intent = "ABSOLUTE_COLORIMETRIC"
)

// ImageInfo is what the printer reports about a stored image (GET /api/v3/images/{name}/info).
type ImageInfo struct {
	// FileSize is the size of the image file, in bytes.
	FileSize int64 `json:"fileSize"`
	// Width and Height are the image's size in pixels.
	Width  int64 `json:"width"`
	Height int64 `json:"height"`
	// WidthMM and HeightMM are the image's printed size in millimetres.
	WidthMM  float64 `json:"width_mm"`
	HeightMM float64 `json:"height_mm"`
	// Format is the image's pixel layout.
	Format ImageFormat `json:"format"`
	// Intent is the render intent the image was stored with.
	Intent Intent `json:"intent,omitempty"`
	// State is PROCESSING until the printer has processed the image, then READY or ERROR.
	State ImageState `json:"state"`
	// UID is the printer's unique ID of the image.
	UID string `json:"uid"`
}

// UnmarshalJSON accepts every JSON form of the documented numbers (3, 3.0, 3e0).
func (i *ImageInfo) UnmarshalJSON(b []byte) error {
	var w struct {
		FileSize wireInt     `json:"fileSize"`
		Width    wireInt     `json:"width"`
		Height   wireInt     `json:"height"`
		WidthMM  float64     `json:"width_mm"`
		HeightMM float64     `json:"height_mm"`
		Format   ImageFormat `json:"format"`
		Intent   Intent      `json:"intent"`
		State    ImageState  `json:"state"`
		UID      string      `json:"uid"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*i = ImageInfo{
		FileSize: int64(w.FileSize), Width: int64(w.Width), Height: int64(w.Height),
		WidthMM: w.WidthMM, HeightMM: w.HeightMM, Format: w.Format,
		Intent: w.Intent, State: w.State, UID: w.UID,
	}
	return nil
}

// ImageFormat describes an image's pixel layout.
type ImageFormat struct {
	// Alpha says how the alpha channel is stored.
	Alpha Alpha `json:"alpha"`
	// BitsPerChannel is the depth of each channel.
	BitsPerChannel int64 `json:"bitsPerChannel"`
	// Channels is the number of channels, alpha included.
	Channels int64 `json:"channels"`
	// ColorSpace is "" when the printer does not report one.
	ColorSpace ColorSpace `json:"colorSpace,omitempty"`
}

// UnmarshalJSON accepts every JSON form of the documented numbers (3, 3.0, 3e0).
func (f *ImageFormat) UnmarshalJSON(b []byte) error {
	var w struct {
		Alpha          Alpha      `json:"alpha"`
		BitsPerChannel wireInt    `json:"bitsPerChannel"`
		Channels       wireInt    `json:"channels"`
		ColorSpace     ColorSpace `json:"colorSpace"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*f = ImageFormat{Alpha: w.Alpha, BitsPerChannel: int64(w.BitsPerChannel), Channels: int64(w.Channels), ColorSpace: w.ColorSpace}
	return nil
}

// PrintCounters are a printer's running totals (GET .../printCounters).
type PrintCounters struct {
	// Triggers counts every trigger the printer received.
	Triggers int64 `json:"triggers"`
	// TriggerBounces counts the triggers that found nothing to print.
	TriggerBounces int64 `json:"triggerBounces"`
	// PrintedLabels counts the labels printed.
	PrintedLabels int64 `json:"printedLabels"`
}

// UnmarshalJSON accepts every JSON form of the documented numbers (3, 3.0, 3e0) and refuses an
// object that lacks one of the three counters or holds null or a non-number there: zeros
// made up for a missing counter would read as a printer restart.
func (p *PrintCounters) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // encoding/json's convention; the client refuses a null body itself
	}
	var w struct {
		Triggers       requiredInt `json:"triggers"`
		TriggerBounces requiredInt `json:"triggerBounces"`
		PrintedLabels  requiredInt `json:"printedLabels"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    requiredInt
	}{{"triggers", w.Triggers}, {"triggerBounces", w.TriggerBounces}, {"printedLabels", w.PrintedLabels}} {
		if !f.v.set {
			return errors.New("the counters lack " + strconv.Quote(f.name))
		}
	}
	*p = PrintCounters{Triggers: w.Triggers.v, TriggerBounces: w.TriggerBounces.v, PrintedLabels: w.PrintedLabels.v}
	return nil
}

// requiredInt is a wireInt that must be there: null is an error, and set tells a missing member
// from a zero.
type requiredInt struct {
	v   int64
	set bool
}

func (n *requiredInt) UnmarshalJSON(b []byte) error {
	v, err := parseInt(b) // null included: parseInt refuses it as a type error
	if err != nil {
		return err
	}
	n.v, n.set = v, true
	return nil
}

// wireInt decodes a JSON number the contract documents as "number" into an int64, whether it
// is written 3, 3.0 or 3e0. A fraction or a value outside int64 is an error, never a silent
// truncation.
type wireInt int64

func (n *wireInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := parseInt(b)
	if err != nil {
		return err
	}
	*n = wireInt(v)
	return nil
}

var errNotInteger = errors.New("number is not an integer")

// parseInt parses one JSON number literal as an int64 (see wireInt).
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errNotInteger
	}
	// Fast path for plain integers, which is what printers send.
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) > 0 && len(digits) <= 18 {
		var v int64
		ok := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			v = v*10 + int64(c-'0')
		}
		if ok && (len(digits) == 1 || digits[0] != '0') {
			if neg {
				v = -v
			}
			return v, nil
		}
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return v, nil
	}
	if !json.Valid(b) {
		return 0, errors.New("invalid number " + strconv.Quote(string(b)))
	}
	switch b[0] {
	case '"':
		return 0, typeError("string")
	case '[':
		return 0, typeError("array")
	case '{':
		return 0, typeError("object")
	case 't', 'f':
		return 0, typeError("bool")
	case 'n':
		return 0, typeError("null")
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || f >= 0x1p63 || f < -0x1p63 {
		return 0, typeError("number " + string(b))
	}
	return int64(f), nil
}

// typeError reports a JSON value that is not an int64; encoding/json adds the field's name.
func typeError(value string) error {
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeFor[int64]()}
}
