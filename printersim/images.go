package printersim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	_ "golang.org/x/image/tiff" // registers TIFF for image.DecodeConfig
)

const dpi = 300

type storedImage struct {
	data        []byte
	contentType string
	intent      string
	uid         string
	uploaded    time.Time
	format      imageFormat
	width       int
	height      int
	decodeErr   error
}

type imageFormat struct {
	Alpha          string `json:"alpha"`
	BitsPerChannel int    `json:"bitsPerChannel"`
	Channels       int    `json:"channels"`
	ColorSpace     string `json:"colorSpace,omitempty"`
}

// imageInfo is the contract's image information object, with its mixed casing.
type imageInfo struct {
	FileSize int         `json:"fileSize"`
	Format   imageFormat `json:"format"`
	Height   int         `json:"height"`
	HeightMM float64     `json:"height_mm"`
	Intent   string      `json:"intent,omitempty"`
	State    string      `json:"state"`
	UID      string      `json:"uid"`
	Width    int         `json:"width"`
	WidthMM  float64     `json:"width_mm"`
}

func (s *Simulator) info(img *storedImage) imageInfo {
	state := "READY"
	switch {
	case s.cfg.clock.Now().Sub(img.uploaded) < s.cfg.delay:
		state = "PROCESSING"
	case img.decodeErr != nil:
		state = "ERROR"
	}
	mm := func(px int) float64 { return float64(int(float64(px)*254/dpi+0.5)) / 10 }
	return imageInfo{
		FileSize: len(img.data), Format: img.format, Height: img.height, HeightMM: mm(img.height),
		Intent: img.intent, State: state, UID: img.uid, Width: img.width, WidthMM: mm(img.width),
	}
}

// decodeImage fills the format and size of img from its bytes.
func decodeImage(img *storedImage) {
	if w, h, f, ok := decodeNetPBM(img.data); ok {
		img.width, img.height, img.format = w, h, f
		return
	}
	cfg, kind, err := image.DecodeConfig(bytes.NewReader(img.data))
	if err != nil {
		img.decodeErr = err
		return
	}
	if img.contentType == "" || img.contentType == "application/json" {
		img.contentType = "image/" + kind
	}
	img.width, img.height = cfg.Width, cfg.Height
	img.format = formatOf(cfg.ColorModel)
}

// formatOf describes a decoded color model in the contract's terms.
func formatOf(m color.Model) imageFormat {
	switch m {
	case color.GrayModel:
		return imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 1, ColorSpace: "GRAY"}
	case color.Gray16Model:
		return imageFormat{Alpha: "NONE", BitsPerChannel: 16, Channels: 1, ColorSpace: "GRAY"}
	case color.NRGBAModel:
		return imageFormat{Alpha: "STRAIGHT", BitsPerChannel: 8, Channels: 4, ColorSpace: "RGB"}
	case color.NRGBA64Model:
		return imageFormat{Alpha: "STRAIGHT", BitsPerChannel: 16, Channels: 4, ColorSpace: "RGB"}
	case color.RGBAModel:
		return imageFormat{Alpha: "PREMULTIPLIED", BitsPerChannel: 8, Channels: 4, ColorSpace: "RGB"}
	case color.RGBA64Model:
		return imageFormat{Alpha: "PREMULTIPLIED", BitsPerChannel: 16, Channels: 4, ColorSpace: "RGB"}
	case color.YCbCrModel:
		return imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 3, ColorSpace: "RGB"}
	case color.CMYKModel:
		return imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 4, ColorSpace: "CMYK"}
	}
	if _, ok := m.(color.Palette); ok {
		return imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 1, ColorSpace: "RGB"}
	}
	return imageFormat{Alpha: "NONE", BitsPerChannel: 8, Channels: 3, ColorSpace: "RGB"}
}

