// The timing plugin of the OpenCode e2e benchmarks: tool.execute.before
// does what a host plugin would do to ask an outside program about each
// tool call, and appends the time that took (nanoseconds) to
// $OC_TIMING_LOG. $OC_TIMING_MODE picks the way:
//   trivial   nothing (the hook itself)
//   spawn     node:child_process spawn of $OC_TIMING_CMD per call: one JSON
//             line in, wait for its answer and its exit
//   bunspawn  the same with Bun.spawn
//   yield     no program: one turn of the event loop (setImmediate)
//   stdio     one long-lived $OC_TIMING_CMD started with the plugin: one
//             JSON line in and one line back per call over pipes, read
//             through the event loop
//   fifosync  the same child with two FIFOs as its standard input and
//             output, read with a blocking fs.readSync (the event loop
//             waits for the answer)
//   fifopoll  the same with a non-blocking read retried after 20 µs
//             (Atomics.wait) up to a deadline
// Node built-ins only.
import fs from "node:fs"
import { spawn, execFileSync } from "node:child_process"
import os from "node:os"
import path from "node:path"

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

// fifo starts the long-lived child with a FIFO for each direction and
// returns a synchronous ask. Every end is opened without blocking: a
// non-blocking reader first, then the writer, then the reader that stays
// (blocking unless poll), so no open waits for the other side. The child
// gets end of file when this process closes (or loses) its writer.
function fifo(poll) {
  const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oc-timing-"))
  const req = path.join(dir, "req")
  const resp = path.join(dir, "resp")
  execFileSync("mkfifo", ["-m", "600", req, resp])
  let tmp = fs.openSync(req, O_RDONLY | O_NONBLOCK)
  const reqW = fs.openSync(req, O_WRONLY)
  const childIn = fs.openSync(req, O_RDONLY)
  fs.closeSync(tmp)
  tmp = fs.openSync(resp, O_RDONLY | O_NONBLOCK)
  const childOut = fs.openSync(resp, O_WRONLY)
  const respR = poll ? tmp : fs.openSync(resp, O_RDONLY)
  if (!poll) fs.closeSync(tmp)
  spawn(CMD[0], CMD.slice(1), { stdio: [childIn, childOut, "inherit"] })
  fs.closeSync(childIn)
  fs.closeSync(childOut)
  fs.rmSync(dir, { recursive: true })
  const buf = Buffer.alloc(1 << 16)
  const sleeper = new Int32Array(new SharedArrayBuffer(4))
  return (line) => {
    fs.writeSync(reqW, line)
    let out = ""
    const deadline = Date.now() + 5000
    for (;;) {
      let n
      try {
        n = fs.readSync(respR, buf, 0, buf.length, null)
      } catch (e) {
        if (e.code !== "EAGAIN" || Date.now() > deadline) throw e
        Atomics.wait(sleeper, 0, 0, 0.02)
        continue
      }
      if (n === 0) throw new Error("the child closed its output")
      out += buf.toString("utf8", 0, n)
      if (out.endsWith("\n")) return out
    }
  }
}

export const Timing = async () => {
  const asks = {
    stdio: () => serve(),
    fifosync: () => fifo(false),
    fifopoll: () => fifo(true),
    spawn: () => spawnOnce,
    bunspawn: () => bunSpawnOnce,
    yield: () => () => new Promise((resolve) => setImmediate(() => resolve("{}"))),
  }
  const ask = asks[MODE]?.()
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
