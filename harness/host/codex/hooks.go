package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nexus-harness/nexus/internal/jsonorder"
)

// nexus's hooks live in hooks.json in the scope's Codex folder
// (<project>/.codex/hooks.json, ~/.codex/hooks.json), not in [hooks]
// tables of config.toml: Codex reads both (and warns when one folder has
// both), the trust key names the file either way, and a JSON file nexus
// rewrites as a whole keeps the user's config.toml out of it. nexus's
// matcher groups go after the user's, so installing nexus never shifts the
// keys (and so the trust) of hooks the user already reviewed.

// HooksFile is the name of the hooks file in a Codex folder.
const HooksFile = "hooks.json"

// ManagedFlag marks the hook commands nexus writes; `nexus hook` accepts
// and ignores it. Uninstall removes only handlers whose command has it.
const ManagedFlag = "--managed"

// hookMark is what every command nexus writes contains.
const hookMark = " hook --host codex " + ManagedFlag

// HookTimeout is the timeout (seconds) nexus writes for its hooks, as for
// Claude Code: ample for a hook that takes a state lock and writes a file
// or two, short enough that a stuck nexus does not hold the session for
// Codex's default 600 s. Codex runs the call anyway when a hook times out,
// so the gate must answer well within it.
const HookTimeout = 30

// InstalledHooks are the events nexus registers for Codex and each
// handler's timeout. SessionEnd gets Codex's cap (its default is 1 s).
// Stop (every Lead turn), the compact events (SessionStart "compact"
// carries the context), PermissionRequest (never fired by codex exec) and
// Interrupt need nothing from nexus.
var InstalledHooks = []struct {
	Event   string
	Timeout int
}{
	{SessionStart, HookTimeout},
	{UserPromptSubmit, HookTimeout},
	{PreToolUse, HookTimeout},
	{PostToolUse, HookTimeout},
	{SubagentStart, HookTimeout},
	{SubagentStop, HookTimeout},
	{SessionEnd, MaxShortTimeout},
}

// HookCommand is the command line nexus writes for one event; coreDir
// (when not "") is passed as --core. Codex runs it with /bin/bash -c.
func HookCommand(nexus, coreDir, event string) (string, error) {
	q, err := shellQuote(nexus)
	if err != nil {
		return "", err
	}
	core := ""
	if coreDir != "" {
		c, err := shellQuote(coreDir)
		if err != nil {
			return "", err
		}
		core = "--core " + c + " "
	}
	return q + hookMark + " " + core + event, nil
}

func shellQuote(s string) (string, error) {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("%q cannot be written in a hook command: %w", s, err)
	}
	return q, nil
}

// IsNexusHook reports whether a hook command is one nexus wrote.
func IsNexusHook(command string) bool { return strings.Contains(command, hookMark) }

// HooksEdit is the outcome of EditHooks.
type HooksEdit struct {
	// Data is the new hooks.json (two-space indentation, the user's member
	// order and number spellings kept); nil when Remove.
	Data []byte
	// Changed is false when the file already says what nexus wants (no
	// write: a second install changes nothing).
	Changed bool
	// Remove is true when nothing is left: the file should be deleted.
	Remove bool
}

// MaxHooksFile bounds the hooks.json nexus reads and rewrites.
const MaxHooksFile = 4 << 20

