package preview

import (
	"image/color"
	"math"
	"strconv"
	"strings"
)

// namedColors are the colour names the preview knows; the label format does not list its
// colour syntax (black, white, red and rgb(20%,70%,40%) are seen), so these are CSS's basic
// names.
var namedColors = map[string]color.RGBA{
	"black":   {0, 0, 0, 255},
	"white":   {255, 255, 255, 255},
	"red":     {255, 0, 0, 255},
	"green":   {0, 128, 0, 255},
	"lime":    {0, 255, 0, 255},
	"blue":    {0, 0, 255, 255},
	"yellow":  {255, 255, 0, 255},
	"cyan":    {0, 255, 255, 255},
	"aqua":    {0, 255, 255, 255},
	"magenta": {255, 0, 255, 255},
	"fuchsia": {255, 0, 255, 255},
	"gray":    {128, 128, 128, 255},
	"grey":    {128, 128, 128, 255},
	"silver":  {192, 192, 192, 255},
	"maroon":  {128, 0, 0, 255},
	"olive":   {128, 128, 0, 255},
	"navy":    {0, 0, 128, 255},
	"purple":  {128, 0, 128, 255},
	"teal":    {0, 128, 128, 255},
	"orange":  {255, 165, 0, 255},

	"transparent": {},
	"none":        {},
}

// parseColor reads a colour name, #rgb, #rrggbb, rgb(r,g,b) with 0-255 or percentages.
func parseColor(s string) (color.RGBA, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if c, ok := namedColors[s]; ok {
		return c, true
	}
	if strings.HasPrefix(s, "#") {
		h := s[1:]
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		if len(h) != 6 {
			return color.RGBA{}, false
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return color.RGBA{}, false
		}
		return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}, true
	}
	if strings.HasPrefix(s, "rgb(") && strings.HasSuffix(s, ")") {
		parts := strings.Split(s[4:len(s)-1], ",")
		if len(parts) != 3 {
			return color.RGBA{}, false
		}
		var ch [3]uint8
		for i, p := range parts {
			p = strings.TrimSpace(p)
			scale := 1.0
			if strings.HasSuffix(p, "%") {
				p = strings.TrimSuffix(p, "%")
				scale = 2.55
			}
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(v) {
				return color.RGBA{}, false
			}
			v = math.Round(v * scale)
			ch[i] = uint8(math.Max(0, math.Min(255, v)))
		}
		return color.RGBA{ch[0], ch[1], ch[2], 255}, true
	}
	return color.RGBA{}, false
}
