package gs1

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label/gs1/internal/dictgen"
)

// TestTableUpToDate: ai_table.go is what the checked-in dictionary generates (go generate).
func TestTableUpToDate(t *testing.T) {
	dict, err := os.ReadFile("gs1-syntax-dictionary.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := dictgen.Generate(dict)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("ai_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("ai_table.go is not what gs1-syntax-dictionary.txt generates: run go generate ./label/gs1")
	}
}

// releaseBlob is the git object id of gs1-syntax-dictionary.txt in the published release
// 2026-01-27 of gs1/gs1-syntax-dictionary (tag 2026-01-27, commit 8ad003f83a4b): what
// `git ls-tree 2026-01-27 gs1-syntax-dictionary.txt` prints in a clone of that repository.
const releaseBlob = "48eefd1c985bb210fc1ca3a22e596990edfef5e1"

// TestDictionaryIsTheRelease: the dictionary kept beside the table is the published release
// it names, byte for byte (its git blob id), and DictionaryVersion says that release; a file
// taken between releases (release line UNSET) is refused by the generator.
func TestDictionaryIsTheRelease(t *testing.T) {
	dict, err := os.ReadFile("gs1-syntax-dictionary.txt")
	if err != nil {
		t.Fatal(err)
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(dict)) + "\x00"))
	h.Write(dict)
	if got := hex.EncodeToString(h.Sum(nil)); got != releaseBlob {
		t.Errorf("gs1-syntax-dictionary.txt is blob %s, not release 2026-01-27's %s", got, releaseBlob)
	}
	if DictionaryVersion != "2026-01-27" {
		t.Errorf("DictionaryVersion = %q", DictionaryVersion)
	}
	if r, err := dictgen.Release(dict); err != nil || r != DictionaryVersion {
		t.Errorf("Release = %q, %v; DictionaryVersion %q", r, err, DictionaryVersion)
	}
	unset := strings.Replace(string(dict), "# Release: 2026-01-27", "# Release: UNSET", 1)
	if _, err := dictgen.Generate([]byte(unset)); err == nil || !strings.Contains(err.Error(), "UNSET") {
		t.Errorf("a dictionary between releases: %v", err)
	}
}

// TestTable: the table holds what the dictionary says of a few AIs.
func TestTable(t *testing.T) {
	if n := len(table); n < 500 {
		t.Fatalf("table holds %d AIs", n)
	}
	for i := 1; i < len(table); i++ {
		if table[i-1].ai >= table[i].ai {
			t.Fatalf("table not sorted at %s, %s", table[i-1].ai, table[i].ai)
		}
	}
	e := lookup("01")
	if e == nil || e.title != "GTIN" || !e.fixed || len(e.parts) != 1 || e.parts[0].min != 14 || e.parts[0].linters[0] != "csum" {
		t.Fatalf("01: %+v", e)
	}
	if e := lookup("3103"); e == nil || e.ex[0] != "310n" || !e.fixed {
		t.Fatalf("3103: %+v", e)
	}
	if e := lookup("10"); e == nil || e.fixed || e.parts[0].cset != 'X' || e.parts[0].max != 20 {
		t.Fatalf("10: %+v", e)
	}
	// Release 2026-01-27 writes (250)'s rules as two req attributes: (01) or (8006), and (21).
	if e := lookup("250"); e == nil || len(e.req) != 2 || len(e.req[0]) != 2 || e.req[1][0][0] != "21" {
		t.Fatalf("250: %+v", e)
	}
	if title, ok := Title("8030"); !ok || title != "DIGSIG" {
		t.Fatalf("Title(8030) = %q, %v", title, ok)
	}
	if _, ok := Title("89"); ok {
		t.Fatal("Title(89) found")
	}
	if !PredefinedLength("3103") || PredefinedLength("10") || PredefinedLength("89") || PredefinedLength("8003") {
		t.Fatal("PredefinedLength")
	}
	if lookup("89") != nil || lookup("0") != nil || lookupPrefix("0112345") != lookup("01") || lookupPrefix("3103000123") != lookup("3103") {
		t.Fatal("lookup")
	}
}

// TestDictgenRejects: the generator refuses a dictionary it cannot read faithfully.
func TestDictgenRejects(t *testing.T) {
	for _, bad := range []string{
		"01 *? Q14 # x\n",
		"01 * N14 foo=1 # x\n",
		"01-0 * N14 # x\n",
		"01 * [N14 # x\n",
		"01 * N14 req=A1 # x\n",
		"01 * N14\n011 N3\n",
	} {
		if _, err := dictgen.Generate([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
