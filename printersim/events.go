package printersim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// The page's live feed, GET /ui/events, is Server-Sent Events:
//
//   - "print": a trigger's list entry (a print or a bounce), with its id, one more than the
//     last; the ids count every printer's triggers since the simulator started, from a
//     number each run picks at random, so that an id of another run means a reload.
//   - "state": {"printer": name}: the printer's state, counters, job or queue changed.
//   - "reload": the client missed events that are no longer kept (or comes from another run
//     of the simulator): it should read the lists again.
//
// A client reconnecting with Last-Event-ID (or opening with ?after=id, the lastEvent of the
// list it read) first gets the print events it missed. A client too slow to take its events
// is disconnected rather than waited for, so it never holds up a trigger; its browser
// reconnects and is told what it missed. At most maxSubscribers clients read at once; when they
// all do, one more takes the place of the client whose stream has been open longest, if that is
// evictAfter or more (a page reconnects with Last-Event-ID and misses nothing; a client that
// reads nothing is gone), and is otherwise answered 503 with Retry-After (the page tries
// again). So clients that hold a stream and never read keep a new one out evictAfter at most.
const (
	// subscriberBuffer is how many events may wait for one client before it is let go.
	subscriberBuffer = 256
	// eventWriteTimeout is how long writing one event to a client may take.
	eventWriteTimeout = 10 * time.Second
	// keepAliveEvery is how often an idle stream gets a comment, so dead clients are noticed.
	keepAliveEvery = 15 * time.Second
	// eventBatch is how long an event may wait for the ones after it, to be written together.
	eventBatch = 20 * time.Millisecond
	// drainEvery is how often a batch being collected takes the events that came: often
	// enough that subscriberBuffer is not outrun below 100,000 events a second.
	drainEvery = 2 * time.Millisecond
	// maxSubscribers is how many clients may read the events at once: each costs a trigger a
	// send and holds up to subscriberBuffer events, so their number is bounded like the rest
	// of the page's memory. A page open in a few tabs is far below it.
	maxSubscribers = 64
	// evictAfter is how long a client holds its place among maxSubscribers before a new
	// client may take it (uiState.evictAfter; tests shorten it).
	evictAfter = 30 * time.Second
)

// event is one event of the feed; id 0 is sent without an id line.
type event struct {
	id    uint64
	name  string
	print printEntry
	state string // the printer of a state event
	data  []byte // the event as frame writes it, when encoded already
}

type subscriber struct {
	ch      chan event // closed when the client fell too far behind, its session ended, or a new client took its place
	since   time.Time  // when the client's stream opened
	session string     // the page session the client opened the events with, "" for none
}

// publish sends a trigger's entry to every client and keeps it for replay in the ring, a
// circular buffer: ringHead is the oldest of its len(ring) events, whose ids run to lastID.
// s.mu is held.
func (u *uiState) publish(r *printRecord) {
	ev := event{id: r.id, name: "print", print: r.entry()}
	if len(u.subs) > 0 {
		// Encoded once for every client, rather than by each client's goroutine; clipped, so
		// that a client appending to it copies it.
		ev.data = slices.Clip(frame(ev))
	}
	if len(u.ring) < cap(u.ring) {
		u.ring = append(u.ring, ev)
	} else {
		u.ring[u.ringHead] = ev
		u.ringHead = (u.ringHead + 1) % len(u.ring)
	}
	u.send(ev)
}

// changed tells every client that a printer's state changed. s.mu is held.
func (u *uiState) changed(printer string) {
	if u == nil {
		return
	}
	u.send(event{name: "state", state: printer})
}

func (u *uiState) send(ev event) {
	for sub := range u.subs {
		select {
		case sub.ch <- ev:
		default:
			close(sub.ch)
			delete(u.subs, sub)
		}
	}
}

// replay returns the kept events after id, and false when some of those are no longer kept
// (or id is from another run): the client must reload. s.mu is held.
func (u *uiState) replay(after uint64) ([]event, bool) {
	if after > u.lastID {
		return nil, false
	}
	missed := u.lastID - after
	if missed > uint64(len(u.ring)) {
		return nil, false
	}
	out := make([]event, 0, missed)
	for i := len(u.ring) - int(missed); i < len(u.ring); i++ {
		out = append(out, u.ring[(u.ringHead+i)%len(u.ring)])
	}
	return out, true
}

