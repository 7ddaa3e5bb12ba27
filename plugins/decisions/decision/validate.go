package decision

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyyaml"
)

// validate applies the reference model's field rules (pydantic 2 lax mode
// over the values PyYAML produced) and collects every field error, fields
// in declaration order, then unknown keys in input order.
func validate(fm *pyyaml.Mapping) (*Decision, []FieldError) {
	get := func(key string) (any, bool) {
		for i, k := range fm.Keys {
			if k == key {
				return fm.Values[i], true
			}
		}
		return nil, false
	}
	d := New()
	var errs []FieldError
	add := func(loc []any, typ, msg string, rule Rule) {
		errs = append(errs, FieldError{Loc: loc, Type: typ, Msg: msg, rule: rule})
	}

	if v, ok := get("date"); !ok {
		add([]any{"date"}, "missing", "Field required", RuleFieldMissing)
	} else if date, typ, msg := validateDate(v); typ != "" {
		add([]any{"date"}, typ, msg, RuleFieldDate)
	} else {
		d.Date = date
	}
	if v, ok := get("version"); ok {
		if n, typ, msg := validateVersion(v); typ != "" {
			add([]any{"version"}, typ, msg, RuleFieldVersion)
		} else {
			d.Version = n
		}
	}
	enum := func(key string, values []string, required, nullable bool, dst *string) {
		v, ok := get(key)
		if !ok {
			if required {
				add([]any{key}, "missing", "Field required", RuleFieldMissing)
			}
			return
		}
		if v == nil && nullable {
			*dst = ""
			return
		}
		if s, isStr := v.(string); isStr && slices.Contains(values, s) {
			*dst = s
			return
		}
		add([]any{key}, "enum", enumMessage(values), RuleFieldEnum)
	}
	enum("status", Statuses, false, false, &d.Status)
	enum("confidence", Confidences, true, false, &d.Confidence)
	enum("decision_type", DecisionTypes, false, true, &d.DecisionType)
	enum("reversibility", Reversibility, false, true, &d.Reversibility)
	enum("source", Sources, false, true, &d.Source)

	if v, ok := get("files_affected"); ok {
		if list, isList := v.([]any); isList {
			files := make([]string, 0, len(list))
			for i, item := range list {
				if s, isStr := item.(string); isStr {
					files = append(files, s)
				} else {
					add([]any{"files_affected", i}, "string_type", "Input should be a valid string", RuleFieldType)
				}
			}
			d.FilesAffected = files
		} else {
			add([]any{"files_affected"}, "list_type", "Input should be a valid list", RuleFieldType)
		}
	}
	ref := func(key string, dst *string) {
		v, ok := get(key)
		if !ok || v == nil {
			return
		}
		s, isStr := v.(string)
		if !isStr {
			add([]any{key}, "string_type", "Input should be a valid string", RuleFieldType)
			return
		}
		if msg, rule := CheckRef(s); msg != "" {
			add([]any{key}, "value_error", "Value error, "+msg, rule)
			return
		}
		*dst = s
	}
	ref("supersedes", &d.Supersedes)
	ref("superseded_by", &d.SupersededBy)

	for i, key := range approvalKeys {
		v, ok := get(key)
		if !ok || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			add([]any{key}, "string_type", "Input should be a valid string", RuleApprovalType)
			continue
		}
		if msg := checkApproval(key, s); msg != "" {
			add([]any{key}, "value_error", "Value error, "+msg, RuleApprovalInvalid)
			continue
		}
		*d.Approval.fields()[i] = s
	}

	for i, k := range fm.Keys {
		ks := k.(string)
		if slices.Contains(frontmatterKey, ks) || slices.Contains(approvalKeys, ks) {
			continue
		}
		if !pyyaml.Representable(fm.Values[i]) {
			add([]any{ks}, "value_unsupported", "nexus cannot write a value of type "+pyyaml.TypeName(fm.Values[i])+" back to YAML", RuleFieldType)
			continue
		}
		d.Extra = append(d.Extra, Extra{Key: ks, Value: fm.Values[i]})
	}
	return d, errs
}

var (
	reULID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`) })
	reCommit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`) })
)

