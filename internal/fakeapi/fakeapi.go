// Package fakeapi is what the scripted model APIs the end-to-end tests
// run real hosts against (fakeanthropic, fakeresponses, fakechat) share:
// the recorded requests a test reads after a session, the scripted turns
// and which of them answered. Each API's wire format stays in its own
// package.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// Exchange is what every fake API records of one HTTP request, in
// arrival order.
type Exchange struct {
	Seq    int
	At     time.Time
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	// Turn is the name of the scripted turn that answered, "" when the
	// default reply did.
	Turn string
}

// Recorded is an API's request type: a pointer to a struct that embeds
// Exchange.
type Recorded interface{ exchange() *Exchange }

func (e *Exchange) exchange() *Exchange { return e }

// maxBody bounds a request body; a host's request carries the whole
// conversation and its tool list (tens to hundreds of KB).
const maxBody = 32 << 20

// Read reads a request's body (bounded) into an Exchange; on failure it
// has answered 400 and returns false.
func Read(w http.ResponseWriter, hr *http.Request) (Exchange, bool) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return Exchange{}, false
	}
	return Exchange{At: time.Now(), Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}, true
}

// Turn is one scripted model answer to a request of type Q, with a reply
// of type P.
type Turn[Q, P any] struct {
	Name string
	When func(*Q) bool
	// Reply is the answer; Do, when set, computes it from the request
	// instead.
	Reply P
	Do    func(*Q) P
	// Repeat lets the turn answer any number of matching requests instead
	// of one.
	Repeat bool
}

// Answer is the turn's reply to q; def when there is no turn.
func (t *Turn[Q, P]) Answer(q *Q, def P) P {
	switch {
	case t == nil:
		return def
	case t.Do != nil:
		return t.Do(q)
	}
	return t.Reply
}

// Script is the log of a fake API's requests and its scripted turns. It
// is safe for concurrent requests (hosts run subagents in parallel).
type Script[Q, P any, R Recorded] struct {
	mu       sync.Mutex
	turns    []Turn[Q, P]
	used     []int
	requests []R
}

// NewScript scripts turns.
func NewScript[Q, P any, R Recorded](turns []Turn[Q, P]) *Script[Q, P, R] {
	return &Script[Q, P, R]{turns: turns, used: make([]int, len(turns))}
}

// Record stores the request and, when q is set (a model call), picks the
// first turn that may still answer and matches it.
func (s *Script[Q, P, R]) Record(r R, q *Q) *Turn[Q, P] {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.add(r)
	if q == nil {
		return nil
	}
	for i := range s.turns {
		t := &s.turns[i]
		if (t.Repeat || s.used[i] == 0) && t.When != nil && t.When(q) {
			s.used[i]++
			e.Turn = t.Name
			return t
		}
	}
	return nil
}

// RecordAs stores a request answered by something other than a turn,
// named turn.
func (s *Script[Q, P, R]) RecordAs(r R, turn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(r).Turn = turn
}

func (s *Script[Q, P, R]) add(r R) *Exchange {
	e := r.exchange()
	e.Seq = len(s.requests) + 1
	s.requests = append(s.requests, r)
	return e
}

// Requests returns the recorded requests so far, in arrival order.
func (s *Script[Q, P, R]) Requests() []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]R(nil), s.requests...)
}

// Answered returns the request a named turn answered (the first one for a
// repeating turn).
func (s *Script[Q, P, R]) Answered(turn string) (R, bool) {
	for _, r := range s.Requests() {
		if r.exchange().Turn == turn {
			return r, true
		}
	}
	var none R
	return none, false
}

// Unused names the non-repeating turns that have not answered any request.
func (s *Script[Q, P, R]) Unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, t := range s.turns {
		if !t.Repeat && s.used[i] == 0 {
			out = append(out, t.Name)
		}
	}
	return out
}

// Dump writes every recorded request as one JSON line, for reading a
// failed session.
func (s *Script[Q, P, R]) Dump(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dump requests: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, r := range s.Requests() {
		e := r.exchange()
		var body any = string(e.Body)
		if json.Valid(e.Body) {
			body = json.RawMessage(e.Body)
		}
		if err := enc.Encode(map[string]any{"seq": e.Seq, "method": e.Method, "path": e.Path, "query": e.Query, "turn": e.Turn, "body": body}); err != nil {
			f.Close()
			return fmt.Errorf("dump requests: %w", err)
		}
	}
	return f.Close()
}

// Halves splits s in two non-empty pieces at a rune boundary (one piece
// when s has a single rune, none when it is empty), so that a client that
// keeps only the last streamed delta fails.
func Halves(s string) []string {
	if s == "" {
		return nil
	}
	h := len(s) / 2
	for h > 0 && s[h]&0xC0 == 0x80 { // a UTF-8 continuation byte
		h--
	}
	if h == 0 {
		return []string{s}
	}
	return []string{s[:h], s[h:]}
}
