package mqttbridge

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The topic layout, in one place. P is <topic_prefix>/<printer name>.
const (
	topicOnline   = "bridge/online" // under the prefix: an OnlineState, retained
	topicStatus   = "status"        // P/status, retained
	topicCounters = "counters"      // P/counters, retained
	topicResult   = "result"        // P/result, QoS 1, not retained
	topicCmd      = "cmd"           // P/cmd/<command>
	// bridgeSegment is the prefix's own segment, so no printer may take it.
	bridgeSegment = "bridge"
)

// The commands, as the last segment of their topic.
const (
	cmdPrintJob   = "printJob"
	cmdTrigger    = "trigger"
	cmdAbortPrint = "abortPrint"
	cmdCancel     = "cancel"
	cmdResend     = "resend"
)

func onlineTopic(prefix string) string              { return prefix + "/" + topicOnline }
func printerTopic(prefix, name, leaf string) string { return prefix + "/" + name + "/" + leaf }
func commandFilter(prefix string) string            { return prefix + "/+/" + topicCmd + "/+" }

// commandResultTopic is where the results of a command on <prefix>/<segment>/cmd/... go:
// <prefix>/<segment>/result, or the bridge's own <prefix>/bridge/result when that would be
// longer than a topic name may be (a segment no printer has; a client would cut the name).
func commandResultTopic(prefix, segment string) string {
	if t := printerTopic(prefix, segment, topicResult); len(t) <= maxTopicLen {
		return t
	}
	return printerTopic(prefix, bridgeSegment, topicResult)
}

// parseCommandTopic splits <prefix>/<segment>/cmd/<command>; ok is false for any other topic.
func parseCommandTopic(prefix, topic string) (segment, command string, ok bool) {
	rest, found := strings.CutPrefix(topic, prefix+"/")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != topicCmd || parts[0] == "" {
		return "", "", false
	}
	return parts[0], parts[2], true
}

// checkTopicPrefix accepts one or more non-empty topic levels without wildcards; a leading
// "$" is the broker's own namespace.
func checkTopicPrefix(p string) error {
	if strings.HasPrefix(p, "$") {
		return errors.New("must not start with $ (the broker's own topics)")
	}
	for _, level := range strings.Split(p, "/") {
		if level == "" {
			return errors.New("has an empty level (a leading, trailing or double /)")
		}
		if err := checkLevel(level); err != nil {
			return err
		}
	}
	return nil
}

// checkSegment accepts one topic level for a printer's name.
func checkSegment(s string) error {
	switch {
	case s == "":
		return errors.New("required")
	case strings.Contains(s, "/"):
		return errors.New("must be one topic level (no /)")
	case s == bridgeSegment:
		return fmt.Errorf("%q is the bridge's own segment", s)
	}
	return checkLevel(s)
}

func checkLevel(s string) error {
	switch {
	case strings.ContainsAny(s, "+#"):
		return fmt.Errorf("%q holds an MQTT wildcard (+ or #)", s)
	case !utf8.ValidString(s), hasControl(s), strings.ContainsRune(s, 0):
		return errors.New("must be UTF-8 without control characters")
	}
	return nil
}

// checkRemoteName applies the SDK's rules for a printer name on its controller; "" is the
// single-printer paths.
func checkRemoteName(s string) error {
	switch {
	case s == "":
		return nil
	case s == "." || s == "..":
		return fmt.Errorf("%q would change the path", s)
	case !utf8.ValidString(s) || hasControl(s):
		return errors.New("must be UTF-8 without control characters")
	}
	return nil
}
