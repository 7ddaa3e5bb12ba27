package state

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// plan.json, tasks.json and agent-tracker.json are each one array of
// independent items (issues, tasks, agent entries) and a few members
// around it. A file another process rewrote usually differs from the
// version this process knows in an item or two, so the store keeps, for
// the version it knows, its bytes, where each item lies in them, each
// item's decoded value, its encoding and whether it was checked against
// its schema. Reading a new version re-uses all of that for every item
// whose bytes did not change and decodes only the others; a commit checks
// the members around the array and the items not known valid (see
// Tx.validate), which for these schemas is the whole document's check
// (ItemSplitter).
//
// A new version is read in one of three ways:
//   - against the version before it, when both share everything but a
//     run of items: the bytes the two have in common at the start and at
//     the end are found by comparison (no parsing), and only the bytes
//     between are parsed, as a run of items in their place in the array;
//   - otherwise item by item with jsontext, each item's bytes looked up
//     among the previous version's (moved or re-ordered items are found
//     by hash, confirmed byte for byte);
//   - whole, when the file does not have the expected shape (no array
//     member, the member twice, invalid JSON: the error is the decoder's).
// Each gives the value decoding the whole file gives (FuzzDecodeItemsMatchesDecode).

// item is what the store knows of one item of a version of a file.
type item struct {
	// start and end delimit the item's bytes in the version's data.
	start, end int
	// compact is MarshalCompact's rendering, nil until asked for
	// (guarded by itemSet.mu: readers fill it).
	compact []byte
	// valid: the decoded item matches its schema (checked at a commit,
	// and carried over while its bytes stay the same).
	valid bool
	// encoded: the item's bytes are Encode's rendering of the decoded
	// item at its depth in the file (in a file nexus wrote, and in later
	// versions that kept them), so a write copies them.
	encoded bool
}

// itemSet is what the store knows of the items of one version of a file,
// parallel to the items of its decoded value.
type itemSet struct {
	data  []byte // the version's bytes
	open  int    // offset of the array's '['
	close int    // offset of the array's ']'
	items []item
	// shell is the file with its array emptied, as Encode renders it;
	// set for a version a transaction staged.
	shell []byte

	mu     sync.Mutex // guards the items' compact renderings
	hashMu sync.Mutex
	byHash map[uint64]int // hash of item i's bytes → i, built on first need
}

func (s *itemSet) raw(i int) []byte { return s.data[s.items[i].start:s.items[i].end] }

// carry returns what s knows of its item j for a later version that has
// the same bytes at start..end (s.mu is held).
func (s *itemSet) carry(j int, start, end int) item {
	p := &s.items[j]
	return item{start: start, end: end, encoded: p.encoded, compact: p.compact, valid: p.valid}
}

// find returns the index of the item of s whose bytes are raw (the one
// at i first: most items keep their place), or -1.
func (s *itemSet) find(i int, raw []byte) int {
	if i < len(s.items) && bytes.Equal(s.raw(i), raw) {
		return i
	}
	s.hashMu.Lock()
	if s.byHash == nil {
		s.byHash = make(map[uint64]int, len(s.items))
		for j := range s.items {
			s.byHash[hashBytes(s.raw(j))] = j
		}
	}
	j, ok := s.byHash[hashBytes(raw)]
	s.hashMu.Unlock()
	if ok && bytes.Equal(s.raw(j), raw) {
		return j
	}
	return -1
}

// findIn is find for an item of an edit's middle: an item the edit kept
// there came from the previous version's middle (items lo..hi-1), so
// those are compared first; the index by hash is built only for a long
// middle.
func (s *itemSet) findIn(i int, raw []byte, lo, hi int) int {
	if hi-lo > 32 {
		return s.find(i, raw)
	}
	if i < len(s.items) && bytes.Equal(s.raw(i), raw) {
		return i
	}
	for m := lo; m < hi; m++ {
		if bytes.Equal(s.raw(m), raw) {
			return m
		}
	}
	return -1
}

