package cli

import (
	"regexp"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// The store's texts are the MCP tools' answers, byte for byte Nauro's
// (the Nauro fixtures in plugins/decisions prove them), and they name MCP
// tools and their parameters: "Call get_decision(3)", "Use
// propose_decision", operation="supersede". The command line says the
// same things in its own words: cliText rewrites an answer for the
// terminal, naming `nexus decision` commands and flags; the MCP side is
// never touched.

// cliWords are the MCP wordings and what the command line says instead.
var cliWords = strings.NewReplacer(
	kernel.NoDecisionsToCheck,
	"No existing decisions to check against.\n\nRecord the first one with `nexus decision propose`; then `nexus decision check` compares new approaches with the decisions recorded.",
	"Call get_decision on each related decision before proposing.",
	"Read each related decision with `nexus decision show NUMBER` before proposing.",
	kernel.SearchEmptyQuery,
	"nexus decision search needs a non-empty query; `nexus decision list` lists every decision.",
	`. Use operation="supersede" to replace the decision with new metadata.`,
	". Use --operation supersede to replace the decision with new metadata.",
	`Use operation="supersede" to replace it, or operation="update" to append rationale — not a second add.`,
	"Use --operation supersede --affected ID to replace it, or --operation update --affected ID to append rationale — not a second add.",
	`operation="update" appends rationale only`,
	"--operation update appends rationale only",
	"resolves_questions contains unknown id(s)",
	"--resolves names unknown question id(s)",
	"Call get_context (L0 lists every open question) to see the canonical ids in open-questions.md.",
	"The open questions and their ids are in open-questions.md of the store (`nexus decision show` prints decisions, the file holds the questions).",
)

// getDecisionCall is "Call get_decision(N) before proposing.".
var getDecisionCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Call get_decision\((\d+)\) before proposing\.`)
})

// cliText is an MCP answer of the store in the command line's words.
func cliText(s string) string {
	s = getDecisionCall().ReplaceAllString(s, "Read it with `nexus decision show $1` before proposing.")
	return cliWords.Replace(s)
}

// mcpNames are the MCP tool names the command line's texts must not
// show (its tests check every text it prints).
var mcpNames = []string{"propose_decision", "get_decision", "check_decision", "search_decisions", "list_decisions",
	"get_context", "update_state", "get_raw_file", "flag_question", "operation=", "resolves_questions"}

// checkEnum refuses a flag value outside its set: a usage error (exit 2),
// as nexus's own commands answer a bad flag value.
func checkEnum(flag, val string, allowed []string) error {
	if val == "" {
		return nil
	}
	for _, a := range allowed {
		if val == a {
			return nil
		}
	}
	return fail(2, "--%s %q: use one of %s", flag, val, strings.Join(allowed, ", "))
}
