package labelprinter

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
)

// marshalerFunc is a json.Marshaler of the test's choosing.
type marshalerFunc func() ([]byte, error)

func (f marshalerFunc) MarshalJSON() ([]byte, error) { return f() }

// TestLabelsPutMarshaler: Put takes a json.Marshaler (a *label.Label, a label.Label, any
// other) as well as json.RawMessage, sends what it marshals to, and refuses before sending a
// marshaller that fails or yields null. The SDK itself does not import package label: only
// this test does.
func TestLabelsPutMarshaler(t *testing.T) {
	lbl, err := label.Parse([]byte(`{"format":3,"width":50,"height":30,"editor":{"v":1},"objs":[{"type":"EAN-13","x":1,"y":1,"text":"950110153000","barHeight":20}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"format":3,"width":50,"height":30,"objs":[{"type":"EAN-13","x":1,"y":1,"text":"950110153000","barHeight":20}],"editor":{"v":1}}`
	for name, v := range map[string]any{
		"*label.Label":    lbl,
		"label.Label":     *lbl,
		"json.Marshaler":  marshalerFunc(func() ([]byte, error) { return []byte(want), nil }),
		"json.RawMessage": json.RawMessage(want),
	} {
		c, mock := mkClient(t)
		seen := mkRecord(mock, 204, "")
		if err := c.Labels.Put(t.Context(), "BOX", v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(*seen) != 1 || string((*seen)[0].body) != want || (*seen)[0].method != "PUT" || (*seen)[0].rawPath != "/prefix/api/v3/labels/BOX" {
			t.Errorf("%s: sent %+v", name, *seen)
		}
	}
	var nilLabel *label.Label
	for name, v := range map[string]any{
		"failing marshaller": marshalerFunc(func() ([]byte, error) { return nil, errors.New("boom") }),
		"nil *label.Label":   nilLabel,
		"label with NaN":     &label.Label{Width: label.Ptr(0.0 / func() float64 { return 0 }())},
	} {
		c, _ := mkClient(t) // any request fails the test
		if err := c.Labels.Put(t.Context(), "BOX", v); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}
