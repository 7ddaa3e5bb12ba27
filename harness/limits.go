package harness

import (
	"encoding/json"
	"fmt"
	"math"
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
// must be safe integers, decided on the number's text when the caller kept
// it (json.Number); every other number must be one a 64-bit float holds.
// Arrays and objects hold at most MaxItems members. Strings are bounded by
// StringLimit for nexus's own tools and by pluginStringLimit for plugin
// tools. The rules are the same for every tool nexus serves.
func checkLimits(t *tools.Tool, doc map[string]any, args map[string]any) error {
	own := t.Plugin == ""
	var probs []string
	for name, v := range args {
		ps, _ := propSchema(doc, name)
		limit := StringLimit(t.Name, name)
		if !own {
			limit = pluginStringLimit(ps)
		}
		walkLimits(ps, v, clip(name), limit, &probs)
	}
	if len(probs) == 0 {
		return nil
	}
	sort.Strings(probs)
	return &tools.Error{Message: strings.Join(probs, "; ")}
}

// pluginStringLimit is the byte limit of the strings in a plugin tool's
// parameter: MaxTextBytes, or what the parameter's own maxLength
// (characters, up to 4 bytes each in UTF-8) allows when that is more. The
// MCP message limit bounds it in any case.
func pluginStringLimit(ps map[string]any) int {
	limit := MaxTextBytes
	if n, ok := ps["maxLength"].(float64); ok && n > 0 && n*4 > float64(limit) {
		limit = int(min(n*4, float64(math.MaxInt32)))
	}
	return limit
}

func propSchema(doc map[string]any, name string) (map[string]any, bool) {
	props, _ := doc["properties"].(map[string]any)
	if ps, ok := props[name].(map[string]any); ok {
		return ps, true
	}
	extra, ok := doc["additionalProperties"].(map[string]any)
	return extra, ok
}

func walkLimits(sch map[string]any, v any, where string, limit int, probs *[]string) {
	types := schemaTypes(sch)
	switch x := v.(type) {
	case string:
		if len(x) > limit {
			*probs = append(*probs, fmt.Sprintf("parameter %q is %d bytes long; the limit is %s", where, len(x), bytesText(limit)))
		}
	case json.Number:
		if msg := numberProblem(x, types["integer"]); msg != "" {
			*probs = append(*probs, fmt.Sprintf("parameter %q %s", where, msg))
		}
	case float64:
		if types["integer"] {
			if msg := unsafeInteger(x); msg != "" {
				*probs = append(*probs, fmt.Sprintf("parameter %q %s, got %s", where, safeRange(), msg))
			}
		}
	case []any:
		if len(x) > MaxItems {
			*probs = append(*probs, fmt.Sprintf("parameter %q has %d items; the limit is %d", where, len(x), MaxItems))
			return
		}
		items, _ := sch["items"].(map[string]any)
		for i, e := range x {
			walkLimits(items, e, where+"["+strconv.Itoa(i)+"]", limit, probs)
		}
	case map[string]any:
		if len(x) > MaxItems {
			*probs = append(*probs, fmt.Sprintf("parameter %q has %d members; the limit is %d", where, len(x), MaxItems))
			return
		}
		for k, e := range x {
			if len(k) > MaxShortBytes {
				*probs = append(*probs, fmt.Sprintf("parameter %q has a member name %d bytes long; the limit is %s", where, len(k), bytesText(MaxShortBytes)))
				continue
			}
			ps, _ := propSchema(sch, k)
			walkLimits(ps, e, where+"."+clip(k), limit, probs)
		}
	}
}

// safeRange is how an integer parameter's range is worded (built when a
// message needs it, not when a hook process starts).
func safeRange() string {
	return fmt.Sprintf("must be an integer from -%d to %d (what a JSON number carries exactly)", int64(MaxSafeInteger), int64(MaxSafeInteger))
}

// unsafeInteger returns how to show a float64 that is an integer outside
// ±MaxSafeInteger ("" otherwise). Non-integral numbers are left to the
// schema's own "must be an integer" message.
func unsafeInteger(n float64) string {
	if math.IsInf(n, 0) || math.IsNaN(n) || n != math.Trunc(n) {
		return ""
	}
	if math.Abs(n) > MaxSafeInteger {
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return ""
}

// numberProblem says what is wrong with a number kept as its text ("" when
// nothing is): for an integer parameter, a value that is not a whole
// number or lies outside ±MaxSafeInteger; for any other, a value no 64-bit
// float holds. coerce has already turned every number it accepts into a
// canonical integer or a float64, so only refused ones are still text.
func numberProblem(n json.Number, integer bool) string {
	d, ok := parseDecimal(string(n))
	switch {
	case !ok:
		return "must be a number, got " + clip(string(n))
	case integer && !d.integer():
		return "must be an integer, got number"
	case integer && !d.safe():
		return safeRange() + ", got " + clip(string(n))
	case !integer && !d.inFloatRange():
		return fmt.Sprintf("must be a number a 64-bit float holds (0, or from 1e-323 to 1.8e308 either side of it), got %s", clip(string(n)))
	}
	return ""
}

// decimal is the exact value a number's text denotes, ±digits × 10^exp,
// read without arithmetic: digits has no leading or trailing zeros ("" is
// zero). Deciding integer-ness on it keeps 1.0000000000000001 and 1e-400
// from becoming the integers 1 and 0 on the way through a float64, and
// costs nothing whatever the exponent (a big.Rat of 1e-999999 would hold
// 10^999999).
type decimal struct {
	neg    bool
	digits string
	exp    int64 // clamped to ±maxExp: beyond it only the sign matters
}

const maxExp = 1 << 40

// parseDecimal reads a JSON number, also accepting a leading '+' and a
// bare leading or trailing '.' as strconv.ParseFloat does (hosts that send
// numbers as strings write them so).
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		d.neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[intStart:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	if intPart == "" && frac == "" {
		return d, false
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			neg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < maxExp {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == es {
			return d, false
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	// Leading zeros change nothing; each trailing zero moves the exponent.
	digits := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits)-len(trimmed)) - int64(len(frac))
	d.digits = trimmed
	d.exp = max(-maxExp, min(maxExp, exp))
	if d.digits == "" {
		d.neg, d.exp = false, 0
	}
	return d, true
}

// magnitude is m with 10^(m-1) ≤ |value| < 10^m (0 for zero).
func (d decimal) magnitude() int64 { return int64(len(d.digits)) + d.exp }

func (d decimal) integer() bool { return d.digits == "" || d.exp >= 0 }

// safe reports an integer within ±MaxSafeInteger.
func (d decimal) safe() bool {
	if !d.integer() {
		return false
	}
	switch m := d.magnitude(); {
	case m < 16:
		return true
	case m > 16:
		return false
	}
	return d.digits+strings.Repeat("0", int(d.exp)) <= strconv.Itoa(MaxSafeInteger)
}

// text renders an integer canonically (1e2 → 100, -0 → 0).
func (d decimal) text() string {
	if d.digits == "" {
		return "0"
	}
	s := d.digits + strings.Repeat("0", int(d.exp))
	if d.neg {
		s = "-" + s
	}
	return s
}

// float returns the nearest float64; ok is false when the value is beyond
// what a float64 holds: past ±MaxFloat64, or so small a non-zero value
// that it would read as 0.
func (d decimal) float() (float64, bool) {
	if d.digits == "" {
		return 0, true
	}
	if m := d.magnitude(); m > 309 || m < -322 {
		return 0, false
	}
	s := d.digits + "e" + strconv.FormatInt(d.exp, 10)
	if d.neg {
		s = "-" + s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f == 0 {
		return 0, false
	}
	return f, true
}

func (d decimal) inFloatRange() bool {
	_, ok := d.float()
	return ok
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
