package mqttbridge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// expandHome turns a state_dir of "~" or "~/..." into the path under the user's home
// directory, so a configuration such as the example's can keep its state out of the
// directory it is read from without naming a user. Other paths are returned as they are.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		if strings.HasPrefix(p, "~") {
			return "", errors.New("only ~ and ~/ name a home directory (the current user's); write the path")
		}
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}