func (s *Simulator) uiEvents(w http.ResponseWriter, r *http.Request) {
	after, hasAfter := uint64(0), false
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Last-Event-ID and after are event ids (whole numbers), not "+strconv.Quote(v))
			return
		}
		after, hasAfter = n, true
		break
	}
	rc := http.NewResponseController(w)
	sub := &subscriber{ch: make(chan event, subscriberBuffer), session: s.sessionOf(r), since: time.Now()}
	s.mu.Lock()
	if len(s.ui.subs) >= maxSubscribers {
		s.ui.evictOldest(sub.since)
	}
	if len(s.ui.subs) >= maxSubscribers {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "the events already have "+strconv.Itoa(maxSubscribers)+" clients, the most they take, none open for "+s.ui.evictAfter.String()+" yet, when one gives its place to a new client: close a page or a client, or ask again")
		return
	}
	var missed []event
	complete, current := true, s.ui.lastID
	if hasAfter {
		missed, complete = s.ui.replay(after)
	}
	s.ui.subs[sub] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.ui.subs, sub)
		s.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: 1000\n\n")) {
		return
	}
	// The reload carries the current id, so a reconnection after it asks only for what follows.
	if !complete && !write(frame(event{id: current, name: "reload"})) {
		return
	}
	for _, ev := range missed {
		if !write(frame(ev)) {
			return
		}
	}
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			// A session that expired ends its clients' events, as a logout does.
			if sub.session != "" && !s.uiSessionOpen(sub.session) {
				return
			}
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case ev, ok := <-sub.ch:
			if !ok {
				return // too slow (it reconnects with Last-Event-ID), or its session ended
			}
			// The events that follow within eventBatch go out in the same write, so a line
			// at full speed costs the client's connection one write per batch, not per print.
			// They are taken every drainEvery rather than as each comes, so that a trigger
			// wakes no client's goroutine while it collects.
			buf := frame(ev)
			end := time.Now().Add(eventBatch)
			pause := time.NewTimer(drainEvery)
		collect:
			for {
				for more := true; more; {
					select {
					case ev, ok := <-sub.ch:
						if !ok {
							pause.Stop()
							write(buf)
							return
						}
						buf = append(buf, frame(ev)...)
					default:
						more = false
					}
				}
				if !time.Now().Before(end) {
					pause.Stop()
					break collect
				}
				pause.Reset(drainEvery)
				select {
				case <-pause.C:
				case <-r.Context().Done():
					pause.Stop()
					return
				}
			}
			if !write(buf) {
				return
			}
		}
	}
}

// frame writes an event in the SSE format; its data is one line of JSON.
func frame(ev event) []byte {
	if ev.data != nil {
		return ev.data
	}
	var data []byte
	switch ev.name {
	case "print":
		data, _ = json.Marshal(ev.print)
	case "state":
		data, _ = json.Marshal(map[string]string{"printer": ev.state})
	default:
		data = []byte("{}")
	}
	b := make([]byte, 0, len(data)+48)
	if ev.id != 0 {
		b = fmt.Appendf(b, "id: %d\n", ev.id)
	}
	b = fmt.Appendf(b, "event: %s\ndata: %s\n\n", ev.name, data)
	return b
}

// endSession lets go of the clients reading the events with a session that ended: their page
// comes back without it and is shown the login form. s.mu is held.
func (u *uiState) endSession(session string) {
	for sub := range u.subs {
		if sub.session == session {
			close(sub.ch)
			delete(u.subs, sub)
		}
	}
}

// evictOldest ends the stream of the client open longest, when it has been open evictAfter or
// more by now, to give its place to a new client. s.mu is held.
func (u *uiState) evictOldest(now time.Time) {
	var oldest *subscriber
	for sub := range u.subs {
		if oldest == nil || sub.since.Before(oldest.since) {
			oldest = sub
		}
	}
	if oldest != nil && now.Sub(oldest.since) >= u.evictAfter {
		close(oldest.ch)
		delete(u.subs, oldest)
	}
}
