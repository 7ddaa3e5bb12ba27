package pluginserver_test

import (
	"context"

	"github.com/nexus-harness/nexus/plugins/sdk"
	"github.com/nexus-harness/nexus/plugins/sdk/pluginserver"
)

type hello struct{ sdk.UnimplementedPlugin }

func (hello) Info(context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: "hello", Version: "0.1.0"}, nil
}

// A plugin's main: Serve returns only when nexus stops the plugin. (Not run
// here: outside nexus it prints a notice and exits.)
func ExampleServe() {
	pluginserver.Serve(hello{})
}
