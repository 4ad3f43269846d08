package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeSession is a session of a README that runs offline, named by its first line. The
// sessions of one README run in the order given and share one simulator and one environment,
// as the README's terminals do.
type readmeSession struct {
	readme, first string
	// sim, when set, is the address of a simulator the session talks to without starting it
	// ("labelctl sim" in another terminal), with label MEDIUM stored as the README says.
	sim string
	// off is an address the session uses for a printer that is off: nothing listens there.
	off string
	// press is the printer of the README's last "labelctl sim" that is triggered once (as a
	// product passing the line would), while the session's command says it is waiting.
	press string
	// files are the files the session uses that the README cannot show (an image), written
	// before it starts.
	files map[string][]byte
}

var readmeSessions = []readmeSession{
	{readme: "README.md", first: "$ cat medium.json"},
	{readme: "README.md", first: "$ cat box.json"},
	{readme: "README.md", first: "$ labelctl labels lint pallet.json"},
	{readme: "README.md", first: "$ labelctl labels preview --file pallet.json -o pallet.png"},
	{readme: "README.md", first: "$ labelctl print job --lable MEDIUM"},
	{readme: "README.md", first: "$ labelctl print job --label MEDIUM --copies 3 --wait --wait-timeout 3s", press: "line1"},
	{readme: "README.md", first: "$ labelctl sim --addr 127.0.0.1:8634 --require-content-length", files: map[string][]byte{"logo.png": logoPNG()}},
	{readme: "../../outbox/README.md", first: "$ export LABELPRINTER_URL=http://127.0.0.1:8641 LABELPRINTER_PRINTER=line1",
		sim: "http://127.0.0.1:8641", off: "http://127.0.0.1:8699"},
}

// logoPNG is a 40 by 40 grey PNG stored without compression, so that its length, which the
// README prints, does not change with the encoder's compression.
func logoPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 40, 40))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// closedAddr returns a loopback URL where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	_ = ln.Close()
	return u
}

