package tags

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

func loadCore(t testing.TB) *vocabulary.Core {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return core
}

type fired struct{ id, variant, text string }

func TestDetect(t *testing.T) {
	d := New(loadCore(t).Tags())
	tests := []struct {
		msg     string
		skill   string // tag id of the active skill
		mode    string
		actions []fired
		ignored []string // reasons, in order, as substrings
	}{
		{msg: "just a question", skill: ""},
		{msg: "[plan] design the cache", skill: "plan"},
		{msg: "[plan:auto] design it", skill: "plan", mode: "auto"},
		{msg: "[run]", skill: "run"},
		{msg: "please [sync] now", skill: "sync"},
		{msg: "[plan:fast] x", ignored: []string{`"fast" is not a variant of [plan]`}},
		{msg: "[run:fast] x", ignored: []string{"takes no variant"}},
		{msg: "[foo] and [bar:baz]", ignored: []string{"no tag [foo]", "no tag [bar]"}},
		{msg: "[d] use postgres", actions: []fired{{"d", "", "use postgres"}}},
		{msg: "[m] the CI box has 2 cores", actions: []fired{{"m", "", "the CI box has 2 cores"}}},
		{msg: "[m:gc]", actions: []fired{{"m-gc", "", ""}}},
		{msg: "[m:gc] prune old ones", actions: []fired{{"m-gc", "", "prune old ones"}}},
		{msg: "[rule] always run gofmt", actions: []fired{{"rule", "", "always run gofmt"}}},
		{msg: "[rule:testing] use -race", actions: []fired{{"rule", "testing", "use -race"}}},
		{msg: "[d] A [d] B [m] C", actions: []fired{{"d", "", "A"}, {"d", "", "B"}, {"m", "", "C"}}},
		{msg: "[plan] x [d] y", skill: "plan", actions: []fired{{"d", "", "y"}}},
		{msg: "[plan] then [run]", skill: "run", ignored: []string{"replaced by the later skill tag [run]"}},
		{msg: "use `[plan]` to plan", ignored: []string{"inside inline code"}},
		{msg: "use ``a ` [run] b`` ok", ignored: []string{"inside inline code"}},
		{msg: "```\n[plan]\n```\n[run]", skill: "run", ignored: []string{"inside fenced code"}},
		{msg: "~~~go\n[d] x\n~~~", ignored: []string{"inside fenced code"}},
		{msg: "```\nunclosed [m] fence", ignored: []string{"inside fenced code"}},
		{msg: "> [plan] quoted\n[run] real", skill: "run", ignored: []string{"inside quoted text"}},
		{msg: `he said "[plan] now" [run]`, skill: "run", ignored: []string{"inside quoted text"}},
		{msg: "he said “[d] x” ok", ignored: []string{"inside quoted text"}},
		{msg: `a 5" screen [plan]`, skill: "plan"},
		{msg: `\[plan] literal`, ignored: []string{"escaped"}},
		{msg: "an [a-b] token", ignored: []string{"no tag [a-b]"}},
		{msg: "[Plan] is not lower case", skill: ""},
		{msg: "````\n```\n[d] still code\n````\n[m] out", actions: []fired{{"m", "", "out"}}, ignored: []string{"inside fenced code"}},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			r := d.Detect(tt.msg)
			gotSkill, gotMode := "", ""
			if r.Skill != nil {
				gotSkill, gotMode = r.Skill.Tag.ID, r.Skill.Variant
			}
			if gotSkill != tt.skill || gotMode != tt.mode {
				t.Errorf("skill %q mode %q, want %q %q", gotSkill, gotMode, tt.skill, tt.mode)
			}
			var got []fired
			for _, a := range r.Actions {
				got = append(got, fired{a.Tag.ID, a.Variant, a.Text})
			}
			if len(got) != len(tt.actions) {
				t.Fatalf("actions %+v, want %+v", got, tt.actions)
			}
			for i := range got {
				if got[i] != tt.actions[i] {
					t.Errorf("action %d = %+v, want %+v", i, got[i], tt.actions[i])
				}
			}
			if len(r.Ignored) != len(tt.ignored) {
				t.Fatalf("ignored %+v, want %d", r.Ignored, len(tt.ignored))
			}
			for i, want := range tt.ignored {
				if !strings.Contains(r.Ignored[i].Reason, want) {
					t.Errorf("ignored[%d] reason %q lacks %q", i, r.Ignored[i].Reason, want)
				}
			}
		})
	}
}

