// Citeaudit's own script: keyboard shortcuts and review helpers (no inline scripts: CSP).
"use strict";

/* ================================================================ this tab's storage ==
 * sessionStorage lives as long as the browser tab and survives reloads; it may be off, in
 * which case everything here still works, only a reload right after a change is less sure.
 */
function tabStored(key) {
  try {
    return window.sessionStorage.getItem(key);
  } catch (error) {
    return null;
  }
}

function tabStore(key, value) {
  try {
    if (value === null) window.sessionStorage.removeItem(key);
    else window.sessionStorage.setItem(key, value);
  } catch (error) {
    // Storage is off or full: the page keeps working without it.
  }
}

// Every page load in this tab takes the next number, so a page can tell whether it is
// the very next one after the page that left something for it.
// `var`, as for every name at the top of this file: the next claim, shown in place of this
// one (its page written into this window), runs this script again in the same global scope.
var PAGE_NUMBER = (Number(tabStored("citeaudit.page")) || 0) + 1;
tabStore("citeaudit.page", String(PAGE_NUMBER));

// Unsaved changes left on leaving a review page are only for a reload of that page: any
// other page drops them, so they never linger in the tab.
if (!document.getElementById("sheet-form")) tabStore("citeaudit.pending", null);

/* ============================================================ spans of a shown text ==
 * The claim and each passage are shown as pieces, <span class="pt" data-o="N">, N being the
 * offset of the piece's first character in the text the server has (in code points, as
 * Python counts). A selection is read back as offsets through them, and marks are painted
 * by cutting pieces further and setting classes: text only ever goes into text nodes.
 */
var Spans = (function () {
  const WORD = /[\p{L}\p{N}\p{M}_]/u;

  function pieces(box) {
    return Array.from(box.querySelectorAll(".pt"));
  }
  function startOf(piece) {
    return Number(piece.dataset.o);
  }
  function length(text) {
    return Array.from(text).length;
  }
  // The index in `text` (UTF-16, as the DOM counts) of its code point number `n`.
  function unitIndex(text, n) {
    return Array.from(text).slice(0, n).join("").length;
  }

  function textOf(box) {
    return pieces(box)
      .map(function (piece) {
        return piece.textContent;
      })
      .join("");
  }

  // The offset of a DOM boundary point (node, offset) inside box.
  function offsetAt(box, node, offset) {
    const probe = document.createRange();
    probe.setStart(node, offset);
    const all = pieces(box);
    for (let i = 0; i < all.length; i += 1) {
      const text = all[i].firstChild;
      if (!text) continue;
      if (node === text) {
        // The end of a piece is the start of the next: exact even where the browser
        // shortened a line break inside this one.
        if (offset >= text.length && all[i + 1]) return startOf(all[i + 1]);
        return startOf(all[i]) + length(text.data.slice(0, offset));
      }
      if (probe.comparePoint(text, 0) >= 0) return startOf(all[i]);
    }
    const last = all[all.length - 1];
    return last ? startOf(last) + length(last.textContent) : 0;
  }

  // The DOM boundary point of an offset; `end` prefers the end of a piece to the start of
  // the next, so a selection never ends in the piece after it.
  function pointAt(box, offset, end) {
    const all = pieces(box);
    for (let i = 0; i < all.length; i += 1) {
      const text = all[i].firstChild;
      if (!text) continue;
      const from = startOf(all[i]);
      const to = from + length(text.data);
      if (offset >= from && (end ? offset <= to : offset < to)) {
        return [text, unitIndex(text.data, offset - from)];
      }
    }
    return null;
  }

  // The selection's offsets in box, widened to whole words and trimmed of spaces; null
  // when nothing of box is selected.
  function selected(box) {
    const raw = rawSelected(box);
    return raw ? words(Array.from(textOf(box)), raw[0], raw[1]) : null;
  }

  function rawSelected(box) {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return null;
    const range = selection.getRangeAt(0);
    if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) return null;
    const start = offsetAt(box, range.startContainer, range.startOffset);
    const end = offsetAt(box, range.endContainer, range.endOffset);
    return end > start ? [start, end] : null;
  }

  // A hyphen or apostrophe between two letters joins them: "Full-time" and "don't" are
  // one word each when a selection snaps to words.
  const JOINER = /^[-'\u2019\u2010\u2011]$/u;
  function wordAt(chars, i) {
    if (i < 0 || i >= chars.length) return false;
    if (WORD.test(chars[i])) return true;
    return JOINER.test(chars[i]) && i > 0 && i + 1 < chars.length && WORD.test(chars[i - 1]) && WORD.test(chars[i + 1]);
  }

  function words(chars, start, end) {
    const isWord = function (i) {
      return wordAt(chars, i);
    };
    while (start > 0 && isWord(start - 1) && isWord(start)) start -= 1;
    while (end < chars.length && isWord(end) && isWord(end - 1)) end += 1;
    while (start < end && /\s/u.test(chars[start])) start += 1;
    while (end > start && /\s/u.test(chars[end - 1])) end -= 1;
    return end > start ? [start, end] : null;
  }

  // Every word of box as [start, end].
  function wordSpans(box) {
    const chars = Array.from(textOf(box));
    const found = [];
    let start = -1;
    for (let i = 0; i <= chars.length; i += 1) {
      const word = wordAt(chars, i);
      if (word && start < 0) start = i;
      if (!word && start >= 0) {
        found.push([start, i]);
        start = -1;
      }
    }
    return found;
  }

  function select(box, start, end) {
    const from = pointAt(box, start, false);
    const to = pointAt(box, end, true);
    if (!from || !to) return;
    document.getSelection().setBaseAndExtent(from[0], from[1], to[0], to[1]);
  }

  function slice(box, start, end) {
    return Array.from(textOf(box)).slice(start, end).join("");
  }

  // Spans that overlap or touch made one, sorted (as the server stores them).
  function merge(spans) {
    const sorted = spans
      .map(function (s) {
        return [s[0], s[1]];
      })
      .sort(function (a, b) {
        return a[0] - b[0] || a[1] - b[1];
      });
    const merged = [];
    sorted.forEach(function (span) {
      const last = merged[merged.length - 1];
      if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
      else merged.push(span);
    });
    return merged;
  }

  // Make a piece boundary at `offset`.
  function cut(box, offset) {
    pieces(box).some(function (piece) {
      const text = piece.textContent;
      const from = startOf(piece);
      if (offset <= from || offset >= from + length(text)) return false;
      const at = unitIndex(text, offset - from);
      const rest = piece.cloneNode(false);
      rest.textContent = text.slice(at);
      rest.dataset.o = String(offset);
      piece.textContent = text.slice(0, at);
      piece.after(rest);
      return true;
    });
  }

  // Give class `name` to exactly the pieces inside `spans`.
  function paint(box, name, spans) {
    spans.forEach(function (span) {
      cut(box, span[0]);
      cut(box, span[1]);
    });
    pieces(box).forEach(function (piece) {
      const from = startOf(piece);
      const to = from + length(piece.textContent);
      piece.classList.toggle(
        name,
        spans.some(function (span) {
          return span[0] <= from && to <= span[1];
        })
      );
    });
  }

  return {
    selected: selected,
    rawSelected: rawSelected,
    wordSpans: wordSpans,
    select: select,
    slice: slice,
    merge: merge,
    paint: paint,
  };
})();

