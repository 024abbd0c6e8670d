/*
 * The playground page: a channel view over the Slack stand-in's state, kept live by server-sent
 * events. Everything a person does here goes to /playground/* routes, which send the bot the
 * signed requests Slack would send (slash commands, block_actions, view_submission, app_home_opened).
 */
(function () {
  "use strict";

  const BK = window.BlockKit;
  const $ = (selector) => document.querySelector(selector);
  const EVENT_KINDS = [
    "message_posted", "message_updated", "message_deleted", "ephemeral",
    "view_opened", "view_updated", "view_closed", "home_published", "file_shared",
  ];
  const AVATAR_COLORS = ["#2bac76", "#1264a3", "#e8912d", "#8e44ad", "#cd2553", "#0b7a75"];

  const ui = {
    user: localStorage.getItem("csb-playground.user") || "U0ALICE",
    pane: "channel", // "channel" or "home"
    channel: "C0PLAY",
    homeTab: "home",
    thread: null, // {channel, ts}
    notes: [], // page-made "only visible to you" notes: unknown commands, failed requests
    dismissed: new Set(),
    drawn: {}, // region → last markup, so an unchanged region keeps its DOM (and open selects)
  };
  let state = null;

  // -- talking to the stand-in -------------------------------------------------------------------

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch (_err) {
      data = { error: `HTTP ${response.status}` };
    }
    if (!response.ok) throw new Error((data && data.error) || `HTTP ${response.status}`);
    return data;
  }

  let refreshing = null;
  let again = false;
  function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        const response = await fetch("/playground/state", { cache: "no-store" });
        state = await response.json();
        render();
      } while (again);
    })().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  function connect() {
    const source = new EventSource("/playground/events");
    const live = $("#live");
    source.onopen = () => {
      live.textContent = "live";
      live.classList.add("on");
      refresh();
    };
    source.onerror = () => {
      live.textContent = "reconnecting…";
      live.classList.remove("on");
    };
    for (const kind of EVENT_KINDS) source.addEventListener(kind, () => refresh());
  }

  // -- lookups -----------------------------------------------------------------------------------

  function people() {
    const map = {};
    for (const u of state.users) map[u.id] = u.name;
    map[state.bot.id] = state.bot.name;
    return map;
  }

  function channelNames() {
    const map = {};
    for (const ch of state.channel_list) if (!ch.dm_user) map[ch.id] = ch.name;
    return map;
  }

  function ctx(extra) {
    return { users: people(), channels: channelNames(), ...extra };
  }

  function dmId(userId) {
    return `D${userId.slice(1)}`;
  }

  function channelInfo(id) {
    return state.channel_list.find((ch) => ch.id === id) || { id, name: id, bot_member: true };
  }

  /** Where the composer posts: the open channel, or the bot's DM with the current user. */
  function composerChannel() {
    return ui.pane === "home" ? dmId(ui.user) : ui.channel;
  }

  function tsTime(ts) {
    const date = new Date(Number(ts) * 1000);
    return date.toLocaleTimeString([], { hour: "numeric", minute: "2-digit" });
  }

  function nowTs() {
    return (Date.now() / 1000).toFixed(6);
  }

  // -- drawing messages --------------------------------------------------------------------------

  function avatar(userId) {
    if (userId === state.bot.id) return `<div class="avatar avatar-bot" aria-hidden="true">CSB</div>`;
    const index = Math.max(0, state.users.findIndex((u) => u.id === userId));
    const name = people()[userId] || userId;
    return `<div class="avatar" style="background:${AVATAR_COLORS[index % AVATAR_COLORS.length]}" aria-hidden="true">${BK.esc(name.slice(0, 1).toUpperCase())}</div>`;
  }

  function author(userId) {
    const name = BK.esc(people()[userId] || userId);
    const badge = userId === state.bot.id ? `<span class="app-badge">APP</span>` : "";
    return `<span class="msg-author">${name}</span>${badge}`;
  }

  function content(message) {
    if (message.blocks && message.blocks.length) return BK.renderBlocks(message.blocks, ctx({ surface: "message" }));
    return `<div class="msg-text">${BK.mrkdwn(message.text || "", ctx())}</div>`;
  }

  function threadLink(channel, message) {
    if (!message.reply_count) return "";
    const count = message.reply_count === 1 ? "1 reply" : `${message.reply_count} replies`;
    const last = message.latest_reply ? `<span class="thread-last">Last reply ${tsTime(message.latest_reply)}</span>` : "";
    return `<div class="thread-summary"><button type="button" class="thread-link" data-thread-channel="${BK.esc(channel)}" data-thread-ts="${BK.esc(message.ts)}">${count}</button>${last}</div>`;
  }

  /** A thread reply also sent to the channel: the channel says whose thread, the thread says where else. */
  function broadcastNote(channel, message, inThread) {
    if (message.subtype !== "thread_broadcast") return "";
    if (inThread) return `<div class="msg-broadcast">Also sent to the channel</div>`;
    const parent = (state.channels[channel] || []).find((m) => m.ts === message.thread_ts);
    const snippet = parent ? (parent.text || "").split("\n")[0].slice(0, 60) : "a thread";
    return `<div class="msg-broadcast">replied to a thread: <button type="button" class="thread-link thread-link-inline" data-thread-channel="${BK.esc(channel)}" data-thread-ts="${BK.esc(message.thread_ts)}">${BK.esc(snippet)}</button></div>`;
  }

  function messageHtml(channel, message, options) {
    const inThread = Boolean(options && options.inThread);
    const edited = message.edited ? `<span class="msg-edited">(edited)</span>` : "";
    const thread = inThread ? "" : threadLink(channel, message);
    return `<div class="msg" data-surface="message" data-channel="${BK.esc(channel)}" data-ts="${BK.esc(message.ts)}">
      ${avatar(message.user)}
      <div class="msg-body">
        ${broadcastNote(channel, message, inThread)}
        <div class="msg-meta">${author(message.user)}<span class="msg-time" title="${BK.esc(message.ts)}">${tsTime(message.ts)}</span></div>
        <div class="msg-content">${content(message)}${edited}</div>
        ${thread}
      </div>
    </div>`;
  }

  /** The bot's ephemerals keep their buttons live (Slack sends the click with `is_ephemeral`); the page's
   *  own notes are inert. */
  function ephemeralHtml(note) {
    const sender = note.local ? "Slackbot" : state.bot.name;
    const body = note.blocks && note.blocks.length
      ? BK.renderBlocks(note.blocks, ctx({ surface: "message", disabled: !!note.local }))
      : `<div class="msg-text">${BK.mrkdwn(note.text || "", ctx())}</div>`;
    const surface = note.local ? "" : ` data-surface="ephemeral" data-channel="${BK.esc(note.channel || "")}" data-ts="${BK.esc(note.ts)}"`;
    return `<div class="msg msg-ephemeral" data-ephemeral="${BK.esc(note.ts)}"${surface}>
      <div class="avatar ${note.local ? "avatar-slackbot" : "avatar-bot"}" aria-hidden="true">${note.local ? "S" : "CSB"}</div>
      <div class="msg-body">
        <div class="ephemeral-tag"><span aria-hidden="true">👁</span> Only visible to you</div>
        <div class="msg-meta"><span class="msg-author">${BK.esc(sender)}</span>${note.local ? "" : `<span class="app-badge">APP</span>`}<span class="msg-time">${tsTime(note.ts)}</span></div>
        <div class="msg-content">${body}</div>
        <button type="button" class="dismiss" data-dismiss="${BK.esc(note.ts)}">Dismiss</button>
      </div>
    </div>`;
  }

  /** A channel's timeline as the current user sees it: messages plus their own ephemerals. */
  function timeline(channel) {
    const items = (state.channels[channel] || []).map((m) => ({ ts: m.ts, html: messageHtml(channel, m) }));
    const mine = [...state.ephemerals, ...ui.notes].filter(
      (e) => e.channel === channel && e.user === ui.user && !ui.dismissed.has(e.ts),
    );
    for (const e of mine) items.push({ ts: e.ts, html: ephemeralHtml(e) });
    const files = (state.files || []).filter((f) => f.channel === channel && !f.thread_ts);
    if (files.length) items.push({ ts: Infinity, html: filesHtml(files) });
    items.sort((a, b) => Number(a.ts) - Number(b.ts));
    if (!items.length) return `<div class="empty">No messages yet. Type <code>/csb help</code> below.</div>`;
    return items.map((i) => i.html).join("");
  }

  /** Files the bot uploaded: a PNG shown as an image with its alt text, anything else as a link. */
  function filesHtml(files) {
    return `<div class="files">${files.map((f) => (f.image
      ? `<figure class="file-image"><img src="${BK.esc(f.url)}" alt="${BK.esc(f.alt)}" title="${BK.esc(f.title || f.name)}"><figcaption>${BK.esc(f.title || f.name)}</figcaption></figure>`
      : `<a class="file-link" href="${BK.esc(f.url)}" target="_blank" rel="noopener">${BK.esc(f.name)}</a>`)).join("")}</div>`;
  }

  function homeHtml() {
    const home = state.homes[ui.user];
    if (!home) {
      return `<div class="empty">csb has not published a Home tab for ${BK.esc(people()[ui.user])} yet.
        Opening this tab sent the bot <code>app_home_opened</code>; whatever it sets with
        <code>views.publish</code> appears here.</div>`;
    }
    return `<div class="home-view" data-surface="home" data-view-id="${BK.esc(home.id)}">${BK.renderBlocks(home.blocks, ctx({ surface: "home" }))}</div>`;
  }

  // -- regions -----------------------------------------------------------------------------------

  /** Replace a region's markup only when it changed, keeping scroll at the bottom if it was there. */
  function draw(element, key, html) {
    if (ui.drawn[key] === html) return;
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
    const first = ui.drawn[key] === undefined;
    ui.drawn[key] = html;
    element.innerHTML = html;
    if (atBottom || first) element.scrollTop = element.scrollHeight;
  }

  function renderUsers() {
    const select = $("#user-switcher");
    if (!select.options.length) {
      select.innerHTML = state.users
        .map((u) => `<option value="${BK.esc(u.id)}">${BK.esc(u.name)} · ${BK.esc(u.role)}</option>`)
        .join("");
    }
    select.value = ui.user;
  }

  function renderSidebar() {
    const items = state.channel_list
      .filter((ch) => !ch.dm_user)
      .map((ch) => {
        const active = ui.pane === "channel" && ui.channel === ch.id ? " active" : "";
        return `<li><button type="button" class="sidebar-item${active}" data-channel="${BK.esc(ch.id)}"><span class="hash">#</span>${BK.esc(ch.name)}</button></li>`;
      });
    draw($("#channel-list"), "sidebar", items.join(""));
    $("#app-home-link").classList.toggle("active", ui.pane === "home");
  }

  function renderMain() {
    const header = $("#pane-header");
    const tabs = $("#home-tabs");
    const input = $("#composer-input");
    if (ui.pane === "home") {
      header.innerHTML = `<div class="pane-title"><span class="sidebar-app-icon">C</span>csb</div><div class="pane-sub">The bot's App Home, as ${BK.esc(people()[ui.user])} sees it</div>`;
      tabs.hidden = false;
      for (const tab of tabs.querySelectorAll("[data-home-tab]")) {
        tab.setAttribute("aria-selected", String(tab.dataset.homeTab === ui.homeTab));
      }
      const showHome = ui.homeTab === "home";
      $("#composer").hidden = showHome;
      input.placeholder = "Message csb";
      draw($("#messages"), "main", showHome ? homeHtml() : timeline(dmId(ui.user)));
      return;
    }
    const channel = channelInfo(ui.channel);
    const note = channel.bot_member ? "csb is a member" : "csb is not in this channel: /csb here is told to invite it";
    header.innerHTML = `<div class="pane-title"># ${BK.esc(channel.name)}</div><div class="pane-sub">${BK.esc(note)}</div>`;
    tabs.hidden = true;
    $("#composer").hidden = false;
    input.placeholder = `Message #${channel.name}`;
    draw($("#messages"), "main", timeline(ui.channel));
  }

  function renderThread() {
    const pane = $("#thread");
    const parent = ui.thread && (state.channels[ui.thread.channel] || []).find((m) => m.ts === ui.thread.ts);
    if (!parent) {
      pane.hidden = true;
      ui.drawn.thread = undefined;
      return;
    }
    pane.hidden = false;
    const { channel } = ui.thread;
    const replies = ((state.threads[channel] || {})[parent.ts] || []).map((m) => messageHtml(channel, m, { inThread: true }));
    const count = replies.length === 1 ? "1 reply" : `${replies.length} replies`;
    draw(pane, "thread", `<div class="thread-head"><div><div class="pane-title">Thread</div><div class="pane-sub"># ${BK.esc(channelInfo(channel).name)}</div></div>
      <button type="button" class="thread-close" aria-label="Close thread">×</button></div>
      <div class="thread-body">${messageHtml(channel, parent, { inThread: true })}
      <div class="thread-divider"><span>${count}</span></div>${replies.join("")}${threadFiles(channel, parent.ts)}</div>`);
  }

  function threadFiles(channel, ts) {
    const files = (state.files || []).filter((f) => f.channel === channel && f.thread_ts === ts);
    return files.length ? filesHtml(files) : "";
  }

  function renderModal() {
    const overlay = $("#modal");
    const open = state.views[ui.user] || [];
    const view = open[open.length - 1];
    if (!view) {
      overlay.hidden = true;
      overlay.innerHTML = "";
      ui.drawn.modal = undefined;
      return;
    }
    const key = `${view.id}:${view.hash}`;
    if (ui.drawn.modal === key) return; // keep what the user typed
    ui.drawn.modal = key;
    const submit = view.submit ? `<button type="submit" class="btn btn-primary" form="modal-form">${BK.plain(view.submit.text)}</button>` : "";
    overlay.innerHTML = `<div class="modal" role="dialog" aria-modal="true" aria-labelledby="modal-title" data-surface="modal" data-view-id="${BK.esc(view.id)}">
      <div class="modal-head"><h2 id="modal-title">${BK.plain((view.title || {}).text || "")}</h2>
        <button type="button" class="modal-x" data-modal-close aria-label="Close">×</button></div>
      <form class="modal-body" id="modal-form" novalidate>${BK.renderBlocks(view.blocks, ctx({ surface: "modal" }))}</form>
      <div class="modal-foot"><button type="button" class="btn" data-modal-close>${BK.plain((view.close || { text: "Cancel" }).text)}</button>${submit}</div>
    </div>`;
    overlay.hidden = false;
    const first = overlay.querySelector(".bk-input");
    if (first) first.focus();
  }

  function render() {
    if (!state) return;
    renderUsers();
    renderSidebar();
    renderMain();
    renderThread();
    renderModal();
  }

  // -- doing things ------------------------------------------------------------------------------

  function toast(text) {
    const box = $("#toast");
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.hidden = true; }, 5000);
  }

  function note(channel, text, blocks) {
    ui.notes.push({ channel, user: ui.user, text, blocks: blocks || [], ts: nowTs(), local: true });
    render();
  }

  async function send(raw) {
    const text = raw.trim();
    if (!text) return;
    const channel = composerChannel();
    const command = text.match(/^(\/\S+)\s*([\s\S]*)$/);
    if (!command) {
      await post("/playground/message", { user: ui.user, channel: channel.startsWith("D") ? ui.user : channel, text });
      return;
    }
    if (command[1] !== "/csb") {
      note(channel, `\`${command[1]}\` is not a valid command. In the playground only \`/csb\` is installed.`);
      return;
    }
    const target = channel.startsWith("D") ? ui.user : channel; // a DM is opened by the user's id
    const answer = await post("/playground/command", { user: ui.user, channel: target, text: command[2] });
    if (answer.status !== 200) {
      note(channel, `:warning: \`/csb\` failed: the bot answered HTTP ${answer.status}.`);
    } else if (answer.ack && typeof answer.ack === "object" && (answer.ack.text || answer.ack.blocks)) {
      note(channel, answer.ack.text || "", answer.ack.blocks);
    } else if (typeof answer.ack === "string" && answer.ack.trim()) {
      note(channel, answer.ack);
    }
  }

  /** A button or select in a message, modal or home tab: `block_actions`, as Slack sends it. */
  async function useElement(el) {
    const surface = el.closest("[data-surface]");
    if (!surface) return;
    if (el.dataset.bkUrl) window.open(el.dataset.bkUrl, "_blank", "noopener");
    const body = { user: ui.user, action: BK.actionOf(el) };
    if (surface.dataset.viewId) body.view_id = surface.dataset.viewId;
    else Object.assign(body, { channel: surface.dataset.channel, ts: surface.dataset.ts });
    if (surface.dataset.surface === "ephemeral") body.ephemeral = true;
    el.disabled = true;
    try {
      const answer = await post("/playground/click", body);
      if (answer.status !== 200) toast(`The bot answered HTTP ${answer.status} to that click.`);
    } finally {
      el.disabled = false;
    }
  }

  /** Slack checks required inputs and lengths before it sends a submission; so does the page. */
  function localErrors(form) {
    const errors = {};
    for (const block of form.querySelectorAll(".bk-block-input")) {
      const input = block.querySelector(".bk-input");
      if (!input) continue;
      const value = BK.stateValues(block)[block.dataset.bkBlock];
      const entry = value && Object.values(value)[0];
      const empty = !entry || [entry.value, entry.selected_option, entry.selected_date].every((v) => v == null)
        && !(entry.selected_options && entry.selected_options.length);
      const min = Number(input.getAttribute("minlength") || 0);
      if (block.dataset.bkRequired && empty) errors[block.dataset.bkBlock] = "Please complete this required field.";
      else if (!empty && min && String(entry.value || "").length < min) {
        errors[block.dataset.bkBlock] = `Must have at least ${min} characters.`;
      }
    }
    return errors;
  }

  function showErrors(form, errors) {
    for (const old of form.querySelectorAll(".bk-error")) old.remove();
    for (const [blockId, message] of Object.entries(errors || {})) {
      const block = form.querySelector(`[data-bk-block="${CSS.escape(blockId)}"]`);
      if (!block) continue;
      const div = document.createElement("div");
      div.className = "bk-error";
      div.setAttribute("role", "alert");
      div.textContent = message;
      block.appendChild(div);
    }
  }

  async function submitModal(form) {
    const modal = form.closest("[data-view-id]");
    const errors = localErrors(form);
    showErrors(form, errors);
    if (Object.keys(errors).length) return;
    const values = BK.stateValues(form);
    const answer = await post("/playground/view_submit", { user: ui.user, view_id: modal.dataset.viewId, values });
    if (answer.status !== 200) toast(`The bot answered HTTP ${answer.status} to the submission.`);
    else if (answer.ack && answer.ack.response_action === "errors") showErrors(form, answer.ack.errors);
  }

  function openHome() {
    ui.pane = "home";
    render();
    post("/playground/home_opened", { user: ui.user }).catch((err) => toast(err.message));
  }

  function switchUser(userId) {
    ui.user = userId;
    localStorage.setItem("csb-playground.user", userId);
    ui.drawn.modal = undefined;
    if (ui.pane === "home") openHome();
    else render();
  }

  function onClick(event) {
    const target = event.target;
    const element = target.closest("button.bk-button");
    if (element && !element.disabled) return void useElement(element).catch((err) => toast(err.message));
    const channel = target.closest(".sidebar-item[data-channel]");
    if (channel) {
      Object.assign(ui, { pane: "channel", channel: channel.dataset.channel });
      return void render();
    }
    if (target.closest("#app-home-link")) return void openHome();
    const tab = target.closest("[data-home-tab]");
    if (tab) {
      ui.homeTab = tab.dataset.homeTab;
      return void render();
    }
    const link = target.closest(".thread-link");
    if (link) {
      ui.thread = { channel: link.dataset.threadChannel, ts: link.dataset.threadTs };
      return void render();
    }
    if (target.closest(".thread-close")) {
      ui.thread = null;
      return void render();
    }
    const dismiss = target.closest("[data-dismiss]");
    if (dismiss) {
      ui.dismissed.add(dismiss.dataset.dismiss);
      return void render();
    }
    const close = target.closest("[data-modal-close]");
    if (close) {
      const viewId = close.closest("[data-view-id]").dataset.viewId;
      post("/playground/view_close", { user: ui.user, view_id: viewId }).catch((err) => toast(err.message));
    }
  }

  function onChange(event) {
    const el = event.target.closest(".bk-select, .bk-choices");
    // Inputs of a modal are read on submit; selects elsewhere act at once, as in Slack.
    if (el && !el.classList.contains("bk-input")) useElement(el).catch((err) => toast(err.message));
  }

  function wireComposer() {
    const form = $("#composer");
    const input = $("#composer-input");
    const submit = async () => {
      const text = input.value;
      input.value = "";
      input.style.height = "auto";
      try {
        await send(text);
      } catch (err) {
        input.value = text;
        toast(err.message);
      }
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submit();
    });
    input.addEventListener("input", () => {
      input.style.height = "auto";
      input.style.height = `${input.scrollHeight}px`;
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    });
  }

  function start() {
    document.addEventListener("click", onClick);
    document.addEventListener("change", onChange);
    document.addEventListener("submit", (event) => {
      if (event.target.id !== "modal-form") return;
      event.preventDefault();
      submitModal(event.target).catch((err) => toast(err.message));
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !$("#modal").hidden) $("#modal [data-modal-close]").click();
    });
    $("#user-switcher").addEventListener("change", (event) => switchUser(event.target.value));
    wireComposer();
    refresh().then(connect);
  }

  start();
})();
