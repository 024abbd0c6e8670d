/*
 * Block Kit → HTML for the playground page, in the way Slack draws it.
 *
 * The renderer returns markup strings (every interpolated value escaped) so that it runs unchanged
 * under node for its unit tests; the page inserts the markup and listens for clicks by delegation.
 * Interactive elements carry `data-bk-*` attributes naming their block, action and value, which is
 * all the page needs to send the `block_actions` or `view_submission` Slack would send.
 *
 * ctx: { users: {U…: "name"}, channels: {C…: "name"}, surface: "message" | "modal" | "home",
 *        errors: {block_id: "message"}, disabled: bool }
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.BlockKit = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // The emoji codes the bot writes, and a few more people type; unknown codes stay as text.
  const EMOJI = {
    white_check_mark: "✅", heavy_check_mark: "✔️", x: "❌", warning: "⚠️", no_entry: "⛔",
    no_entry_sign: "🚫", rotating_light: "🚨", hourglass: "⌛", hourglass_flowing_sand: "⏳",
    pencil2: "✏️", memo: "📝", rocket: "🚀", tada: "🎉", eyes: "👀", bar_chart: "📊",
    chart_with_upwards_trend: "📈", clipboard: "📋", gear: "⚙️", lock: "🔒", robot_face: "🤖",
    information_source: "ℹ️", question: "❓", exclamation: "❗", bell: "🔔", zap: "⚡", fire: "🔥",
    "+1": "👍", thumbsup: "👍", "-1": "👎", thumbsdown: "👎", wave: "👋", stopwatch: "⏱️",
    arrows_counterclockwise: "🔄", repeat: "🔁", large_green_circle: "🟢", red_circle: "🔴",
    large_yellow_circle: "🟡", white_circle: "⚪", black_circle: "⚫", construction: "🚧",
    hammer_and_wrench: "🛠️", mag: "🔍", link: "🔗", package: "📦", inbox_tray: "📥",
    outbox_tray: "📤", page_facing_up: "📄", calendar: "📆", sparkles: "✨", skull: "💀",
    checkered_flag: "🏁", trophy: "🏆", star: "⭐", heavy_minus_sign: "➖",
    heavy_plus_sign: "➕", arrow_right: "➡️", arrow_up: "⬆️", arrow_down: "⬇️", thinking_face: "🤔",
    slightly_smiling_face: "🙂", smile: "😄", ok_hand: "👌", pray: "🙏", raised_hands: "🙌",
    arrow_forward: "▶️", double_vertical_bar: "⏸️", octagonal_sign: "🛑", white_small_square: "▫️",
    recycle: "♻️", broom: "🧹", spiral_note_pad: "🗒️", paperclip: "📎", stop_button: "⏹️",
    pause_button: "⏸️",
  };

  // Slack draws emoji as images, so a machine without an emoji font still tells ✅ from ❌. The page does
  // the same for every emoji the bot writes: simple drawings of its own (36×36), coloured as Slack's
  // are. Other codes fall back to the character above, drawn by whatever font the machine has.
  const BOX = '<rect x="2" y="2" width="32" height="32" rx="6" fill="#3b88c3"/>';
  const SAND = "#f4b400";
  const GLASS =
    '<path d="M9 4h18M9 32h18" stroke="#8a6d3b" stroke-width="3" stroke-linecap="round"/>' +
    '<path d="M11 5c0 8 7 10 7 13s-7 5-7 13h14c0-8-7-10-7-13s7-5 7-13z" fill="#e6f0f7" stroke="#8a6d3b" stroke-width="1.5"/>';
  const CHECKERS = [[8, 5], [20, 5], [14, 10.3], [26, 10.3], [8, 15.6], [20, 15.6]]
    .map(([x, y]) => `<rect x="${x}" y="${y}" width="6" height="5.4" fill="#31373d"/>`).join("");
  const EMOJI_SVG = {
    white_check_mark:
      '<rect x="2" y="2" width="32" height="32" rx="6" fill="#5cb85c"/>' +
      '<path d="M9 18.5l6 6 12-13" fill="none" stroke="#fff" stroke-width="4.5" stroke-linecap="round" stroke-linejoin="round"/>',
    heavy_check_mark:
      '<path d="M6 19l8 8L30 9" fill="none" stroke="#31373d" stroke-width="5" stroke-linecap="round" stroke-linejoin="round"/>',
    x: '<path d="M8 8l20 20M28 8L8 28" stroke="#dd2e44" stroke-width="6" stroke-linecap="round"/>',
    warning:
      '<path d="M18 3l16 29H2z" fill="#ffcc4d" stroke="#e0a800" stroke-width="1.5" stroke-linejoin="round"/>' +
      '<path d="M18 13v9" stroke="#231f20" stroke-width="3.5" stroke-linecap="round"/><circle cx="18" cy="27" r="2" fill="#231f20"/>',
    no_entry: '<circle cx="18" cy="18" r="16" fill="#dd2e44"/><rect x="7" y="15" width="22" height="6" rx="1" fill="#fff"/>',
    octagonal_sign:
      '<path d="M12 2h12l10 10v12L24 34H12L2 24V12z" fill="#dd2e44"/>' +
      '<path d="M12.8 4h10.4L32 12.8v10.4L23.2 32H12.8L4 23.2V12.8z" fill="none" stroke="#fff" stroke-width="1.5"/>',
    hourglass: GLASS + `<path d="M13 30c1-4 5-6 5-8s4 4 5 8z" fill="${SAND}"/>`,
    hourglass_flowing_sand:
      GLASS + `<path d="M14 10h8c-1 3-4 5-4 6s-3-3-4-6z" fill="${SAND}"/>` +
      `<path d="M18 18v9" stroke="${SAND}" stroke-width="1.2"/><path d="M14 30c1-2 3-3 4-3s3 1 4 3z" fill="${SAND}"/>`,
    arrow_forward: BOX + '<path d="M13 9.5v17L27 18z" fill="#fff"/>',
    double_vertical_bar:
      BOX + '<rect x="11" y="10" width="5" height="16" rx="1" fill="#fff"/><rect x="20" y="10" width="5" height="16" rx="1" fill="#fff"/>',
    stop_button: BOX + '<rect x="11" y="11" width="14" height="14" rx="1" fill="#fff"/>',
    repeat:
      BOX +
      '<path d="M10 17v-2a3 3 0 0 1 3-3h13M23 8.5l3.5 3.5-3.5 3.5M26 19v2a3 3 0 0 1-3 3H10M13 27.5L9.5 24l3.5-3.5" ' +
      'fill="none" stroke="#fff" stroke-width="2.8" stroke-linecap="round" stroke-linejoin="round"/>',
    arrows_counterclockwise:
      BOX +
      '<path d="M25.5 14A8 8 0 0 0 11 13.5M10.5 22a8 8 0 0 0 14.5 0.5" fill="none" stroke="#fff" stroke-width="2.8" ' +
      'stroke-linecap="round"/><path d="M9.5 8.5v5.5h5.5M26.5 27.5V22H21" fill="none" stroke="#fff" ' +
      'stroke-width="2.8" stroke-linecap="round" stroke-linejoin="round"/>',
    rotating_light:
      '<rect x="6" y="27" width="24" height="6" rx="1.5" fill="#66757f"/><path d="M9 27v-9a9 9 0 0 1 18 0v9z" fill="#dd2e44"/>' +
      '<path d="M13 19a5 5 0 0 1 5-5" fill="none" stroke="#ffb3bc" stroke-width="2.5" stroke-linecap="round"/>' +
      '<path d="M18 2v4M5 8l3 3M31 8l-3 3" stroke="#f4900c" stroke-width="2.5" stroke-linecap="round"/>',
    pencil2:
      '<path d="M6 30l2-7L24 7l5 5-16 16z" fill="#ffcc4d" stroke="#c1694f" stroke-width="1.5" stroke-linejoin="round"/>' +
      '<path d="M24 7l3-3 5 5-3 3z" fill="#ea596e"/><path d="M6 30l2-7 5 5z" fill="#292f33"/>',
    heavy_minus_sign: '<rect x="5" y="15" width="26" height="6" rx="2" fill="#31373d"/>',
    checkered_flag:
      '<path d="M7 3v31" stroke="#66757f" stroke-width="2.5" stroke-linecap="round"/>' +
      `<rect x="8" y="5" width="24" height="16" fill="#fff" stroke="#31373d" stroke-width="1"/>${CHECKERS}`,
    bar_chart:
      '<rect x="3" y="3" width="30" height="30" rx="3" fill="#fff" stroke="#ccd6dd" stroke-width="2"/>' +
      '<rect x="8" y="18" width="5" height="10" fill="#dd2e44"/><rect x="15.5" y="9" width="5" height="19" fill="#3b88c3"/>' +
      '<rect x="23" y="14" width="5" height="14" fill="#77b255"/>',
  };
  EMOJI_SVG.pause_button = EMOJI_SVG.double_vertical_bar;

  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function esc(value) {
    return String(value == null ? "" : value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }

  /** Slack's own escaping in mrkdwn source: `&amp;`, `&lt;`, `&gt;` stand for the characters. */
  function unslack(text) {
    return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }

  function safeUrl(url) {
    return /^(https?:\/\/|mailto:)/i.test(url) ? url : null;
  }

  function emojiChar(name) {
    return Object.prototype.hasOwnProperty.call(EMOJI, name) ? EMOJI[name] : null;
  }

  function emoji(name) {
    const char = emojiChar(name);
    if (!char) return esc(`:${name}:`);
    const drawn = Object.prototype.hasOwnProperty.call(EMOJI_SVG, name) ? EMOJI_SVG[name] : null;
    if (!drawn) return `<span class="bk-emoji" title=":${esc(name)}:">${char}</span>`;
    return `<span class="bk-emoji" title=":${esc(name)}:" role="img" aria-label="${char}">` +
      `<svg class="bk-emoji-img" viewBox="0 0 36 36" aria-hidden="true">${drawn}</svg></span>`;
  }

  function userName(id, ctx) {
    const users = (ctx && ctx.users) || {};
    return users[id] || id;
  }

  // -- mrkdwn ------------------------------------------------------------------------------------

  /** One `<…>` token: a mention, a channel, a date, a special mention or a link. */
  function token(body, ctx) {
    const bar = body.indexOf("|");
    const target = bar >= 0 ? body.slice(0, bar) : body;
    const label = bar >= 0 ? body.slice(bar + 1) : null;
    if (/^@[UW][A-Z0-9]+$/.test(target)) {
      const name = label || userName(target.slice(1), ctx);
      return `<span class="bk-mention">@${esc(name)}</span>`;
    }
    if (/^#C[A-Z0-9]+$/.test(target)) {
      const channels = (ctx && ctx.channels) || {};
      return `<span class="bk-mention">#${esc(label || channels[target.slice(1)] || target.slice(1))}</span>`;
    }
    if (target.startsWith("!date^")) {
      const seconds = Number(target.split("^")[1]);
      const iso = Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : "";
      return `<time class="bk-date" datetime="${esc(iso)}">${esc(unslack(label || iso))}</time>`;
    }
    if (target.startsWith("!subteam^")) {
      return `<span class="bk-mention">${esc(label || "@group")}</span>`;
    }
    if (/^!(here|channel|everyone)$/.test(target)) {
      return `<span class="bk-mention">@${esc(target.slice(1))}</span>`;
    }
    const url = safeUrl(unslack(target));
    const text = unslack(label || target);
    if (!url) return esc(text);
    return `<a class="bk-link" href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(text)}</a>`;
  }

  /**
   * Inline mrkdwn: code spans, `<…>` tokens and emoji become placeholders first, so that bold and
   * italic never reach into them (`csb_sdlc_fix` stays as typed) and nothing unescaped slips through.
   */
  function inline(source, ctx) {
    const held = [];
    const hold = (html) => `\u0001${held.push(html) - 1}\u0002`;
    let text = source.replace(/`([^`\n]+)`|<([^<>\n]+)>/g, (_m, code, tok) =>
      hold(code !== undefined ? `<code class="bk-code">${esc(unslack(code))}</code>` : token(tok, ctx)),
    );
    text = text.replace(/:([a-z0-9_+-]+):/g, (m, name) => (emojiChar(name) ? hold(emoji(name)) : m));
    text = esc(unslack(text));
    text = text
      .replace(/(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])/g, "<strong>$1</strong>")
      .replace(/(?<![\w_])_(?!\s)([^_\n]+?)(?<!\s)_(?![\w_])/g, "<em>$1</em>")
      .replace(/(?<![\w~])~(?!\s)([^~\n]+?)(?<!\s)~(?![\w~])/g, "<del>$1</del>");
    text = text
      .split("\n")
      .map((line) => (line.startsWith("&gt; ") ? `<span class="bk-quote">${line.slice(5)}</span>` : line))
      .join("<br>");
    return text.replace(/\u0001(\d+)\u0002/g, (_m, i) => held[Number(i)]);
  }

  /** Slack's mrkdwn: *bold*, _italic_, ~strike~, `code`, ```pre```, mentions, dates, links, emoji. */
  function mrkdwn(source, ctx) {
    const parts = String(source == null ? "" : source).split("```");
    let html = "";
    parts.forEach((part, i) => {
      const fenced = i % 2 === 1 && i < parts.length - 1;
      if (fenced) html += `<pre class="bk-pre">${esc(unslack(part.replace(/^\n/, "")))}</pre>`;
      else html += (i % 2 === 1 ? "```" : "") + inline(part, ctx);
    });
    return html;
  }

  function plain(text) {
    return esc(text).replace(/:([a-z0-9_+-]+):/g, (m, name) => (emojiChar(name) ? emoji(name) : m));
  }

  /** A text object, plain or mrkdwn. */
  function textObject(obj, ctx) {
    if (!obj) return "";
    if (typeof obj === "string") return plain(obj);
    return obj.type === "mrkdwn" ? mrkdwn(obj.text, ctx) : plain(obj.text);
  }

  function plainText(obj) {
    if (!obj) return "";
    return typeof obj === "string" ? obj : String(obj.text || "");
  }

  // -- rich text ---------------------------------------------------------------------------------

  function richInline(el, ctx) {
    let html;
    switch (el.type) {
      case "text":
        html = esc(el.text).replace(/\n/g, "<br>");
        break;
      case "link": {
        const url = safeUrl(el.url || "");
        const label = esc(el.text || el.url);
        html = url ? `<a class="bk-link" href="${esc(url)}" target="_blank" rel="noopener noreferrer">${label}</a>` : label;
        break;
      }
      case "user":
        html = `<span class="bk-mention">@${esc(userName(el.user_id, ctx))}</span>`;
        break;
      case "channel":
        html = `<span class="bk-mention">#${esc(((ctx && ctx.channels) || {})[el.channel_id] || el.channel_id)}</span>`;
        break;
      case "emoji":
        html = emoji(el.name);
        break;
      case "date":
        html = `<time class="bk-date">${esc(el.fallback || "")}</time>`;
        break;
      case "broadcast":
        html = `<span class="bk-mention">@${esc(el.range)}</span>`;
        break;
      default:
        html = esc(el.text || "");
    }
    const style = el.style || {};
    if (style.code) html = `<code class="bk-code">${html}</code>`;
    if (style.bold) html = `<strong>${html}</strong>`;
    if (style.italic) html = `<em>${html}</em>`;
    if (style.strike) html = `<del>${html}</del>`;
    return html;
  }

  function richElements(elements, ctx) {
    return (elements || []).map((el) => richInline(el, ctx)).join("");
  }

  function richPart(part, ctx) {
    switch (part.type) {
      case "rich_text_section":
        return `<div class="bk-rich-section">${richElements(part.elements, ctx)}</div>`;
      case "rich_text_preformatted":
        return `<pre class="bk-pre">${richElements(part.elements, ctx)}</pre>`;
      case "rich_text_quote":
        return `<blockquote class="bk-quote">${richElements(part.elements, ctx)}</blockquote>`;
      case "rich_text_list": {
        const tag = part.style === "ordered" ? "ol" : "ul";
        const items = (part.elements || []).map((item) => `<li>${richElements(item.elements, ctx)}</li>`);
        return `<${tag} class="bk-rich-list" style="margin-left:${(part.indent || 0) * 1.2}em">${items.join("")}</${tag}>`;
      }
      default:
        return richElements(part.elements, ctx);
    }
  }

  // -- elements ----------------------------------------------------------------------------------

  function dataAttrs(el, block, extra) {
    const attrs = {
      "data-bk-type": el.type,
      "data-bk-action-id": el.action_id || "",
      "data-bk-block-id": block.block_id || "",
      ...extra,
    };
    return Object.entries(attrs)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k}="${esc(v)}"`)
      .join(" ");
  }

  function options(el) {
    const flat = [...(el.options || [])];
    for (const group of el.option_groups || []) flat.push(...(group.options || []));
    return flat;
  }

  function selectMarkup(el, block, ctx, choices, initial) {
    const disabled = ctx.disabled ? " disabled" : "";
    const placeholder = plainText(el.placeholder) || "Select an item";
    const first = `<option value=""${initial == null ? " selected" : ""} disabled>${esc(placeholder)}</option>`;
    const rest = choices
      .map(([value, label]) => `<option value="${esc(value)}"${value === initial ? " selected" : ""}>${esc(label)}</option>`)
      .join("");
    const input = ctx.surface === "modal" ? " bk-input" : "";
    return `<select class="bk-select${input}" ${dataAttrs(el, block)}${disabled}>${first}${rest}</select>`;
  }

  function element(el, block, ctx) {
    if (!el) return "";
    const disabled = ctx.disabled ? " disabled" : "";
    switch (el.type) {
      case "button": {
        const style = el.style ? ` bk-button-${esc(el.style)}` : "";
        const attrs = dataAttrs(el, block, { "data-bk-value": el.value, "data-bk-url": el.url && safeUrl(el.url) });
        return `<button type="button" class="bk-button${style}" ${attrs}${disabled}>${plain(plainText(el.text))}</button>`;
      }
      case "static_select":
      case "external_select": {
        const initial = el.initial_option ? el.initial_option.value : null;
        const choices = options(el).map((o) => [o.value, plainText(o.text)]);
        return selectMarkup(el, block, ctx, choices, initial);
      }
      case "users_select": {
        const choices = Object.entries((ctx && ctx.users) || {}).map(([id, name]) => [id, name]);
        return selectMarkup(el, block, ctx, choices, el.initial_user || null);
      }
      case "conversations_select":
      case "channels_select": {
        const choices = Object.entries((ctx && ctx.channels) || {}).map(([id, name]) => [id, `#${name}`]);
        return selectMarkup(el, block, ctx, choices, el.initial_conversation || el.initial_channel || null);
      }
      case "overflow": {
        const choices = options(el).map((o) => [o.value, plainText(o.text)]);
        return selectMarkup({ ...el, placeholder: "⋯" }, block, ctx, choices, null);
      }
      case "image":
        return `<span class="bk-image-alt" title="${esc(el.image_url || "")}">[${esc(el.alt_text || "image")}]</span>`;
      case "plain_text_input":
      case "number_input":
      case "email_text_input":
      case "url_text_input":
        return textInput(el, block, ctx);
      case "checkboxes":
      case "radio_buttons":
        return choiceList(el, block, ctx);
      case "datepicker":
        return `<input type="date" class="bk-text-input bk-input" ${dataAttrs(el, block)} value="${esc(el.initial_date || "")}"${disabled}>`;
      default:
        return `<span class="bk-unsupported">[${esc(el.type)}]</span>`;
    }
  }

  function textInput(el, block, ctx) {
    const disabled = ctx.disabled ? " disabled" : "";
    const value = el.initial_value == null ? "" : String(el.initial_value);
    const placeholder = el.placeholder ? ` placeholder="${esc(plainText(el.placeholder))}"` : "";
    const limits =
      (el.min_length ? ` minlength="${esc(el.min_length)}"` : "") + (el.max_length ? ` maxlength="${esc(el.max_length)}"` : "");
    const attrs = dataAttrs(el, block);
    if (el.multiline) {
      return `<textarea class="bk-text-input bk-input" rows="4" ${attrs}${placeholder}${limits}${disabled}>${esc(value)}</textarea>`;
    }
    const kind = { number_input: "number", email_text_input: "email", url_text_input: "url" }[el.type] || "text";
    const step = el.type === "number_input" && !el.is_decimal_allowed ? ' step="1"' : "";
    return `<input type="${kind}" class="bk-text-input bk-input" ${attrs} value="${esc(value)}"${placeholder}${limits}${step}${disabled}>`;
  }

  function choiceList(el, block, ctx) {
    const disabled = ctx.disabled ? " disabled" : "";
    const kind = el.type === "checkboxes" ? "checkbox" : "radio";
    const chosen = new Set(
      el.type === "checkboxes"
        ? (el.initial_options || []).map((o) => o.value)
        : el.initial_option ? [el.initial_option.value] : [],
    );
    const name = `${block.block_id || ""}/${el.action_id || ""}`;
    const items = options(el).map((o) => {
      const checked = chosen.has(o.value) ? " checked" : "";
      return `<label class="bk-choice"><input type="${kind}" name="${esc(name)}" value="${esc(o.value)}"${checked}${disabled}> ${textObject(o.text, ctx)}</label>`;
    });
    const input = ctx.surface === "modal" ? " bk-input" : "";
    return `<div class="bk-choices${input}" ${dataAttrs(el, block)}>${items.join("")}</div>`;
  }

  // -- blocks ------------------------------------------------------------------------------------

  const BLOCKS = {
    header: (b) => `<div class="bk-header-text">${plain(plainText(b.text))}</div>`,
    divider: () => `<hr class="bk-divider">`,
    section(b, ctx) {
      const text = b.text ? `<div class="bk-text">${textObject(b.text, ctx)}</div>` : "";
      const fields = (b.fields || []).map((f) => `<div class="bk-field">${textObject(f, ctx)}</div>`);
      const grid = fields.length ? `<div class="bk-fields">${fields.join("")}</div>` : "";
      const accessory = b.accessory ? `<div class="bk-accessory">${element(b.accessory, b, ctx)}</div>` : "";
      return `<div class="bk-section-body">${text}${grid}</div>${accessory}`;
    },
    context(b, ctx) {
      const items = (b.elements || []).map((el) =>
        el.type === "image" ? element(el, b, ctx) : `<span class="bk-context-item">${textObject(el, ctx)}</span>`,
      );
      return items.join("");
    },
    actions: (b, ctx) => (b.elements || []).map((el) => element(el, b, ctx)).join(""),
    input(b, ctx) {
      const optional = b.optional ? ` <span class="bk-optional">(optional)</span>` : "";
      const label = `<label class="bk-label">${plain(plainText(b.label))}${optional}</label>`;
      const hint = b.hint ? `<div class="bk-hint">${plain(plainText(b.hint))}</div>` : "";
      return `${label}${element(b.element, b, { ...ctx, surface: "modal" })}${hint}`;
    },
    rich_text: (b, ctx) => (b.elements || []).map((part) => richPart(part, ctx)).join(""),
    markdown: (b, ctx) => `<div class="bk-text">${mrkdwn(b.text, ctx)}</div>`,
    image(b) {
      const title = b.title ? `<div class="bk-image-title">${plain(plainText(b.title))}</div>` : "";
      return `${title}<div class="bk-image-alt" title="${esc(b.image_url || "")}">[image: ${esc(b.alt_text || "")}]</div>`;
    },
    table(b, ctx) {
      const cell = (c) => (c && c.type === "rich_text" ? BLOCKS.rich_text(c, ctx) : esc((c && c.text) || ""));
      const rows = (b.rows || []).map((row, i) => {
        const tag = i === 0 ? "th" : "td";
        return `<tr>${row.map((c) => `<${tag}>${cell(c)}</${tag}>`).join("")}</tr>`;
      });
      return `<table class="bk-table">${rows.join("")}</table>`;
    },
  };

  function renderBlock(block, ctx) {
    if (!block || typeof block !== "object") return "";
    const draw = BLOCKS[block.type];
    const body = draw ? draw(block, ctx) : `<span class="bk-unsupported">[${esc(block.type)} block]</span>`;
    const error = ctx.errors && block.block_id && ctx.errors[block.block_id];
    const note = error ? `<div class="bk-error" role="alert">${esc(error)}</div>` : "";
    const required = block.type === "input" && !block.optional ? ' data-bk-required="true"' : "";
    return `<div class="bk-block bk-block-${esc(block.type)}" data-bk-block="${esc(block.block_id || "")}"${required}>${body}${note}</div>`;
  }

  /** A list of blocks as Slack draws them on `ctx.surface`. */
  function renderBlocks(blocks, ctx) {
    const context = { surface: "message", ...(ctx || {}) };
    return `<div class="bk-blocks">${(blocks || []).map((b) => renderBlock(b, context)).join("")}</div>`;
  }

  // -- reading the page back (browser only) --------------------------------------------------------

  function selectedOption(select) {
    const option = select.options[select.selectedIndex];
    if (!option || option.value === "") return null;
    return { text: { type: "plain_text", text: option.textContent, emoji: true }, value: option.value };
  }

  function choiceOption(input) {
    const label = input.closest("label");
    return { text: { type: "plain_text", text: label ? label.textContent.trim() : input.value, emoji: true }, value: input.value };
  }

  /** What an element holds now, in the shape Slack puts into `state.values` and `actions[]`. */
  function elementValue(el) {
    const type = el.dataset.bkType;
    switch (type) {
      case "static_select":
      case "external_select":
      case "overflow":
        return { selected_option: selectedOption(el) };
      case "users_select":
        return { selected_user: el.value || null };
      case "conversations_select":
        return { selected_conversation: el.value || null };
      case "channels_select":
        return { selected_channel: el.value || null };
      case "checkboxes":
        return { selected_options: [...el.querySelectorAll("input:checked")].map(choiceOption) };
      case "radio_buttons": {
        const picked = el.querySelector("input:checked");
        return { selected_option: picked ? choiceOption(picked) : null };
      }
      case "datepicker":
        return { selected_date: el.value || null };
      default:
        return { value: el.value === "" ? null : el.value };
    }
  }

  /** `state.values` of a modal: block_id → action_id → {type, …value}. */
  function stateValues(rootElement) {
    const values = {};
    for (const el of rootElement.querySelectorAll(".bk-input")) {
      const block = el.dataset.bkBlockId;
      const action = el.dataset.bkActionId;
      values[block] = values[block] || {};
      values[block][action] = { type: el.dataset.bkType, ...elementValue(el) };
    }
    return values;
  }

  /** The `actions[0]` of a click on a button or a choice in a select. */
  function actionOf(el) {
    const base = { type: el.dataset.bkType, action_id: el.dataset.bkActionId, block_id: el.dataset.bkBlockId };
    if (base.type === "button") {
      return { ...base, text: { type: "plain_text", text: el.textContent, emoji: true }, value: el.dataset.bkValue };
    }
    return { ...base, ...elementValue(el) };
  }

  return { renderBlocks, renderBlock, mrkdwn, plain, esc, stateValues, actionOf, EMOJI, EMOJI_SVG };
});