// EditHooks adds nexus's handlers to a hooks.json (install) or removes
// them (uninstall), leaving every other group and handler as it is. data
// is the current file (nil or empty: none). Installing keeps an existing
// nexus handler where it is (its key, and so its trust, stays) and brings
// its command and timeout up to date; a handler nexus no longer registers
// is removed. A file that is not a JSON object of event arrays is refused,
// never overwritten.
func EditHooks(data []byte, nexus, coreDir string, install bool) (HooksEdit, error) {
	if len(data) > MaxHooksFile {
		return HooksEdit{}, fmt.Errorf("%s is larger than %d bytes; nexus will not rewrite it", HooksFile, MaxHooksFile)
	}
	if install && nexus == "" {
		return HooksEdit{}, fmt.Errorf("no nexus executable to register")
	}
	root, exists, err := parseHooks(data)
	if err != nil {
		return HooksEdit{}, err
	}
	before := encodeJSON(root)
	hooks, _ := root.Get("hooks")
	events, _ := hooks.(*jsonorder.Object)
	if events == nil {
		if !install {
			return HooksEdit{Data: data}, nil
		}
		events = jsonorder.NewObject()
		root.Set("hooks", events)
	}
	want := map[string]int{}
	if install {
		for _, h := range InstalledHooks {
			want[h.Event] = h.Timeout
		}
	}
	// Remove nexus's handlers the install does not keep: all of them when
	// uninstalling, duplicates and events nexus no longer registers.
	kept := map[string]*jsonorder.Object{}
	for _, ev := range events.Keys() {
		v, _ := events.Get(ev)
		groups := v.([]any) // parseHooks checked the shape
		var out []any
		for _, g := range groups {
			group := g.(*jsonorder.Object)
			// nexus's handler must see every occurrence: one in a group
			// whose matcher narrows it (moved there by hand) is replaced.
			matchAll := true
			if m, ok := group.Get("matcher"); ok && m != nil && m != "" && m != "*" {
				matchAll = false
			}
			hv, _ := group.Get("hooks")
			handlers := hv.([]any)
			var rest []any
			for _, h := range handlers {
				hobj, _ := h.(*jsonorder.Object)
				if hobj == nil || !IsNexusHook(stringMember(hobj, "command")) {
					rest = append(rest, h)
					continue
				}
				if _, ok := want[ev]; ok && kept[ev] == nil && matchAll {
					kept[ev] = hobj
					rest = append(rest, h)
				}
			}
			switch {
			case len(rest) == len(handlers):
				out = append(out, g)
			case len(rest) > 0:
				group.Set("hooks", rest)
				out = append(out, g)
			}
			// A group left without handlers held only nexus's: dropped.
		}
		if len(out) == 0 {
			events.Delete(ev)
		} else if len(out) != len(groups) {
			events.Set(ev, out)
		}
	}
	if install {
		for _, h := range InstalledHooks {
			cmd, err := HookCommand(nexus, coreDir, h.Event)
			if err != nil {
				return HooksEdit{}, err
			}
			if handler := kept[h.Event]; handler != nil {
				handler.Set("type", "command")
				handler.Set("command", cmd)
				if n, ok := numberMember(handler, "timeout"); !ok || n != h.Timeout {
					handler.Set("timeout", json.Number(strconv.Itoa(h.Timeout)))
				}
				continue
			}
			handler := jsonorder.NewObject().Set("type", "command").Set("command", cmd).Set("timeout", json.Number(strconv.Itoa(h.Timeout)))
			group := jsonorder.NewObject().Set("hooks", []any{handler})
			v, _ := events.Get(h.Event)
			groups, _ := v.([]any)
			events.Set(h.Event, append(groups, group))
		}
	}
	if events.Len() == 0 {
		root.Delete("hooks")
	}
	after := encodeJSON(root)
	if bytes.Equal(before, after) {
		return HooksEdit{Data: data}, nil
	}
	if root.Len() == 0 {
		return HooksEdit{Changed: exists, Remove: exists}, nil
	}
	return HooksEdit{Data: after, Changed: true}, nil
}

// parseHooks decodes a hooks.json and checks the shape nexus edits: an
// object whose "hooks" (when present) maps events to arrays of groups, each
// an object whose "hooks" is an array.
func parseHooks(data []byte) (*jsonorder.Object, bool, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return jsonorder.NewObject(), false, nil
	}
	v, err := jsonorder.Parse(data, nil)
	if err != nil {
		return nil, true, fmt.Errorf("%s is not valid JSON (%v); nexus will not rewrite it: fix it by hand first", HooksFile, err)
	}
	root, ok := v.(*jsonorder.Object)
	if !ok {
		return nil, true, fmt.Errorf("%s is not a JSON object; nexus will not rewrite it: fix it by hand first", HooksFile)
	}
	hv, ok := root.Get("hooks")
	if !ok {
		return root, true, nil
	}
	events, ok := hv.(*jsonorder.Object)
	if !ok {
		return nil, true, fmt.Errorf(`%s: "hooks" is not an object of events; nexus will not rewrite it: fix it by hand first`, HooksFile)
	}
	for ev, gv := range events.All() {
		groups, ok := gv.([]any)
		if !ok {
			return nil, true, fmt.Errorf(`%s: "hooks"."%s" is not an array of matcher groups; nexus will not rewrite it: fix it by hand first`, HooksFile, ev)
		}
		for i, g := range groups {
			group, ok := g.(*jsonorder.Object)
			if !ok {
				return nil, true, fmt.Errorf(`%s: "hooks"."%s"[%d] is not an object; nexus will not rewrite it: fix it by hand first`, HooksFile, ev, i)
			}
			hs, ok := group.Get("hooks")
			if _, isArr := hs.([]any); !ok || !isArr {
				return nil, true, fmt.Errorf(`%s: "hooks"."%s"[%d] has no "hooks" array; nexus will not rewrite it: fix it by hand first`, HooksFile, ev, i)
			}
		}
	}
	return root, true, nil
}

