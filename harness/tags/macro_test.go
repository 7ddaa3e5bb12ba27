package tags

import (
	"strings"
	"testing"
)

var known = map[string]bool{"skill_activation": true, "subagent_spawn": true, "task_register": true, "user_question": true, "memory_read_observation": true}

func TestParseMacros(t *testing.T) {
	body := "a {{skill_activation skill=nx-plan mode=auto}} b\n" +
		"{{user_question question=\"Pick one (or \\\"none\\\")\" options=[{label: \"A, B\", description: \"x}\"}, {label: Skip, description: y}]}}\n" +
		"{{subagent_spawn target_role=writer name=w prompt=>>P1}}\nline one\nline {two}\n<<P1\ntail {single} {{task_register label=\"L\" state=pending}}"
	ms, err := ParseMacros(body, known)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4 {
		t.Fatalf("%d macros", len(ms))
	}
	if ms[0].ID != "skill_activation" || ms[0].Params["skill"] != "nx-plan" || ms[0].Params["mode"] != "auto" {
		t.Errorf("macro 0: %+v", ms[0])
	}
	if ms[1].Params["question"] != `Pick one (or "none")` {
		t.Errorf("question %q", ms[1].Params["question"])
	}
	if ms[1].Params["options"] != `[{label: "A, B", description: "x}"}, {label: Skip, description: y}]` {
		t.Errorf("options %q", ms[1].Params["options"])
	}
	if ms[2].Params["prompt"] != "line one\nline {two}" || ms[2].Params["name"] != "w" {
		t.Errorf("heredoc %+v", ms[2].Params)
	}
	if ms[2].Line != 3 {
		t.Errorf("line %d", ms[2].Line)
	}
	out, err := Expand(body, known, func(m Macro) string { return "<" + m.ID + ">" })
	if err != nil {
		t.Fatal(err)
	}
	want := "a <skill_activation> b\n<user_question>\n<subagent_spawn>\ntail {single} <task_register>"
	if out != want {
		t.Errorf("expanded\n%q\nwant\n%q", out, want)
	}
}

func TestMacroErrors(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"{{unknown_thing a=b}}", "not a primitive"},
		{"x\n{{skill_activation skill=a", "line 2"},
		{"{{skill_activation skill=\"a}}", "unterminated string"},
		{"{{user_question options=[a, {b]}}", "unbalanced"},
		{"{{subagent_spawn prompt=>>X}}\nbody", "never closed"},
		{"{{subagent_spawn prompt=>>X}}\n<<X\n{{subagent_spawn prompt=>>X}}\n<<X", "used twice"},
		{"{{task_register label}}", "expected key=value"},
		{"{{task_register a=1 a=2}}", "given twice"},
		{"{{ }}", "without a primitive id"},
	} {
		if _, err := ParseMacros(tt.body, known); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.body, err, tt.want)
		}
	}
}

// Every shipped skill body expands with the neutral spelling, leaving no
// macro behind (each host's own spelling is tested in its package).
func TestActivateShippedSkills(t *testing.T) {
	core := loadCore(t)
	d := New(core.Tags())
	p := NewProfile(nil, d, "nx_")
	for _, s := range core.Manifest().Skills {
		st, err := ActivateSkill(core, s.ID, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if st.ExpandErr != nil {
			t.Errorf("%s: %v", s.ID, st.ExpandErr)
		}
		if strings.Contains(st.Text, "{{") {
			t.Errorf("%s: a macro is left: %q", s.ID, st.Text[strings.Index(st.Text, "{{"):][:60])
		}
	}
	st, err := ActivateSkill(core, "nx-plan", "auto", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nx-plan skill in auto mode", "[plan:auto]", `spawn a "explore" subagent`} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("nx-plan text lacks %q", want)
		}
	}
	if _, err := ActivateSkill(core, "nx-nothing", "", p); err == nil {
		t.Error("an unknown skill activated")
	}
}

// A host's spelling replaces the neutral one for the primitives it spells
// and keeps the rest; its notes follow the body.
func TestSpellingOverridesNeutral(t *testing.T) {
	core := loadCore(t)
	sp := &Spelling{
		Host: "test",
		Macro: func(m Macro, agentPrefix string) string {
			if m.ID == "subagent_spawn" {
				return "SPAWN " + agentPrefix + m.Params["target_role"]
			}
			return ""
		},
		Docs: map[string]string{"resume_invocation": "RESUME NOTE"},
		Note: func(prefix string) string { return "NOTE " + prefix },
	}
	p := NewProfile(sp, New(core.Tags()), "x_")
	p.AgentPrefix = "pkg:"
	st, err := ActivateSkill(core, "nx-plan", "", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SPAWN pkg:explore", "NOTE x_", "RESUME NOTE", "[plan]"} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if p.Host != "test" || NewProfile(nil, New(core.Tags()), "").Host != "neutral" {
		t.Error("profile host names")
	}
}

func FuzzParseMacros(f *testing.F) {
	for _, s := range []string{"{{skill_activation skill=a}}", "{{subagent_spawn prompt=>>A}}\nx\n<<A", "{{user_question options=[{a: \"}\"}]}}", "{{", "}}", "{{a=", "{{task_register label=\"x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		ms, err := ParseMacros(body, known)
		prev := 0
		for _, m := range ms {
			if m.Start < prev || m.End <= m.Start || m.End > len(body) || !strings.HasPrefix(body[m.Start:], "{{") {
				t.Fatalf("bad span %d-%d in %q", m.Start, m.End, body)
			}
			prev = m.End
		}
		if err == nil {
			out, err := Expand(body, known, func(Macro) string { return "" })
			if err != nil {
				t.Fatalf("parse ok, expand failed: %v", err)
			}
			if len(out) > len(body) {
				t.Fatalf("expansion to nothing grew the text")
			}
		}
	})
}
