package state

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// history.json only grows: a harness closing a cycle rewrites the file
// with one more cycle at the end of "cycles", and archived cycles never
// change. A reader that walked the file once keeps a HistoryMark: how many
// bytes of it it read through its last cycle, and their hash. Reading the
// file again from the mark costs a hash of those bytes (no parsing) and a
// parse of what follows them: the new cycles only. When the bytes differ
// (a cycle edited, the file replaced by another), the file is read again
// from its start.

// HistoryMark is how far a reader has read history.json: through its
// cycles-th cycle, prefix bytes whose hash is sum. The zero mark has read
// nothing.
type HistoryMark struct {
	id       fileID
	idKnown  bool
	verified time.Time
	prefix   int64
	sum      uint64
	cycles   int
}

// Cycles is the number of cycles the mark covers.
func (m HistoryMark) Cycles() int { return m.cycles }

// racy is cacheEntry.racy for the mark: a change after verified could
// have left the file's identity unchanged.
func (m HistoryMark) racy() bool {
	return !m.idKnown || m.verified.Sub(m.id.changed()) < racyWindow
}

// ReadHistorySince walks the cycles of history.json that mark has not
// covered, calling fn with each (raw, valid during the call): when the
// file still begins with the bytes mark covers, only the cycles after
// them; otherwise, after calling restart, every cycle from the first. It
// returns the mark for what it has read. A missing file has no cycles.
// The file is read beneath the layout's anchor through MaxHistoryBytes; a
// file that is not a JSON object whose "cycles" is an array is a
// *CorruptError. An error of fn ends the walk and is returned as it is.
func (s *Store) ReadHistorySince(mark HistoryMark, restart func(), fn func(raw []byte) error) (HistoryMark, error) {
	p := s.L.HistoryPath()
	if mark.prefix > 0 && !mark.racy() {
		if st, err := os.Stat(p); err == nil {
			if id, ok := idOf(st); ok && id == mark.id {
				return mark, nil
			}
		}
	}
	f, st, err := s.L.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		restart()
		return HistoryMark{}, nil
	}
	if err != nil {
		return HistoryMark{}, err
	}
	defer f.Close()
	if st.Size() > MaxHistoryBytes {
		return HistoryMark{}, &safefile.TooLargeError{Path: p, Limit: MaxHistoryBytes}
	}
	id, idKnown := idOf(st)
	now := time.Now()
	corrupt := func(err error) error {
		var tl *safefile.TooLargeError
		if errors.As(err, &tl) {
			return tl
		}
		return &CorruptError{Path: p, Reason: "not valid JSON: " + err.Error()}
	}
	r := safefile.Reader(f, p, MaxHistoryBytes)
	if mark.prefix > 0 && st.Size() >= mark.prefix {
		h := maphash.Hash{}
		h.SetSeed(hashSeed)
		if _, err := io.CopyN(&h, r, mark.prefix); err != nil {
			return HistoryMark{}, corrupt(err)
		}
		if h.Sum64() == mark.sum {
			tail, err := io.ReadAll(r)
			if err != nil {
				return HistoryMark{}, corrupt(err)
			}
			n, cycles, ok, err := appendedCycles(tail, mark.cycles > 0, fn)
			if err != nil {
				return HistoryMark{}, err
			}
			if ok {
				h.Write(tail[:n])
				m := HistoryMark{id: id, idKnown: idKnown, verified: now, prefix: mark.prefix + int64(n), sum: h.Sum64(), cycles: mark.cycles + cycles}
				s.cache.setHistoryMark(m)
				return m, nil
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return HistoryMark{}, err
		}
		r = safefile.Reader(f, p, MaxHistoryBytes)
	}
	restart()
	m, err := walkHistory(r, fn)
	if err != nil {
		var fe fnError
		if errors.As(err, &fe) {
			return HistoryMark{}, fe.err
		}
		return HistoryMark{}, corrupt(err)
	}
	m.id, m.idKnown, m.verified = id, idKnown, now
	s.cache.setHistoryMark(m)
	return m, nil
}

// fnError carries an error of the caller's fn through the walk.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// appendedCycles parses tail, what follows the bytes a mark covers: a run
// of cycles (each after a comma when the mark covers one; a '[' ends the
// bytes a mark without cycles covers), the array's end and the rest of
// the object. It calls fn with each cycle and returns how many bytes of
// tail run through the last one and how many there are; ok is false (and
// the file must be read whole) unless all of tail is as described and no
// other "cycles" member follows. An error of fn is returned.
func appendedCycles(tail []byte, afterCycle bool, fn func(raw []byte) error) (n, cycles int, ok bool, err error) {
	// The cycles as they stand in the array: after a stand-in for the
	// last cycle read (a value no byte can continue), or after the '['.
	syn := make([]byte, 0, len(tail)+3)
	syn = append(syn, '[')
	if afterCycle {
		syn = append(syn, "{}"...)
	}
	base := len(syn)
	syn = append(syn, tail...)
	dec := jsontext.NewDecoder(bytes.NewBuffer(syn), readOpts)
	if _, err := dec.ReadToken(); err != nil {
		return 0, 0, false, nil
	}
	if afterCycle {
		if v, err := dec.ReadValue(); err != nil || dec.InputOffset() != int64(base) || string(v) != "{}" {
			return 0, 0, false, nil
		}
	}
	n = 0
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return 0, cycles, false, nil
		}
		cycles++
		if err := fn(v); err != nil {
			return 0, cycles, false, err
		}
		n = int(dec.InputOffset()) - base
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, cycles, false, nil
	}
	// The rest is the rest of the object: checked as the members after
	// one member ("":0), with no second "cycles".
	rest := append([]byte(`{"":0`), syn[dec.InputOffset():]...)
	dec = jsontext.NewDecoder(bytes.NewBuffer(rest), readOpts)
	if _, err := dec.ReadToken(); err != nil {
		return 0, cycles, false, nil
	}
	for first := true; dec.PeekKind() != '}'; first = false {
		name, err := dec.ReadToken()
		if err != nil || !first && name.String() == "cycles" {
			return 0, cycles, false, nil
		}
		if err := dec.SkipValue(); err != nil {
			return 0, cycles, false, nil
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, cycles, false, nil
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return 0, cycles, false, nil
	}
	return n, cycles, true, nil
}

