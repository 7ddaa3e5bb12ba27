package decisions

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// BenchmarkCallToolCheck is one check_decision call through the plugin:
// store resolution (repo pointer, registry), the warm corpus and the
// rendering, on the 62-decision golden store.
func BenchmarkCallToolCheck(b *testing.B) {
	p, _, _ := newProject(b, "")
	args := json.RawMessage(`{"proposed_approach":"Cache exchange rates in Redis for an hour","context":"Using a one-hour TTL keeps the ECB rates fresh enough."}`)
	if _, err := p.CallTool(context.Background(), decisionsapi.ToolCheckDecision, args); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.CallTool(context.Background(), decisionsapi.ToolCheckDecision, args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
