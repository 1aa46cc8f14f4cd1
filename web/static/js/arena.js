// Domino Arena: live parts of pages poll only while the tab is visible (htmx does the rest).
// No inline script anywhere: the Content-Security-Policy forbids it.
"use strict";

document.addEventListener("htmx:beforeRequest", (event) => {
  const element = event.detail.elt;
  if (document.hidden && element.hasAttribute("data-live")) {
    event.preventDefault(); // a hidden tab skips this poll; the next visible one catches up
  }
});

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && window.htmx) {
    document.querySelectorAll("[data-live]").forEach((element) => {
      window.htmx.trigger(element, "refresh");
    });
  }
});
