package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is one platform of a build.
type target struct{ goos, goarch string }

// targetEnv is what goreleaser v2.14.3 adds to a build's environment for a platform: every
// variant variable, set to its default for the platform's architecture and empty otherwise.
func (t target) env() []string {
	amd64, arm64 := "", ""
	switch t.goarch {
	case "amd64":
		amd64 = "v1"
	case "arm64":
		arm64 = "v8.0"
	}
	return []string{"GOOS=" + t.goos, "GOARCH=" + t.goarch, "GOAMD64=" + amd64, "GO386=", "GOARM=",
		"GOARM64=" + arm64, "GOMIPS=", "GOMIPS64=", "GOPPC64=", "GORISCV64="}
}

// binaryName is the file name goreleaser gives b's binary for t.
func (b build) binaryName(t target) string {
	if t.goos == "windows" {
		return b.Binary + ".exe"
	}
	return b.Binary
}

// command is a go build as goreleaser runs it: its arguments (the tool first) and environment.
type command struct {
	Args []string
	Env  []string
	// Out is the file the command writes.
	Out string
	// ModTime is the time Out is given afterwards, from mod_timestamp.
	ModTime time.Time
}

// goBuild returns the go build goreleaser runs for b on t, writing out, in a process whose
// environment is environ.
func (r *recipe) goBuild(b build, t target, f fields, environ []string, out string) (command, error) {
	if !contains(b.Goos, t.goos) || !contains(b.Goarch, t.goarch) {
		return command{}, fmt.Errorf("the build %s is not made for %s/%s", b.ID, t.goos, t.goarch)
	}
	env := append([]string(nil), environ...)
	tf := f
	for _, group := range [][]string{r.Env, b.Env} {
		for _, e := range group {
			v, err := tf.apply(e)
			if err != nil {
				return command{}, fmt.Errorf("the build %s: env: %w", b.ID, err)
			}
			if v == "" {
				continue
			}
			env = append(env, v)
			tf = tf.with("Env", withVar(tf["Env"].(map[string]string), v))
		}
	}
	env = append(env, t.env()...)
	tf = tf.with("Os", t.goos, "Arch", t.goarch, "Binary", b.Binary, "Target", t.goos+"_"+t.goarch)

	args := []string{"go", "build"}
	for _, fl := range b.Flags {
		v, err := tf.apply(fl)
		if err != nil {
			return command{}, fmt.Errorf("the build %s: flags: %w", b.ID, err)
		}
		if v != "" {
			args = append(args, v)
		}
	}
	var ld []string
	for _, l := range b.Ldflags {
		v, err := tf.apply(l)
		if err != nil {
			return command{}, fmt.Errorf("the build %s: ldflags: %w", b.ID, err)
		}
		if v != "" {
			ld = append(ld, v)
		}
	}
	if len(ld) > 0 {
		args = append(args, "-ldflags="+strings.Join(ld, " "))
	}
	args = append(args, "-o", out, b.Main)

	c := command{Args: args, Env: env, Out: out}
	if b.ModTimestamp != "" {
		v, err := tf.apply(b.ModTimestamp)
		if err != nil {
			return command{}, fmt.Errorf("the build %s: mod_timestamp: %w", b.ID, err)
		}
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return command{}, fmt.Errorf("the build %s: mod_timestamp %q is not a Unix time: %w", b.ID, v, err)
		}
		c.ModTime = time.Unix(sec, 0)
	}
	return c, nil
}

// withVar returns a copy of env with the variable kv ("NAME=value") set.
func withVar(env map[string]string, kv string) map[string]string {
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	k, v, _ := strings.Cut(kv, "=")
	out[k] = v
	return out
}

// run runs c in dir and gives the binary its time.
func (c command) run(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = dir
	cmd.Env = c.Env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(c.Args, " "), err)
	}
	if !c.ModTime.IsZero() {
		out := c.Out
		if !filepath.IsAbs(out) {
			out = filepath.Join(dir, out)
		}
		if err := os.Chtimes(out, c.ModTime, c.ModTime); err != nil {
			return err
		}
	}
	return nil
}

// sbomEnvPassed are the variables goreleaser v2.14.3 passes from its own environment to an
// SBOM command; it passes no others.
var sbomEnvPassed = []string{"HOME", "USER", "USERPROFILE", "TMPDIR", "TMP", "TEMP", "PATH", "LOCALAPPDATA"}

// sbomCommand returns the command goreleaser runs to make s's document for the binary at
// binary (in dist, the directory the command runs in), and the document's path.
func (r *recipe) sbomCommand(s sbom, b build, t target, f fields, dist, binary string) (command, string, error) {
	tf := f.with("Os", t.goos, "Arch", t.goarch, "Binary", b.Binary, "Target", t.goos+"_"+t.goarch,
		"ArtifactName", filepath.Base(binary), "ArtifactPath", binary)
	doc, err := tf.apply(s.Documents[0])
	if err != nil {
		return command{}, "", fmt.Errorf("sboms %s: documents: %w", s.ID, err)
	}
	vars := map[string]string{"artifact": binary, "artifactID": b.ID, "document": doc, "document0": doc}
	lookup := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	var env []string
	for _, k := range sbomEnvPassed {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"artifact", "artifactID", "document", "document0"} {
		env = append(env, k+"="+vars[k])
	}
	for _, e := range s.Env {
		v, err := tf.apply(os.Expand(e, lookup))
		if err != nil {
			return command{}, "", fmt.Errorf("sboms %s: env: %w", s.ID, err)
		}
		env = append(env, v)
		k, val, _ := strings.Cut(v, "=")
		vars[k] = val
	}
	args := []string{s.Cmd}
	for _, a := range s.Args {
		v, err := tf.apply(os.Expand(a, lookup))
		if err != nil {
			return command{}, "", fmt.Errorf("sboms %s: args: %w", s.ID, err)
		}
		args = append(args, v)
	}
	return command{Args: args, Env: env, Out: doc}, doc, nil
}
