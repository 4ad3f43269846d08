package label

import (
	"reflect"
	"testing"
)

// TestMisspeltNames: an object type or a property close to a known one is a problem with "did
// you mean", and a misspelt mandatory property is not also reported missing; names far from
// every known one, and known properties of the wrong shape, are not taken for slips.
func TestMisspeltNames(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":50,"height":30,"Bgcolor":"white","objs":[
		{"type":"GS1128","x":1,"y":1,"apps":[["01","09501101530003"]],"barHeight":10},
		{"type":"GS1-128","x":1,"y":1,"apps":[["01","09501101530003"]],"barheight":10,"zz":1,"quietZone":true},
		{"type":"Text","x":1,"y":1,"text":"a","color":"black","font":{"famliy":"Arial","style":"Bold","height":3}},
		{"type":"DataMatrix","x":1,"y":1,"text":"a","size":24,"modulesize":0.5},
		{"type":"Ellipse","x":1,"y":1},
		{"type":"datamatrix","x":1,"y":1,"text":"a"},
		{"type":"ObjectGroup","children":[{"type":"Txet","text":"b"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`Bgcolor: not a property this object has (did you mean bgColor?)`,
		`objs[0].type: unknown object type "GS1128" (did you mean "GS1-128"?)`,
		`objs[1].barheight: not a property this object has (did you mean barHeight?)`,
		`objs[2].font.famliy: not a property this object has (did you mean family?)`,
		`objs[3].modulesize: not a property this object has (did you mean moduleSize?)`,
		`objs[3].size: must be an object {"width":W,"height":H}`,
		`objs[5].type: unknown object type "datamatrix" (did you mean "DataMatrix"?)`,
		`objs[6].children[0].type: unknown object type "Txet" (did you mean "Text"?)`,
	}
	if got := problemStrings(l); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}
