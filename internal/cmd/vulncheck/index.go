package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// osvEntry is what the index needs of an OSV entry: its ID and the modules it affects.
type osvEntry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Module struct {
			Path string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// The index files, as govulncheck's client reads them (golang.org/x/vuln/internal/client).
type dbMeta struct {
	Modified time.Time `json:"modified"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

// moduleVuln leaves out the index's optional "fixed": without it, govulncheck reads every
// entry of a module it finds and decides from the entry's own ranges, so no version is judged
// from a summary this program would have to compute as govulncheck does.
type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

// pseudoTime is the time in a pseudo-version: v0.0.0-20261105234957-e22db6528018.
var pseudoTime = regexp.MustCompile(`-(\d{14})-[0-9a-f]{12}$`)

// buildIndex writes the database of the entries in osvDir to out, a new directory (written
// beside it first and renamed, so an interrupted build leaves no half database), and returns
// how many entries it holds. The database's time is the time of version, the vulndb module's
// pseudo-version, since the module's entries carry none.
func buildIndex(osvDir, version, out string) (n int, err error) {
	m := pseudoTime.FindStringSubmatch(version)
	if m == nil {
		return 0, fmt.Errorf("-version %q is not a pseudo-version (v0.0.0-YYYYMMDDhhmmss-commit)", version)
	}
	dbTime, err := time.Parse("20060102150405", m[1])
	if err != nil {
		return 0, fmt.Errorf("-version %q: %v", version, err)
	}
	if _, err := os.Stat(out); err == nil {
		return 0, fmt.Errorf("-out %s exists already", out)
	}
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("-osv %s holds no .json entries", osvDir)
	}
	tmp := out + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.MkdirAll(filepath.Join(tmp, "ID"), 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "index"), 0o755); err != nil {
		return 0, err
	}
	meta := dbMeta{Modified: dbTime}
	modules := map[string]*moduleMeta{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var e osvEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return 0, fmt.Errorf("%s: %v", f, err)
		}
		if e.ID == "" || filepath.Base(f) != e.ID+".json" {
			return 0, fmt.Errorf("%s: an entry's file must be named after its id, which is %q", f, e.ID)
		}
		if e.Modified.After(meta.Modified) {
			meta.Modified = e.Modified
		}
		seen := map[string]bool{}
		for _, a := range e.Affected {
			p := a.Module.Path
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			if modules[p] == nil {
				modules[p] = &moduleMeta{Path: p}
			}
			modules[p].Vulns = append(modules[p].Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), b, 0o644); err != nil {
			return 0, err
		}
	}
	list := make([]*moduleMeta, 0, len(modules))
	for _, mm := range modules {
		sort.Slice(mm.Vulns, func(i, j int) bool { return mm.Vulns[i].ID < mm.Vulns[j].ID })
		list = append(list, mm)
	}
	sort.Slice(list, func(i, j int) bool { return strings.Compare(list[i].Path, list[j].Path) < 0 })
	for name, v := range map[string]any{"db.json": meta, "modules.json": list} {
		b, err := json.Marshal(v)
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(tmp, "index", name), b, 0o644); err != nil {
			return 0, err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return 0, err
	}
	return len(files), nil
}
