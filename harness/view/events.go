package view

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// event says that a section has a new version; the page fetches that
// section alone (and only if it shows it), so an event is a few bytes
// whatever the size of the state.
type event struct {
	Section string `json:"section"`
	Version uint64 `json:"version"`
}

// broker fans events out to every open page. A page too slow to take an
// event loses it and is told to fetch everything (resync) instead of
// holding the others up.
type broker struct {
	mu   sync.Mutex
	subs map[chan event]bool
}

func newBroker() *broker { return &broker{subs: map[chan event]bool{}} }

func (b *broker) subscribe() chan event {
	c := make(chan event, 64)
	b.mu.Lock()
	b.subs[c] = true
	b.mu.Unlock()
	return c
}

func (b *broker) unsubscribe(c chan event) {
	b.mu.Lock()
	delete(b.subs, c)
	b.mu.Unlock()
}

func (b *broker) publish(e event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.subs {
		select {
		case c <- e:
		default:
			// Full: drop what is queued and ask for a resync.
			for len(c) > 0 {
				<-c
			}
			c <- event{Section: "*"}
		}
	}
}

// heartbeat keeps the stream open through idle periods.
const heartbeat = 20 * time.Second

// serveEvents is the page's server-sent event stream: first the current
// versions ("hello"), then one "change" per new section version.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		refuse(w, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	c := s.events.subscribe()
	defer s.events.unsubscribe(c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	hello, _ := json.Marshal(s.versions())
	fmt.Fprintf(w, "retry: 1000\nevent: hello\ndata: %s\n\n", hello)
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case e := <-c:
			b, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", b); err != nil {
				return
			}
		}
		fl.Flush()
	}
}