// checkApproval is current Nauro's shape check of one approval value.
func checkApproval(key, v string) string {
	switch key {
	case "approved_at":
		t, err := time.Parse("2006-01-02T15:04:05.000000Z", v)
		if len(v) != 27 || err != nil || t.Format("2006-01-02T15:04:05.000000Z") != v {
			return "approved_at must use YYYY-MM-DDTHH:MM:SS.ffffffZ."
		}
	case "proposed_base_commit":
		if !reCommit().MatchString(v) {
			return "proposed_base_commit must be a 40- or 64-character lowercase hexadecimal commit SHA."
		}
	default:
		if !reULID().MatchString(v) {
			return fmt.Sprintf("%s must be a 26-character uppercase Crockford ULID; got a %d-character value.", key, pytext.Len(v))
		}
	}
	return ""
}

// approvalPartial is current Nauro's all-or-nothing rule: once any
// approval key is set, the first four must all be.
func approvalPartial(a Approval) *FieldError {
	f := a.fields()
	set := false
	for _, p := range f {
		set = set || *p != ""
	}
	if !set {
		return nil
	}
	var missing []string
	for i, p := range f[:4] {
		if *p == "" {
			missing = append(missing, approvalKeys[i])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &FieldError{Loc: []any{}, Type: "value_error", rule: RuleApprovalPartial,
		Msg: "Value error, partial approval provenance is invalid; missing " + strings.Join(missing, ", ") + "."}
}

// validateModel runs the model-level rules, in the reference's order.
func validateModel(d *Decision) *FieldError {
	if fe := approvalPartial(d.Approval); fe != nil {
		return fe
	}
	if d.Status == StatusActive {
		var names []string
		for _, r := range d.Rejected {
			if r.Reason == nil {
				names = append(names, pytext.Repr(r.Name))
			}
		}
		if len(names) > 0 {
			return &FieldError{Loc: []any{}, Type: "value_error", rule: RuleActiveReasonless,
				Msg: "Value error, Active decision has rejected alternatives without reasons: [" + strings.Join(names, ", ") + "]. Reasonless rejections are decision-hygiene failures."}
		}
	}
	if d.Status == StatusSuperseded && d.SupersededBy == "" {
		return &FieldError{Loc: []any{}, Type: "value_error", rule: RuleSupersededRequiresRef,
			Msg: "Value error, status=superseded requires superseded_by to point at the replacing decision."}
	}
	return nil
}

// Validate checks a decision built in code (not parsed) against the model
// rules, returning the first problem.
func Validate(d *Decision) error {
	check := func(key string, values []string, v string, nullable bool) error {
		if v == "" && nullable {
			return nil
		}
		if !slices.Contains(values, v) {
			return fmt.Errorf("%s: %s", key, enumMessage(values))
		}
		return nil
	}
	if d.Version < 1 {
		return fmt.Errorf("version: Input should be greater than or equal to 1")
	}
	for _, c := range []struct {
		key      string
		values   []string
		v        string
		nullable bool
	}{
		{"status", Statuses, d.Status, false}, {"confidence", Confidences, d.Confidence, false},
		{"decision_type", DecisionTypes, d.DecisionType, true}, {"reversibility", Reversibility, d.Reversibility, true},
		{"source", Sources, d.Source, true},
	} {
		if err := check(c.key, c.values, c.v, c.nullable); err != nil {
			return err
		}
	}
	for _, r := range []struct{ key, v string }{{"supersedes", d.Supersedes}, {"superseded_by", d.SupersededBy}} {
		if r.v == "" {
			continue
		}
		if msg, _ := CheckRef(r.v); msg != "" {
			return fmt.Errorf("%s: %s", r.key, msg)
		}
	}
	for i, p := range d.Approval.fields() {
		if *p != "" {
			if msg := checkApproval(approvalKeys[i], *p); msg != "" {
				return fmt.Errorf("%s", msg)
			}
		}
	}
	for _, e := range d.Extra {
		if slices.Contains(frontmatterKey, e.Key) || slices.Contains(approvalKeys, e.Key) || slices.Contains(derivedKeys, e.Key) || !pyyaml.Representable(e.Value) {
			return fmt.Errorf("frontmatter key %q cannot be kept as an extra key", e.Key)
		}
	}
	for _, r := range d.Rejected {
		if r.Name == "" {
			return fmt.Errorf("rejected alternative name: String should have at least 1 character")
		}
	}
	if fe := validateModel(d); fe != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(fe.Msg, "Value error, "))
	}
	return nil
}

