// Citeaudit's own script: keyboard shortcuts and review helpers (no inline scripts: CSP).
"use strict";

/* ======================================================================== review page ==
 * Autosave with version check and retry, active-time counting, evidence toggles, keyboard
 * shortcuts. Everything here has a no-JavaScript fallback in the markup (plain form posts).
 */
(function () {
  const form = document.getElementById("sheet-form");
  if (!form) return;

  const SELECT_DELAY_MS = 600; // after a click or key: quick, so a reload right after is safe
  const TYPING_DELAY_MS = 1200; // after typing: wait for a pause
  const IDLE_AFTER_MS = 60000; // no input for this long: the reviewer is not working
  const HEARTBEAT_MS = 60000; // send counted seconds even when nothing else changes
  const MAX_RETRY_MS = 60000;

  const readOnly = form.dataset.status === "submitted";
  const activeInput = document.getElementById("active-seconds");
  const dialog = document.getElementById("shortcuts");
  let stale = form.dataset.stale === "1";
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

  function schedule(delay) {
    if (readOnly || stale) return;
    changes += 1;
    clearTimeout(timer);
    timer = setTimeout(save, delay);
    if (!retryTimer) say("Unsaved changes…", "pending");
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
    activeInput.value = String(sentSeconds);
    htmx.trigger(form, "autosave");
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
    if (readOnly || (!dirty() && !inflight && !timer)) {
      then();
      return;
    }
    afterSave = then;
    if (!inflight) save();
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
  form.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt === form) inflight = true;
  });
  form.addEventListener("htmx:beforeSwap", function (event) {
    // Fired on the swap target, not on the form that sent the save.
    if (!event.detail.target || event.detail.target.id !== "save-status") return;
    const status = event.detail.xhr.status;
    if (status === 409 || status === 400) {
      // The server explains itself in the status partial: show it, do not retry.
      event.detail.shouldSwap = true;
      event.detail.isError = false;
      if (status === 409) stale = true;
    }
  });
  form.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== form) return;
    inflight = false;
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status >= 200 && status < 300) {
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
    } else if (status === 409 || status === 400) {
      afterSave = null;
    }
  });
  form.addEventListener("htmx:responseError", function (event) {
    if (event.detail.elt !== form) return;
    const status = event.detail.xhr.status;
    if (status === 409 || status === 400) return;
    if (status === 401 || status === 403) {
      csrfStale = true;
      retryLater("Not saved: your session has ended. Log in again in another tab.");
    } else {
      retryLater("Not saved: the server answered " + status + ".");
    }
  });
  form.addEventListener("htmx:sendError", function (event) {
    if (event.detail.elt !== form) return;
    inflight = false;
    retryLater("Not saved: no connection.");
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

  // Submitting and "Save draft" post the whole form; wait for a save already on its way so
  // the version they carry is current.
  form.addEventListener("submit", function (event) {
    const button = event.submitter;
    if (button && button.hasAttribute("hx-post")) return; // htmx handles it (flag)
    if (inflight) {
      event.preventDefault();
      clearTimeout(timer);
      timer = null;
      afterSave = function () {
        form.requestSubmit(button || undefined);
      };
      return;
    }
    clearTimeout(timer);
    clearTimeout(retryTimer);
    timer = null;
    activeInput.value = String(activeSeconds);
    freshenCsrf();
    savedChanges = changes; // the full post carries everything: no leave-page warning
  });

  window.addEventListener("beforeunload", function (event) {
    if (!readOnly && !stale && (dirty() || inflight)) {
      save();
      event.preventDefault();
    }
  });

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
    if (activeSeconds >= 30 && !inflight && !timer && !retryTimer && !stale && !readOnly) save();
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
      if (readOnly || (!dirty() && !inflight && !timer)) return;
      event.preventDefault();
      whenSaved(function () {
        window.location.assign(nextLink.href);
      });
    });
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
