package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/doctor"
	"github.com/nexus-harness/nexus/harness/host/hosts"
)

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
  config          the configuration: a key left out (unknown, bad value) is a warning,
                  a file that cannot be read or parsed an error
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
was called wrongly, 3 when a configuration file cannot be read or parsed (reported with
the other findings).`,
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
	r, err := a.compose()
	if err != nil {
		return err
	}
	// The doctor builds no harness: it must report a configuration that
	// does not load and a distribution that cannot be found, which are
	// exactly where building one stops. Each stage gives its result or its
	// error (compose.Stages), the configuration loaded once.
	st, err := r.Stages(fl.nexusRoot)
	if err != nil {
		return err
	}
	if st.LayoutErr != nil {
		if fl.nexusRoot != "" {
			return usageError{st.LayoutErr} // the flag named something that is not a .nexus folder
		}
		return st.LayoutErr // the configuration's runtime.root or harness.id: a failure, not a wrong call
	}
	exe := ""
	if e, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(e); err == nil {
			e = r
		}
		exe = e
	}
	own := map[string]string{}
	for _, h := range hosts.All() {
		if id := h.HarnessID(); id != "" {
			own[id] = h.Name()
		}
	}
	checks := st.Checks(compose.CheckOptions{StaleAfter: fl.staleAfter, VerifyPlugins: fl.verifyPlugins, Validate: validateDistribution, HostNamespaces: own})
	// Each host's own checks of its setup (harness/host/<host>).
	for _, h := range hosts.All() {
		if hc, ok := h.(doctor.HostChecker); ok {
			env := st.HostEnv(exe, version)
			env.Install.Models, env.Install.Getenv = st.Settings.HostModels(h.Name()), os.Getenv
			checks = append(checks, hc.DoctorChecks(env)...)
		}
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
		}{st.Project, st.Layout.Nexus, st.Layout.HarnessID, exe, rep})
	} else {
		fmt.Fprintf(w, "nexus doctor: project %s (harness id %s, nexus %s)\n", st.Project, st.Layout.HarnessID, version)
		err = rep.WriteText(w)
	}
	if err != nil {
		return err
	}
	if st.Config.Err() != nil {
		return &exitError{Code: exitConfig, Silent: true} // a configuration file that does not load, reported above
	}
	if !rep.Healthy {
		return &exitError{Code: exitFailure, Silent: true}
	}
	return nil
}
