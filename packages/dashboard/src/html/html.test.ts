import { describe, expect, it } from 'vitest'
import { html } from './html.js'

describe('html', () => {
  it('escapes interpolated text and keeps nested templates', () => {
    const name = '<script>alert("x")</script>'
    const inner = html`<b>${name}</b>`
    expect(html`<p title="${"a'b"}">${inner}${[1, null, false, 'x']}</p>`.value).toBe(
      '<p title="a&#39;b"><b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</b>1x</p>',
    )
  })
})