// CheckRef validates a supersession reference: a plain integer string
// without leading zeros. It returns the reference's message and rule.
func CheckRef(v string) (string, Rule) {
	if v == "" {
		return "supersession ref must be a plain integer string (e.g. '70'), got " + pytext.Repr(v), RuleRefNotInteger
	}
	for _, r := range v {
		if !pytext.IsDigit(r) {
			return "supersession ref must be a plain integer string (e.g. '70'), got " + pytext.Repr(v), RuleRefNotInteger
		}
	}
	canonical, err := pyInt(v)
	if err != nil {
		return err.Error(), RuleRefNotInteger
	}
	if canonical != v {
		return "supersession ref must not have leading zeros, got " + pytext.Repr(v) + "; expected " + pytext.Repr(canonical), RuleRefLeadingZeros
	}
	return "", ""
}

// pyInt is str(int(v)) for a string of digits.
func pyInt(v string) (string, error) {
	if n := pytext.Len(v); n > 4300 {
		//lint:ignore ST1005 Nauro's (Python's) message, byte for byte
		return "", fmt.Errorf("Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", n)
	}
	var b strings.Builder
	for _, r := range v {
		d := pytext.DecimalValue(r)
		if d < 0 {
			return "", fmt.Errorf("invalid literal for int() with base 10: %s", pytext.Repr(v))
		}
		b.WriteByte(byte('0' + d))
	}
	s := strings.TrimLeft(b.String(), "0")
	if s == "" {
		s = "0"
	}
	return s, nil
}

var (
	reIntString   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?[0-9]+(?:_[0-9]+)*$`) })
	reFloatString = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([+-]?[0-9]+(?:_[0-9]+)*)\.0*$`) })
)

func validateVersion(v any) (int, string, string) {
	const (
		intType = "Input should be a valid integer"
		ge1     = "Input should be greater than or equal to 1"
	)
	var n int64
	switch x := v.(type) {
	case bool:
		if x {
			n = 1
		}
	case int64:
		n = x
	case *big.Int:
		if x.Sign() < 0 {
			return 0, "greater_than_equal", ge1
		}
		return 0, "int_parsing_size", "Input should be a valid integer, unable to parse input as an integer"
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return 0, "finite_number", "Input should be a finite number"
		case x != math.Trunc(x):
			return 0, "int_from_float", "Input should be a valid integer, got a number with a fractional part"
		case math.Abs(x) > 1<<53:
			return 0, "int_parsing_size", "Input should be a valid integer, unable to parse input as an integer"
		}
		n = int64(x)
	case string:
		s := pytext.Strip(x)
		if m := reFloatString().FindStringSubmatch(s); m != nil {
			s = m[1]
		}
		if !reIntString().MatchString(s) {
			return 0, "int_parsing", "Input should be a valid integer, unable to parse string as an integer"
		}
		parsed, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil {
			return 0, "int_parsing_size", "Input should be a valid integer, unable to parse input as an integer"
		}
		n = parsed
	default:
		return 0, "int_type", intType
	}
	if n < 1 {
		return 0, "greater_than_equal", ge1
	}
	if n > math.MaxInt32 {
		return 0, "int_parsing_size", "Input should be a valid integer, unable to parse input as an integer"
	}
	return int(n), "", ""
}

const (
	msgDateType    = "Input should be a valid date"
	msgDateInexact = "Datetimes provided to dates should have zero time - e.g. be exact dates"
)

func validateDate(v any) (Date, string, string) {
	switch x := v.(type) {
	case pyyaml.Date:
		return x, "", ""
	case pyyaml.DateTime:
		if x.Hour == 0 && x.Minute == 0 && x.Second == 0 && x.Micro == 0 {
			return x.Date, "", ""
		}
		return Date{}, "date_from_datetime_inexact", msgDateInexact
	case string:
		return dateFromString(x)
	case int64:
		return dateFromTimestamp(float64(x))
	case float64:
		return dateFromTimestamp(x)
	case *big.Int:
		return Date{}, "date_from_datetime_parsing", "Input should be a valid date or datetime, dates after 9999 are not supported as unix timestamps"
	}
	return Date{}, "date_type", msgDateType
}