// arrayDoc describes one file whose bulk is an array of items: V is the
// file's decoded value, T an item.
type arrayDoc[V, T any] struct {
	// member is the array's member of the top-level object; "" when the
	// file is the array itself.
	member string
	// indent is what follows a newline inside an item as Encode writes
	// the file (the item's depth).
	indent []byte
	items  func(*V) *[]T
	equal  func(a, b *T) bool
	clone  func(*V) *V // a copy whose items may be replaced
	// label names an item in an error ("task 4").
	label func(*T) string
}

// itemDoc is an arrayDoc with its types erased, as the store holds them.
type itemDoc interface {
	// decode decodes a version of the file, re-using what prev (the
	// previous version's value and items, or nil) knows of every item
	// whose bytes are unchanged.
	decode(data []byte, prevValue any, prev *itemSet) (any, *itemSet, error)
	// encode renders v as Encode does, copying from baseSet the encoding
	// of every item equal to base's item at the same index.
	encode(v, base any, baseSet *itemSet) ([]byte, *itemSet, error)
	// arrayMember is the array's member ("" = the file is the array).
	arrayMember() string
	// itemLabel names item i of v in an error.
	itemLabel(v any, i int) string
}

var (
	tasksDoc = &arrayDoc[Tasks, Task]{member: "tasks", indent: []byte("\n    "),
		items: func(v *Tasks) *[]Task { return &v.Tasks }, equal: (*Task).equal,
		clone: func(v *Tasks) *Tasks { c := *v; return &c },
		label: func(t *Task) string { return "task " + strconv.FormatInt(t.ID, 10) }}
	planDoc = &arrayDoc[Plan, Issue]{member: "issues", indent: []byte("\n    "),
		items: func(v *Plan) *[]Issue { return &v.Issues }, equal: (*Issue).equal,
		clone: func(v *Plan) *Plan { c := *v; return &c },
		label: func(is *Issue) string { return "issue " + strconv.FormatInt(is.ID, 10) }}
	trackerDoc = &arrayDoc[[]TrackerEntry, TrackerEntry]{member: "", indent: []byte("\n  "),
		items: func(v *[]TrackerEntry) *[]TrackerEntry { return v }, equal: (*TrackerEntry).equal,
		clone: func(v *[]TrackerEntry) *[]TrackerEntry { c := *v; return &c },
		label: func(e *TrackerEntry) string { return "agent " + strconv.Quote(cmp.Or(e.AgentID, e.AgentName)) }}
)

func (d *arrayDoc[V, T]) arrayMember() string { return d.member }

func (d *arrayDoc[V, T]) itemLabel(v any, i int) string {
	if x, ok := v.(*V); ok && i < len(*d.items(x)) {
		return d.label(&(*d.items(x))[i])
	}
	return "item " + strconv.Itoa(i)
}

// decodeWhole is the one-pass decode of the whole file.
func (d *arrayDoc[V, T]) decodeWhole(data []byte) (any, *itemSet, error) {
	v := new(V)
	if err := Decode(data, v); err != nil {
		return nil, nil, err
	}
	return v, nil, nil
}

func (d *arrayDoc[V, T]) decode(data []byte, prevValue any, prev *itemSet) (any, *itemSet, error) {
	pv, ok := prevValue.(*V)
	if !ok || prev == nil || len(*d.items(pv)) != len(prev.items) {
		pv, prev = nil, nil
	}
	if prev != nil {
		prev.mu.Lock()
		defer prev.mu.Unlock()
		if v, set, ok := d.decodeEdit(data, pv, prev); ok {
			return v, set, nil
		}
	}
	v, set, err := d.decodeItems(data, pv, prev)
	if err != nil {
		return d.decodeWhole(data)
	}
	return v, set, nil
}

