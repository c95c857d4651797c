// iddqueue dashboard: live updates. One Server-Sent Events stream per
// visible tab, closed while the tab is hidden (the server then stops its
// poll once no tab listens). On a change it asks htmx to refresh the page's
// live region; pages work without this script, only less fresh.
;(() => {
  const root = document.documentElement
  const url = root.dataset.events
  if (!url || !('EventSource' in window)) return
  let source
  // Never wipe a selection the user is making: no refresh starts while a box
  // is ticked, and one already on its way when the first box is ticked is
  // not swapped in.
  const selecting = () => document.querySelector('input[name="ids"]:checked') !== null
  const refresh = () => {
    if (selecting()) return
    document.body.dispatchEvent(new CustomEvent('iddqueue:refresh'))
  }
  document.body.addEventListener('htmx:beforeSwap', (event) => {
    if (event.detail.target?.id === 'live' && selecting()) event.detail.shouldSwap = false
  })
  const close = () => {
    source?.close()
    source = undefined
    root.dataset.live = 'closed'
  }
  const open = () => {
    if (source) return
    source = new EventSource(url)
    source.addEventListener('open', () => {
      root.dataset.live = 'open'
    })
    source.addEventListener('change', refresh)
    source.addEventListener('close', close)
  }
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) close()
    else {
      open()
      refresh()
    }
  })
  if (!document.hidden) open()
})()
