package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/bm25"
)

// The persistent index is a cache, never a source of truth: each record
// is used only while its file's identity (device, inode, size, modification
// and change times) is unchanged, files changed near the index's write
// time are re-hashed,
// and anything unreadable (wrong magic, version, store, checksum) is
// ignored and rebuilt. It lives outside the store and outside any
// repository: $XDG_CACHE_HOME/nexus/decisions/<sha256 of the store path>.idx
// (os.UserCacheDir), or $NEXUS_DECISIONS_INDEX_DIR when set ("off"
// disables it).

// v2 added the change time to each file's identity; a v1 index is not
// read (it is rebuilt).
const indexMagic = "nexus-decisions-index\x00v2\n"

// indexPath returns where the index of a store lives ("" when none).
func indexPath(root string) string {
	dir := os.Getenv(decisionsapi.EnvIndexDir)
	if dir == "off" {
		return ""
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(cache, "nexus", "decisions")
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".idx")
}

// racyMargin covers file systems with coarse timestamps.
const racyMargin = 2 * time.Second

// loadIndex reads the records of a store, and the time before which a
// file's identity proves it unchanged. A missing or bad index gives none.
func loadIndex(root string, v *bm25.Vocab) (map[string]*fileRecord, int64) {
	const noRacy = 1<<63 - 1
	p := indexPath(root)
	if p == "" {
		return map[string]*fileRecord{}, noRacy
	}
	b, err := readPath(p, maxIndexFile)
	if err != nil {
		return map[string]*fileRecord{}, noRacy
	}
	files, written, err := decodeIndex(b, root, v)
	if err != nil {
		return map[string]*fileRecord{}, noRacy
	}
	return files, written - int64(racyMargin)
}

// saveIndex writes the records atomically (temp file, rename). Failure is
// harmless: the next process rebuilds.
func saveIndex(root string, files map[string]*fileRecord, v *bm25.Vocab) {
	p := indexPath(root)
	if p == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return
	}
	data := encodeIndex(root, files, v, time.Now().UnixNano())
	tmp, err := os.CreateTemp(filepath.Dir(p), ".idx-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
}

type encoder struct {
	b     bytes.Buffer
	vocab map[string]uint64
	terms []string
}

func (e *encoder) uint(v uint64) { e.b.Write(binary.AppendUvarint(nil, v)) }
func (e *encoder) int(v int64)   { e.b.Write(binary.AppendVarint(nil, v)) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.b.WriteString(s) }

// term interns a string (tokens and enum values repeat across records).
func (e *encoder) term(s string) {
	id, ok := e.vocab[s]
	if !ok {
		id = uint64(len(e.terms))
		e.vocab[s] = id
		e.terms = append(e.terms, s)
	}
	e.uint(id)
}

func encodeIndex(root string, files map[string]*fileRecord, v *bm25.Vocab, written int64) []byte {
	body := &encoder{vocab: map[string]uint64{}}
	body.uint(uint64(len(files)))
	for name, r := range files {
		body.str(name)
		body.uint(r.id.dev)
		body.uint(r.id.ino)
		body.int(r.id.size)
		body.int(r.id.mtime)
		body.int(r.id.ctime)
		if r.id.symlink {
			body.uint(1)
		} else {
			body.uint(0)
		}
		body.uint(r.hash)
		if r.problem != "" || r.entry.D == nil {
			body.uint(0)
			body.str(r.problem)
			continue
		}
		body.uint(1)
		d := r.entry.D
		body.int(int64(d.Num))
		body.str(d.Title)
		body.int(int64(d.Date.Year))
		body.int(int64(d.Date.Month))
		body.int(int64(d.Date.Day))
		body.int(int64(d.Version))
		for _, s := range []string{d.Status, d.Confidence, d.DecisionType, d.Reversibility, d.Source, d.Supersedes, d.SupersededBy} {
			body.term(s)
		}
		body.uint(uint64(r.entry.UseCount))
		body.uint(uint64(r.entry.Doc.Len))
		body.uint(uint64(len(r.entry.Doc.Counts)))
		for _, tc := range r.entry.Doc.Counts {
			body.term(v.Term(tc.Term))
			body.uint(uint64(tc.N))
		}
	}
	out := &encoder{}
	out.b.WriteString(indexMagic)
	out.str(root)
	out.int(written)
	out.uint(uint64(len(body.terms)))
	for _, t := range body.terms {
		out.str(t)
	}
	out.b.Write(body.b.Bytes())
	sum := crc32.ChecksumIEEE(out.b.Bytes())
	return binary.LittleEndian.AppendUint32(out.b.Bytes(), sum)
}

