// The inspector page: plain DOM, no build step. It talks to @tanstack/ai-harness/http under /api.
;(() => {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? ''
  const $ = (id) => document.getElementById(id)
  const el = (tag, { dataset, ...props } = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), props)
    Object.assign(node.dataset, dataset ?? {})
    for (const child of children) if (child != null) node.append(child)
    return node
  }

  /** Calls the API; resolves with the JSON body, or rejects with the typed refusal `{ code, message }`. */
  async function api(path, body) {
    const response = await fetch(`/api${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json = await response.json().catch(() => ({ code: 'INTERNAL_ERROR', message: `HTTP ${response.status}` }))
    if (!response.ok) throw json
    return json
  }
  const sessionPath = (id) => `/sessions/${encodeURIComponent(id)}`

  // ---- the session lists -------------------------------------------------------------

  let selected = null
  let cursor = null
  async function loadLists() {
    try {
      const waiting = await api('/sessions?waiting=1&limit=100')
      renderList($('waiting'), waiting.sessions, true)
      const all = await api('/sessions?limit=100')
      renderList($('sessions'), all.sessions, false)
      cursor = all.next
      $('more').hidden = all.sessions.length < 100
      $('connection').textContent = ''
    } catch (error) {
      $('connection').textContent = `${error.code ?? error.name}: ${error.message}`
    }
  }
  function renderList(list, ids, waiting) {
    list.replaceChildren(
      ...(ids.length === 0 ? [el('li', { className: 'muted', textContent: waiting ? 'Nobody waits.' : 'No sessions.' })] : []),
      ...ids.map((id) =>
        el(
          'li',
          { className: id === selected ? 'selected' : '', title: id, onclick: () => select(id), dataset: { sessionId: id } },
          id,
          waiting ? el('span', { className: 'badge waiting', textContent: 'waiting' }) : null,
        ),
      ),
    )
  }
  $('more').onclick = async () => {
    const page = await api(`/sessions?limit=100&after=${encodeURIComponent(cursor)}`)
    for (const id of page.sessions) $('sessions').append(el('li', { title: id, onclick: () => select(id) }, id))
    cursor = page.next
    $('more').hidden = page.sessions.length < 100
  }

  // ---- one session -------------------------------------------------------------------

  let stream = null
  let view = null
  let editors = []
  async function select(id) {
    selected = id
    stream?.close()
    for (const li of document.querySelectorAll('.sessions li')) li.classList.toggle('selected', li.dataset.sessionId === id)
    await refresh()
    if (!view) return
    // Live: every record after the last one shown; the browser reconnects with Last-Event-ID.
    stream = new EventSource(`/api${sessionPath(id)}/events?after=${view.lastSeq}&token=${encodeURIComponent(token)}`)
    stream.addEventListener('record', (event) => {
      const entry = JSON.parse(event.data)
      if (selected !== id || entry.seq <= view.lastSeq) return
      view.entries.push(entry)
      view.lastSeq = entry.seq
      $('timeline')?.append(row(entry))
      scheduleRefresh()
    })
  }
  let refreshTimer = null
  function scheduleRefresh() {
    clearTimeout(refreshTimer)
    refreshTimer = setTimeout(() => {
      refresh()
      loadLists()
    }, 150)
  }
  async function refresh() {
    const id = selected
    try {
      view = await api(sessionPath(id))
    } catch (error) {
      $('detail').replaceChildren(el('p', { className: 'error', textContent: `${error.code}: ${error.message}` }))
      view = null
      return
    }
    if (id !== selected) return
    renderSession(view)
  }

  function renderSession(v) {
    for (const editor of editors) editor.destroy()
    editors = []
    const cancel = el('button', { type: 'button', textContent: 'Cancel the open turn', disabled: v.status === 'idle' })
    const cancelResult = el('div')
    cancel.onclick = async () => {
      try {
        await api(`${sessionPath(v.sessionId)}/cancel`, { reason: 'cancelled in the inspector' })
        cancelResult.replaceChildren(el('span', { className: 'ok', textContent: 'Cancelled.' }))
      } catch (error) {
        cancelResult.replaceChildren(el('span', { className: 'error', textContent: `${error.code}: ${error.message}` }))
      }
    }
    $('detail').replaceChildren(
      el(
        'h2',
        {},
        v.sessionId,
        el('span', { className: `badge ${v.status}`, id: 'status', textContent: v.status }),
        el('span', { className: 'muted', textContent: `  harness ${v.harness ?? '?'}, ${v.turns} turn(s)` }),
      ),
      ...v.questions.map(questionForm),
      ...(v.approvals ?? []).map(approvalButtons),
      el('div', {}, cancel, cancelResult),
      el('h3', { textContent: 'Timeline' }),
      el('table', { className: 'timeline' }, el('tbody', { id: 'timeline' }, ...v.entries.map(row))),
    )
  }

  /** A question as a form generated from its JSON Schema; the server checks the answer and says why it refuses one. */
  function questionForm(q) {
    const holder = el('div')
    const result = el('div', { className: 'result' })
    const submit = el('button', { type: 'submit', className: 'primary', textContent: 'Answer' })
    const form = el(
      'form',
      { className: 'question', dataset: { questionId: q.questionId } },
      el('strong', { textContent: q.message }),
      q.rejected ? el('div', { className: 'error', textContent: `The last answer was refused: ${q.rejected}` }) : null,
      holder,
      el('div', { className: 'actions' }, submit),
      result,
    )
    const { $schema: _ignored, ...rest } = q.schema
    // compact: no "root" title above the fields; the question's message is the title.
    const schema = { ...rest, options: { ...(rest.options ?? {}), compact: true } }
    const editor = new JSONEditor(holder, {
      schema,
      theme: 'html',
      disable_collapse: true,
      disable_edit_json: true,
      disable_properties: true,
      disable_array_delete_all_rows: true,
      no_additional_properties: true,
      show_errors: 'change',
    })
    editors.push(editor)
    form.onsubmit = async (event) => {
      event.preventDefault()
      result.replaceChildren()
      submit.disabled = true
      try {
        // The server is the judge (the logged schema, as the host checks it): its refusal is shown as it is.
        await api(`${sessionPath(selected)}/answer`, { questionId: q.questionId, answer: editor.getValue() })
        result.replaceChildren(el('span', { className: 'ok', textContent: 'Answered; the session goes on.' }))
        scheduleRefresh()
      } catch (error) {
        result.replaceChildren(el('div', { className: 'error', textContent: `${error.code}: ${error.message}` }))
      } finally {
        submit.disabled = false
      }
    }
    return form
  }

  /** An approval request, with approve and deny (hosts with durable approvals). */
  function approvalButtons(a) {
    const result = el('div')
    const decide = (approved) => async () => {
      try {
        await api(`${sessionPath(selected)}/approve`, { toolCallId: a.toolCallId, approved })
        result.replaceChildren(el('span', { className: 'ok', textContent: approved ? 'Approved.' : 'Denied.' }))
        scheduleRefresh()
      } catch (error) {
        result.replaceChildren(el('span', { className: 'error', textContent: `${error.code}: ${error.message}` }))
      }
    }
    return el(
      'div',
      { className: 'question' },
      el('strong', { textContent: a.message ?? `Approve ${a.toolName ?? a.toolCallId}?` }),
      el(
        'div',
        { className: 'actions' },
        el('button', { type: 'button', className: 'primary', textContent: 'Approve', onclick: decide(true) }),
        el('button', { type: 'button', className: 'deny', textContent: 'Deny', onclick: decide(false) }),
      ),
      result,
    )
  }

  // ---- the timeline: the facts of `checkout log` -------------------------------------

  const time = (ms) => (typeof ms === 'number' ? new Date(ms).toISOString().replace('T', ' ').replace('.000Z', 'Z') : '?')
  const clip = (text, max = 140) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
  const short = (id) => (typeof id === 'string' ? ` [${id.length > 14 ? `${id.slice(0, 13)}…` : id}]` : '')
  const driver = (r) =>
    typeof r.host === 'string' ? ` (host ${r.host}${typeof r.fence === 'number' ? `, lease fence ${r.fence}` : ''})` : ''

  function describe(r) {
    switch (r.type) {
      case 'harness.session.opened':
        return `harness ${JSON.stringify(r.harness)}${r.parent ? `, child of ${r.parent.sessionId}` : ''}`
      case 'harness.turn.started':
        return `${(r.messages ?? []).map((m) => `${m.role}: ${clip(typeof m.content === 'string' ? m.content : JSON.stringify(m.content))}`).join(' | ')}${driver(r)}`
      case 'harness.turn.resumed':
        return `the open turn is taken over (after a crash, a hand-off or an answer)${driver(r)}`
      case 'harness.assistant': {
        const said = r.text ? `says ${clip(JSON.stringify(r.text))}` : ''
        const calls = (r.toolCalls ?? []).map((c) => `calls ${c.name} ${clip(c.arguments, 80)}${short(c.id)}`).join('; ')
        return [said, calls].filter(Boolean).join('; ') || '(empty)'
      }
      case 'harness.step':
        return `${r.name} ${'value' in r ? `= ${clip(JSON.stringify(r.value), 100)}` : 'done (no value)'}${short(r.toolCallId)}`
      case 'harness.step.failed':
        return `${r.name} attempt ${r.attempt} failed${r.final ? ' (final)' : ''}: ${clip(String(r.error))}${short(r.toolCallId)}`
      case 'harness.sleep':
        return `${r.name} until ${time(r.wakeAt)}${short(r.toolCallId)}`
      case 'harness.ask':
        return `${r.name}: ${JSON.stringify(r.message)}${short(r.toolCallId)}`
      case 'harness.answer':
        return `${r.name} = ${clip(JSON.stringify(r.answer))}${short(r.toolCallId)}`
      case 'harness.answer.rejected':
        return `${r.name} refused by the tool: ${clip(String(r.reason))}${short(r.toolCallId)}`
      case 'harness.parked':
        return `waits: ${r.reason}${r.until != null ? ` until ${time(r.until)}` : ''}${short(r.toolCallId)}`
      case 'harness.tool.result':
        return `${r.toolName} ${r.cut ? 'cut by a crash, settled as an error:' : r.ok ? 'ok' : 'error'} ${clip(JSON.stringify(r.result))}${short(r.toolCallId)}`
      case 'harness.turn.finished':
        return ''
      case 'harness.turn.cancelled':
        return `reason ${JSON.stringify(r.reason ?? '')}`
      default: {
        const { type: _type, ...rest } = r
        return clip(JSON.stringify(rest))
      }
    }
  }
  function row({ seq, record }) {
    const kind = record.type.startsWith('harness.') ? record.type.slice('harness.'.length) : record.type
    const crash = record.type === 'harness.tool.result' && record.cut
    const resumed = record.type === 'harness.turn.resumed'
    const asked = record.type === 'harness.ask' || record.type === 'harness.parked'
    return el(
      'tr',
      { className: crash ? 'crash' : resumed ? 'resumed' : asked ? 'question' : '', dataset: { type: record.type } },
      el('td', { className: 'seq', textContent: String(seq) }),
      el('td', { className: 'kind', textContent: kind }),
      el('td', { textContent: describe(record) }),
    )
  }

  loadLists()
  setInterval(loadLists, 3000)
  const initial = new URLSearchParams(location.hash.slice(1)).get('session')
  if (initial) select(initial)
})()
