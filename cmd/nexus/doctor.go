package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

func init() { register(newDoctorCmd) }

type doctorFlags struct {
	fix           bool
	verifyPlugins bool
	staleAfter    time.Duration
	nexusRoot     string
}

func newDoctorCmd(a *app) *cobra.Command {
	var fl doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this project's nexus setup and say how to fix what is wrong (--fix fixes what is safe)",
		Long: `Check everything nexus depends on in this project and say how to fix each problem:

  distribution    the nexus-core distribution, validated as by "nexus validate"
  config          the configuration files, variables and flags load (unknown keys named)
  gitignore       .nexus/.gitignore ignores state/
  state           plan.json, tasks.json, history.json, agent-tracker.json and
                  memory-access.jsonl match their nexus-core schemas
  session         a plan or task cycle that no session has touched for --stale-after
  namespaces      other harnesses sharing .nexus/ (their folders are never opened)
  locks           locks held for long (with the holder), temporary files of killed writers
  plugins         plugin manifests and executable digests (--verify-plugins starts each)
  claude-install  Claude Code hooks and MCP server registered and running this executable
  claude-agents   the agents and skills install wrote are present and current
  claude-hook     a canary PreToolUse through "nexus hook" reaches the engine
  claude-mcp      "nexus mcp" answers initialize

The canary and the MCP probe run in a scratch project, so the project's state is never
touched; when nexus is registered they run the registered commands in the environment Claude
Code gives them (the settings' env, no shell variables).

--fix applies only safe fixes and prints what it did: corrupt state files are moved aside
(as "nexus state repair" does), invalid memory-access lines dropped, leftover temporary
files older than a minute removed, a missing .gitignore written or state/ added to it, the
pre-0.7 tracker removed, and nexus's own Claude Code entries re-installed where some are
missing or run another executable (other entries are never touched). A stale cycle is
only reported: close it with the task_close tool.

Exit status: 0 when there are no errors (warnings allowed), 1 with errors, 2 when nexus
was called wrongly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd, a, fl)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&fl.fix, "fix", false, "apply the safe fixes, say what was done, then check again")
	f.BoolVar(&fl.verifyPlugins, "verify-plugins", false, "start each plugin once to check its handshake (slower)")
	f.DurationVar(&fl.staleAfter, "stale-after", doctor.DefaultStaleAfter, "how long a cycle may go without session activity before it is called stale")
	f.StringVar(&fl.nexusRoot, "nexus-root", "", "the .nexus folder to check (overrides runtime.root / NEXUS_RUNTIME_ROOT)")
	return cmd
}

func runDoctor(cmd *cobra.Command, a *app, fl doctorFlags) error {
	proj, err := a.Project()
	if err != nil {
		return err
	}
	cfgOpts := config.Options{ProjectDir: proj, Flags: a.root.PersistentFlags(), FlagKeys: flagKeys}
	// A configuration that does not load is one finding, not the end: the
	// other checks run with the layers that do load.
	cfg, cfgErr := doctor.LoadConfig(cfgOpts)

	// The doctor builds no engine (harness.Assemble): it must report a
	// distribution that cannot be found and a configuration that does not
	// load, so it checks the state with what it has, the layout and a store
	// that validates against the schemas only when the distribution is there.
	dist, locateErr := vocabulary.Locate(cfg.String("core.dir"), describeSource("core.dir", cfg.Source("core.dir")), proj)
	layout, err := harness.ProjectLayout(cfg, proj, fl.nexusRoot)
	if err != nil {
		if fl.nexusRoot != "" {
			return usageError{err} // the flag named something that is not a .nexus folder
		}
		return err // the configuration's runtime.root or harness.id: a failure, not a wrong call
	}
	store := state.New(layout, nil)
	if locateErr == nil {
		store = state.New(layout, schema.NewCoreSetFS(dist.FS))
	}
	exe := ""
	if e, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(e); err == nil {
			e = r
		}
		exe = e
	}
	home, _ := os.UserHomeDir()
	prefix := cfg.String("mcp.tool_prefix")
	probe := doctor.Probe{Executable: exe, CoreDir: dist.Dir, NoCore: locateErr != nil, Find: func() *doctor.Registered { return doctor.FindRegistered(proj, home, exe) }}
	chosenCore := ""
	if l := cfg.Source("core.dir").Layer; (l == config.LayerFlag || l == config.LayerEnv) && dist.Dir != "" {
		chosenCore, _ = filepath.Abs(dist.Dir)
	}
	checks := []doctor.Check{
		doctor.Distribution{Dist: dist, LocateErr: locateErr, Validate: validateDistribution},
		doctor.Config{Options: cfgOpts},
		doctor.Gitignore{Layout: layout},
		doctor.Symlinks{Layout: layout},
		doctor.StateFiles{Store: store},
		doctor.Session{Layout: layout, StaleAfter: fl.staleAfter, ToolRef: func(t string) string { return prefix + t }},
		doctor.Namespaces{Layout: layout},
		doctor.Locks{Layout: layout},
		doctor.Plugins{Options: doctorPluginOptions(cfg, cfgErr, proj, fl.nexusRoot), Verify: fl.verifyPlugins},
		doctor.ClaudeInstall{Project: proj, Home: home, Executable: exe, ChosenCore: chosenCore},
		doctor.ClaudeCatalog{Project: proj, Home: home, Executable: exe, Version: version, ChosenCore: chosenCore,
			Render: func() ([]claude.OwnedFile, string, error) { return renderCatalog(a, exe, "") }},
		doctor.HookCanary{Probe: probe},
		doctor.MCPInitialize{Probe: probe},
	}
	rep := doctor.Run(cmd.Context(), checks, fl.fix)
	w := cmd.OutOrStdout()
	if a.jsonOut {
		err = writeJSON(w, struct {
			Project    string `json:"project"`
			NexusDir   string `json:"nexus_dir"`
			HarnessID  string `json:"harness_id"`
			Executable string `json:"executable"`
			*doctor.Report
		}{proj, layout.Nexus, layout.HarnessID, exe, rep})
	} else {
		fmt.Fprintf(w, "nexus doctor: project %s (harness id %s, nexus %s)\n", proj, layout.HarnessID, version)
		err = rep.WriteText(w)
	}
	if err != nil {
		return err
	}
	if !rep.Healthy {
		return &exitError{Code: 1, Silent: true}
	}
	return nil
}

// doctorPluginOptions are the plugin host's options as every command
// builds them (harness.PluginOptions); when the configuration does not
// load, those of the layers that do, without the built-in plugins, whose
// settings come from the configuration.
func doctorPluginOptions(cfg *config.Config, cfgErr error, proj, nexusRoot string) pluginhost.Options {
	o := harness.PluginOptions(cfg, proj, nexusRoot)
	if cfgErr != nil {
		o.Builtin = nil
	}
	return o
}