// walkHistory reads history.json from its start, streaming (memory holds
// one cycle, not the file), calls fn with each cycle and returns the mark
// of the bytes through the last one. A file with no "cycles" array, or
// with two, gets a zero mark (the next read reads it whole again); a
// "cycles" that is not an array is an error.
func walkHistory(r io.Reader, fn func(raw []byte) error) (HistoryMark, error) {
	hr := &hashingReader{r: r}
	hr.h.SetSeed(hashSeed)
	dec := jsontext.NewDecoder(hr, readOpts)
	if tok, err := dec.ReadToken(); err != nil {
		return HistoryMark{}, err
	} else if tok.Kind() != '{' {
		return HistoryMark{}, errors.New("history.json is not a JSON object")
	}
	var m HistoryMark
	arrays := 0
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return HistoryMark{}, err
		}
		if name.String() != "cycles" {
			if err := dec.SkipValue(); err != nil {
				return HistoryMark{}, err
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil {
			return HistoryMark{}, err
		} else if tok.Kind() != '[' {
			return HistoryMark{}, errors.New(`history.json's "cycles" is not an array`)
		}
		arrays++
		hr.advance(dec.InputOffset())
		for dec.PeekKind() != ']' {
			raw, err := dec.ReadValue()
			if err != nil {
				return HistoryMark{}, err
			}
			if err := fn(raw); err != nil {
				return HistoryMark{}, fnError{err}
			}
			m.cycles++
			hr.advance(dec.InputOffset())
		}
		m.prefix, m.sum = hr.off, hr.h.Sum64()
		if _, err := dec.ReadToken(); err != nil {
			return HistoryMark{}, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return HistoryMark{}, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level object")
		}
		return HistoryMark{}, err
	}
	if arrays != 1 {
		return HistoryMark{cycles: m.cycles}, nil
	}
	return m, nil
}

// hashingReader hashes what it has read up to an offset the reader of its
// bytes names (advance): the decoder reads ahead, and the mark must cover
// exactly the bytes through a cycle.
type hashingReader struct {
	r       io.Reader
	h       maphash.Hash
	off     int64  // bytes hashed
	pending []byte // pending[start:] are the bytes read after off
	start   int
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	if hr.start > 0 && hr.start >= len(hr.pending)/2 {
		hr.pending = append(hr.pending[:0], hr.pending[hr.start:]...)
		hr.start = 0
	}
	hr.pending = append(hr.pending, p[:n]...)
	return n, err
}

// advance hashes the bytes before offset to.
func (hr *hashingReader) advance(to int64) {
	k := int(to - hr.off)
	if k < 0 || k > len(hr.pending)-hr.start {
		panic(fmt.Sprintf("state: hash history to %d with %d bytes read after %d", to, len(hr.pending)-hr.start, hr.off))
	}
	hr.h.Write(hr.pending[hr.start : hr.start+k])
	hr.start += k
	hr.off = to
}

// The store keeps the latest mark any read of history.json made (or its
// own append left), so closing a cycle finds the end of the cycles
// without parsing them.

func (c *fileCache) historyMark() HistoryMark {
	if c == nil {
		return HistoryMark{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.history
}

func (c *fileCache) setHistoryMark(m HistoryMark) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history = m
}

// markHistory records the mark of a history.json the store just wrote:
// data, whose cycles (count of them) end at end.
func (s *Store) markHistory(data []byte, end, count int) {
	st, err := os.Stat(s.L.HistoryPath())
	if err != nil {
		s.cache.setHistoryMark(HistoryMark{})
		return
	}
	id, idKnown := idOf(st)
	s.cache.setHistoryMark(HistoryMark{id: id, idKnown: idKnown, verified: time.Now(), prefix: int64(end), sum: hashBytes(data[:end]), cycles: count})
}

// appendPoint returns where a new cycle goes in a history.json laid out as
// nexus writes it (the cycles two spaces in, each four: the bytes after
// the last cycle are "\n  ]", or "]" right after the '[' of no cycles),
// and how many cycles it has; -1 for any other file. The bytes through
// the last cycle are found from mark when data still begins with the
// bytes mark covers (hashed, not parsed), else by reading data whole.
func appendPoint(data []byte, mark HistoryMark) (at, cycles int) {
	at = -1
	if mark.prefix > 0 && int64(len(data)) >= mark.prefix && hashBytes(data[:mark.prefix]) == mark.sum {
		if n, k, ok, _ := appendedCycles(data[mark.prefix:], mark.cycles > 0, func([]byte) error { return nil }); ok {
			at, cycles = int(mark.prefix)+n, mark.cycles+k
		}
	}
	if at < 0 {
		m, err := walkHistory(bytes.NewReader(data), func([]byte) error { return nil })
		if err != nil || m.prefix == 0 {
			return -1, 0
		}
		at, cycles = int(m.prefix), m.cycles
	}
	rest := data[at:]
	switch {
	case cycles > 0 && bytes.HasPrefix(rest, []byte("\n  ]")):
	case cycles == 0 && bytes.HasPrefix(rest, []byte("]")) && at > 0 && data[at-1] == '[':
	default:
		return -1, 0
	}
	return at, cycles
}