// The table comes from the distribution: a tag added to tags.yml is found
// without code changes, and a tag removed is no longer found.
func TestDetectUsesTheGivenTable(t *testing.T) {
	d := New([]vocabulary.Tag{
		{ID: "review", Trigger: "[review]", Type: vocabulary.TagSkill, Skill: "nx-review"},
		{ID: "x-y", Trigger: "[x:y]", Type: vocabulary.TagInlineAction, Handler: "h"},
	})
	r := d.Detect("[review] [x:y] z [plan]")
	if r.Skill == nil || r.Skill.Tag.Skill != "nx-review" {
		t.Fatalf("skill %+v", r.Skill)
	}
	if len(r.Actions) != 1 || r.Actions[0].Tag.ID != "x-y" || r.Actions[0].Text != "z [plan]" {
		t.Fatalf("actions %+v", r.Actions)
	}
	if len(r.Ignored) != 1 || r.Ignored[0].Token != "[plan]" {
		t.Fatalf("ignored %+v", r.Ignored)
	}
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		"[plan] x", "[m:gc] [d] a", "```\n[run]\n```", "`[d]`", "> [m]", `"[rule:x]"`, "[rule:a b] c",
		"\\[plan]", "````\n``\n[d]", "“[plan]”", "[plan:auto][run]", "", "[", "]", "[[d]]",
		"\"a `[d]` b [m]\" [rule:x]", "\\``[d]` ``", "`` ` [d] `` ` ``` [m] ```", "[rule:a\n> b] [d]", "“x `y` [m]” `", "[a:[b] [c:]] [d:", "[x-1:é]",
	} {
		f.Add(s)
	}
	d := New(loadCore(f).Tags())
	f.Fuzz(func(t *testing.T, msg string) {
		r := d.Detect(msg)
		// The linear mask says what the first, obviously right one says.
		// The scanner finds the tokens the pattern finds.
		mask, ref := maskText(msg), refMaskText(msg)
		toks := tokens{msg: msg, close: -1}
		var loc [6]int
		for _, want := range refToken.FindAllStringSubmatchIndex(msg, -1) {
			if !toks.next(&loc) || !slices.Equal(loc[:], want) {
				t.Fatalf("token at %v, want %v", loc, want)
			}
			if got, want := mask.reason(loc[0], loc[1]), ref.reason(loc[0], loc[1]); got != want {
				t.Fatalf("%q at %d: reason %q, want %q", msg[loc[0]:loc[1]], loc[0], got, want)
			}
		}
		if toks.next(&loc) {
			t.Fatalf("extra token at %v", loc)
		}
		for _, m := range r.Fired {
			if m.Offset < 0 || m.Offset+len(m.Token) > len(msg) || msg[m.Offset:m.Offset+len(m.Token)] != m.Token {
				t.Fatalf("bad match %+v", m)
			}
			if m.Variant == "" && m.Token != m.Tag.Trigger {
				t.Fatalf("token %s fired tag %s without a variant", m.Token, m.Tag.Trigger)
			}
			if utf8.ValidString(msg) && !utf8.ValidString(m.Text) {
				t.Fatalf("action text split a rune: %q", m.Text)
			}
		}
		if r.Skill != nil && !r.Skill.IsSkill() {
			t.Fatalf("non-skill active: %+v", r.Skill)
		}
		for _, a := range r.Actions {
			if a.IsSkill() {
				t.Fatalf("skill among actions: %+v", a)
			}
		}
		// Nothing inside a fenced block fires.
		if !strings.Contains(msg, "```") {
			fencedRes := d.Detect("```\n" + msg + "\n```")
			if len(fencedRes.Fired) != 0 {
				t.Fatalf("tags fired inside a fence: %+v", fencedRes.Fired)
			}
		}
		// Nor inside inline code.
		if !strings.ContainsAny(msg, "`\n") {
			if got := d.Detect("`" + msg + "`"); len(got.Fired) != 0 {
				t.Fatalf("tags fired inside inline code: %+v", got.Fired)
			}
		}
	})
}
