package state

import (
	"bytes"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Extra holds the members of a JSON object that nexus does not know. They
// are kept and written back unchanged (after the known members, sorted by
// name), so a field added by a newer nexus-core minor or another harness is
// never dropped by a rewrite. It is the "embed" fallback of the
// encoding/json/v2 model: unknown members land here in the same pass that
// decodes the known ones.
type Extra map[string]jsontext.Value

// State files are decoded and encoded with encoding/json/v2's reference
// implementation (github.com/go-json-experiment/json): one pass per file
// into typed values that keep unknown members, about three times faster
// than encoding/json decoding the same file twice.
var (
	// readOpts are lenient where files other harnesses wrote may differ
	// from what nexus writes: duplicate member names (the last wins, as in
	// JavaScript) and invalid UTF-8 (replaced) do not make a file corrupt.
	readOpts = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	// writeOpts render JSON as JavaScript's JSON.stringify does: no HTML
	// escaping, maps in sorted order (deterministic output). Raw values
	// (unknown members, archived cycles) keep their string escapes and
	// number spellings byte for byte, and omitempty keeps encoding/json's
	// meaning (false and 0 are empty) for the line types tagged for it.
	writeOpts = jsonv2.JoinOptions(jsonv2.Deterministic(true), jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(false),
		jsontext.PreserveRawStrings(true), jsonv1.OmitEmptyWithLegacySemantics(true))
	// indentOpts add JSON.stringify(v, null, 2)'s layout.
	indentOpts = jsonv2.JoinOptions(writeOpts, jsontext.Multiline(true), jsontext.WithIndent("  "))
)

// Decode decodes a state file's bytes (or any JSON document) into v in one
// pass, as the store reads files.
func Decode(b []byte, v any) error { return jsonv2.Unmarshal(b, v, readOpts) }

// MarshalCompact renders v as compact JSON the way the state files and
// tool results spell it: no HTML escaping, map members sorted.
func MarshalCompact(v any) ([]byte, error) { return jsonv2.Marshal(v, writeOpts) }

func marshalCompact(v any) ([]byte, error) { return MarshalCompact(v) }

// Encode renders v as the files are written: two-space indentation, no HTML
// escaping, one trailing newline (JSON.stringify(v, null, 2) + "\n").
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := jsonv2.MarshalWrite(&buf, v, indentOpts); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if n := len(b); n == 0 || b[n-1] != '\n' {
		b = append(b, '\n')
	}
	return b, nil
}
