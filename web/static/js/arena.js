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

const dateFormat = new Intl.DateTimeFormat(undefined, {
  month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
});

function dateLabels(u, splits) {
  return splits.map((seconds) => dateFormat.format(new Date(seconds * 1000)));
}

function widenToAnHour(u, low, high) {
  const hour = 3600;
  if (high - low >= hour) {
    return [low, high];
  }
  const middle = (low + high) / 2;
  return [middle - hour / 2, middle + hour / 2];
}

// Rating history charts (uPlot): one per rule set on a bot page. The data come from the
// element's data-chart attribute (JSON, written by the server): times (seconds), ratings,
// interval bounds, and the times new versions arrived (drawn as dashed vertical lines).
function drawRatingCharts() {
  if (!window.uPlot) {
    return;
  }
  document.querySelectorAll(".rating-chart[data-chart]").forEach((element) => {
    if (element.uplot) {
      return;
    }
    const chart = JSON.parse(element.getAttribute("data-chart"));
    const versionTimes = chart.versions.map((v) => v[0]);
    const options = {
      width: Math.max(280, Math.min(760, element.clientWidth || 640)),
      height: 220,
      title: chart.rules,
      // at least an hour wide, so that ratings seconds apart get dates, not ":53.800"
      scales: { x: { time: true, range: widenToAnHour } },
      axes: [{ values: dateLabels, space: 70 }, { label: "Elo" }],
      // the legend names the lines (values under the cursor read "--" off the points)
      legend: { live: false },
      series: [
        { label: "date" },
        { label: "rating", stroke: "#1f5fa8", width: 2, points: { show: true, size: 6 } },
        { label: "95% low", stroke: "#9ab6d8", dash: [4, 3] },
        { label: "95% high", stroke: "#9ab6d8", dash: [4, 3] },
      ],
      bands: [{ series: [3, 2], fill: "rgba(31, 95, 168, 0.12)" }],
      hooks: {
        draw: [
          (u) => {
            const context = u.ctx;
            context.save();
            context.strokeStyle = "#5b6470";
            context.setLineDash([5, 4]);
            context.lineWidth = 1;
            versionTimes.forEach((time) => {
              const x = Math.round(u.valToPos(time, "x", true));
              context.beginPath();
              context.moveTo(x, u.bbox.top);
              context.lineTo(x, u.bbox.top + u.bbox.height);
              context.stroke();
            });
            context.restore();
          },
        ],
      },
    };
    const data = [chart.times, chart.ratings, chart.lows, chart.highs];
    element.uplot = new window.uPlot(options, data, element);
  });
}

document.addEventListener("DOMContentLoaded", drawRatingCharts);

// "Copy" buttons (data-copy: the id of the element whose text they copy); hidden without
// JavaScript or a clipboard, where the text can still be selected by hand.
function enableCopyButtons() {
  if (!navigator.clipboard) {
    return;
  }
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    button.hidden = false;
    if (button.dataset.ready) {
      return;
    }
    button.dataset.ready = "1";
    button.addEventListener("click", () => {
      const source = document.getElementById(button.dataset.copy);
      if (source) {
        navigator.clipboard.writeText(source.textContent).then(() => {
          button.textContent = "Copied";
        });
      }
    });
  });
}
document.addEventListener("DOMContentLoaded", enableCopyButtons);
document.addEventListener("htmx:afterSwap", enableCopyButtons);

// Forms that undo something (cancel a tournament) ask first: data-confirm holds the question.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

// A file input with data-max-bytes refuses a larger file at once, in the browser: the
// form is kept (the server would answer 413 and the form would be lost).
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.dataset.maxBytes || !input.files) {
    return;
  }
  const limit = Number(input.dataset.maxBytes);
  const file = input.files[0];
  if (file && file.size > limit) {
    input.setCustomValidity(
      `${file.name} is ${Math.ceil(file.size / 1024)} KiB: at most ${Math.floor(limit / 1024)} KiB.`
    );
    input.reportValidity();
  } else {
    input.setCustomValidity("");
  }
});

// Countdowns (a competition's opening and deadline): <time data-countdown datetime=ISO>
// holds the server's "2 d 03:04:05" (then its data-suffix, " left", until it passes: never
// "passed left"); here it ticks every second. When one passes, the
// page's live part is asked at once (the competition's status has changed), or the whole
// page reloaded where the countdown says data-reload (an opening: the entry form appears).
function countdownText(milliseconds) {
  if (milliseconds <= 0) {
    return "passed";
  }
  const total = Math.floor(milliseconds / 1000);
  const days = Math.floor(total / 86400);
  const rest = total % 86400;
  const two = (n) => String(n).padStart(2, "0");
  const clock = `${two(Math.floor(rest / 3600))}:${two(Math.floor((rest % 3600) / 60))}:${two(rest % 60)}`;
  return days ? `${days} d ${clock}` : clock;
}

