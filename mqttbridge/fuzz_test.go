package mqttbridge

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseCommand: any payload either is refused or yields a command whose id obeys the id
// rule and whose job the SDK accepts; nothing panics.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","job":{"labelName":"x","copies":2}}`, `{"id":"a"}`, `{"id":"a","job":null,"expireAfter":"5m"}`,
		`{"id":"a","job":{"labelData":{"t":1},"extra":[1]}}`, `{"id":"a","job":{"labelName":"x","repeatPrint":1}}`, `{"id":7}`, `[]`, `null`, "{\"id\":\"\xff\"}", `{"id":"a\u0000"}`,
		`{"id":"a","id":"b"}`, `{"id":"\ud800"}`, `{"id":"a","job":{"labelData":{"x":[{"k":1,"\u006b":2}]}}}`,
	} {
		f.Add("printJob", []byte(s))
		f.Add("trigger", []byte(s))
	}
	for _, s := range []string{`{"id":"a","attempts":1}`, `{"id":"a"}`, `{"id":"a","attempts":-1}`, `{"id":"a","attempts":1.0}`, `{"id":"a","attempts":"1"}`, `{"id":"a","attempts":99999999999999999999}`} {
		f.Add("resend", []byte(s))
		f.Add("cancel", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		cmd, err := parseCommand(name, payload)
		if err != nil {
			if cmd.id != "" && checkID(cmd.id) != nil {
				t.Fatalf("refused command names an unusable id %q", cmd.id)
			}
			return
		}
		if checkID(cmd.id) != nil || !utf8.ValidString(cmd.id) {
			t.Fatalf("accepted id %q", cmd.id)
		}
		if dup, ok := duplicateMember(payload); ok {
			t.Fatalf("accepted a payload with member %q twice in one object", dup)
		}
		if cmd.job != nil {
			if err := cmd.job.Validate(); err != nil {
				t.Fatalf("accepted a job the SDK refuses: %v", err)
			}
			if _, err := cmd.job.MarshalJSON(); err != nil {
				t.Fatalf("accepted a job that does not encode: %v", err)
			}
			for k := range cmd.job.Extra {
				if !slices.Contains(untypedJobAttributes, k) {
					t.Fatalf("accepted the undocumented job attribute %q", k)
				}
			}
		}
		if cmd.name != cmdPrintJob && cmd.job != nil || cmd.name != cmdPrintJob && cmd.name != cmdTrigger && cmd.expireAfter != 0 {
			t.Fatalf("%s took printJob members", cmd.name)
		}
		if cmd.job != nil && len(cmd.job.LabelData) > 0 && bytes.TrimSpace(cmd.job.LabelData)[0] != '{' {
			t.Fatalf("accepted labelData %s, not an object", cmd.job.LabelData)
		}
		if cmd.attempts != nil && (*cmd.attempts < 0 || cmd.name != cmdCancel && cmd.name != cmdResend) {
			t.Fatalf("%s took attempts %d", cmd.name, *cmd.attempts)
		}
		if cmd.attempts == nil && (cmd.name == cmdCancel || cmd.name == cmdResend) {
			t.Fatalf("%s accepted without attempts", cmd.name)
		}
	})
}

// duplicateMember returns a member name that one object of payload holds twice, as
// encoding/json's tokens decode it, and true; false when there is none.
func duplicateMember(payload []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	type frame struct {
		obj  bool
		key  bool
		keys map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', key: true, keys: map[string]bool{}})
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return v, true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

var (
	escapedBackslash = regexp.MustCompile(`\\\\`)
	surrogatePair    = regexp.MustCompile(`(?i)\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}`)
	surrogateEscape  = regexp.MustCompile(`(?i)\\ud[89a-f][0-9a-f]{2}`)
)

// FuzzStrictJSON holds checkStrictJSON to references built another way: encoding/json's
// tokens for the structure and the member names (a name twice in one object), and, for each
// string's literal as written (cut out at the decoder's offsets), regular expressions that
// take out escaped backslashes and whole surrogate pairs and look for any surrogate escape
// left.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"a"}`, `{"id":"a","id":"b"}`, `{"id":"\ud800"}`, `{"id":"\ud83d\ude00"}`, `{"id":"\\ud800"}`,
		`{"a":{"b":[{"c":1,"\u0063":2}]}}`, `[{"a":1},{"a":1}]`, `{"\udfff":1}`, `{"a":"\"\\\ud800"}`, `"\ud800"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if !utf8.Valid(payload) || !json.Valid(payload) {
			return
		}
		got := checkStrictJSON(payload)
		lone := false
		dec := json.NewDecoder(bytes.NewReader(payload))
		prev := int64(0)
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			end := dec.InputOffset()
			if _, ok := tok.(string); ok {
				lit := strings.TrimLeft(string(payload[prev:end]), " \t\r\n,:")
				lit = escapedBackslash.ReplaceAllString(lit, "BB")
				lit = surrogatePair.ReplaceAllString(lit, "PP")
				lone = lone || surrogateEscape.MatchString(lit)
			}
			prev = end
		}
		_, dup := duplicateMember(payload)
		dup = dup && !lone
		switch {
		case got == nil && (lone || dup):
			t.Fatalf("accepted %q: lone surrogate %v, a member twice %v", payload, lone, dup)
		case got != nil && !lone && !dup:
			t.Fatalf("refused %q: %v", payload, got.msg)
		case got != nil && lone && !strings.Contains(got.msg, "surrogate"):
			t.Fatalf("%q: %v, want the lone surrogate named", payload, got.msg)
		}
	})
}

// FuzzJSONMember: of any JSON object, jsonMember finds what encoding/json finds decoding it into
// a map: the same member's value, byte for byte, and nothing when it has none.
func FuzzJSONMember(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","job":{"labelName":"x","job":1}}`, `{"id":"a","job":null}`, ` { "job" : [1,{"a":"}"}] , "id" : "\"" } `,
		`{"\u006aob":1}`, `{"job":1,"job":2}`, `{"a":{"job":1}}`, `{}`, `{"j\"ob":true,"id":-1.5e3}`, `{"id":"\ud83d\ude00","job":"\\"}`,
	} {
		f.Add([]byte(s), "job")
		f.Add([]byte(s), "id")
	}
	f.Fuzz(func(t *testing.T, obj []byte, name string) {
		var members map[string]json.RawMessage
		if !json.Valid(obj) || json.Unmarshal(obj, &members) != nil || members == nil {
			return // not an object: jsonMember is not asked
		}
		if !utf8.ValidString(name) || strings.ContainsRune(name, utf8.RuneError) {
			return // no name a decoded member could be without being changed
		}
		want, wantOK := members[name]
		got, ok := jsonMember(obj, name)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("%s, member %q: %q %v; encoding/json: %q %v", obj, name, got, ok, want, wantOK)
		}
	})
}