// errShape: the file is not the object (or array) the item scan expects.
var errShape = errors.New("not the expected shape")

// decodeItems reads the file with jsontext, item by item: an item whose
// bytes prev has is taken from it, the others are decoded (straight from
// the stream when there is no prev). Any error means "decode it whole".
// prev's mu is held by the caller.
func (d *arrayDoc[V, T]) decodeItems(data []byte, pv *V, prev *itemSet) (any, *itemSet, error) {
	var old []T
	if prev != nil {
		old = *d.items(pv)
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), readOpts)
	set := &itemSet{data: data, open: -1}
	var items []T
	readArray := func() error {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
			return errShape
		}
		set.open = int(dec.InputOffset()) - 1
		for i := 0; dec.PeekKind() != ']'; i++ {
			if dec.PeekKind() == 0 {
				return errShape
			}
			var x T
			var it item
			if prev == nil {
				// Nothing to re-use: decode straight from the stream.
				it.start = skipSeparator(data, int(dec.InputOffset()))
				if err := jsonv2.UnmarshalDecode(dec, &x, readOpts); err != nil {
					return err
				}
				it.end = int(dec.InputOffset())
			} else {
				v, err := dec.ReadValue()
				if err != nil {
					return err
				}
				it.end = int(dec.InputOffset())
				it.start = it.end - len(v)
				if j := prev.find(i, data[it.start:it.end]); j >= 0 {
					x = old[j]
					it = prev.carry(j, it.start, it.end)
				} else if err := jsonv2.Unmarshal(v, &x, readOpts); err != nil {
					return err
				}
			}
			items = append(items, x)
			set.items = append(set.items, it)
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		set.close = int(dec.InputOffset()) - 1
		return nil
	}
	if items == nil {
		items = []T{}
	}
	if d.member == "" {
		if dec.PeekKind() != '[' {
			return nil, nil, errShape
		}
		if err := readArray(); err != nil {
			return nil, nil, err
		}
		if _, err := dec.ReadToken(); err != io.EOF {
			return nil, nil, errShape // something after the array
		}
		v := new(V)
		*d.items(v) = nonNil(items)
		return v, set, nil
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, errShape
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return nil, nil, errShape
		}
		if name.String() != d.member {
			if err := dec.SkipValue(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if set.open >= 0 {
			return nil, nil, errShape // the member twice
		}
		if err := readArray(); err != nil {
			return nil, nil, err
		}
	}
	if set.open < 0 {
		return nil, nil, errShape
	}
	// The members around the array (and whatever follows the object)
	// are decoded, and checked, as the file with the array emptied.
	shell := make([]byte, 0, set.open+2+len(data)-set.close)
	shell = append(append(shell, data[:set.open+1]...), data[set.close:]...)
	v := new(V)
	if err := Decode(shell, v); err != nil {
		return nil, nil, err
	}
	*d.items(v) = nonNil(items)
	return v, set, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeEdit reads data as prev's version with one run of items
// replaced, when it is: data and prev.data then share their bytes up to
// the first differing one and from the last, and both ends of the array
// lie in the shared parts. The items wholly in the shared parts are
// prev's (moved by the change in length at the end); the bytes between
// them are parsed alone, as they stand in the array: between two items
// (or the array's ends), each side stood in for by "{}" — a value no byte
// can continue, so whatever follows it must be a separator — in a
// synthetic array "[{}" + middle + "{}]". It reports false when data is
// not such an edit or the middle is not a run of items. prev's mu is held
// by the caller.
func (d *arrayDoc[V, T]) decodeEdit(data []byte, pv *V, prev *itemSet) (any, *itemSet, bool) {
	old := prev.data
	if old == nil || prev.open < 0 {
		return nil, nil, false
	}
	p := commonPrefix(old, data)
	q := commonSuffix(old[p:], data[p:])
	if prev.open >= p || prev.close < len(old)-q {
		return nil, nil, false // the change reaches outside the array
	}
	n := len(prev.items)
	// Items 0..k-1 lie wholly in the shared start, j..n-1 in the shared end.
	k := sort.Search(n, func(i int) bool { return prev.items[i].end > p })
	j := sort.Search(n, func(i int) bool { return prev.items[i].start >= len(old)-q })
	ms := prev.open + 1
	if k > 0 {
		ms = prev.items[k-1].end
	}
	meOld := prev.close
	if j < n {
		meOld = prev.items[j].start
	}
	delta := len(data) - len(old)
	me := meOld + delta
	if ms > me {
		return nil, nil, false
	}
	// The middle, between its stand-ins.
	syn := make([]byte, 0, me-ms+6)
	syn = append(syn, '[')
	if k > 0 {
		syn = append(syn, "{}"...)
	}
	base := len(syn)
	syn = append(syn, data[ms:me]...)
	if j < n {
		syn = append(syn, "{}"...)
	}
	syn = append(syn, ']')
	// Parse syn: its values are the stand-ins and the middle's items.
	dec := jsontext.NewDecoder(bytes.NewBuffer(syn), readOpts)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, nil, false
	}
	var spans [][2]int // of syn's values, in syn
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, nil, false
		}
		end := int(dec.InputOffset())
		spans = append(spans, [2]int{end - len(v), end})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, nil, false
	}
	// The stand-ins must be values of their own, where they were put.
	if k > 0 {
		if len(spans) == 0 || spans[0] != [2]int{1, 3} {
			return nil, nil, false
		}
		spans = spans[1:]
	}
	if j < n {
		if len(spans) == 0 || spans[len(spans)-1] != [2]int{len(syn) - 3, len(syn) - 1} {
			return nil, nil, false
		}
		spans = spans[:len(spans)-1]
	}
	oldItems := *d.items(pv)
	items := make([]T, 0, k+len(spans)+n-j)
	set := &itemSet{data: data, open: prev.open, close: prev.close + delta, items: make([]item, 0, cap(items))}
	items = append(items, oldItems[:k]...)
	for i := range k {
		set.items = append(set.items, prev.carry(i, prev.items[i].start, prev.items[i].end))
	}
	for _, sp := range spans {
		it := item{start: sp[0] - base + ms, end: sp[1] - base + ms}
		if it.start < ms || it.end > me {
			return nil, nil, false
		}
		var x T
		raw := data[it.start:it.end]
		if m := prev.findIn(len(items), raw, k, j); m >= 0 {
			x = oldItems[m]
			it = prev.carry(m, it.start, it.end)
		} else if err := jsonv2.Unmarshal(raw, &x, readOpts); err != nil {
			return nil, nil, false
		}
		items = append(items, x)
		set.items = append(set.items, it)
	}
	items = append(items, oldItems[j:]...)
	for i := j; i < n; i++ {
		set.items = append(set.items, prev.carry(i, prev.items[i].start+delta, prev.items[i].end+delta))
	}
	v := d.clone(pv)
	*d.items(v) = items
	return v, set, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 1024
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 1024
	for i+chunk <= n && bytes.Equal(a[len(a)-i-chunk:len(a)-i], b[len(b)-i-chunk:len(b)-i]) {
		i += chunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// skipSeparator returns the offset of the first byte at or after off that
// is neither whitespace nor the comma between two items.
func skipSeparator(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// encode renders v as Encode does. The members around the array are
// encoded with the array emptied, and each item is either copied from
// baseSet (when it equals base's item at the same index and its encoding
// is known) or encoded alone and indented to its depth; the result is
// byte for byte Encode's (TestEncodeTasksMatchesEncode, FuzzEncodeTasks).
func (d *arrayDoc[V, T]) encode(vAny, baseAny any, baseSet *itemSet) ([]byte, *itemSet, error) {
	v := vAny.(*V)
	items := *d.items(v)
	var baseItems []T
	if b, ok := baseAny.(*V); ok && baseSet != nil && len(*d.items(b)) == len(baseSet.items) {
		baseItems = *d.items(b)
	} else {
		baseSet = nil
	}
	shellV := d.clone(v)
	*d.items(shellV) = []T{}
	sb, err := Encode(shellV)
	if err != nil {
		return nil, nil, err
	}
	// open is the '[' of the emptied array: a top-level member is
	// written two spaces in, and a raw newline only occurs between
	// tokens with deeper members indented further, so the member's
	// text occurs once.
	open := 0
	if d.member != "" {
		marker := []byte("\n  \"" + d.member + "\": []")
		at := bytes.Index(sb, marker)
		if at < 0 || bytes.Contains(sb[at+len(marker):], marker) {
			return nil, nil, fmt.Errorf("encode: the %s member is not where it is expected", d.member)
		}
		open = at + len(marker) - 2
	} else if !bytes.HasPrefix(sb, []byte("[]")) {
		return nil, nil, errors.New("encode: the file is not an array")
	}
	set := &itemSet{open: open, close: open + 1, items: make([]item, len(items)), shell: sb}
	if len(items) == 0 {
		set.data = sb
		return sb, set, nil
	}
	// Room for the base's bytes and about a kilobyte per item it lacks:
	// a large file is allocated once, not doubled while appending.
	size := len(sb) + 4096 + 1024*max(len(items)-len(baseItems), 0)
	if baseSet != nil {
		size += len(baseSet.data)
	}
	out := make([]byte, 0, size)
	out = append(out, sb[:open+1]...)
	if baseSet != nil {
		baseSet.mu.Lock()
		defer baseSet.mu.Unlock()
	}
	var one bytes.Buffer
	for i := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, d.indent...)
		start := len(out)
		it := &set.items[i]
		if baseSet != nil && i < len(baseItems) && baseSet.items[i].encoded && d.equal(&items[i], &baseItems[i]) {
			out = append(out, baseSet.raw(i)...)
			it.valid, it.compact = baseSet.items[i].valid, baseSet.items[i].compact
		} else {
			one.Reset()
			if err := jsonv2.MarshalWrite(&one, &items[i], indentOpts); err != nil {
				return nil, nil, err
			}
			out = appendIndented(out, bytes.TrimSuffix(one.Bytes(), []byte("\n")), d.indent)
		}
		it.start, it.end = start, len(out)
	}
	out = append(out, d.indent[:len(d.indent)-2]...) // the array's own depth
	set.close = len(out)
	out = append(out, sb[open+1:]...)
	set.data = out
	// Each item's encoding is its bytes in what is written.
	for i := range set.items {
		set.items[i].encoded = true
	}
	return out, set, nil
}

// appendIndented appends b with indent after each of its newlines.
func appendIndented(out, b, indent []byte) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		out = append(out, indent...)
		b = b[i+1:]
	}
}

// appendCompact appends the items to dst as a JSON array the way
// MarshalCompact renders the item slice, re-using the compact rendering
// kept for each item and keeping the ones it makes (as parts of the
// returned bytes, which the caller may append to but must not modify).
func (s *itemSet) appendCompact(dst []byte, extra int, marshal func(i int) ([]byte, error)) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.items)
	size := len(dst) + 2 + extra
	for i := range n {
		size += len(s.items[i].compact) + 1
	}
	out := make([]byte, 0, size)
	out = append(append(out, dst...), '[')
	spans := make([][2]int, n)
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		start := len(out)
		if c := s.items[i].compact; c != nil {
			out = append(out, c...)
		} else {
			b, err := marshal(i)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		spans[i] = [2]int{start, len(out)}
	}
	out = append(out, ']')
	for i, sp := range spans {
		s.items[i].compact = out[sp[0]:sp[1]:sp[1]]
	}
	return out, nil
}