function spanButton(label, className) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.textContent = label;
  return button;
}

/* ======================================================================== review page ==
 * Autosave with version check and retry, active-time counting, evidence toggles, keyboard
 * shortcuts. Everything here has a no-JavaScript fallback in the markup (plain form posts).
 *
 * The autosave posts to the draft URL only, whatever button has the focus, and replaces
 * only the save status. Leaving the page with unsaved changes sends them once more
 * (keepalive) and leaves a copy for the next page of this tab: a reload that read the
 * sheet before that save arrived puts the copy back and saves it again. Saves carry this
 * tab's id and a save number, so the server never counts this tab's own earlier save as
 * a conflict, and ignores a late copy of an older one; another tab still gets "changed
 * in another tab".
 */
(function () {
  const form = document.getElementById("sheet-form");
  if (!form) return;

  const SELECT_DELAY_MS = 200; // after a click or key: "Draft saved" follows a judgment key at once
  const TYPING_DELAY_MS = 1200; // after typing: wait for a pause
  const IDLE_AFTER_MS = 60000; // no input for this long: the reviewer is not working
  const HEARTBEAT_MS = 60000; // send counted seconds even when nothing else changes
  const MAX_RETRY_MS = 60000;
  const PENDING_KEY = "citeaudit.pending";
  // The version this tab's last confirmed save made, and of which sheet (see the end).
  const CONFIRMED_KEY = "citeaudit.confirmed";

  const saveUrl = form.dataset.saveUrl;
  // A submitted sheet, or a queue a lead paused: shown, never saved from this page.
  const readOnly = form.dataset.status === "submitted" || form.dataset.paused === "1";
  const activeInput = document.getElementById("active-seconds");
  const dialog = document.getElementById("shortcuts");
  let stale = form.dataset.stale === "1";
  // Whether the server has this sheet: opening a claim stores nothing, and neither does
  // the time spent reading it until a first change is saved.
  let stored = form.dataset.stored === "1";
  let timer = null;
  let inflight = false;
  let changes = 0; // edits made so far
  let savedChanges = 0; // edits the server has confirmed
  let sentChanges = 0;
  let activeSeconds = 0; // counted but not yet confirmed by the server
  let sentSeconds = 0;
  let retryMs = 0;
  let retryTimer = null;
  let afterSave = null; // what to do once everything is saved (navigate, submit)
  const ticking = []; // this page's intervals, stopped when the next claim is shown in place
  let lastInput = Date.now();
  // Set while changes left by the previous page of this tab are not yet saved again: the
  // version they were made on, and (for the first try) their save number and fields.
  let replay = null;

  // ---- this tab's id: kept across reloads; a duplicated tab (which copies the storage)
  // hears that the id is taken and picks its own before its first save.
  function randomId() {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.from(bytes, function (b) {
      return b.toString(16).padStart(2, "0");
    }).join("");
  }
  let tabId = tabStored("citeaudit.tab");
  if (!tabId) {
    tabId = randomId();
    tabStore("citeaudit.tab", tabId);
  }
  let numbered = false; // this page has numbered a save
  let tabs = null;
  if ("BroadcastChannel" in window) {
    tabs = new window.BroadcastChannel("citeaudit.tabs");
    tabs.onmessage = function (event) {
      const message = event.data || {};
      if (message.hello === tabId) {
        tabs.postMessage({ taken: tabId });
      } else if (message.taken === tabId && !numbered) {
        tabId = randomId();
        tabStore("citeaudit.tab", tabId);
      }
    };
    tabs.postMessage({ hello: tabId });
  }
  let lastSeq = 0;
  function nextSeq() {
    numbered = true;
    lastSeq = Math.max(lastSeq, Number(tabStored("citeaudit.seq")) || 0) + 1;
    tabStore("citeaudit.seq", String(lastSeq));
    return lastSeq;
  }

  function statusBox() {
    return document.getElementById("save-status");
  }

  function say(text, state) {
    const box = statusBox();
    if (!box) return;
    box.querySelector(".save-message").textContent = text;
    box.dataset.state = state;
  }

  function dirty() {
    return changes !== savedChanges;
  }

  function pageVersion() {
    const input = statusBox().querySelector("input[name=version]");
    return input ? input.value : "";
  }

  function schedule(delay) {
    if (readOnly || stale) return;
    changes += 1;
    clearTimeout(timer);
    timer = setTimeout(save, delay);
    if (!retryTimer) say("Unsaved changes…", "pending");
  }

  // The CSRF token is bound to the session (no cookie holds it): after logging in again in
  // another tab only a page rendered in the new session carries a valid one, so a save
  // refused for the session fetches this page again and takes the token from its body.
  let csrfToken = null; // null: the one in the body's hx-headers is current
  let csrfStale = false;

  // Redirects are not followed: while the session is still gone this page redirects to the
  // login form, and loading that form starts a new anonymous session whose cookie would
  // replace the one a login in another tab has just set.
  function refreshCsrf() {
    return fetch(window.location.href, { credentials: "same-origin", redirect: "manual" })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html === null) return;
        const body = new DOMParser().parseFromString(html, "text/html").body;
        const token = JSON.parse(body.getAttribute("hx-headers") || "{}")["x-csrftoken"];
        if (token) csrfToken = token;
      })
      .catch(function () {});
  }

  // Django reads the form field before the header: both carry the current token.
  function freshenCsrf() {
    const token = csrfToken;
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    if (token && field) field.value = token;
  }

  // What the sheet posts, as [name, value] pairs, without the token and the flag comment.
  function sheetFields(seconds) {
    activeInput.value = String(seconds);
    const pairs = [];
    new FormData(form).forEach(function (value, name) {
      if (name !== "csrfmiddlewaretoken" && name !== "flag_comment") pairs.push([name, String(value)]);
    });
    return pairs;
  }

  function post(fields, version, seq, keepalive) {
    freshenCsrf();
    const token = form.querySelector("input[name=csrfmiddlewaretoken]").value;
    const body = new URLSearchParams();
    fields.forEach(function (pair) {
      if (pair[0] !== "version") body.append(pair[0], pair[1]);
    });
    body.set("version", String(version));
    body.set("tab", tabId);
    body.set("seq", String(seq));
    body.set("csrfmiddlewaretoken", token);
    return window.fetch(saveUrl, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      keepalive: keepalive,
      redirect: "manual", // a redirect (to the login page, say) is an answer, not a status
      // HX-Request: the view answers with the save-status partial, or 401 for a lost session.
      headers: { "X-CSRFToken": token, "HX-Request": "true" },
    });
  }

  // Replace the save status with the server's, but only with a lone #save-status element:
  // nothing else the server might send (a page, a login form) ever lands inside it.
  function showStatus(text) {
    const template = document.createElement("template");
    template.innerHTML = text;
    const parts = template.content.children;
    if (parts.length !== 1 || parts[0].id !== "save-status") return false;
    const box = statusBox();
    if (!box) return false;
    box.replaceWith(parts[0]);
    return true;
  }

  function save() {
    clearTimeout(timer);
    timer = null;
    if (stale || readOnly) return;
    if (inflight) {
      timer = setTimeout(save, 250);
      return;
    }
    clearTimeout(retryTimer);
    retryTimer = null;
    sentChanges = changes;
    sentSeconds = activeSeconds;
    let fields = sheetFields(sentSeconds);
    let version = pageVersion();
    let seq;
    if (replay) {
      version = replay.version;
      if (replay.fields) {
        // The very fields and number of the save sent on leaving: if that one did arrive,
        // this one is recognised as its copy.
        fields = replay.fields;
        seq = replay.seq;
        replay.fields = null;
      }
    }
    if (seq === undefined) seq = nextSeq();
    inflight = true;
    post(fields, version, seq, false)
      .then(function (response) {
        return response.text().then(function (text) {
          answered(response.status, text);
        });
      })
      .catch(function () {
        inflight = false;
        retryLater("Not saved: no connection.");
      });
  }

  function answered(status, text) {
    inflight = false;
    if (status >= 200 && status < 300 && showStatus(text)) {
      tabStore(CONFIRMED_KEY, JSON.stringify({ url: saveUrl, version: Number(pageVersion()) }));
      stored = true;
      replay = null;
      retryMs = 0;
      savedChanges = sentChanges;
      activeSeconds = Math.max(0, activeSeconds - sentSeconds);
      sentSeconds = 0;
      if (afterSave && !dirty()) {
        const then = afterSave;
        afterSave = null;
        then();
      } else if (dirty() && !timer) {
        timer = setTimeout(save, SELECT_DELAY_MS);
      }
    } else if ((status === 409 || status === 400) && showStatus(text)) {
      // The server explains itself in the status partial: show it, do not retry.
      replay = null;
      afterSave = null;
      if (status === 409) stale = true;
    } else if (status === 401 || status === 403) {
      csrfStale = true;
      retryLater("Not saved: your session has ended. Log in again in another tab.");
    } else if (status === 503) {
      // SQLite's one writer was held by a long job (an import), or the database could not
      // be reached (a restart, a failover): either way nothing was written.
      retryLater("Not saved yet: the database is busy or cannot be reached.");
    } else if (status >= 200 && status < 300) {
      retryLater("Not saved: unexpected answer from the server.");
    } else {
      retryLater("Not saved: the server answered " + (status || "with a redirect") + ".");
    }
  }

  function retryLater(reason) {
    retryMs = retryMs ? Math.min(retryMs * 2, MAX_RETRY_MS) : 2000;
    say(reason + " Retrying in " + Math.round(retryMs / 1000) + " s; your changes stay on this page.", "error");
    offerRetry();
    clearTimeout(retryTimer);
    retryTimer = setTimeout(retryNow, retryMs);
  }

  function retryNow() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (!csrfStale) return save();
    csrfStale = false;
    refreshCsrf().then(save);
  }

  // A failed save need not wait out its back-off: "Retry now" beside the message, and
  // coming back to this tab (after logging in again in another) retries at once.
  function offerRetry() {
    const box = statusBox();
    if (!box || box.querySelector("#retry-now")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.id = "retry-now";
    button.className = "linkish";
    button.textContent = "Retry now";
    button.addEventListener("click", function () {
      if (retryTimer) retryNow();
    });
    box.append(" ", button);
  }
  function retryOnReturn() {
    if (retryTimer && document.visibilityState === "visible") retryNow();
  }
  window.addEventListener("focus", retryOnReturn);
  document.addEventListener("visibilitychange", retryOnReturn);

  // Once every change is on the server, run `then`; a failed save keeps the reviewer here.
  function whenSaved(then) {
    if (readOnly || (!dirty() && !inflight && !timer && !replay)) {
      then();
      return;
    }
    afterSave = then;
    if (!inflight) save();
  }

  // The flag button is the one htmx request left on this page.
  form.addEventListener("htmx:configRequest", function (event) {
    const token = csrfToken;
    if (!token) return;
    const headers = event.detail.headers;
    Object.keys(headers).forEach(function (name) {
      if (name.toLowerCase() === "x-csrftoken") delete headers[name];
    });
    headers["X-CSRFToken"] = token;
    if (event.detail.parameters.csrfmiddlewaretoken !== undefined) {
      event.detail.parameters.csrfmiddlewaretoken = token;
    }
  });

  // ---- what triggers a save
  form.addEventListener("change", function (event) {
    const t = event.target;
    if (t.hasAttribute("data-no-autosave") || t.classList.contains("note-input")) return;
    if (t.classList.contains("sent-toggle")) setChosen(t.closest(".passage-text"), chosenIn(t.closest(".passage-text")));
    if (t.classList.contains("orphan-toggle")) updateEvidenceCount();
    schedule(SELECT_DELAY_MS);
  });
  form.addEventListener("input", function (event) {
    const t = event.target;
    if (t.classList.contains("note-input")) {
      const item = t.closest("li");
      item.querySelector("input[name=unsupported_item]").value = itemValue({
        start: Number(item.dataset.start),
        end: Number(item.dataset.end),
        note: t.value,
      });
      schedule(TYPING_DELAY_MS);
      return;
    }
    if (t.hasAttribute("data-no-autosave") || t.tagName !== "TEXTAREA") return;
    schedule(TYPING_DELAY_MS);
  });

  // Submitting and "Save draft" post the whole form; wait for a save already on its way
  // (or changes from the previous page still to be saved again) so the version they carry
  // is current. A sheet not stored yet is first stored by a draft save, which counts the
  // time spent on the page so far.
  form.addEventListener("submit", function (event) {
    const button = event.submitter;
    if (button && button.hasAttribute("hx-post")) return; // htmx handles it (flag)
    // Skipping posts no sheet: a claim only looked at stays unstored (changes still on their
    // way are sent on leaving, as for any page).
    if (button && button.hasAttribute("data-plain-post")) return;
    if (!readOnly && !stale && (inflight || replay || !stored)) {
      event.preventDefault();
      clearTimeout(timer);
      timer = null;
      afterSave = function () {
        form.requestSubmit(button || undefined);
      };
      if (!inflight) save();
      return;
    }
    clearTimeout(timer);
    clearTimeout(retryTimer);
    timer = null;
    retryTimer = null;
    activeInput.value = String(activeSeconds);
    freshenCsrf();
    savedChanges = changes; // the full post carries everything: nothing to send on leaving
  });

  // The next claim shown in place of this page ("held ahead", below): this page's timers
  // and channel end with it.
  window.addEventListener("citeaudit:replaced", function () {
    ticking.forEach(clearInterval);
    clearTimeout(timer);
    clearTimeout(retryTimer);
    if (tabs) tabs.close();
  });

  // Logging out ends the session the save on leaving would need: save first.
  const logout = document.querySelector("form.logout");
  if (logout) {
    logout.addEventListener("submit", function (event) {
      if (readOnly || stale || (!dirty() && !inflight && !timer && !replay)) return;
      event.preventDefault();
      whenSaved(function () {
        logout.submit();
      });
    });
  }

  // Ask before leaving only when saving is failing: otherwise the save sent on leaving
  // and the copy left for a reload keep the changes.
  window.addEventListener("beforeunload", function (event) {
    if (!readOnly && !stale && dirty() && retryTimer) event.preventDefault();
  });

  window.addEventListener("pagehide", function () {
    if (readOnly || stale || !dirty()) return;
    const fields = sheetFields(Math.max(0, activeSeconds - (inflight ? sentSeconds : 0)));
    const version = replay ? replay.version : pageVersion();
    const seq = nextSeq();
    tabStore(
      PENDING_KEY,
      JSON.stringify({
        url: saveUrl,
        page: Number(tabStored("citeaudit.page")) || PAGE_NUMBER,
        version: version,
        seq: seq,
        fields: fields,
      })
    );
    try {
      post(fields, version, seq, true).catch(function () {
        // The page is going away; the copy left above is the fallback.
      });
    } catch (error) {
      // Too large for a keepalive request: the copy left above is the fallback.
    }
  });

  // A page restored from the back/forward cache shows whatever it showed when left:
  // load it afresh instead, so it shows the sheet as stored now.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) window.location.reload();
  });

  // Put back the fields that must never be lost, as the previous page left them.
  function restore(fields) {
    const values = {};
    fields.forEach(function (pair) {
      (values[pair[0]] = values[pair[0]] || []).push(pair[1]);
    });
    Array.from(form.elements).forEach(function (control) {
      const name = control.name;
      if (!name || control.disabled || ["csrfmiddlewaretoken", "version", "active_seconds", "flag_comment"].indexOf(name) >= 0) return;
      const posted = values[name] || [];
      if (control.type === "checkbox" || control.type === "radio") {
        control.checked = posted.indexOf(control.value) >= 0;
      } else if (control.tagName === "SELECT" || control.tagName === "TEXTAREA") {
        control.value = posted.length ? posted[0] : "";
      }
    });
    // Parts of passages and spans of the claim live in hidden inputs: rebuild them.
    passageBoxes.forEach(function (box) {
      const spans = [];
      (values.evidence || []).forEach(function (key) {
        const parts = key.split(":").map(Number);
        if (parts.length === 3 && String(parts[0]) === box.dataset.passage) spans.push([parts[1], parts[2]]);
      });
      setChosen(box, spans);
    });
    const items = [];
    (values.unsupported_item || []).forEach(function (raw) {
      try {
        const item = JSON.parse(raw);
        if (Number.isInteger(item.start) && Number.isInteger(item.end)) items.push({ start: item.start, end: item.end, note: String(item.note || "") });
      } catch (error) {
        // Not one of this page's items: leave it out.
      }
    });
    setAssertions(items);
  }

  // What the previous page of this tab left under `key`, read once: the page after this
  // one, or a reload this one makes, does not find it again.
  function takeStored(key) {
    const raw = tabStored(key);
    if (raw === null) return null;
    tabStore(key, null);
    try {
      return JSON.parse(raw);
    } catch (error) {
      return null;
    }
  }

  function takeConfirmed() {
    const confirmed = takeStored(CONFIRMED_KEY);
    return confirmed && confirmed.url === saveUrl ? Number(confirmed.version) : null;
  }

  function takePending() {
    const pending = takeStored(PENDING_KEY);
    return pending && pending.url === saveUrl && pending.page === PAGE_NUMBER - 1 ? pending : null;
  }

  // ---- active time: the tab is visible and the reviewer did something in the last minute
  ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input"].forEach(function (name) {
    document.addEventListener(
      name,
      function () {
        lastInput = Date.now();
      },
      { passive: true, capture: true }
    );
  });
  ticking.push(setInterval(function () {
    if (readOnly) return;
    if (document.visibilityState === "visible" && Date.now() - lastInput < IDLE_AFTER_MS) {
      activeSeconds += 1;
    }
  }, 1000));
  ticking.push(setInterval(function () {
    if (activeSeconds >= 30 && stored && !inflight && !timer && !retryTimer && !stale && !readOnly) save();
  }, HEARTBEAT_MS));

  // ---- evidence: whole sentences (checkboxes) and parts of passages (listed under them)
  const countBox = document.getElementById("evidence-count");
  function updateEvidenceCount() {
    const n =
      form.querySelectorAll("input.sent-toggle:checked, input.orphan-toggle:checked").length +
      form.querySelectorAll(".evidence-parts li").length;
    countBox.textContent = n + " evidence span" + (n === 1 ? "" : "s") + " selected";
  }

  function visibleSentences() {
    return Array.from(form.querySelectorAll("input.sent-toggle")).filter(function (input) {
      return !input.disabled && input.parentElement.checkVisibility();
    });
  }

  function moveSentence(step) {
    const all = visibleSentences();
    if (!all.length) return;
    const at = all.indexOf(document.activeElement);
    const next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    all[next].focus();
    all[next].parentElement.scrollIntoView({ block: "nearest" });
  }

  const passageBoxes = Array.from(form.querySelectorAll(".passage-text[data-passage]"));
  function boxOf(position) {
    return passageBoxes.find(function (box) {
      return box.dataset.passage === String(position);
    });
  }
  function partsOf(box) {
    return form.querySelector('.evidence-parts[data-passage="' + box.dataset.passage + '"]');
  }
  function sentenceLabels(box) {
    return Array.from(box.querySelectorAll("label.sent"));
  }
  function spanOf(element) {
    return [Number(element.dataset.start), Number(element.dataset.end)];
  }

  // The evidence chosen in one passage, sentences and parts alike, as [start, end].
  function chosenIn(box) {
    const spans = sentenceLabels(box)
      .filter(function (label) {
        return label.querySelector("input").checked;
      })
      .map(spanOf);
    Array.from(partsOf(box).children).forEach(function (item) {
      spans.push(spanOf(item));
    });
    return spans;
  }

  // Show `spans` as the passage's evidence: merged; a span that is a whole sentence ticks
  // it, any other is a part, marked in the text and listed (with its hidden input).
  function setChosen(box, spans) {
    const merged = Spans.merge(spans);
    const labels = sentenceLabels(box);
    const sentences = new Set(
      labels.map(function (label) {
        return label.dataset.start + ":" + label.dataset.end;
      })
    );
    labels.forEach(function (label) {
      label.querySelector("input").checked = merged.some(function (span) {
        return span[0] + ":" + span[1] === label.dataset.start + ":" + label.dataset.end;
      });
    });
    const parts = merged.filter(function (span) {
      return !sentences.has(span[0] + ":" + span[1]);
    });
    partsOf(box).replaceChildren.apply(
      partsOf(box),
      parts.map(function (span) {
        const item = document.createElement("li");
        item.dataset.start = String(span[0]);
        item.dataset.end = String(span[1]);
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = "evidence";
        input.value = box.dataset.passage + ":" + span[0] + ":" + span[1];
        const quote = document.createElement("q");
        quote.textContent = Spans.slice(box, span[0], span[1]);
        item.append(input, quote, " ", spanButton("Remove", "span-remove linkish"));
        return item;
      })
    );
    Spans.paint(box, "ev", parts);
    updateEvidenceCount();
  }

  // A selection inside a chosen span trims that span to it; any other is added.
  function addEvidence(box, span) {
    const spans = chosenIn(box);
    const around = spans.findIndex(function (c) {
      return c[0] <= span[0] && span[1] <= c[1];
    });
    if (around >= 0) spans.splice(around, 1);
    spans.push(span);
    setChosen(box, spans);
    schedule(SELECT_DELAY_MS);
  }

  function trims(box, span) {
    return chosenIn(box).some(function (c) {
      return c[0] <= span[0] && span[1] <= c[1] && (c[0] !== span[0] || c[1] !== span[1]);
    });
  }

  // ---- unsupported assertions: spans of the claim, each with a note; free text below
  const claimBox = document.getElementById("claim-statement");
  const assertionList = document.getElementById("assertion-list");
  const suggestionBox = document.getElementById("suggestions");

  function assertionItems() {
    return Array.from(assertionList.children).map(function (item) {
      return { start: Number(item.dataset.start), end: Number(item.dataset.end), note: item.querySelector(".note-input").value };
    });
  }

  function itemValue(item) {
    return JSON.stringify({ start: item.start, end: item.end, note: item.note });
  }

  function setAssertions(items) {
    const merged = [];
    items
      .slice()
      .sort(function (a, b) {
        return a.start - b.start || a.end - b.end;
      })
      .forEach(function (item) {
        const last = merged[merged.length - 1];
        if (last && item.start <= last.end) {
          last.end = Math.max(last.end, item.end);
          if (item.note && last.note.split("; ").indexOf(item.note) < 0) last.note = last.note ? last.note + "; " + item.note : item.note;
        } else {
          merged.push({ start: item.start, end: item.end, note: item.note || "" });
        }
      });
    assertionList.replaceChildren.apply(
      assertionList,
      merged.map(function (item) {
        const li = document.createElement("li");
        li.dataset.start = String(item.start);
        li.dataset.end = String(item.end);
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = "unsupported_item";
        input.value = itemValue(item);
        const quote = document.createElement("q");
        quote.textContent = Spans.slice(claimBox, item.start, item.end);
        const label = document.createElement("label");
        label.className = "assertion-note";
        const note = document.createElement("input");
        note.type = "text";
        note.className = "note-input";
        note.maxLength = 2000;
        note.placeholder = "e.g. source says 14 days";
        note.value = item.note;
        label.append("Note ", note);
        li.append(input, quote, " ", spanButton("Remove", "span-remove linkish"), label);
        return li;
      })
    );
    Spans.paint(
      claimBox,
      "un",
      merged.map(function (item) {
        return [item.start, item.end];
      })
    );
    updateSuggestions();
  }

  function addAssertion(span) {
    const items = assertionItems();
    items.push({ start: span[0], end: span[1], note: "" });
    setAssertions(items);
    schedule(SELECT_DELAY_MS);
    const added = Array.from(assertionList.children).find(function (item) {
      return Number(item.dataset.start) <= span[0] && span[1] <= Number(item.dataset.end);
    });
    return added ? added.querySelector(".note-input") : null;
  }

  // A suggestion already inside a marked span has nothing left to offer.
  function openSuggestions() {
    if (!suggestionBox) return [];
    const marked = assertionItems();
    return Array.from(suggestionBox.querySelectorAll("button.suggestion")).filter(function (button) {
      const span = spanOf(button);
      button.hidden = marked.some(function (item) {
        return item.start <= span[0] && span[1] <= item.end;
      });
      return !button.hidden && !button.disabled;
    });
  }
  function updateSuggestions() {
    if (suggestionBox) suggestionBox.hidden = openSuggestions().length === 0;
  }
  if (suggestionBox) {
    suggestionBox.addEventListener("click", function (event) {
      const button = event.target.closest("button.suggestion");
      if (!button || readOnly) return;
      addAssertion(spanOf(button));
      claimBox.focus();
    });
  }

  // ---- the selection: read from the page, added with the button or `a`
  const addButton = document.getElementById("add-selection");
  const selectionText = document.getElementById("selection-text");
  // Where the selection is: the claim, or a passage (box), with its offsets.
  function currentSelection() {
    const inClaim = Spans.selected(claimBox);
    if (inClaim) return { box: claimBox, claim: true, span: inClaim };
    for (let i = 0; i < passageBoxes.length; i += 1) {
      const span = Spans.selected(passageBoxes[i]);
      if (span) return { box: passageBoxes[i], claim: false, span: span };
    }
    return null;
  }

  function showSelection() {
    const found = readOnly ? null : currentSelection();
    addButton.disabled = !found;
    if (!found) {
      addButton.firstChild.textContent = "Add the selection ";
      selectionText.textContent = "";
      return;
    }
    const words = Spans.slice(found.box, found.span[0], found.span[1]);
    if (found.claim) addButton.firstChild.textContent = "Mark unsupported ";
    else if (trims(found.box, found.span)) addButton.firstChild.textContent = "Trim evidence to it ";
    else addButton.firstChild.textContent = "Add as evidence [" + found.box.dataset.passage + "] ";
    selectionText.textContent = "“" + (words.length > 80 ? words.slice(0, 79) + "…" : words) + "”";
  }
  document.addEventListener("selectionchange", showSelection);

  // Adds what is selected; a span of the claim then takes its note (Enter goes back).
  function addSelection() {
    const found = readOnly ? null : currentSelection();
    if (!found) return false;
    document.getSelection().removeAllRanges();
    if (found.claim) {
      const note = addAssertion(found.span);
      if (note) note.focus();
    } else {
      addEvidence(found.box, found.span);
    }
    showSelection();
    return true;
  }
  // Pressing the button must not clear the selection it acts on.
  addButton.addEventListener("mousedown", function (event) {
    event.preventDefault();
  });
  addButton.addEventListener("click", addSelection);

  // Dragging across a sentence selects words; it must not also tick the sentence.
  form.addEventListener(
    "click",
    function (event) {
      const label = event.target.closest ? event.target.closest("label.sent") : null;
      if (!label) return;
      const box = label.closest(".passage-text");
      if (event.detail > 1 || Spans.rawSelected(box)) {
        event.preventDefault();
        if (event.detail === 2) {
          // A double click selects a word: undo what its first click ticked.
          const input = label.querySelector("input");
          input.checked = !input.checked;
          input.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    },
    true
  );

  form.addEventListener("click", function (event) {
    const remove = event.target.closest ? event.target.closest("button.span-remove") : null;
    if (!remove || readOnly) return;
    const item = remove.closest("li");
    const span = spanOf(item);
    const parts = item.closest(".evidence-parts");
    if (parts) {
      const box = boxOf(parts.dataset.passage);
      setChosen(
        box,
        chosenIn(box).filter(function (c) {
          return c[0] !== span[0] || c[1] !== span[1];
        })
      );
    } else {
      setAssertions(
        assertionItems().filter(function (a) {
          return a.start !== span[0] || a.end !== span[1];
        })
      );
    }
    schedule(SELECT_DELAY_MS);
  });

  // Keyboard selection, word by word, on a focused sentence or the focused claim:
  // ←/→ move the start of the selection, Shift+←/→ its end.
  function keyboardBox(target) {
    if (target === claimBox) return { box: claimBox, from: 0 };
    if (target && target.classList && target.classList.contains("sent-toggle")) {
      const label = target.parentElement;
      return { box: label.closest(".passage-text"), from: Number(label.dataset.start) };
    }
    return null;
  }

  function moveSelection(place, key, shift) {
    const words = Spans.wordSpans(place.box);
    const now = Spans.rawSelected(place.box);
    if (!now) {
      const first = words.find(function (w) {
        return w[0] >= place.from;
      });
      if (first) Spans.select(place.box, first[0], first[1]);
      return;
    }
    let start = now[0];
    let end = now[1];
    if (shift && key === "ArrowRight") {
      const next = words.find(function (w) {
        return w[1] > end;
      });
      if (next) end = next[1];
    } else if (shift) {
      const before = words.filter(function (w) {
        return w[1] < end && w[1] > start;
      });
      if (before.length) end = before[before.length - 1][1];
    } else if (key === "ArrowRight") {
      const next = words.find(function (w) {
        return w[0] > start;
      });
      if (next) {
        start = next[0];
        end = Math.max(end, next[1]);
      }
    } else {
      const before = words.filter(function (w) {
        return w[0] < start;
      });
      if (before.length) start = before[before.length - 1][0];
    }
    Spans.select(place.box, start, end);
  }

  // ---- the desk: it fills the window below the banners, the claim is pinned at the top of
  // its column, and the first pre-marked sentence of a cited passage is scrolled into view
  // under it, so what decides is in view as the page opens.
  const mainColumn = form.querySelector(".review-main");
  const claimPanel = document.getElementById("claim-box");
  function fitDesk() {
    const top = form.getBoundingClientRect().top + window.scrollY;
    document.documentElement.style.setProperty("--desk-top", Math.round(top) + "px");
    if (claimPanel) mainColumn.style.scrollPaddingTop = claimPanel.offsetHeight + 12 + "px";
  }
  fitDesk();
  window.addEventListener("resize", fitDesk);
  const firstHint = mainColumn.querySelector(".review-passage:not(.not-cited) label.sent.hl, .review-passage:not(.not-cited) label.sent:has(> input:checked)");
  if (firstHint) {
    const column = mainColumn.getBoundingClientRect();
    const at = firstHint.getBoundingClientRect();
    // Centred when it has to move, so the sentences around it are read with it.
    if (at.top < column.top + (claimPanel ? claimPanel.offsetHeight : 0) || at.bottom > column.bottom) {
      firstHint.scrollIntoView({ block: "center" });
    }
  }

  // ---- judgment definitions: shown in full until the reviewer turns them off (kept for
  // the next claims); then on hover, on focus, and in the ? list.
  const definitions = document.getElementById("show-definitions");
  const judgmentBox = document.getElementById("judgments");
  if (definitions && judgmentBox) {
    const DEFINITIONS_KEY = "citeaudit.review.hideDefinitions";
    try {
      definitions.checked = window.localStorage.getItem(DEFINITIONS_KEY) !== "1";
    } catch (error) {
      // Storage may be off: they stay shown.
    }
    const showDefinitions = function () {
      judgmentBox.classList.toggle("definitions-off", !definitions.checked);
    };
    showDefinitions();
    definitions.addEventListener("change", function (event) {
      // A page setting, not part of the sheet: the autosave must not count it as an edit.
      event.stopPropagation();
      showDefinitions();
      try {
        window.localStorage.setItem(DEFINITIONS_KEY, definitions.checked ? "0" : "1");
      } catch (error) {
        // Nothing to remember it in.
      }
    });
  }

  // ---- suggestions: hidden per set when the reviewer says so (no marks, labels or
  // suggested judgment), remembered for the set's next claims.
  const suggestionBar = document.getElementById("suggestion-bar");
  const suggestionToggle = document.getElementById("toggle-suggestions");
  let suggestionsHidden = false;
  if (suggestionBar && suggestionToggle) {
    const HIDE_KEY = "citeaudit.review.hideSuggestions." + suggestionBar.dataset.set;
    const showSuggestionState = function () {
      form.classList.toggle("suggestions-off", suggestionsHidden);
      // The label says what a press does; a changing label with aria-pressed reads twice.
      suggestionToggle.textContent = suggestionsHidden ? "Show suggestions" : "Hide suggestions";
    };
    try {
      suggestionsHidden = window.localStorage.getItem(HIDE_KEY) === "1";
    } catch (error) {
      // Storage may be off: they stay shown.
    }
    showSuggestionState();
    suggestionToggle.addEventListener("click", function () {
      suggestionsHidden = !suggestionsHidden;
      showSuggestionState();
      try {
        window.localStorage.setItem(HIDE_KEY, suggestionsHidden ? "1" : "0");
      } catch (error) {
        // Nothing to remember it in.
      }
    });
  }
  // `e`: the suggested evidence sentences of the cited passages, as a reviewer's own choice.
  function acceptSuggestedEvidence() {
    if (suggestionsHidden || readOnly) return false;
    let found = false;
    // A pushed source's spans exactly as it marked them: a whole sentence ticks that
    // sentence, a part of one (or a run across two) is added as a part, as a selection is.
    form.querySelectorAll(".review-passage .passage-text[data-suggested]").forEach(function (box) {
      box.dataset.suggested.split(" ").forEach(function (pair) {
        const span = pair.split("-").map(Number);
        if (span.length !== 2 || !(span[0] < span[1])) return;
        found = true;
        const label = box.querySelector('label.sent[data-start="' + span[0] + '"][data-end="' + span[1] + '"]');
        const input = label ? label.querySelector("input.sent-toggle") : null;
        if (input) {
          if (!input.checked && !input.disabled) input.click();
        } else if (!chosenIn(box).some(function (c) { return c[0] <= span[0] && span[1] <= c[1]; })) {
          addEvidence(box, span);
        }
      });
    });
    if (found) return true;
    // The matcher's marks are whole sentences.
    const marked = form.querySelectorAll(".review-passage label.sent.hl > input.sent-toggle");
    marked.forEach(function (box) {
      if (!box.checked && !box.disabled) box.click();
    });
    return marked.length > 0;
  }
  // `g`: the suggested judgment, where the set shows one.
  function acceptSuggestedJudgment() {
    const line = document.getElementById("suggested-judgment");
    if (!line || suggestionsHidden || readOnly) return false;
    const radio = form.querySelector('input[name=judgment][value="' + line.dataset.judgment + '"]');
    if (!radio || radio.disabled) return false;
    radio.click();
    return true;
  }

  // ---- Skip… and Flag… in the bar open their box below it and put the cursor in it.
  form.querySelectorAll("button[data-open]").forEach(function (button) {
    button.addEventListener("click", function () {
      const box = document.getElementById(button.dataset.open);
      if (!box) return;
      box.open = true;
      const field = box.querySelector("textarea");
      box.scrollIntoView({ block: "nearest" });
      if (field) field.focus();
    });
  });

  // ---- keyboard
  function typingIn(element) {
    if (!element || element === document.body) return false;
    if (element.isContentEditable) return true;
    const tag = element.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag !== "INPUT") return false;
    return ["checkbox", "radio", "button", "submit", "reset", "hidden"].indexOf(element.type) < 0;
  }

  function toggleShortcuts() {
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }
  document.getElementById("show-shortcuts").addEventListener("click", toggleShortcuts);

  const radios = Array.from(form.querySelectorAll("input[name=judgment]"));
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    // Enter on a focused sentence or judgment would submit the form through its first
    // button, Submit: only Submit itself (or `s`) submits.
    if (event.key === "Enter" && target.form === form && (target.type === "checkbox" || target.type === "radio")) {
      event.preventDefault();
      return;
    }
    // A note is one line: Enter or Escape ends it and goes back to the claim, never submits.
    if ((event.key === "Enter" || event.key === "Escape") && target.classList && target.classList.contains("note-input")) {
      event.preventDefault();
      claimBox.focus();
      return;
    }
    if (typingIn(target)) return;
    if (dialog.open) {
      if (event.key === "?") {
        event.preventDefault();
        dialog.close();
      }
      return;
    }
    const onSentence = target && target.classList && target.classList.contains("sent-toggle");
    const onNothing = !target || target === document.body || target === document.documentElement;
    const key = event.key;
    const place = keyboardBox(target);
    if ((key === "ArrowRight" || key === "ArrowLeft") && place && !readOnly) {
      event.preventDefault();
      moveSelection(place, key, event.shiftKey);
      return;
    }
    if (key === "a") {
      if (addSelection()) event.preventDefault();
      return;
    }
    if (key === "e") {
      if (acceptSuggestedEvidence()) event.preventDefault();
      return;
    }
    if (key === "g") {
      if (acceptSuggestedJudgment()) event.preventDefault();
      return;
    }
    if (key === "u") {
      const open = suggestionsHidden ? [] : openSuggestions();
      if (open.length && !readOnly) {
        event.preventDefault();
        addAssertion(spanOf(open[0]));
        claimBox.focus();
      }
      return;
    }
    if (key === "c") {
      event.preventDefault();
      claimBox.focus();
      return;
    }
    if (key === "Escape" && !document.getSelection().isCollapsed) {
      document.getSelection().removeAllRanges();
      return;
    }
    if (key >= "1" && key <= "7") {
      const radio = radios[Number(key) - 1];
      if (radio && !radio.disabled) {
        event.preventDefault();
        radio.click();
      }
    } else if (key === "j" || key === "k") {
      event.preventDefault();
      moveSentence(key === "j" ? 1 : -1);
    } else if ((key === "ArrowDown" || key === "ArrowUp") && (onSentence || onNothing)) {
      event.preventDefault();
      moveSentence(key === "ArrowDown" ? 1 : -1);
    } else if (key === "n") {
      const next = document.getElementById("next-claim");
      if (next) {
        event.preventDefault();
        whenSaved(function () {
          window.location.assign(next.href);
        });
      }
    } else if (key === "s") {
      const submit = document.getElementById("submit-sheet");
      if (submit && !submit.disabled) {
        event.preventDefault();
        form.requestSubmit(submit);
      }
    } else if (key === "?") {
      event.preventDefault();
      toggleShortcuts();
    }
  });

  const nextLink = document.getElementById("next-claim");
  if (nextLink) {
    nextLink.addEventListener("click", function (event) {
      if (readOnly || (!dirty() && !inflight && !timer && !replay)) return;
      event.preventDefault();
      whenSaved(function () {
        window.location.assign(nextLink.href);
      });
    });
  }

  // ---- changes the previous page of this tab left on leaving (a reload): show them and
  // save them again, on the version they were made on.
  const pending = takePending();
  const confirmed = takeConfirmed();
  if (pending && !readOnly && !stale) {
    restore(pending.fields);
    replay = { version: pending.version, seq: pending.seq, fields: pending.fields };
    changes += 1;
    say("Saving your last changes…", "pending");
    save();
  } else if (confirmed !== null && confirmed > Number(pageVersion())) {
    // A reload sent while a save was on its way can be read before that save is written,
    // and the save's answer can still reach the page being left, which then leaves no
    // copy (nothing was unsaved). This page shows the sheet as it was before that save,
    // and saving from it would put the older fields back: load it again, now that the
    // save is written.
    window.location.reload();
  }
})();

