// The inspector page: plain DOM, no build step, no HTML from data (dom.js). It talks to
// @tanstack/ai-harness/http under api/ with the token as a header, never in a URL.
;(() => {
  const { el } = window.inspectorDom
  const { schemaForm } = window.inspectorSchemaForm
  const hash = new URLSearchParams(location.hash.slice(1))
  // The token leaves the address bar and the history at once; this tab keeps it for a reload
  // (sessionStorage: this origin and tab only, never sent anywhere).
  const token = hash.get('token') ?? sessionStorage.getItem('inspector-token') ?? ''
  sessionStorage.setItem('inspector-token', token)
  history.replaceState(null, '', location.pathname + location.search)
  const $ = (id) => document.getElementById(id)
  const PAGE = 500

  // ---- talking to the server ---------------------------------------------------------

  let ended = false
  /** The server is gone (the program that served the page ended): say so once, stop asking. */
  function serverGone() {
    if (ended) return
    ended = true
    clearInterval(listTimer)
    stream?.abort()
    $('connection').textContent =
      'The program that served this page has ended (or cannot be reached): nothing here can change any more. Start it again and open its new link.'
    $('connection').className = 'error'
    for (const button of document.querySelectorAll('button')) button.disabled = true
  }

  /** Calls the API; resolves with the JSON body, or rejects with the typed refusal `{ code, message }`. */
  async function api(path, body) {
    let response
    try {
      response = await fetch(`api${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        referrerPolicy: 'no-referrer',
      })
    } catch {
      serverGone()
      throw { code: 'SERVER_GONE', message: 'the program that served this page has ended' }
    }
    const json = await response.json().catch(() => ({ code: 'INTERNAL_ERROR', message: `HTTP ${response.status}` }))
    if (!response.ok) throw json
    return json
  }
  const sessionPath = (id) => `/sessions/${encodeURIComponent(id)}`
  const failure = (error) => el('div', { className: 'error' }, `${error?.code ?? 'ERROR'}: ${error?.message ?? String(error)}`)

  // ---- the session lists -------------------------------------------------------------

  let selected = null
  let cursor = null
  async function loadLists() {
    if (ended) return
    try {
      const waiting = await api('/sessions?waiting=1&limit=100')
      renderList($('waiting'), waiting.sessions, true)
      const all = await api('/sessions?limit=100')
      renderList($('sessions'), all.sessions, false)
      cursor = all.next
      $('more').hidden = all.next === null
      $('connection').textContent = ''
    } catch (error) {
      if (!ended) $('connection').textContent = `${error.code ?? error.name}: ${error.message}`
    }
  }
  const item = (id, waiting) =>
    el(
      'li',
      { className: id === selected ? 'selected' : '', title: id, onclick: () => select(id), dataset: { sessionId: id } },
      id,
      waiting ? el('span', { className: 'badge waiting' }, 'waiting') : null,
    )
  function renderList(list, ids, waiting) {
    list.replaceChildren(
      ...(ids.length === 0 ? [el('li', { className: 'muted' }, waiting ? 'Nobody waits.' : 'No sessions.')] : []),
      ...ids.map((id) => item(id, waiting)),
    )
  }
  $('more').onclick = async () => {
    const page = await api(`/sessions?limit=100&after=${encodeURIComponent(cursor)}`)
    $('sessions').append(...page.sessions.map((id) => item(id, false)))
    cursor = page.next
    $('more').hidden = page.next === null
  }

  // ---- one session: header, questions, approvals, and a timeline paged over the whole log

  let stream = null
  /** What the page shows of the selected session: the first seq shown, the last, and the log's length. */
  let shown = null
  async function select(id) {
    selected = id
    stream?.abort()
    shown = null
    liveClock.at = undefined
    for (const li of document.querySelectorAll('.sessions li')) li.classList.toggle('selected', li.dataset.sessionId === id)
    let head
    try {
      head = await api(`${sessionPath(id)}?limit=1`)
    } catch (error) {
      $('detail').replaceChildren(failure(error))
      return
    }
    if (id !== selected) return
    // The last page of the log: where live records arrive. Earlier ones on request.
    const after = Math.max(0, head.lastSeq - PAGE)
    const view = await api(`${sessionPath(id)}?after=${after}&limit=${PAGE}`)
    if (id !== selected) return
    shown = { first: after + 1, last: after, total: view.lastSeq }
    renderSession(view)
    addRows(view.entries)
    follow(id)
  }

  /** Live: every record after the last one shown, read with fetch so the token goes in a header. */
  async function follow(id) {
    const control = new AbortController()
    stream = control
    while (!control.signal.aborted && selected === id && !ended) {
      try {
        const response = await fetch(`api${sessionPath(id)}/events?after=${shown.last}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: control.signal,
          referrerPolicy: 'no-referrer',
        })
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
        await readEvents(response.body, (entry) => {
          if (selected !== id || entry.seq <= shown.last) return
          addRows([entry])
          scheduleRefresh()
        })
      } catch (error) {
        if (control.signal.aborted) return
        if (error instanceof TypeError) {
          serverGone()
          return
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }
  async function readEvents(body, onRecord) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      text += value
      let end = text.indexOf('\n\n')
      while (end >= 0) {
        const block = text.slice(0, end)
        text = text.slice(end + 2)
        const lines = block.split('\n')
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7)
        const data = lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n')
        if (event === 'record' && data) onRecord(JSON.parse(data))
        end = text.indexOf('\n\n')
      }
    }
  }

  let refreshTimer = null
  function scheduleRefresh() {
    clearTimeout(refreshTimer)
    refreshTimer = setTimeout(() => {
      refreshHead()
      loadLists()
    }, 150)
  }
  /** Status, questions and approvals again; the timeline keeps its rows (live ones never vanish). */
  async function refreshHead() {
    const id = selected
    if (!shown) return
    try {
      const view = await api(`${sessionPath(id)}?after=${shown.last}&limit=1`)
      if (id === selected) renderHead(view)
    } catch (error) {
      if (!ended) $('head')?.replaceChildren(failure(error))
    }
  }

  function renderSession(view) {
    const earlier = el('button', {
      type: 'button',
      id: 'earlier',
      textContent: 'Earlier records',
      onclick: () => loadEarlier(view.sessionId),
    })
    $('detail').replaceChildren(
      el('div', { id: 'head' }),
      el('h3', {}, 'Timeline ', el('span', { id: 'position', className: 'muted' })),
      earlier,
      el('table', { className: 'timeline' }, el('tbody', { id: 'timeline' })),
    )
    renderHead(view)
  }
  async function loadEarlier(id) {
    const button = $('earlier')
    if (button.disabled) return
    // One page at a time: a second click waits for the first, or it would load the same page twice.
    button.disabled = true
    const after = Math.max(0, shown.first - 1 - PAGE)
    let view
    try {
      view = await api(`${sessionPath(id)}?after=${after}&limit=${shown.first - 1 - after}`)
    } finally {
      button.disabled = ended
    }
    if (id !== selected) return
    const clock = { at: undefined }
    $('timeline').prepend(...view.entries.map((entry) => row(entry, clock)))
    shown.first = after + 1
    position()
  }
  /** The time of the last record shown that has one: records without their own time show it as "≈". */
  const liveClock = { at: undefined }
  function addRows(entries) {
    for (const entry of entries) {
      if (entry.seq <= shown.last) continue
      $('timeline')?.append(row(entry, liveClock))
      shown.last = entry.seq
    }
    shown.total = Math.max(shown.total, shown.last)
    position()
  }
  function position() {
    const empty = shown.last < shown.first
    $('position').textContent = empty ? `(no records; ${shown.total} in the log)` : `records ${shown.first}–${shown.last} of ${shown.total}`
    $('earlier').hidden = shown.first <= 1
  }

  /** What a parked turn waits for, by the reason the view gives. */
  const WAITS_FOR = { ask: 'for an answer', approval: 'for an approval', sleep: 'in a sleep', agent: 'for a child agent' }
  const wakeAt = (parked) => (parked.until === null ? '' : ` until ${new Date(parked.until).toISOString()}`)

  function renderHead(v) {
    shown.total = Math.max(shown.total, v.lastSeq)
    const cancel = el('button', { type: 'button', textContent: 'Cancel the open turn', disabled: v.status === 'idle' })
    const cancelResult = el('div')
    cancel.onclick = async () => {
      try {
        await api(`${sessionPath(v.sessionId)}/cancel`, { reason: 'cancelled in the inspector' })
        cancelResult.replaceChildren(el('span', { className: 'ok' }, 'Cancelled.'))
      } catch (error) {
        cancelResult.replaceChildren(failure(error))
      }
    }
    $('head').replaceChildren(
      el(
        'h2',
        {},
        v.sessionId,
        el('span', { className: `badge ${v.status}`, id: 'status', textContent: v.status }),
        v.parked
          ? el('span', { className: 'muted', id: 'parked' }, ` ${WAITS_FOR[v.parked.reason] ?? v.parked.reason}${wakeAt(v.parked)}`)
          : null,
        el('span', { className: 'muted' }, `  harness ${v.harness ?? '?'}, ${v.turns} turn(s)`),
      ),
      ...v.questions.map(questionForm),
      ...v.approvals.map(approvalBox),
      el('div', {}, cancel, cancelResult),
    )
    if (shown) position()
  }

  /** A question as a form made from its JSON Schema; the server checks the answer and says why it refuses one. */
  function questionForm(q) {
    const result = el('div', { className: 'result' })
    const submit = el('button', { type: 'submit', className: 'primary', textContent: 'Answer' })
    const fields = schemaForm(q.schema)
    const form = el(
      'form',
      { className: 'question', noValidate: true, dataset: { questionId: q.questionId } },
      el('strong', {}, q.message),
      q.rejected ? el('div', { className: 'error' }, `The last answer was refused: ${q.rejected}`) : null,
      fields.node,
      el('div', { className: 'actions' }, submit),
      result,
    )
    form.onsubmit = async (event) => {
      event.preventDefault()
      result.replaceChildren()
      submit.disabled = true
      try {
        const answer = fields.read()
        // The server is the judge (the logged schema, as the host checks it): its refusal is shown as it is.
        await api(`${sessionPath(selected)}/answer`, { questionId: q.questionId, answer: answer === undefined ? null : answer })
        result.replaceChildren(el('span', { className: 'ok' }, 'Answered; the session goes on.'))
        scheduleRefresh()
      } catch (error) {
        result.replaceChildren(failure(error))
      } finally {
        submit.disabled = ended
      }
    }
    return form
  }

  /** An approval request: what runs (the tool, its description, its full arguments), with approve and deny. */
  function approvalBox(a) {
    const result = el('div')
    const reason = el('input', { type: 'text', name: 'reason', placeholder: 'reason (optional, kept in the log)' })
    const decide = (approved) => async () => {
      try {
        const note = reason.value.trim()
        await api(`${sessionPath(selected)}/approve`, { toolCallId: a.toolCallId, approved, ...(note ? { reason: note } : {}) })
        result.replaceChildren(el('span', { className: 'ok' }, approved ? 'Approved.' : 'Denied.'))
        scheduleRefresh()
      } catch (error) {
        result.replaceChildren(failure(error))
      }
    }
    return el(
      'div',
      { className: 'question approval', dataset: { toolCallId: a.toolCallId } },
      el('strong', {}, `Approve a call of ${a.toolName}?`),
      el(
        'div',
        { className: 'description' },
        a.description ? `The tool: ${a.description}` : "The tool's description is not known to this host.",
      ),
      el('div', { className: 'muted' }, `call ${a.toolCallId}, with these arguments:`),
      el('pre', { className: 'arguments' }, typeof a.input === 'string' ? a.input : JSON.stringify(a.input, null, 2)),
      reason,
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

  const time = (ms) =>
    typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace('.000Z', 'Z') : ''
  const clip = (text, max = 140) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
  const short = (id) => (typeof id === 'string' ? ` [${id.length > 14 ? `${id.slice(0, 13)}…` : id}]` : '')
  const str = (value) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)))
  const driver = (r) =>
    typeof r.host === 'string' ? ` (host ${r.host}${typeof r.fence === 'number' ? `, lease fence ${r.fence}` : ''})` : ''

  function describe(r) {
    switch (r.type) {
      case 'harness.session.opened':
        return `harness ${JSON.stringify(r.harness)}${r.parent ? `, child of ${str(r.parent.sessionId)}` : ''}`
      case 'harness.turn.started':
        return `${(Array.isArray(r.messages) ? r.messages : []).map((m) => `${str(m?.role)}: ${clip(str(m?.content))}`).join(' | ')}${driver(r)}`
      case 'harness.turn.resumed':
        return `the open turn is taken over (after a crash, a hand-off or an answer)${driver(r)}`
      case 'harness.assistant': {
        const said = r.text ? `says ${clip(JSON.stringify(r.text))}` : ''
        const calls = (Array.isArray(r.toolCalls) ? r.toolCalls : [])
          .map((c) => `calls ${str(c?.name)} ${clip(str(c?.arguments), 80)}${short(c?.id)}`)
          .join('; ')
        return [said, calls].filter(Boolean).join('; ') || '(empty)'
      }
      case 'harness.step':
        return `${str(r.name)} ${'value' in r ? `= ${clip(JSON.stringify(r.value), 100)}` : 'done (no value)'}${short(r.toolCallId)}`
      case 'harness.step.failed':
        return `${str(r.name)} attempt ${str(r.attempt)} failed${r.final ? ' (final)' : ''}: ${clip(str(r.error))}${short(r.toolCallId)}`
      case 'harness.sleep':
        return `${str(r.name)} until ${time(r.wakeAt)}${short(r.toolCallId)}`
      case 'harness.ask':
        return `${str(r.name)}: ${JSON.stringify(r.message)}${short(r.toolCallId)}`
      case 'harness.answer':
        return `${str(r.name)} = ${clip(JSON.stringify(r.answer))}${short(r.toolCallId)}`
      case 'harness.answer.rejected':
        return `${str(r.name)} refused by the tool: ${clip(str(r.reason))}${short(r.toolCallId)}`
      case 'harness.parked':
        return `waits: ${str(r.reason)}${r.until != null ? ` until ${time(r.until)}` : ''}${short(r.toolCallId)}`
      case 'harness.tool.result':
        return `${str(r.toolName)} ${r.cut ? 'cut by a crash, settled as an error:' : r.ok ? 'ok' : 'error'} ${clip(JSON.stringify(r.result) ?? '')}${short(r.toolCallId)}`
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
  /** One record: a line that may be cut, and the whole record, pretty, when the line is opened. */
  function row({ seq, record }, clock) {
    if (typeof record?.at === 'number') clock.at = record.at
    const when = typeof record?.at === 'number' ? time(record.at) : clock.at === undefined ? '' : `≈ ${time(clock.at)}`
    const type = str(record?.type)
    const kind = type.startsWith('harness.') ? type.slice('harness.'.length) : type
    const crash = type === 'harness.tool.result' && record.cut
    const resumed = type === 'harness.turn.resumed'
    const asked = type === 'harness.ask' || type === 'harness.parked'
    return el(
      'tr',
      { className: crash ? 'crash' : resumed ? 'resumed' : asked ? 'question' : '', dataset: { type, seq } },
      el('td', { className: 'seq', textContent: String(seq) }),
      el('td', {
        className: 'time',
        textContent: when,
        title: typeof record?.at === 'number' ? 'logged at' : 'the time of the last record before it that has one',
      }),
      el('td', { className: 'kind', textContent: kind }),
      el(
        'td',
        {},
        el('details', {}, el('summary', {}, describe(record)), el('pre', { className: 'record' }, JSON.stringify(record, null, 2))),
      ),
    )
  }

  loadLists()
  const listTimer = setInterval(loadLists, 3000)
  const initial = hash.get('session')
  if (initial) select(initial)
})()
