// drive.mjs PLUGIN STEPS: loads a generated nexus plugin in plain Node (as
// OpenCode would, without OpenCode) and calls its hooks one after another.
// STEPS is a JSON file: [{hook, input, output, circular?, wait?, sleepMs?}]
// (sleepMs: block that long before the hook, as OpenCode's own work would). For each
// step it prints one line {hook, ok, output} or {hook, threw}, and the time
// the hook took (ns). A step with wait prints {waiting: true} and hangs
// until the process is killed. The context's directory is $DRIVE_DIR.
import fs from "node:fs"
import { pathToFileURL } from "node:url"

const [plugin, stepsFile] = process.argv.slice(2)
const mod = await import(pathToFileURL(plugin).href)
const steps = JSON.parse(fs.readFileSync(stepsFile, "utf8"))
const hooks = await mod.NexusPlugin({ directory: process.env.DRIVE_DIR })
for (const s of steps) {
  if (s.wait) {
    console.log(JSON.stringify({ waiting: true }))
    setInterval(() => {}, 1 << 30)
    await new Promise(() => {})
  }
  if (s.sleepMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, s.sleepMs)
  const input = s.input
  const output = s.output
  if (s.circular && input) input.self = input
  const rec = { hook: s.hook }
  const t0 = process.hrtime.bigint()
  try {
    await hooks[s.hook](input, output)
    rec.ok = true
    rec.output = output
  } catch (e) {
    rec.threw = String(e?.message ?? e)
  }
  rec.ns = Number(process.hrtime.bigint() - t0)
  console.log(JSON.stringify(rec))
}