// TestREADMESessions runs the README's offline sessions as written: each "$ labelctl ..."
// line in process, "$ export" into the environment, "$ cat FILE" as the file the session uses
// (what the README shows is what the test writes), "$ cat FILE | labelctl ..." with the file
// as stdin (a pipe: its length unknown), $(stat -c %s FILE) as the file's length, and
// "$ labelctl sim FLAGS" as labelctl sim itself, with those flags at an address of the
// test's, whose lines until it serves must be the README's (one the README shows refused runs
// as any other command). Each command's output and exit code ("(exit N)", else 0) must be the
// README's, with the simulator's address and the times of day read as they come.
func TestREADMESessions(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	times := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\b\d\d:\d\d:\d\d\b`)
	dirs := map[string]string{}
	envs := map[string]map[string]string{}
	urls := map[string]map[string]string{} // each README's host:port to the test's
	sims := map[string]string{}            // each README's last "labelctl sim", its URL
	stat := regexp.MustCompile(`\$\(stat -c %s (\S+)\)`)
	for _, ses := range readmeSessions {
		first := ses.first
		readme, err := os.ReadFile(filepath.Join(wd, ses.readme))
		if err != nil {
			t.Fatal(err)
		}
		if dirs[ses.readme] == "" {
			dirs[ses.readme], envs[ses.readme], urls[ses.readme] = t.TempDir(), map[string]string{}, map[string]string{}
		}
		dir, env, addrs := dirs[ses.readme], envs[ses.readme], urls[ses.readme]
		t.Chdir(dir)
		if ses.sim != "" {
			srv := startSim(t)
			addrs[hostPort(ses.sim)] = hostPort(srv.URL)
			cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)
		}
		for name, data := range ses.files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if ses.off != "" {
			addrs[hostPort(ses.off)] = hostPort(closedAddr(t))
		}
		toTest := func(s string) string {
			for r, a := range addrs {
				s = strings.ReplaceAll(s, r, a)
			}
			return s
		}
		toREADME := func(s string) string {
			for r, a := range addrs {
				s = strings.ReplaceAll(s, a, r)
			}
			return s
		}
		var block string
		for _, b := range fencedBlocks(string(readme)) {
			if strings.HasPrefix(b, first+"\n") {
				block = b
			}
		}
		if block == "" {
			t.Errorf("%s has no session starting %q", ses.readme, first)
			continue
		}
		// Each command with the lines it prints, up to the next "$ ".
		var steps [][]string
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "$ ") {
				steps = append(steps, []string{line})
			} else if len(steps) > 0 {
				steps[len(steps)-1] = append(steps[len(steps)-1], line)
			}
		}
		for _, st := range steps {
			cmd, want := strings.TrimPrefix(st[0], "$ "), st[1:]
			code := 0
			if n := len(want); n > 0 && strings.HasPrefix(want[n-1], "(exit ") {
				code, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(want[n-1], "(exit "), ")"))
				want = want[:n-1]
			}
			if c, _, ok := strings.Cut(cmd, "   #"); ok { // a comment for the reader
				cmd = strings.TrimSpace(c)
			}
			// run is the command as the test runs it, with $(stat -c %s FILE) read and
			// "cat FILE |" as stdin; errors name cmd, as the README has it.
			run := stat.ReplaceAllStringFunc(cmd, func(m string) string {
				fi, err := os.Stat(filepath.Join(dir, stat.FindStringSubmatch(m)[1]))
				if err != nil {
					t.Fatal(err)
				}
				return strconv.FormatInt(fi.Size(), 10)
			})
			stdin := ""
			if c, rest, ok := strings.Cut(run, " | "); ok { // cat FILE | labelctl ...
				f := strings.Fields(c)
				if len(f) != 2 || f[0] != "cat" {
					t.Fatalf("%q: the test pipes only cat FILE", cmd)
				}
				b, err := os.ReadFile(filepath.Join(dir, f[1]))
				if err != nil {
					t.Fatal(err)
				}
				stdin, run = string(b), rest
			}
			args := strings.Fields(toTest(run))
			runEnv := env
			if k, v, ok := strings.Cut(args[0], "="); ok && !strings.Contains(k, "/") { // K=V command
				runEnv = map[string]string{k: v}
				for k, v := range env {
					if _, set := runEnv[k]; !set {
						runEnv[k] = v
					}
				}
				args = args[1:]
			}
			switch {
			case args[0] == "cat" && len(args) == 2:
				if err := os.WriteFile(filepath.Join(dir, args[1]), []byte(strings.Join(want, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			case args[0] == "export":
				for _, kv := range args[1:] {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
				continue
			case args[0] == "ls":
				out, err := exec.Command("ls", args[1:]...).CombinedOutput()
				ec := 0
				if ee, ok := err.(*exec.ExitError); ok {
					ec = ee.ExitCode()
				}
				if got, w := strings.TrimSuffix(string(out), "\n"), strings.Join(want, "\n"); ec != code || got != w {
					t.Errorf("%s:\nexit %d, printed\n%s\n%s says exit %d and\n%s", cmd, ec, got, ses.readme, code, w)
				}
				continue
			case len(args) > 1 && args[0] == "labelctl" && args[1] == "sim" && code == 0: // a refused one runs below
				// The simulator the README starts, with its flags, at an address of the test's;
				// what it prints until it serves must be the README's.
				simArgs, readmeAddr := append([]string(nil), args[1:]...), ""
				for i := range simArgs {
					if simArgs[i] == "--addr" && i+1 < len(simArgs) {
						readmeAddr, simArgs[i+1] = simArgs[i+1], "127.0.0.1:0"
					}
				}
				ctx, stop := context.WithCancel(context.Background())
				out, errOut, done := background(ctx, nil, simArgs...)
				t.Cleanup(func() {
					stop()
					if code := <-done; code != 0 {
						t.Errorf("%s exited %d: %s", cmd, code, errOut.String())
					}
				})
				waitFor(t, out, "\ntry: ")
				waitFor(t, out, " --watch\n")
				m := regexp.MustCompile(`at http://(\S+) `).FindStringSubmatch(out.String())
				if m == nil || readmeAddr == "" {
					t.Fatalf("%s printed %q", cmd, out.String())
				}
				addrs[readmeAddr], sims[ses.readme] = m[1], "http://"+m[1]
				if got, w := toREADME(strings.TrimSuffix(out.String()+errOut.String(), "\n")), strings.Join(want, "\n"); got != w {
					t.Errorf("%s:\nprinted\n%s\n%s says\n%s", cmd, got, ses.readme, w)
				}
				continue
			case args[0] != "labelctl":
				t.Fatalf("%q: the test runs labelctl, export and cat only", cmd)
			}
			for k, v := range runEnv {
				runEnv[k] = toTest(v)
			}
			var r result
			if ses.press != "" {
				// The person at the line presses the trigger once the command waits.
				out, errOut, done := background(context.Background(), runEnv, args[1:]...)
				waitFor(t, errOut, "waiting for")
				cli(t, context.Background(), nil, "", "--url", sims[ses.readme], "--printer", ses.press, "print", "trigger").ok(t)
				code := <-done
				r = result{code, out.String(), errOut.String()}
			} else {
				r = cli(t, context.Background(), runEnv, stdin, args[1:]...)
			}
			got := times.ReplaceAllString(toREADME(strings.TrimSuffix(r.stdout+r.stderr, "\n")), "TIME")
			w := times.ReplaceAllString(strings.Join(want, "\n"), "TIME")
			if r.code != code || got != w {
				t.Errorf("%s:\nexit %d, printed\n%s\n%s says exit %d and\n%s", cmd, r.code, got, ses.readme, code, w)
			}
		}
	}
}

// fencedBlocks returns the text of each fenced block of a Markdown document that names no
// language, fence by fence.
func fencedBlocks(doc string) []string {
	var out []string
	var cur []string
	in, plain := false, false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				if plain {
					out = append(out, strings.Join(cur, "\n"))
				}
				in, cur = false, nil
				continue
			}
			in, plain = true, strings.TrimSpace(line) == "```"
			continue
		}
		if in {
			cur = append(cur, line)
		}
	}
	return out
}

// hostPort is the host and port of a URL: the README's addresses are replaced in that form,
// which the URLs and the dial errors both print.
func hostPort(u string) string { return strings.TrimPrefix(u, "http://") }
