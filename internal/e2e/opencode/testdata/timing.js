// The timing plugin of the OpenCode e2e benchmarks: tool.execute.before
// does what a host plugin would do to ask an outside program about each
// tool call, and appends the time that took (nanoseconds) to
// $OC_TIMING_LOG. $OC_TIMING_MODE picks the way:
//   trivial   nothing (the hook itself)
//   spawn     node:child_process spawn of $OC_TIMING_CMD per call: one JSON
//             line in, wait for its answer and its exit
//   bunspawn  the same with Bun.spawn
//   stdio     one long-lived $OC_TIMING_CMD started with the plugin: one
//             JSON line in and one line back per call
// Node built-ins only.
import fs from "node:fs"
import { spawn } from "node:child_process"

const MODE = process.env.OC_TIMING_MODE || "trivial"
const LOG = process.env.OC_TIMING_LOG
const CMD = JSON.parse(process.env.OC_TIMING_CMD || "[]")

function record(ns) {
  if (LOG) fs.appendFileSync(LOG, `${MODE} ${ns}\n`)
}

function spawnOnce(line) {
  return new Promise((resolve, reject) => {
    const child = spawn(CMD[0], CMD.slice(1), { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("error", reject)
    // A program that does not read its input may close it first.
    child.stdin.on("error", () => {})
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))))
    child.stdin.end(line)
  })
}

async function bunSpawnOnce(line) {
  const child = Bun.spawn(CMD, { stdin: "pipe", stdout: "pipe", stderr: "inherit" })
  child.stdin.write(line)
  child.stdin.end()
  const out = await new Response(child.stdout).text()
  if ((await child.exited) !== 0) throw new Error("exit " + child.exitCode)
  return out
}

// A long-lived child answers one line per request line, in order.
function serve() {
  const child = spawn(CMD[0], CMD.slice(1), { stdio: ["pipe", "pipe", "inherit"] })
  const waiting = []
  let buf = ""
  child.stdout.on("data", (d) => {
    buf += d
    let i
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      waiting.shift()?.(line)
    }
  })
  return (line) => new Promise((resolve) => {
    waiting.push(resolve)
    child.stdin.write(line)
  })
}

export const Timing = async () => {
  const ask = MODE === "stdio" ? serve() : MODE === "spawn" ? spawnOnce : MODE === "bunspawn" ? bunSpawnOnce : null
  return {
    "tool.execute.before": async (input, output) => {
      const start = process.hrtime.bigint()
      if (ask) {
        const answer = await ask(JSON.stringify({ hook: "tool.execute.before", tool: input.tool, sessionID: input.sessionID, args: output.args }) + "\n")
        if (!answer.trim()) throw new Error("no answer")
      }
      record(process.hrtime.bigint() - start)
    },
  }
}
