package decisions

import (
	"encoding/json"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

type prop = map[string]any

func str(desc string) prop { return prop{"type": "string", "description": desc} }

func strEnum(desc string, values []string, def string) prop {
	p := prop{"type": "string", "enum": values, "description": desc}
	if def != "" {
		p["default"] = def
	}
	return p
}

func strList(desc string) prop {
	return prop{"type": "array", "items": prop{"type": "string"}, "description": desc}
}

// common are the parameters every local tool accepts.
func common(props prop) prop {
	props["project_id"] = str("Optional project name when the working directory does not identify the project (a .nauro/config.json above it or a registered repo path).")
	props["cwd"] = str("Optional directory to resolve the project from; defaults to the project nexus runs in.")
	return props
}

func schema(props prop, required ...string) json.RawMessage {
	if required == nil {
		required = []string{}
	}
	b, err := json.Marshal(prop{"type": "object", "properties": props, "required": required})
	if err != nil {
		panic(err)
	}
	return b
}

var (
	readOnly = func(title string) sdk.ToolAnnotations {
		return sdk.ToolAnnotations{Title: title, ReadOnly: true, Idempotent: true}
	}
	writes = func(title string) sdk.ToolAnnotations {
		return sdk.ToolAnnotations{Title: title}
	}
)

// toolSpecs describes the tools. Descriptions are nexus's own words;
// names, parameters and annotations follow the reference.
func toolSpecs() []sdk.ToolSpec {
	return []sdk.ToolSpec{
		{
			Name: decisionsapi.ToolGetContext,
			Description: "Project context at a chosen depth. L0: current state, stack, up to three open questions and the last 10 active decisions. " +
				"L1: adds project.md, the full text of the 10 most recent active decisions and summaries of 10 earlier ones. L2: everything, including state history. " +
				"Call it at the start of a session.",
			InputSchema: schema(common(prop{"level": strEnum("Detail level.", []string{"L0", "L1", "L2"}, "L0")})),
			Annotations: readOnly("Get project context"),
		},
		{
			Name:        decisionsapi.ToolGetRawFile,
			Description: "Raw markdown of one file of the project's decision store (project.md, state_current.md, stack.md, open-questions.md, decisions/NNN-slug.md). Prefer get_context, get_decision or search_decisions.",
			InputSchema: schema(common(prop{"path": str("Path relative to the store root, e.g. decisions/001-initial-setup.md.")}), "path"),
			Annotations: readOnly("Read raw store file"),
		},
		{
			Name:        decisionsapi.ToolListDecisions,
			Description: "List recorded decisions, newest first (active only unless include_superseded). Use search_decisions for a topic.",
			InputSchema: schema(common(prop{
				"limit":              prop{"type": "integer", "default": 20, "description": "Maximum number of decisions."},
				"include_superseded": prop{"type": "boolean", "default": false, "description": "Also list superseded decisions."},
			})),
			Annotations: readOnly("List decision history"),
		},
		{
			Name:        decisionsapi.ToolGetDecision,
			Description: "One decision by number. mode=full (default) returns the whole file; mode=header returns status, supersession links, date, type, confidence, the title and the first paragraph of the rationale.",
			InputSchema: schema(common(prop{
				"number": prop{"type": "integer", "description": "Decision number, e.g. 23."},
				"mode":   strEnum("header (triage) or full (complete file).", []string{"header", "full"}, "full"),
			}), "number"),
			Annotations: readOnly("Get decision by number"),
		},
		{
			Name:        decisionsapi.ToolDiffSince,
			Description: "What changed in the store between the two latest snapshots, or since the snapshot nearest to N days ago.",
			InputSchema: schema(common(prop{"days": prop{"type": "integer", "description": "Look back this many days instead of diffing the two latest snapshots."}})),
			Annotations: readOnly("Diff since last session"),
		},
		{
			Name:        decisionsapi.ToolSearchDecisions,
			Description: "BM25 search over decision titles and rationales (active decisions unless include_superseded). Returns number, title, date, status, score and a snippet.",
			InputSchema: schema(common(prop{
				"query":              str("Search text (required, non-empty)."),
				"limit":              prop{"type": "integer", "default": 10, "description": "Maximum number of results."},
				"include_superseded": prop{"type": "boolean", "default": false, "description": "Also search superseded decisions."},
			}), "query"),
			Annotations: readOnly("Search decisions"),
		},
		{
			Name: decisionsapi.ToolCheckDecision,
			Description: "Before adopting an approach, find the recorded decisions it touches (BM25 over active decisions; nothing is written). " +
				"The answer lists related decisions and an assessment; it does not judge conflicts: read the related decisions with get_decision before proposing.",
			InputSchema: schema(common(prop{
				"proposed_approach": str("The approach being considered (at most 5000 characters)."),
				"context":           str("Optional: why it is being considered (at most 5000 characters)."),
			}), "proposed_approach"),
			Annotations: readOnly("Check decision against existing decisions"),
		},
		{
			Name: decisionsapi.ToolProposeDecision,
			Description: "Record an architectural decision once the user agreed to it: add a new one, supersede an existing one (new decision plus the old one marked superseded), " +
				"or update one (append a dated paragraph to its rationale). Structural checks can reject the proposal; similar decisions found by BM25 are reported but never block the write. " +
				"Always include the rejected alternatives and why.",
			InputSchema: schema(common(prop{
				"title":                str("Short title of the decision (empty for operation=update)."),
				"rationale":            str("Why: the constraints and trade-offs (at least 20 characters)."),
				"operation":            strEnum("add (default), update (append rationale to affected_decision_id) or supersede (replace affected_decision_id).", []string{"add", "update", "supersede"}, "add"),
				"affected_decision_id": str("The decision to update or supersede, e.g. decision-042 or 042-use-postgres."),
				"rejected": prop{"type": "array", "description": "Alternatives considered and rejected, each with its reason.",
					"items": prop{"type": "object", "properties": prop{"alternative": prop{"type": "string"}, "reason": prop{"type": "string"}}}},
				"confidence":         strEnum("high: explicitly approved; medium: best option given known trade-offs; low: working assumption.", decision.Confidences, "medium"),
				"decision_type":      strEnum("Optional category.", decision.SchemaDecisionTypes, ""),
				"reversibility":      strEnum("How costly reversing it would be.", decision.Reversibility, ""),
				"files_affected":     strList("Optional repo-relative paths the decision is about."),
				"resolves_questions": strList("Ids of open questions this decision answers (Q12 or a legacy timestamp id); get_context L0 lists them."),
			}), "title", "rationale"),
			Annotations: writes("Propose a decision"),
		},
		{
			Name: decisionsapi.ToolFlagQuestion,
			Description: "Log an open question for a human (pass question, optionally context), or mark questions answered by a decision (pass resolved_by and targets). " +
				"A new question that a recorded decision already seems to answer is still logged, with a hint naming that decision.",
			InputSchema: schema(common(prop{
				"question":    str("The question to log."),
				"context":     str("Optional: why the question matters."),
				"targets":     strList("Question ids to resolve (with resolved_by)."),
				"resolved_by": str("Decision id that answers the targets, e.g. D12."),
			})),
			Annotations: writes("Flag or resolve open question"),
		},
		{
			Name:        decisionsapi.ToolUpdateState,
			Description: "Replace the project's current state with a short progress note (the previous state moves to the history) and take a snapshot. Warns when the note repeats an existing entry.",
			InputSchema: schema(common(prop{"delta": str("What changed, e.g. \"Deployed v0.2.0 to staging\" (at most 5000 characters).")}), "delta"),
			Annotations: writes("Update project state"),
		},
		{
			Name:        decisionsapi.ToolListProjects,
			Description: "Projects registered in the Nauro registry on this machine, with their ids; pass a name as project_id to other tools when the working directory does not identify the project.",
			InputSchema: schema(prop{}),
			Annotations: readOnly("List projects"),
		},
	}
}
