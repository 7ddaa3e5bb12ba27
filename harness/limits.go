package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/harness/tools"
)

// Limits on tool arguments, checked before the schema (docs/security.md
// lists them). Strings are measured in bytes of UTF-8. A value over its
// limit is refused with a message naming the parameter and the limit, and
// the value itself is never repeated.
const (
	// MaxShortBytes bounds names and one-line fields: titles, owners, ids,
	// file names, topics, queries.
	MaxShortBytes = 1 << 10
	// MaxTextBytes bounds every other text field of nexus's own tools:
	// contexts, summaries, decisions, research notes.
	MaxTextBytes = 64 << 10
	// MaxMemoryBytes bounds a memory note (memory_save content).
	MaxMemoryBytes = 256 << 10
	// MaxArtifactBytes bounds artifact_write's content.
	MaxArtifactBytes = 2 << 20
	// MaxItems bounds every array and every object of free keys.
	MaxItems = 1000
	// MaxSafeInteger is the largest integer a JSON number carries exactly
	// (2^53-1); integer parameters outside ±MaxSafeInteger are refused,
	// since the value nexus received may already differ from the one sent.
	MaxSafeInteger = 1<<53 - 1
	// maxEcho bounds any piece of the caller's input repeated in an error.
	maxEcho = 64
)

// stringLimits are the per-parameter limits ("tool.param") that differ
// from MaxTextBytes; a limit holds for every string inside the parameter
// (array items, object values and keys).
var stringLimits = map[string]int{
	"artifact_write.filename":     MaxShortBytes,
	"artifact_write.content":      MaxArtifactBytes,
	"history_search.query":        MaxShortBytes,
	"plan_decide.how_agents":      MaxShortBytes,
	"plan_decide.how_agent_ids":   MaxShortBytes,
	"plan_start.topic":            MaxShortBytes,
	"plan_update.action":          MaxShortBytes,
	"plan_update.title":           MaxShortBytes,
	"task_add.title":              MaxShortBytes,
	"task_add.owner":              MaxShortBytes,
	"task_add.owner_agent_id":     MaxShortBytes,
	"task_add.owner_reuse_policy": MaxShortBytes,
	"task_update.status":          MaxShortBytes,
	"memory_save.category":        MaxShortBytes,
	"memory_save.topic":           MaxShortBytes,
	"memory_save.content":         MaxMemoryBytes,
	"memory_gc.delete":            MaxShortBytes,
}

// StringLimit is the byte limit of a string parameter of one of nexus's
// own tools.
func StringLimit(tool, param string) int {
	if n, ok := stringLimits[tool+"."+param]; ok {
		return n
	}
	return MaxTextBytes
}

// checkLimits walks the arguments along the schema. Integer-typed values
// must be safe integers (every tool, plugin tools included: it is about
// what JSON can carry). Sizes of strings, arrays and objects are checked
// for nexus's own tools; a plugin tool's arguments are bounded by the MCP
// message limit and its own schema.
func checkLimits(t *tools.Tool, doc map[string]any, args map[string]any) error {
	own := t.Call == nil
	var probs []string
	for name, v := range args {
		ps, _ := propSchema(doc, name)
		limit := StringLimit(t.Name, name)
		walkLimits(ps, v, clip(name), limit, own, &probs)
	}
	if len(probs) == 0 {
		return nil
	}
	sort.Strings(probs)
	return &tools.Error{Message: strings.Join(probs, "; ")}
}

func propSchema(doc map[string]any, name string) (map[string]any, bool) {
	props, _ := doc["properties"].(map[string]any)
	if ps, ok := props[name].(map[string]any); ok {
		return ps, true
	}
	extra, ok := doc["additionalProperties"].(map[string]any)
	return extra, ok
}

func walkLimits(sch map[string]any, v any, where string, limit int, own bool, probs *[]string) {
	types := schemaTypes(sch)
	switch x := v.(type) {
	case string:
		if own && len(x) > limit {
			*probs = append(*probs, fmt.Sprintf("parameter %q is %d bytes long; the limit is %s", where, len(x), bytesText(limit)))
		}
	case float64, json.Number:
		if types["integer"] {
			if msg := unsafeInteger(x); msg != "" {
				*probs = append(*probs, fmt.Sprintf("parameter %q must be an integer from -%d to %d (what a JSON number carries exactly), got %s", where, int64(MaxSafeInteger), int64(MaxSafeInteger), msg))
			}
		}
	case []any:
		if own && len(x) > MaxItems {
			*probs = append(*probs, fmt.Sprintf("parameter %q has %d items; the limit is %d", where, len(x), MaxItems))
			return
		}
		items, _ := sch["items"].(map[string]any)
		for i, e := range x {
			walkLimits(items, e, where+"["+strconv.Itoa(i)+"]", limit, own, probs)
		}
	case map[string]any:
		if own && len(x) > MaxItems {
			*probs = append(*probs, fmt.Sprintf("parameter %q has %d members; the limit is %d", where, len(x), MaxItems))
			return
		}
		for k, e := range x {
			if own && len(k) > MaxShortBytes {
				*probs = append(*probs, fmt.Sprintf("parameter %q has a member name %d bytes long; the limit is %s", where, len(k), bytesText(MaxShortBytes)))
				continue
			}
			ps, _ := propSchema(sch, k)
			walkLimits(ps, e, where+"."+clip(k), limit, own, probs)
		}
	}
}

// unsafeInteger returns how to show a number that is not an integer within
// ±MaxSafeInteger ("" when it is one). Non-integral numbers are left to the
// schema's own "must be an integer" message.
func unsafeInteger(v any) string {
	switch n := v.(type) {
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) || n != math.Trunc(n) {
			return ""
		}
		if math.Abs(n) > MaxSafeInteger {
			return strconv.FormatFloat(n, 'g', -1, 64)
		}
	case json.Number:
		r, ok := new(big.Rat).SetString(string(n))
		if !ok || !r.IsInt() {
			return ""
		}
		if r.Num().CmpAbs(big.NewInt(MaxSafeInteger)) > 0 {
			return clip(string(n))
		}
	}
	return ""
}

func bytesText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d bytes (%d KiB)", n, n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// clip shortens a piece of the caller's input for an error message.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}
