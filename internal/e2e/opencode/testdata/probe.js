// The probe plugin of the OpenCode e2e tests: it appends every hook's
// arguments as one JSON line to $PROBE_LOG, adds a synthetic text part to
// each user message and a line to each system prompt, and blocks (throws
// from tool.execute.before) any tool call whose arguments contain
// BLOCKME. Node built-ins only, so OpenCode needs no npm package to load it.
import fs from "node:fs"

const LOG = process.env.PROBE_LOG

// plain turns a hook argument into JSON-safe data (OpenCode passes objects
// with cycles and functions).
function plain(v, depth = 0, seen = new WeakSet()) {
  if (v === null || typeof v !== "object") return typeof v === "function" ? "[function]" : v
  if (seen.has(v)) return "[circular]"
  if (depth > 12) return "[deep]"
  seen.add(v)
  if (Array.isArray(v)) return v.map((x) => plain(x, depth + 1, seen))
  const out = {}
  for (const k of Object.keys(v)) out[k] = plain(v[k], depth + 1, seen)
  return out
}

function log(hook, input, output) {
  if (!LOG) return
  fs.appendFileSync(LOG, JSON.stringify({ t: Date.now(), hook, input: plain(input), output: plain(output) }) + "\n")
}

export const Probe = async (ctx) => {
  log("init", { keys: Object.keys(ctx).sort(), directory: ctx.directory, worktree: ctx.worktree, bun: typeof Bun === "undefined" ? null : Bun.version })
  return {
    event: async (input) => log("event", input),
    "chat.message": async (input, output) => {
      log("chat.message", input, output)
      output.parts.push({ id: output.parts[0].id + "p", sessionID: input.sessionID, messageID: output.message.id, type: "text", text: "PROBE-SYNTHETIC-CONTEXT", synthetic: true })
    },
    "experimental.chat.system.transform": async (input, output) => {
      log("experimental.chat.system.transform", input, output)
      output.system.push("PROBE-SYSTEM-ADDITION")
    },
    "tool.execute.before": async (input, output) => {
      log("tool.execute.before", input, output)
      if (JSON.stringify(output.args ?? {}).includes("BLOCKME")) throw new Error(`probe blocked ${input.tool}: BLOCKME seen`)
    },
    "tool.execute.after": async (input, output) => log("tool.execute.after", input, output),
    dispose: async () => log("dispose", {}),
  }
}
