package labelprinter

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/labelprinter/go-labelprinter"

// TestSDKImportsNoHelper holds the package doc's word that the module's other packages sit
// beside the SDK and are never imported by it: an SDK user gets no simulator, outbox or
// exporter code in their binary.
func TestSDKImportsNoHelper(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, modulePath+"/") {
				t.Errorf("%s imports %s: the SDK root imports none of the module's other packages", name, path)
			}
		}
	}
}

// TestDocPointsToEveryToolAndExample: the package doc, the page go doc shows a new user, names
// every command under cmd/, every package beside the SDK and every example program, so none is
// added without a way to find it.
func TestDocPointsToEveryToolAndExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	// Examples are named in the sentence about examples/, as words.
	_, examples, _ := strings.Cut(text, "under examples/")
	var missing []string
	for _, dir := range []string{"cmd", "examples", "."} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			// Only directories holding Go code: examples/prometheus holds configuration.
			if gos, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.go")); !e.IsDir() || len(gos) == 0 {
				continue
			}
			switch dir {
			case "cmd":
				if !strings.Contains(text, "(cmd/"+e.Name()+")") {
					missing = append(missing, "cmd/"+e.Name())
				}
			case "examples":
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(e.Name()) + `\b`).MatchString(examples) {
					missing = append(missing, "examples/"+e.Name())
				}
			default:
				if e.Name() == "cmd" || e.Name() == "examples" {
					continue
				}
				if !strings.Contains(text, "["+modulePath+"/"+e.Name()+"]") {
					missing = append(missing, e.Name())
				}
			}
		}
	}
	for _, m := range missing {
		t.Errorf("the package doc (doc.go) never points to %s", m)
	}
}
