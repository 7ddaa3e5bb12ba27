package decision

import (
	"fmt"
	"strings"
)

// Rule identifies why a file failed to parse (the categories of the
// reference's invalid.json goldens).
type Rule string

// Parse failure rules.
const (
	RuleEncoding              Rule = "encoding_invalid"
	RuleFrontmatterMissing    Rule = "frontmatter_missing"
	RuleFrontmatterUnterm     Rule = "frontmatter_unterminated"
	RuleYAMLInvalid           Rule = "frontmatter_yaml_invalid"
	RuleYAMLValue             Rule = "frontmatter_yaml_value"
	RuleNotMapping            Rule = "frontmatter_not_mapping"
	RuleH1Missing             Rule = "h1_missing"
	RuleDecisionMissing       Rule = "decision_section_missing"
	RuleDerivedKey            Rule = "frontmatter_derived_key"
	RuleNonStringKey          Rule = "frontmatter_non_string_key"
	RuleRejectedName          Rule = "rejected_name_empty"
	RuleFieldMissing          Rule = "field_missing"
	RuleFieldEnum             Rule = "field_enum"
	RuleFieldExtra            Rule = "field_extra_forbidden"
	RuleFieldDate             Rule = "field_date"
	RuleFieldVersion          Rule = "field_version"
	RuleFieldType             Rule = "field_type"
	RuleFieldMultiple         Rule = "field_multiple"
	RuleRefNotInteger         Rule = "supersession_ref_not_integer"
	RuleRefLeadingZeros       Rule = "supersession_ref_leading_zeros"
	RuleActiveReasonless      Rule = "active_reasonless_rejection"
	RuleSupersededRequiresRef Rule = "superseded_requires_ref"
	RuleApprovalPartial       Rule = "approval_provenance_partial"
	RuleApprovalInvalid       Rule = "approval_field_invalid"
	RuleApprovalType          Rule = "approval_field_type"
)

// FieldError is one validation failure, shaped like pydantic's structured
// errors: Loc is the field path (names and list indices), empty for
// model-level rules.
type FieldError struct {
	Loc  []any  `json:"loc"`
	Type string `json:"type"`
	Msg  string `json:"msg"`
	rule Rule
}

// ParseError explains why a decision file was rejected.
type ParseError struct {
	File   string
	Rule   Rule
	Msg    string       // the reference's message for non-validation failures
	Fields []FieldError // validation failures
}

func (e *ParseError) Error() string {
	if len(e.Fields) == 0 {
		return e.Msg
	}
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = locString(f.Loc) + ": " + f.Msg
	}
	noun := "error"
	if len(parts) > 1 {
		noun = "errors"
	}
	return fmt.Sprintf("%s: %d validation %s for Decision: %s", e.File, len(parts), noun, strings.Join(parts, "; "))
}

func locString(loc []any) string {
	if len(loc) == 0 {
		return "decision"
	}
	parts := make([]string, len(loc))
	for i, l := range loc {
		parts[i] = fmt.Sprint(l)
	}
	return strings.Join(parts, ".")
}

func fail(file string, rule Rule, msg string) *ParseError {
	return &ParseError{File: file, Rule: rule, Msg: msg}
}

// validationError wraps field errors, naming the rule after their kind
// (field_multiple when several kinds are mixed).
func validationError(file string, errs []FieldError) *ParseError {
	rule := errs[0].rule
	for _, e := range errs[1:] {
		if e.rule != rule {
			rule = RuleFieldMultiple
			break
		}
	}
	return &ParseError{File: file, Rule: rule, Fields: errs}
}
