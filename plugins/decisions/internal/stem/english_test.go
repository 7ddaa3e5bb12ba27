package stem

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
)

// TestEnglishGoldenWords checks every word of the golden list produced by
// libstemmer_c 3.1.0.
func TestEnglishGoldenWords(t *testing.T) {
	var golden struct {
		Cases []struct {
			Word string `json:"word"`
			Stem string `json:"stem"`
			Old  string `json:"snowball_2_2_stem"`
		} `json:"cases"`
	}
	raw, err := os.ReadFile(filepath.Join(goldens.Dir(t), "stemmer_english.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 1000 {
		t.Fatalf("golden list has only %d words", len(golden.Cases))
	}
	for _, c := range golden.Cases {
		if got := English(c.Word); got != c.Stem {
			t.Errorf("English(%q) = %q, want %q (Snowball 2.2 gives %q)", c.Word, got, c.Stem, c.Old)
		}
	}
}

func TestEnglishEdgeCases(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"ab", "ab"},
		{"'s", "'s"},
		{"dying", "die"},
		{"yying", "yie"},
		{"skies", "sky"},
		{"café", "café"},
		{"ΟΔΟΣ", "ΟΔΟΣ"},
		{"sayyid", "sayyid"},
		{"cries", "cri"},
		{"ties", "tie"},
		{"adding", "add"},
		{"hoping", "hope"},
		{"proceeding", "proceed"},
	} {
		if got := English(tc.in); got != tc.want {
			t.Errorf("English(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func BenchmarkEnglish(b *testing.B) {
	words := []string{"organization", "universities", "caching", "invoices", "reconciliation", "postgresql"}
	for i := 0; i < b.N; i++ {
		English(words[i%len(words)])
	}
}
