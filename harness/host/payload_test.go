package host

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeStrict(t *testing.T) {
	type in struct {
		Name string `json:"name"`
		On   bool   `json:"on"`
	}
	cases := []struct{ payload, want string }{
		{`{"name":"x","on":true}`, ""},
		{``, "empty payload"},
		{`[1]`, "expected a JSON object"},
		{`{"name":1}`, "field name must be a string, not number"},
		{`{"on":"yes"}`, "field on must be true or false, not string"},
		{`{"name":"x"} {}`, "more than one JSON value"},
		{`{"name":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, "payload refused"},
		{`{"name":"x"`, "invalid JSON payload"},
	}
	for _, c := range cases {
		var v in
		err := DecodeStrict([]byte(c.payload), &v)
		var ie *InputError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.payload, err)
		case c.want != "" && (err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want an InputError saying %q", c.payload, err, c.want)
		}
	}
}

func TestToolInput(t *testing.T) {
	cases := []struct{ raw, want string }{
		{``, ""},
		{`null`, ""},
		{`{"command":"ls"}`, ""},
		{`"ls"`, "must be a JSON object"},
		{`{"n":1e400}`, "too large for a 64-bit float"},
	}
	for _, c := range cases {
		m, err := ToolInput([]byte(c.raw))
		switch {
		case c.want == "" && (err != nil || m == nil):
			t.Errorf("%q: %v %v", c.raw, m, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want %q", c.raw, err, c.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	cases := []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"error": "boom"}, "boom"},
		{map[string]any{"content": []any{map[string]any{"type": "text", "text": "bad input"}}}, "bad input"},
		{map[string]any{"stderr": "no such file"}, "no such file"},
		{map[string]any{}, "the tool reported an error"},
	}
	for _, c := range cases {
		if got := ErrorText(c.m); got != c.want {
			t.Errorf("ErrorText(%v) = %q, want %q", c.m, got, c.want)
		}
	}
}
