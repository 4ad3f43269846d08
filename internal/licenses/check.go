package licenses

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Module is one module a build links: its path and version, to name it, and the directory
// holding its files (in the module cache).
type Module struct {
	Path    string
	Version string
	Dir     string
}

func (m Module) String() string {
	if m.Version == "" {
		return m.Path
	}
	return m.Path + "@" + m.Version
}

// AllowList is what allowed.txt says: the licences a linked module may be under, and the
// modules taken under another licence knowingly, each with the one licence it is taken under.
type AllowList struct {
	Licenses   map[string]bool
	Exceptions map[string]string // module path -> SPDX identifier
}

// ParseAllowList reads an allow-list: "license ID" lines, "exception MODULE ID REASON..." lines,
// blank lines and # comments. An error names the line it could not read.
func ParseAllowList(text string) (AllowList, error) {
	a := AllowList{Licenses: map[string]bool{}, Exceptions: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "license" && len(f) == 2:
			a.Licenses[f[1]] = true
		case f[0] == "exception" && len(f) >= 4:
			a.Exceptions[f[1]] = f[2]
		default:
			return AllowList{}, fmt.Errorf("line %d: %q is neither \"license ID\" nor \"exception MODULE ID REASON\"", n, line)
		}
	}
	return a, sc.Err()
}

// licenseFile reports whether a file at a module's root is a licence by its name: LICENSE,
// LICENCE, COPYING and UNLICENSE, in any case and with any extension (LICENSE.md,
// LICENSE.libyaml). A NOTICE holds attributions, not a licence.
func licenseFile(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"license", "licence", "copying", "unlicense"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// Check returns one error per problem it finds with the modules' licences: a module with no
// licence file at its root, a licence file whose licence it does not recognise, or a licence
// the allow-list does not allow and no exception takes; and an exception that takes no module,
// so that one is not left behind once its module is gone. Each error names the module and
// what was found. No errors means every module may be linked.
func Check(mods []Module, allow AllowList) []error {
	var errs []error
	used := map[string]bool{}
	for _, m := range mods {
		entries, err := os.ReadDir(m.Dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: reading its files: %w", m, err))
			continue
		}
		found := false
		for _, e := range entries {
			if e.IsDir() || !licenseFile(e.Name()) {
				continue
			}
			found = true
			text, err := os.ReadFile(m.Dir + string(os.PathSeparator) + e.Name())
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", m, err))
				continue
			}
			ids := Classify(string(text))
			if len(ids) == 0 {
				errs = append(errs, fmt.Errorf("%s: %s holds no licence this check recognises; read it, and add a rule to classify.go if it is one allowed.txt should allow", m, e.Name()))
			}
			for _, id := range ids {
				switch {
				case allow.Licenses[id]:
				case allow.Exceptions[m.Path] == id:
					used[m.Path] = true
				default:
					errs = append(errs, fmt.Errorf("%s: %s is %s, which allowed.txt does not allow", m, e.Name(), id))
				}
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s: no licence file (LICENSE, COPYING) at the module's root", m))
		}
	}
	var stale []string
	for path := range allow.Exceptions {
		if !used[path] {
			stale = append(stale, path)
		}
	}
	sort.Strings(stale)
	for _, path := range stale {
		errs = append(errs, fmt.Errorf("allowed.txt takes %s under %s, but no linked module needs that exception any more; remove it", path, allow.Exceptions[path]))
	}
	return errs
}
