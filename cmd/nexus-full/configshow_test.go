package main

import "testing"

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"", `""`},
		{"nx_", "nx_"},
		{[]string{}, "[]"},
		{[]string{"a dir", "b"}, "[a dir, b]"},
		{map[string]any{}, "{}"},
		{map[string]any{"Lint": map[string]any{"apiKey": "k"}}, `{"Lint":{"apiKey":"k"}}`},
		{map[string]any{"engineer": []any{"Bash", "Edit"}}, `{"engineer":["Bash","Edit"]}`},
		{0.35, "0.35"},
		{true, "true"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.in); got != tt.want {
			t.Errorf("formatValue(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
