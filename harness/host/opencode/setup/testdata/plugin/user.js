// nexus for OpenCode: forwards OpenCode's hooks to nexus and applies its
// answers (context for the model, a refused tool call). Written by
// `nexus install opencode` (nexus 0.3.0// injected); nexus rewrites or removes it, so
// change nothing here. Node built-ins only: OpenCode loads it without an
// npm install.
//
// Transport only: every decision is nexus's. Each hook becomes one JSON
// line {v, id, hook, pid, dir, input, output} and nexus answers one line
// {id, block?, parts?, append?, error?}. The questions go to one
// long-lived nexus child over two FIFOs, read synchronously (an await
// inside OpenCode costs about 3 ms; this costs under one); when the child
// cannot be started or has died, to one nexus process per hook. A tool
// call nexus does not answer for does not run.
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { spawn, spawnSync } from "node:child_process"

const NEXUS = "/home/user/go/bin/nexus"
const PROJECT = ""
const SERVE = ["hook","--host","opencode","--serve"]
const ONCE = ["hook","--host","opencode"]
const HOOKS = ["chat.message","tool.execute.before","tool.execute.after","event","dispose"]
const EVENTS = ["session.created"]
const GATED = ["tool.execute.before"]
const CLIP = {"tool.execute.after":65536}
const CLIPPED = "…[clipped by the nexus plugin]"
const UNCHECKED = "nexus could not check this tool call (%s). A tool call nexus cannot check does not run; `nexus doctor` shows what is wrong, and `nexus install opencode` rewrites the plugin."
const TIMEOUT_MS = 5000
const V = 1

const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants
const sleeper = new Int32Array(new SharedArrayBuffer(4))
const chunk = Buffer.alloc(1 << 16)

// pause waits without yielding to OpenCode's event loop: short waits
// first, since nexus usually answers within a millisecond.
function pause(round) {
  Atomics.wait(sleeper, 0, 0, round < 200 ? 0.02 : 1)
}

class Timeout extends Error {}

// plain turns a hook argument into JSON-safe data: functions dropped,
// cycles cut, strings longer than clip (when set) clipped.
function plain(x, clip, stack) {
  if (typeof x === "string") return clip > 0 && x.length > clip ? x.slice(0, clip) + CLIPPED : x
  if (typeof x === "bigint") return String(x)
  if (x === null || typeof x !== "object") return typeof x === "function" || typeof x === "symbol" ? undefined : x
  if (typeof x.toJSON === "function") return plain(x.toJSON(), clip, stack)
  if (stack.includes(x)) return "[circular]"
  stack.push(x)
  let out
  if (Array.isArray(x)) {
    out = x.map((e) => {
      const v = plain(e, clip, stack)
      return v === undefined ? null : v
    })
  } else {
    out = {}
    for (const k of Object.keys(x)) {
      const v = plain(x[k], clip, stack)
      if (v !== undefined) out[k] = v
    }
  }
  stack.pop()
  return out
}

// startChild starts the long-lived nexus with a FIFO for each direction.
// Every end is opened without blocking: a reader first, then the writer,
// then the end that stays. The child gets end of file when this process
// closes or loses its writer, and exits.
function startChild(cwd) {
  let dir
  const opened = []
  const open = (p, flags) => {
    const fd = fs.openSync(p, flags)
    opened.push(fd)
    return fd
  }
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "nexus-opencode-"))
    const req = path.join(dir, "req")
    const resp = path.join(dir, "resp")
    const made = spawnSync("mkfifo", ["-m", "600", req, resp], { stdio: "ignore" })
    if (made.status !== 0) return { why: "mkfifo failed" }
    const probe = open(req, O_RDONLY | O_NONBLOCK)
    const w = open(req, O_WRONLY | O_NONBLOCK)
    const childIn = open(req, O_RDONLY)
    const r = open(resp, O_RDONLY | O_NONBLOCK)
    const childOut = open(resp, O_WRONLY)
    const p = spawn(NEXUS, SERVE, { cwd, stdio: [childIn, childOut, "ignore"] })
    p.on("error", () => {})
    p.unref()
    for (const fd of [probe, childIn, childOut]) fs.closeSync(fd)
    return { w, r, pending: Buffer.alloc(0) }
  } catch (e) {
    for (const fd of opened) {
      try {
        fs.closeSync(fd)
      } catch {}
    }
    return { why: String(e?.message ?? e) }
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  }
}

function closeChild(c) {
  for (const fd of [c.w, c.r]) {
    try {
      fs.closeSync(fd)
    } catch {}
  }
}

