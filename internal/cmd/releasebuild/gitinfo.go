package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// gitInfo is what goreleaser v2.14.3 learns from git and offers the recipe's templates, read
// with the same git commands it runs.
type gitInfo struct {
	FullCommit  string
	ShortCommit string
	// Tag is the tag on HEAD, or the latest tag before it, or v0.0.0 when there is none.
	Tag string
	// Exact is whether Tag points at HEAD.
	Exact      bool
	CommitDate time.Time
}

// readGitInfo reads HEAD's commit, date and tag in the checkout at dir.
func readGitInfo(ctx context.Context, dir string) (gitInfo, error) {
	var g gitInfo
	var err error
	if g.FullCommit, err = git(ctx, dir, "show", "--format=%H", "HEAD", "--quiet"); err != nil {
		return g, err
	}
	if g.ShortCommit, err = git(ctx, dir, "show", "--format=%h", "HEAD", "--quiet"); err != nil {
		return g, err
	}
	ct, err := git(ctx, dir, "show", "--format=%ct", "HEAD", "--quiet")
	if err != nil {
		return g, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return g, fmt.Errorf("the commit time %q: %w", ct, err)
	}
	g.CommitDate = time.Unix(sec, 0).UTC()
	g.Tag = "v0.0.0"
	if tags, err := git(ctx, dir, "tag", "--points-at", "HEAD", "--sort=-version:refname"); err == nil && tags != "" {
		g.Tag, g.Exact = strings.Fields(tags)[0], true
	} else if t, err := git(ctx, dir, "describe", "--tags", "--abbrev=0", "HEAD"); err == nil && t != "" {
		g.Tag = t
	}
	return g, nil
}

// git runs git with args in dir and returns its output without surrounding space.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// fields are the values the recipe's templates may name, as goreleaser gives them.
type fields map[string]interface{}

// templateFields returns the template values for a build of g: version is the release's
// version (without the leading v, as goreleaser's .Version), env the environment's variables.
// Date, Now and Timestamp are the clock's, as goreleaser gives them, so that a recipe naming
// them builds differently each time and the reproducibility check finds it.
func templateFields(g gitInfo, version string, env map[string]string) fields {
	now := time.Now().UTC()
	return fields{
		"Date":            now.Format(time.RFC3339),
		"Now":             now,
		"Timestamp":       now.Unix(),
		"ProjectName":     "go-labelprinter",
		"Version":         version,
		"Tag":             g.Tag,
		"Commit":          g.FullCommit,
		"FullCommit":      g.FullCommit,
		"ShortCommit":     g.ShortCommit,
		"CommitDate":      g.CommitDate.Format(time.RFC3339),
		"CommitTimestamp": g.CommitDate.Unix(),
		"Env":             env,
	}
}

// with returns a copy of f with the extra values set.
func (f fields) with(kv ...interface{}) fields {
	out := fields{}
	for k, v := range f {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// apply renders the goreleaser template s with f. A field f does not hold (a goreleaser field
// this program does not give) is an error, never an empty string.
func (f fields) apply(s string) (string, error) {
	t, err := template.New("recipe").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", fmt.Errorf("the template %q: %w", s, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, map[string]interface{}(f)); err != nil {
		return "", fmt.Errorf("the template %q: %w", s, err)
	}
	return b.String(), nil
}

// version returns goreleaser's .Version for g: the tag without its v for a release, the
// recipe's snapshot version otherwise.
func (r *recipe) version(g gitInfo, snapshot bool, env map[string]string) (string, error) {
	base := strings.TrimPrefix(g.Tag, "v")
	if !snapshot {
		if !g.Exact {
			return "", fmt.Errorf("HEAD (%s) has no tag: build a snapshot (-snapshot) or tag the commit", g.ShortCommit)
		}
		return base, nil
	}
	return templateFields(g, base, env).apply(r.SnapshotVersion)
}
