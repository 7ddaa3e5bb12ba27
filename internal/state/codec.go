package state

// The state types decode and encode through encoding/json/v2's model (see
// extra.go), whichever JSON package the caller uses: the v2 methods stream
// through the caller's encoder or decoder (no second pass), and the v1
// methods let encoding/json callers get the same bytes, unknown members
// included. Each method converts to a method-less twin type so the v2
// struct model does the work.

import (
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type planPlain Plan

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (p Plan) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*planPlain)(&p))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (p *Plan) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = Plan{}
	return jsonv2.UnmarshalDecode(dec, (*planPlain)(p))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (p Plan) MarshalJSON() ([]byte, error) { return MarshalCompact((*planPlain)(&p)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (p *Plan) UnmarshalJSON(b []byte) error {
	*p = Plan{}
	return Decode(b, (*planPlain)(p))
}

type issuePlain Issue

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (i Issue) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*issuePlain)(&i))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (i *Issue) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*i = Issue{}
	return jsonv2.UnmarshalDecode(dec, (*issuePlain)(i))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (i Issue) MarshalJSON() ([]byte, error) { return MarshalCompact((*issuePlain)(&i)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (i *Issue) UnmarshalJSON(b []byte) error {
	*i = Issue{}
	return Decode(b, (*issuePlain)(i))
}

type tasksPlain Tasks

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (t Tasks) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*tasksPlain)(&t))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (t *Tasks) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*t = Tasks{}
	return jsonv2.UnmarshalDecode(dec, (*tasksPlain)(t))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (t Tasks) MarshalJSON() ([]byte, error) { return MarshalCompact((*tasksPlain)(&t)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (t *Tasks) UnmarshalJSON(b []byte) error {
	*t = Tasks{}
	return Decode(b, (*tasksPlain)(t))
}

type taskPlain Task

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (t Task) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*taskPlain)(&t))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (t *Task) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*t = Task{}
	return jsonv2.UnmarshalDecode(dec, (*taskPlain)(t))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (t Task) MarshalJSON() ([]byte, error) { return MarshalCompact((*taskPlain)(&t)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (t *Task) UnmarshalJSON(b []byte) error {
	*t = Task{}
	return Decode(b, (*taskPlain)(t))
}

type historyPlain History

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (h History) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*historyPlain)(&h))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (h *History) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*h = History{}
	return jsonv2.UnmarshalDecode(dec, (*historyPlain)(h))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (h History) MarshalJSON() ([]byte, error) { return MarshalCompact((*historyPlain)(&h)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (h *History) UnmarshalJSON(b []byte) error {
	*h = History{}
	return Decode(b, (*historyPlain)(h))
}

type trackerEntryPlain TrackerEntry

// MarshalJSONTo implements the encoding/json/v2 MarshalerTo.
func (e TrackerEntry) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*trackerEntryPlain)(&e))
}

// UnmarshalJSONFrom implements the encoding/json/v2 UnmarshalerFrom.
func (e *TrackerEntry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*e = TrackerEntry{}
	return jsonv2.UnmarshalDecode(dec, (*trackerEntryPlain)(e))
}

// MarshalJSON implements json.Marshaler with the v2 encoding.
func (e TrackerEntry) MarshalJSON() ([]byte, error) { return MarshalCompact((*trackerEntryPlain)(&e)) }

// UnmarshalJSON implements json.Unmarshaler with the v2 decoding.
func (e *TrackerEntry) UnmarshalJSON(b []byte) error {
	*e = TrackerEntry{}
	return Decode(b, (*trackerEntryPlain)(e))
}

var (
	_ json.Marshaler         = Task{}
	_ jsonv2.MarshalerTo     = Task{}
	_ jsonv2.UnmarshalerFrom = (*Task)(nil)
)
