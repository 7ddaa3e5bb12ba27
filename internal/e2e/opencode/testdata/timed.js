// The timed plugin of the OpenCode e2e benchmark: it loads the generated
// nexus plugin from $OC_NEXUS_PLUGIN (kept outside plugins/, so OpenCode
// does not load it twice), registers its hooks, and appends the time each
// tool.execute.before took (nanoseconds, measured around the hook, which
// returns without yielding) to $OC_TIMING_LOG. Node built-ins only.
import fs from "node:fs"

const { NexusPlugin } = await import(process.env.OC_NEXUS_PLUGIN)

export const Timed = async (ctx) => {
  const hooks = await NexusPlugin(ctx)
  const before = hooks["tool.execute.before"]
  hooks["tool.execute.before"] = (input, output) => {
    const start = process.hrtime.bigint()
    const done = before(input, output)
    fs.appendFileSync(process.env.OC_TIMING_LOG, `${process.hrtime.bigint() - start}\n`)
    return done
  }
  return hooks
}
