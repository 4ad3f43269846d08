package buildinfo

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkerFlags builds a program as a release builds the commands, with the version, commit,
// branch, build user and date set through prometheus/common/version's variables, and reads
// them back from what --version prints.
func TestLinkerFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a program with")
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The program is added to the module by -overlay, beside this package.
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	const program = "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/labelprinter/go-labelprinter/internal/buildinfo\"\n)\n\n" +
		"func main() { fmt.Print(buildinfo.Get().Print(\"prog\")) }\n"
	if err := os.WriteFile(src, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(here, "linkerprobe", "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	const v = "github.com/prometheus/common/version."
	ldflags := "-X " + v + "Version=9.8.7 -X " + v + "Revision=0123456789abcdef -X " + v + "Branch=release-9.8" +
		" -X " + v + "BuildUser=builder@ci -X " + v + "BuildDate=2026-11-20T10:00:00Z"
	if out, err := exec.Command(goCmd, "build", "-overlay", overlay, "-ldflags", ldflags, "-o", bin, "./linkerprobe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	for _, want := range []string{
		"prog, version 9.8.7 (branch: release-9.8, revision: 0123456789abcdef)\n",
		"\n  build user:       builder@ci\n", "\n  build date:       2026-11-20T10:00:00Z\n", "\n  license:          Apache-2.0\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
