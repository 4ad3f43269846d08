package mqttbridge

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxTopicLen is MQTT's bound on a topic name: a UTF-8 string of at most 65,535 bytes.
const maxTopicLen = 65535

// checkResponseTopic says why the bridge will not publish a command's results to its MQTT 5
// Response Topic t, or returns nil. A topic name that is not valid (wildcards, empty, too long,
// NUL or other control characters, a Unicode non-character, or invalid UTF-8) is a protocol
// error a broker such as mosquitto answers by disconnecting; a topic under the bridge's own
// prefix would let a caller publish as the bridge (its status, its results); a topic starting
// with "$" is the broker's own.
func checkResponseTopic(prefix, t string) error {
	switch {
	case t == "":
		return fmt.Errorf("the Response Topic is empty")
	case len(t) > maxTopicLen:
		return fmt.Errorf("the Response Topic is longer than %d bytes", maxTopicLen)
	case !utf8.ValidString(t):
		return fmt.Errorf("the Response Topic is not UTF-8")
	case strings.ContainsAny(t, "+#"):
		return fmt.Errorf("the Response Topic %q holds an MQTT wildcard (+ or #), which no message can be published to", clip(t))
	case strings.ContainsRune(t, 0) || hasControl(t):
		return fmt.Errorf("the Response Topic %q holds a NUL or another control character", clip(t))
	case hasNonCharacter(t):
		return fmt.Errorf("the Response Topic %q holds a Unicode non-character", clip(t))
	case strings.HasPrefix(t, "$"):
		return fmt.Errorf("the Response Topic %q starts with $, the broker's own topics", clip(t))
	case t == prefix || strings.HasPrefix(t, prefix+"/"):
		return fmt.Errorf("the Response Topic %q lies under the bridge's own topics (%s/)", clip(t), prefix)
	}
	return nil
}

// hasNonCharacter reports whether s holds a Unicode non-character (U+FDD0 to U+FDEF, or the
// last two code points of a plane), which MQTT's UTF-8 strings must not hold and mosquitto
// refuses.
func hasNonCharacter(s string) bool {
	for _, r := range s {
		if r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe {
			return true
		}
	}
	return false
}