// viaChild writes the request and reads lines until the reply to it.
function viaChild(c, line, id) {
  const deadline = Date.now() + TIMEOUT_MS
  const data = Buffer.from(line)
  let off = 0
  for (let round = 0; off < data.length; round++) {
    try {
      off += fs.writeSync(c.w, data, off)
    } catch (e) {
      if (e.code !== "EAGAIN") throw e
      if (Date.now() > deadline) throw new Timeout()
      pause(round)
    }
  }
  for (let round = 0; ; ) {
    const nl = c.pending.indexOf(10)
    if (nl >= 0) {
      const text = c.pending.subarray(0, nl).toString("utf8")
      c.pending = c.pending.subarray(nl + 1)
      let rep
      try {
        rep = JSON.parse(text)
      } catch {
        continue
      }
      if (rep && rep.id === id) return rep
      continue // the late answer to a request given up on
    }
    let n
    try {
      n = fs.readSync(c.r, chunk, 0, chunk.length, null)
    } catch (e) {
      if (e.code !== "EAGAIN") throw e
      if (Date.now() > deadline) throw new Timeout()
      pause(round++)
      continue
    }
    if (n === 0) throw new Error("the nexus child exited")
    c.pending = Buffer.concat([c.pending, chunk.subarray(0, n)])
    round = 0
  }
}

// viaProcess runs one nexus for the request.
function viaProcess(cwd, line, id) {
  const res = spawnSync(NEXUS, ONCE, { cwd, input: line, timeout: TIMEOUT_MS, maxBuffer: 64 << 20, stdio: ["pipe", "pipe", "ignore"] })
  if (res.error) throw res.error
  for (const text of res.stdout.toString("utf8").split("\n")) {
    let rep
    try {
      rep = JSON.parse(text)
    } catch {
      continue
    }
    if (rep && rep.id === id) return rep
  }
  throw new Error(`${NEXUS} gave no answer (exit status ${res.status})`)
}

export const NexusPlugin = async (ctx) => {
  const cwd = PROJECT || ctx.directory
  let child = startChild(cwd)
  let seq = 0

  // ask forwards one hook and returns nexus's reply, or {error} when
  // nexus did not answer.
  function ask(hook, input, output) {
    const id = ++seq
    const clip = CLIP[hook] ?? 0
    let line
    try {
      line = JSON.stringify({ v: V, id, hook, pid: process.pid, dir: ctx.directory, input: plain(input, clip, []), output: plain(output, clip, []) }) + "\n"
    } catch (e) {
      return { id, error: `the hook's arguments could not be encoded (${e?.message ?? e})` }
    }
    let why = child.why
    if (!why) {
      try {
        return viaChild(child, line, id)
      } catch (e) {
        if (e instanceof Timeout) return { id, error: `nexus did not answer within ${TIMEOUT_MS / 1000} s` }
        why = String(e?.message ?? e)
        closeChild(child)
        child = { why }
      }
    }
    try {
      return viaProcess(cwd, line, id)
    } catch (e) {
      return { id, error: `${why}; ${e?.message ?? e}` }
    }
  }

  // apply does what the reply says to the hook's output.
  function apply(hook, rep, input, output) {
    if (rep.error) {
      if (GATED.includes(hook)) throw new Error(UNCHECKED.replace("%s", () => rep.error))
      return
    }
    if (rep.block) throw new Error(rep.block)
    if (rep.parts?.length && Array.isArray(output?.parts)) {
      const base = output.parts.at(-1)?.id ?? `prt_nexus${Date.now()}`
      rep.parts.forEach((text, i) => output.parts.push({ id: `${base}nx${i}`, sessionID: input?.sessionID, messageID: output.message?.id, type: "text", text, synthetic: true }))
    }
    if (rep.append && output) {
      if (typeof output.output === "string") output.output += "\n\n" + rep.append
      else if (Array.isArray(output.content)) output.content.push({ type: "text", text: rep.append })
    }
  }

  const hooks = {}
  for (const hook of HOOKS) {
    if (hook === "event") {
      hooks.event = async (input) => {
        if (EVENTS.includes(input?.event?.type)) apply(hook, ask(hook, input, undefined), input, undefined)
      }
    } else if (hook === "dispose") {
      hooks.dispose = async () => {
        ask(hook, undefined, undefined)
        if (!child.why) closeChild(child)
        child = { why: "OpenCode is shutting down" }
      }
    } else {
      hooks[hook] = async (input, output) => apply(hook, ask(hook, input, output), input, output)
    }
  }
  return hooks
}