// dateFromTimestamp accepts Unix seconds (milliseconds above 2e10) that
// fall exactly on midnight UTC.
func dateFromTimestamp(ts float64) (Date, string, string) {
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return Date{}, "date_from_datetime_parsing", "Input should be a valid date or datetime, invalid datetime"
	}
	if math.Abs(ts) > 2e10 {
		ts /= 1000
	}
	if ts != math.Trunc(ts) || math.Mod(ts, 86400) != 0 {
		return Date{}, "date_from_datetime_inexact", msgDateInexact
	}
	t := time.Unix(int64(ts), 0).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return Date{}, "date_from_datetime_parsing", "Input should be a valid date or datetime, dates after 9999 are not supported as unix timestamps"
	}
	return Date{Year: t.Year(), Month: int(t.Month()), Day: t.Day()}, "", ""
}

// dateFromString follows pydantic's lax parsing: an RFC 3339 date, or a
// datetime whose time is exactly midnight.
func dateFromString(s string) (Date, string, string) {
	parsing := func(msg string) (Date, string, string) {
		return Date{}, "date_from_datetime_parsing", "Input should be a valid date or datetime, " + msg
	}
	b := []byte(s)
	d, msg := parseDatePart(b)
	if msg != "" {
		return parsing(msg)
	}
	if len(b) == 10 {
		return d, "", ""
	}
	switch b[10] {
	case 'T', 't', ' ', '_':
	default:
		return parsing("unexpected extra characters at the end of the input")
	}
	zero, msg := parseTimePart(b[11:])
	if msg != "" {
		return parsing(msg)
	}
	if !zero {
		return Date{}, "date_from_datetime_inexact", msgDateInexact
	}
	return d, "", ""
}

func digits2(b []byte) (int, bool) {
	if len(b) < 2 || b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

func parseDatePart(b []byte) (Date, string) {
	if len(b) < 10 {
		return Date{}, "input is too short"
	}
	y := 0
	for i := 0; i < 4; i++ {
		if b[i] < '0' || b[i] > '9' {
			return Date{}, "invalid character in year"
		}
		y = y*10 + int(b[i]-'0')
	}
	if b[4] != '-' {
		return Date{}, "invalid date separator, expected `-`"
	}
	m, ok := digits2(b[5:7])
	if !ok {
		return Date{}, "invalid character in month"
	}
	if b[7] != '-' {
		return Date{}, "invalid date separator, expected `-`"
	}
	day, ok := digits2(b[8:10])
	if !ok {
		return Date{}, "invalid character in day"
	}
	if m < 1 || m > 12 {
		return Date{}, "month value is outside expected range of 1-12"
	}
	if day < 1 || day > pyyaml.DaysIn(y, m) || y == 0 {
		return Date{}, "day value is outside expected range"
	}
	return Date{Year: y, Month: m, Day: day}, ""
}

// parseTimePart parses HH:MM[:SS[.ffffff]][Z|±HH[:]MM] and reports whether
// the time of day is zero.
func parseTimePart(b []byte) (bool, string) {
	if len(b) < 5 {
		return false, "input is too short"
	}
	h, ok := digits2(b)
	if !ok {
		return false, "invalid character in hour"
	}
	if b[2] != ':' {
		return false, "invalid time separator, expected `:`"
	}
	mi, ok := digits2(b[3:])
	if !ok {
		return false, "invalid character in minute"
	}
	if h > 23 {
		return false, "hour value is outside expected range of 0-23"
	}
	if mi > 59 {
		return false, "minute value is outside expected range of 0-59"
	}
	zero := h == 0 && mi == 0
	rest := b[5:]
	if len(rest) > 0 && rest[0] == ':' {
		sec, ok := digits2(rest[1:])
		if !ok {
			return false, "invalid character in second"
		}
		if sec > 59 {
			return false, "second value is outside expected range of 0-59"
		}
		zero = zero && sec == 0
		rest = rest[3:]
		if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				if rest[i] != '0' && i <= 6 {
					zero = false
				}
				i++
			}
			if i == 1 {
				return false, "second fraction value is missing"
			}
			rest = rest[i:]
		}
	}
	switch {
	case len(rest) == 0:
	case rest[0] == 'Z' || rest[0] == 'z':
		rest = rest[1:]
	case rest[0] == '+' || rest[0] == '-':
		if _, ok := digits2(rest[1:]); !ok {
			return false, "invalid timezone hour"
		}
		rest = rest[3:]
		if len(rest) > 0 && rest[0] == ':' {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			if _, ok := digits2(rest); !ok {
				return false, "invalid timezone minute"
			}
			rest = rest[2:]
		}
	default:
		return false, "invalid timezone sign"
	}
	if len(rest) > 0 {
		return false, "unexpected extra characters at the end of the input"
	}
	return zero, ""
}
