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
const PAGE_NUMBER = (Number(tabStored("citeaudit.page")) || 0) + 1;
tabStore("citeaudit.page", String(PAGE_NUMBER));

// Unsaved changes left on leaving a review page are only for a reload of that page: any
// other page drops them, so they never linger in the tab.
if (!document.getElementById("sheet-form")) tabStore("citeaudit.pending", null);

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

  const SELECT_DELAY_MS = 600; // after a click or key: quick
  const TYPING_DELAY_MS = 1200; // after typing: wait for a pause
  const IDLE_AFTER_MS = 60000; // no input for this long: the reviewer is not working
  const HEARTBEAT_MS = 60000; // send counted seconds even when nothing else changes
  const MAX_RETRY_MS = 60000;
  const PENDING_KEY = "citeaudit.pending";

  const saveUrl = form.dataset.saveUrl;
  const readOnly = form.dataset.status === "submitted";
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
  if ("BroadcastChannel" in window) {
    const tabs = new window.BroadcastChannel("citeaudit.tabs");
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

  function refreshCsrf() {
    return fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) {
        return response.text();
      })
      .then(function (html) {
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
    } else if (status >= 200 && status < 300) {
      retryLater("Not saved: unexpected answer from the server.");
    } else {
      retryLater("Not saved: the server answered " + (status || "with a redirect") + ".");
    }
  }

  function retryLater(reason) {
    retryMs = retryMs ? Math.min(retryMs * 2, MAX_RETRY_MS) : 2000;
    say(reason + " Retrying in " + Math.round(retryMs / 1000) + " s; your changes stay on this page.", "error");
    clearTimeout(retryTimer);
    retryTimer = setTimeout(function () {
      retryTimer = null;
      if (!csrfStale) return save();
      csrfStale = false;
      refreshCsrf().then(save);
    }, retryMs);
  }

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
    if (event.target.hasAttribute("data-no-autosave")) return;
    if (event.target.classList.contains("sent-toggle")) updateEvidenceCount();
    schedule(SELECT_DELAY_MS);
  });
  form.addEventListener("input", function (event) {
    const t = event.target;
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
  }

  function takePending() {
    const raw = tabStored(PENDING_KEY);
    if (raw === null) return null;
    tabStore(PENDING_KEY, null);
    try {
      const pending = JSON.parse(raw);
      return pending.url === saveUrl && pending.page === PAGE_NUMBER - 1 ? pending : null;
    } catch (error) {
      return null;
    }
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
  setInterval(function () {
    if (readOnly) return;
    if (document.visibilityState === "visible" && Date.now() - lastInput < IDLE_AFTER_MS) {
      activeSeconds += 1;
    }
  }, 1000);
  setInterval(function () {
    if (activeSeconds >= 30 && stored && !inflight && !timer && !retryTimer && !stale && !readOnly) save();
  }, HEARTBEAT_MS);

  // ---- evidence sentences
  const countBox = document.getElementById("evidence-count");
  function updateEvidenceCount() {
    const n = form.querySelectorAll("input.sent-toggle:checked").length;
    countBox.textContent = n + " evidence sentence" + (n === 1 ? "" : "s") + " selected";
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

  // ---- unsupported assertions from words selected in the claim
  const claimText = document.getElementById("claim-statement");
  const addButton = document.getElementById("add-selection");
  const assertions = document.getElementById("id_unsupported_assertions");
  let selectedWords = "";
  document.addEventListener("selectionchange", function () {
    const selection = document.getSelection();
    const inside =
      selection && !selection.isCollapsed && claimText.contains(selection.anchorNode) && claimText.contains(selection.focusNode);
    const words = inside ? selection.toString().trim() : "";
    if (words) selectedWords = words;
    if (!readOnly) addButton.disabled = !selectedWords;
  });
  addButton.addEventListener("click", function () {
    if (!selectedWords) return;
    const lines = assertions.value.split("\n").map(function (l) {
      return l.trim();
    });
    if (lines.indexOf(selectedWords) < 0) {
      assertions.value = (assertions.value.trim() ? assertions.value.replace(/\s+$/, "") + "\n" : "") + selectedWords;
      schedule(SELECT_DELAY_MS);
    }
    selectedWords = "";
    addButton.disabled = true;
  });

  // ---- keep the claim in view inside the answer box
  const answerBox = document.getElementById("review-answer");
  const current = document.getElementById("current-claim");
  if (answerBox && current && answerBox.scrollHeight > answerBox.clientHeight) {
    answerBox.scrollTop = Math.max(0, current.offsetTop - answerBox.offsetTop - answerBox.clientHeight / 3);
  }

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
  if (pending && !readOnly && !stale) {
    restore(pending.fields);
    updateEvidenceCount();
    replay = { version: pending.version, seq: pending.seq, fields: pending.fields };
    changes += 1;
    say("Saving your last changes…", "pending");
    save();
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
