/** A one-line progress bar on stderr: `label [#####.....] 5,000/10,000 12,345/s`. */
export function progressBar(label: string, total: number) {
  const started = performance.now()
  const tty = process.stderr.isTTY
  let last = 0
  const render = (done: number, final = false) => {
    const now = performance.now()
    if (!final && now - last < 100) return
    last = now
    const width = 30
    const filled = Math.min(width, Math.round((done / total) * width))
    const rate = Math.round(done / ((now - started) / 1000) || 0)
    const line = `${label.padEnd(10)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')} ${rate.toLocaleString('en')}/s`
    // On a terminal the bar redraws in place; in CI logs it prints only the last line.
    if (tty) process.stderr.write(`\r${line}${final ? '\n' : ''}`)
    else if (final) process.stderr.write(`${line}\n`)
  }
  return {
    update: (done: number) => render(done),
    finish: (done: number) => {
      render(done, true)
      return (performance.now() - started) / 1000
    },
  }
}