var errBadIndex = errors.New("decision index is damaged")

type decoder struct {
	r     *bufio.Reader
	limit uint64 // no string is longer than the whole index
	err   error
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	d.err = err
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	d.err = err
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if d.err != nil || n > d.limit {
		d.err = errBadIndex
		return ""
	}
	b := make([]byte, n)
	_, d.err = io.ReadFull(d.r, b)
	return string(b)
}

func decodeIndex(b []byte, root string, v *bm25.Vocab) (map[string]*fileRecord, int64, error) {
	if len(b) < len(indexMagic)+4 || string(b[:len(indexMagic)]) != indexMagic {
		return nil, 0, errBadIndex
	}
	payload, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(payload) != sum {
		return nil, 0, errBadIndex
	}
	d := &decoder{r: bufio.NewReader(bytes.NewReader(payload[len(indexMagic):])), limit: uint64(len(b))}
	if d.str() != root {
		return nil, 0, fmt.Errorf("%w: another store", errBadIndex)
	}
	written := d.int()
	nterms := d.uint()
	if d.err != nil || nterms > uint64(len(b)) {
		return nil, 0, errBadIndex
	}
	terms := make([]string, nterms)
	for i := range terms {
		terms[i] = d.str()
	}
	var ids []int32 // the file's term table in v, made on first need
	term := func() string {
		id := d.uint()
		if id >= uint64(len(terms)) {
			d.err = errBadIndex
			return ""
		}
		return terms[id]
	}
	termID := func() int32 {
		id := d.uint()
		if id >= uint64(len(terms)) {
			d.err = errBadIndex
			return 0
		}
		if ids == nil {
			ids = make([]int32, len(terms))
			for i := range ids {
				ids[i] = -1
			}
		}
		if ids[id] < 0 {
			ids[id] = v.ID(terms[id])
		}
		return ids[id]
	}
	n := d.uint()
	if d.err != nil || n > uint64(len(b)) {
		return nil, 0, errBadIndex
	}
	files := make(map[string]*fileRecord, n)
	for range n {
		name := d.str()
		r := &fileRecord{}
		r.id.dev, r.id.ino = d.uint(), d.uint()
		r.id.size, r.id.mtime, r.id.ctime = d.int(), d.int(), d.int()
		r.id.symlink = d.uint() == 1
		r.hash = d.uint()
		r.entry.Stem = name[:max(0, len(name)-len(".md"))]
		if d.uint() == 0 {
			r.problem = d.str()
			if r.problem == "" {
				d.err = errBadIndex
			}
			files[name] = r
			continue
		}
		dec := &decision.Decision{}
		dec.Num = int(d.int())
		dec.Title = d.str()
		dec.Date.Year, dec.Date.Month, dec.Date.Day = int(d.int()), int(d.int()), int(d.int())
		dec.Version = int(d.int())
		for _, p := range []*string{&dec.Status, &dec.Confidence, &dec.DecisionType, &dec.Reversibility, &dec.Source, &dec.Supersedes, &dec.SupersededBy} {
			*p = term()
		}
		r.entry.UseCount = int(d.uint())
		r.entry.Doc.Len = int32(d.uint())
		nt := d.uint()
		if d.err != nil || nt > uint64(len(b)) {
			return nil, 0, errBadIndex
		}
		r.entry.Doc.Counts = make([]bm25.TermCount, nt)
		for i := range r.entry.Doc.Counts {
			r.entry.Doc.Counts[i] = bm25.TermCount{Term: termID(), N: int32(d.uint())}
		}
		r.entry.D = dec
		files[name] = r
	}
	if d.err != nil {
		return nil, 0, errBadIndex
	}
	return files, written, nil
}
