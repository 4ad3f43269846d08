package preview_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
)

// FuzzRender: any label label.Parse accepts renders without panic, within the pixel cap (an
// error is fine: no size, over the cap).
func FuzzRender(f *testing.F) {
	for _, dir := range []string{"testdata", filepath.Join("..", "testdata")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	for _, tc := range symbolCases {
		f.Add([]byte(`{"format":3,"width":40,"height":30,"objs":[` + tc.obj + `]}`))
	}
	f.Add([]byte(`{"format":3,"width":10000,"height":10000,"hdpi":1200,"objs":[]}`))
	f.Add([]byte(`{"format":3,"width":30,"height":20,"rotation":"CW90","objs":[{"type":"PolyLine","points":[0,0,30,20,0,20],"segments":[0.5,0.2]},
		{"type":"Text","x":1,"y":1,"width":10,"text":"[color=\"red\"]a b[] *c*","styleFormat":"ADVANCED","font":{"family":"F","style":"S","height":2,"width":2},"color":"black"}]}`))
	const maxPixels = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := label.Parse(data)
		if err != nil {
			return
		}
		img, _, err := preview.Render(l, &preview.Options{MaxPixels: maxPixels, Env: exampleEnv})
		if err != nil {
			return
		}
		if b := img.Bounds(); b.Dx()*b.Dy() > maxPixels {
			t.Fatalf("image %v over the cap of %d pixels", b.Size(), maxPixels)
		}
	})
}
