package printersim

import "testing"

// TestUIPictureURLIsOne: a print's picture has one URL, {n}.png with n written as the list
// gives it; another spelling of the number (a sign, leading zeros, spaces, a huge or
// negative n) is a 404, so a browser never caches the same picture twice under two names.
func TestUIPictureURLIsOne(t *testing.T) {
	d := &testDrawer{}
	s := startSim(t, WithUI(), WithPictures(d.draw))
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":20,"objs":[]}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	for range 3 {
		s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	}
	s.want("GET", "/ui/printers/line1/prints/3.png", "", "", 200)
	for _, file := range []string{"+3.png", "03.png", "%203.png", "3.png%00", "-1.png", "99999999999999999999.png", "9223372036854775807.png", "3.PNG", "..%2F3.png"} {
		s.want("GET", "/ui/printers/line1/prints/"+file, "", "", 404)
	}
}