func stringMember(o *jsonorder.Object, k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

// numberMember reads an integer member (JSON numbers are json.Number).
func numberMember(o *jsonorder.Object, k string) (int, bool) {
	v, ok := o.Get(k)
	if !ok {
		return 0, false
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil
}

// encodeJSON renders a decoded document with two-space indentation and a
// final newline (JSON.stringify(v, null, 2)): compact first, then
// json.Indent, which keeps number spellings.
func encodeJSON(v any) []byte {
	var c bytes.Buffer
	writeCompact(&c, v)
	var b bytes.Buffer
	if err := json.Indent(&b, c.Bytes(), "", "  "); err != nil {
		// writeCompact emits valid JSON; this cannot happen.
		panic(fmt.Sprintf("codex: re-encoding JSON: %v", err))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func writeCompact(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case *jsonorder.Object:
		b.WriteByte('{')
		i := 0
		for k, v := range x.All() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(b, k)
			b.WriteByte(':')
			writeCompact(b, v)
			i++
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(x.String())
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x) // strings, booleans, null
		b.Truncate(b.Len() - 1)
	}
}

// HookEntry is one command handler of a hooks file, with the key and hash
// Codex gives it.
type HookEntry struct {
	Key  string
	Hash string
	Hook Hook
	// Group and Index locate the handler: its matcher group's index within
	// the event and its index within the group.
	Group, Index int
	// Nexus is true for a handler nexus wrote (IsNexusHook).
	Nexus bool
}

// ListHooks lists the command handlers of a hooks.json at path (the
// absolute path Codex reads it from: keys name it), in Codex's event
// order. Handlers Codex skips (other types, empty commands) are left out
// but keep their places in the numbering, as Codex counts them.
func ListHooks(path string, data []byte) ([]HookEntry, error) {
	root, _, err := parseHooks(data)
	if err != nil {
		return nil, err
	}
	hv, _ := root.Get("hooks")
	events, _ := hv.(*jsonorder.Object)
	if events == nil {
		return nil, nil
	}
	var out []HookEntry
	for _, ev := range Events {
		gv, _ := events.Get(ev)
		groups, _ := gv.([]any)
		for gi, g := range groups {
			group := g.(*jsonorder.Object)
			var matcher *string
			if m, ok := group.Get("matcher"); ok && m != nil {
				s, isStr := m.(string)
				if !isStr {
					return nil, fmt.Errorf(`%s: "hooks"."%s"[%d].matcher is not a string`, HooksFile, ev, gi)
				}
				matcher = &s
			}
			hs, _ := group.Get("hooks")
			for hi, h := range hs.([]any) {
				handler, _ := h.(*jsonorder.Object)
				if handler == nil || stringMember(handler, "type") != "command" || strings.TrimSpace(stringMember(handler, "command")) == "" {
					continue
				}
				hook := Hook{Event: ev, Matcher: matcher, Command: stringMember(handler, "command"), StatusMessage: stringMember(handler, "statusMessage")}
				if _, ok := handler.Get("timeout"); ok {
					n, isInt := numberMember(handler, "timeout")
					if !isInt || n < 0 {
						return nil, fmt.Errorf(`%s: "hooks"."%s"[%d].hooks[%d].timeout is not a whole number of seconds`, HooksFile, ev, gi, hi)
					}
					hook.Timeout = max(n, 1) // Codex runs a written 0 as 1 s
				}
				if a, ok := handler.Get("async"); ok {
					b, isBool := a.(bool)
					if !isBool {
						return nil, fmt.Errorf(`%s: "hooks"."%s"[%d].hooks[%d].async is not true or false`, HooksFile, ev, gi, hi)
					}
					hook.Async = b
				}
				out = append(out, HookEntry{
					Key: HookKey(path, ev, gi, hi), Hash: TrustHash(hook), Hook: hook,
					Group: gi, Index: hi, Nexus: IsNexusHook(hook.Command),
				})
			}
		}
	}
	return out, nil
}

// NexusHooks lists the handlers nexus wrote in a hooks.json at path: what
// `--trust-hooks` records and doctor checks.
func NexusHooks(path string, data []byte) ([]HookEntry, error) {
	all, err := ListHooks(path, data)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(e HookEntry) bool { return !e.Nexus }), nil
}
