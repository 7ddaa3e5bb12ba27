package decision

import (
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
)

// FuzzParse: no input makes the parser panic, and whatever parses formats
// (in both frontmatter modes) to text that parses back to the same decision
// and formats to itself.
func FuzzParse(f *testing.F) {
	var rt struct {
		Cases []struct {
			Filename string `json:"filename"`
			Input    string `json:"input"`
		} `json:"cases"`
	}
	goldens.Load(f, "roundtrip.json", &rt)
	for _, c := range rt.Cases {
		f.Add(c.Input, c.Filename)
	}
	var inv struct {
		Cases []struct {
			Filename string `json:"filename"`
			Input    string `json:"input"`
		} `json:"cases"`
	}
	goldens.Load(f, "invalid.json", &inv)
	for _, c := range inv.Cases {
		f.Add(c.Input, c.Filename)
	}
	f.Fuzz(func(t *testing.T, text, filename string) {
		d, err := Parse(text, filename)
		if err != nil {
			if d != nil {
				t.Fatalf("Parse returned a decision and an error")
			}
			_ = err.Error()
			return
		}
		for _, mode := range []Frontmatter{Documented, Reference} {
			out := Format(d, mode)
			again, err := Parse(out, filename)
			if err != nil {
				t.Fatalf("formatted %s text does not parse: %v\ninput: %q\nformatted: %q", mode, err, text, out)
			}
			if !sameDecision(d, again) {
				t.Fatalf("re-parsed %s decision differs:\n got %+v\nwant %+v\nformatted: %q", mode, again, d, out)
			}
			if Format(again, mode) != out {
				t.Fatalf("format is not idempotent in %s mode: %q", mode, out)
			}
		}
	})
}

func sameDecision(a, b *Decision) bool {
	x, y := *a, *b
	x.Body, x.Content, y.Body, y.Content = "", "", "", ""
	if len(x.FilesAffected) == 0 {
		x.FilesAffected = nil
	}
	if len(y.FilesAffected) == 0 {
		y.FilesAffected = nil
	}
	return reflect.DeepEqual(x, y)
}
