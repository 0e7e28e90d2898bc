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