/* =================================================================== adjudication page ==
 * Counts the sentences in gold as the lead ticks them, and remembers whether the matcher's
 * highlights were shown. The page works without it: the toggle itself is plain CSS.
 */
(function () {
  const form = document.getElementById("adjudication-form");
  if (!form) return;

  const count = document.getElementById("gold-count");
  function updateCount() {
    const n = form.querySelectorAll("input[name=evidence]:checked").length;
    count.textContent = n + " in gold";
  }
  form.addEventListener("change", function (event) {
    if (event.target.name === "evidence") updateCount();
  });

  // Words selected in a passage or in the claim become a ticked choice of gold, beside the
  // sheets' own: the server merges what overlaps.
  const claimBox = document.getElementById("claim-statement");
  const passageBoxes = Array.from(form.querySelectorAll(".adj-passage .passage-text[data-passage]"));
  const addButton = document.getElementById("add-selection");
  const selectionText = document.getElementById("selection-text");
  const parts = document.getElementById("gold-parts");
  const unsupported = document.getElementById("gold-unsupported");

  function currentSelection() {
    const inClaim = claimBox ? Spans.selected(claimBox) : null;
    if (inClaim) return { box: claimBox, claim: true, span: inClaim };
    for (let i = 0; i < passageBoxes.length; i += 1) {
      const span = Spans.selected(passageBoxes[i]);
      if (span) return { box: passageBoxes[i], claim: false, span: span };
    }
    return null;
  }

  function showSelection() {
    const found = currentSelection();
    addButton.disabled = !found;
    selectionText.textContent = found ? "“" + Spans.slice(found.box, found.span[0], found.span[1]) + "”" : "";
  }
  document.addEventListener("selectionchange", showSelection);

  function choice(name, value, text, where) {
    const label = document.createElement("label");
    label.className = "check";
    const input = document.createElement("input");
    input.type = "checkbox";
    input.name = name;
    input.value = value;
    input.checked = true;
    const quote = document.createElement("q");
    quote.textContent = text;
    label.append(input, " " + where + " ", quote);
    return label;
  }

  function addSelection() {
    const found = currentSelection();
    if (!found) return false;
    const text = Spans.slice(found.box, found.span[0], found.span[1]);
    if (found.claim) {
      const value = JSON.stringify({ start: found.span[0], end: found.span[1], text: text, note: "" });
      unsupported.insertBefore(choice("unsupported_item", value, text, "yours"), unsupported.querySelector("label[for=id_unsupported_assertions]"));
    } else {
      const position = found.box.dataset.passage;
      parts.hidden = false;
      parts.append(choice("evidence", position + ":" + found.span[0] + ":" + found.span[1], text, "yours [" + position + "]"));
      updateCount();
    }
    document.getSelection().removeAllRanges();
    return true;
  }
  addButton.addEventListener("mousedown", function (event) {
    event.preventDefault();
  });
  addButton.addEventListener("click", addSelection);
  document.addEventListener("keydown", function (event) {
    const t = event.target;
    if (event.key !== "a" || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (t && (t.isContentEditable || ["TEXTAREA", "SELECT"].indexOf(t.tagName) >= 0 || (t.tagName === "INPUT" && ["checkbox", "radio", "button", "submit"].indexOf(t.type) < 0))) return;
    if (addSelection()) event.preventDefault();
  });

  // Dragging across a sentence selects words; it must not also tick the sentence.
  form.addEventListener(
    "click",
    function (event) {
      const label = event.target.closest ? event.target.closest("label.gold-sent") : null;
      if (!label) return;
      const box = label.closest(".passage-text");
      if (event.detail > 1 || Spans.rawSelected(box)) {
        event.preventDefault();
        if (event.detail === 2) {
          // A double click selects a word: undo what its first click ticked.
          const input = label.querySelector("input");
          input.checked = !input.checked;
          updateCount();
        }
      }
    },
    true
  );

  // ---- the keyboard: the same keys as the review page where the action is the same.
  const dialog = document.getElementById("shortcuts");
  const showShortcuts = document.getElementById("show-shortcuts");
  function toggleShortcuts() {
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }
  if (showShortcuts) showShortcuts.addEventListener("click", toggleShortcuts);
  const radios = Array.from(form.querySelectorAll("input[name=judgment]"));
  function typingIn(element) {
    if (!element) return false;
    if (element.isContentEditable || element.tagName === "TEXTAREA" || element.tagName === "SELECT") return true;
    return element.tagName === "INPUT" && ["checkbox", "radio", "button", "submit", "reset", "hidden"].indexOf(element.type) < 0;
  }
  function sentences() {
    // Only those on screen: the other passages' sentences count once their box is open.
    return Array.from(form.querySelectorAll("label.gold-sent input[name=evidence]")).filter(function (input) {
      return input.offsetParent !== null;
    });
  }
  function moveSentence(step) {
    const all = sentences();
    if (!all.length) return;
    const at = all.indexOf(document.activeElement);
    const next = all[at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step))];
    next.focus();
    next.closest("label").scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    // Enter on a ticked sentence or a judgment would submit through the form's first
    // button, a sheet's "Take": only a button itself (or its key) saves gold.
    if (event.key === "Enter" && target.form === form && (target.type === "checkbox" || target.type === "radio")) {
      event.preventDefault();
      return;
    }
    if (typingIn(target)) return;
    const key = event.key;
    if (dialog && dialog.open) {
      if (key === "?") {
        event.preventDefault();
        dialog.close();
      }
      return;
    }
    if (key >= "1" && key <= "7") {
      const radio = radios[Number(key) - 1];
      if (radio && !radio.disabled) {
        event.preventDefault();
        radio.click();
        radio.focus();
      }
    } else if (key === "j" || key === "k") {
      event.preventDefault();
      moveSentence(key === "j" ? 1 : -1);
    } else if (key === "h") {
      event.preventDefault();
      toggle.click();
    } else if (key === "s") {
      const save = document.getElementById("save-merged");
      if (save) {
        event.preventDefault();
        form.requestSubmit(save);
      }
    } else if (event.shiftKey && key.length === 1 && key >= "A" && key <= "Z") {
      const take = form.querySelector('button[data-take="' + key + '"]');
      if (take) {
        event.preventDefault();
        form.requestSubmit(take);
      }
    } else if (key === "?") {
      event.preventDefault();
      toggleShortcuts();
    }
  });

  const toggle = document.getElementById("show-hints");
  const KEY = "citeaudit.adjudication.showHints";
  try {
    toggle.checked = window.localStorage.getItem(KEY) === "1";
  } catch (error) {
    // Storage may be off; the toggle still works for this page.
  }
  toggle.addEventListener("change", function () {
    try {
      window.localStorage.setItem(KEY, toggle.checked ? "1" : "0");
    } catch (error) {
      // Nothing to remember it in.
    }
  });
})();

