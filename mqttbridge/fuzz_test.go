package mqttbridge

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzParseCommand: any payload either is refused or yields a command whose id obeys the id
// rule and whose job the SDK accepts; nothing panics.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","job":{"labelName":"x","copies":2}}`, `{"id":"a"}`, `{"id":"a","job":null,"expireAfter":"5m"}`,
		`{"id":"a","job":{"labelData":{"t":1},"extra":[1]}}`, `{"id":7}`, `[]`, `null`, "{\"id\":\"\xff\"}", `{"id":"a\u0000"}`,
		`{"id":"a","id":"b"}`, `{"id":"\ud800"}`, `{"id":"a","job":{"labelData":{"x":[{"k":1,"\u006b":2}]}}}`,
	} {
		f.Add("printJob", []byte(s))
		f.Add("trigger", []byte(s))
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
		if dup := duplicateMember(payload); dup != "" {
			t.Fatalf("accepted a payload with member %q twice in one object", dup)
		}
		if cmd.job != nil {
			if err := cmd.job.Validate(); err != nil {
				t.Fatalf("accepted a job the SDK refuses: %v", err)
			}
			if _, err := cmd.job.MarshalJSON(); err != nil {
				t.Fatalf("accepted a job that does not encode: %v", err)
			}
		}
		if cmd.name != cmdPrintJob && (cmd.job != nil || cmd.expireAfter != 0) {
			t.Fatalf("%s took printJob members", cmd.name)
		}
	})
}

// duplicateMember returns a member name that one object of payload holds twice, as
// encoding/json's tokens decode it, or "".
func duplicateMember(payload []byte) string {
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
			return ""
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
					return v
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
