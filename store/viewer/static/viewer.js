// transcript-store viewer: load a folded text when its <details> is opened.
// The text is fetched from this origin and set with textContent: it is never parsed as HTML.
"use strict";
document.addEventListener("toggle", function (event) {
  var details = event.target;
  if (!(details instanceof HTMLDetailsElement) || !details.open) return;
  var src = details.getAttribute("data-src");
  if (!src || details.hasAttribute("data-loaded")) return;
  var target = details.querySelector("pre.full");
  if (!target) return;
  details.setAttribute("data-loaded", "loading");
  target.textContent = "loading…";
  fetch(src, { credentials: "same-origin", headers: { Accept: "text/plain" } })
    .then(function (response) {
      if (!response.ok) throw new Error(response.status + " " + response.statusText);
      return response.text();
    })
    .then(function (text) {
      target.textContent = text;
      details.setAttribute("data-loaded", "yes");
      var fold = details.closest(".fold");
      if (fold) fold.classList.add("opened");
    })
    .catch(function (error) {
      target.textContent = "could not load the text: " + error.message;
      details.removeAttribute("data-loaded");
    });
}, true);

// Live updates: the page's activity stamp (body[data-live]) is compared with /live every few
// seconds. When the store changed, the session list reloads (unless the reader is typing or
// has scrolled down), a session reloads when the reader is at its end, and any other page
// offers a reload.
(function () {
  var body = document.body;
  var stamp = body.getAttribute("data-live");
  if (!stamp) return;
  var session = body.getAttribute("data-live-session");
  var src = "/live" + (session ? "?session=" + encodeURIComponent(session) : "");
  var note = document.getElementById("live-note");
  var button = document.getElementById("live-reload");
  if (button) button.addEventListener("click", function () { location.reload(); });
  function typing() {
    var el = document.activeElement;
    return el && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName);
  }
  function atEnd() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  }
  function changed() {
    var auto = session ? atEnd() && !document.querySelector("a[rel=next]")
                       : location.pathname === "/sessions" && window.scrollY < 40;
    if (auto && !typing()) { location.reload(); return; }
    if (note) note.hidden = false;
  }
  function poll() {
    if (document.visibilityState !== "visible") return;
    fetch(src, { credentials: "same-origin", headers: { Accept: "text/plain" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (now) { if (now && now !== stamp) { stamp = now; changed(); } })
      .catch(function () { /* the server is away: try again later */ });
  }
  var every = parseInt(body.getAttribute("data-live-every") || "3000", 10);
  window.setInterval(poll, every);
})();

// Keyboard: j / k move through the rows of a list or the messages of a transcript, Enter
// opens the row's first link, / goes to the search box, Escape leaves it.
(function () {
  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(
      ".nav-list > tbody > tr, .nav-list > article.msg"));
  }
  function move(step) {
    var list = items();
    if (!list.length) return;
    var at = list.findIndex(function (el) { return el.classList.contains("kb-current"); });
    var next = at < 0 ? (step > 0 ? 0 : list.length - 1)
                      : Math.min(list.length - 1, Math.max(0, at + step));
    if (at >= 0) list[at].classList.remove("kb-current");
    list[next].classList.add("kb-current");
    list[next].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var field = target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
    if (field) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.key === "j") { move(1); event.preventDefault(); }
    else if (event.key === "k") { move(-1); event.preventDefault(); }
    else if (event.key === "/") {
      var box = document.getElementById("quick-search");
      if (box) { box.focus(); event.preventDefault(); }
    } else if (event.key === "Enter") {
      var current = document.querySelector(".kb-current");
      var link = current && current.querySelector("a[href]");
      if (link) { link.click(); event.preventDefault(); }
    }
  });
})();