function tickCountdowns() {
  document.querySelectorAll("time[data-countdown]").forEach((element) => {
    const left = Date.parse(element.getAttribute("datetime")) - Date.now();
    if (Number.isNaN(left)) {
      return;
    }
    element.textContent = countdownText(left) + (left > 0 ? element.dataset.suffix || "" : "");
    const first = !element.dataset.ticked;
    element.dataset.ticked = "1";
    if (left <= 0 && !element.dataset.passed) {
      element.dataset.passed = "1";
      if (!first && element.hasAttribute("data-reload")) {
        window.location.reload(); // e.g. entries open: the page gains its entry form
      } else if (!first && window.htmx) { // it passed while the page was open
        document.querySelectorAll("[data-live]").forEach((live) => window.htmx.trigger(live, "refresh"));
      }
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  if (document.querySelector("time[data-countdown]")) {
    tickCountdowns();
    window.setInterval(tickCountdowns, 1000);
  }
});

// A time zone select (data-browser-zone) left on its default takes the browser's zone.
document.addEventListener("DOMContentLoaded", () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  document.querySelectorAll("select[data-browser-zone]").forEach((select) => {
    if (!select.value && zone && select.querySelector(`option[value="${CSS.escape(zone)}"]`)) {
      select.value = zone;
    }
  });
});

// "Print" buttons (data-print): hidden without JavaScript (the browser's menu prints too).
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("button[data-print]").forEach((button) => {
    button.hidden = false;
    button.addEventListener("click", () => window.print());
  });
});

// Password forms (data-patient: what the form does, e.g. "Joining"). The server checks
// passwords a few at a time, the others waiting in line (arena.service.passwords): while the
// post waits, the page says so. When the line was full, the server answers 503 with the form
// again (data-retry-after: its Retry-After): the form is filled in again from what was typed
// (kept in this tab's sessionStorage from the press until the next page, then removed) and
// posted again by itself after the wait, the page saying so. One press is enough.
const PATIENT_KEY = "arena.patient";

function sayPatience(form, text) {
  const status = form.querySelector(".patience");
  if (status) {
    status.hidden = false;
    status.textContent = text;
  }
}

function waitRetryAfter(form, seconds) {
  return new Promise((resolve) => {
    let left = seconds;
    const tick = () => {
      if (left <= 0) {
        resolve();
        return;
      }
      sayPatience(form, "Many passwords are being checked at once and the line is full: " +
        `trying again by itself in ${left} s. No need to press again.`);
      left -= 1;
      window.setTimeout(tick, 1000);
    };
    tick();
  });
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.patient || event.defaultPrevented) {
    return;
  }
  if (form.dataset.posting) {
    event.preventDefault(); // pressed again: its post is under way
    return;
  }
  form.dataset.posting = "1";
  try {
    const fields = {};
    new FormData(form).forEach((value, name) => {
      if (typeof value === "string" && name !== "csrf_token") {
        fields[name] = value;
      }
    });
    window.sessionStorage.setItem(PATIENT_KEY, JSON.stringify({ action: form.action, fields }));
  } catch (error) {
    // no storage: a refusal asks the student to press again
  }
  const began = Date.now();
  const inLine = () => {
    const seconds = Math.round((Date.now() - began) / 1000);
    sayPatience(form, `${form.dataset.patient}… The server checks passwords a few at a time, ` +
      `in turn: yours is in line${seconds ? ` (${seconds} s)` : ""}. No need to press again.`);
  };
  inLine();
  window.setInterval(inLine, 1000);
  window.setTimeout(() => { // once the post is under way (a disabled button posts nothing)
    form.querySelectorAll("button[type=submit]").forEach((button) => { button.disabled = true; });
  }, 0);
});

document.addEventListener("DOMContentLoaded", () => {
  let kept = null;
  try {
    kept = JSON.parse(window.sessionStorage.getItem(PATIENT_KEY) || "null");
    window.sessionStorage.removeItem(PATIENT_KEY);
  } catch (error) {
    kept = null;
  }
  const form = document.querySelector("form[data-patient][data-retry-after]");
  if (!form || !kept || kept.action !== form.action || !kept.fields) {
    return;
  }
  form.querySelectorAll("input[name]").forEach((input) => {
    if (input.type === "checkbox") {
      input.checked = Object.prototype.hasOwnProperty.call(kept.fields, input.name);
    } else if (input.type !== "hidden" && typeof kept.fields[input.name] === "string") {
      input.value = kept.fields[input.name];
    }
  });
  waitRetryAfter(form, Number(form.dataset.retryAfter) || 1).then(() => form.requestSubmit());
});
