package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/nexus-harness/nexus/internal/state"
)

func artifactWrite() *Tool {
	return &Tool{
		Name: "artifact_write",
		Description: "Save a deliverable (report, findings, synthesis) to .nexus/state/artifacts/<filename>, overwriting a file of the same name. " +
			"Returns the absolute path. Names must stay inside the artifacts folder.",
		Params: params("artifact_write"),
		// Overwrites a same-name file; writing the same content twice
		// leaves the same result. No gate class: agents without file-edit
		// rights must still be able to save their deliverables.
		Annotations: Annotations{Title: "Write an artifact", Destructive: true, Idempotent: true, OpenWorld: false},
		Handle:      Object(runArtifactWrite),
	}
}

func runArtifactWrite(ctx context.Context, env *Env, args map[string]any) (map[string]any, error) {
	name, _ := str(args, "filename")
	content, _ := str(args, "content")
	s := env.Store
	// A name that leaves the artifacts folder is the caller's mistake, not
	// a failure of nexus: report it as a tool error.
	if _, err := state.CheckName(s.L.ArtifactsDir(), name); err != nil {
		return nil, Errorf(err.Error())
	}
	path, err := s.WriteArtifact(ctx, name, []byte(content))
	var ee *state.EscapeError
	if errors.As(err, &ee) {
		return nil, Errorf(err.Error()) // the folder's state, not a nexus failure
	}
	if err != nil {
		return nil, fmt.Errorf("write artifact %s: %w", name, err)
	}
	return map[string]any{"success": true, "path": path}, nil
}
