package printersim

import "errors"

// labelBudget is how many bytes of labels and table rows the page keeps to draw the pictures
// of kept prints, all printers together; a label several prints share counts once. Past it,
// the oldest prints' labels are let go: their pictures, unless already drawn, are no longer
// drawn, and their URLs say so.
const labelBudget = 32 << 20

// errLabelShed is the picture of a print whose label the page let go to stay within
// labelBudget before it was drawn.
var errLabelShed = errors.New("the label of this print is no longer kept to draw: the page keeps 32 MiB of the labels of its newest prints")

// keptLabels counts the labels and rows the page's kept prints hold to be drawn. It is under
// the simulator's lock; a record's content and row are also under its picture's lock, since
// the renderer reads them.
type keptLabels struct {
	budget int                // labelBudget; tests lower it
	refs   map[*byte]labelRef // the first byte of a label's bytes to the kept prints holding them
	bytes  int                // the bytes counted
	fifo   []*printRecord     // prints holding a label, oldest first; let-go ones until compacted
	live   int                // prints in fifo that still hold theirs
}

// rowBytes is what a table row holds: its cells' names and values and a map entry's overhead.
func rowBytes(row map[string]string) int {
	n := 0
	for k, v := range row {
		n += len(k) + len(v) + 48
	}
	return n
}

// labelRef is a kept label: how many kept prints hold it, and its size, read when the first of
// them came, so that the prints after it do not read the label again.
type labelRef struct {
	n    int
	size labelSize
}

// add counts r's label and row, letting the oldest go past labelBudget, and gives r the
// label's resolution and picture size.
func (k *keptLabels) add(r *printRecord) {
	if len(r.content) == 0 {
		return
	}
	if k.refs == nil {
		k.refs = map[*byte]labelRef{}
	}
	if k.budget == 0 {
		k.budget = labelBudget
	}
	key := &r.content[0]
	ref := k.refs[key]
	if ref.n == 0 {
		k.bytes += len(r.content)
		ref.size = sizeOf(r.content)
	}
	ref.n++
	k.refs[key] = ref
	r.hdpi, r.vdpi, r.width, r.height = ref.size.hdpi, ref.size.vdpi, ref.size.w, ref.size.h
	k.bytes += rowBytes(r.row)
	k.fifo = append(k.fifo, r)
	k.live++
	for k.bytes > k.budget && len(k.fifo) > 0 {
		old := k.fifo[0]
		k.fifo[0] = nil
		k.fifo = k.fifo[1:]
		if old.holdsLabel() {
			k.letGo(old)
		}
	}
}

// letGo uncounts r's label and row and lets r drop them; r stays in fifo until compacted.
func (k *keptLabels) letGo(r *printRecord) {
	r.pic.mu.Lock()
	content, row := r.content, r.row
	r.content, r.row = nil, nil
	r.pic.mu.Unlock()
	if len(content) == 0 {
		return
	}
	key := &content[0]
	if ref := k.refs[key]; ref.n > 1 {
		ref.n--
		k.refs[key] = ref
	} else {
		delete(k.refs, key)
		k.bytes -= len(content)
	}
	k.bytes -= rowBytes(row)
	k.live--
	// The prints that left are dropped from fifo once they are most of it, so that a printer
	// printing much while another holds the oldest label does not grow it.
	if len(k.fifo) > 64 && k.live < len(k.fifo)/2 {
		fifo := k.fifo[:0]
		for _, r := range k.fifo {
			if r.holdsLabel() {
				fifo = append(fifo, r)
			}
		}
		clear(k.fifo[len(fifo):])
		k.fifo = fifo
	}
}

// holdsLabel reports whether r still holds its label to be drawn.
func (r *printRecord) holdsLabel() bool {
	r.pic.mu.Lock()
	defer r.pic.mu.Unlock()
	return len(r.content) > 0
}

// drawn returns the label and row r's picture is drawn from; nil once let go.
func (r *printRecord) drawn() ([]byte, map[string]string) {
	r.pic.mu.Lock()
	defer r.pic.mu.Unlock()
	return r.content, r.row
}
