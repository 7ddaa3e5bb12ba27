package sdktest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/sdktest"
)

type echo struct{ sdk.UnimplementedPlugin }

func (echo) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "echo", Version: "1", Tools: []sdk.ToolSpec{{Name: "say"}}}, nil
}

func (echo) CallTool(_ context.Context, _ string, args json.RawMessage) (*sdk.ToolResult, error) {
	return &sdk.ToolResult{Text: string(args)}, nil
}

// Pipe connects a plugin where no testing.TB is at hand; in a test,
// Connect(t, echo{}) does the same and closes the connection when the test
// ends. A call's deadline reaches the plugin, as from nexus.
func ExamplePipe() {
	p, closeConn, err := sdktest.Pipe(echo{})
	if err != nil {
		panic(err)
	}
	defer closeConn()
	res, err := p.CallTool(context.Background(), "say", json.RawMessage(`{"text":"hi"}`))
	fmt.Println(res.Text, err)
	// Output: {"text":"hi"} <nil>
}
