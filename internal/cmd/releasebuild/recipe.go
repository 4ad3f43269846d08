package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

// recipe is the part of .goreleaser.yaml that decides the bytes of a binary and of its SBOM.
type recipe struct {
	// Env is the recipe's top-level env, set for every build and SBOM.
	Env    []string
	Builds []build
	SBOMs  []sbom
	// SnapshotVersion is snapshot.version_template.
	SnapshotVersion string
}

// build is one entry of the recipe's builds.
type build struct {
	ID           string   `yaml:"id"`
	Main         string   `yaml:"main"`
	Binary       string   `yaml:"binary"`
	Env          []string `yaml:"env"`
	Goos         []string `yaml:"goos"`
	Goarch       []string `yaml:"goarch"`
	Flags        []string `yaml:"flags"`
	Ldflags      []string `yaml:"ldflags"`
	ModTimestamp string   `yaml:"mod_timestamp"`
}

// sbom is one entry of the recipe's sboms.
type sbom struct {
	ID        string   `yaml:"id"`
	Artifacts string   `yaml:"artifacts"`
	Documents []string `yaml:"documents"`
	Cmd       string   `yaml:"cmd"`
	Args      []string `yaml:"args"`
	Env       []string `yaml:"env"`
}

// mirroredBuildKeys are the build keys this program applies as goreleaser does. Any other key
// (tags, gcflags, overrides, hooks, a tool other than go...) changes goreleaser's go build in a
// way this program would not, so the recipe is refused rather than built differently.
var mirroredBuildKeys = []string{"id", "main", "binary", "env", "goos", "goarch", "flags", "ldflags", "mod_timestamp"}

// mirroredSBOMKeys are the sboms keys this program applies.
var mirroredSBOMKeys = []string{"id", "artifacts", "documents", "cmd", "args", "env"}

// unmirroredTopKeys are top-level sections that change what goreleaser builds from (a module
// proxy copy, hooks run before the build) and that this program does not apply.
var unmirroredTopKeys = []string{"gomod", "before", "go_mod", "monorepo"}

// readRecipe reads the recipe at path.
func readRecipe(path string) (*recipe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseRecipe(path, data)
}

// parseRecipe decodes data, the text of the recipe at path (named in errors).
func parseRecipe(path string, data []byte) (*recipe, error) {
	var top map[string]interface{}
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range unmirroredTopKeys {
		if _, ok := top[k]; ok {
			return nil, fmt.Errorf("%s: the section %q changes the release's build and releasebuild does not apply it", path, k)
		}
	}
	r := &recipe{}
	if err := decodeStrict(top["env"], &r.Env); err != nil {
		return nil, fmt.Errorf("%s: env: %w", path, err)
	}
	if s, ok := top["snapshot"].(map[interface{}]interface{}); ok {
		if v, ok := s["version_template"].(string); ok {
			r.SnapshotVersion = v
		}
	}
	if r.SnapshotVersion == "" {
		return nil, fmt.Errorf("%s: snapshot.version_template is not set; releasebuild needs the snapshot version goreleaser uses", path)
	}

	items, _ := top["builds"].([]interface{})
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no builds", path)
	}
	for i, item := range items {
		var b build
		if err := decodeOnly(item, mirroredBuildKeys, &b); err != nil {
			return nil, fmt.Errorf("%s: builds[%d]: %w", path, i, err)
		}
		if b.ID == "" || b.Main == "" || b.Binary == "" {
			return nil, fmt.Errorf("%s: builds[%d]: id, main and binary must all be set", path, i)
		}
		r.Builds = append(r.Builds, b)
	}

	sitems, _ := top["sboms"].([]interface{})
	for i, item := range sitems {
		var s sbom
		if err := decodeOnly(item, mirroredSBOMKeys, &s); err != nil {
			return nil, fmt.Errorf("%s: sboms[%d]: %w", path, i, err)
		}
		if s.Artifacts != "binary" {
			continue // SBOMs of archives or packages are not built here
		}
		if s.Cmd == "" || len(s.Documents) != 1 {
			return nil, fmt.Errorf("%s: sboms[%d]: cmd and exactly one document must be set", path, i)
		}
		r.SBOMs = append(r.SBOMs, s)
	}
	return r, nil
}

// decodeOnly decodes v into out after checking that v, a YAML mapping, has no key outside
// allowed.
func decodeOnly(v interface{}, allowed []string, out interface{}) error {
	m, ok := v.(map[interface{}]interface{})
	if !ok {
		return fmt.Errorf("not a mapping")
	}
	var unknown []string
	for k := range m {
		name := fmt.Sprint(k)
		if !contains(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("releasebuild does not apply %s as goreleaser would; it applies only %s",
			strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return decodeStrict(v, out)
}

// decodeStrict decodes the YAML value v into out, refusing fields out does not have.
func decodeStrict(v interface{}, out interface{}) error {
	if v == nil {
		return nil
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(data, out)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
