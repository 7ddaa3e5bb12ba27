package vocabulary

// Agent is one subagent role (agents/<id>/meta.yml, or a manifest entry).
type Agent struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Task         string   `json:"task,omitempty"`
	AliasKo      string   `json:"alias_ko,omitempty"`
	Category     string   `json:"category"`
	Capabilities []string `json:"capabilities"`
	ResumeTier   string   `json:"resume_tier"`
	ModelTier    string   `json:"model_tier"`
	BodyHash     string   `json:"body_hash,omitempty"` // manifest only
}

// Skill is one skill (skills/<id>/meta.yml, or a manifest entry).
type Skill struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Summary         string   `json:"summary,omitempty"`
	Triggers        []string `json:"triggers,omitempty"`
	ManualOnly      bool     `json:"manual_only,omitempty"`
	HarnessDocsRefs []string `json:"harness_docs_refs,omitempty"`
	AliasKo         string   `json:"alias_ko,omitempty"`
	BodyHash        string   `json:"body_hash,omitempty"` // manifest only
}

// Capability is an entry of vocabulary/capabilities.yml.
type Capability struct {
	ID                    string   `json:"id"`
	Description           string   `json:"description"`
	Intent                string   `json:"intent"`
	BlocksSemanticClasses []string `json:"blocks_semantic_classes"`
	ProseGuidance         string   `json:"prose_guidance"`
}

// Entry is a simple id + description entry (categories, resume tiers).
type Entry struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// Tag types.
const (
	TagSkill        = "skill"
	TagInlineAction = "inline_action"
)

// Tag is an entry of vocabulary/tags.yml.
type Tag struct {
	ID            string   `json:"id"`
	Trigger       string   `json:"trigger"`
	Type          string   `json:"type"`
	Skill         string   `json:"skill,omitempty"`
	Handler       string   `json:"handler,omitempty"`
	Description   string   `json:"description"`
	Variants      []string `json:"variants,omitempty"`
	ProseGuidance string   `json:"prose_guidance,omitempty"`
}

// Invocation is an entry of vocabulary/invocations.yml. In the manifest only
// ID, Description, Intent and FallbackBehavior are present.
type Invocation struct {
	ID               string            `json:"id"`
	Description      string            `json:"description"`
	Intent           string            `json:"intent"`
	SemanticParams   []InvocationParam `json:"semantic_params,omitempty"`
	ProseGuidance    string            `json:"prose_guidance,omitempty"`
	FallbackBehavior string            `json:"fallback_behavior"`
}

// InvocationParam is one semantic parameter of an invocation primitive.
type InvocationParam struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	ValueType   string `json:"value_type,omitempty"`
}

// TaskException is an entry of vocabulary/task-exceptions.yml.
type TaskException struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	AppliesWhen string `json:"applies_when"`
	Treatment   string `json:"treatment"`
	Rationale   string `json:"rationale"`
}

// MemoryPolicy is vocabulary/memory_policy.yml.
type MemoryPolicy struct {
	Categories []MemoryCategory `json:"categories"`
	Naming     struct {
		Pattern        string `json:"pattern"`
		Description    string `json:"description"`
		OptionalPrefix bool   `json:"optional_prefix"`
	} `json:"naming"`
	AccessTracking struct {
		ObservationPrimitive   string `json:"observation_primitive"`
		Scope                  string `json:"scope"`
		Description            string `json:"description"`
		InformationAccumulated []struct {
			Name    string `json:"name"`
			Meaning string `json:"meaning"`
		} `json:"information_accumulated"`
		StorageContractReference string `json:"storage_contract_reference"`
	} `json:"access_tracking"`
	Forgetting struct {
		ManualGateDefault          bool   `json:"manual_gate_default"`
		Description                string `json:"description"`
		AutomaticDeletionStructure struct {
			Principle   string `json:"principle"`
			Description string `json:"description"`
		} `json:"automatic_deletion_structure"`
		RecoverableDeletionRequirement string `json:"recoverable_deletion_requirement"`
		RecoverableDeletionDescription string `json:"recoverable_deletion_description"`
	} `json:"forgetting"`
	Merge struct {
		Principle   string `json:"principle"`
		Description string `json:"description"`
	} `json:"merge"`
}

// MemoryCategory is a memory category with its filename prefix.
type MemoryCategory struct {
	ID          string `json:"id"`
	Prefix      string `json:"prefix"`
	Description string `json:"description"`
}

// VocabularySet is manifest.json's "vocabulary" object, or the same content
// read from vocabulary/*.yml.
type VocabularySet struct {
	Capabilities   []Capability    `json:"capabilities"`
	Categories     []Entry         `json:"categories"`
	ResumeTiers    []Entry         `json:"resume_tiers"`
	Tags           []Tag           `json:"tags"`
	Invocations    []Invocation    `json:"invocations"`
	TaskExceptions []TaskException `json:"task_exceptions"`
	MemoryPolicy   MemoryPolicy    `json:"memory_policy"`
}

// Manifest is manifest.json.
type Manifest struct {
	NexusCoreVersion      string        `json:"nexus_core_version"`
	NexusCoreCommit       string        `json:"nexus_core_commit"`
	SchemaContractVersion string        `json:"schema_contract_version"`
	Agents                []Agent       `json:"agents"`
	Skills                []Skill       `json:"skills"`
	Vocabulary            VocabularySet `json:"vocabulary"`
}
