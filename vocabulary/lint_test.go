package vocabulary

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The upstream expressions (digest §7.3.1), written for RE2 with
// JavaScript's semantics spelled out: ASCII-only case folding for /i and
// JavaScript's \s in the call pattern. The scanner in lint.go must agree.
var reference = map[string]*regexp.Regexp{
	"distinctive": regexp.MustCompile(`\b(NotebookEdit|BashOutput|KillShell|Glob|Grep|WebFetch|WebSearch|TodoWrite|SendMessage|TeamCreate|AskUserQuestion|mcp__plugin_[a-z0-9_]+|TaskCreate|TaskUpdate|TaskList|TaskGet|TaskStop|TaskOutput|subagent_type|prompt_user)\b`),
	"call":        regexp.MustCompile(`\b(Skill|Agent)[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]*\(`),
	"namespace":   regexp.MustCompile(`/(?:claude-nexus|opencode-nexus):`),
	"ambiguous":   regexp.MustCompile(`\b(Read|Write|Edit|Bash|Task|Monitor)\b`),
	"opencode":    regexp.MustCompile(`\b(edit|write|patch|multiedit|bash)\b`),
	"model":       regexp.MustCompile(`\b([oO][pP][uU][sS]|[sS][oO][nN][nN][eE][tT]|[hH][aA][iI][kK][uU]|[gG][pP][tT]-[0-9][a-zA-Z0-9.-]*|[cC][lL][aA][uU][dD][eE]-[0-9][a-zA-Z0-9.-]*)\b`),
}

var scanners = map[string]func([]byte) []span{
	"distinctive": func(b []byte) []span { return matchWords(b, distinctiveWords, true) },
	"call":        matchCalls,
	"namespace":   matchNamespaces,
	"ambiguous":   func(b []byte) []span { return matchWords(b, ambiguousWords, false) },
	"opencode":    func(b []byte) []span { return matchWords(b, openCodeWords, false) },
	"model":       matchModels,
}

func checkScanners(t *testing.T, text []byte) {
	t.Helper()
	for name, re := range reference {
		var want []span
		for _, loc := range re.FindAllIndex(text, -1) {
			want = append(want, span{loc[0], loc[1]})
		}
		if got := scanners[name](text); !reflect.DeepEqual(got, want) {
			t.Errorf("%s on %q: scanner %v, expression %v", name, text, got, want)
		}
	}
}

var lintSamples = []string{
	"Use TodoWrite, then Glob and Grep. NotGlob GlobX _Glob mcp__plugin_x_1 mcp__plugin_ mcp__plugin_aB",
	"Agent(x) Skill  (y) Agent\u00a0(z) Agent\u3000( Agents( xAgent( Agent\n\t(",
	"see /claude-nexus:plan and /opencode-nexus:run /claude-nexus/",
	"Read the file; Write it; ReadMe; Task: Monitor. edit/write/patch multiedit bash_x",
	"opus Opus OPUS sonnet-3 haiku_x gpt-4o gpt-4.1-mini. claude-3-5-sonnet_ claude-3. GPT-5x gpt-x claude-3_ gpt-4-opus gpt-4- x",
	"ſonnet \u212Aopus claude-9é gpt-3.5\u00e9",
}

func TestLintScannersMatchExpressions(t *testing.T) {
	for _, s := range lintSamples {
		checkScanners(t, []byte(s))
	}
}

func TestLintScannerExamples(t *testing.T) {
	got := func(spans []span, text string) []string {
		var out []string
		for _, s := range spans {
			out = append(out, text[s.start:s.end])
		}
		return out
	}
	text := "use gpt-4.1-mini. or claude-3-opus_x, Opus, not ſonnet; Agent\u00a0( here"
	if m := got(matchModels([]byte(text)), text); strings.Join(m, "|") != "gpt-4.1-mini|claude-3-|Opus" {
		t.Errorf("models %q", m)
	}
	if m := got(matchCalls([]byte(text)), text); len(m) != 1 || m[0] != "Agent\u00a0(" {
		t.Errorf("calls %q (JavaScript's \\s includes U+00A0)", m)
	}
}

// maskHeredocsReference is the direct reading of /(>>([A-Z][A-Z0-9_]*)([\s\S]*?)<<\1/g
// for a backtracking engine: try each label length from the longest, take
// the nearest closer; on failure move one byte on.
func maskHeredocsReference(s []byte) {
	for i := 0; i < len(s); {
		j := bytes.Index(s[i:], []byte(">>"))
		if j < 0 {
			return
		}
		p := i + j
		label := heredocLabel(s[p+2:])
		matched := false
		for l := len(label); l >= 1; l-- {
			start := p + 2 + l
			k := bytes.Index(s[start:], append([]byte("<<"), label[:l]...))
			if k >= 0 {
				blank(s[start : start+k])
				i = start + k + 2 + l
				matched = true
				break
			}
		}
		if !matched {
			i = p + 1
		}
	}
}

func TestMaskHeredocs(t *testing.T) {
	tests := []struct{ in, want string }{
		{">>EOF\nGrep x\n<<EOF Glob", ">>EOF\n      \n<<EOF Glob"},
		// The label shrinks until a closer matches: >>AB ... <<A closes as "A".
		{">>AB x <<A y", ">>A    <<A y"},
		{">>FOOBAR z <<FOO", ">>FOO      <<FOO"},
		{"no closer >>EOF Grep", "no closer >>EOF Grep"},
		{">>>EOF a<<EOF", ">>>EOF  <<EOF"},
		{">>A<<A>>B c<<B", ">>A<<A>>B  <<B"},
	}
	for _, tt := range tests {
		got := []byte(tt.in)
		maskHeredocs(got)
		if string(got) != tt.want {
			t.Errorf("maskHeredocs(%q) = %q, want %q", tt.in, got, tt.want)
		}
		ref := []byte(tt.in)
		maskHeredocsReference(ref)
		if string(ref) != tt.want {
			t.Errorf("reference(%q) = %q, want %q", tt.in, ref, tt.want)
		}
	}
}

func TestMaskBody(t *testing.T) {
	in := "Call {{subagent_spawn target_role=writer prompt=>>P}}\nUse Grep here\n<<P\n{{user_question q=\"Glob?\"}} TodoWrite\n"
	masked, macros := maskBody([]byte(in))
	if len(masked) != len(in) || strings.Count(string(masked), "\n") != strings.Count(in, "\n") {
		t.Fatalf("masking must keep offsets and lines: %q", masked)
	}
	if strings.Contains(string(masked), "Grep") || strings.Contains(string(masked), "Glob") || !strings.Contains(string(masked), "TodoWrite") {
		t.Fatalf("masked %q", masked)
	}
	// The heredoc swallowed the first macro's closing braces, so that macro
	// runs on to the next "}}" and takes the second one in (as upstream's
	// regular expressions do): one macro, subagent_spawn.
	if len(macros) != 1 || macros[0].id != "subagent_spawn" || macros[0].offset != 5 {
		t.Fatalf("macros %+v", macros)
	}
}

func FuzzLintScanners(f *testing.F) {
	for _, s := range lintSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		checkScanners(t, text)
	})
}

func FuzzMaskHeredocs(f *testing.F) {
	for _, s := range []string{">>EOF x <<EOF", ">>AB <<A", ">>A >>B <<B <<A", "<<A>>A"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			return
		}
		got, want := append([]byte(nil), in...), append([]byte(nil), in...)
		maskHeredocs(got)
		maskHeredocsReference(want)
		if !bytes.Equal(got, want) {
			t.Fatalf("maskHeredocs(%q) = %q, reference %q", in, got, want)
		}
	})
}