/* ============================================================ the next claim, held ahead ==
 * A form with data-next-url (a reviewer's sheet, a lead's adjudication) fetches the page of
 * the claim that follows while this one is worked on. Its saving buttons (data-held-submit)
 * post in the background, and when the server confirms that the claim that follows is the
 * one held, that page is shown at once, in place, instead of loaded only then. Anything else
 * the server answers (what stopped the save, a queue that changed meanwhile) is shown as the
 * plain form post would have shown it. A save whose answer never arrives is said so; sent
 * again, the server knows it for the same save and does not make it twice.
 */
(function () {
  const form = document.querySelector("form[data-next-url]");
  if (!form || !form.dataset.nextUrl || !window.fetch || !window.DOMParser) return;
  const HOLD_MS = 120000; // older than this, the held page may be out of date: fetch again
  const nextUrl = form.dataset.nextUrl;
  const pagePath = window.location.pathname;
  let heldPage = null;
  let heldAt = 0;
  let posting = false;

  function held() {
    return heldPage !== null && Date.now() - heldAt < HOLD_MS;
  }

  function hold() {
    // A redirect (to the login form, once the session has ended) is not held, and not
    // followed: loading the login form starts an anonymous session whose cookie would replace
    // the one a login in another tab has just set.
    fetch(nextUrl, {
      credentials: "same-origin",
      redirect: "manual",
      headers: { "X-Citeaudit-Prefetch": "1" },
    })
      .then(function (response) {
        const type = response.headers.get("Content-Type") || "";
        return response.ok && type.indexOf("text/html") === 0 ? response.text() : null;
      })
      .then(function (html) {
        if (html === null) return;
        heldPage = html;
        heldAt = Date.now();
      })
      .catch(function () {
        // Not held: the save loads the next claim as a plain post does.
      });
  }
  window.setTimeout(hold, 300);
  const refresh = window.setInterval(hold, HOLD_MS - 20000);

  function say(text) {
    const box = document.getElementById("save-status") || document.getElementById("held-status");
    if (!box) return;
    const message = box.querySelector(".save-message") || box;
    message.textContent = text;
    box.dataset.state = "error";
  }

  function show(url, html, message) {
    window.dispatchEvent(new Event("citeaudit:replaced"));
    window.clearInterval(refresh);
    const page = new DOMParser().parseFromString(html, "text/html");
    if (message) {
      const list = page.createElement("ul");
      list.className = "messages";
      const item = page.createElement("li");
      item.className = "success";
      item.textContent = message;
      list.appendChild(item);
      const main = page.querySelector("main");
      if (main) main.insertBefore(list, main.firstChild);
    }
    if (url !== window.location.href) window.history.pushState(null, "", url);
    document.open();
    document.write("<!doctype html>" + page.documentElement.outerHTML);
    document.close();
  }

  function post(button) {
    posting = true;
    // A button's formAction is the page's own address when it names none: the form's then.
    fetch(button.hasAttribute("formaction") ? button.formAction : form.action, {
      method: "POST",
      body: new FormData(form, button),
      credentials: "same-origin",
      headers: { "X-Citeaudit-Swap": "1", "X-Citeaudit-Prefetched": nextUrl },
    })
      .then(function (response) {
        const type = response.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") === 0) {
          return response.json().then(function (answer) {
            if (answer.swap && heldPage !== null) show(answer.next, heldPage, answer.message);
            else window.location.assign(answer.next);
          });
        }
        // A page: this claim again with what stopped the save (its address stays the
        // claim's), or the page a redirect led to.
        return response.text().then(function (html) {
          show(response.redirected ? response.url : window.location.href, html, null);
        });
      })
      .catch(function () {
        posting = false;
        say("Not saved: the connection dropped. Press the key again (a save that did arrive is not made twice).");
      });
  }

  // After the page's own listeners: one that waits for a draft save first cancels this
  // submit and sends it again once saved.
  form.addEventListener("submit", function (event) {
    const button = event.submitter;
    if (event.defaultPrevented || !button || !button.hasAttribute("data-held-submit")) return;
    if (!held() && !posting) return; // nothing held: the plain post
    event.preventDefault();
    if (!posting) post(button);
  });

  // Back from a claim shown in place of the one before: the address changed but the page
  // did not, so load the page the address names.
  window.addEventListener("popstate", function () {
    if (window.location.pathname !== pagePath) window.location.reload();
  });
})();

// Every part above has run: tests (and a page shown in place of another) can tell a page
// whose keys and saving work from one still being read.
document.documentElement.dataset.scripts = "ready";