// decodeNetPBM reads the header of a P1-P6 NetPBM image.
func decodeNetPBM(b []byte) (int, int, imageFormat, bool) {
	if len(b) < 3 || b[0] != 'P' || b[1] < '1' || b[1] > '6' {
		return 0, 0, imageFormat{}, false
	}
	kind := b[1]
	var fields []int
	rest := string(b[2:min(len(b), 512)])
	for len(fields) < 3 && rest != "" {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if strings.HasPrefix(rest, "#") {
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				rest = rest[i+1:]
				continue
			}
			break
		}
		end := strings.IndexAny(rest, " \t\r\n")
		if end < 0 {
			end = len(rest)
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil || n <= 0 {
			return 0, 0, imageFormat{}, false
		}
		fields = append(fields, n)
		rest = rest[end:]
		if (kind == '1' || kind == '4') && len(fields) == 2 {
			break
		}
	}
	switch {
	case (kind == '1' || kind == '4') && len(fields) == 2:
		return fields[0], fields[1], imageFormat{Alpha: "NONE", BitsPerChannel: 1, Channels: 1, ColorSpace: "GRAY"}, true
	case len(fields) == 3:
		bits := 8
		if fields[2] > 255 {
			bits = 16
		}
		if kind == '2' || kind == '5' {
			return fields[0], fields[1], imageFormat{Alpha: "NONE", BitsPerChannel: bits, Channels: 1, ColorSpace: "GRAY"}, true
		}
		return fields[0], fields[1], imageFormat{Alpha: "NONE", BitsPerChannel: bits, Channels: 3, ColorSpace: "RGB"}, true
	}
	return 0, 0, imageFormat{}, false
}

func (s *Simulator) putImage(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mt = ""
	}
	switch mt {
	case "image/png", "image/jpeg", "image/tiff", "application/json":
	default:
		writeError(w, http.StatusUnsupportedMediaType, "content type must be application/json, image/jpeg, image/png or image/tiff")
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	img := &storedImage{data: body, contentType: mt, intent: r.URL.Query().Get("intent")}
	if mt == "application/json" {
		var form struct {
			Data   *string `json:"data"`
			Intent *string `json:"intent"`
		}
		if err := json.Unmarshal(body, &form); err != nil || form.Data == nil {
			writeError(w, http.StatusBadRequest, `the JSON form is {"data": base64, "intent": ...}`)
			return
		}
		data, err := base64.StdEncoding.DecodeString(*form.Data)
		if err != nil {
			writeError(w, http.StatusBadRequest, "data is not base64: "+err.Error())
			return
		}
		img.data, img.contentType = data, ""
		if form.Intent != nil {
			img.intent = *form.Intent
		}
	}
	if len(img.data) == 0 {
		writeError(w, http.StatusBadRequest, "image is empty")
		return
	}
	decodeImage(img)
	if img.contentType == "" {
		img.contentType = "application/octet-stream"
		if _, _, _, ok := decodeNetPBM(img.data); ok {
			img.contentType = "image/x-portable-anymap"
		}
	}
	s.mu.Lock()
	s.nextUID++
	img.uid = fmt.Sprintf("img-%06d", s.nextUID)
	img.uploaded = s.cfg.clock.Now()
	s.images[r.PathValue("name")] = img
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Simulator) image(w http.ResponseWriter, r *http.Request) *storedImage {
	name := r.PathValue("name")
	img, ok := s.images[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no image "+strconv.Quote(name))
	}
	return img
}

func (s *Simulator) getImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	img := s.image(w, r)
	s.mu.Unlock()
	if img == nil {
		return
	}
	w.Header().Set("Content-Type", img.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(img.data)))
	_, _ = w.Write(img.data)
}

func (s *Simulator) imageInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if img := s.image(w, r); img != nil {
		writeJSON(w, http.StatusOK, s.info(img))
	}
}

func (s *Simulator) deleteImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	img := s.image(w, r)
	if img != nil {
		delete(s.images, r.PathValue("name"))
	}
	s.mu.Unlock()
	if img != nil {
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Simulator) listImages(w http.ResponseWriter, r *http.Request) {
	d := r.URL.Query().Get("details")
	details := d == "1" || d == "true"
	s.mu.Lock()
	out := make(map[string]any, len(s.images))
	for name, img := range s.images {
		if details {
			out[name] = s.info(img)
		} else {
			out[name] = struct{}{}
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// storedImage returns the bytes of a stored image, as stored, for the page's pictures: the
// drawer decodes them (package label/preview: a PNG at most at the size it prints, JPEG and
// TIFF whole within its pixel cap).
func (s *Simulator) storedImage(_ context.Context, name string) ([]byte, error) {
	s.mu.Lock()
	img, ok := s.images[name]
	var data []byte
	if ok {
		data = img.data // never changed in place: a PUT stores new bytes
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no image %q", name)
	}
	return data, nil
}
